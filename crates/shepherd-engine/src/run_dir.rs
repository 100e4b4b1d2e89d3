//! The run directory: `run.json` (what the run needs to resume),
//! `config.toml` (the configuration in effect), and one directory per round
//! holding each stage's artifact.
//!
//! ```text
//! runs/<run-id>/
//!   run.json            the run's persisted state (target, round, history)
//!   config-layers.json  the configuration it was started with (recorded
//!                       before the first stage; what a resume uses)
//!   config.toml         the configuration in effect
//!   report.md           the run report, and its JSON twin
//!   report.json
//!   worktree/           the run's git worktree (removed when the run ends well)
//!   rounds/<n>/         pr-state.json worktree.json threads.json triage.json
//!                       clusters.json approval.json results.json validate.json
//!                       verify.log gate.json push.json replies.json ci.json
//!                       mergeability.json report.md report.json
//!                       (+ agent transcripts)
//! ```
//!
//! Every JSON file is written to a temporary name and renamed, so a crash
//! never leaves half a file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use shepherd_core::ci::CiVerdict;
use shepherd_core::classify::{Classified, ItemKind};
use shepherd_core::cluster::{Cluster, Escalation, RoundAreas};
use shepherd_core::converge::GateState;
use shepherd_core::report::{AgentUsage, PublicFailure, RoundSummary};
use shepherd_core::target::Target;

use crate::error::{EngineError, Result};
use crate::store::PrKey;

/// Why a run is paused (what resuming must look at).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PauseKind {
    /// Reply-only decisions await approval.
    Approval,
    /// Reply or resolve calls failed.
    ReplyFailures,
    /// The viewer has a pending review on the PR.
    PendingReview,
    /// The round limit (or a stall) was reached.
    Exhausted,
}

/// Where an item is, for reports (kept from the snapshots the run saw).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ItemInfo {
    /// Thread, issue comment or review body.
    pub kind: ItemKind,
    /// The thread's file.
    pub path: Option<String>,
    /// The thread's line.
    pub line: Option<u32>,
    /// The web URL of the item's first comment.
    #[serde(default)]
    pub url: Option<String>,
}

/// `run.json`: what a run needs to be resumed and reported, beyond the store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunFile {
    /// Format version.
    pub version: u32,
    /// The run id.
    pub run_id: String,
    /// The target.
    pub target: Target,
    /// The PR's key in the store.
    pub pr: PrKey,
    /// The git URL of the repository.
    pub git_url: String,
    /// The forge API URL the run was started with (`--api-url`), so that a
    /// resume talks to the same forge.
    #[serde(default)]
    pub api_url: Option<String>,
    /// The bare cache repository the worktree belongs to.
    pub cache_dir: PathBuf,
    /// The worktree.
    pub worktree_dir: PathBuf,
    /// The current (or last) round; 0 before the first.
    pub round: u32,
    /// How many rounds the run may make (`max_rounds`, extended when a
    /// person resumes a run paused at the limit).
    pub round_limit: u32,
    /// The PR's head branch, once known.
    pub head_ref: Option<String>,
    /// The last commit the forge has from this run (advances after a push).
    pub review_base: Option<String>,
    /// Head commits whose failed jobs were already re-run.
    pub rerun_shas: Vec<String>,
    /// The fix rounds of this run, oldest first, for escalation.
    pub fix_history: Vec<RoundAreas>,
    /// Why the run is paused, when it is.
    pub pause: Option<PauseKind>,
    /// Agent usage so far.
    pub agent: AgentUsage,
    /// One summary per round.
    pub rounds: Vec<RoundSummary>,
    /// Public calls of the last round that failed.
    pub failures: Vec<PublicFailure>,
    /// Clusters formed over the run.
    pub clusters: Vec<Cluster>,
    /// Escalations over the run.
    pub escalations: Vec<Escalation>,
    /// What the cluster stage saw in each round whose gate opened.
    #[serde(default)]
    pub cluster_rounds: Vec<shepherd_core::report::ClusterRound>,
    /// The last round's gate state, for stall detection.
    pub last_gate_state: Option<GateState>,
    /// The last classification of the PR's feedback (for reports).
    pub last_open_items: Vec<Classified>,
    /// When `last_open_items` was seen; `None` while the run has not
    /// looked at the threads (the report then says it does not know).
    #[serde(default)]
    pub threads_look: Option<shepherd_core::report::ThreadsLook>,
    /// The last CI verdict.
    pub last_ci: Option<CiVerdict>,
    /// The failing checks of the last head the run pushed, read and
    /// classified (the repair stage).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ci_failures: Vec<shepherd_core::ci_failure::CheckFailure>,
    /// How many fixes of each failing check (by name) the run has tried;
    /// `ci.repair_attempts` bounds each.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub repair_attempts: std::collections::BTreeMap<String, u32>,
    /// The awaited reviewers' states on the last head waited for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub last_reviewers: Vec<shepherd_core::reviewers::ReviewerOnHead>,
    /// The people whose latest review requests changes on an older head
    /// than the last one looked at.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub last_changes_requested: Vec<shepherd_core::reviewers::ChangesRequested>,
    /// Where each item the run saw lives.
    pub items: BTreeMap<String, ItemInfo>,
    /// The PR's web URL and title, once fetched.
    pub pr_url: String,
    /// The PR's title.
    pub pr_title: String,
    /// Where the worktree was kept, when the run ended badly.
    pub worktree_kept: Option<PathBuf>,
    /// Items Shepherd could not judge (`needs-human`) and reported to the
    /// user instead of answering on the forge, by item id. An item stays
    /// held (not triaged again, not blocking convergence) while nobody has
    /// commented on it since.
    #[serde(default)]
    pub held: BTreeMap<String, HeldItem>,
    /// The untrusted items of the last look at the threads, with why.
    #[serde(default)]
    pub untrusted: Vec<shepherd_core::report::AttentionItem>,
}

/// An item reported to the user, not answered on the forge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeldItem {
    /// The round that held it.
    pub round: u32,
    /// The id of the item's last comment when it was held: a later comment
    /// makes the item new again.
    pub last_comment: Option<String>,
    /// The item as the report lists it (why: triage's reasoning).
    pub item: shepherd_core::report::AttentionItem,
}

impl RunFile {
    /// The current format.
    pub const VERSION: u32 = 1;
}

/// The paths of one run's directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunDir {
    root: PathBuf,
}

impl RunDir {
    /// The run directory at `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        RunDir { root: root.into() }
    }

    /// The directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `run.json`.
    pub fn run_file(&self) -> PathBuf {
        self.root.join("run.json")
    }

    /// `config.toml`.
    pub fn config_file(&self) -> PathBuf {
        self.root.join("config.toml")
    }

    /// `config-layers.json`.
    pub fn config_layers_file(&self) -> PathBuf {
        self.root.join("config-layers.json")
    }

    /// `worktree/`.
    pub fn worktree(&self) -> PathBuf {
        self.root.join("worktree")
    }

    /// `rounds/<n>/`.
    pub fn round(&self, n: u32) -> PathBuf {
        self.root.join("rounds").join(n.to_string())
    }

    /// Create `rounds/<n>/` and return it.
    pub fn create_round(&self, n: u32) -> Result<PathBuf> {
        let dir = self.round(n);
        std::fs::create_dir_all(&dir).map_err(|e| EngineError::io("create", &dir, e))?;
        Ok(dir)
    }

    /// Load `run.json`.
    pub fn load(&self) -> Result<RunFile> {
        read_json(&self.run_file())
    }

    /// Save `run.json`.
    pub fn save(&self, run: &RunFile) -> Result<()> {
        write_json(&self.run_file(), run)
    }
}

/// Write `value` as pretty JSON to `path`, atomically.
pub fn write_json<T: Serialize + ?Sized>(path: &Path, value: &T) -> Result<()> {
    let mut text = serde_json::to_string_pretty(value).map_err(|source| EngineError::Json {
        action: "encode",
        path: path.to_path_buf(),
        source,
    })?;
    text.push('\n');
    write_text(path, &text)
}

/// Write `text` to `path`, atomically (temporary file, then rename).
pub fn write_text(path: &Path, text: &str) -> Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| EngineError::io("create", parent, e))?;
    }
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).map_err(|e| EngineError::io("write", &tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| EngineError::io("rename", path, e))
}

/// Read JSON from `path`.
pub fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T> {
    let text = std::fs::read_to_string(path).map_err(|e| EngineError::io("read", path, e))?;
    serde_json::from_str(&text).map_err(|source| EngineError::Json {
        action: "decode",
        path: path.to_path_buf(),
        source,
    })
}
