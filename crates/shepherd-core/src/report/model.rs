//! The report's model: its JSON twin and the pieces it is made of.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::ci::CiVerdict;
use crate::cluster::{Cluster, Escalation};
use crate::ledger::{Decision, Outcome};

use super::input::{
    AgentUsage, AttentionItem, AttentionKind, ClusterRound, PublicFailure, RoundSummary,
    ThreadsLook,
};

/// One item in a report list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportItem {
    /// The item id.
    pub item_id: String,
    /// Its file, for threads.
    pub path: Option<String>,
    /// Its line, for threads.
    pub line: Option<u32>,
    /// The decision acted on.
    pub decision: Option<Decision>,
    /// The fix commit.
    pub commit: Option<String>,
    /// Whether Shepherd's reply is posted.
    pub replied: bool,
    /// Whether the resolve succeeded.
    pub resolved: bool,
    /// The web URL of the item's first comment, when known.
    #[serde(default)]
    pub url: Option<String>,
    /// The reply posted (or meant to be), when there is one.
    #[serde(default)]
    pub reply: Option<String>,
}

/// The items of one outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutcomeGroup {
    /// The outcome; `None` for items without one yet (undecided).
    pub outcome: Option<Outcome>,
    /// Its items, sorted by path, line and id.
    pub items: Vec<ReportItem>,
}

/// A thread and its file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadPath {
    /// The item id.
    pub item_id: String,
    /// The file (`None` for a top-level item).
    pub path: Option<String>,
}

/// Whether the PR's review threads are clear, as of the run's last look.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadsClear {
    /// Whether the run looked at the threads at all; when not, `clear` is
    /// false and the summary says `unknown`.
    #[serde(default = "yes")]
    pub known: bool,
    /// No unresolved review thread at all (as last seen).
    pub clear: bool,
    /// Threads Shepherd answered and deliberately left open.
    pub deliberately_open: Vec<ThreadPath>,
    /// Other unresolved threads (not acted on, or still new).
    pub other_open: Vec<ThreadPath>,
    /// Of `other_open`: threads nobody has handled yet (the last word is
    /// not Shepherd's, and this run did not reply after its look).
    #[serde(default)]
    pub not_handled: Vec<ThreadPath>,
    /// Unresolved threads Shepherd could not judge and reported to the user
    /// (nothing posted on them).
    #[serde(default)]
    pub needs_your_decision: Vec<ThreadPath>,
    /// Of `other_open`: threads this run replied to after its last look
    /// and left unresolved.
    #[serde(default)]
    pub replied_since: Vec<ThreadPath>,
    /// Of `other_open`: threads whose authorized resolve has not succeeded.
    #[serde(default)]
    pub resolve_pending: Vec<ThreadPath>,
    /// The look it is based on.
    #[serde(default)]
    pub as_of: Option<ThreadsLook>,
    /// The sentence: `yes`; `no, N deliberately-open threads: paths; N
    /// threads not handled yet: paths; ...`; or `unknown: ...`.
    pub summary: String,
}

pub(super) fn yes() -> bool {
    true
}

/// The report's JSON twin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Format version ([`Report::VERSION`]).
    pub version: u32,
    /// The run id.
    pub run_id: String,
    /// The target.
    pub target: String,
    /// The PR's web URL.
    pub pr_url: String,
    /// The PR's title.
    pub title: String,
    /// The run's status.
    pub status: String,
    /// Whether the run converged.
    pub converged: bool,
    /// Why the run stands where it does.
    pub reason: Option<String>,
    /// The rounds.
    pub rounds: Vec<RoundSummary>,
    /// Items by outcome: fixed, fixed-differently, not-addressing, declined,
    /// replied, needs-human, then undecided; empty groups left out.
    pub outcomes: Vec<OutcomeGroup>,
    /// Items Shepherd replied to.
    pub replied: Vec<ThreadPath>,
    /// Threads Shepherd resolved.
    pub resolved: Vec<ThreadPath>,
    /// Items whose last word is Shepherd's reply, left open for the reviewer.
    pub awaiting_reviewer: Vec<ThreadPath>,
    /// Items whose last word is Shepherd's reply handing them to a person
    /// (outcome `needs-human`, in this run or an earlier one, as the
    /// ledger or the reply's marker says), still open when last seen.
    #[serde(default)]
    pub handed_to_a_person: Vec<ThreadPath>,
    /// Threads whose resolve was authorized but has not succeeded.
    pub authorized_unresolved: Vec<ThreadPath>,
    /// The last CI verdict.
    pub ci: Option<CiVerdict>,
    /// The required checks that failed on the last head waited for (see
    /// [`Report::with_ci_failures`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ci_failures: Vec<crate::ci_failure::CheckFailure>,
    /// Whether the review threads are clear.
    pub review_threads: ThreadsClear,
    /// The rounds whose cluster gate opened, with its signals (see
    /// [`Report::with_cluster_rounds`]); rounds not listed clustered nothing.
    #[serde(default)]
    pub cluster_rounds: Vec<ClusterRound>,
    /// Clusters formed.
    pub clusters: Vec<Cluster>,
    /// Escalations.
    pub escalations: Vec<Escalation>,
    /// Failures needing attention.
    pub failures: Vec<PublicFailure>,
    /// Agent usage.
    pub agent: AgentUsage,
    /// Where the worktree was kept.
    pub worktree_kept: Option<String>,
    /// Rounds whose state equalled the previous round's.
    pub stalled_rounds: Vec<u32>,
    /// Items reported to the user and not acted on (sorted: needing a
    /// decision first, then untrusted; by path and line).
    #[serde(default)]
    pub attention: Vec<AttentionItem>,
    /// The awaited reviewers' states on the final head.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reviewers: Vec<crate::reviewers::ReviewerOnHead>,
    /// The people whose latest review requests changes on an older head
    /// than the final one: their threads' state, and whether their review
    /// was requested again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes_requested: Vec<crate::reviewers::ChangesRequested>,
    /// That convergence is not mergeability.
    pub note: String,
}

impl Report {
    /// The current JSON format version.
    pub const VERSION: u32 = 1;

    /// The report with what the cluster gate did in each round it opened
    /// (from the rounds' `clusters.json`), sorted by round; a round given
    /// twice keeps its last summary.
    pub fn with_cluster_rounds(mut self, rounds: impl IntoIterator<Item = ClusterRound>) -> Self {
        let by_round: BTreeMap<u32, ClusterRound> =
            rounds.into_iter().map(|r| (r.round, r)).collect();
        self.cluster_rounds = by_round.into_values().collect();
        self
    }

    /// The trusted items handed to a person that still wait for one: those
    /// this run could not judge ("Needs your decision"), those whose
    /// outcome in this run is `needs-human` (a fixer that could not fix, a
    /// protected path, a stale suggestion, a failed metadata edit) and
    /// that were not resolved, and the open items whose last word is a
    /// reply of Shepherd's (this run's or an earlier one's) that handed
    /// them to a person ([`Report::handed_to_a_person`]). Sorted by path
    /// and id, each once.
    ///
    /// A run whose loop converged while this is not empty ends
    /// `handed-off`, not `converged` (SPEC section 1): the PR is not clear.
    pub fn waiting_for_a_person(&self) -> Vec<ThreadPath> {
        let needs_human = self
            .outcomes
            .iter()
            .filter(|g| g.outcome == Some(Outcome::NeedsHuman))
            .flat_map(|g| &g.items)
            .filter(|i| !i.resolved)
            .map(|i| ThreadPath {
                item_id: i.item_id.clone(),
                path: i.path.clone(),
            });
        let undecided = self
            .attention
            .iter()
            .filter(|a| a.kind == AttentionKind::NeedsYourDecision)
            .map(|a| ThreadPath {
                item_id: a.item_id.clone(),
                path: a.path.clone(),
            });
        thread_paths(
            needs_human
                .chain(undecided)
                .chain(self.handed_to_a_person.iter().cloned())
                .collect(),
        )
    }
}

pub(super) fn thread_paths(mut list: Vec<ThreadPath>) -> Vec<ThreadPath> {
    list.sort_by(|a, b| (&a.path, &a.item_id).cmp(&(&b.path, &b.item_id)));
    list.dedup();
    list
}
