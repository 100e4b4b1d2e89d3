//! The HTTP side of GraphQL: `POST /graphql` and `POST /api/graphql`.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use async_graphql::parser::types::{DocumentOperations, ExecutableDocument};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{json, Value};

use super::errors::to_github_shape;
use super::types::TypeIndex;
use super::view::RequestContext;
use super::{json, partial, schema, validate};
use crate::auth::{self, AuthFailure};
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
    let mut request: async_graphql::Request = match serde_json::from_slice(&body) {
        Ok(request) => request,
        Err(_) => {
            shared.count("graphql:<invalid>");
            return error(StatusCode::BAD_REQUEST, "Problems parsing JSON");
        }
    };
    // Parsed once per text (see `parsed`); async-graphql executes a copy.
    let named = request.operation_name.clone();
    let parsed = parsed(&request.query);
    if let Some(parsed) = &parsed {
        request.set_parsed_query(parsed.document.clone());
    }
    let key = format!(
        "graphql:{}",
        operation_name(parsed.as_ref().map(|p| &p.document), named.as_deref())
    );
    let commit_then_fail = match shared.enter(&key, faults::ApiFlavor::Graphql).await {
        Ok(commit_then_fail) => commit_then_fail,
        Err(answer) => return answer,
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
    let index = TypeIndex::shared();
    if let Some(parsed) = &parsed {
        if !parsed.undefined.is_empty() {
            // GitHub answers a query that does not validate without `data`.
            return Json(json!({ "errors": parsed.undefined })).into_response();
        }
    }
    let context = RequestContext {
        shared: shared.clone(),
        viewer,
    };
    let strings = json::JsonStrings::default();
    let request = request.data(context).data(strings.clone());
    let response = schema::shared().execute(request).await;
    let strings = strings.take();
    let answer = if response.errors.is_empty() && response.extensions.is_empty() {
        // The common case: nothing to reshape, straight to bytes.
        Ok(json::data_answer(&response.data, &strings))
    } else {
        let document = parsed.as_ref().map(|p| &p.document);
        serde_json::to_value(&response).and_then(|mut value| {
            value["data"] = json::to_json(&response.data, &strings)?;
            github_shape(index, document, named.as_deref(), &mut value);
            serde_json::to_vec(&value)
        })
    };
    let answer = match answer {
        Ok(answer) => answer,
        Err(err) => {
            tracing::error!(%err, "cannot serialize a GraphQL response");
            return error(StatusCode::INTERNAL_SERVER_ERROR, "Internal server error");
        }
    };
    if let Some(spec) = commit_then_fail {
        tracing::info!(%key, "fault: executed, answering 502");
        return faults::response(&spec, faults::ApiFlavor::Graphql);
    }
    (
        [(header::CONTENT_TYPE, "application/json; charset=utf-8")],
        answer,
    )
        .into_response()
}

/// Reshapes an answer with errors into GitHub's: nulls where fields failed
/// (partial results), `type` beside each message, and no `data` when the
/// request failed before executing.
fn github_shape(
    index: &TypeIndex,
    document: Option<&ExecutableDocument>,
    operation: Option<&str>,
    value: &mut Value,
) {
    let executed = value
        .get("errors")
        .and_then(Value::as_array)
        .is_some_and(|errors| errors.iter().any(|e| e.get("path").is_some()));
    if executed {
        if let Some(document) = document {
            partial::place_nulls(index, document, operation, value);
        }
    } else if value.get("data").is_some_and(Value::is_null) {
        if let Some(object) = value.as_object_mut() {
            object.remove("data");
        }
    }
    to_github_shape(value);
}

/// A request document, parsed, with the undefined fields and arguments in
/// it (see `validate.rs`).
struct Parsed {
    document: ExecutableDocument,
    undefined: Vec<Value>,
}

/// How many documents [`parsed`] keeps: more than a client sends (Shepherd
/// sends a dozen); beyond it the cache starts over.
const KEPT_DOCUMENTS: usize = 256;

/// The document `query` parses to, parsed once per text: a client sends the
/// same few documents over and over, and parsing one costs as much as
/// executing a small query. `None` when it does not parse (async-graphql
/// then answers with the parse error).
fn parsed(query: &str) -> Option<Arc<Parsed>> {
    static KEPT: LazyLock<Mutex<HashMap<String, Arc<Parsed>>>> = LazyLock::new(Default::default);
    let kept = || KEPT.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(parsed) = kept().get(query) {
        return Some(Arc::clone(parsed));
    }
    let document = async_graphql::parser::parse_query(query).ok()?;
    let undefined = validate::undefined_fields_and_arguments(TypeIndex::shared(), &document);
    let parsed = Arc::new(Parsed {
        document,
        undefined,
    });
    let mut kept = kept();
    if kept.len() >= KEPT_DOCUMENTS {
        kept.clear();
    }
    kept.insert(query.to_owned(), Arc::clone(&parsed));
    Some(parsed)
}

/// The request's `operationName`, else the name of its only operation.
fn operation_name(document: Option<&ExecutableDocument>, name: Option<&str>) -> String {
    if let Some(name) = name {
        return name.to_owned();
    }
    match document.map(|d| &d.operations) {
        Some(DocumentOperations::Single(_)) => "<anonymous>".to_owned(),
        Some(DocumentOperations::Multiple(operations)) if operations.len() == 1 => operations
            .keys()
            .next()
            .map_or_else(|| "<anonymous>".to_owned(), |name| name.to_string()),
        Some(DocumentOperations::Multiple(_)) => "<ambiguous>".to_owned(),
        None => "<invalid>".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(query: &str, name: Option<&str>) -> (Option<ExecutableDocument>, Option<String>) {
        (
            async_graphql::parser::parse_query(query).ok(),
            name.map(str::to_owned),
        )
    }

    fn operation_name(request: &(Option<ExecutableDocument>, Option<String>)) -> String {
        super::operation_name(request.0.as_ref(), request.1.as_deref())
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
