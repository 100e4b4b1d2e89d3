//! One HTTP exchange: the request with its headers, the answer, and the
//! classification of an unsuccessful status into a final or retryable
//! failure.

use std::time::{Duration, Instant};

use reqwest::header::{HeaderMap, HeaderValue, ACCEPT, AUTHORIZATION, IF_NONE_MATCH, RETRY_AFTER};
use reqwest::StatusCode;
use serde::de::DeserializeOwned;
use serde::Deserialize;

use super::client::Transport;
use super::flavor::{Flavor, API_VERSION, GITHUB_JSON, PLAIN_JSON};
use super::limits::{exhausted, header_secs, rate_limit_failure};
use super::request::{Answer, Failure, Spec};
use crate::error::{ForgeError, Result};

impl Transport {
    /// One attempt: the HTTP exchange and the classification of its status.
    pub(super) async fn attempt(
        &self,
        spec: &Spec<'_>,
        number: usize,
    ) -> std::result::Result<Answer, Failure> {
        let started = Instant::now();
        let mut auth =
            HeaderValue::from_str(&format!("Bearer {}", self.token.expose())).map_err(|_| {
                Failure::Fatal(ForgeError::Unauthorized {
                    request: spec.name.to_owned(),
                    hint: format!(
                        "the token from {} holds characters a header cannot carry",
                        self.token.source()
                    ),
                })
            })?;
        auth.set_sensitive(true);
        let mut request = self
            .http
            .request(spec.method.clone(), spec.url.clone())
            .header(AUTHORIZATION, auth);
        request = match self.api.flavor {
            Flavor::GitHub => request
                .header(ACCEPT, GITHUB_JSON)
                .header("X-GitHub-Api-Version", API_VERSION),
            Flavor::GitLab => request.header(ACCEPT, PLAIN_JSON),
        };
        if !spec.query.is_empty() {
            request = request.query(spec.query);
        }
        if let Some(json) = spec.json {
            request = request.json(json);
        }
        if let Some(etag) = spec.if_none_match {
            if let Ok(value) = HeaderValue::from_str(etag) {
                request = request.header(IF_NONE_MATCH, value);
            }
        }
        let network = |source: reqwest::Error| {
            if let Some(cert) = crate::tls::certificate_failure(&source) {
                // The same certificate fails every attempt: final.
                let (reason, hint) = crate::tls::describe(cert);
                return Failure::Fatal(ForgeError::Certificate {
                    request: spec.name.to_owned(),
                    origin: spec.url.origin().ascii_serialization(),
                    reason,
                    hint: hint.to_owned(),
                });
            }
            let error = ForgeError::Network {
                request: spec.name.to_owned(),
                source: source.without_url(),
            };
            Failure::Retry {
                error,
                after: None,
                rejected: false,
            }
        };
        // A closed semaphore cannot happen (it is never closed); should it,
        // the request goes without a slot rather than failing.
        let slots = if self.is_lead {
            &self.lead_slot
        } else {
            &self.in_flight
        };
        let _slot = slots.acquire().await.ok();
        let response = request.send().await.map_err(|err| {
            let failure = network(err);
            let what = match &failure {
                Failure::Fatal(error) | Failure::Retry { error, .. } => error.to_string(),
            };
            tracing::debug!(
                request = spec.name,
                attempt = number,
                elapsed_ms = elapsed_ms(started),
                "{what}"
            );
            failure
        })?;
        let status = response.status();
        let headers = response.headers().clone();
        let body = response.bytes().await.map_err(network)?;
        tracing::debug!(
            request = spec.name,
            status = status.as_u16(),
            attempt = number,
            elapsed_ms = elapsed_ms(started),
            "forge request"
        );
        let not_modified = status == StatusCode::NOT_MODIFIED && spec.if_none_match.is_some();
        if status.is_success() || not_modified {
            return Ok(Answer {
                status,
                headers,
                body,
            });
        }
        Err(self.classify(spec.name, status, &headers, &body))
    }

    /// Turns an unsuccessful status into a final or retryable failure.
    fn classify(
        &self,
        name: &str,
        status: StatusCode,
        headers: &HeaderMap,
        body: &[u8],
    ) -> Failure {
        let request = name.to_owned();
        let message = self.scrub(&error_message(status, body));
        let retry_after = header_secs(headers, RETRY_AFTER.as_str()).map(Duration::from_secs);
        match status.as_u16() {
            401 => Failure::Fatal(ForgeError::Unauthorized {
                request,
                hint: format!(
                    "the token from {} is invalid, expired or revoked; {}",
                    self.token.source(),
                    self.api.flavor.unauthorized_hint()
                ),
            }),
            403 | 429 => {
                let rate_limited = status == StatusCode::TOO_MANY_REQUESTS
                    || retry_after.is_some()
                    || exhausted(self.api.flavor, headers)
                    || message.to_ascii_lowercase().contains("rate limit");
                if rate_limited {
                    rate_limit_failure(self.api.flavor, request, headers, retry_after)
                } else {
                    Failure::Fatal(ForgeError::Forbidden { request, message })
                }
            }
            404 => Failure::Fatal(ForgeError::NotFound { request, message }),
            500..=599 => Failure::Retry {
                error: ForgeError::Http {
                    request,
                    status: status.as_u16(),
                    message,
                },
                after: retry_after,
                rejected: false,
            },
            code => Failure::Fatal(ForgeError::Http {
                request,
                status: code,
                message,
            }),
        }
    }

    /// Masks the token in text that came from the forge.
    pub(super) fn scrub(&self, text: &str) -> String {
        let secret = self.token.expose();
        if secret.is_empty() {
            text.to_owned()
        } else {
            text.replace(secret, "***")
        }
    }
}

/// The forge's `message` (GitLab's may be an object of field errors), else
/// GitLab's OAuth-style `error` with its `error_description`, else the start
/// of the body, else the status reason.
pub(super) fn error_message(status: StatusCode, body: &[u8]) -> String {
    #[derive(Deserialize)]
    struct Wire {
        message: Option<serde_json::Value>,
        error: Option<String>,
        error_description: Option<String>,
    }
    if let Ok(wire) = serde_json::from_slice::<Wire>(body) {
        match wire.message {
            Some(serde_json::Value::String(m)) if !m.trim().is_empty() => return m,
            Some(serde_json::Value::Null | serde_json::Value::String(_)) | None => {}
            Some(other) => return cut(&other.to_string()),
        }
        if let Some(error) = wire.error.filter(|e| !e.trim().is_empty()) {
            return match wire.error_description {
                Some(description) => cut(&format!("{error}: {description}")),
                None => cut(&error),
            };
        }
    }
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.is_empty() {
        return status.canonical_reason().unwrap_or("no message").to_owned();
    }
    cut(text)
}

/// At most 200 characters of `text`, with `…` when cut.
fn cut(text: &str) -> String {
    let cut: String = text.chars().take(200).collect();
    if cut.len() < text.len() {
        format!("{cut}…")
    } else {
        cut
    }
}

pub(crate) fn decode_json<T: DeserializeOwned>(name: &str, body: &[u8]) -> Result<T> {
    serde_json::from_slice(body).map_err(|err| ForgeError::Decode {
        request: name.to_owned(),
        message: err.to_string(),
    })
}

fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}
