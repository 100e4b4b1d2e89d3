//! What Shepherd's replies say: the one place a reply's words are composed.
//!
//! Every stage that decides what an item's reply says describes it as a
//! [`Said`] (a reply-only decision, a fix and its commit, a pull-request
//! edit, a fix that could not be made, …); [`Said::text`] writes the words,
//! and [`body`] makes the comment the forge gets: addressed to the author
//! of a top-level comment (which has no thread to reply in), with the
//! hidden [`Marker`] appended and cut to the forge's limit.
//!
//! The words are Shepherd's own or the agent's; neither quotes a comment
//! body, a local path or a tool's output (those stay in the run's local
//! records).

use crate::ledger::Decision;
use crate::marker::Marker;
use crate::model::Author;

/// What an item's reply says, before it is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Said<'a> {
    /// A reply-only decision (`question`, `wontfix`, `already-addressed`,
    /// `invalid`, `needs-human`): the approver's text when one wrote it,
    /// else triage's hint when the decision is still triage's (`hint` is
    /// `None` otherwise), else the decision's default sentence.
    Decided {
        /// The decision the reply states.
        decision: Decision,
        /// What a person wrote at approval.
        approver: Option<&'a str>,
        /// Triage's draft, for triage's own decision.
        hint: Option<&'a str>,
    },
    /// Fixed by `commit`: the fixer's words, then the commit.
    Fixed {
        /// The fixer's reply.
        text: &'a str,
        /// The commit that fixes it.
        commit: &'a str,
    },
    /// Fixed by a commit an earlier run pushed, whose reply was lost.
    FixedEarlier,
    /// The pull request edited (title, description, labels): the fixer's
    /// words, then what Shepherd changed.
    Edited {
        /// The fixer's reply.
        text: &'a str,
        /// What the edit did, in one sentence.
        edit: &'a str,
    },
    /// Not fixed, for `why`: handed to a maintainer.
    NotFixed {
        /// Why, naming nothing the thread is not about.
        why: &'a str,
    },
}

impl Said<'_> {
    /// The reply's words.
    pub fn text(&self) -> String {
        match *self {
            Said::Decided {
                decision,
                approver,
                hint,
            } => match (approver, hint) {
                (Some(text), _) => text.to_owned(),
                (None, Some(hint)) if !hint.trim().is_empty() => hint.to_owned(),
                _ => default_for(decision).to_owned(),
            },
            Said::Fixed { text, commit } => format!("{}\n\nFixed in {commit}.", text.trim_end()),
            Said::FixedEarlier => {
                "Shepherd fixed this in an earlier run; that run's reply did not reach this thread."
                    .to_owned()
            }
            Said::Edited { text, edit } => format!("{}\n\n{edit}", text.trim_end()),
            Said::NotFixed { why } => format!(
                "Shepherd could not fix this automatically ({why}). A maintainer needs to look \
                 at it."
            ),
        }
    }
}

/// The reply drafted for a decision when nobody wrote one.
pub fn default_for(decision: Decision) -> &'static str {
    match decision {
        Decision::Question => "Thanks for the question; see the reasoning above.",
        Decision::Wontfix => "Reviewed: we decided not to make this change.",
        Decision::AlreadyAddressed => "Reviewed: the code already does this.",
        Decision::Invalid => "Reviewed: this does not apply to the code as it is.",
        Decision::NeedsHuman => {
            "This needs a maintainer's decision; Shepherd did not change anything for it."
        }
        Decision::CodeChange | Decision::MetadataChange => "Done.",
    }
}

/// Whom a reply is posted to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Addressee<'a> {
    /// A review thread: the reply goes in the thread.
    Thread,
    /// A top-level comment or review summary, by its author (`None`: a
    /// deleted account): the reply is a new top-level comment, so it names
    /// the author.
    TopLevel(Option<&'a Author>),
}

/// The comment the forge gets: `text` addressed to `to`, with `marker`
/// appended, at most `limit` characters ([`Marker::append_within`]).
pub fn body(text: &str, to: Addressee<'_>, marker: &Marker, limit: usize) -> String {
    match to {
        Addressee::TopLevel(Some(author)) => {
            marker.append_within(&format!("@{} {text}", author.login), limit)
        }
        Addressee::Thread | Addressee::TopLevel(None) => marker.append_within(text, limit),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::AuthorKind;

    #[test]
    fn every_kind_of_reply_in_its_words() {
        let cases: &[(Said<'_>, &str)] = &[
            (
                Said::Fixed {
                    text: "Hoisted the buffer.\n",
                    commit: "0a1b2c3",
                },
                "Hoisted the buffer.\n\nFixed in 0a1b2c3.",
            ),
            (
                Said::FixedEarlier,
                "Shepherd fixed this in an earlier run; that run's reply did not reach this \
                 thread.",
            ),
            (
                Said::Edited {
                    text: "Renamed.  ",
                    edit: "Shepherd edited the pull request: set the title.",
                },
                "Renamed.\n\nShepherd edited the pull request: set the title.",
            ),
            (
                Said::NotFixed {
                    why: "the fixer failed",
                },
                "Shepherd could not fix this automatically (the fixer failed). A maintainer \
                 needs to look at it.",
            ),
        ];
        for (said, words) in cases {
            assert_eq!(said.text(), *words, "{said:?}");
        }
    }

    #[test]
    fn a_decision_says_the_approvers_words_else_triages_else_its_default() {
        let said = |approver, hint| Said::Decided {
            decision: Decision::Invalid,
            approver,
            hint,
        };
        assert_eq!(said(Some("Mine."), Some("Triage's.")).text(), "Mine.");
        assert_eq!(said(None, Some("Triage's.")).text(), "Triage's.");
        let default = "Reviewed: this does not apply to the code as it is.";
        assert_eq!(said(None, Some("  \n")).text(), default);
        assert_eq!(said(None, None).text(), default);
        for decision in Decision::ALL {
            assert!(!default_for(decision).is_empty(), "{decision}");
        }
        assert!(default_for(Decision::NeedsHuman).contains("did not change anything"));
    }

    #[test]
    fn a_top_level_reply_names_its_author_and_every_body_carries_the_marker() {
        let marker = Marker::new("IC_1", 2, false);
        let alice = Author {
            login: "alice".into(),
            kind: AuthorKind::User,
        };
        let top = body("Done.", Addressee::TopLevel(Some(&alice)), &marker, 1_000);
        assert!(top.starts_with("@alice Done.\n\n"), "{top}");
        assert_eq!(Marker::find(&top), Some(marker.clone()));
        let deleted = body("Done.", Addressee::TopLevel(None), &marker, 1_000);
        assert!(deleted.starts_with("Done.\n\n"), "{deleted}");
        let thread = body("Done.", Addressee::Thread, &marker, 1_000);
        assert_eq!(thread, deleted);
        let cut = body(&"x".repeat(5_000), Addressee::Thread, &marker, 500);
        assert!(cut.chars().count() <= 500);
        assert_eq!(Marker::find(&cut), Some(marker));
    }
}
