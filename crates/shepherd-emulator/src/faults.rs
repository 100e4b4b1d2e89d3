//! Faults: per REST route or GraphQL operation, a call that fails, waits, is
//! rate-limited, or succeeds and then answers 502.
//!
//! Each fault counts the calls to its target from when it was set; a call
//! that matches several faults applies each whose trigger fires (delays add
//! up; the first fault that answers decides the answer).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use crate::automation::{canonical_target, FaultEffect, FaultSpec};

/// A fault with its counters.
#[derive(Debug, Clone)]
struct ActiveFault {
    id: u64,
    spec: FaultSpec,
    canonical: String,
    calls: u64,
    fired: u64,
    rng: u64,
}

/// The faults of one emulator.
#[derive(Debug, Default)]
pub(crate) struct FaultRegistry {
    next_id: u64,
    faults: Vec<ActiveFault>,
}

/// What the faults decided for one call.
#[derive(Debug, Clone, Default)]
pub(crate) struct Decision {
    /// Wait this long first.
    pub(crate) delay: Duration,
    /// Then answer this instead of serving the call (or, for
    /// `commit_then_fail`, after serving it).
    pub(crate) answer: Option<FaultSpec>,
}

impl FaultRegistry {
    /// Adds a validated fault; returns its id.
    pub(crate) fn add(&mut self, spec: FaultSpec) -> Result<u64, String> {
        spec.validate()?;
        self.next_id += 1;
        let id = self.next_id;
        // splitmix64 wants a non-trivial state; mix the seed.
        let rng = spec.seed.unwrap_or(0) ^ 0x9e37_79b9_7f4a_7c15;
        self.faults.push(ActiveFault {
            id,
            canonical: spec.canonical_target(),
            spec,
            calls: 0,
            fired: 0,
            rng,
        });
        Ok(id)
    }

    /// Removes fault `id`; whether it existed.
    pub(crate) fn remove(&mut self, id: u64) -> bool {
        let before = self.faults.len();
        self.faults.retain(|f| f.id != id);
        self.faults.len() != before
    }

    /// Removes every fault.
    pub(crate) fn clear(&mut self) {
        self.faults.clear();
    }

    /// Counts a call to `key` (a request-count key) and decides its fate.
    pub(crate) fn on_call(&mut self, key: &str) -> Decision {
        let key = canonical_target(key);
        let mut decision = Decision::default();
        for fault in self.faults.iter_mut().filter(|f| f.canonical == key) {
            fault.calls += 1;
            let fires = if let Some(n) = fault.spec.nth {
                fault.calls == n
            } else if fault.spec.every {
                true
            } else {
                let p = fault.spec.probability.unwrap_or(0.0);
                next_unit(&mut fault.rng) < p
            };
            if !fires {
                continue;
            }
            fault.fired += 1;
            match fault.spec.effect {
                FaultEffect::Delay => {
                    decision.delay += Duration::from_millis(fault.spec.delay_ms.unwrap_or(0));
                }
                _ if decision.answer.is_none() => decision.answer = Some(fault.spec.clone()),
                _ => {}
            }
        }
        decision
    }

    /// The faults with their counters, for the state dump.
    pub(crate) fn to_json(&self) -> Value {
        Value::Array(
            self.faults
                .iter()
                .map(|f| {
                    let mut value = serde_json::to_value(&f.spec).unwrap_or(Value::Null);
                    if let Some(object) = value.as_object_mut() {
                        object.insert("id".into(), json!(f.id));
                        object.insert("calls".into(), json!(f.calls));
                        object.insert("fired".into(), json!(f.fired));
                    }
                    value
                })
                .collect(),
        )
    }
}

/// splitmix64, as a float in `[0, 1)`.
fn next_unit(state: &mut u64) -> f64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

/// Which API a faulted call belongs to: its errors take that API's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ApiFlavor {
    /// GitHub's REST API.
    Rest,
    /// GitHub's GraphQL API.
    Graphql,
    /// GitLab's REST API v4.
    GitLab,
}

/// The answer of a fault that replaces the call (`status`, `graphql_error`,
/// `rate_limit`), or the 502 of `commit_then_fail`.
pub(crate) fn response(spec: &FaultSpec, flavor: ApiFlavor) -> Response {
    match spec.effect {
        FaultEffect::Status | FaultEffect::Delay => {
            let status = spec
                .status
                .and_then(|s| StatusCode::from_u16(s).ok())
                .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            match &spec.body {
                Some(body) => {
                    let content_type = if serde_json::from_str::<Value>(body).is_ok() {
                        "application/json; charset=utf-8"
                    } else {
                        "text/plain; charset=utf-8"
                    };
                    (
                        status,
                        [(axum::http::header::CONTENT_TYPE, content_type)],
                        body.clone(),
                    )
                        .into_response()
                }
                None => {
                    let message = spec
                        .message
                        .clone()
                        .unwrap_or_else(|| status.canonical_reason().unwrap_or("Error").to_owned());
                    error_json(status, &message, flavor)
                }
            }
        }
        FaultEffect::GraphqlError => {
            let message = spec.message.clone().unwrap_or_else(|| {
                "Something went wrong while executing your query. This may be the result of a timeout, or it could be a GitHub bug.".to_owned()
            });
            let mut error = json!({ "message": message });
            if let Some(kind) = &spec.error_type {
                error["type"] = json!(kind);
            }
            Json(json!({ "data": null, "errors": [error] })).into_response()
        }
        FaultEffect::RateLimit if flavor == ApiFlavor::GitLab => gitlab_rate_limited(spec),
        FaultEffect::RateLimit => rate_limited(spec, flavor == ApiFlavor::Graphql),
        FaultEffect::CommitThenFail => error_json(StatusCode::BAD_GATEWAY, "Server Error", flavor),
    }
}

fn error_json(status: StatusCode, message: &str, flavor: ApiFlavor) -> Response {
    if flavor == ApiFlavor::GitLab {
        // GitLab's shape: `{"message": "502 Bad Gateway"}`.
        let reason = status.canonical_reason().unwrap_or("Error");
        let text = if message == "Server Error" || message == reason {
            format!("{} {reason}", status.as_u16())
        } else {
            format!("{} {message}", status.as_u16())
        };
        return (status, Json(json!({ "message": text }))).into_response();
    }
    (
        status,
        Json(json!({
            "message": message,
            "documentation_url": "https://docs.github.com/rest",
            "status": status.as_u16().to_string(),
        })),
    )
        .into_response()
}

/// GitLab's rate limit (Rack::Attack): 429 (or the fault's 403),
/// `Retry later`, `Retry-After` and the `RateLimit-*` headers.
fn gitlab_rate_limited(spec: &FaultSpec) -> Response {
    let status = spec
        .status
        .and_then(|s| StatusCode::from_u16(s).ok())
        .unwrap_or(StatusCode::TOO_MANY_REQUESTS);
    let retry_after = spec.retry_after_secs.unwrap_or(1);
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let body = spec
        .message
        .clone()
        .unwrap_or_else(|| "Retry later\n".to_owned());
    let mut response = (
        status,
        [(
            axum::http::header::CONTENT_TYPE,
            "text/plain; charset=utf-8",
        )],
        body,
    )
        .into_response();
    let headers = response.headers_mut();
    for (name, value) in [
        ("retry-after", retry_after.to_string()),
        ("ratelimit-name", "throttle_authenticated_api".to_owned()),
        ("ratelimit-limit", "2000".to_owned()),
        ("ratelimit-observed", "2000".to_owned()),
        ("ratelimit-remaining", "0".to_owned()),
        ("ratelimit-reset", (now + retry_after).to_string()),
    ] {
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.insert(HeaderName::from_static(name), value);
        }
    }
    response
}

fn rate_limited(spec: &FaultSpec, graphql: bool) -> Response {
    let status = spec
        .status
        .and_then(|s| StatusCode::from_u16(s).ok())
        .unwrap_or(StatusCode::FORBIDDEN);
    let retry_after = spec.retry_after_secs.unwrap_or(1);
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let message = spec.message.clone().unwrap_or_else(|| {
        if status == StatusCode::TOO_MANY_REQUESTS {
            "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.".to_owned()
        } else {
            "API rate limit exceeded for user ID 1.".to_owned()
        }
    });
    let mut response = (
        status,
        Json(json!({
            "message": message,
            "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
        })),
    )
        .into_response();
    let headers = response.headers_mut();
    let resource = if graphql { "graphql" } else { "core" };
    for (name, value) in [
        ("retry-after", retry_after.to_string()),
        ("x-ratelimit-limit", "5000".to_owned()),
        ("x-ratelimit-remaining", "0".to_owned()),
        ("x-ratelimit-used", "5000".to_owned()),
        ("x-ratelimit-reset", (now + retry_after).to_string()),
        ("x-ratelimit-resource", resource.to_owned()),
    ] {
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.insert(HeaderName::from_static(name), value);
        }
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPLIES: &str = "POST /repos/{owner}/{repo}/pulls/{number}/comments/{comment_id}/replies";

    #[test]
    fn nth_fires_once_counting_from_when_set() {
        let mut faults = FaultRegistry::default();
        faults
            .add(FaultSpec::nth(
                "POST /repos/{o}/{r}/pulls/{n}/comments/{id}/replies",
                2,
            ))
            .unwrap();
        assert!(faults.on_call(REPLIES).answer.is_none());
        assert!(faults.on_call("GET /user").answer.is_none());
        assert!(faults.on_call(REPLIES).answer.is_some());
        assert!(faults.on_call(REPLIES).answer.is_none());
        let dump = faults.to_json();
        assert_eq!(dump[0]["calls"], 3);
        assert_eq!(dump[0]["fired"], 1);
    }

    #[test]
    fn delays_add_up_and_the_first_answer_wins() {
        let mut faults = FaultRegistry::default();
        faults
            .add(FaultSpec::every("GET /user").with_delay(5))
            .unwrap();
        faults
            .add(FaultSpec::every("GET /user").with_delay(7))
            .unwrap();
        faults
            .add(FaultSpec::every("GET /user").with_status(503, None))
            .unwrap();
        faults
            .add(FaultSpec::every("GET /user").with_status(500, None))
            .unwrap();
        let decision = faults.on_call("GET /user");
        assert_eq!(decision.delay, Duration::from_millis(12));
        assert_eq!(decision.answer.unwrap().status, Some(503));
    }

    #[test]
    fn probability_is_repeatable_with_a_seed() {
        let run = |seed| {
            let mut faults = FaultRegistry::default();
            faults
                .add(FaultSpec::probability("graphql:X", 0.5, seed))
                .unwrap();
            (0..64)
                .map(|_| faults.on_call("graphql:X").answer.is_some())
                .collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
        let fired = run(7).into_iter().filter(|f| *f).count();
        assert!((16..=48).contains(&fired), "{fired}");
    }

    #[test]
    fn removal_and_clear() {
        let mut faults = FaultRegistry::default();
        let id = faults.add(FaultSpec::every("GET /user")).unwrap();
        assert!(faults.remove(id));
        assert!(!faults.remove(id));
        faults.add(FaultSpec::every("GET /user")).unwrap();
        faults.clear();
        assert!(faults.on_call("GET /user").answer.is_none());
    }
}
