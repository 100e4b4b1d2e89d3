//! GitHub's GraphQL API, the subset Shepherd and `gh` use, with GitHub's
//! names.

mod actor;
mod changed_file;
mod checks;
mod commit_detail;
mod connection;
mod document;
mod empty_lists;
mod errors;
#[cfg(test)]
mod fast_path_equal;
mod handler;
mod json;
mod label;
mod mutation;
mod node;
mod objects;
mod owner;
mod partial;
mod pr_extras;
mod pull_request;
mod query;
mod scalars;
mod schema;
mod search;
mod timeline;
mod types;
mod validate;
mod view;

pub(crate) use handler::routes;
pub(crate) use schema::sdl;
