//! What the scanner finds: a PR/MR reference as written, its URL's parts,
//! a repository path.

use crate::model::{ForgeKind, RepoRef};

use super::model::{Anchor, TargetedThread};

/// A PR/MR reference found in the input.
#[derive(Debug)]
pub(super) struct Found {
    /// As written (credentials redacted).
    pub(super) text: String,
    /// The digits.
    pub(super) digits: String,
    /// The parsed number; 0 when `digits` is 0 or overflows (checked later).
    pub(super) number: u64,
    /// Sigil, keyword or URL (as opposed to a bare number).
    pub(super) explicit: bool,
    /// The forge the reference's spelling implies.
    pub(super) kind: Option<ForgeKind>,
    /// For URLs.
    pub(super) url: Option<UrlRef>,
    /// For `owner/repo#N`.
    pub(super) path: Option<RepoPath>,
}

#[derive(Debug)]
pub(super) struct UrlRef {
    pub(super) text: String,
    pub(super) forge: ForgeKind,
    pub(super) repo: RepoRef,
    pub(super) thread: Option<TargetedThread>,
    pub(super) anchor: Option<Anchor>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct RepoPath {
    pub(super) owner: String,
    pub(super) name: String,
}

impl RepoPath {
    pub(super) fn display(&self) -> String {
        format!("{}/{}", self.owner, self.name)
    }
}

pub(super) struct FlagRepo {
    pub(super) host: Option<String>,
    pub(super) path: RepoPath,
}

impl FlagRepo {
    pub(super) fn display(&self) -> String {
        match &self.host {
            Some(h) => format!("{h}/{}", self.path.display()),
            None => self.path.display(),
        }
    }
}

fn valid_segment(s: &str) -> bool {
    !s.is_empty()
        && s != "."
        && s != ".."
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

pub(super) fn repo_path_from_segments(segments: &[&str]) -> Option<RepoPath> {
    if segments.len() < 2 || !segments.iter().all(|s| valid_segment(s)) {
        return None;
    }
    let (name, owner) = segments.split_last()?;
    Some(RepoPath {
        owner: owner.join("/"),
        name: (*name).to_owned(),
    })
}

/// The repository a URL's or a remote's path names: slashes at either end,
/// empty segments and a `.git` suffix dropped.
pub(super) fn repo_path_of(path: &str) -> Option<RepoPath> {
    let segments: Vec<&str> = path
        .trim_matches('/')
        .trim_end_matches(".git")
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    repo_path_from_segments(&segments)
}
