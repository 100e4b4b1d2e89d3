//! The emulator's GraphQL schema: a subset of GitHub's.

use async_graphql::{EmptyMutation, EmptySubscription, Schema};

use super::query::{Node, Query};

/// The schema type. Issue 3 swaps `EmptyMutation` for the mutation root.
pub(crate) type EmulatorSchema = Schema<Query, EmptyMutation, EmptySubscription>;

/// Builds the schema. `Node` is registered explicitly so that every type
/// implementing it is in the schema even when no field returns it directly.
pub(crate) fn build() -> EmulatorSchema {
    Schema::build(Query, EmptyMutation, EmptySubscription)
        .register_output_type::<Node>()
        .finish()
}

/// The schema in SDL, for comparison with GitHub's.
pub(crate) fn sdl() -> String {
    build().sdl()
}
