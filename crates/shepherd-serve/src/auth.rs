//! The per-start secret, and the checks every request passes.
//!
//! - `Host` must name a loopback address when the server listens on one
//!   (a DNS-rebinding page cannot then talk to it under another name).
//! - Every request needs the secret: `?token=SECRET` (the printed URL)
//!   sets a `HttpOnly`, `SameSite=Strict` cookie and redirects to the same
//!   page without it; afterwards the cookie is enough for reading.
//! - A state-changing request (`POST`) needs the cookie, the secret again in
//!   its form (`csrf`, a hidden field of the dashboard's own forms), and,
//!   when the browser sends them, an `Origin` equal to the server's own and
//!   a `Sec-Fetch-Site` of `same-origin`. Anything else is 403 and changes
//!   nothing.

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use std::sync::Arc;

use crate::state::AppState;

/// The session cookie's name: per port, since browsers share cookies
/// between the ports of one host.
pub fn cookie_name(port: u16) -> String {
    format!("shepherd_serve_{port}")
}

fn cookie_value<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

fn query_token(query: Option<&str>) -> Option<String> {
    query?
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == "token")
        .map(|(_, v)| v.to_owned())
}

fn without_token(query: Option<&str>) -> String {
    let rest: Vec<&str> = query
        .unwrap_or("")
        .split('&')
        .filter(|kv| !kv.is_empty() && !kv.starts_with("token="))
        .collect();
    if rest.is_empty() {
        String::new()
    } else {
        format!("?{}", rest.join("&"))
    }
}

fn host_allowed(app: &AppState, headers: &HeaderMap) -> bool {
    if !app.addr.ip().is_loopback() {
        return true;
    }
    let Some(host) = headers.get(header::HOST).and_then(|h| h.to_str().ok()) else {
        return false;
    };
    let port = app.addr.port();
    ["127.0.0.1", "localhost", "[::1]"]
        .iter()
        .any(|name| host.eq_ignore_ascii_case(&format!("{name}:{port}")))
}

/// The origins the server itself has.
fn own_origin(headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return true;
    };
    let Ok(origin) = origin.to_str() else {
        return false;
    };
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    origin == format!("http://{host}")
}

fn same_site(headers: &HeaderMap) -> bool {
    headers
        .get("sec-fetch-site")
        .and_then(|v| v.to_str().ok())
        .is_none_or(|v| v == "same-origin" || v == "none")
}

pub(crate) fn forbidden(why: &str) -> Response {
    (
        StatusCode::FORBIDDEN,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        format!(
            "403 forbidden: {why}. Open the URL `shepherd serve` printed (it carries this \
             start's secret).\n"
        ),
    )
        .into_response()
}

/// The checks of every request (see the module's documentation).
pub(crate) async fn guard(
    State(app): State<Arc<AppState>>,
    request: Request,
    next: Next,
) -> Response {
    let headers = request.headers();
    if !host_allowed(&app, headers) {
        return forbidden("this dashboard answers only to a loopback Host");
    }
    let name = cookie_name(app.addr.port());
    let cookie_ok = cookie_value(headers, &name).is_some_and(|v| app.secret.matches(v));
    if request.method() == Method::GET {
        if let Some(token) = query_token(request.uri().query()) {
            if !app.secret.matches(&token) {
                return forbidden("wrong secret");
            }
            // `//host` would be a redirect to another site.
            let path = request.uri().path();
            let path = if path.starts_with("//") { "/" } else { path };
            let target = format!("{path}{}", without_token(request.uri().query()));
            let cookie = format!(
                "{name}={}; HttpOnly; SameSite=Strict; Path=/",
                app.secret.as_str()
            );
            let mut response = Redirect::to(&target).into_response();
            if let Ok(value) = cookie.parse() {
                response.headers_mut().insert(header::SET_COOKIE, value);
            }
            return response;
        }
        if !cookie_ok {
            return forbidden("no secret");
        }
        return next.run(request).await;
    }
    if request.method() != Method::POST {
        return forbidden("method not allowed");
    }
    if !cookie_ok {
        return forbidden("no secret");
    }
    if !own_origin(headers) || !same_site(headers) {
        return forbidden("a request from another origin");
    }
    // The form's `csrf` field is checked by the handlers (they parse the form).
    next.run(request).await
}

/// Adds the headers every page carries: a strict Content-Security-Policy,
/// no sniffing, no framing, same-origin referrers only, no caching.
pub(crate) async fn headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let h = response.headers_mut();
    let pairs = [
        (
            header::CONTENT_SECURITY_POLICY,
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
             connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        ),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::X_FRAME_OPTIONS, "DENY"),
        // `same-origin`: links to the forge carry no referrer, while the
        // dashboard's own forms keep their `Origin` (with `no-referrer`,
        // Chromium sends `Origin: null`).
        (header::REFERRER_POLICY, "same-origin"),
        (header::CACHE_CONTROL, "no-store"),
    ];
    for (k, v) in pairs {
        h.insert(k, axum::http::HeaderValue::from_static(v));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secret::Secret;

    #[test]
    fn the_secret_matches_only_itself() {
        let s = Secret::generate().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.as_str().len(), 64);
        assert!(s.matches(s.as_str()));
        assert!(!s.matches(""));
        assert!(!s.matches(&s.as_str()[1..]));
        let other = Secret::generate().unwrap_or_else(|e| panic!("{e}"));
        assert!(!s.matches(other.as_str()));
    }

    #[test]
    fn the_token_is_taken_out_of_the_query() {
        assert_eq!(query_token(Some("a=1&token=x")), Some("x".into()));
        assert_eq!(without_token(Some("a=1&token=x")), "?a=1");
        assert_eq!(without_token(Some("token=x")), "");
    }
}
