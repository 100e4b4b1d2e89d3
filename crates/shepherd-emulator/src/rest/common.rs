//! What every REST handler shares: GitHub's error shape, authentication,
//! access checks, JSON bodies and Link-header pagination.

use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{FromRequestParts, OriginalUri, Path, Query};
use axum::http::request::Parts;
use axum::http::{header, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use crate::auth::{self, AuthFailure, Viewer};
use crate::scenario::Permission;
use crate::shared::Shared;
use crate::state::{PullRequestRecord, RepositoryRecord, State as EmulatorState, WriteError};

/// An error answered in GitHub's REST shape:
/// `{"message": …, "documentation_url": …, "status": "404"}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ApiError {
    /// 401 without credentials.
    RequiresAuthentication,
    /// 401 with credentials that match no user.
    BadCredentials,
    /// 404, also for resources the user may not see.
    NotFound,
    /// 400: the body is not the JSON expected.
    BadJson,
    /// 422 `Validation Failed`, with one error message.
    Validation(String),
    /// Any status with a message.
    Message(StatusCode, String),
}

impl ApiError {
    /// 403 for a token that may read but not write.
    pub(crate) fn read_only() -> ApiError {
        ApiError::Message(
            StatusCode::FORBIDDEN,
            "Resource not accessible by personal access token".into(),
        )
    }
}

impl From<WriteError> for ApiError {
    fn from(err: WriteError) -> Self {
        match err {
            WriteError::NotFound(message) if message.is_empty() || message == "Not Found" => {
                ApiError::NotFound
            }
            WriteError::NotFound(message) => ApiError::Message(StatusCode::NOT_FOUND, message),
            WriteError::Forbidden(message) => ApiError::Message(StatusCode::FORBIDDEN, message),
            WriteError::Unprocessable(message) => ApiError::Validation(message),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, message, errors) = match self {
            ApiError::RequiresAuthentication => (
                StatusCode::UNAUTHORIZED,
                "Requires authentication".to_owned(),
                None,
            ),
            ApiError::BadCredentials => {
                (StatusCode::UNAUTHORIZED, "Bad credentials".to_owned(), None)
            }
            ApiError::NotFound => (StatusCode::NOT_FOUND, "Not Found".to_owned(), None),
            ApiError::BadJson => (
                StatusCode::BAD_REQUEST,
                "Problems parsing JSON".to_owned(),
                None,
            ),
            ApiError::Validation(message) => (
                StatusCode::UNPROCESSABLE_ENTITY,
                "Validation Failed".to_owned(),
                Some(json!([{ "message": message, "code": "custom" }])),
            ),
            ApiError::Message(status, message) => (status, message, None),
        };
        let mut body = json!({
            "message": message,
            "documentation_url": "https://docs.github.com/rest",
            "status": status.as_u16().to_string(),
        });
        if let Some(errors) = errors {
            body["errors"] = errors;
        }
        (status, Json(body)).into_response()
    }
}

/// The authenticated user of a REST request.
pub(crate) struct Authed(pub(crate) Viewer);

impl FromRequestParts<Arc<Shared>> for Authed {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        shared: &Arc<Shared>,
    ) -> Result<Self, Self::Rejection> {
        match auth::authenticate(&shared.read(), &parts.headers) {
            Ok(viewer) => Ok(Authed(viewer)),
            Err(AuthFailure::Missing) => Err(ApiError::RequiresAuthentication),
            Err(AuthFailure::Bad) => Err(ApiError::BadCredentials),
        }
    }
}

/// The API root a REST request was made under, to build the `url` fields of
/// its answer: `http://HOST` for github.com-style requests and
/// `http://HOST/api/v3` for Enterprise-style ones (on Enterprise every `url`
/// is under `/api/v3/`).
pub(crate) struct Api(pub(crate) String);

impl FromRequestParts<Arc<Shared>> for Api {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        shared: &Arc<Shared>,
    ) -> Result<Self, Self::Rejection> {
        let uri = original_uri(parts);
        let path = uri.path();
        let enterprise = path == "/api/v3" || path.starts_with("/api/v3/");
        Ok(Api(if enterprise {
            format!("{}/api/v3", shared.base_url)
        } else {
            shared.base_url.clone()
        }))
    }
}

/// What nearly every REST handler takes, as `Req(shared, viewer, api)`:
/// the shared state, the authenticated viewer ([`Authed`]) and the API
/// root the request used ([`Api`]), extracted in that order (so a missing
/// token is a 401 before anything else is looked at).
pub(crate) struct Req(pub(crate) Arc<Shared>, pub(crate) Viewer, pub(crate) String);

impl FromRequestParts<Arc<Shared>> for Req {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        shared: &Arc<Shared>,
    ) -> Result<Self, Self::Rejection> {
        let Authed(viewer) = Authed::from_request_parts(parts, shared).await?;
        let Api(api) = Api::from_request_parts(parts, shared)
            .await
            .unwrap_or_else(|never| match never {});
        Ok(Req(Arc::clone(shared), viewer, api))
    }
}

/// What a handler of something the path names takes, as `Scoped(shared,
/// viewer, api, extra, target)`: [`Req`], then `extra` ([`Paging`] for a
/// list, `()` otherwise), then the path's `target`, which the viewer must
/// see (404 otherwise); extracted in that order.
pub(crate) struct Scoped<P, T>(
    pub(crate) Arc<Shared>,
    pub(crate) Viewer,
    pub(crate) String,
    pub(crate) P,
    pub(crate) T,
);

/// A list of what the path names (`extra` is its [`Paging`]).
pub(crate) type List<T> = Scoped<Paging, T>;

/// A read of what the path names.
pub(crate) type Read<T> = Scoped<(), T>;

/// What a path can name for [`Scoped`]: the repository, a pull request.
pub(crate) trait Visible: Sized {
    /// The path's parameters that name it.
    type Path: DeserializeOwned + Send;

    /// What `path` names, when `viewer` may see it (404 otherwise).
    fn visible(path: Self::Path, state: &EmulatorState, viewer: &Viewer) -> Result<Self, ApiError>;
}

/// The repository `…/{owner}/{repo}` names.
pub(crate) struct Repo;

impl Visible for Repo {
    type Path = (String, String);

    fn visible(
        (owner, repo): Self::Path,
        state: &EmulatorState,
        viewer: &Viewer,
    ) -> Result<Self, ApiError> {
        visible_repository(state, viewer, &owner, &repo).map(|_| Repo)
    }
}

/// The pull request `…/{owner}/{repo}/{pulls|issues}/{number}` names: its
/// number.
pub(crate) struct Pr(pub(crate) u64);

impl Visible for Pr {
    type Path = (String, String, String);

    fn visible(
        (owner, repo, number): Self::Path,
        state: &EmulatorState,
        viewer: &Viewer,
    ) -> Result<Self, ApiError> {
        visible_pull_request(state, viewer, &owner, &repo, &number).map(|pr| Pr(pr.number))
    }
}

impl<P, T> FromRequestParts<Arc<Shared>> for Scoped<P, T>
where
    P: FromRequestParts<Arc<Shared>> + Send,
    T: Visible + Send,
{
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut Parts,
        shared: &Arc<Shared>,
    ) -> Result<Self, Self::Rejection> {
        let Req(shared, viewer, api) = Req::from_request_parts(parts, shared)
            .await
            .map_err(IntoResponse::into_response)?;
        let extra = P::from_request_parts(parts, &shared)
            .await
            .map_err(IntoResponse::into_response)?;
        let Path(path) = Path::<T::Path>::from_request_parts(parts, &shared)
            .await
            .map_err(IntoResponse::into_response)?;
        let target =
            T::visible(path, &shared.read(), &viewer).map_err(IntoResponse::into_response)?;
        Ok(Scoped(shared, viewer, api, extra, target))
    }
}

/// A 404 unless `owner/repo` is the repository and the viewer may see it.
pub(crate) fn visible_repository<'s>(
    state: &'s EmulatorState,
    viewer: &Viewer,
    owner: &str,
    repo: &str,
) -> Result<&'s RepositoryRecord, ApiError> {
    if state.is_repository(owner, repo) && viewer.sees_repository() {
        Ok(&state.repository)
    } else {
        Err(ApiError::NotFound)
    }
}

/// The pull request `number` (a path segment) of a visible repository.
pub(crate) fn visible_pull_request<'s>(
    state: &'s EmulatorState,
    viewer: &Viewer,
    owner: &str,
    repo: &str,
    number: &str,
) -> Result<&'s PullRequestRecord, ApiError> {
    visible_repository(state, viewer, owner, repo)?;
    let number: u64 = number.parse().map_err(|_| ApiError::NotFound)?;
    state.pull_request(number).ok_or(ApiError::NotFound)
}

/// The text of a new comment's `body`, or GitHub's 422 when it is missing.
pub(crate) fn required_body(body: Option<String>) -> Result<String, ApiError> {
    body.ok_or_else(|| ApiError::Validation("body is missing".into()))
}

/// The number of pull request `number` of `owner/repo` once the viewer may
/// comment on it (404 for one they do not see comes first, then 403).
pub(crate) fn commentable_pull_request(
    state: &EmulatorState,
    viewer: &Viewer,
    (owner, repo, number): (&str, &str, &str),
) -> Result<u64, ApiError> {
    let number = visible_pull_request(state, viewer, owner, repo, number)?.number;
    require_comment(viewer)?;
    Ok(number)
}

/// Comments need write permission, or a public repository (any account
/// may comment there); a read-only token gets GitHub's 403.
pub(crate) fn require_comment(viewer: &Viewer) -> Result<(), ApiError> {
    if viewer.may_comment() {
        Ok(())
    } else {
        Err(ApiError::read_only())
    }
}

/// Writes need write permission; a read-only token gets GitHub's 403.
pub(crate) fn require_write(viewer: &Viewer) -> Result<(), ApiError> {
    if viewer.permission >= Permission::Write {
        Ok(())
    } else {
        Err(ApiError::read_only())
    }
}

/// Parses a JSON body; an empty body is `{}`.
pub(crate) fn parse_body<T: DeserializeOwned>(body: &Bytes) -> Result<T, ApiError> {
    let text: &[u8] = if body.iter().all(u8::is_ascii_whitespace) {
        b"{}"
    } else {
        body
    };
    serde_json::from_slice(text).map_err(|_| ApiError::BadJson)
}

/// Parses a numeric path segment; anything else is a 404, as on GitHub.
pub(crate) fn parse_id(segment: &str) -> Result<u64, ApiError> {
    segment.parse().map_err(|_| ApiError::NotFound)
}

/// How an API reads a list request's paging: its default page size, and
/// what it makes of a query that does not decode or a `page`/`per_page`
/// that is no number.
pub(crate) trait ListFlavor {
    /// `per_page` when the request names none.
    const PER_PAGE: usize;
    /// The API's error.
    type Error: IntoResponse;
    /// The answer to a query string that does not decode.
    fn bad_query() -> Self::Error;
    /// The answer to a `page` or `per_page` that is no number: `None` takes
    /// the default instead.
    fn bad_number(name: &str) -> Option<Self::Error>;
}

/// `page` (from 1) and `per_page` (1 to 100) of a list request, the URL its
/// links point to, and every query parameter, as API `F` reads them
/// ([`Paging`] for GitHub, GitLab's `GlPaging`).
pub(crate) struct Lists<F> {
    pub(crate) page: usize,
    pub(crate) per_page: usize,
    /// The request's path, as the client sent it (either path style; a
    /// GitLab project's path stays encoded), and its query without `page`.
    pub(crate) url: PageUrl,
    /// The query parameters, decoded.
    pub(crate) params: BTreeMap<String, String>,
    flavor: PhantomData<F>,
}

impl<F> Lists<F> {
    /// A page of `per_page` items linked from `url`, with `params`.
    pub(crate) fn new(
        page: usize,
        per_page: usize,
        url: PageUrl,
        params: BTreeMap<String, String>,
    ) -> Self {
        Lists {
            page,
            per_page,
            url,
            params,
            flavor: PhantomData,
        }
    }
}

impl<F: ListFlavor> FromRequestParts<Arc<Shared>> for Lists<F> {
    type Rejection = F::Error;

    async fn from_request_parts(
        parts: &mut Parts,
        _shared: &Arc<Shared>,
    ) -> Result<Self, Self::Rejection> {
        let uri = original_uri(parts);
        let Query(params) =
            Query::<BTreeMap<String, String>>::try_from_uri(&uri).map_err(|_| F::bad_query())?;
        let number = |name: &str, default: usize| -> Result<usize, F::Error> {
            match params.get(name).map(|v| v.parse::<usize>()) {
                None => Ok(default),
                Some(Ok(n)) => Ok(n),
                Some(Err(_)) => F::bad_number(name).map_or(Ok(default), Err),
            }
        };
        let page = number("page", 1)?.max(1);
        let per_page = number("per_page", F::PER_PAGE)?.clamp(1, 100);
        Ok(Lists::new(page, per_page, PageUrl::new(&uri), params))
    }
}

/// GitHub's lists: 30 a page; a `page` that is no number is page 1.
pub(crate) enum GitHubLists {}

impl ListFlavor for GitHubLists {
    const PER_PAGE: usize = 30;
    type Error = ApiError;

    fn bad_query() -> ApiError {
        ApiError::Validation("invalid query string".into())
    }

    fn bad_number(_name: &str) -> Option<ApiError> {
        None
    }
}

/// A GitHub list request's paging.
pub(crate) type Paging = Lists<GitHubLists>;

impl Lists<GitHubLists> {
    /// The page of `items`, and the `Link` header when there are others.
    pub(crate) fn slice<T>(&self, base_url: &str, items: Vec<T>) -> (Vec<T>, Option<String>) {
        let last = items.len().div_ceil(self.per_page).max(1);
        let page = page_of(items, self.page, self.per_page);
        let link_to = |n: usize, rel: &str| self.url.link(base_url, n, rel);
        let mut links = Vec::new();
        if self.page > 1 {
            links.push(link_to(self.page - 1, "prev"));
        }
        if self.page < last {
            links.push(link_to(self.page + 1, "next"));
            links.push(link_to(last, "last"));
        }
        if self.page > 1 {
            links.push(link_to(1, "first"));
        }
        let link = (!links.is_empty()).then(|| links.join(", "));
        (page, link)
    }

    /// A 200 with the page of `items` as a JSON array, and its `Link`.
    pub(crate) fn array(&self, base_url: &str, items: Vec<Value>) -> Response {
        self.array_of(base_url, items, |item| item)
    }

    /// A 200 with the page of `items`, each rendered by `render`, as a JSON
    /// array, and its `Link`: only the page's items are rendered, so a list
    /// of tens of thousands (a pull request's reviews) costs a page.
    pub(crate) fn array_of<T>(
        &self,
        base_url: &str,
        items: Vec<T>,
        render: impl FnMut(T) -> Value,
    ) -> Response {
        let (page, link) = self.slice(base_url, items);
        with_link(
            StatusCode::OK,
            Value::Array(page.into_iter().map(render).collect()),
            link,
        )
    }

    /// A 200 with the page of `items` as `key` beside their `total_count`
    /// (the envelope of the checks and actions lists), and its `Link`.
    pub(crate) fn counted(&self, base_url: &str, key: &str, items: Vec<Value>) -> Response {
        let total = items.len();
        let (page, link) = self.slice(base_url, items);
        with_link(
            StatusCode::OK,
            json!({ "total_count": total, key: page }),
            link,
        )
    }
}

/// The URI as the client sent it, before any rewrite of the path.
pub(crate) fn original_uri(parts: &Parts) -> Uri {
    parts
        .extensions
        .get::<OriginalUri>()
        .map_or_else(|| parts.uri.clone(), |o| o.0.clone())
}

/// Page `page` (from 1) of `items`, `per_page` to a page.
pub(crate) fn page_of<T>(items: Vec<T>, page: usize, per_page: usize) -> Vec<T> {
    let start = (page - 1).saturating_mul(per_page);
    items.into_iter().skip(start).take(per_page).collect()
}

/// Where a list was asked for: the path as sent and the query without
/// `page`, to point `Link` header entries at other pages of it.
pub(crate) struct PageUrl {
    path: String,
    other_params: Vec<String>,
}

impl PageUrl {
    /// The list at `uri`.
    pub(crate) fn new(uri: &Uri) -> PageUrl {
        let other_params = uri
            .query()
            .unwrap_or_default()
            .split('&')
            .filter(|p| !p.is_empty() && !p.starts_with("page="))
            .map(str::to_owned)
            .collect();
        PageUrl {
            path: uri.path().to_owned(),
            other_params,
        }
    }

    /// The `Link` header entry for page `n`, as relation `rel`.
    pub(crate) fn link(&self, base_url: &str, n: usize, rel: &str) -> String {
        let mut params = self.other_params.clone();
        params.push(format!("page={n}"));
        format!(
            "<{base_url}{}?{}>; rel=\"{rel}\"",
            self.path,
            params.join("&")
        )
    }
}

/// A JSON answer with an optional `Link` header.
pub(crate) fn with_link(status: StatusCode, body: Value, link: Option<String>) -> Response {
    let mut response = (status, Json(body)).into_response();
    if let Some(value) = link.and_then(|l| HeaderValue::from_str(&l).ok()) {
        response.headers_mut().insert(header::LINK, value);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paging(page: usize, per_page: usize, query: &[&str]) -> Paging {
        let url = PageUrl {
            path: "/api/v3/repos/o/r/issues/1/comments".into(),
            other_params: query.iter().map(|s| (*s).to_owned()).collect(),
        };
        Paging::new(page, per_page, url, BTreeMap::new())
    }

    #[test]
    fn link_header_names_the_neighbours() {
        let items: Vec<u32> = (0..25).collect();
        let (page, link) = paging(2, 10, &["per_page=10"]).slice("http://h", items.clone());
        assert_eq!(page, (10..20).collect::<Vec<_>>());
        let link = link.unwrap();
        assert!(
            link.contains(
                "<http://h/api/v3/repos/o/r/issues/1/comments?per_page=10&page=3>; rel=\"next\""
            ),
            "{link}"
        );
        assert!(link.contains("page=1>; rel=\"prev\""), "{link}");
        assert!(link.contains("page=3>; rel=\"last\""), "{link}");
        assert!(link.contains("page=1>; rel=\"first\""), "{link}");
        let (page, link) = paging(3, 10, &[]).slice("http://h", items.clone());
        assert_eq!(page.len(), 5);
        assert!(!link.unwrap().contains("next"));
        let (_, link) = paging(1, 30, &[]).slice("http://h", items);
        assert_eq!(link, None);
    }
}
