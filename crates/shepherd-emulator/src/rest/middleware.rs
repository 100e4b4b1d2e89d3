//! What wraps every REST route: request counting and faults (outside), and
//! conditional GETs with `ETag`/`If-None-Match` plus GitHub's rate-limit
//! headers (inside).

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{MatchedPath, Request, State};
use axum::http::{header, HeaderName, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::faults::{self, ApiFlavor};
use crate::shared::Shared;

/// The largest body hashed for an `ETag`; larger answers go without one.
const ETAG_BODY_LIMIT: usize = 8 * 1024 * 1024;

/// Counts REST requests as `METHOD /route/{template}` (one key for both path
/// styles), then applies the faults set on that key.
pub(crate) async fn count_and_fault(
    State(shared): State<Arc<Shared>>,
    request: Request,
    next: Next,
) -> Response {
    count_and_fault_as(&shared, request, next, ApiFlavor::Rest).await
}

/// [`count_and_fault`] for an API of the given flavor: GitHub's REST keys
/// drop the `/api/v3` prefix; GitLab's keep their `/api/v4`; fault answers
/// take the API's error shape.
pub(crate) async fn count_and_fault_as(
    shared: &Shared,
    request: Request,
    next: Next,
    flavor: ApiFlavor,
) -> Response {
    let Some(path) = request.extensions().get::<MatchedPath>() else {
        return next.run(request).await;
    };
    let key = count_key(request.method(), path, flavor);
    match shared.enter(&key, flavor).await {
        Err(answer) => answer,
        Ok(None) => next.run(request).await,
        Ok(Some(spec)) => {
            let served = next.run(request).await;
            tracing::info!(%key, status = %served.status(), "fault: served, answering 502");
            faults::response(&spec, flavor)
        }
    }
}

/// The key a request is counted under: `METHOD /route/{template}`,
/// GitHub's without the `/api/v3` prefix, GitLab's with its `/api/v4`.
fn count_key(method: &Method, path: &MatchedPath, flavor: ApiFlavor) -> String {
    let template = path.as_str();
    let template = match flavor {
        ApiFlavor::GitLab => template,
        _ => template.strip_prefix("/api/v3").unwrap_or(template),
    };
    format!("{method} {template}")
}

/// Adds an `ETag` to successful GETs and answers `304 Not Modified` when
/// `If-None-Match` names it; adds GitHub's rate-limit headers everywhere.
pub(crate) async fn conditional_get(
    State(shared): State<Arc<Shared>>,
    request: Request,
    next: Next,
) -> Response {
    conditional_get_with(
        &shared,
        request,
        next,
        ApiFlavor::Rest,
        add_rate_limit_headers,
    )
    .await
}

/// ETags and `304 Not Modified` as [`conditional_get`] does, with
/// `add_headers` adding the API's own headers (rate limits) to every answer.
/// Each `304` is counted under the request's key (`flavor` spells it).
pub(crate) async fn conditional_get_with(
    shared: &Shared,
    request: Request,
    next: Next,
    flavor: ApiFlavor,
    add_headers: fn(&Shared, &mut Response),
) -> Response {
    let is_get = request.method() == Method::GET;
    let key = request
        .extensions()
        .get::<MatchedPath>()
        .map(|path| count_key(request.method(), path, flavor));
    let if_none_match = request
        .headers()
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let mut response = next.run(request).await;
    add_headers(shared, &mut response);
    if !is_get || response.status() != StatusCode::OK {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, ETAG_BODY_LIMIT).await else {
        return (StatusCode::INTERNAL_SERVER_ERROR, "body too large").into_response();
    };
    let etag = etag_of(&bytes);
    let matches = if_none_match.is_some_and(|list| {
        list.split(',')
            .map(str::trim)
            .any(|tag| tag == "*" || tag.trim_start_matches("W/") == etag.trim_start_matches("W/"))
    });
    if let Ok(value) = HeaderValue::from_str(&etag) {
        parts.headers.insert(header::ETAG, value);
    }
    if matches {
        if let Some(key) = &key {
            shared.count_not_modified(key);
        }
        parts.status = StatusCode::NOT_MODIFIED;
        parts.headers.remove(header::CONTENT_LENGTH);
        parts.headers.remove(header::CONTENT_TYPE);
        return Response::from_parts(parts, Body::empty());
    }
    Response::from_parts(parts, Body::from(bytes))
}

/// A weak ETag of the body, stable for equal bodies.
fn etag_of(bytes: &[u8]) -> String {
    let mut hasher = DefaultHasher::new();
    bytes.hash(&mut hasher);
    format!("W/\"{:016x}\"", hasher.finish())
}

fn add_rate_limit_headers(shared: &Shared, response: &mut Response) {
    if response.headers().contains_key("x-ratelimit-remaining") {
        return;
    }
    // The emulator never limits: a full window that resets an hour after start.
    let reset = shared.started_at_unix + 3600;
    let headers = response.headers_mut();
    for (name, value) in [
        ("x-ratelimit-limit", "5000".to_owned()),
        ("x-ratelimit-remaining", "4999".to_owned()),
        ("x-ratelimit-used", "1".to_owned()),
        ("x-ratelimit-reset", reset.to_string()),
        ("x-ratelimit-resource", "core".to_owned()),
    ] {
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.insert(HeaderName::from_static(name), value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn etags_follow_the_body() {
        assert_eq!(etag_of(b"{\"a\":1}"), etag_of(b"{\"a\":1}"));
        assert_ne!(etag_of(b"{\"a\":1}"), etag_of(b"{\"a\":2}"));
        assert!(etag_of(b"x").starts_with("W/\""));
    }
}
