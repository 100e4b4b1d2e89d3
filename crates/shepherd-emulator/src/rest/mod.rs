//! GitHub's REST API, the subset Shepherd, `gh` and PyGithub use, one file
//! a resource: `user`, `repos`, `pulls`, `issues`, `checks`, `collaborators`.
//! Served at `/…` and, for Enterprise-style clients, at `/api/v3/…`.

mod checks;
mod collaborators;
mod common;
mod deletes;
mod downloads;
mod issues;
mod json;
mod lookup;
mod meta;
mod middleware;
mod pulls;
mod repos;
mod review_requests;
mod routes;
mod user;

#[cfg(test)]
pub(crate) use common::PageUrl;
pub(crate) use common::{page_of, ApiError, ListFlavor, Lists};
pub(crate) use downloads::routes as download_routes;
pub(crate) use meta::root;
pub(crate) use middleware::{
    conditional_get, conditional_get_with, count_and_fault, count_and_fault_as,
};
pub(crate) use pulls::parse_event;
pub use routes::route_table;
pub(crate) use routes::routes;
