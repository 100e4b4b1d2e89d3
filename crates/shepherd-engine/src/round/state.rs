//! The state of one round as its stages build it, and how a round ends.

use std::collections::BTreeMap;
use std::path::PathBuf;

use shepherd_agent::TriageDecision;
use shepherd_core::ci::CiVerdict;
use shepherd_core::classify::Classified;
use shepherd_core::cluster::ClusterReport;
use shepherd_core::model::PrSnapshot;
use shepherd_core::report::PublicFailure;
use shepherd_core::{Decision, Ledger};

use super::item::{Planned, WorkItem};
use super::unit::FixValidationRecord;
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
    /// The PR is closed or merged: nothing more to do.
    Ended { reason: String },
}

/// A stage's verdict: go on, or end the round.
pub(crate) type Flow = std::result::Result<(), RoundEnd>;

/// The state of one round as its stages build it.
pub(crate) struct Round {
    pub(crate) n: u32,
    pub(crate) dir: PathBuf,
    pub(crate) snapshot: Option<PrSnapshot>,
    pub(crate) ledger: Ledger,
    pub(crate) classified: Vec<Classified>,
    /// New, trusted items to triage and act on.
    pub(crate) work: Vec<WorkItem>,
    /// Items carried from an earlier attempt (fixed or approved, not replied).
    pub(crate) carried: Vec<(WorkItem, Planned)>,
    /// Threads whose authorized resolve has not succeeded.
    pub(crate) resolve_retry: Vec<WorkItem>,
    pub(crate) triage: BTreeMap<String, TriageDecision>,
    /// Items a Shepherd commit already on the PR fixes (an earlier run
    /// whose reply was lost), with that commit.
    pub(crate) earlier_fixes: BTreeMap<String, String>,
    pub(crate) approved: BTreeMap<String, Decision>,
    pub(crate) reply_override: BTreeMap<String, String>,
    pub(crate) clusters: Option<ClusterReport>,
    /// Items escalated to a person, with the context sentence.
    pub(crate) escalated: BTreeMap<String, String>,
    /// Every result of the round (new and carried), in reply order.
    pub(crate) planned: Vec<(WorkItem, Planned)>,
    /// The head the round started from (after the sync).
    pub(crate) start_sha: String,
    /// Commits the round made.
    pub(crate) commits: Vec<String>,
    /// What the round pushed.
    pub(crate) pushed: Option<String>,
    pub(crate) failures: Vec<PublicFailure>,
    pub(crate) ci: Option<CiVerdict>,
    pub(crate) stalled: bool,
    /// Fix-validation verdicts of the round's agent fixes (`validate.json`).
    pub(crate) fix_validations: Vec<FixValidationRecord>,
    /// The last verify run: at which HEAD, and whether it passed.
    pub(crate) verified: Option<Verified>,
}

impl Round {
    pub(crate) fn new(n: u32, dir: PathBuf) -> Self {
        Round {
            n,
            dir,
            snapshot: None,
            ledger: Ledger::new(),
            classified: Vec::new(),
            work: Vec::new(),
            carried: Vec::new(),
            resolve_retry: Vec::new(),
            triage: BTreeMap::new(),
            earlier_fixes: BTreeMap::new(),
            approved: BTreeMap::new(),
            reply_override: BTreeMap::new(),
            clusters: None,
            escalated: BTreeMap::new(),
            planned: Vec::new(),
            start_sha: String::new(),
            commits: Vec::new(),
            pushed: None,
            failures: Vec::new(),
            ci: None,
            stalled: false,
            fix_validations: Vec::new(),
            verified: None,
        }
    }

    pub(crate) fn snapshot(&self) -> &PrSnapshot {
        // Every stage after `pr-state` runs with a snapshot: pr_state sets it
        // or ends the round.
        self.snapshot
            .as_ref()
            .unwrap_or_else(|| unreachable!("stages after pr-state always have a snapshot"))
    }
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
