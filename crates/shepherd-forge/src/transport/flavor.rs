//! What differs between the forges: the headers sent, the names of the
//! rate-limit headers, the hint of a rejected token.

use url::Url;

/// The media type GitHub's REST API documents.
pub(super) const GITHUB_JSON: &str = "application/vnd.github+json";
/// What GitLab's REST API answers.
pub(super) const PLAIN_JSON: &str = "application/json";
/// The REST API version Shepherd is written against.
pub(super) const API_VERSION: &str = "2022-11-28";

/// Which forge a transport talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flavor {
    /// GitHub: its media type and API version headers, `x-ratelimit-*`.
    GitHub,
    /// GitLab: plain JSON, `RateLimit-*`, `X-Next-Page` pagination.
    GitLab,
}

impl Flavor {
    /// The header holding how many requests are left (`0`: used up).
    pub(super) fn remaining_header(self) -> &'static str {
        match self {
            Flavor::GitHub => "x-ratelimit-remaining",
            Flavor::GitLab => "ratelimit-remaining",
        }
    }

    /// The header holding when the limit resets (unix seconds, on both).
    pub(super) fn reset_header(self) -> &'static str {
        match self {
            Flavor::GitHub => "x-ratelimit-reset",
            Flavor::GitLab => "ratelimit-reset",
        }
    }

    /// What to check when the forge rejects the token.
    pub(super) fn unauthorized_hint(self) -> &'static str {
        match self {
            Flavor::GitHub => "check GITHUB_TOKEN (or GH_TOKEN), or run `gh auth login`",
            Flavor::GitLab => {
                "check GITLAB_TOKEN (the token needs the `api` scope), or run `glab auth login`"
            }
        }
    }
}

/// Where a forge's API lives, as the transport needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Api {
    /// Which forge.
    pub(crate) flavor: Flavor,
    /// The REST base: paths are appended to it.
    pub(crate) rest: Url,
    /// The GraphQL endpoint (GitHub; GitLab for re-requesting a review).
    pub(crate) graphql: Option<Url>,
}
