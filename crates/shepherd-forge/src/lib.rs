//! Shepherd's forges: the [`Forge`] trait and the GitHub and GitLab clients.
//!
//! The engine talks to a forge only through `Arc<dyn Forge>`; this crate holds
//! the trait, the error type every call returns, the [`connect()`] factory
//! (from a target to its client), API tokens and their discovery, the
//! forge's view of CI ([`ci`]), [`GitHubClient`] (GraphQL for reads and
//! resolves, REST for replies, edits, labels and CI) and [`GitLabClient`]
//! (REST v4: merge requests, discussions, pipelines and jobs). Both share
//! one HTTP transport (retries, rate limits, pagination, ETags, TLS trust:
//! the system's store, `SSL_CERT_FILE`/`SSL_CERT_DIR` and a configured CA
//! file). Tokens never reach logs, errors or `Debug` output.
#![warn(missing_docs)]

pub mod ci;
pub mod connect;
pub mod error;
pub mod forge;
pub mod github;
pub mod gitlab;
mod hosts;
mod intern;
mod times;
mod tls;
pub mod token;
mod transport;
mod url_path;

pub use ci::{
    CheckRun, CombinedStatus, CommitStatus, RequiredChecks, RequiredSource, SourceOutcome,
    SourceReport, StatusRollup, WorkflowRun,
};
pub use connect::{client_for, connect, forge_of_api_url, git_url, ConnectError};
pub use error::{ForgeError, Result};
pub use forge::{
    Forge, ItemRef, LabelEvent, PostedComment, PullRequestFields, ThreadRef, UserAccess,
};
pub use github::{GitHubClient, GitHubEndpoints};
pub use gitlab::{GitLabClient, GitLabEndpoints, ProjectId};
pub use token::{Token, TokenSource};
pub use transport::{ClientConfig, RetryPolicy};
