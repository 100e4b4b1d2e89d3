//! The run report (SPEC section 11): a Markdown document and its JSON twin,
//! built deterministically from the ledger's latest entries and what the run
//! recorded (rounds, the last CI verdict, the last classification, clusters,
//! failures).
//!
//! [`build`] turns a [`ReportInput`] into a [`Report`] (the JSON twin);
//! [`Report::to_markdown`] renders it. The same input always gives the same
//! bytes: lists are sorted, nothing reads a clock.
//!
//! What it says:
//!
//! - the rounds, with what each did;
//! - per outcome, the items and their paths (items with no outcome yet are
//!   listed as undecided);
//! - replied, resolved, awaiting reviewer, and authorized-but-unresolved;
//! - the CI verdict;
//! - "Review threads clear: yes", or "no, N deliberately-open threads: paths"
//!   (threads Shepherd answered and left open on purpose), plus any other
//!   unresolved thread;
//! - clusters: the gate's signals in each round it opened, each item's theme
//!   and whether the triage agent or the lexical classifier gave it, the
//!   clusters (theme, area, files, items), how many items stayed isolated, and the
//!   escalations with their context sentence; reply failures needing
//!   attention;
//! - the items the run reported to the user and did not act on: those
//!   Shepherd could not judge (a person must decide; nothing was posted) and
//!   those whose author is not trusted, each with where it is, a link, a
//!   one-line excerpt and why;
//! - agent time and, where the provider reports them, tokens and cost;
//! - that convergence is not mergeability.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::ci::{CiStatus, CiVerdict};
use crate::classify::{Class, Classified, ItemKind};
use crate::cluster::{Cluster, ClusterReport, Escalation, GateSignal, ItemTheme, ThemeSource};
use crate::converge::MERGEABILITY_NOTE;
use crate::ledger::{Decision, LedgerEntry, Outcome};

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

fn yes() -> bool {
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

const OUTCOME_ORDER: [Outcome; 6] = Outcome::ALL;

fn outcome_word(outcome: Option<Outcome>) -> &'static str {
    outcome.map_or("undecided", Outcome::as_str)
}

fn decision_word(decision: Decision) -> &'static str {
    decision.as_str()
}

fn sort_key(path: &Option<String>, line: Option<u32>, id: &str) -> (String, u32, String) {
    (
        path.clone().unwrap_or_default(),
        line.unwrap_or(0),
        id.to_owned(),
    )
}

fn thread_paths(mut list: Vec<ThreadPath>) -> Vec<ThreadPath> {
    list.sort_by(|a, b| (&a.path, &a.item_id).cmp(&(&b.path, &b.item_id)));
    list.dedup();
    list
}

/// Build the report from its input (see the module docs).
pub fn build(input: &ReportInput) -> Report {
    let mut items: Vec<&ItemRecord> = input.items.iter().collect();
    items.sort_by(|a, b| {
        sort_key(&a.path, a.line, &a.entry.item_id).cmp(&sort_key(
            &b.path,
            b.line,
            &b.entry.item_id,
        ))
    });

    let mut groups: BTreeMap<usize, Vec<ReportItem>> = BTreeMap::new();
    for record in &items {
        let e = &record.entry;
        let index = match e.outcome {
            Some(o) => OUTCOME_ORDER
                .iter()
                .position(|x| *x == o)
                .unwrap_or(OUTCOME_ORDER.len()),
            None => OUTCOME_ORDER.len(),
        };
        groups.entry(index).or_default().push(ReportItem {
            item_id: e.item_id.clone(),
            path: record.path.clone(),
            line: record.line,
            decision: e.decision,
            commit: e.commit.clone(),
            replied: e.replied,
            resolved: e.resolved,
            url: record.url.clone(),
            reply: record.reply.clone(),
        });
    }
    let outcomes = groups
        .into_iter()
        .map(|(index, items)| OutcomeGroup {
            outcome: OUTCOME_ORDER.get(index).copied(),
            items,
        })
        .collect();

    let tp = |r: &ItemRecord| ThreadPath {
        item_id: r.entry.item_id.clone(),
        path: r.path.clone(),
    };
    let replied = thread_paths(
        items
            .iter()
            .filter(|r| r.entry.replied)
            .map(|r| tp(r))
            .collect(),
    );
    let resolved = thread_paths(
        items
            .iter()
            .filter(|r| r.entry.resolved)
            .map(|r| tp(r))
            .collect(),
    );
    let authorized_unresolved = thread_paths(
        items
            .iter()
            .filter(|r| r.entry.resolve_authorized && r.entry.replied && !r.entry.resolved)
            .map(|r| tp(r))
            .collect(),
    );
    let classified_path = |c: &Classified| ThreadPath {
        item_id: c.item_id.clone(),
        path: c.path.clone(),
    };
    let awaiting = |person: bool| {
        thread_paths(
            input
                .open_items
                .iter()
                .filter(|c| c.class == Class::AwaitingReviewer && c.waits_for_a_person == person)
                .map(classified_path)
                .collect(),
        )
    };
    let awaiting_reviewer = awaiting(false);
    let handed_to_a_person = awaiting(true);

    let review_threads = threads_clear(input, &items);
    let mut clusters = input.clusters.clone();
    clusters.sort_by(|a, b| (a.theme, &a.area, &a.item_ids).cmp(&(b.theme, &b.area, &b.item_ids)));
    clusters.dedup();
    let mut escalations = input.escalations.clone();
    escalations.sort_by(|a, b| (&a.key, &a.item_ids).cmp(&(&b.key, &b.item_ids)));
    escalations.dedup();
    let mut failures = input.failures.clone();
    failures.sort();
    failures.dedup();
    let mut rounds = input.rounds.clone();
    rounds.sort_by_key(|r| r.number);
    let stalled_rounds = rounds
        .iter()
        .filter(|r| r.stalled)
        .map(|r| r.number)
        .collect();
    let mut agent = input.agent.clone();
    agent.providers.sort();
    agent.providers.dedup();

    Report {
        version: Report::VERSION,
        run_id: input.run_id.clone(),
        target: input.target.clone(),
        pr_url: input.pr_url.clone(),
        title: input.title.clone(),
        status: input.status.clone(),
        converged: input.status == "converged",
        reason: input.reason.clone(),
        rounds,
        outcomes,
        replied,
        resolved,
        awaiting_reviewer,
        handed_to_a_person,
        authorized_unresolved,
        ci: input.ci.clone(),
        review_threads,
        cluster_rounds: Vec::new(),
        clusters,
        escalations,
        failures,
        agent,
        worktree_kept: input.worktree_kept.clone(),
        stalled_rounds,
        attention: {
            let mut list = input.attention.clone();
            list.sort();
            list.dedup();
            list
        },
        note: MERGEABILITY_NOTE.to_owned(),
    }
}

/// Whether the review threads are clear, from the run's last look at them
/// and what the run did after it (a reply posted after the look leaves the
/// thread open; a resolve that succeeded after it closes it).
fn threads_clear(input: &ReportInput, items: &[&ItemRecord]) -> ThreadsClear {
    let Some(look) = &input.threads_look else {
        return ThreadsClear {
            known: false,
            clear: false,
            deliberately_open: Vec::new(),
            other_open: Vec::new(),
            not_handled: Vec::new(),
            needs_your_decision: Vec::new(),
            replied_since: Vec::new(),
            resolve_pending: Vec::new(),
            as_of: None,
            summary: "unknown: the run stopped before it looked at the review threads".to_owned(),
        };
    };
    let after_look = |id: &str| {
        items
            .iter()
            .find(|r| r.entry.item_id == id && r.entry.round >= look.round)
            .map(|r| &r.entry)
    };
    let path = |c: &Classified| ThreadPath {
        item_id: c.item_id.clone(),
        path: c.path.clone(),
    };
    let mut deliberately_open = Vec::new();
    let mut not_handled = Vec::new();
    let mut needs_your_decision = Vec::new();
    let held = |id: &str| {
        input
            .attention
            .iter()
            .any(|a| a.kind == AttentionKind::NeedsYourDecision && a.item_id == id)
    };
    let mut replied_since = Vec::new();
    let mut resolve_pending = Vec::new();
    for c in input
        .open_items
        .iter()
        .filter(|c| c.kind == ItemKind::ReviewThread)
    {
        let since = after_look(&c.item_id);
        if since.is_some_and(|e| e.resolved) {
            // Resolved by this run after the look: the forge said so.
            continue;
        }
        match c.class {
            Class::AwaitingReviewer => deliberately_open.push(path(c)),
            Class::ResolveRetry => resolve_pending.push(path(c)),
            Class::New if since.is_some_and(|e| e.replied) => {
                if since.is_some_and(|e| e.resolve_authorized) {
                    resolve_pending.push(path(c));
                } else {
                    replied_since.push(path(c));
                }
            }
            Class::New if held(&c.item_id) => needs_your_decision.push(path(c)),
            Class::New => not_handled.push(path(c)),
        }
    }
    let deliberately_open = thread_paths(deliberately_open);
    let not_handled = thread_paths(not_handled);
    let needs_your_decision = thread_paths(needs_your_decision);
    let replied_since = thread_paths(replied_since);
    let resolve_pending = thread_paths(resolve_pending);
    let other_open = thread_paths(
        not_handled
            .iter()
            .chain(&needs_your_decision)
            .chain(&replied_since)
            .chain(&resolve_pending)
            .cloned()
            .collect(),
    );
    let clear = deliberately_open.is_empty() && other_open.is_empty();
    let mut summary = if clear {
        "yes".to_owned()
    } else {
        let mut parts = Vec::new();
        for (list, what) in [
            (&deliberately_open, "deliberately-open thread"),
            (&not_handled, "thread not handled yet"),
            (&needs_your_decision, "thread needing your decision"),
            (&replied_since, "thread replied to, left open"),
            (&resolve_pending, "thread whose resolve has not succeeded"),
        ] {
            if list.is_empty() {
                continue;
            }
            let paths: BTreeSet<&str> = list.iter().filter_map(|t| t.path.as_deref()).collect();
            let noun = if list.len() == 1 {
                what.to_owned()
            } else {
                what.replacen("thread", "threads", 1)
            };
            parts.push(format!(
                "{} {noun}: {}",
                list.len(),
                paths.into_iter().collect::<Vec<_>>().join(", ")
            ));
        }
        format!("no, {}", parts.join("; "))
    };
    if look.stage != ThreadsLook::CONVERGE {
        summary.push_str(&format!(
            " (as seen at the {} stage of round {}; not looked at since)",
            look.stage, look.round
        ));
    }
    ThreadsClear {
        known: true,
        clear,
        deliberately_open,
        other_open,
        not_handled,
        needs_your_decision,
        replied_since,
        resolve_pending,
        as_of: Some(look.clone()),
        summary,
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

/// Markdown-safe text: untrusted strings (paths, ids, titles) cannot open
/// HTML, links or emphasis, nor carry terminal or bidi controls.
fn md(text: &str) -> String {
    crate::escape::markdown(text)
}

fn where_(path: &Option<String>, line: Option<u32>) -> String {
    match (path, line) {
        (Some(p), Some(l)) => crate::escape::code_span(&format!("{p}:{l}")),
        (Some(p), None) => crate::escape::code_span(p),
        (None, _) => "(conversation)".to_owned(),
    }
}

fn list_paths(out: &mut String, title: &str, list: &[ThreadPath]) {
    out.push_str(&format!("- {title}: {}", list.len()));
    if list.is_empty() {
        out.push('\n');
        return;
    }
    out.push('\n');
    for t in list {
        out.push_str(&format!(
            "  - {} {}\n",
            where_(&t.path, None),
            md(&t.item_id)
        ));
    }
}

impl Report {
    /// The report as Markdown (`report.md`).
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        out.push_str(&format!("# Shepherd report: {}\n\n", md(&self.target)));
        out.push_str(&format!("- Title: {}\n", md(&self.title)));
        out.push_str(&format!("- URL: {}\n", md(&self.pr_url)));
        out.push_str(&format!("- Run: `{}`\n", self.run_id));
        out.push_str(&format!("- Status: **{}**", self.status));
        if let Some(reason) = &self.reason {
            out.push_str(&format!(" ({})", md(reason)));
        }
        out.push('\n');
        out.push_str(&format!("- Rounds: {}\n", self.rounds.len()));
        let ci = self
            .ci
            .as_ref()
            .map_or("not checked".to_owned(), |c| c.status.to_string());
        out.push_str(&format!("- CI: {ci}\n"));
        out.push_str(&format!(
            "- Review threads clear: {}\n",
            md(&self.review_threads.summary)
        ));
        if let Some(dir) = &self.worktree_kept {
            out.push_str(&format!("- Worktree kept at: {}\n", code(dir)));
        }

        out.push_str("\n## Rounds\n\n");
        if self.rounds.is_empty() {
            out.push_str("No round ran.\n");
        } else {
            out.push_str("| Round | Stage | New items | Commits | Pushed | CI | Note |\n");
            out.push_str("|---|---|---|---|---|---|---|\n");
            for r in &self.rounds {
                let mut note = r.note.as_deref().map(md).unwrap_or_default();
                if r.stalled {
                    if !note.is_empty() {
                        note.push_str("; ");
                    }
                    note.push_str("stalled: same state as the previous round");
                }
                // Commits made locally and never pushed are not on the
                // forge: the table says so.
                let commits = match (r.commits, &r.pushed) {
                    (0, _) | (_, Some(_)) => r.commits.to_string(),
                    (n, None) => format!("{n} (not pushed)"),
                };
                out.push_str(&format!(
                    "| {} | {} | {} | {} | {} | {} | {} |\n",
                    r.number,
                    md(&r.ended_at()),
                    r.new_items,
                    commits,
                    r.pushed
                        .as_deref()
                        .map_or("-".to_owned(), |s| format!("`{}`", short(s))),
                    r.ci.map_or("-".to_owned(), |c| c.to_string()),
                    note
                ));
            }
        }

        let times: Vec<String> = self
            .rounds
            .iter()
            .filter_map(|r| {
                r.times_line()
                    .map(|t| format!("- Round {}: {}\n", r.number, md(&t)))
            })
            .collect();
        if !times.is_empty() {
            out.push_str("\nStage times:\n\n");
            out.push_str(&times.concat());
        }

        out.push_str("\n## Items by outcome\n\n");
        if self.outcomes.is_empty() {
            out.push_str("No item was acted on.\n");
        }
        for group in &self.outcomes {
            out.push_str(&format!(
                "### {} ({})\n\n",
                outcome_word(group.outcome),
                group.items.len()
            ));
            for item in &group.items {
                let mut facts = Vec::new();
                if let Some(d) = item.decision {
                    facts.push(decision_word(d).to_owned());
                }
                if let Some(c) = &item.commit {
                    facts.push(format!("commit `{}`", short(c)));
                }
                facts.push(
                    if item.replied {
                        "replied"
                    } else {
                        "not replied"
                    }
                    .to_owned(),
                );
                if item.resolved {
                    facts.push("resolved".to_owned());
                }
                out.push_str(&format!(
                    "- {} {}: {}\n",
                    where_(&item.path, item.line),
                    md(&item.item_id),
                    facts.join(", ")
                ));
                if let Some(url) = item.url.as_deref().filter(|u| !u.is_empty()) {
                    out.push_str(&format!("  - link: {}\n", code(url)));
                }
                if let Some(reply) = item.reply.as_deref().map(excerpt).filter(|r| !r.is_empty()) {
                    let said = if item.replied {
                        "reply"
                    } else {
                        "drafted reply, not posted"
                    };
                    out.push_str(&format!("  - {said}: \"{}\"\n", md(&reply)));
                }
            }
            out.push('\n');
        }

        out.push_str("## Threads\n\n");
        list_paths(&mut out, "Replied", &self.replied);
        list_paths(&mut out, "Resolved", &self.resolved);
        list_paths(&mut out, "Awaiting reviewer", &self.awaiting_reviewer);
        list_paths(&mut out, "Waiting for a person", &self.handed_to_a_person);
        list_paths(
            &mut out,
            "Authorized but unresolved",
            &self.authorized_unresolved,
        );
        if !self.review_threads.other_open.is_empty() {
            list_paths(
                &mut out,
                "Other unresolved threads",
                &self.review_threads.other_open,
            );
        }

        out.push_str("\n## CI\n\n");
        match &self.ci {
            None => out.push_str("CI was not checked.\n"),
            Some(v) => {
                out.push_str(&format!("Verdict: **{}**\n\n", v.status));
                for reason in &v.reasons {
                    out.push_str(&format!("- {}\n", md(reason)));
                }
            }
        }

        self.clusters_markdown(&mut out);

        self.attention_markdown(&mut out);

        out.push_str("\n## Needs attention\n\n");
        if self.failures.is_empty() {
            out.push_str("No reply, resolve, push or edit failed.\n");
        }
        for f in &self.failures {
            out.push_str(&format!(
                "- {}{}: {}\n",
                f.action,
                f.item_id
                    .as_deref()
                    .map_or(String::new(), |i| format!(" {}", md(i))),
                md(&f.error)
            ));
        }

        out.push_str("\n## Agent\n\n");
        let providers = if self.agent.providers.is_empty() {
            "none".to_owned()
        } else {
            self.agent.providers.join(", ")
        };
        out.push_str(&format!(
            "- Providers: {providers}\n- Calls: {}\n- Time: {:.1}s\n",
            self.agent.calls,
            self.agent.millis as f64 / 1000.0
        ));
        out.push_str(&format!(
            "- Tokens: {}\n- Cost: {}\n",
            self.agent
                .tokens
                .map_or("not reported".to_owned(), |t| t.to_string()),
            self.agent
                .cost_usd
                .map_or("not reported".to_owned(), |c| format!("${c:.4}"))
        ));
        for r in &self.agent.roles {
            let mut line = format!(
                "- {} ({}): {} call(s), {:.1}s",
                md(&r.role),
                md(&r.providers.join(", ")),
                r.calls,
                r.millis as f64 / 1000.0
            );
            if r.input_tokens.is_some() || r.output_tokens.is_some() {
                line.push_str(&format!(
                    ", tokens {} in / {} out",
                    r.input_tokens.unwrap_or(0),
                    r.output_tokens.unwrap_or(0)
                ));
            }
            if let Some(c) = r.cost_usd {
                line.push_str(&format!(", ${c:.4}"));
            }
            line.push('\n');
            out.push_str(&line);
        }

        out.push_str(&format!("\n---\n\n{}\n", self.note));
        out
    }
}

fn code(text: &str) -> String {
    crate::escape::code_span(text)
}

fn count(n: usize, word: &str) -> String {
    format!("{n} {word}{}", plural(n))
}

impl Report {
    /// The sections of items reported to the user and not acted on.
    fn attention_markdown(&self, out: &mut String) {
        for (kind, title, blurb) in [
            (
                AttentionKind::NeedsYourDecision,
                "Needs your decision",
                "Shepherd could not judge these and posted nothing on them; decide them on the \
                 forge (or run with `--reply-needs-human` to post the drafted reply).",
            ),
            (
                AttentionKind::Untrusted,
                "Untrusted, not acted on",
                "Their authors are not trusted (`[trust]`): reported, not triaged, replied to or \
                 resolved.",
            ),
        ] {
            let items: Vec<&AttentionItem> =
                self.attention.iter().filter(|a| a.kind == kind).collect();
            if items.is_empty() {
                continue;
            }
            out.push_str(&format!("\n## {title} ({})\n\n{blurb}\n\n", items.len()));
            for a in items {
                let link = a
                    .url
                    .as_deref()
                    .filter(|u| !u.is_empty())
                    .map_or(String::new(), |u| format!(" {}", code(u)));
                out.push_str(&format!(
                    "- {} {}{link}\n  - \"{}\"\n  - why: {}\n",
                    where_(&a.path, a.line),
                    md(&a.item_id),
                    md(&a.excerpt),
                    md(&a.why)
                ));
            }
        }
    }

    /// The Clusters section: the gate's signals in each round it opened,
    /// the clusters (theme, area, files, items), isolated items, and the
    /// escalations with their context sentence.
    fn clusters_markdown(&self, out: &mut String) {
        out.push_str("\n## Clusters\n\n");
        if !self.cluster_rounds.is_empty() {
            out.push_str(
                "Cluster gate (rounds not listed did not open it and clustered nothing):\n\n",
            );
            for r in &self.cluster_rounds {
                // Shepherd's own words, not untrusted text: no escaping.
                let signals: Vec<String> = r.signals.iter().map(gate_signal_text).collect();
                out.push_str(&format!(
                    "- Round {}: opened by {}; {}, {}, {}\n",
                    r.round,
                    signals.join(" and "),
                    count(r.clusters, "cluster"),
                    count(r.isolated, "isolated item"),
                    count(r.escalations, "escalation")
                ));
                for (source, label) in [
                    (ThemeSource::Agent, "themes from the triage agent"),
                    (ThemeSource::Lexical, "lexical themes (no agent theme)"),
                ] {
                    let items: Vec<String> = r
                        .themes
                        .iter()
                        .filter(|t| t.source == source)
                        .map(|t| format!("{} {}", md(&t.id), t.theme))
                        .collect();
                    if !items.is_empty() {
                        out.push_str(&format!("  - {label}: {}\n", items.join(", ")));
                    }
                }
            }
            out.push('\n');
        }
        if self.clusters.is_empty() {
            out.push_str("No cluster was formed.\n");
        } else {
            out.push_str("Clusters formed (one fix each, unless escalated):\n\n");
        }
        for c in &self.clusters {
            let escalated = self
                .escalations
                .iter()
                .any(|e| c.item_ids.iter().all(|id| e.item_ids.contains(id)));
            out.push_str(&format!(
                "- {} in {}: {} on {}{}\n",
                c.theme,
                code(&c.area),
                count(c.item_ids.len(), "item"),
                count(c.files.len(), "file"),
                if escalated {
                    " (escalated: not patched)"
                } else {
                    ""
                }
            ));
            let files: Vec<String> = c.files.iter().map(|f| code(f)).collect();
            out.push_str(&format!("  - files: {}\n", files.join(", ")));
            let items: Vec<String> = c.item_ids.iter().map(|i| md(i)).collect();
            out.push_str(&format!("  - items: {}\n", items.join(", ")));
            out.push_str(&format!("  - hypothesis: {}\n", md(&c.hypothesis)));
        }
        if !self.escalations.is_empty() {
            out.push_str(
                "\nEscalated to a person (no longer patched; the items are left open as \
                 needs-human):\n\n",
            );
            for e in &self.escalations {
                let items: Vec<String> = e.item_ids.iter().map(|i| md(i)).collect();
                out.push_str(&format!(
                    "- {} (after {}): {}\n",
                    md(&e.context),
                    count(e.rounds as usize, "fix round"),
                    items.join(", ")
                ));
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;
    use crate::ci::CiStatus;
    use crate::theme::Theme;

    fn record(id: &str, path: Option<&str>, decision: Decision, outcome: Outcome) -> ItemRecord {
        let mut entry = LedgerEntry::new(id, 1);
        entry.decision = Some(decision);
        entry.outcome = Some(outcome);
        entry.replied = true;
        ItemRecord {
            entry,
            kind: if path.is_some() {
                ItemKind::ReviewThread
            } else {
                ItemKind::IssueComment
            },
            path: path.map(str::to_owned),
            line: path.map(|_| 3),
            fix_kind: None,
            url: None,
            reply: None,
        }
    }

    fn open(id: &str, path: Option<&str>, class: Class) -> Classified {
        Classified {
            item_id: id.to_owned(),
            kind: if path.is_some() {
                ItemKind::ReviewThread
            } else {
                ItemKind::IssueComment
            },
            class,
            reason: String::new(),
            path: path.map(str::to_owned),
            line: None,
            author: None,
            outdated: false,
            url: None,
            replied_round: Some(1),
            waits_for_a_person: false,
        }
    }

    fn input() -> ReportInput {
        let mut fixed = record("T1", Some("src/a.sh"), Decision::CodeChange, Outcome::Fixed);
        fixed.entry.commit = Some("0123456789abcdef0123".into());
        fixed.entry.resolve_authorized = true;
        fixed.entry.resolved = true;
        let mut pending = record(
            "T3",
            Some("src/c.sh"),
            Decision::Invalid,
            Outcome::NotAddressing,
        );
        pending.entry.resolve_authorized = true;
        ReportInput {
            run_id: "r1".into(),
            target: "pull request github.com/o/r#7".into(),
            pr_url: "https://github.com/o/r/pull/7".into(),
            title: "Add *things*".into(),
            status: "converged".into(),
            reason: None,
            rounds: vec![RoundSummary {
                number: 1,
                stage: "converge".into(),
                new_items: 3,
                commits: 1,
                pushed: Some("0123456789abcdef0123".into()),
                ci: Some(CiStatus::Pass),
                stalled: false,
                note: None,
                ended: None,
                stage_times: Vec::new(),
                tail_ms: 0,
            }],
            items: vec![
                pending,
                record("T2", Some("src/b.sh"), Decision::Question, Outcome::Replied),
                fixed,
                record("IC_1", None, Decision::NeedsHuman, Outcome::NeedsHuman),
            ],
            open_items: vec![
                open("T2", Some("src/b.sh"), Class::AwaitingReviewer),
                open("IC_1", None, Class::AwaitingReviewer),
                open("T3", Some("src/c.sh"), Class::ResolveRetry),
            ],
            threads_look: Some(ThreadsLook {
                round: 1,
                stage: ThreadsLook::CONVERGE.into(),
            }),
            ci: None,
            clusters: vec![Cluster {
                theme: Theme::ErrorHandling,
                area: "src".into(),
                files: vec!["src/a.sh".into()],
                item_ids: vec!["T1".into(), "T4".into()],
                hypothesis: "h".into(),
            }],
            escalations: vec![],
            failures: vec![PublicFailure {
                item_id: Some("T3".into()),
                action: "resolve".into(),
                error: "502".into(),
            }],
            agent: AgentUsage {
                providers: vec!["builtin".into()],
                calls: 2,
                millis: 1500,
                tokens: None,
                cost_usd: None,
                roles: vec![RoleUsage {
                    role: "triage".into(),
                    providers: vec!["builtin".into()],
                    calls: 2,
                    millis: 1500,
                    input_tokens: Some(10),
                    output_tokens: Some(5),
                    cost_usd: Some(0.25),
                }],
            },
            worktree_kept: None,
            attention: Vec::new(),
        }
    }

    #[test]
    fn outcomes_and_thread_lists() {
        let report = build(&input());
        let words: Vec<&str> = report
            .outcomes
            .iter()
            .map(|g| outcome_word(g.outcome))
            .collect();
        assert_eq!(words, ["fixed", "not-addressing", "replied", "needs-human"]);
        assert_eq!(report.resolved.len(), 1);
        assert_eq!(report.replied.len(), 4);
        assert_eq!(
            report
                .authorized_unresolved
                .iter()
                .map(|t| t.item_id.as_str())
                .collect::<Vec<_>>(),
            ["T3"]
        );
        assert_eq!(report.awaiting_reviewer.len(), 2);
        assert!(!report.review_threads.clear);
        assert_eq!(
            report.review_threads.summary,
            "no, 1 deliberately-open thread: src/b.sh; 1 thread whose resolve has not succeeded: src/c.sh"
        );
        assert!(report.converged);
    }

    #[test]
    fn markdown_is_deterministic_and_escapes_untrusted_text() {
        let a = build(&input()).to_markdown();
        let mut shuffled = input();
        shuffled.items.reverse();
        shuffled.open_items.reverse();
        let b = build(&shuffled).to_markdown();
        assert_eq!(a, b);
        assert!(a.contains("Add \\*things\\*"), "{a}");
        assert!(
            a.contains("Review threads clear: no, 1 deliberately-open thread"),
            "{a}"
        );
        assert!(a.contains("commit `0123456789ab`"), "{a}");
        assert!(a.contains("resolve T3: 502"), "{a}");
        assert!(a.contains("Convergence is not mergeability"), "{a}");
        assert!(a.contains("Time: 1.5s"), "{a}");
        assert!(
            a.contains("- triage (builtin): 2 call(s), 1.5s, tokens 10 in / 5 out, $0.2500"),
            "{a}"
        );
    }

    #[test]
    fn the_clusters_section_shows_signals_theme_sources_clusters_isolated_and_escalations() {
        use crate::cluster::{escalation_context, AreaKey, GateDecision};

        let key = AreaKey::new(Theme::ErrorHandling, "src/store");
        let escalation = Escalation {
            key: key.clone(),
            item_ids: vec!["T10".into(), "T9".into()],
            rounds: 2,
            context: escalation_context(&key),
        };
        let mut i = input();
        i.escalations = vec![escalation.clone()];
        i.clusters.push(Cluster {
            theme: Theme::ErrorHandling,
            area: "src/store".into(),
            files: vec!["src/store/a.sh".into(), "src/store/b.sh".into()],
            item_ids: vec!["T10".into(), "T9".into()],
            hypothesis: "h2".into(),
        });
        let round1 = ClusterReport {
            version: ClusterReport::VERSION,
            round: 1,
            gate: GateDecision {
                open: true,
                signals: vec![GateSignal::Volume { count: 5, min: 4 }],
            },
            clusters: i.clusters[..1].to_vec(),
            isolated: vec!["T2".into(), "T3".into(), "IC_1".into()],
            escalations: vec![],
            themes: vec![
                ItemTheme {
                    id: "T1".into(),
                    theme: Theme::ErrorHandling,
                    source: ThemeSource::Agent,
                },
                ItemTheme {
                    id: "T2".into(),
                    theme: Theme::Other,
                    source: ThemeSource::Lexical,
                },
                ItemTheme {
                    id: "T4".into(),
                    theme: Theme::ErrorHandling,
                    source: ThemeSource::Agent,
                },
            ],
            just_fixed_files: None,
        };
        let round3 = ClusterReport {
            round: 3,
            gate: GateDecision {
                open: true,
                signals: vec![GateSignal::ReentryWithinRun],
            },
            clusters: i.clusters[1..].to_vec(),
            isolated: vec![],
            escalations: vec![escalation],
            themes: vec![],
            ..round1.clone()
        };
        let report = build(&i)
            .with_cluster_rounds([ClusterRound::from(&round3), ClusterRound::from(&round1)]);
        assert_eq!(
            report
                .cluster_rounds
                .iter()
                .map(|r| r.round)
                .collect::<Vec<_>>(),
            [1, 3]
        );
        let md = report.to_markdown();
        let section = &md[md.find("## Clusters").unwrap()..md.find("## Needs attention").unwrap()];
        for expected in [
            "- Round 1: opened by 5 new items >= cluster.min_volume 4; 1 cluster, 3 isolated items, 0 escalations\n  - themes from the triage agent: T1 error-handling, T4 error-handling\n  - lexical themes (no agent theme): T2 other\n",
            "- Round 3: opened by re-entry: new items after a fix round of this run; 1 cluster, 0 isolated items, 1 escalation\n\n",
            "- error-handling in `src`: 2 items on 1 file\n",
            "- error-handling in `src/store`: 2 items on 2 files (escalated: not patched)\n",
            "  - files: `src/store/a.sh`, `src/store/b.sh`",
            "  - files: `src/a.sh`",
            "  - items: T1, T4",
            "  - hypothesis: h",
            "- several rounds of feedback on error-handling in src/store suggest a deeper issue (after 2 fix rounds): T10, T9",
        ] {
            assert!(section.contains(expected), "missing {expected:?} in\n{section}");
        }
        // The JSON twin carries the same, and reads back.
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(
            json["cluster_rounds"][1]["signals"][0]["kind"],
            "reentry-within-run"
        );
        assert_eq!(json["cluster_rounds"][0]["isolated"], 3);
        assert_eq!(json["cluster_rounds"][0]["themes"][1]["source"], "lexical");
        let back: Report = serde_json::from_value(json).unwrap();
        assert_eq!(back, report);
    }

    #[test]
    fn without_clusters_the_section_says_none_was_formed() {
        let mut i = input();
        i.clusters.clear();
        let md = build(&i).to_markdown();
        assert!(
            md.contains("## Clusters\n\nNo cluster was formed.\n"),
            "{md}"
        );
        assert!(!md.contains("Cluster gate"), "{md}");
        assert!(!md.contains("Escalated"), "{md}");
    }

    #[test]
    fn commits_never_pushed_are_marked_in_the_rounds_table() {
        let mut i = input();
        i.rounds.push(RoundSummary {
            number: 2,
            stage: "push".into(),
            new_items: 2,
            commits: 2,
            pushed: None,
            ci: None,
            stalled: false,
            note: Some("the push was rejected".into()),
            ended: None,
            stage_times: Vec::new(),
            tail_ms: 0,
        });
        let md = build(&i).to_markdown();
        assert!(
            md.contains("| 1 | converge | 3 | 1 | `0123456789ab` |"),
            "{md}"
        );
        assert!(md.contains("| 2 | push | 2 | 2 (not pushed) | - |"), "{md}");
    }

    #[test]
    fn the_rounds_table_says_where_each_round_ended_and_how_long_its_stages_took() {
        let mut i = input();
        i.rounds[0].ended = Some("next round".into());
        i.rounds[0].stage_times = vec![
            StageTime {
                stage: "pr-state".into(),
                ms: 120,
            },
            StageTime {
                stage: "ci".into(),
                ms: 6_240,
            },
            StageTime {
                stage: "converge".into(),
                ms: 80,
            },
        ];
        i.rounds.push(RoundSummary {
            number: 2,
            stage: "cluster".into(),
            new_items: 2,
            commits: 0,
            pushed: None,
            ci: None,
            stalled: false,
            note: Some("4 reply-only decisions await approval".into()),
            ended: Some("paused".into()),
            stage_times: vec![StageTime {
                stage: "pr-state".into(),
                ms: 50,
            }],
            tail_ms: 1_500,
        });
        let md = build(&i).to_markdown();
        assert!(md.contains("| 1 | converge, then next round | 3 |"), "{md}");
        assert!(md.contains("| 2 | cluster, then paused | 2 |"), "{md}");
        assert!(
            md.contains("- Round 1: pr-state 0.1s, ci 6.2s, converge 0.1s; total 6.4s\n"),
            "{md}"
        );
        assert!(
            md.contains("- Round 2: pr-state 0.1s, then 1.5s; total 1.6s\n"),
            "{md}"
        );
        // An old run's summary (no times) still reads.
        let old: RoundSummary = serde_json::from_value(serde_json::json!({
            "number": 1, "stage": "converge", "new_items": 0, "commits": 0,
            "pushed": null, "ci": null, "stalled": false, "note": null
        }))
        .unwrap();
        assert_eq!(old.ended_at(), "converge");
        assert_eq!(old.times_line(), None);
    }

    #[test]
    fn clear_threads_say_yes() {
        let mut i = input();
        i.open_items.clear();
        let report = build(&i);
        assert!(report.review_threads.clear);
        assert_eq!(report.review_threads.summary, "yes");
        assert!(report.to_markdown().contains("Review threads clear: yes"));
    }

    fn new_thread(id: &str, path: &str) -> Classified {
        Classified {
            replied_round: None,
            waits_for_a_person: false,
            ..open(id, Some(path), Class::New)
        }
    }

    /// A run that stopped before it ever saw the threads (a failure at
    /// pr-state) knows nothing: the summary says so, never `yes`.
    #[test]
    fn without_a_look_at_the_threads_clear_is_unknown() {
        let mut i = input();
        i.open_items.clear();
        i.threads_look = None;
        let report = build(&i);
        assert!(!report.review_threads.known);
        assert!(!report.review_threads.clear);
        assert!(report.review_threads.summary.starts_with("unknown"));
        assert!(report
            .to_markdown()
            .contains("Review threads clear: unknown: the run stopped before"));
    }

    /// Table: what the run last saw, what it did after, and the sentence.
    #[test]
    fn the_summary_states_what_was_seen_and_done_after_the_look() {
        let at_threads = ThreadsLook {
            round: 2,
            stage: "threads".into(),
        };
        let eight: Vec<Classified> = (1..=8)
            .map(|n| new_thread(&format!("T{n}"), &format!("src/f{}.sh", n % 3)))
            .collect();
        let replied_after = |id: &str, round: u32, authorized: bool, resolved: bool| {
            let mut r = record(id, Some("src/f1.sh"), Decision::Question, Outcome::Replied);
            r.entry.round = round;
            r.entry.resolve_authorized = authorized;
            r.entry.resolved = resolved;
            r
        };
        /// What, the look's classification, the ledger after it, the look,
        /// the expected sentence.
        type Case = (
            &'static str,
            Vec<Classified>,
            Vec<ItemRecord>,
            ThreadsLook,
            &'static str,
        );
        let cases: Vec<Case> = vec![
            (
                "paused at approval: eight new threads",
                eight.clone(),
                vec![],
                at_threads.clone(),
                "no, 8 threads not handled yet: src/f0.sh, src/f1.sh, src/f2.sh \
                 (as seen at the threads stage of round 2; not looked at since)",
            ),
            (
                "a reply after the look leaves the thread open",
                vec![new_thread("T1", "src/f1.sh")],
                vec![replied_after("T1", 2, false, false)],
                at_threads.clone(),
                "no, 1 thread replied to, left open: src/f1.sh \
                 (as seen at the threads stage of round 2; not looked at since)",
            ),
            (
                "an authorized resolve that failed after the look",
                vec![new_thread("T1", "src/f1.sh")],
                vec![replied_after("T1", 2, true, false)],
                at_threads.clone(),
                "no, 1 thread whose resolve has not succeeded: src/f1.sh \
                 (as seen at the threads stage of round 2; not looked at since)",
            ),
            (
                "a resolve that succeeded after the look closes it",
                vec![new_thread("T1", "src/f1.sh")],
                vec![replied_after("T1", 2, true, true)],
                at_threads.clone(),
                "yes (as seen at the threads stage of round 2; not looked at since)",
            ),
            (
                "a reply of an earlier round does not count as handled now",
                vec![new_thread("T1", "src/f1.sh")],
                vec![replied_after("T1", 1, false, false)],
                at_threads.clone(),
                "no, 1 thread not handled yet: src/f1.sh \
                 (as seen at the threads stage of round 2; not looked at since)",
            ),
            (
                "a pending-review stop still counts what pr-state saw",
                vec![new_thread("T1", "src/f1.sh"), new_thread("T2", "src/f2.sh")],
                vec![],
                ThreadsLook {
                    round: 1,
                    stage: "pr-state".into(),
                },
                "no, 2 threads not handled yet: src/f1.sh, src/f2.sh \
                 (as seen at the pr-state stage of round 1; not looked at since)",
            ),
            (
                "the post-CI re-fetch saw nothing open",
                vec![],
                vec![],
                ThreadsLook {
                    round: 3,
                    stage: ThreadsLook::CONVERGE.into(),
                },
                "yes",
            ),
        ];
        for (what, open_items, items, look, expected) in cases {
            let mut i = input();
            i.open_items = open_items;
            i.items = items;
            i.threads_look = Some(look);
            let report = build(&i);
            assert_eq!(report.review_threads.summary, expected, "{what}");
            assert_eq!(
                report.review_threads.clear,
                expected.starts_with("yes"),
                "{what}"
            );
            assert!(report.review_threads.known, "{what}");
        }
    }

    /// Property: whatever the look and the ledger, `yes` is said only when
    /// no thread of the look is left open, and every open thread of the look
    /// that the run did not resolve is counted.
    #[test]
    fn yes_only_when_every_seen_thread_is_closed() {
        let classes = [Class::New, Class::ResolveRetry, Class::AwaitingReviewer];
        for n in 0..3usize.pow(4) * 4 {
            let mut i = input();
            i.items.clear();
            i.open_items.clear();
            let mut open_left = 0;
            for k in 0..4 {
                let class = classes[(n / 3usize.pow(k)) % 3];
                let id = format!("T{k}");
                i.open_items.push(open(&id, Some("src/x.sh"), class));
                let resolved_after = (n / 81) == k as usize;
                if resolved_after {
                    let mut r = record(
                        &id,
                        Some("src/x.sh"),
                        Decision::Invalid,
                        Outcome::NotAddressing,
                    );
                    r.entry.round = 1;
                    r.entry.resolve_authorized = true;
                    r.entry.resolved = true;
                    i.items.push(r);
                } else {
                    open_left += 1;
                }
            }
            let report = build(&i);
            let t = &report.review_threads;
            assert_eq!(
                t.deliberately_open.len() + t.other_open.len(),
                open_left,
                "{n}"
            );
            assert_eq!(t.clear, open_left == 0, "{n}");
            assert_eq!(t.summary.starts_with("yes"), open_left == 0, "{n}");
        }
    }

    #[test]
    fn control_characters_in_paths_are_escaped_in_markdown() {
        let mut i = input();
        i.items = vec![record(
            "T\u{7}1",
            Some("src/\u{1b}[2Jevil\u{202e}hs.sh"),
            Decision::Question,
            Outcome::Replied,
        )];
        i.open_items = vec![open(
            "T\u{7}1",
            Some("src/\u{1b}[2Jevil\u{202e}hs.sh"),
            Class::AwaitingReviewer,
        )];
        i.title = "title \u{202e}evil".into();
        i.worktree_kept = Some("/tmp/\u{1b}]0;x\u{7}".into());
        let md = build(&i).to_markdown();
        assert!(
            !md.chars().any(|c| c != '\n' && crate::escape::is_unsafe(c)),
            "{md:?}"
        );
        assert!(md.contains("`src/\\x1b[2Jevil\\u{202e}hs.sh:3`"), "{md}");
        assert!(md.contains("title \\\\u{202e}evil"), "{md}");
    }

    /// Issue 26 point 7: what a converged loop leaves for a person.
    #[test]
    fn waiting_for_a_person_lists_unresolved_needs_human_items_and_held_ones() {
        let item = |id: &str, path: Option<&str>, resolved: bool| ReportItem {
            item_id: id.into(),
            path: path.map(str::to_owned),
            line: None,
            decision: None,
            commit: None,
            replied: true,
            resolved,
            url: None,
            reply: None,
        };
        let mut report = build(&input());
        report.attention.clear();
        report.outcomes = vec![
            OutcomeGroup {
                outcome: Some(Outcome::Fixed),
                items: vec![item("T_FIXED", Some("a.rs"), true)],
            },
            OutcomeGroup {
                outcome: Some(Outcome::NeedsHuman),
                items: vec![
                    item("T_CRASHED", Some("b.rs"), false),
                    item("T_SOMEONE_RESOLVED", Some("c.rs"), true),
                ],
            },
        ];
        report.attention = vec![
            AttentionItem {
                kind: AttentionKind::NeedsYourDecision,
                path: None,
                line: None,
                item_id: "IC_1".into(),
                url: None,
                excerpt: String::new(),
                why: String::new(),
            },
            AttentionItem {
                kind: AttentionKind::Untrusted,
                path: Some("d.rs".into()),
                line: None,
                item_id: "T_STRANGER".into(),
                url: None,
                excerpt: String::new(),
                why: String::new(),
            },
        ];
        let ids: Vec<String> = report
            .waiting_for_a_person()
            .into_iter()
            .map(|t| t.item_id)
            .collect();
        assert_eq!(ids, ["IC_1", "T_CRASHED"]);
    }

    /// Issue 26 point 7, across runs: an open thread whose last word is a
    /// reply that handed it to a person (an earlier run's, known from its
    /// marker) still waits for one; the report says so, apart from the
    /// threads left open for the reviewer.
    #[test]
    fn an_open_item_handed_to_a_person_earlier_still_waits() {
        let mut i = input();
        i.items.clear();
        i.attention.clear();
        let handed = Classified {
            waits_for_a_person: true,
            ..open("T_EARLIER", Some("src/z.sh"), Class::AwaitingReviewer)
        };
        i.open_items = vec![
            handed,
            open("T_QUESTION", Some("src/q.sh"), Class::AwaitingReviewer),
        ];
        let report = build(&i);
        let ids = |list: Vec<ThreadPath>| -> Vec<String> {
            list.into_iter().map(|t| t.item_id).collect()
        };
        assert_eq!(ids(report.waiting_for_a_person()), ["T_EARLIER"]);
        assert_eq!(ids(report.handed_to_a_person.clone()), ["T_EARLIER"]);
        assert_eq!(ids(report.awaiting_reviewer.clone()), ["T_QUESTION"]);
        let md = report.to_markdown();
        assert!(md.contains("Waiting for a person"), "{md}");
        assert!(md.contains("src/z.sh"), "{md}");
        // Without the flag nothing waits for a person.
        i.open_items[0].waits_for_a_person = false;
        assert!(build(&i).waiting_for_a_person().is_empty());
    }
}
