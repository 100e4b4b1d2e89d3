//! Token authentication: `Authorization: Bearer T`, `token T`, or Basic with
//! the token as the password (what git sends).

use axum::http::{header, HeaderMap};
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;

use crate::scenario::{Permission, UserKind, Visibility};
use crate::state::State;

/// The authenticated user of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Viewer {
    pub(crate) login: String,
    pub(crate) kind: UserKind,
    pub(crate) permission: Permission,
    pub(crate) database_id: u64,
    pub(crate) node_id: String,
    /// Whether the repository is public: anyone signed in sees it and may
    /// comment on its pull requests.
    pub(crate) public: bool,
}

impl Viewer {
    /// Whether the viewer may see the repository: a role on it, or the
    /// repository is public.
    pub(crate) fn sees_repository(&self) -> bool {
        self.permission > Permission::None || self.public
    }

    /// Whether the viewer may comment on a pull request (a review, a
    /// review comment, a reply, a conversation comment, a note): write
    /// access, or any account without a role on a public repository, as on
    /// both forges. A `read` token stays read-only: it models a token
    /// without write scope (GitHub's "Resource not accessible by personal
    /// access token", GitLab's 403), not an account.
    pub(crate) fn may_comment(&self) -> bool {
        self.permission >= Permission::Write || (self.public && self.permission == Permission::None)
    }
}

/// Why a request is not authenticated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AuthFailure {
    /// No credentials at all.
    Missing,
    /// Credentials that match no user (or a malformed header).
    Bad,
}

/// Extracts the token from the `Authorization` header.
pub(crate) fn token_from_headers(headers: &HeaderMap) -> Result<String, AuthFailure> {
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Err(AuthFailure::Missing);
    };
    let value = value.to_str().map_err(|_| AuthFailure::Bad)?.trim();
    let (scheme, rest) = value.split_once(' ').ok_or(AuthFailure::Bad)?;
    let rest = rest.trim();
    if scheme.eq_ignore_ascii_case("bearer") || scheme.eq_ignore_ascii_case("token") {
        return Ok(rest.to_owned());
    }
    if scheme.eq_ignore_ascii_case("basic") {
        let decoded = STANDARD.decode(rest).map_err(|_| AuthFailure::Bad)?;
        let decoded = String::from_utf8(decoded).map_err(|_| AuthFailure::Bad)?;
        // git sends `username:password`; the token is the password, the
        // username is anything (`x-access-token` by convention).
        let (_, password) = decoded.split_once(':').ok_or(AuthFailure::Bad)?;
        return Ok(password.to_owned());
    }
    Err(AuthFailure::Bad)
}

/// Authenticates a request against the state's users.
pub(crate) fn authenticate(state: &State, headers: &HeaderMap) -> Result<Viewer, AuthFailure> {
    let token = token_from_headers(headers)?;
    let user = state.user_by_token(&token).ok_or(AuthFailure::Bad)?;
    Ok(viewer_of(state, user))
}

/// Authenticates a GitLab API request: the `PRIVATE-TOKEN` header (GitLab's
/// own), else the `Authorization` header as [`authenticate`] reads it.
pub(crate) fn authenticate_gitlab(
    state: &State,
    headers: &HeaderMap,
) -> Result<Viewer, AuthFailure> {
    let Some(value) = headers.get("private-token") else {
        return authenticate(state, headers);
    };
    let token = value.to_str().map_err(|_| AuthFailure::Bad)?.trim();
    let user = state.user_by_token(token).ok_or(AuthFailure::Bad)?;
    Ok(viewer_of(state, user))
}

fn viewer_of(state: &State, user: &crate::state::UserRecord) -> Viewer {
    Viewer {
        login: user.login.clone(),
        kind: user.kind,
        permission: user.permission,
        database_id: user.database_id,
        node_id: user.id.clone(),
        public: state.repository.visibility == Visibility::Public,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::AUTHORIZATION, HeaderValue::from_str(value).unwrap());
        h
    }

    #[test]
    fn accepts_bearer_token_and_basic() {
        assert_eq!(token_from_headers(&headers("Bearer abc")).unwrap(), "abc");
        assert_eq!(token_from_headers(&headers("token abc")).unwrap(), "abc");
        let basic = format!("Basic {}", STANDARD.encode("x-access-token:abc"));
        assert_eq!(token_from_headers(&headers(&basic)).unwrap(), "abc");
    }

    #[test]
    fn distinguishes_missing_from_bad() {
        assert_eq!(
            token_from_headers(&HeaderMap::new()),
            Err(AuthFailure::Missing)
        );
        assert_eq!(
            token_from_headers(&headers("Digest abc")),
            Err(AuthFailure::Bad)
        );
        assert_eq!(
            token_from_headers(&headers("Basic !!!")),
            Err(AuthFailure::Bad)
        );
        assert_eq!(
            token_from_headers(&headers("Bearer")),
            Err(AuthFailure::Bad)
        );
    }
}
