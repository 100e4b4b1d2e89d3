//! The end of a round (SPEC section 3, steps 16 and 17): the convergence
//! decision, stall detection, the round limit, and what `mergeability.json`
//! says.
//!
//! - A run **converges** exactly when the post-CI re-fetch shows the PR still
//!   open, CI is `PASS`, the re-fetch shows no new item, no resolve is
//!   pending retry, and no reply or resolve failed in the round. `UNKNOWN` is
//!   never a pass; a PR closed or merged while CI ran never converges (the
//!   run ends: [`Convergence::ended`]).
//! - A round is **stalled** when its [`GateState`] (the head commit, the CI
//!   verdict, and every open item with its class and last comment) equals the
//!   previous round's: nothing moved, and another round would see the same.
//! - Reaching `max_rounds` without converging pauses for a human
//!   (`on_exhaust = "approval"`) or fails (`"fail"`), never succeeds.
//!
//! Convergence is not mergeability: draft state, conflicts and required
//! approvals are the forge's to judge; [`Mergeability`] says so.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::ci::CiStatus;
use crate::classify::{Class, Classified, ItemKind};
use crate::config::OnExhaust;
use crate::model::{PrSnapshot, PrStatus};
use crate::reviewers::{ReviewerOnHead, ReviewerState};

/// What the convergence check reads, after the post-CI re-fetch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConvergenceInput {
    /// The PR's state in the post-CI re-fetch: it may have been closed or
    /// merged while CI ran.
    pub pr_state: PrStatus,
    /// The CI verdict of the head commit.
    pub ci: CiStatus,
    /// Items the re-fetch classified as new (acted-on feedback only).
    pub new_items: Vec<String>,
    /// Threads whose authorized resolve has not succeeded.
    pub resolve_pending: Vec<String>,
    /// Reply or resolve calls of the round that failed.
    pub reply_failures: usize,
    /// The awaited reviewers' states on the head, after the wait for them
    /// (issue 27): one still pending keeps the run from converging; one that
    /// declined or was not seen does not block, and is said.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reviewers: Vec<ReviewerOnHead>,
}

/// The convergence decision and its reasons.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Convergence {
    /// Whether the run converged.
    pub converged: bool,
    /// The PR is no longer open (closed or merged during the round): the run
    /// ends, neither converged nor with another round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<PrStatus>,
    /// Why not (one sentence per unmet condition); a single sentence saying
    /// why it did when it did.
    pub reasons: Vec<String>,
    /// What is true of the awaited reviewers that did not review the head
    /// (declined, not seen): said with the end state, converged or not.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unreviewed: Vec<String>,
}

/// The convergence check (SPEC section 3, step 17).
pub fn check(input: &ConvergenceInput) -> Convergence {
    let mut reasons = Vec::new();
    let ended = (input.pr_state != PrStatus::Open).then_some(input.pr_state);
    if let Some(state) = ended {
        let word = match state {
            PrStatus::Merged => "merged",
            _ => "closed",
        };
        reasons.push(format!("the PR was {word} during the round"));
    }
    if input.ci != CiStatus::Pass {
        reasons.push(format!("CI is {}, not PASS", input.ci));
    }
    if !input.new_items.is_empty() {
        let mut ids = input.new_items.clone();
        ids.sort();
        reasons.push(format!(
            "{} new item(s) after CI: {}",
            ids.len(),
            ids.join(", ")
        ));
    }
    if !input.resolve_pending.is_empty() {
        let mut ids = input.resolve_pending.clone();
        ids.sort();
        reasons.push(format!(
            "{} authorized resolve(s) pending retry: {}",
            ids.len(),
            ids.join(", ")
        ));
    }
    if input.reply_failures > 0 {
        reasons.push(format!(
            "{} reply or resolve call(s) failed",
            input.reply_failures
        ));
    }
    let mut unreviewed = Vec::new();
    for r in &input.reviewers {
        match (&r.state, r.statement()) {
            (ReviewerState::Pending { .. }, Some(said)) => reasons.push(said),
            (_, Some(said)) => unreviewed.push(said),
            (_, None) => {}
        }
    }
    let converged = reasons.is_empty();
    if converged {
        reasons.push("CI is PASS, nothing new, no resolve pending".to_owned());
    }
    Convergence {
        converged,
        ended,
        reasons,
        unreviewed,
    }
}

/// One open item as the gate state records it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct OpenItemState {
    /// The item id.
    pub item_id: String,
    /// Its class at the end of the round.
    pub class: Class,
    /// The id of its last comment, when known: a new comment changes the state.
    pub last_comment_id: Option<String>,
}

impl OpenItemState {
    fn sort_key(&self) -> (&str, &'static str, Option<&str>) {
        (
            self.item_id.as_str(),
            self.class.as_str(),
            self.last_comment_id.as_deref(),
        )
    }
}

/// What a round ended with, for stall detection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GateState {
    /// The PR head at the end of the round.
    pub head_sha: String,
    /// The CI verdict.
    pub ci: CiStatus,
    /// Every open item, sorted by id.
    pub open_items: Vec<OpenItemState>,
}

impl GateState {
    /// The state of a round; `open_items` may come in any order.
    pub fn new(
        head_sha: impl Into<String>,
        ci: CiStatus,
        mut open_items: Vec<OpenItemState>,
    ) -> Self {
        open_items.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
        open_items.dedup();
        GateState {
            head_sha: head_sha.into(),
            ci,
            open_items,
        }
    }

    /// The state of a round from its last snapshot and that snapshot's
    /// classification (the last comment of each item is read from `snapshot`).
    pub fn from_snapshot(snapshot: &PrSnapshot, classified: &[Classified], ci: CiStatus) -> Self {
        let items = classified
            .iter()
            .map(|c| {
                let last_comment_id = match c.kind {
                    ItemKind::ReviewThread => snapshot
                        .threads
                        .iter()
                        .find(|t| t.id == c.item_id)
                        .and_then(|t| t.comments.last())
                        .map(|c| c.id.clone()),
                    ItemKind::IssueComment | ItemKind::ReviewBody => Some(c.item_id.clone()),
                };
                OpenItemState {
                    item_id: c.item_id.clone(),
                    class: c.class,
                    last_comment_id,
                }
            })
            .collect();
        GateState::new(snapshot.pr.head_sha.clone(), ci, items)
    }

    /// A stable fingerprint (16 hex digits, FNV-1a over a canonical text):
    /// equal states have equal fingerprints, on every build.
    pub fn fingerprint(&self) -> String {
        let mut text = format!("head={}\nci={}\n", self.head_sha, self.ci);
        for item in &self.open_items {
            text.push_str(&format!(
                "item={} class={} last={}\n",
                item.item_id,
                item.class,
                item.last_comment_id.as_deref().unwrap_or("-")
            ));
        }
        let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        format!("{hash:016x}")
    }
}

/// Whether the current round is stalled: its state equals the previous round's.
pub fn is_stalled(previous: Option<&GateState>, current: &GateState) -> bool {
    previous.is_some_and(|p| p == current)
}

/// What happens after a round that did not converge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LimitAction {
    /// Another round may start.
    Continue,
    /// The limit is reached: pause for a human.
    Pause,
    /// The limit is reached: fail.
    Fail,
}

/// After round `round` (1-based) of a run allowed `max_rounds`, without
/// convergence: continue, or what the limit says.
pub fn after_round(round: u32, max_rounds: u32, on_exhaust: OnExhaust) -> LimitAction {
    if round < max_rounds {
        return LimitAction::Continue;
    }
    match on_exhaust {
        OnExhaust::Approval => LimitAction::Pause,
        OnExhaust::Fail => LimitAction::Fail,
    }
}

/// An unresolved thread, as `mergeability.json` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpenThread {
    /// The thread id.
    pub item_id: String,
    /// Its file.
    pub path: String,
    /// Its line, when it has one.
    pub line: Option<u32>,
    /// Its class (`new` for a thread Shepherd did not act on).
    pub class: Class,
}

/// What Shepherd can say about merging (written as `mergeability.json` at
/// every convergence check).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mergeability {
    /// `converged` or `not-converged`.
    pub status: String,
    /// The CI verdict.
    pub ci: CiStatus,
    /// Whether the PR is a draft.
    pub draft: bool,
    /// Every unresolved review thread, sorted by path, line and id.
    pub open_threads: Vec<OpenThread>,
    /// Why (not) converged.
    pub reasons: Vec<String>,
    /// What is true of awaited reviewers that did not review the head.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unreviewed: Vec<String>,
    /// The checks that failed on the last head Shepherd pushed, read and
    /// classified (see [`crate::ci_failure`]); set by the caller.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ci_failures: Vec<crate::ci_failure::CheckFailure>,
    /// What is true of the people whose latest review requests changes on
    /// an older head (filled by the caller, which counts their threads).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes_requested: Vec<String>,
    /// That convergence is not mergeability.
    pub note: String,
}

/// The note every mergeability record and report carries.
pub const MERGEABILITY_NOTE: &str = "Convergence is not mergeability: draft state, merge \
conflicts and required approvals are the forge's to judge.";

/// `mergeability.json` from the post-CI snapshot, its classification and
/// the convergence decision.
pub fn mergeability(
    snapshot: &PrSnapshot,
    classified: &[Classified],
    ci: CiStatus,
    convergence: &Convergence,
) -> Mergeability {
    let mut open_threads: Vec<OpenThread> = classified
        .iter()
        .filter(|c| c.kind == ItemKind::ReviewThread)
        .map(|c| OpenThread {
            item_id: c.item_id.clone(),
            path: c.path.clone().unwrap_or_default(),
            line: c.line,
            class: c.class,
        })
        .collect();
    // Threads classification left out (none today) still count as open.
    let listed: BTreeSet<&str> = open_threads.iter().map(|t| t.item_id.as_str()).collect();
    let extra: Vec<OpenThread> = snapshot
        .threads
        .iter()
        .filter(|t| !t.is_resolved && !listed.contains(t.id.as_str()))
        .map(|t| OpenThread {
            item_id: t.id.clone(),
            path: t.path.clone(),
            line: t.display_line(),
            class: Class::New,
        })
        .collect();
    open_threads.extend(extra);
    open_threads.sort_by(|a, b| (&a.path, a.line, &a.item_id).cmp(&(&b.path, b.line, &b.item_id)));
    Mergeability {
        status: if convergence.converged {
            "converged".to_owned()
        } else {
            "not-converged".to_owned()
        },
        ci,
        draft: snapshot.pr.is_draft,
        open_threads,
        reasons: convergence.reasons.clone(),
        unreviewed: convergence.unreviewed.clone(),
        ci_failures: Vec::new(),
        changes_requested: Vec::new(),
        note: MERGEABILITY_NOTE.to_owned(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn input(ci: CiStatus, new: &[&str], pending: &[&str], failures: usize) -> ConvergenceInput {
        ConvergenceInput {
            pr_state: PrStatus::Open,
            ci,
            new_items: new.iter().map(|s| (*s).to_owned()).collect(),
            resolve_pending: pending.iter().map(|s| (*s).to_owned()).collect(),
            reply_failures: failures,
            reviewers: Vec::new(),
        }
    }

    #[test]
    fn a_pending_reviewer_blocks_and_an_unreviewed_one_is_said() {
        use crate::reviewers::{Awaiting, Evidence};
        let on = |login: &str, state| ReviewerOnHead {
            login: login.into(),
            head: "1a2b3c4d".into(),
            state,
            waited_secs: 600,
        };
        let mut i = input(CiStatus::Pass, &[], &[], 0);
        i.reviewers = vec![
            on(
                "codex[bot]",
                ReviewerState::Reviewed {
                    evidence: Evidence::Note,
                },
            ),
            on(
                "coderabbitai[bot]",
                ReviewerState::NotSeen { started: false },
            ),
        ];
        let c = check(&i);
        assert!(c.converged, "{c:?}");
        assert_eq!(
            c.unreviewed,
            ["coderabbitai[bot] did not review 1a2b3c4 within 10 min"]
        );
        i.reviewers.push(on(
            "copilot[bot]",
            ReviewerState::Pending {
                awaiting: Awaiting::Requested,
            },
        ));
        let c = check(&i);
        assert!(!c.converged);
        assert_eq!(
            c.reasons,
            ["copilot[bot] has not finished reviewing 1a2b3c4 yet"]
        );
    }

    #[test]
    fn converges_only_on_pass_with_nothing_left() {
        assert!(check(&input(CiStatus::Pass, &[], &[], 0)).converged);
        for ci in [CiStatus::Fail, CiStatus::Unknown, CiStatus::Pending] {
            let c = check(&input(ci, &[], &[], 0));
            assert!(!c.converged, "{ci}");
            assert!(c.reasons[0].contains(ci.as_str()), "{:?}", c.reasons);
        }
        let c = check(&input(CiStatus::Pass, &["T2", "T1"], &[], 0));
        assert!(!c.converged);
        assert_eq!(c.reasons, ["2 new item(s) after CI: T1, T2"]);
        let c = check(&input(CiStatus::Pass, &[], &["T3"], 0));
        assert!(!c.converged && c.reasons[0].contains("T3"));
        let c = check(&input(CiStatus::Pass, &[], &[], 1));
        assert!(!c.converged && c.reasons[0].contains("failed"));
        assert!(check(&input(CiStatus::Pass, &[], &[], 0)).ended.is_none());
    }

    #[test]
    fn a_pr_closed_or_merged_during_the_round_never_converges() {
        for state in [PrStatus::Closed, PrStatus::Merged] {
            let c = check(&ConvergenceInput {
                pr_state: state,
                ..input(CiStatus::Pass, &[], &[], 0)
            });
            assert!(!c.converged, "{state:?}");
            assert_eq!(c.ended, Some(state));
            let word = if state == PrStatus::Merged {
                "merged"
            } else {
                "closed"
            };
            assert!(c.reasons[0].contains(word), "{:?}", c.reasons);
        }
    }

    proptest! {
        #[test]
        fn unknown_is_never_a_pass(new in 0..3usize, pending in 0..3usize, failures in 0..3usize) {
            let ids: Vec<String> = (0..new).map(|i| format!("N{i}")).collect();
            let res: Vec<String> = (0..pending).map(|i| format!("R{i}")).collect();
            let c = check(&ConvergenceInput {
                pr_state: PrStatus::Open,
                ci: CiStatus::Unknown,
                new_items: ids,
                resolve_pending: res,
                reply_failures: failures,
                reviewers: Vec::new(),
            });
            prop_assert!(!c.converged);
        }
    }

    fn item(id: &str, class: Class, last: &str) -> OpenItemState {
        OpenItemState {
            item_id: id.to_owned(),
            class,
            last_comment_id: Some(last.to_owned()),
        }
    }

    #[test]
    fn stall_is_an_equal_state_whatever_the_order() {
        let a = GateState::new(
            "abc",
            CiStatus::Fail,
            vec![
                item("T2", Class::New, "c2"),
                item("T1", Class::AwaitingReviewer, "c1"),
            ],
        );
        let b = GateState::new(
            "abc",
            CiStatus::Fail,
            vec![
                item("T1", Class::AwaitingReviewer, "c1"),
                item("T2", Class::New, "c2"),
            ],
        );
        assert_eq!(a.fingerprint(), b.fingerprint());
        assert!(is_stalled(Some(&a), &b));
        assert!(!is_stalled(None, &b));
        let moved = GateState::new("abd", CiStatus::Fail, b.open_items.clone());
        assert!(!is_stalled(Some(&a), &moved));
        assert_ne!(a.fingerprint(), moved.fingerprint());
        let commented = GateState::new(
            "abc",
            CiStatus::Fail,
            vec![
                item("T1", Class::AwaitingReviewer, "c1"),
                item("T2", Class::New, "c3"),
            ],
        );
        assert!(
            !is_stalled(Some(&a), &commented),
            "a new comment is progress"
        );
        assert_eq!(a.fingerprint().len(), 16);
    }

    #[test]
    fn the_round_limit() {
        assert_eq!(
            after_round(1, 8, OnExhaust::Approval),
            LimitAction::Continue
        );
        assert_eq!(after_round(8, 8, OnExhaust::Approval), LimitAction::Pause);
        assert_eq!(after_round(8, 8, OnExhaust::Fail), LimitAction::Fail);
        assert_eq!(after_round(9, 8, OnExhaust::Fail), LimitAction::Fail);
        assert_eq!(after_round(1, 1, OnExhaust::Fail), LimitAction::Fail);
    }
}
