//! Git over smart HTTP at `/{owner}/{repo}.git/…`, through the real
//! `git http-backend` CGI, with token authentication.
//!
//! The request body streams to the CGI's stdin. Its output is collected
//! before answering: after a push, the push hook must have updated the state
//! by the time `git push` returns, so that a client reading the PR right
//! after sees the new head.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use futures::StreamExt as _;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use crate::auth::{self, AuthFailure};
use crate::faults::{self, ApiFlavor};
use crate::git::GitEnv;
use crate::push;
use crate::rest::ApiError;
use crate::scenario::{EmulatedForge, Permission};
use crate::shared::Shared;

/// The smart-HTTP endpoints `git http-backend` is allowed to serve.
const SERVICES: [&str; 3] = ["info/refs", "git-upload-pack", "git-receive-pack"];

/// Errors from running the CGI.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CgiError {
    /// `git http-backend` could not be started or talked to.
    #[error("cannot run git http-backend")]
    Io(#[from] std::io::Error),
    /// Its output had no header/body separator.
    #[error("git http-backend printed no CGI headers")]
    NoHeaders,
}

/// The fallback handler: git requests for the scenario's repository, else
/// the forge's 404.
pub(crate) async fn fallback(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let forge = shared.scenario.forge;
    let Some((owner, name, service)) = git_path(request.uri().path()) else {
        return match forge {
            EmulatedForge::GitHub => ApiError::NotFound.into_response(),
            EmulatedForge::GitLab => (
                StatusCode::NOT_FOUND,
                axum::Json(serde_json::json!({ "error": "404 Not Found" })),
            )
                .into_response(),
        };
    };
    let (repo_owner, repo_name, is_repo) = {
        let state = shared.read();
        (
            state.repository.owner.clone(),
            state.repository.name.clone(),
            state.is_repository(&owner, &name),
        )
    };
    if !is_repo || !SERVICES.contains(&service.as_str()) {
        return not_found();
    }
    let method = request.method().clone();
    let key = format!("{method} /{{owner}}/{{repo}}.git/{service}");
    // Faults apply to git as to the API: a delay, an error instead of the
    // service, or `commit_then_fail` (the push lands, the client sees a 502).
    let commit_then_fail = match shared.enter(&key, ApiFlavor::Rest).await {
        Ok(commit_then_fail) => commit_then_fail,
        Err(answer) => return answer,
    };

    let query = request.uri().query().unwrap_or_default().to_owned();
    let push = service == "git-receive-pack"
        || (service == "info/refs" && query.contains("service=git-receive-pack"));
    let viewer = match auth::authenticate(&shared.read(), request.headers()) {
        Ok(viewer) => viewer,
        Err(AuthFailure::Missing | AuthFailure::Bad) => return unauthorized(forge),
    };
    if !viewer.sees_repository() {
        return not_found();
    }
    if push && viewer.permission < Permission::Write {
        let message = format!(
            "Permission to {repo_owner}/{repo_name}.git denied to {}.\n",
            viewer.login
        );
        return (StatusCode::FORBIDDEN, message).into_response();
    }

    let cgi = CgiRequest {
        method,
        path_info: format!("/{repo_owner}/{repo_name}.git/{service}"),
        query,
        remote_user: viewer.login.clone(),
        headers: request.headers().clone(),
    };
    let body = request.into_body();
    let output = if service == "git-receive-pack" {
        receive_pack(&shared, cgi, body, viewer.login.clone()).await
    } else {
        run_cgi(&shared.git, &shared.git_root, cgi, body).await
    };
    let output = match output {
        Ok(output) => output,
        Err(err) => {
            tracing::error!(error = %err, "git http-backend failed");
            return (
                StatusCode::INTERNAL_SERVER_ERROR,
                "git http-backend failed\n",
            )
                .into_response();
        }
    };
    if let Some(spec) = commit_then_fail {
        tracing::info!(%key, "fault: served git, answering 502");
        return faults::response(&spec, ApiFlavor::Rest);
    }
    output.into_response()
}

/// A push: `git-receive-pack`, then what the push does to the pull
/// requests whose head branch moved ([`push::after_receive_pack`]), one
/// push at a time (each sees the refs its own push left), in one step: on
/// a task of its own, so that a client that goes away mid-push (a killed
/// `git push`) cannot stop it between the branch moving and the pull
/// request's head following. Dropping this handler's future drops only
/// the wait for the answer, as on a forge, where a pull request follows
/// its branch on the server's side whatever the client does.
async fn receive_pack(
    shared: &Arc<Shared>,
    cgi: CgiRequest,
    body: Body,
    pusher: String,
) -> Result<CgiOutput, CgiError> {
    let shared = Arc::clone(shared);
    let push = tokio::spawn(async move {
        let _push_guard = shared.push_lock.lock().await;
        let output = run_cgi(&shared.git, &shared.git_root, cgi, body).await?;
        if output.success {
            if let Err(err) = push::after_receive_pack(&shared, &pusher).await {
                tracing::error!(error = %err, "cannot process a push");
            }
        }
        Ok(output)
    });
    push.await
        .map_err(|join| CgiError::Io(std::io::Error::other(join)))?
}

/// `/{owner}/{repo}.git/{service…}` to its parts; the owner may span
/// several segments (GitLab's nested groups: `/group/sub/project.git/…`).
fn git_path(path: &str) -> Option<(String, String, String)> {
    let path = path.trim_start_matches('/');
    let (before, service) = path.split_once(".git/")?;
    let (owner, repo) = before.rsplit_once('/')?;
    if owner.is_empty() || repo.is_empty() || service.is_empty() {
        return None;
    }
    Some((owner.to_owned(), repo.to_owned(), service.to_owned()))
}

fn unauthorized(forge: EmulatedForge) -> Response {
    let mut response = (StatusCode::UNAUTHORIZED, "Authentication required\n").into_response();
    let realm = match forge {
        EmulatedForge::GitHub => "Basic realm=\"GitHub\"",
        EmulatedForge::GitLab => "Basic realm=\"GitLab\"",
    };
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static(realm));
    response
}

fn not_found() -> Response {
    (StatusCode::NOT_FOUND, "Repository not found.\n").into_response()
}

/// What the CGI needs from the HTTP request.
struct CgiRequest {
    method: Method,
    path_info: String,
    query: String,
    remote_user: String,
    headers: HeaderMap,
}

/// The CGI's answer.
#[derive(Debug)]
struct CgiOutput {
    status: StatusCode,
    headers: Vec<(HeaderName, HeaderValue)>,
    body: Bytes,
    success: bool,
}

impl IntoResponse for CgiOutput {
    fn into_response(self) -> Response {
        let mut response = Response::new(Body::from(self.body));
        *response.status_mut() = self.status;
        response.headers_mut().extend(self.headers);
        response
    }
}

async fn run_cgi(
    git: &GitEnv,
    project_root: &Path,
    request: CgiRequest,
    body: Body,
) -> Result<CgiOutput, CgiError> {
    let header = |name: &HeaderName| {
        request
            .headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let mut cmd = git.tokio_command();
    cmd.arg("http-backend")
        .env("GIT_PROJECT_ROOT", project_root)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("GATEWAY_INTERFACE", "CGI/1.1")
        .env("SERVER_PROTOCOL", "HTTP/1.1")
        .env("REQUEST_METHOD", request.method.as_str())
        .env("PATH_INFO", &request.path_info)
        .env("QUERY_STRING", &request.query)
        .env("REMOTE_USER", &request.remote_user)
        .env("REMOTE_ADDR", "127.0.0.1");
    for (name, var) in [
        (header::CONTENT_TYPE, "CONTENT_TYPE"),
        (header::CONTENT_LENGTH, "CONTENT_LENGTH"),
        (header::CONTENT_ENCODING, "HTTP_CONTENT_ENCODING"),
        (HeaderName::from_static("git-protocol"), "HTTP_GIT_PROTOCOL"),
    ] {
        if let Some(value) = header(&name) {
            cmd.env(var, value);
        }
    }
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    tracing::debug!(path = %request.path_info, method = %request.method, "git http-backend");
    let mut child = cmd.spawn()?;
    let (Some(mut stdin), Some(mut stdout), Some(mut stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(CgiError::Io(std::io::Error::other("missing CGI pipes")));
    };

    // Feed stdin while reading stdout and stderr, so no pipe fills up.
    let feed = async move {
        let mut frames = body.into_data_stream();
        while let Some(frame) = frames.next().await {
            let chunk = frame.map_err(std::io::Error::other)?;
            stdin.write_all(&chunk).await?;
        }
        stdin.shutdown().await
    };
    let mut out = Vec::new();
    let mut err = Vec::new();
    let (fed, read_out, read_err) = tokio::join!(
        feed,
        stdout.read_to_end(&mut out),
        stderr.read_to_end(&mut err)
    );
    read_out?;
    read_err?;
    let status = child.wait().await?;
    if let Err(error) = fed {
        // The backend may stop reading early (it answered an error); its
        // own output says what went wrong.
        tracing::debug!(%error, "git http-backend did not read the whole request");
    }
    if !err.is_empty() {
        tracing::debug!(stderr = %String::from_utf8_lossy(&err), "git http-backend stderr");
    }
    let mut output = parse_cgi_output(&out)?;
    output.success = status.success() && output.status.is_success();
    Ok(output)
}

/// Splits CGI output into status, headers and body.
fn parse_cgi_output(out: &[u8]) -> Result<CgiOutput, CgiError> {
    let (head_len, sep_len) = find_header_end(out).ok_or(CgiError::NoHeaders)?;
    let head = String::from_utf8_lossy(&out[..head_len]);
    let mut status = StatusCode::OK;
    let mut headers = Vec::new();
    for line in head.lines() {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("status") {
            let code = value.split(' ').next().unwrap_or_default();
            status = code
                .parse::<u16>()
                .ok()
                .and_then(|c| StatusCode::from_u16(c).ok())
                .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        } else if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.trim().as_bytes()),
            HeaderValue::from_str(value),
        ) {
            headers.push((name, value));
        }
    }
    Ok(CgiOutput {
        status,
        headers,
        body: Bytes::copy_from_slice(&out[head_len + sep_len..]),
        success: false,
    })
}

/// Where the header block ends: `(length, separator length)`.
fn find_header_end(out: &[u8]) -> Option<(usize, usize)> {
    let crlf = out
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|p| (p, 4));
    let lf = out.windows(2).position(|w| w == b"\n\n").map(|p| (p, 2));
    match (crlf, lf) {
        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_git_paths() {
        assert_eq!(
            git_path("/acme/widgets.git/info/refs"),
            Some(("acme".into(), "widgets".into(), "info/refs".into()))
        );
        assert_eq!(
            git_path("/acme/widgets.git/git-upload-pack").map(|p| p.2),
            Some("git-upload-pack".into())
        );
        assert_eq!(git_path("/acme/widgets/info/refs"), None);
        assert_eq!(git_path("/acme/widgets.git"), None);
        assert_eq!(
            git_path("/group/sub/project.git/info/refs"),
            Some(("group/sub".into(), "project".into(), "info/refs".into()))
        );
        assert_eq!(git_path("/project.git/info/refs"), None);
    }

    #[test]
    fn parses_cgi_output() {
        let out = b"Status: 403 Forbidden\r\nContent-Type: text/plain\r\n\r\nnope";
        let parsed = parse_cgi_output(out).unwrap();
        assert_eq!(parsed.status, StatusCode::FORBIDDEN);
        assert_eq!(parsed.headers[0].0, header::CONTENT_TYPE);
        assert_eq!(&parsed.body[..], b"nope");

        let out = b"Content-Type: application/x-git-upload-pack-advertisement\n\n001e# service";
        let parsed = parse_cgi_output(out).unwrap();
        assert_eq!(parsed.status, StatusCode::OK);
        assert_eq!(&parsed.body[..], b"001e# service");

        assert!(parse_cgi_output(b"no separator").is_err());
    }
}
