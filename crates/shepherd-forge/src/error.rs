//! The one error type of every forge call.
//!
//! Every variant names the request that failed (`GET /repos/o/r/pulls/1`,
//! `GraphQL PullRequestState`, `GET /api/v4/projects/g%2Fp/merge_requests/1`): never a header, never a token, never a query
//! string. Response bodies are reduced to the forge's own `message` field, with
//! any occurrence of the token masked before it is stored.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// `Result` with [`ForgeError`] as the default error.
pub type Result<T, E = ForgeError> = std::result::Result<T, E>;

/// Why a forge call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ForgeError {
    /// No token was found for the host.
    #[error("no token for {host}: {hint}")]
    NoToken {
        /// The forge host (`github.com`, `ghe.corp`).
        host: String,
        /// What the user can set or run to provide one.
        hint: String,
    },

    /// An API URL or host could not be turned into endpoints.
    #[error("invalid API endpoint `{input}`: {reason}")]
    InvalidEndpoint {
        /// What was given.
        input: String,
        /// Why it is not usable.
        reason: String,
    },

    /// The HTTP client could not be set up (TLS backend, options).
    #[error("could not set up the HTTP client")]
    Client {
        /// The builder's error.
        #[source]
        source: reqwest::Error,
    },

    /// `[forge] ca_file` cannot be read, or holds no usable certificate.
    #[error("cannot use the CA file {path} ([forge] ca_file): {reason}")]
    CaFile {
        /// The file, as configured.
        path: String,
        /// Why it is not usable.
        reason: String,
    },

    /// The server's TLS certificate is not trusted (unknown issuer, expired,
    /// issued for another name). Never retried: it fails the same way again.
    #[error("TLS certificate of {origin} not trusted: {reason}; {hint} (on {request})")]
    Certificate {
        /// The request that failed.
        request: String,
        /// `https://HOST[:PORT]`.
        origin: String,
        /// What is wrong with the certificate (`unknown issuer`).
        reason: String,
        /// What to do about it.
        hint: String,
    },

    /// The forge rejected the token (401).
    #[error("the token was rejected (401) on {request}: {hint}")]
    Unauthorized {
        /// The request that failed.
        request: String,
        /// Where the token came from and what to check.
        hint: String,
    },

    /// The forge refused the request (403) for a reason other than a rate limit.
    #[error("{request} was refused (403): {message}; check the token's scopes and permissions")]
    Forbidden {
        /// The request that failed.
        request: String,
        /// The forge's message.
        message: String,
    },

    /// The resource does not exist, or the token may not see it (404).
    #[error(
        "{request} answered not found (404): the pull or merge request or the repository does \
         not exist, or the token has no access to it (GitHub and GitLab answer 404 rather than \
         403 for private repositories the token cannot see)"
    )]
    NotFound {
        /// The request that failed.
        request: String,
        /// The forge's message (`Not Found`, `Branch not protected`).
        message: String,
    },

    /// A primary or secondary rate limit, whose wait is beyond what the client
    /// accepts (or which outlasted the retries).
    #[error("rate limited on {request}: {}", describe_reset(*.wait, *.reset_at))]
    RateLimited {
        /// The request that failed.
        request: String,
        /// How long the forge asked to wait, from `Retry-After` or the reset time.
        wait: Option<Duration>,
        /// When the limit resets (unix seconds, `x-ratelimit-reset`), when known.
        reset_at: Option<u64>,
    },

    /// Any other unsuccessful HTTP status (after retries, for 5xx).
    #[error("{request} failed with HTTP {status}: {message}")]
    Http {
        /// The request that failed.
        request: String,
        /// The HTTP status code.
        status: u16,
        /// The forge's message, or the start of the body.
        message: String,
    },

    /// A GraphQL answer carried `errors` (even with a 200 status).
    #[error("GraphQL {operation} returned errors: {}", messages.join("; "))]
    GraphQl {
        /// The operation name (`PullRequestState`).
        operation: String,
        /// The error messages, in the order the forge gave them.
        messages: Vec<String>,
    },

    /// The request could not be sent or its answer not read (after retries).
    #[error("{request} failed: network error")]
    Network {
        /// The request that failed.
        request: String,
        /// The transport error, with its URL removed.
        #[source]
        source: reqwest::Error,
    },

    /// A reply was posted but landed in a PENDING review: it stays invisible
    /// to everyone else until that review is submitted.
    #[error(
        "the reply {comment_id} landed in pending review {review_id} on {request}: it is \
         invisible to others until that review is submitted; submit or discard the pending \
         review on the pull request, then resume"
    )]
    ReplyInPendingReview {
        /// The request that posted the reply.
        request: String,
        /// The reply's REST id.
        comment_id: u64,
        /// The pending review's REST id.
        review_id: u64,
    },

    /// A mutation answered success, but reading its effect back did not
    /// confirm it (the reply cannot be read back, the thread is not resolved).
    #[error("{request} was not confirmed: {what}")]
    Unconfirmed {
        /// The mutation.
        request: String,
        /// What could not be confirmed.
        what: String,
    },

    /// A thread the client cannot resolve, before anything was sent: a
    /// GitLab discussion that is not resolvable, or whose merge request the
    /// client does not know.
    #[error("cannot resolve thread {thread}: {reason}")]
    CannotResolve {
        /// The thread (GitLab discussion) id.
        thread: String,
        /// Why, and what to do.
        reason: String,
    },

    /// This forge (or this client) does not implement the operation.
    #[error("{operation} is not supported by this forge client")]
    Unsupported {
        /// The operation (`rerun_failed_jobs`).
        operation: &'static str,
    },

    /// The answer did not have the expected shape.
    #[error("could not decode the answer to {request}: {message}")]
    Decode {
        /// The request whose answer is malformed.
        request: String,
        /// What was wrong.
        message: String,
    },
}

impl ForgeError {
    /// The HTTP status behind this error, when there was one.
    pub fn status(&self) -> Option<u16> {
        match self {
            ForgeError::Unauthorized { .. } => Some(401),
            ForgeError::Forbidden { .. } => Some(403),
            ForgeError::NotFound { .. } => Some(404),
            ForgeError::Http { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// Whether the failure may pass on its own: a network error, a 5xx, a
    /// rate limit. After a failed mutation this does NOT say that it did not
    /// land: check on the forge before sending it again.
    pub fn is_transient(&self) -> bool {
        match self {
            ForgeError::Network { .. } | ForgeError::RateLimited { .. } => true,
            ForgeError::Http { status, .. } => (500..=599).contains(status),
            _ => false,
        }
    }
}

/// "the limit resets in 1200s (at unix time 1700000000)", or what is known of it.
fn describe_reset(wait: Option<Duration>, reset_at: Option<u64>) -> String {
    let wait = wait.or_else(|| {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).ok()?.as_secs();
        reset_at.map(|at| Duration::from_secs(at.saturating_sub(now)))
    });
    match (wait, reset_at) {
        (Some(wait), Some(at)) => format!(
            "the limit resets in {}s (at unix time {at}); try again then",
            wait.as_secs()
        ),
        (Some(wait), None) => format!(
            "the forge asked to wait {}s before retrying; try again then",
            wait.as_secs()
        ),
        (None, Some(at)) => format!("the limit resets at unix time {at}"),
        (None, None) => "the forge did not say when the limit resets".to_owned(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;

    #[test]
    fn rate_limited_names_the_reset() {
        let err = ForgeError::RateLimited {
            request: "GraphQL ReviewThreads".into(),
            wait: Some(Duration::from_secs(1200)),
            reset_at: Some(1_700_000_000),
        };
        let text = err.to_string();
        assert!(text.contains("GraphQL ReviewThreads"), "{text}");
        assert!(text.contains("1200s"), "{text}");
        assert!(text.contains("1700000000"), "{text}");
    }

    #[test]
    fn graphql_error_lists_every_message() {
        let err = ForgeError::GraphQl {
            operation: "PullRequestState".into(),
            messages: vec!["first".into(), "second".into()],
        };
        assert_eq!(
            err.to_string(),
            "GraphQL PullRequestState returned errors: first; second"
        );
    }
}
