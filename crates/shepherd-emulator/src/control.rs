//! The control API under `/_emulator/`: today the state dump. Issue 3 adds
//! reset, acting as a user, faults and waiting for idle here.

use std::sync::Arc;

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{json, Value};

use crate::server::Shared;

/// The control routes.
pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new().route("/_emulator/state", get(get_state))
}

async fn get_state(State(shared): State<Arc<Shared>>) -> Json<Value> {
    Json(state_json(&shared))
}

/// The whole state, with the URLs a client needs.
pub(crate) fn state_json(shared: &Shared) -> Value {
    let state = shared.read();
    let mut value = serde_json::to_value(&*state).unwrap_or_else(|err| {
        // The state holds only strings, numbers and enums: this cannot fail.
        json!({ "error": err.to_string() })
    });
    if let Some(object) = value.as_object_mut() {
        object.insert(
            "urls".to_owned(),
            json!({
                "api": shared.base_url,
                "graphql": format!("{}/graphql", shared.base_url),
                "enterprise_api": format!("{}/api/v3", shared.base_url),
                "enterprise_graphql": format!("{}/api/graphql", shared.base_url),
            }),
        );
    }
    value
}
