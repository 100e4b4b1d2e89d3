//! What each stage of a round makes (in pipeline order), and how a round
//! ends.

use std::collections::BTreeMap;
use std::path::PathBuf;

use shepherd_agent::{AgentContext, TriageDecision, UsageLog};
use shepherd_core::ci::CiStatus;
use shepherd_core::classify::Classified;
use shepherd_core::cluster::ClusterReport;
use shepherd_core::model::PrSnapshot;
use shepherd_core::{Decision, Ledger};

use super::item::{Planned, WorkItem};
use super::unit::FixValidationRecord;
use super::workspace::Workspace;
use crate::run_dir::PauseKind;

/// How a round ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RoundEnd {
    /// CI green, nothing new, nothing pending: the run converged.
    Converged,
    /// Not converged; another round may follow.
    Next { note: String },
    /// The push was rejected (someone pushed meanwhile): re-sync and re-run.
    Restart { note: String },
    /// The run waits for a person.
    Paused { kind: PauseKind, reason: String },
    /// The run failed.
    Failed { reason: String },
    /// A configuration file the run read (the base branch's, the PR
    /// head's) is invalid: the run fails, as on bad input (the CLI exits as
    /// for a bad user config).
    InvalidConfig { reason: String },
    /// The PR is closed or merged: nothing more to do.
    Ended { reason: String },
}

/// A stage's verdict: go on, or end the round.
pub(crate) type Flow = std::result::Result<(), RoundEnd>;

/// A stage's product, or how it ended the round.
pub(crate) type Step<T> = std::result::Result<T, RoundEnd>;

/// Which round the stages work on, and where its artifacts go: what every
/// stage is given. What a stage makes, it returns (the types below, in
/// pipeline order), so a stage cannot run before the one it reads from.
pub(crate) struct Round {
    pub(crate) n: u32,
    pub(crate) dir: PathBuf,
}

impl Round {
    pub(crate) fn new(n: u32, dir: PathBuf) -> Self {
        Round { n, dir }
    }

    /// The context of one agent call of this round: transcripts in
    /// `rounds/N/agents/<label>.attempt-K.json`, usage into `usage`.
    pub(crate) fn agent_ctx(&self, label: &str, usage: &UsageLog) -> AgentContext {
        AgentContext::new(self.dir.join("agents"), label).with_usage(usage.clone())
    }
}

/// pr-state and worktree: the PR as fetched, and the head the round starts
/// from (after the sync).
pub(crate) struct Synced {
    pub(crate) snapshot: PrSnapshot,
    pub(crate) start_sha: String,
}

/// threads: the PR's feedback, classified, and what the round acts on.
pub(crate) struct Items {
    /// The PR's ledger (the store's, and what Shepherd's markers say).
    pub(crate) ledger: Ledger,
    pub(crate) classified: Vec<Classified>,
    /// New, trusted items to triage and act on.
    pub(crate) work: Vec<WorkItem>,
    /// Items carried from an earlier attempt (fixed or approved, not replied).
    pub(crate) carried: Vec<(WorkItem, Planned)>,
    /// Threads whose authorized resolve has not succeeded.
    pub(crate) resolve_retry: Vec<WorkItem>,
}

/// triage: each new item's decision, by item id.
pub(crate) type Triage = BTreeMap<String, TriageDecision>;

/// triage, earlier fixes and cluster: what each new item is.
pub(crate) struct Triaged {
    pub(crate) triage: Triage,
    /// Items a Shepherd commit already on the PR fixes (an earlier run
    /// whose reply was lost), with that commit.
    pub(crate) earlier_fixes: BTreeMap<String, String>,
    pub(crate) clusters: Option<ClusterReport>,
}

/// approval: the decisions the round acts on.
pub(crate) struct Decided {
    pub(crate) triage: Triage,
    pub(crate) earlier_fixes: BTreeMap<String, String>,
    pub(crate) clusters: Option<ClusterReport>,
    pub(crate) approved: BTreeMap<String, Decision>,
    pub(crate) reply_override: BTreeMap<String, String>,
}

impl From<Triaged> for Decided {
    /// Nothing approved yet.
    fn from(t: Triaged) -> Self {
        Decided {
            triage: t.triage,
            earlier_fixes: t.earlier_fixes,
            clusters: t.clusters,
            approved: BTreeMap::new(),
            reply_override: BTreeMap::new(),
        }
    }
}

/// What the fix stage's fixers (and validate's repair) are told: the PR,
/// the worktree and agents, and the decisions.
#[derive(Clone, Copy)]
pub(crate) struct Fixing<'a> {
    pub(crate) round: &'a Round,
    pub(crate) synced: &'a Synced,
    pub(crate) ws: &'a Workspace,
    pub(crate) decided: &'a Decided,
}

/// What the round changed: made by fix, extended by validate (a repair
/// commit, the verify run) and review (a fix commit of its findings). Each
/// of those stages, and revalidate and the gate, hands it on in its own
/// type below, so the compiler keeps their order.
#[derive(Default)]
pub(crate) struct Changes {
    /// Every result of the round (new and carried), in reply order.
    pub(crate) planned: Vec<(WorkItem, Planned)>,
    /// Commits the round made.
    pub(crate) commits: Vec<String>,
    /// Fix-validation verdicts of the round's agent fixes (`validate.json`).
    pub(crate) fix_validations: Vec<FixValidationRecord>,
    /// The last verify run: at which HEAD, and whether it passed.
    pub(crate) verified: Option<Verified>,
}

/// fix: the round's fixes, committed, and their fix-validation verdicts.
pub(crate) struct Fixed(pub(crate) Changes);

/// validate: the fixes, with the verify command's verdict on them (and a
/// repair commit when one made it pass).
pub(crate) struct Validated(pub(crate) Changes);

/// review: the validated changes, with the fix commit of the pre-push
/// review's findings that held.
pub(crate) struct Reviewed(pub(crate) Changes);

/// revalidate: the reviewed changes, their HEAD verified (when the round
/// made a commit).
pub(crate) struct Revalidated(pub(crate) Changes);

/// gate: the changes the honesty gate let through, and only those go public
/// (push, replies).
pub(crate) struct Gated(pub(crate) Changes);

/// What the run's summary of a round counts, as far as the round got.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    /// New and carried items.
    pub(crate) items: usize,
    /// Commits the round made.
    pub(crate) commits: usize,
    /// What the round pushed.
    pub(crate) pushed: Option<String>,
    pub(crate) ci: Option<CiStatus>,
    /// Whether converge found the same state as the previous round.
    pub(crate) stalled: bool,
}

/// The last verify run of a round: what revalidate starts from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Verified {
    /// The HEAD it ran on.
    pub(crate) head: String,
    /// Whether it passed.
    pub(crate) passed: bool,
    /// Why the push must be refused, when it did not pass.
    pub(crate) reason: Option<String>,
}
