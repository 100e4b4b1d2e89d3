//! GitHub's GraphQL API, the subset Shepherd uses, with GitHub's names.

mod actor;
mod checks;
mod connection;
mod document;
mod errors;
mod handler;
mod json;
mod label;
mod mutation;
mod node;
mod objects;
mod partial;
mod pull_request;
mod query;
mod scalars;
mod schema;
mod types;
mod validate;
mod view;

pub(crate) use handler::routes;
pub(crate) use schema::sdl;
