//! Integration tests: a real emulator on 127.0.0.1:0, real HTTP, real git.

// Tests may panic on anything unexpected, helpers included.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
#[path = "../support/widgets.rs"]
mod widgets;

mod test_auth;
mod test_bot_profiles;
mod test_ci;
mod test_concurrency;
mod test_control;
mod test_demo;
mod test_faults;
mod test_git;
mod test_gitlab_api;
mod test_gitlab_ci;
mod test_gitlab_client;
mod test_gitlab_demo;
mod test_gitlab_pagination;
mod test_gitlab_push;
mod test_gitlab_review;
mod test_graphql;
mod test_graphql_errors;
mod test_graphql_gh;
mod test_graphql_gh_status;
mod test_layout;
mod test_push;
mod test_rest;
mod test_reviewer_reads;
mod test_scenario;
mod test_schema;
mod test_writes;
