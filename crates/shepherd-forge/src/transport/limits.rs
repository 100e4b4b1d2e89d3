//! Rate limits: how long the forge asks to wait, from its headers.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::header::HeaderMap;

use super::flavor::Flavor;
use super::request::Failure;
use crate::error::ForgeError;

/// How long GitHub asks to wait after a secondary rate limit that names no time.
pub(super) const SECONDARY_LIMIT_WAIT: Duration = Duration::from_secs(60);

/// A rate-limit failure: retried after the forge's wait when one is known.
pub(super) fn rate_limit_failure(
    flavor: Flavor,
    request: String,
    headers: &HeaderMap,
    retry_after: Option<Duration>,
) -> Failure {
    let reset_at = header_secs(headers, flavor.reset_header());
    // GitHub's documented order (GitLab's headers mean the same): Retry-After;
    // else, with the limit used up, the reset time; else (a secondary limit)
    // at least a minute.
    let wait = match retry_after {
        Some(wait) => wait,
        None if exhausted(flavor, headers) => {
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            // One second past the reset, so the retry lands after it.
            reset_at.map_or(SECONDARY_LIMIT_WAIT, |at| {
                Duration::from_secs(at.saturating_sub(now) + 1)
            })
        }
        None => SECONDARY_LIMIT_WAIT,
    };
    let error = ForgeError::RateLimited {
        request,
        wait: Some(wait),
        reset_at,
    };
    Failure::Retry {
        error,
        after: Some(wait),
        rejected: true,
    }
}

/// Whether the answer says the primary rate limit is used up.
pub(super) fn exhausted(flavor: Flavor, headers: &HeaderMap) -> bool {
    header_secs(headers, flavor.remaining_header()) == Some(0)
}

/// A header holding a whole number (seconds, an epoch time, a count).
pub(super) fn header_secs(headers: &HeaderMap, name: &str) -> Option<u64> {
    headers.get(name)?.to_str().ok()?.trim().parse().ok()
}
