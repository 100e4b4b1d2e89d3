//! What every GitLab handler shares: GitLab's error shape, authentication,
//! the project and merge request look-ups, request parameters (query, JSON
//! or form), `X-Next-Page` pagination, and the layers around every route.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Query, Request, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Map, Value};

use super::json::Cx;
use crate::auth::{self, AuthFailure, Viewer};
use crate::faults::ApiFlavor;
use crate::rest::{page_of, ListFlavor, Lists};
use crate::scenario::Permission;
use crate::shared::Shared;
use crate::state::{PullRequestRecord, RepositoryRecord, State as EmulatorState, WriteError};

/// An error in GitLab's shape: `{"message": "404 Not found"}`, or
/// `{"error": "title is missing"}` for a missing parameter.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GlError {
    status: StatusCode,
    body: Value,
}

impl GlError {
    fn message(status: StatusCode, message: impl Into<String>) -> GlError {
        GlError {
            status,
            body: json!({ "message": message.into() }),
        }
    }

    /// 401 `401 Unauthorized` (no token, or one of no user).
    pub(crate) fn unauthorized() -> GlError {
        GlError::message(StatusCode::UNAUTHORIZED, "401 Unauthorized")
    }

    /// 404 `404 Not found`.
    pub(crate) fn not_found() -> GlError {
        GlError::message(StatusCode::NOT_FOUND, "404 Not found")
    }

    /// 404 `404 <what> Not Found` (`Project`, `Merge Request`, `Note`…).
    pub(crate) fn not_found_named(what: &str) -> GlError {
        GlError::message(StatusCode::NOT_FOUND, format!("404 {what} Not Found"))
    }

    /// 403 `403 Forbidden`, optionally with a reason.
    pub(crate) fn forbidden(reason: Option<&str>) -> GlError {
        let message = match reason {
            Some(reason) => format!("403 Forbidden - {reason}"),
            None => "403 Forbidden".to_owned(),
        };
        GlError::message(StatusCode::FORBIDDEN, message)
    }

    /// 409 with a message (`SHA does not match HEAD of source branch: …`).
    pub(crate) fn conflict(message: &str) -> GlError {
        GlError::message(StatusCode::CONFLICT, message)
    }

    /// 400 `400 Bad request - <why>`.
    pub(crate) fn bad_request(why: &str) -> GlError {
        GlError::message(StatusCode::BAD_REQUEST, format!("400 Bad request - {why}"))
    }

    /// 400 `{"error": "<what>"}`, Grape's answer to a parameter problem.
    pub(crate) fn parameter(what: &str) -> GlError {
        GlError {
            status: StatusCode::BAD_REQUEST,
            body: json!({ "error": what }),
        }
    }
}

impl From<WriteError> for GlError {
    fn from(err: WriteError) -> Self {
        match err {
            WriteError::NotFound(_) => GlError::not_found(),
            WriteError::Forbidden(message) if message.is_empty() => GlError::forbidden(None),
            WriteError::Forbidden(message) => GlError::forbidden(Some(&message)),
            WriteError::Unprocessable(message) => GlError::bad_request(&message),
        }
    }
}

impl IntoResponse for GlError {
    fn into_response(self) -> Response {
        (self.status, Json(self.body)).into_response()
    }
}

/// A boolean as GitLab's API (Grape) coerces text: `true`, `True`, `1`,
/// `t`, `yes`, `y`, `on` and `false`, `False`, `0`, `f`, `no`, `n`, `off`,
/// in any case.
pub(crate) fn parse_bool(text: &str) -> Option<bool> {
    match text.to_ascii_lowercase().as_str() {
        "true" | "1" | "t" | "yes" | "y" | "on" => Some(true),
        "false" | "0" | "f" | "no" | "n" | "off" => Some(false),
        _ => None,
    }
}

/// The authenticated user of a GitLab request (`PRIVATE-TOKEN`, or
/// `Authorization: Bearer`).
pub(crate) struct GlViewer(pub(crate) Viewer);

impl FromRequestParts<Arc<Shared>> for GlViewer {
    type Rejection = GlError;

    async fn from_request_parts(
        parts: &mut Parts,
        shared: &Arc<Shared>,
    ) -> Result<Self, Self::Rejection> {
        match auth::authenticate_gitlab(&shared.read(), &parts.headers) {
            Ok(viewer) => Ok(GlViewer(viewer)),
            Err(AuthFailure::Missing | AuthFailure::Bad) => Err(GlError::unauthorized()),
        }
    }
}

/// What nearly every GitLab handler takes, as `GlReq(shared, viewer)`: the
/// shared state and the authenticated user ([`GlViewer`]).
pub(crate) struct GlReq(pub(crate) Arc<Shared>, pub(crate) Viewer);

impl FromRequestParts<Arc<Shared>> for GlReq {
    type Rejection = GlError;

    async fn from_request_parts(
        parts: &mut Parts,
        shared: &Arc<Shared>,
    ) -> Result<Self, Self::Rejection> {
        let GlViewer(viewer) = GlViewer::from_request_parts(parts, shared).await?;
        Ok(GlReq(Arc::clone(shared), viewer))
    }
}

/// The project named by `id` (its numeric id, or its full path, which
/// arrives URL-decoded), if the viewer may see it; else GitLab's 404.
pub(crate) fn project<'s>(
    state: &'s EmulatorState,
    viewer: &Viewer,
    id: &str,
) -> Result<&'s RepositoryRecord, GlError> {
    let repo = &state.repository;
    let named = match id.parse::<u64>() {
        Ok(number) => number == repo.database_id,
        Err(_) => id.eq_ignore_ascii_case(&repo.full_name()),
    };
    if named && viewer.sees_repository() {
        Ok(repo)
    } else {
        Err(GlError::not_found_named("Project"))
    }
}

/// Merge request `iid` of project `id`.
pub(crate) fn merge_request<'s>(
    state: &'s EmulatorState,
    viewer: &Viewer,
    id: &str,
    iid: &str,
) -> Result<&'s PullRequestRecord, GlError> {
    project(state, viewer, id)?;
    let number: u64 = iid.parse().map_err(|_| GlError::not_found())?;
    state.pull_request(number).ok_or_else(GlError::not_found)
}

/// Answers from merge request `iid` of project `id`, as the viewer may see
/// it, with the shapes of the state, all under one read lock.
pub(crate) fn read_merge_request<T>(
    shared: &Shared,
    viewer: &Viewer,
    (id, iid): (&str, &str),
    answer: impl FnOnce(&Cx, &PullRequestRecord) -> Result<T, GlError>,
) -> Result<T, GlError> {
    let state = shared.read();
    let pr = merge_request(&state, viewer, id, iid)?;
    answer(&Cx::new(&state, &shared.base_url), pr)
}

/// Answers from project `id`, if the viewer may see it, with the shapes of
/// the state, all under one read lock.
pub(crate) fn read_project<T>(
    shared: &Shared,
    viewer: &Viewer,
    id: &str,
    answer: impl FnOnce(&Cx) -> Result<T, GlError>,
) -> Result<T, GlError> {
    let state = shared.read();
    project(&state, viewer, id)?;
    answer(&Cx::new(&state, &shared.base_url))
}

/// The number of merge request `iid` of project `id` once the viewer may
/// comment on it (404 for a merge request they do not see comes first).
pub(crate) fn commentable(
    state: &EmulatorState,
    viewer: &Viewer,
    (id, iid): (&str, &str),
) -> Result<u64, GlError> {
    let number = merge_request(state, viewer, id, iid)?.number;
    require_comment(viewer)?;
    Ok(number)
}

/// A `201 Created` answer with `value`.
pub(crate) fn respond_created(value: Value) -> Response {
    (StatusCode::CREATED, Json(value)).into_response()
}

/// Notes need write permission, or a public project (any signed-in user
/// may comment there); a read-only token gets 403.
pub(crate) fn require_comment(viewer: &Viewer) -> Result<(), GlError> {
    if viewer.may_comment() {
        Ok(())
    } else {
        Err(GlError::forbidden(None))
    }
}

/// Writes need write permission (GitLab's Developer role); a read-only
/// token gets 403.
pub(crate) fn require_write(viewer: &Viewer) -> Result<(), GlError> {
    if viewer.permission >= Permission::Write {
        Ok(())
    } else {
        Err(GlError::forbidden(None))
    }
}

/// A parsed numeric path segment; anything else is a 404.
pub(crate) fn parse_id(segment: &str) -> Result<u64, GlError> {
    segment.parse().map_err(|_| GlError::not_found())
}

/// A request's parameters, as GitLab takes them: the query string, then a
/// JSON object or a form body on top.
pub(crate) struct Params(Map<String, Value>);

impl FromRequest<Arc<Shared>> for Params {
    type Rejection = Response;

    /// The query, then the body (with axum's body limit, as `Bytes` reads
    /// it).
    async fn from_request(request: Request, shared: &Arc<Shared>) -> Result<Self, Response> {
        let (mut parts, body) = request.into_parts();
        let QueryMap(query) = QueryMap::from_request_parts(&mut parts, shared)
            .await
            .map_err(IntoResponse::into_response)?;
        let headers = parts.headers.clone();
        let body = Bytes::from_request(Request::from_parts(parts, body), shared)
            .await
            .map_err(IntoResponse::into_response)?;
        Params::read(&query, &headers, &body).map_err(IntoResponse::into_response)
    }
}

impl Params {
    /// Reads the query and the body.
    pub(crate) fn read(
        query: &BTreeMap<String, String>,
        headers: &HeaderMap,
        body: &Bytes,
    ) -> Result<Params, GlError> {
        let mut map: Map<String, Value> = query
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        if !body.iter().all(u8::is_ascii_whitespace) {
            let form = headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"));
            if form {
                for (key, value) in url::form_urlencoded::parse(body) {
                    map.insert(key.into_owned(), Value::String(value.into_owned()));
                }
            } else {
                match serde_json::from_slice::<Value>(body) {
                    Ok(Value::Object(object)) => map.extend(object),
                    _ => return Err(GlError::bad_request("the body is not a JSON object")),
                }
            }
        }
        Ok(Params(map))
    }

    /// A text parameter (numbers and booleans as text).
    pub(crate) fn text(&self, key: &str) -> Option<String> {
        match self.0.get(key)? {
            Value::String(s) => Some(s.clone()),
            Value::Null => None,
            other => Some(other.to_string()),
        }
    }

    /// The text at `key`, or GitLab's 400 `{key} is missing`.
    pub(crate) fn required_text(&self, key: &str) -> Result<String, GlError> {
        self.text(key)
            .ok_or_else(|| GlError::parameter(&format!("{key} is missing")))
    }

    /// A boolean parameter (JSON, or text as [`parse_bool`] reads it); an
    /// error names the parameter.
    pub(crate) fn flag(&self, key: &str) -> Result<Option<bool>, GlError> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(Value::Number(n)) if n.as_u64() == Some(1) => Ok(Some(true)),
            Some(Value::Number(n)) if n.as_u64() == Some(0) => Ok(Some(false)),
            Some(Value::String(s)) => parse_bool(s)
                .map(Some)
                .ok_or_else(|| GlError::parameter(&format!("{key} is invalid"))),
            Some(_) => Err(GlError::parameter(&format!("{key} is invalid"))),
        }
    }

    /// An object parameter: a JSON object, or the form or query keys
    /// `key[sub]` (`key[a][b]` nesting), as Rack reads them for GitLab.
    pub(crate) fn object(&self, key: &str) -> Option<Map<String, Value>> {
        if let Some(Value::Object(object)) = self.0.get(key) {
            return Some(object.clone());
        }
        let prefix = format!("{key}[");
        let mut out = Map::new();
        for (name, value) in &self.0 {
            if let Some(rest) = name.strip_prefix(&prefix) {
                let path: Vec<&str> = rest.trim_end_matches(']').split("][").collect();
                insert_at(&mut out, &path, value.clone());
            }
        }
        (!out.is_empty()).then_some(out)
    }

    /// A list parameter: comma-separated text, or a JSON array (of
    /// strings or numbers: `reviewer_ids`), or the form keys `key[]`.
    pub(crate) fn list(&self, key: &str) -> Option<Vec<String>> {
        let value = self
            .0
            .get(key)
            .or_else(|| self.0.get(&format!("{key}[]")))?;
        let items: Vec<String> = match value {
            Value::Array(items) => items
                .iter()
                .filter_map(|v| match v {
                    Value::String(s) => Some(s.clone()),
                    Value::Number(n) => Some(n.to_string()),
                    _ => None,
                })
                .collect(),
            Value::Number(n) => vec![n.to_string()],
            Value::String(s) => s.split(',').map(str::to_owned).collect(),
            _ => return None,
        };
        Some(
            items
                .into_iter()
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
                .collect(),
        )
    }
}

/// Sets `value` at `path` in `map`, making the objects on the way.
fn insert_at(map: &mut Map<String, Value>, path: &[&str], value: Value) {
    match path {
        [] => {}
        [last] => {
            map.insert((*last).to_owned(), value);
        }
        [first, rest @ ..] => {
            let entry = map
                .entry((*first).to_owned())
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(inner) = entry {
                insert_at(inner, rest, value);
            }
        }
    }
}

/// The query of a request, decoded (a repeated key keeps its last value).
pub(crate) struct QueryMap(pub(crate) BTreeMap<String, String>);

impl FromRequestParts<Arc<Shared>> for QueryMap {
    type Rejection = GlError;

    async fn from_request_parts(
        parts: &mut Parts,
        _shared: &Arc<Shared>,
    ) -> Result<Self, Self::Rejection> {
        let Query(params) = Query::<BTreeMap<String, String>>::try_from_uri(&parts.uri)
            .map_err(|_| GlError::bad_request("invalid query string"))?;
        Ok(QueryMap(params))
    }
}

/// GitLab's lists: 20 a page; a `page` or `per_page` that is no number is
/// refused (`400 {"error": "page is invalid"}`).
pub(crate) enum GitLabLists {}

impl ListFlavor for GitLabLists {
    const PER_PAGE: usize = 20;
    type Error = GlError;

    fn bad_query() -> GlError {
        GlError::bad_request("invalid query string")
    }

    fn bad_number(name: &str) -> Option<GlError> {
        Some(GlError::parameter(&format!("{name} is invalid")))
    }
}

/// A GitLab list request's paging.
pub(crate) type GlPaging = Lists<GitLabLists>;

impl Lists<GitLabLists> {
    /// A query parameter.
    pub(crate) fn param(&self, name: &str) -> Option<&str> {
        self.params.get(name).map(String::as_str)
    }

    /// The page of `items` as a JSON array with GitLab's pagination headers:
    /// `X-Page`, `X-Per-Page`, `X-Total`, `X-Total-Pages`, `X-Next-Page`
    /// and `X-Prev-Page` (empty at the ends), and `Link`.
    pub(crate) fn respond(&self, base_url: &str, items: Vec<Value>) -> Response {
        let total = items.len();
        let pages = total.div_ceil(self.per_page).max(1);
        let page = page_of(items, self.page, self.per_page);
        let next = (self.page < pages).then_some(self.page + 1);
        let prev = (self.page > 1).then(|| (self.page - 1).min(pages));
        let link_to = |n: usize, rel: &str| self.url.link(base_url, n, rel);
        let mut links = Vec::new();
        if let Some(prev) = prev {
            links.push(link_to(prev, "prev"));
        }
        if let Some(next) = next {
            links.push(link_to(next, "next"));
        }
        links.push(link_to(1, "first"));
        links.push(link_to(pages, "last"));
        let mut response = (StatusCode::OK, Json(Value::Array(page))).into_response();
        let headers = response.headers_mut();
        let text = |n: Option<usize>| n.map(|n| n.to_string()).unwrap_or_default();
        for (name, value) in [
            ("x-page", self.page.to_string()),
            ("x-per-page", self.per_page.to_string()),
            ("x-total", total.to_string()),
            ("x-total-pages", pages.to_string()),
            ("x-next-page", text(next)),
            ("x-prev-page", text(prev)),
            ("link", links.join(", ")),
        ] {
            if let Ok(value) = HeaderValue::from_str(&value) {
                headers.insert(HeaderName::from_static(name), value);
            }
        }
        response
    }
}

/// Counts each GitLab request as `METHOD /api/v4/…template` and applies the
/// faults set on that key, answering them in GitLab's shape.
pub(crate) async fn count_and_fault(
    State(shared): State<Arc<Shared>>,
    request: Request,
    next: Next,
) -> Response {
    crate::rest::count_and_fault_as(&shared, request, next, ApiFlavor::GitLab).await
}

/// ETags and `304 Not Modified` on GETs, and GitLab's `RateLimit-*`
/// headers on every answer.
pub(crate) async fn conditional_get(
    State(shared): State<Arc<Shared>>,
    request: Request,
    next: Next,
) -> Response {
    crate::rest::conditional_get_with(
        &shared,
        request,
        next,
        ApiFlavor::GitLab,
        add_rate_limit_headers,
    )
    .await
}

fn add_rate_limit_headers(shared: &Shared, response: &mut Response) {
    if response.headers().contains_key("ratelimit-remaining") {
        return;
    }
    // The emulator never limits: a full window that resets an hour after start.
    let reset = shared.started_at_unix + 3600;
    let headers = response.headers_mut();
    for (name, value) in [
        ("ratelimit-name", "throttle_authenticated_api".to_owned()),
        ("ratelimit-limit", "2000".to_owned()),
        ("ratelimit-observed", "1".to_owned()),
        ("ratelimit-remaining", "1999".to_owned()),
        ("ratelimit-reset", reset.to_string()),
    ] {
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.insert(HeaderName::from_static(name), value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rest::PageUrl;

    fn paging(page: usize, per_page: usize) -> GlPaging {
        let url = PageUrl::new(
            &format!("/api/v4/projects/g%2Fp/merge_requests/1/discussions?per_page={per_page}")
                .parse()
                .unwrap(),
        );
        GlPaging::new(page, per_page, url, BTreeMap::new())
    }

    #[test]
    fn pages_carry_gitlabs_headers() {
        let items: Vec<Value> = (0..25).map(|i| json!(i)).collect();
        let response = paging(2, 10).respond("http://h", items.clone());
        let h = response.headers();
        let get = |name: &str| h.get(name).unwrap().to_str().unwrap().to_owned();
        assert_eq!(get("x-page"), "2");
        assert_eq!(get("x-next-page"), "3");
        assert_eq!(get("x-prev-page"), "1");
        assert_eq!(get("x-total"), "25");
        assert_eq!(get("x-total-pages"), "3");
        assert!(get("link").contains(
            "<http://h/api/v4/projects/g%2Fp/merge_requests/1/discussions?per_page=10&page=3>; rel=\"next\""
        ));
        let response = paging(3, 10).respond("http://h", items);
        assert_eq!(response.headers().get("x-next-page").unwrap(), "");
        assert!(!response
            .headers()
            .get("link")
            .unwrap()
            .to_str()
            .unwrap()
            .contains("next"));
    }

    #[test]
    fn params_merge_query_json_and_forms() {
        let query = BTreeMap::from([("resolved".to_owned(), "true".to_owned())]);
        let params = Params::read(&query, &HeaderMap::new(), &Bytes::new()).unwrap();
        assert_eq!(params.flag("resolved").unwrap(), Some(true));
        let body = Bytes::from_static(br#"{"add_labels": "a, b", "title": "T"}"#);
        let params = Params::read(&BTreeMap::new(), &HeaderMap::new(), &body).unwrap();
        assert_eq!(params.list("add_labels").unwrap(), ["a", "b"]);
        assert_eq!(params.text("title").as_deref(), Some("T"));
        let mut headers = HeaderMap::new();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/x-www-form-urlencoded"),
        );
        let body = Bytes::from_static(b"body=hello+there&resolved=maybe");
        let params = Params::read(&BTreeMap::new(), &headers, &body).unwrap();
        assert_eq!(params.text("body").as_deref(), Some("hello there"));
        assert!(params.flag("resolved").is_err());
        let body = Bytes::from_static(
            b"position%5Bnew_line%5D=5&position%5Bline_range%5D%5Bstart%5D%5Bnew_line%5D=3",
        );
        let params = Params::read(&BTreeMap::new(), &headers, &body).unwrap();
        assert_eq!(
            Value::Object(params.object("position").unwrap()),
            json!({ "new_line": "5", "line_range": { "start": { "new_line": "3" } } })
        );
        assert!(params.object("nope").is_none());
        let bad = Params::read(
            &BTreeMap::new(),
            &HeaderMap::new(),
            &Bytes::from_static(b"[1]"),
        );
        assert!(bad.is_err());
    }
}
