//! The emulator's GraphQL schema: a subset of GitHub's.

use std::sync::LazyLock;

use async_graphql::{EmptySubscription, Schema};

use super::mutation::Mutation;
use super::node::Node;
use super::query::Query;

/// The schema type.
pub(crate) type EmulatorSchema = Schema<Query, Mutation, EmptySubscription>;

/// Builds the schema. `Node` is registered explicitly so that every type
/// implementing it is in the schema even when no field returns it directly.
pub(crate) fn build() -> EmulatorSchema {
    Schema::build(Query, Mutation, EmptySubscription)
        .register_output_type::<Node>()
        .finish()
}

/// The schema every request runs against, built once per process (it holds
/// no state: each request brings its own).
pub(crate) fn shared() -> &'static EmulatorSchema {
    static SCHEMA: LazyLock<EmulatorSchema> = LazyLock::new(build);
    &SCHEMA
}

/// The schema in SDL, for comparison with GitHub's.
pub(crate) fn sdl() -> String {
    build().sdl()
}
