//! The GitHub client (github.com and GitHub Enterprise Server).

mod client;
pub mod endpoints;
pub mod queries;
mod transport;
mod wire;

pub use client::GitHubClient;
pub use endpoints::{is_github_dot_com, GitHubEndpoints};
pub use transport::{ClientConfig, RetryPolicy};
