//! The fix unit: what one fix agent works on (a cluster, an isolated item or
//! a metadata item), what its job produced, and what it means for each item.
//! Shared by the fix stage, the parallel fixers and the metadata edits.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;
use shepherd_agent::{FixAnswer, FixStatus, ItemValidation, ThreadOutcome, UsageLog};
use shepherd_core::cluster::Cluster;
use shepherd_core::reply::Said;

use super::item::WorkItem;
use crate::options::PrFields;

/// What a unit fixes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UnitKind {
    /// Code: a diff, merged and committed.
    Code,
    /// The PR's title, description or labels: a forge edit, no commit.
    Metadata,
}

/// One fix agent's work: a cluster, an isolated item, or a metadata item.
#[derive(Debug, Clone)]
pub(crate) struct FixUnit {
    pub(crate) items: Vec<WorkItem>,
    pub(crate) cluster: Option<Cluster>,
    pub(crate) kind: UnitKind,
    /// The files the unit is expected to touch (a cluster's declared files,
    /// an item's file); empty when unknown.
    pub(crate) files: Vec<String>,
    /// Names its transcripts and scratch worktree.
    pub(crate) label: String,
}

impl FixUnit {
    /// Whether the two units may touch the same file (and so must not run
    /// at the same time).
    pub(crate) fn overlaps(&self, other: &FixUnit) -> bool {
        if self.kind == UnitKind::Metadata || other.kind == UnitKind::Metadata {
            return false;
        }
        if self.files.is_empty() || other.files.is_empty() {
            return true;
        }
        self.files.iter().any(|f| other.files.contains(f))
    }

    pub(crate) fn ids(&self) -> Vec<&str> {
        self.items.iter().map(WorkItem::id).collect()
    }
}

/// The fix-validation verdicts of one unit (`validate.json`).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct FixValidationRecord {
    /// The unit (`fix-<id>`, `cluster-fix-<id>`).
    pub(crate) unit: String,
    /// The provider that judged.
    pub(crate) provider: String,
    /// One verdict per item.
    pub(crate) verdicts: Vec<ItemValidation>,
    /// Why there are no verdicts (unsupported, failed).
    pub(crate) note: Option<String>,
    /// What the validator changed in the worktree (a read-only role): the
    /// round stops before the push (see `round::guard`).
    #[serde(skip)]
    pub(crate) read_only_violation: Option<crate::worktree::Violation>,
}

/// One agent call, for the run's usage.
pub(crate) struct AgentCall {
    pub(crate) role: &'static str,
    pub(crate) provider: String,
    pub(crate) elapsed: Duration,
    pub(crate) usage: UsageLog,
}

/// What a fixer job produced.
pub(crate) struct JobOutput {
    /// The fixer's answer, checked against its task; why not otherwise.
    pub(crate) answer: std::result::Result<FixAnswer, JobFailure>,
    /// Paths the fixer changed (for a metadata unit: outside `.shepherd-pr/`).
    pub(crate) changed: Vec<String>,
    /// The fixer's diff against the commit it started from.
    pub(crate) patch: Vec<u8>,
    /// A metadata unit's fields as the fixer got them.
    pub(crate) metadata_before: Option<PrFields>,
    /// A metadata unit's fields as the fixer left them.
    pub(crate) metadata_after: Option<PrFields>,
    /// The fix-validation verdicts, when asked for.
    pub(crate) validation: Option<FixValidationRecord>,
    pub(crate) calls: Vec<AgentCall>,
}

/// Why a fixer job gave no answer. The threads' public replies say only
/// `public`; `detail` (local paths, git's and the agent's own words) stays
/// in the local record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct JobFailure {
    pub(crate) public: &'static str,
    pub(crate) detail: String,
}

impl JobOutput {
    /// No answer, for `public` (the replies' words) because of `detail`.
    pub(crate) fn failed(public: &'static str, detail: String, calls: Vec<AgentCall>) -> Self {
        JobOutput {
            answer: Err(JobFailure {
                public,
                detail: format!("{public}: {detail}"),
            }),
            changed: Vec::new(),
            patch: Vec::new(),
            metadata_before: None,
            metadata_after: None,
            validation: None,
            calls,
        }
    }
}

/// Every item of `unit` blocked for `why`.
pub(crate) fn blocked_all(unit: &FixUnit, why: &str) -> BTreeMap<String, UnitResult> {
    unit.items
        .iter()
        .map(|w| (w.id().to_owned(), UnitResult::blocked(why)))
        .collect()
}

/// Every item of `unit` blocked because its job failed: the replies name
/// only the failure's public reason.
pub(crate) fn blocked_by_failure(
    unit: &FixUnit,
    failure: &JobFailure,
) -> BTreeMap<String, UnitResult> {
    unit.items
        .iter()
        .map(|w| {
            (
                w.id().to_owned(),
                UnitResult::blocked_privately(failure.public, &failure.detail),
            )
        })
        .collect()
}

/// What a fix produced for one item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UnitResult {
    pub(crate) status: FixStatus,
    pub(crate) reply: String,
    pub(crate) summary: String,
    pub(crate) commit: Option<String>,
    /// A metadata edit that the forge shows applied.
    pub(crate) metadata_applied: bool,
}

impl UnitResult {
    /// Not fixed, for `why`: handed to a person.
    pub(crate) fn blocked(why: &str) -> Self {
        UnitResult {
            status: FixStatus::Blocked,
            reply: Said::NotFixed { why }.text(),
            summary: why.to_owned(),
            commit: None,
            metadata_applied: false,
        }
    }

    /// Not fixed: the public reply says `public` (which names nothing the
    /// thread is not about), the local record keeps `detail`.
    pub(crate) fn blocked_privately(public: &str, detail: &str) -> Self {
        UnitResult {
            summary: detail.to_owned(),
            ..UnitResult::blocked(public)
        }
    }
}

/// The commit message: what was fixed, naming the threads (never quoting
/// comment bodies).
pub(crate) fn commit_message(unit: &FixUnit, outcomes: &[ThreadOutcome]) -> String {
    let ids: Vec<&str> = unit.ids();
    let subject = match &unit.cluster {
        Some(c) => format!(
            "shepherd: fix {} in {} ({} review threads)",
            c.theme,
            c.area,
            ids.len()
        ),
        None => match unit.items.first().and_then(|i| i.classified.path.as_ref()) {
            Some(path) => format!("shepherd: address review feedback on {path}"),
            None => "shepherd: address review feedback".to_owned(),
        },
    };
    let mut body = String::new();
    for o in outcomes {
        if o.status != FixStatus::Blocked {
            body.push_str(&format!("- {}: {}\n", o.id, headline(&o.summary)));
        }
    }
    // One trailer per item the commit fixes: a re-run on a fresh state
    // directory (a CI runner) finds the pushed fix of an item whose reply
    // was lost, and replies instead of fixing again.
    let trailers: String = outcomes
        .iter()
        .filter(|o| o.status != FixStatus::Blocked)
        .map(|o| format!("{ITEM_TRAILER}: {}\n", o.id))
        .collect();
    format!(
        "{subject}\n\nReview threads: {}\n\n{body}\n{trailers}",
        ids.join(", ")
    )
}

/// The first line of `text`, at most 200 characters: what a commit
/// message's body says of one change.
pub(crate) fn headline(text: &str) -> String {
    text.lines()
        .next()
        .unwrap_or("")
        .chars()
        .take(200)
        .collect()
}

/// The commit trailer naming an item a Shepherd commit fixes.
pub(crate) const ITEM_TRAILER: &str = "Shepherd-Item";
