//! GitHub's GraphQL API, the subset Shepherd uses, with GitHub's names.

mod actor;
mod checks;
mod connection;
mod errors;
mod handler;
mod label;
mod mutation;
mod node;
mod objects;
mod pull_request;
mod query;
mod scalars;
mod schema;
mod view;

pub(crate) use handler::routes;
pub(crate) use schema::sdl;
