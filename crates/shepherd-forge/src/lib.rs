//! Shepherd's forges: the [`Forge`] trait and the GitHub client.
//!
//! The engine talks to a forge only through `Arc<dyn Forge>`; this crate holds
//! the trait, the error type every call returns, API tokens and their
//! discovery, the forge's view of CI ([`ci`]), and [`GitHubClient`] (GraphQL
//! for reads and resolves, REST for replies, edits, labels and CI). Tokens
//! never reach logs, errors or `Debug` output.
#![warn(missing_docs)]

pub mod ci;
pub mod error;
pub mod forge;
pub mod github;
pub mod token;

pub use ci::{
    CheckRun, CombinedStatus, CommitStatus, RequiredChecks, RequiredSource, SourceOutcome,
    SourceReport, StatusRollup, WorkflowRun,
};
pub use error::{ForgeError, Result};
pub use forge::{Forge, ItemRef, PostedComment, ThreadRef};
pub use github::{ClientConfig, GitHubClient, GitHubEndpoints, RetryPolicy};
pub use token::{Token, TokenSource};
