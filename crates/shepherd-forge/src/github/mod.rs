//! The GitHub client (github.com and GitHub Enterprise Server).

mod checks;
mod client;
pub mod endpoints;
mod forge_impl;
// The GitHub JSON the integration tests' fakes answer with, for the
// client's unit tests too.
#[cfg(test)]
#[path = "../../tests/forge/github_fixtures.rs"]
mod github_fixtures;
mod logs;
pub mod queries;
mod rest_wire;
mod reviewers;
mod reviews;
mod wire;
mod writes;

pub use crate::transport::{ClientConfig, RetryPolicy};
pub use client::GitHubClient;
pub use endpoints::{is_github_dot_com, GitHubEndpoints};
