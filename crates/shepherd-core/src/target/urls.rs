//! The shapes of forge URLs: which path is a pull request, a merge request,
//! an issue, and what a fragment anchors.

use url::Url;

use crate::model::{ForgeKind, RepoRef};

use super::error::TargetError;
use super::found::{repo_path_from_segments, Found, UrlRef};
use super::host::{normalize_host, well_known_forge};
use super::model::{Anchor, TargetedThread};
use super::quote::{redact_userinfo, truncate};

pub(super) enum UrlShape {
    Pr(Box<Found>),
    Issue,
    Other,
}

pub(super) fn parse_forge_url(text: &str) -> Result<UrlShape, TargetError> {
    let Ok(url) = Url::parse(text) else {
        return Ok(UrlShape::Other);
    };
    let Some(host_name) = url.host_str().filter(|h| !h.is_empty()) else {
        return Ok(UrlShape::Other);
    };
    let host = normalize_host(&match url.port() {
        Some(port) => format!("{host_name}:{port}"),
        None => host_name.to_owned(),
    });
    let redacted = truncate(&redact_userinfo(text));
    let segments: Vec<&str> = url
        .path_segments()
        .map(|s| s.filter(|s| !s.is_empty()).collect())
        .unwrap_or_default();

    let Some((forge, shape)) = ForgeKind::ALL
        .into_iter()
        .find_map(|kind| url_shape(kind, &segments).map(|m| (kind, m)))
    else {
        return Ok(UrlShape::Other);
    };
    let (repo_segments, digits) = match shape {
        Shape::Request(repo, digits) => (repo, digits),
        Shape::Issue => return Ok(UrlShape::Issue),
    };

    if let Some(host_forge) = well_known_forge(&host) {
        if host_forge != forge {
            return Err(TargetError::InvalidUrl {
                url: redacted,
                reason: format!(
                    "{host} is {host_forge}, but the path is a {forge} {} path",
                    forge.request_noun()
                ),
            });
        }
    }
    let Some(path) = repo_path_from_segments(repo_segments) else {
        return Err(TargetError::InvalidUrl {
            url: redacted,
            reason: "the repository path is not valid".to_owned(),
        });
    };
    if forge == ForgeKind::GitHub && path.owner.contains('/') {
        return Err(TargetError::InvalidUrl {
            url: redacted,
            reason: "a GitHub pull request URL is HOST/OWNER/REPO/pull/N".to_owned(),
        });
    }

    let (thread, anchor) = match url.fragment() {
        Some(fragment) => read_fragment(forge, fragment),
        None => (None, None),
    };
    Ok(UrlShape::Pr(Box::new(Found {
        text: redacted.clone(),
        digits: digits.to_owned(),
        number: digits.parse().unwrap_or(0),
        explicit: true,
        kind: Some(forge),
        url: Some(UrlRef {
            text: redacted,
            forge,
            repo: RepoRef {
                host,
                owner: path.owner.clone(),
                name: path.name.clone(),
            },
            thread,
            anchor,
        }),
        path: None,
    })))
}

enum Shape<'a> {
    Request(&'a [&'a str], &'a str),
    Issue,
}

fn is_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// The shape of a URL path on `forge`: a change request, an issue, or neither.
fn url_shape<'a>(forge: ForgeKind, segments: &'a [&'a str]) -> Option<Shape<'a>> {
    match forge {
        ForgeKind::GitHub => github_shape(segments),
        ForgeKind::GitLab => gitlab_shape(segments),
    }
}

/// `owner/repo/pull/N[/…]`, or `owner/repo/issues/N`.
fn github_shape<'a>(segments: &'a [&'a str]) -> Option<Shape<'a>> {
    match segments {
        [_, _, "pull", n, ..] if is_digits(n) => Some(Shape::Request(&segments[..2], n)),
        [_, _, "issues", n, ..] if is_digits(n) => Some(Shape::Issue),
        _ => None,
    }
}

/// `group/…/project/-/merge_requests/N[/…]`, legacy
/// `group/…/project/merge_requests/N`, and the issue equivalents.
fn gitlab_shape<'a>(segments: &'a [&'a str]) -> Option<Shape<'a>> {
    let pos = segments
        .iter()
        .position(|s| matches!(*s, "merge_requests" | "issues" | "work_items"))?;
    let n = segments.get(pos + 1).filter(|n| is_digits(n))?;
    let repo_end = if pos > 0 && segments[pos - 1] == "-" {
        pos - 1
    } else {
        pos
    };
    if repo_end < 2 {
        return None;
    }
    match segments[pos] {
        "merge_requests" => Some(Shape::Request(&segments[..repo_end], n)),
        _ => Some(Shape::Issue),
    }
}

fn read_fragment(forge: ForgeKind, fragment: &str) -> (Option<TargetedThread>, Option<Anchor>) {
    let number = |prefix: &str| -> Option<u64> {
        fragment
            .strip_prefix(prefix)
            .filter(|d| is_digits(d))
            .and_then(|d| d.parse().ok())
            .filter(|n| *n != 0)
    };
    match forge {
        ForgeKind::GitHub => {
            if let Some(id) = number("discussion_r").or_else(|| number("r")) {
                (Some(TargetedThread::GitHubDiscussion(id)), None)
            } else if let Some(id) = number("issuecomment-") {
                (None, Some(Anchor::IssueComment(id)))
            } else if let Some(id) = number("pullrequestreview-") {
                (None, Some(Anchor::Review(id)))
            } else {
                (None, None)
            }
        }
        ForgeKind::GitLab => (number("note_").map(TargetedThread::GitLabNote), None),
    }
}

pub(super) fn describe_thread(t: TargetedThread) -> String {
    match t {
        TargetedThread::GitHubDiscussion(id) => format!("#discussion_r{id}"),
        TargetedThread::GitLabNote(id) => format!("#note_{id}"),
    }
}
