//! The records the store reads and writes.

use serde::{Deserialize, Serialize};
use shepherd_core::{Decision, ForgeKind, LedgerEntry, RepoRef};

use super::error::{Result, StoreError};
use super::timestamp::Timestamp;

/// Identifies one PR/MR across runs: forge, host, repository and number.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PrKey {
    /// GitHub or GitLab.
    pub forge: ForgeKind,
    /// The host, lowercased (`github.com`).
    pub host: String,
    /// `owner/name` (GitLab: the project's full path).
    pub repo: String,
    /// The PR/MR number.
    pub number: u64,
}

impl PrKey {
    /// A key; the host is lowercased.
    pub fn new(forge: ForgeKind, host: &str, repo: &str, number: u64) -> Self {
        PrKey {
            forge,
            host: host.to_ascii_lowercase(),
            repo: repo.to_string(),
            number,
        }
    }

    /// The key of PR `number` of `repo`.
    pub fn from_repo(forge: ForgeKind, repo: &RepoRef, number: u64) -> Self {
        PrKey::new(forge, &repo.host, &repo.full_name(), number)
    }
}

impl std::fmt::Display for PrKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}/{}#{}",
            self.forge, self.host, self.repo, self.number
        )
    }
}

/// Check that a run id is safe as a directory name.
pub fn validate_run_id(run: &str) -> Result<()> {
    let ok = !run.is_empty()
        && run.len() <= 128
        && !run.starts_with('.')
        && run
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(StoreError::InvalidRunId {
            run: run.to_string(),
        })
    }
}

macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident, $column:literal, { $($(#[$vmeta:meta])* $variant:ident => $s:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "lowercase")]
        pub enum $name {
            $($(#[$vmeta])* $variant),+
        }

        impl $name {
            /// The word stored in the database and shown to users.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $s),+
                }
            }

            pub(crate) fn parse(s: &str) -> Result<Self> {
                match s {
                    $($s => Ok($name::$variant),)+
                    other => Err(StoreError::Corrupt { column: $column, value: other.to_string() }),
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

string_enum!(
    /// Where a run stands.
    RunStatus, "runs.status", {
        /// Rounds are being worked.
        Running => "running",
        /// Waiting for a person (approval, reply failures, round limit).
        Paused => "paused",
        /// CI green, nothing new, nothing waits for a person: done.
        Converged => "converged",
        /// The loop is done (it converged by SPEC's rule), but items wait for
        /// a person: the PR is not clear.
        HandedOff => "handed-off",
        /// Stopped with a reason.
        Failed => "failed",
        /// The round limit was reached without convergence.
        Exhausted => "exhausted",
        /// The process stopped without finishing (crash, signal).
        Interrupted => "interrupted",
    }
);

string_enum!(
    /// The state of one approval.
    ApprovalState, "approvals.state", {
        /// Waiting for the approver.
        Pending => "pending",
        /// Approved, possibly with a changed decision or reply.
        Approved => "approved",
        /// Rejected: the run does not act on the item.
        Rejected => "rejected",
    }
);

/// A run as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Run {
    /// The run id (also its directory name).
    pub id: String,
    /// The PR the run works on.
    pub pr: PrKey,
    /// Where the run stands.
    pub status: RunStatus,
    /// Why it stands there (a failure, a pause), when there is a reason.
    pub reason: Option<String>,
    /// When the run was created.
    pub created_at: Timestamp,
    /// When its status last changed.
    pub updated_at: Timestamp,
}

/// A round as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Round {
    /// The run.
    pub run_id: String,
    /// The round number, from 1.
    pub number: u32,
    /// The stage the round reached last (`pr-state`, `threads`, ...).
    pub stage: String,
    /// A hash of the gate state, for stall detection.
    pub gate_hash: Option<String>,
    /// The gate state itself.
    pub gate_state: Option<serde_json::Value>,
    /// When the round started.
    pub started_at: Timestamp,
    /// When the round ended, once it has.
    pub ended_at: Option<Timestamp>,
}

/// An event as stored (append-only).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Its sequence number (increasing in append order).
    pub seq: i64,
    /// The run.
    pub run_id: String,
    /// The round, when the event belongs to one.
    pub round: Option<u32>,
    /// What happened (`stage-started`, `push-rejected`, ...).
    pub kind: String,
    /// Details.
    pub payload: serde_json::Value,
    /// When.
    pub at: Timestamp,
}

/// One approval: the approver's word on one reply-only item of a round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Approval {
    /// The run.
    pub run_id: String,
    /// The round.
    pub round: u32,
    /// The item (thread or comment) id.
    pub item_id: String,
    /// The decision to act on: the triage's, or the approver's change of it.
    pub decision: Decision,
    /// A reply text the approver wrote instead of the drafted one.
    pub reply_override: Option<String>,
    /// Who decided (a login, `auto`, `tty`), once someone has.
    pub approver: Option<String>,
    /// Pending, approved or rejected.
    pub state: ApprovalState,
    /// When the record last changed.
    pub updated_at: Timestamp,
}

/// A ledger entry as stored: the core entry plus what only the store keeps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LedgerRecord {
    /// The run that wrote the entry.
    pub run_id: String,
    /// The core entry (item, round, decision, outcome, commit, flags).
    pub entry: LedgerEntry,
    /// How the fix was made (`suggestion`, `agent`, `cluster`, `metadata`), if any.
    pub fix_kind: Option<String>,
    /// The reply body Shepherd posted or is about to post.
    pub reply_body: Option<String>,
    /// When the entry was written.
    pub at: Timestamp,
}

impl LedgerRecord {
    /// A record of `entry` for `run_id` at `at`, without fix kind or reply body.
    pub fn new(run_id: impl Into<String>, entry: LedgerEntry, at: Timestamp) -> Self {
        LedgerRecord {
            run_id: run_id.into(),
            entry,
            fix_kind: None,
            reply_body: None,
            at,
        }
    }
}

/// Who holds a PR's lock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockInfo {
    /// The PR.
    pub pr: PrKey,
    /// The holding run.
    pub run_id: String,
    /// The holder's process id.
    pub pid: u32,
    /// The holder's host name.
    pub hostname: String,
    /// When the lock was acquired.
    pub acquired_at: Timestamp,
    /// When the holder last refreshed it (the TTL counts from here).
    pub refreshed_at: Timestamp,
}

/// How [`Store::acquire_lock`](super::Store::acquire_lock) got the lock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum LockOutcome {
    /// The lock was free (or already held by this very process and run).
    Acquired,
    /// A stale lock (dead process, or another host's lock past its TTL) was taken over.
    TookOverStale {
        /// The previous holder's process id.
        previous_pid: u32,
        /// The previous holder's host name.
        previous_hostname: String,
        /// The previous holder's run id.
        previous_run: String,
    },
}
