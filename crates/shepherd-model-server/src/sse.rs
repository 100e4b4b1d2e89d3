//! Server-sent event bodies, sent whole (the CLIs read them as a stream
//! either way).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// An event stream of `events`: each an optional `event:` name and its
/// `data:` JSON.
pub(crate) fn events(events: &[(Option<&str>, serde_json::Value)]) -> Response {
    let mut body = String::new();
    for (name, data) in events {
        if let Some(name) = name {
            body.push_str("event: ");
            body.push_str(name);
            body.push('\n');
        }
        body.push_str("data: ");
        body.push_str(&data.to_string());
        body.push_str("\n\n");
    }
    raw(body)
}

/// An event stream whose body is `body` as it is.
pub(crate) fn raw(body: String) -> Response {
    (
        StatusCode::OK,
        [
            ("content-type", "text/event-stream"),
            ("cache-control", "no-cache"),
        ],
        body,
    )
        .into_response()
}
