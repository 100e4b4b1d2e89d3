//! Integration tests of shepherd-forge: one binary (see STYLE.md).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is how a test fails

mod ci;
mod github_fixtures;
mod gitlab_ci;
mod gitlab_reads;
mod gitlab_rereview;
mod gitlab_writes;
mod logs;
mod reviewers;
mod round_trips;
mod schema;
mod support;
mod tls;
mod tls_front;
mod transport;
mod writes;
