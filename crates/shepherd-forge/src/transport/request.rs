//! What one request is and what can come of it: the [`Spec`] built for
//! each attempt, a successful [`Answer`], a [`Failure`], and the retry and
//! `ETag` choices a caller makes.

use std::time::Duration;

use bytes::Bytes;
use reqwest::header::HeaderMap;
use reqwest::{Method, StatusCode};
use url::Url;

use crate::error::ForgeError;

/// A successful answer (or a `304` to a conditional request).
#[derive(Clone)]
pub(crate) struct Answer {
    pub(crate) status: StatusCode,
    pub(crate) headers: HeaderMap,
    /// The body as received (shared, not copied, by the ETag cache).
    pub(crate) body: Bytes,
}

/// What one request is: built anew for each attempt.
pub(super) struct Spec<'a> {
    /// `GET /repos/o/r` or `GraphQL ReviewThreads`: what errors and logs name.
    pub(super) name: &'a str,
    pub(super) method: Method,
    pub(super) url: &'a Url,
    pub(super) query: &'a [(&'a str, &'a str)],
    pub(super) json: Option<&'a serde_json::Value>,
    pub(super) resend: Resend,
    pub(super) if_none_match: Option<&'a str>,
}

/// One failed attempt: either final, or worth another try after `after`
/// (`None`: the backoff schedule decides). `rejected`: the forge refused the
/// request without processing it (a rate limit), so even a mutation may be
/// sent again.
pub(super) enum Failure {
    Fatal(ForgeError),
    Retry {
        error: ForgeError,
        after: Option<Duration>,
        rejected: bool,
    },
}

impl Failure {
    pub(super) fn into_error(self) -> ForgeError {
        match self {
            Failure::Fatal(error) | Failure::Retry { error, .. } => error,
        }
    }
}

/// Which failures a request is retried on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Resend {
    /// Reads: every transient failure.
    Transient,
    /// Mutations: only a refusal by rate limit (the request was not processed).
    Refused,
}

/// Whether a GET is conditional (`If-None-Match` with the kept `ETag`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Conditional {
    /// A plain GET.
    No,
    /// Keep the answer's `ETag` and send it next time.
    Yes,
}

/// An answer kept for its `ETag`.
pub(super) struct Kept {
    pub(super) etag: String,
    pub(super) answer: Answer,
}
