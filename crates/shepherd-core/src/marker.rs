//! The hidden marker Shepherd puts in every reply it posts.
//!
//! Shepherd recognizes its own replies by this marker, never by login: it may
//! run as the same account as a reviewer. The format is one HTML comment,
//! invisible in rendered Markdown:
//!
//! ```text
//! <!-- shepherd:reply v=1 item=PRRT_kwDOAbc round=3 resolve=yes outcome=fixed -->
//! ```
//!
//! - `item` is the id of the item replied to (review thread, or top-level comment);
//!   it is made of `[A-Za-z0-9_.:-]`, at most 200 characters.
//! - `round` is the round number (1-based) that posted the reply.
//! - `resolve` is `yes` when the honesty gate authorized resolving the thread.
//! - `outcome` (optional; replies of earlier versions lack it) is the item's
//!   [`Outcome`] as the reply states it (`fixed`, `needs-human`, …). A later
//!   run with no state of its own reads it back, so a thread handed to a
//!   person is still known to wait for one ([`crate::classify`]).
//!
//! Keys appear in this order, separated by single spaces. Anything else is not a
//! marker, so a near miss never counts as Shepherd's.
//!
//! **Whose marker counts.** A marker is plain text: anyone who can comment
//! can paste one. It counts only in a comment written by the viewer (the
//! account Shepherd posts as, compared by login): [`Marker::find_own`].
//! Anywhere else it is an ordinary comment's text: it never hides feedback,
//! never authorizes a resolve, never enters the ledger. Shepherd may run as
//! the same account as a reviewer, so the marker is still what tells its
//! replies from that person's comments.
//!
//! **Length.** A forge caps comment bodies ([`ForgeKind::comment_body_limit`]);
//! [`Marker::append_within`] cuts an overlong reply with a visible note and
//! keeps the marker intact.

use serde::{Deserialize, Serialize};

use crate::ledger::Outcome;
use crate::model::{Author, ForgeKind};

/// A parsed marker.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Marker {
    /// The item the reply belongs to.
    pub item: String,
    /// The round that posted it.
    pub round: u32,
    /// Whether resolving the thread was authorized when the reply was posted.
    pub resolve_authorized: bool,
    /// The item's outcome as the reply states it; `None` in a marker of an
    /// earlier version, which did not say.
    pub outcome: Option<Outcome>,
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
            outcome: None,
        }
    }

    /// This marker, stating the item's `outcome`.
    pub fn with_outcome(self, outcome: Outcome) -> Self {
        Marker {
            outcome: Some(outcome),
            ..self
        }
    }

    /// The marker's text, to append to a reply body.
    pub fn render(&self) -> String {
        let outcome = self
            .outcome
            .map(|o| format!(" outcome={}", o.as_str()))
            .unwrap_or_default();
        format!(
            "{PREFIX}item={} round={} resolve={}{outcome}{SUFFIX}",
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

    /// The marker of a comment that is Shepherd's own: the comment's last
    /// well-formed marker, when `author` is the viewer. A marker in anyone
    /// else's comment is not Shepherd's (see the module docs).
    pub fn find_own(body: &str, author: Option<&Author>, viewer: &str) -> Option<Marker> {
        if is_viewer(author, viewer) {
            Self::find(body)
        } else {
            None
        }
    }

    /// Whether a comment by `author` is Shepherd's own reply to `item`.
    pub fn is_own_for(body: &str, author: Option<&Author>, viewer: &str, item: &str) -> bool {
        Self::find_own(body, author, viewer).is_some_and(|m| m.item == item)
    }

    /// [`Self::append_to`], cut to at most `limit` characters: a body too
    /// long for the forge keeps its beginning, then a visible note
    /// `… (truncated: N characters omitted)` (N counts the characters of
    /// `body` left out), then the marker, intact. A code fence or an HTML
    /// comment left open by the cut is closed first, so the note shows. A
    /// `limit` too small for the marker and the note alone gives the marker
    /// and the note with nothing of the body.
    pub fn append_within(&self, body: &str, limit: usize) -> String {
        let full = self.append_to(body);
        if full.chars().count() <= limit {
            return full;
        }
        let body = body.trim_end();
        let total = body.chars().count();
        let marker = self.render();
        let mut keep = limit.min(total);
        loop {
            let cut = body.char_indices().nth(keep).map_or(body.len(), |(i, _)| i);
            let kept = &body[..cut];
            let omitted = total - keep;
            let out = format!(
                "{kept}{}\n\n\u{2026} (truncated: {omitted} characters omitted)\n\n{marker}",
                closers(kept)
            );
            let len = out.chars().count();
            if len <= limit || keep == 0 {
                return out;
            }
            keep = keep.saturating_sub(len - limit);
        }
    }

    fn parse_at(text: &str) -> Option<Marker> {
        let rest = text.strip_prefix(PREFIX)?;
        let end = rest.find(SUFFIX)?;
        let inner = &rest[..end];
        let mut parts = inner.split(' ');
        let item = parts.next()?.strip_prefix("item=")?;
        let round = parts.next()?.strip_prefix("round=")?;
        let resolve = parts.next()?.strip_prefix("resolve=")?;
        let outcome = match parts.next() {
            None => None,
            Some(part) => Some(Outcome::from_name(part.strip_prefix("outcome=")?)?),
        };
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
            outcome,
        })
    }
}

/// Logins compare case-insensitively, as on both forges. An empty viewer
/// (unknown) matches nobody, nor does a deleted account.
pub fn is_viewer(author: Option<&Author>, viewer: &str) -> bool {
    !viewer.is_empty() && author.is_some_and(|a| a.login.eq_ignore_ascii_case(viewer))
}

impl ForgeKind {
    /// The most characters a comment body may have: GitHub 65,536; GitLab
    /// (notes) 1,000,000.
    pub fn comment_body_limit(self) -> usize {
        self.spec().comment_body_limit
    }
}

/// What closes the constructs `text` leaves open, so that what follows is
/// rendered: a fenced code block (```` ``` ```` or `~~~`, closed by a
/// line of at least as many of the same character) and an HTML comment.
fn closers(text: &str) -> String {
    let mut fence: Option<(char, usize)> = None;
    for line in text.lines() {
        let line = line.trim_start();
        let Some(ch) = line.chars().next().filter(|c| matches!(c, '`' | '~')) else {
            continue;
        };
        let run = line.chars().take_while(|&c| c == ch).count();
        match fence {
            None if run >= 3 => fence = Some((ch, run)),
            Some((open, n)) if open == ch && run >= n && line[run..].trim().is_empty() => {
                fence = None;
            }
            _ => {}
        }
    }
    let mut out = String::new();
    if let Some((ch, n)) = fence {
        out.push('\n');
        out.extend(std::iter::repeat_n(ch, n));
    } else if text
        .rfind("<!--")
        .is_some_and(|open| !text[open..].contains("-->"))
    {
        out.push_str(" -->");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

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
    fn the_outcome_round_trips_and_an_earlier_marker_has_none() {
        for outcome in Outcome::ALL {
            let m = Marker::new("T1", 2, false).with_outcome(outcome);
            let body = m.append_to("Handed to a person.");
            assert!(
                body.ends_with(&format!("resolve=no outcome={outcome} -->")),
                "{body}"
            );
            assert_eq!(Marker::find(&body), Some(m));
        }
        let earlier = "<!-- shepherd:reply v=1 item=T1 round=2 resolve=no -->";
        assert_eq!(Marker::find(earlier), Some(Marker::new("T1", 2, false)));
    }

    #[test]
    fn near_misses_are_not_markers() {
        for body in [
            "<!-- shepherd:reply v=1 item=X round=1 resolve=no outcome=maybe -->",
            "<!-- shepherd:reply v=1 item=X round=1 resolve=no outcome= -->",
            "<!-- shepherd:reply v=1 item=X round=1 resolve=no outcome=fixed extra=1 -->",
            "<!-- shepherd:reply v=1 item=X round=1 resolve=no result=fixed -->",
            "<!-- shepherd:reply v=1 item=X round=1 outcome=fixed resolve=no -->",
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

    fn author(login: &str) -> Author {
        Author {
            login: login.to_owned(),
            kind: crate::model::AuthorKind::User,
        }
    }

    #[test]
    fn only_the_viewers_markers_are_its_own() {
        let body = Marker::new("T1", 2, true).append_to("Fixed.");
        let own = Marker::find_own(&body, Some(&author("Shep")), "shep");
        assert_eq!(own, Some(Marker::new("T1", 2, true)), "logins ignore case");
        assert!(Marker::is_own_for(
            &body,
            Some(&author("shep")),
            "shep",
            "T1"
        ));
        assert!(!Marker::is_own_for(
            &body,
            Some(&author("shep")),
            "shep",
            "T2"
        ));
        for (who, viewer) in [
            (Some(author("mallory")), "shep"),
            (Some(author("review-bot")), "shep"),
            (None, "shep"),
            (Some(author("shep")), ""),
        ] {
            assert_eq!(
                Marker::find_own(&body, who.as_ref(), viewer),
                None,
                "{who:?}"
            );
            assert!(!Marker::is_own_for(&body, who.as_ref(), viewer, "T1"));
        }
    }

    #[test]
    fn a_short_reply_is_not_cut() {
        let m = Marker::new("T1", 1, false);
        assert_eq!(m.append_within("Fixed.  \n", 100), m.append_to("Fixed."));
        let exact = m.append_to("abc");
        let limit = exact.chars().count();
        assert_eq!(m.append_within("abc", limit), exact);
        assert_ne!(m.append_within("abc", limit - 1), exact);
    }

    #[test]
    fn the_reported_reply_fits_githubs_limit() {
        // The reply of issue 11: 70,165 characters.
        let body = "x".repeat(70_165);
        let m = Marker::new("PRRT_kwDOAbc", 3, true);
        let limit = ForgeKind::GitHub.comment_body_limit();
        let out = m.append_within(&body, limit);
        assert_eq!(out.chars().count(), limit, "as much as fits is kept");
        assert_eq!(Marker::find(&out), Some(m.clone()));
        assert!(out.ends_with(&m.render()));
        let kept = out.find('\n').unwrap();
        let omitted = 70_165 - kept;
        assert!(out.contains(&format!(
            "\u{2026} (truncated: {omitted} characters omitted)"
        )));
        assert_eq!(
            m.append_within(&body, ForgeKind::GitLab.comment_body_limit()),
            m.append_to(&body)
        );
    }

    #[test]
    fn a_cut_closes_an_open_fence_or_comment() {
        let m = Marker::new("T1", 1, false);
        let body = format!(
            "See:\n\n````rust\n{}\n````\nafter",
            "let x = 1;\n".repeat(50)
        );
        let out = m.append_within(&body, 400);
        assert!(out.chars().count() <= 400);
        let note = out.find("\u{2026} (truncated").unwrap();
        assert!(out[..note].trim_end().ends_with("\n````"), "{out}");
        assert_eq!(closers("```\na\n```\n``"), "", "a fence is three or more");
        assert_eq!(closers("```\na\n```\n~~~"), "\n~~~");
        assert_eq!(
            closers("~~~~\n~~~\n"),
            "\n~~~~",
            "a shorter run does not close"
        );
        assert_eq!(closers("x <!-- hidden"), " -->");
        assert_eq!(closers("x <!-- a --> b"), "");
    }

    #[test]
    fn a_tiny_limit_keeps_the_marker() {
        let m = Marker::new("T1", 1, false);
        let out = m.append_within("some long reply", 5);
        assert_eq!(Marker::find(&out), Some(m));
        assert!(out.contains("(truncated: 15 characters omitted)"));
    }

    fn item_id() -> impl Strategy<Value = String> {
        "[A-Za-z0-9_.:-]{1,200}"
    }

    proptest! {
        #[test]
        fn a_reply_always_fits_and_keeps_its_marker(
            body in prop_oneof![
                ".{0,400}",
                "(```|~~~|<!--|-->|\\n|[a-z\u{e9}\u{1F600} ]){0,300}",
                "<!-- shepherd:reply v=1 item=X round=1 resolve=(yes|no) -->.{0,100}",
            ],
            repeat in 1..40usize,
            item in item_id(),
            round in 1..1000u32,
            resolve in any::<bool>(),
            outcome in proptest::option::of(proptest::sample::select(Outcome::ALL.to_vec())),
            extra in 0..2000usize,
        ) {
            let body = body.repeat(repeat);
            let m = Marker::new(item, round, resolve);
            let m = match outcome {
                Some(o) => m.with_outcome(o),
                None => m,
            };
            // Room for the marker and the longest note, and some of the body.
            let limit = m.render().chars().count() + 60 + extra;
            let out = m.append_within(&body, limit);
            let full = m.append_to(&body);
            prop_assert!(out.chars().count() <= limit, "{} > {limit}", out.chars().count());
            prop_assert_eq!(Marker::find(&out), Some(m.clone()));
            prop_assert!(out.ends_with(&m.render()));
            if full.chars().count() <= limit {
                prop_assert_eq!(out, full);
            } else {
                let at = out.rfind("\n\n\u{2026} (truncated: ").unwrap();
                let note = &out[at + "\n\n\u{2026} (truncated: ".len()..];
                let omitted: usize = note[..note.find(' ').unwrap()].parse().unwrap();
                let expected = format!("{omitted} characters omitted)\n\n");
                prop_assert!(note.starts_with(&expected));
                let trimmed = body.trim_end();
                let total = trimmed.chars().count();
                prop_assert!(omitted > 0 && omitted <= total);
                // What is kept is the body's beginning, then what closes it.
                let kept: String = trimmed.chars().take(total - omitted).collect();
                prop_assert!(out.starts_with(&kept));
                prop_assert_eq!(&out[kept.len()..at], closers(&kept));
            }
        }
    }
}
