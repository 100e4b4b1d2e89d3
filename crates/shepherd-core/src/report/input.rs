//! What the run recorded, as the report takes it: rounds, items, failures,
//! agent usage, the items needing attention, the last look at the threads,
//! what the cluster gate did.

use serde::{Deserialize, Serialize};

use crate::ci::{CiStatus, CiVerdict};
use crate::classify::{Classified, ItemKind};
use crate::cluster::{Cluster, ClusterReport, Escalation, GateSignal, ItemTheme};
use crate::ledger::LedgerEntry;
use crate::reviewers::{ChangesRequested, ReviewerOnHead};

/// What one round did, as the report lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoundSummary {
    /// The round number (1-based).
    pub number: u32,
    /// The last stage it reached.
    pub stage: String,
    /// New items it acted on.
    pub new_items: usize,
    /// Commits it made.
    pub commits: usize,
    /// The commit it pushed, if it pushed.
    pub pushed: Option<String>,
    /// Its CI verdict, if it waited for CI.
    pub ci: Option<CiStatus>,
    /// Whether its gate state equalled the previous round's.
    pub stalled: bool,
    /// A note (why it ended early, a rejected push).
    pub note: Option<String>,
    /// How it ended (`next round`, `converged`, `paused`, `failed`, ...),
    /// after [`Self::stage`]; `None` in runs recorded before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<String>,
    /// How long each stage it completed took, in order (from the store's
    /// stage events); what followed the last one is [`Self::tail_ms`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stage_times: Vec<StageTime>,
    /// The time from the last completed stage to the round's end (the
    /// stage it stopped in, when it stopped early), in ms.
    #[serde(default)]
    pub tail_ms: u64,
}

/// How long one stage of a round took.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StageTime {
    /// The stage (`pr-state`, `ci`, ...).
    pub stage: String,
    /// Its duration, in ms.
    pub ms: u64,
}

impl RoundSummary {
    /// Where the round ended, as the rounds table shows it: the last stage
    /// it completed, and how it ended after it (`ci, then failed`).
    pub fn ended_at(&self) -> String {
        match &self.ended {
            Some(how) => format!("{}, then {how}", self.stage),
            None => self.stage.clone(),
        }
    }

    /// Its stage times as one line (`pr-state 0.1s, ci 6.2s; total 7.0s`),
    /// `None` when none was recorded.
    pub fn times_line(&self) -> Option<String> {
        if self.stage_times.is_empty() {
            return None;
        }
        let secs = |ms: u64| format!("{:.1}s", ms as f64 / 1000.0);
        let mut parts: Vec<String> = self
            .stage_times
            .iter()
            .map(|t| format!("{} {}", t.stage, secs(t.ms)))
            .collect();
        if self.tail_ms >= 100 {
            parts.push(format!("then {}", secs(self.tail_ms)));
        }
        let total: u64 = self.stage_times.iter().map(|t| t.ms).sum::<u64>() + self.tail_ms;
        Some(format!("{}; total {}", parts.join(", "), secs(total)))
    }
}

/// The latest ledger entry of one item, with where the item is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ItemRecord {
    /// The latest ledger entry.
    pub entry: LedgerEntry,
    /// Thread, issue comment or review body.
    pub kind: ItemKind,
    /// The thread's file.
    pub path: Option<String>,
    /// The thread's line.
    pub line: Option<u32>,
    /// How it was fixed (`suggestion`, `agent`, `cluster`, `metadata`).
    pub fix_kind: Option<String>,
    /// The web URL of the item's first comment, when known.
    #[serde(default)]
    pub url: Option<String>,
    /// The reply Shepherd posted (or meant to post), without its marker.
    #[serde(default)]
    pub reply: Option<String>,
}

/// A public call that failed and needs a person's attention.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct PublicFailure {
    /// The item, when the call was about one.
    pub item_id: Option<String>,
    /// `reply`, `resolve`, `push`, `edit`.
    pub action: String,
    /// What went wrong.
    pub error: String,
}

/// Agent usage over the run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentUsage {
    /// The providers used (`builtin`, `command`), sorted.
    pub providers: Vec<String>,
    /// How many agent calls were made.
    pub calls: u32,
    /// Wall time spent in agent calls, in milliseconds.
    pub millis: u64,
    /// Tokens, when every provider reported them.
    pub tokens: Option<u64>,
    /// Cost in US dollars, when every provider reported it.
    pub cost_usd: Option<f64>,
    /// The same per role (`triage`, `fix`, ...), in the order first used.
    #[serde(default)]
    pub roles: Vec<RoleUsage>,
}

/// Agent usage of one role over the run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RoleUsage {
    /// The role (`triage`, `fix`, `cluster-fix`, `fix-validation`, `review`,
    /// `apply-review`).
    pub role: String,
    /// The providers that ran it.
    pub providers: Vec<String>,
    /// How many calls.
    pub calls: u32,
    /// Wall time of those calls, in milliseconds.
    pub millis: u64,
    /// Input tokens, where reported.
    pub input_tokens: Option<u64>,
    /// Output tokens, where reported.
    pub output_tokens: Option<u64>,
    /// Cost in US dollars, where reported.
    pub cost_usd: Option<f64>,
}

/// Everything the report is built from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportInput {
    /// The run id.
    pub run_id: String,
    /// The target, as a person reads it (`pull request github.com/o/r#7`).
    pub target: String,
    /// The PR's web URL.
    pub pr_url: String,
    /// The PR's title.
    pub title: String,
    /// The run's status (`converged`, `paused`, `failed`, `exhausted`, `running`, `interrupted`).
    pub status: String,
    /// Why it stands there.
    pub reason: Option<String>,
    /// The rounds, in order.
    pub rounds: Vec<RoundSummary>,
    /// The latest ledger entry of every item the run touched.
    pub items: Vec<ItemRecord>,
    /// The last classification of the PR's unresolved feedback (meaningful
    /// only with `threads_look`).
    pub open_items: Vec<Classified>,
    /// When the run last looked at the PR's review threads (`open_items` is
    /// that look); `None` when it never did, and then whether the threads
    /// are clear is unknown.
    #[serde(default)]
    pub threads_look: Option<ThreadsLook>,
    /// The last CI verdict.
    pub ci: Option<CiVerdict>,
    /// Clusters formed over the run.
    pub clusters: Vec<Cluster>,
    /// Areas escalated to a person.
    pub escalations: Vec<Escalation>,
    /// Public calls that failed and were not recovered.
    pub failures: Vec<PublicFailure>,
    /// Agent usage.
    pub agent: AgentUsage,
    /// Where the worktree was kept, when it was.
    pub worktree_kept: Option<String>,
    /// Items reported to the user and not acted on.
    #[serde(default)]
    pub attention: Vec<AttentionItem>,
    /// The awaited reviewers' states on the final head (issue 27): the
    /// threads are said to be clear only when every one reviewed it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reviewers: Vec<ReviewerOnHead>,
    /// The people whose latest review requests changes on an older head
    /// than the final one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes_requested: Vec<ChangesRequested>,
}

/// Why an item is reported to the user and not acted on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AttentionKind {
    /// Shepherd could not judge it: a person must decide (nothing posted).
    NeedsYourDecision,
    /// Its author is not trusted (`[trust]`).
    Untrusted,
}

/// An item the run reports to the user and did not act on.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct AttentionItem {
    /// Why it is reported.
    pub kind: AttentionKind,
    /// The file, for threads.
    pub path: Option<String>,
    /// The line, for threads.
    pub line: Option<u32>,
    /// The thread or comment id.
    pub item_id: String,
    /// The web URL of its first comment.
    pub url: Option<String>,
    /// The first line of its first comment, shortened.
    pub excerpt: String,
    /// Why, in one sentence.
    pub why: String,
}

/// The first non-empty line of `body`, at most 100 characters (with `…`
/// when cut): what a report line quotes of a comment.
pub fn excerpt(body: &str) -> String {
    const MAX: usize = 100;
    let line = body
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    if line.chars().count() <= MAX {
        line.to_owned()
    } else {
        let cut: String = line.chars().take(MAX - 1).collect();
        format!("{}…", cut.trim_end())
    }
}

/// When a run last looked at the PR's review threads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadsLook {
    /// The round (1-based).
    pub round: u32,
    /// The stage that looked: `pr-state` (a stop before classification),
    /// `threads` (the round's start), or `converge` (the post-CI re-fetch).
    pub stage: String,
}

impl ThreadsLook {
    /// The stage of the post-CI re-fetch: the last look of a full round.
    pub const CONVERGE: &'static str = "converge";
}

/// What the cluster gate saw and did in one round whose gate opened (a
/// summary of that round's `clusters.json`; a closed gate leaves none).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterRound {
    /// The round (1-based).
    pub round: u32,
    /// The signals that opened the gate.
    pub signals: Vec<GateSignal>,
    /// How many clusters the round formed.
    pub clusters: usize,
    /// How many new items stayed isolated (one fix each).
    pub isolated: usize,
    /// How many areas the round escalated to a person.
    pub escalations: usize,
    /// Every item's theme in that round and where it came from (the triage
    /// agent or the lexical classifier), sorted by id; empty in summaries
    /// written before it existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub themes: Vec<ItemTheme>,
}

impl From<&ClusterReport> for ClusterRound {
    fn from(report: &ClusterReport) -> Self {
        ClusterRound {
            round: report.round,
            signals: report.gate.signals.clone(),
            clusters: report.clusters.len(),
            isolated: report.isolated.len(),
            escalations: report.escalations.len(),
            themes: report.themes.clone(),
        }
    }
}

/// A gate signal as a person reads it (`9 new items >= cluster.min_volume 4`).
pub fn gate_signal_text(signal: &GateSignal) -> String {
    match signal {
        GateSignal::Volume { count, min } => {
            format!("{count} new items >= cluster.min_volume {min}")
        }
        GateSignal::ReentryWithinRun => {
            "re-entry: new items after a fix round of this run".to_owned()
        }
        GateSignal::ReentryAcrossRuns => {
            "re-entry: fixes from an earlier run of this pull request".to_owned()
        }
    }
}
