//! The retry loop (`backon`) and rate limits: which failures are tried
//! again, and how long to wait before the next try.

use std::time::Duration;

use backon::{ExponentialBuilder, Retryable};

use super::client::Transport;
use super::request::{Answer, Failure, Resend, Spec};
use crate::error::Result;

impl Transport {
    /// Sends `spec`, retrying per the policy, and hands each successful HTTP
    /// answer to `accept`, which may itself fail (GraphQL `errors`).
    pub(super) async fn run<T>(
        &self,
        spec: &Spec<'_>,
        accept: impl Fn(Answer) -> std::result::Result<T, Failure>,
    ) -> Result<T> {
        let policy = &self.retry;
        let max_attempts = policy.max_attempts.max(1);
        let backoff = ExponentialBuilder::default()
            .with_factor(2.0)
            .with_min_delay(policy.initial_backoff)
            .with_max_delay(policy.max_backoff)
            .with_max_times(max_attempts - 1);
        let mut attempt = 0usize;
        let accept = &accept;
        let result = (|| {
            attempt += 1;
            let number = attempt;
            async move { accept(self.attempt(spec, number).await?) }
        })
        .retry(backoff)
        .sleep(tokio::time::sleep)
        .when(|failure: &Failure| match (failure, spec.resend) {
            (Failure::Fatal(_), _) => false,
            (Failure::Retry { .. }, Resend::Transient) => true,
            (Failure::Retry { rejected, .. }, Resend::Refused) => *rejected,
        })
        .adjust(|failure: &Failure, next: Option<Duration>| {
            let next = next?;
            match failure {
                Failure::Retry {
                    after: Some(wait), ..
                } if *wait > policy.max_rate_limit_wait => None,
                Failure::Retry {
                    after: Some(wait), ..
                } => Some(*wait),
                _ => Some(next),
            }
        })
        .notify(|failure: &Failure, wait: Duration| {
            if let Failure::Retry { error, .. } = failure {
                tracing::warn!(
                    request = spec.name,
                    wait_ms = wait.as_millis() as u64,
                    "{error}; retrying"
                );
            }
        })
        .await;
        result.map_err(Failure::into_error)
    }
}
