//! The emulator's GraphQL schema: a subset of GitHub's.

use async_graphql::{EmptySubscription, Schema};

use super::mutation::Mutation;
use super::query::{Node, Query};

/// The schema type.
pub(crate) type EmulatorSchema = Schema<Query, Mutation, EmptySubscription>;

/// Builds the schema. `Node` is registered explicitly so that every type
/// implementing it is in the schema even when no field returns it directly.
pub(crate) fn build() -> EmulatorSchema {
    Schema::build(Query, Mutation, EmptySubscription)
        .register_output_type::<Node>()
        .finish()
}

/// The schema in SDL, for comparison with GitHub's.
pub(crate) fn sdl() -> String {
    build().sdl()
}
