//! The GitLab client (gitlab.com and self-managed GitLab, REST API v4).

mod ci;
mod client;
mod discussions;
pub mod endpoints;
mod forge_impl;
mod reviewers;
mod trace;
mod wire;
mod writes;

pub use client::GitLabClient;
pub use endpoints::{is_gitlab_dot_com, GitLabEndpoints, ProjectId};
