//! The options a caller sets: timeouts, the user agent, extra CA
//! certificates, and how reads are retried.

use std::path::PathBuf;
use std::time::Duration;

#[cfg(doc)]
use crate::error::ForgeError;

/// How the client retries. Attempts count the first try.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Total attempts of one read, the first included (at least 1).
    pub max_attempts: usize,
    /// The wait before the second attempt; it doubles for each later one.
    pub initial_backoff: Duration,
    /// The longest computed wait between two attempts.
    pub max_backoff: Duration,
    /// The longest wait the client accepts from a rate limit (`Retry-After`,
    /// `x-ratelimit-reset`); beyond it the call fails with
    /// [`ForgeError::RateLimited`], saying when the limit resets.
    pub max_rate_limit_wait: Duration,
}

impl Default for RetryPolicy {
    /// 4 attempts, waits of 0.5 s, 1 s, 2 s; rate-limit waits up to 2 minutes.
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 4,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(8),
            max_rate_limit_wait: Duration::from_secs(120),
        }
    }
}

impl RetryPolicy {
    /// One attempt, no retry.
    pub fn none() -> Self {
        RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        }
    }
}

/// HTTP options of a client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientConfig {
    /// The `User-Agent` header (GitHub requires one).
    pub user_agent: String,
    /// Timeout of a whole request, answer included.
    pub timeout: Duration,
    /// Timeout of the connection.
    pub connect_timeout: Duration,
    /// Retries of reads.
    pub retry: RetryPolicy,
    /// A PEM file of CA certificates trusted besides the system's store
    /// (`[forge] ca_file`); read when the client is built.
    pub ca_file: Option<PathBuf>,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            user_agent: format!("shepherd/{}", env!("CARGO_PKG_VERSION")),
            timeout: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(10),
            retry: RetryPolicy::default(),
            ca_file: None,
        }
    }
}
