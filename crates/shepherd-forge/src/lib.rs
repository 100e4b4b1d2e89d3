//! Shepherd's forges: the [`Forge`] trait and the GitHub client.
//!
//! The engine talks to a forge only through `Arc<dyn Forge>`; this crate holds
//! the trait, the error type every call returns, API tokens and their
//! discovery, and [`GitHubClient`] (GraphQL for reads, REST helpers for what
//! comes later). Tokens never reach logs, errors or `Debug` output.
#![warn(missing_docs)]

pub mod error;
pub mod forge;
pub mod github;
pub mod token;

pub use error::{ForgeError, Result};
pub use forge::Forge;
pub use github::{ClientConfig, GitHubClient, GitHubEndpoints, RetryPolicy};
pub use token::{Token, TokenSource};
