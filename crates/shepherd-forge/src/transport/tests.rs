//! The transport's header readers and failure classification.
#![allow(clippy::unwrap_used)] // a panic is how a test fails

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::header::{HeaderMap, HeaderValue};
use reqwest::StatusCode;

use super::exchange::error_message;
use super::flavor::Flavor;
use super::limits::{rate_limit_failure, SECONDARY_LIMIT_WAIT};
use super::pages::{last_page, next_link};
use super::request::Failure;
use crate::error::ForgeError;

fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (k, v) in pairs {
        map.insert(*k, HeaderValue::from_str(v).unwrap());
    }
    map
}

#[test]
fn last_page_reads_the_page_of_rel_last() {
    let h = headers(&[(
        "link",
        "<https://api.github.com/x?per_page=100&page=2>; rel=\"next\", \
         <https://api.github.com/x?per_page=100&page=207>; rel=\"last\"",
    )]);
    assert_eq!(last_page(&h), Some(207));
    let h = headers(&[("link", "<https://api.github.com/x?page=1>; rel=\"prev\"")]);
    assert_eq!(last_page(&h), None);
    assert_eq!(last_page(&HeaderMap::new()), None);
}

#[test]
fn next_link_finds_rel_next() {
    let h = headers(&[(
        "link",
        "<https://api.github.com/x?page=2>; rel=\"next\", <https://api.github.com/x?page=5>; rel=\"last\"",
    )]);
    assert_eq!(
        next_link(&h).unwrap().as_str(),
        "https://api.github.com/x?page=2"
    );
    let h = headers(&[("link", "<https://api.github.com/x?page=1>; rel=\"prev\"")]);
    assert!(next_link(&h).is_none());
}

#[test]
fn error_message_prefers_the_forge_message() {
    let body = br#"{"message":"Bad credentials","documentation_url":"x"}"#;
    assert_eq!(
        error_message(StatusCode::UNAUTHORIZED, body),
        "Bad credentials"
    );
    assert_eq!(error_message(StatusCode::BAD_GATEWAY, b""), "Bad Gateway");
    let long = "x".repeat(500);
    assert_eq!(
        error_message(StatusCode::BAD_GATEWAY, long.as_bytes())
            .chars()
            .count(),
        201
    );
}

#[test]
fn primary_limit_waits_until_the_reset() {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let reset = (now + 30).to_string();
    let h = headers(&[
        ("x-ratelimit-remaining", "0"),
        ("x-ratelimit-reset", &reset),
    ]);
    let Failure::Retry {
        after: Some(wait),
        error,
        ..
    } = rate_limit_failure(Flavor::GitHub, "r".into(), &h, None)
    else {
        panic!("expected a retry")
    };
    assert!((29..=32).contains(&wait.as_secs()), "{wait:?}");
    assert!(matches!(
        error,
        ForgeError::RateLimited {
            reset_at: Some(_),
            ..
        }
    ));
}

#[test]
fn retry_after_wins_and_secondary_defaults_to_a_minute() {
    let h = headers(&[]);
    let Failure::Retry { after, .. } =
        rate_limit_failure(Flavor::GitHub, "r".into(), &h, Some(Duration::from_secs(3)))
    else {
        panic!("expected a retry")
    };
    assert_eq!(after, Some(Duration::from_secs(3)));
    let Failure::Retry { after, .. } = rate_limit_failure(Flavor::GitHub, "r".into(), &h, None)
    else {
        panic!("expected a retry")
    };
    assert_eq!(after, Some(SECONDARY_LIMIT_WAIT));
}
