//! The HTTP side of GraphQL: `POST /graphql` and `POST /api/graphql`.

use std::sync::Arc;

use async_graphql::parser::types::DocumentOperations;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::json;

use super::errors::to_github_shape;
use super::schema;
use super::view::RequestContext;
use crate::auth::{self, AuthFailure};
use crate::automation::FaultEffect;
use crate::faults;
use crate::shared::Shared;

const DOCS: &str = "https://docs.github.com/graphql";

/// The GraphQL routes, github.com-style and Enterprise-style.
pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route("/graphql", post(graphql))
        .route("/api/graphql", post(graphql))
}

fn error(status: StatusCode, message: &str) -> Response {
    (
        status,
        Json(json!({ "message": message, "documentation_url": DOCS })),
    )
        .into_response()
}

async fn graphql(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    let request: async_graphql::Request = match serde_json::from_slice(&body) {
        Ok(request) => request,
        Err(_) => {
            shared.count("graphql:<invalid>");
            return error(StatusCode::BAD_REQUEST, "Problems parsing JSON");
        }
    };
    let key = format!("graphql:{}", operation_name(&request));
    shared.count(&key);
    let decision = shared.fault_decision(&key);
    if !decision.delay.is_zero() {
        tokio::time::sleep(decision.delay).await;
    }
    let commit_then_fail = match decision.answer {
        None => None,
        Some(spec) if spec.effect == FaultEffect::CommitThenFail => Some(spec),
        Some(spec) => {
            tracing::info!(%key, effect = ?spec.effect, "fault fired");
            return faults::response(&spec, faults::ApiFlavor::Graphql);
        }
    };

    let viewer = match auth::authenticate(&shared.read(), &headers) {
        Ok(viewer) => viewer,
        Err(AuthFailure::Missing) => {
            return error(
                StatusCode::UNAUTHORIZED,
                "This endpoint requires you to be authenticated.",
            )
        }
        Err(AuthFailure::Bad) => return error(StatusCode::UNAUTHORIZED, "Bad credentials"),
    };
    let context = RequestContext {
        shared: shared.clone(),
        viewer,
    };
    let response = schema::shared().execute(request.data(context)).await;
    let mut value = match serde_json::to_value(&response) {
        Ok(value) => value,
        Err(err) => {
            tracing::error!(%err, "cannot serialize a GraphQL response");
            return error(StatusCode::INTERNAL_SERVER_ERROR, "Internal server error");
        }
    };
    to_github_shape(&mut value);
    if let Some(spec) = commit_then_fail {
        tracing::info!(%key, "fault: executed, answering 502");
        return faults::response(&spec, faults::ApiFlavor::Graphql);
    }
    Json(value).into_response()
}

/// The request's `operationName`, else the name of its only operation.
fn operation_name(request: &async_graphql::Request) -> String {
    if let Some(name) = &request.operation_name {
        return name.clone();
    }
    match async_graphql::parser::parse_query(&request.query) {
        Ok(document) => match document.operations {
            DocumentOperations::Single(_) => "<anonymous>".to_owned(),
            DocumentOperations::Multiple(operations) if operations.len() == 1 => operations
                .into_keys()
                .next()
                .map_or_else(|| "<anonymous>".to_owned(), |name| name.to_string()),
            DocumentOperations::Multiple(_) => "<ambiguous>".to_owned(),
        },
        Err(_) => "<invalid>".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(query: &str, name: Option<&str>) -> async_graphql::Request {
        let mut r = async_graphql::Request::new(query);
        if let Some(name) = name {
            r = r.operation_name(name);
        }
        r
    }

    #[test]
    fn operation_names() {
        assert_eq!(
            operation_name(&request("query Threads { viewer { login } }", None)),
            "Threads"
        );
        assert_eq!(
            operation_name(&request("{ viewer { login } }", None)),
            "<anonymous>"
        );
        assert_eq!(
            operation_name(&request("query A { a } query B { b }", Some("B"))),
            "B"
        );
        assert_eq!(
            operation_name(&request("query A { a } query B { b }", None)),
            "<ambiguous>"
        );
        assert_eq!(operation_name(&request("query {", None)), "<invalid>");
    }
}
