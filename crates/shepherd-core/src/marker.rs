//! The hidden marker Shepherd puts in every reply it posts.
//!
//! Shepherd recognizes its own replies by this marker, never by login: it may
//! run as the same account as a reviewer. The format is one HTML comment,
//! invisible in rendered Markdown:
//!
//! ```text
//! <!-- shepherd:reply v=1 item=PRRT_kwDOAbc round=3 resolve=yes -->
//! ```
//!
//! - `item` is the id of the item replied to (review thread, or top-level comment);
//!   it is made of `[A-Za-z0-9_.:-]`, at most 200 characters.
//! - `round` is the round number (1-based) that posted the reply.
//! - `resolve` is `yes` when the honesty gate authorized resolving the thread.
//!
//! Keys appear in this order, separated by single spaces. Anything else is not a
//! marker, so a near miss never counts as Shepherd's.

use serde::{Deserialize, Serialize};

/// A parsed marker.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Marker {
    /// The item the reply belongs to.
    pub item: String,
    /// The round that posted it.
    pub round: u32,
    /// Whether resolving the thread was authorized when the reply was posted.
    pub resolve_authorized: bool,
}

const PREFIX: &str = "<!-- shepherd:reply v=1 ";
const SUFFIX: &str = " -->";
const MAX_ID_LEN: usize = 200;

/// Whether `id` may appear in a marker.
pub fn is_valid_item_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_ID_LEN
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':' | b'-'))
}

impl Marker {
    /// A marker for a reply to `item` posted in `round`.
    pub fn new(item: impl Into<String>, round: u32, resolve_authorized: bool) -> Self {
        Marker {
            item: item.into(),
            round,
            resolve_authorized,
        }
    }

    /// The marker's text, to append to a reply body.
    pub fn render(&self) -> String {
        format!(
            "{PREFIX}item={} round={} resolve={}{SUFFIX}",
            self.item,
            self.round,
            if self.resolve_authorized { "yes" } else { "no" }
        )
    }

    /// Append this marker to a reply body, on its own line.
    pub fn append_to(&self, body: &str) -> String {
        let body = body.trim_end();
        format!("{body}\n\n{}", self.render())
    }

    /// Find the last well-formed marker in `body`, if any.
    pub fn find(body: &str) -> Option<Marker> {
        body.match_indices(PREFIX)
            .filter_map(|(start, _)| Self::parse_at(&body[start..]))
            .last()
    }

    /// Whether `body` carries a marker for `item`.
    pub fn is_for(body: &str, item: &str) -> bool {
        Self::find(body).is_some_and(|m| m.item == item)
    }

    fn parse_at(text: &str) -> Option<Marker> {
        let rest = text.strip_prefix(PREFIX)?;
        let end = rest.find(SUFFIX)?;
        let inner = &rest[..end];
        let mut parts = inner.split(' ');
        let item = parts.next()?.strip_prefix("item=")?;
        let round = parts.next()?.strip_prefix("round=")?;
        let resolve = parts.next()?.strip_prefix("resolve=")?;
        if parts.next().is_some() || !is_valid_item_id(item) {
            return None;
        }
        if round.is_empty() || !round.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let round: u32 = round.parse().ok()?;
        let resolve_authorized = match resolve {
            "yes" => true,
            "no" => false,
            _ => return None,
        };
        Some(Marker {
            item: item.to_owned(),
            round,
            resolve_authorized,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let m = Marker::new("PRRT_kwDOAbc-12_x", 3, true);
        let body = m.append_to("Fixed in abc123.");
        assert_eq!(Marker::find(&body), Some(m.clone()));
        assert!(body.starts_with("Fixed in abc123.\n\n<!-- shepherd:reply v=1 item=PRRT_kwDOAbc-12_x round=3 resolve=yes -->"));
        assert!(Marker::is_for(&body, "PRRT_kwDOAbc-12_x"));
        assert!(!Marker::is_for(&body, "PRRT_other"));
    }

    #[test]
    fn near_misses_are_not_markers() {
        for body in [
            "<!-- shepherd:reply v=1 item=X round=1 -->",
            "<!-- shepherd:reply v=2 item=X round=1 resolve=no -->",
            "<!-- shepherd:reply v=1 item=X round=one resolve=no -->",
            "<!-- shepherd:reply v=1 item=X round=1 resolve=maybe -->",
            "<!-- shepherd:reply v=1 item=X round=1 resolve=no extra=1 -->",
            "<!-- shepherd:reply v=1 item=X Y round=1 resolve=no -->",
            "<!-- shepherd:reply v=1 item= round=1 resolve=no -->",
            "<!-- shepherd:reply v=1 item=a<b round=1 resolve=no -->",
            "<!-- shepherd:reply v=1 item=X round=1 resolve=no",
            "<!-- shepherd:reply v=1 item=X round=-1 resolve=no -->",
            "shepherd:reply v=1 item=X round=1 resolve=no",
        ] {
            assert_eq!(Marker::find(body), None, "{body}");
        }
    }

    #[test]
    fn the_last_marker_wins() {
        let body = format!(
            "{}\nquoted\n{}",
            Marker::new("A", 1, false).render(),
            Marker::new("B", 2, true).render()
        );
        assert_eq!(Marker::find(&body), Some(Marker::new("B", 2, true)));
    }

    #[test]
    fn item_ids() {
        assert!(is_valid_item_id("PRRT_kwDOAbc"));
        assert!(is_valid_item_id("6b1a2f3e4d"));
        assert!(is_valid_item_id("note:123"));
        assert!(!is_valid_item_id(""));
        assert!(!is_valid_item_id("a b"));
        assert!(!is_valid_item_id(&"x".repeat(201)));
    }
}
