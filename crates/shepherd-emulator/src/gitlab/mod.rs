//! GitLab's REST API v4, the subset Shepherd uses, and the one GraphQL
//! mutation it sends, over the same state as the GitHub API: served instead
//! of it for a scenario with `forge = "gitlab"`.

mod approvals;
mod changes;
mod common;
mod deletes;
mod discussions;
mod graphql;
mod json;
mod members;
mod merge_requests;
mod pipelines;
mod position;
mod repository;
mod routes;
mod statuses;
mod view;

pub(crate) use common::{conditional_get, count_and_fault};
pub(crate) use routes::routes;
