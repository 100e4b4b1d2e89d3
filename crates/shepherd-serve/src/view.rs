//! What the pages show, read from the store and the run directories.
//!
//! Everything here is read fresh for each request (the engine may be
//! writing while the dashboard reads: SQLite in WAL mode, and artifacts
//! written by rename), and is blocking: handlers call it on the blocking
//! pool. Artifacts a run has not written yet are simply absent.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use shepherd_agent::{TriageAnswer, TriageDecision};
use shepherd_core::classify::Classified;
use shepherd_core::Decision;
use shepherd_engine::{
    effective_status, Approval, ApprovalState, Event, LedgerRecord, Round, Run, RunFile, RunStatus,
    StateDir, Store,
};

use crate::code::{read_files, Code};
use crate::error::ServeError;

/// One row of the runs list.
#[derive(Debug, Clone)]
pub struct RunRow {
    /// The run as stored.
    pub run: Run,
    /// Its status as a person reads it (a dead `running` is `interrupted`).
    pub status: RunStatus,
    /// `run.json`, when it could be read.
    pub file: Option<RunFile>,
    /// The rounds it made.
    pub rounds: usize,
}

/// Every run, newest first, filtered by repository (`owner/name`, a
/// substring of the PR key) and status.
pub fn runs(
    state: &StateDir,
    repo: Option<&str>,
    status: Option<&str>,
) -> Result<Vec<RunRow>, ServeError> {
    let store = Store::open_in(state)?;
    let mut rows = Vec::new();
    for run in store.list_runs()? {
        let status_now = effective_status(&store, &run);
        if status.is_some_and(|s| !s.is_empty() && s != status_now.as_str()) {
            continue;
        }
        if repo.is_some_and(|r| !r.is_empty() && !run.pr.repo.contains(r)) {
            continue;
        }
        let file = shepherd_engine::load_run_file(state, &run.id).ok();
        let rounds = store.rounds(&run.id)?.len();
        rows.push(RunRow {
            run,
            status: status_now,
            file,
            rounds,
        });
    }
    rows.sort_by_key(|r| std::cmp::Reverse(r.run.created_at));
    Ok(rows)
}

/// A comment's excerpt, as `threads.json` keeps it.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct CommentExcerpt {
    /// Its author's login.
    pub author: Option<String>,
    /// Its body (untrusted text, cut to 2,000 characters).
    pub body: String,
}

/// An item's excerpt: its first comment and, when there are more, its last.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Excerpt {
    /// How many comments the thread had.
    pub comments: usize,
    /// The first comment.
    pub first: CommentExcerpt,
    /// The last comment, when there is more than one.
    pub last: Option<CommentExcerpt>,
    /// A thread on several lines: its first line (runs recorded before
    /// the engine kept it have none).
    #[serde(default)]
    pub start_line: Option<u32>,
}

/// What the dashboard reads of `pr-state.json`: the PR head the round saw.
#[derive(Debug, Deserialize)]
struct PrStateFile {
    pr: PrHead,
}

#[derive(Debug, Deserialize)]
struct PrHead {
    head_sha: String,
}

#[derive(Debug, Default, Deserialize)]
struct ThreadsFile {
    #[serde(default)]
    items: Vec<Classified>,
    #[serde(default)]
    untrusted: Vec<String>,
    #[serde(default)]
    excerpts: BTreeMap<String, Excerpt>,
}

/// One stage of a round, from the store's events.
#[derive(Debug, Clone)]
pub struct StageRow {
    /// The stage name (`pr-state`, `ci`, ...).
    pub stage: String,
    /// Its one-line summary.
    pub summary: String,
    /// How long it took: from the previous stage's end (or the round's
    /// start) to this one's, in milliseconds.
    pub millis: i64,
    /// Its artifact in the round directory, when there is one.
    pub artifact: Option<String>,
}

/// One round: its stages and artifacts.
#[derive(Debug, Clone)]
pub struct RoundView {
    /// As stored.
    pub round: Round,
    /// Its stages, in order.
    pub stages: Vec<StageRow>,
    /// The files of its directory.
    pub files: Vec<String>,
    /// Other events of the round (not stage ends).
    pub events: Vec<Event>,
}

/// One item (thread or top-level comment) of a run.
#[derive(Debug, Clone)]
pub struct ItemView {
    /// The item id.
    pub id: String,
    /// The latest classification of it.
    pub classified: Classified,
    /// What it says.
    pub excerpt: Option<Excerpt>,
    /// Whether its opener is outside `[trust]` (reported, not acted on).
    pub untrusted: bool,
    /// Triage's latest word on it.
    pub triage: Option<TriageDecision>,
    /// The ledger's entries of it (this PR, every run), oldest first.
    pub history: Vec<LedgerRecord>,
    /// The file it is on, at the PR head the run last saw it on.
    pub code: Code,
}

impl ItemView {
    /// The ledger's latest entry of the item.
    pub fn latest(&self) -> Option<&LedgerRecord> {
        self.history.last()
    }
}

/// One row of the approval table.
#[derive(Debug, Clone)]
pub struct ApprovalRow {
    /// The item.
    pub item_id: String,
    /// Where it is and what it says.
    pub item: Option<ItemView>,
    /// Triage's decision and reasoning.
    pub triage: TriageDecision,
    /// The approval record, for reply-only items.
    pub approval: Option<Approval>,
    /// The decision that will be acted on.
    pub decision: Decision,
    /// The reply drafted for it (posted unless [`ApprovalRow::held`]).
    pub reply: String,
    /// Whether the reply is held for the user rather than posted: a
    /// `needs-human` whose reply no person wrote, in a run without
    /// `approve.reply_needs_human` (what the engine's replies stage does).
    pub held: bool,
}

impl ApprovalRow {
    /// Whether the item waits for the approver.
    pub fn pending(&self) -> bool {
        self.approval
            .as_ref()
            .is_some_and(|a| a.state == ApprovalState::Pending)
    }
}

/// A whole run.
#[derive(Debug, Clone)]
pub struct RunView {
    /// The run as stored.
    pub run: Run,
    /// Its status as a person reads it.
    pub status: RunStatus,
    /// `run.json`.
    pub file: Option<RunFile>,
    /// Its rounds, oldest first.
    pub rounds: Vec<RoundView>,
    /// Every item the run saw, in the order of its threads' files.
    pub items: Vec<ItemView>,
    /// The approval table of the latest round with approvals recorded:
    /// the round the run waits in for them, or the one they were given in.
    pub approvals: Vec<ApprovalRow>,
    /// That round.
    pub approval_round: Option<u32>,
    /// `report.md`, when written.
    pub report_md: Option<String>,
    /// Files at the top of the run directory.
    pub files: Vec<String>,
    /// Events of the run that belong to no round.
    pub events: Vec<Event>,
    /// Why the last resume started from the dashboard failed
    /// ([`crate::state::RESUME_FAILURE_FILE`]), while the run can be resumed.
    pub resume_failure: Option<String>,
}

impl RunView {
    /// Whether the approver can act on the run now.
    pub fn awaits_approval(&self) -> bool {
        self.status == RunStatus::Paused && self.approvals.iter().any(ApprovalRow::pending)
    }

    /// Whether `shepherd resume` applies.
    pub fn resumable(&self) -> bool {
        matches!(self.status, RunStatus::Paused | RunStatus::Interrupted)
    }
}

/// `approve.reply_needs_human` of the run's recorded configuration
/// (`config.toml`, the effective configuration its worktree stage wrote;
/// the default, `false`, before that). A resume from the dashboard runs
/// `shepherd resume` without `--reply-needs-human`, so this is what holds.
fn reply_needs_human(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("config.toml"))
        .ok()
        .and_then(|text| {
            shepherd_core::config::Config::layered(&[shepherd_core::config::ConfigLayer::repo(
                "config.toml",
                text,
            )])
            .ok()
        })
        .is_some_and(|c| c.approve.reply_needs_human)
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Option<T> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(&text).ok()
}

fn file_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    names
}

/// The artifact a stage writes (the ones whose name is not the stage's).
fn stage_artifact(stage: &str, files: &[String]) -> Option<String> {
    let name = match stage {
        "fix" => "results.json".to_owned(),
        "review" => "pre-push-review.json".to_owned(),
        "converge" => "mergeability.json".to_owned(),
        other => format!("{other}.json"),
    };
    files.iter().find(|f| **f == name).cloned()
}

/// The run `run_id`, with everything the run page shows.
pub fn run(state: &StateDir, run_id: &str) -> Result<RunView, ServeError> {
    let store = Store::open_in(state)?;
    let run = store.run(run_id)?.ok_or(ServeError::NotFound)?;
    let status = effective_status(&store, &run);
    let dir: PathBuf = state.run_dir(run_id)?;
    let file = shepherd_engine::load_run_file(state, run_id).ok();
    let events = store.events(run_id)?;
    let ledger = store.ledger_records_for_pr(&run.pr)?;

    let mut rounds = Vec::new();
    let mut classified: BTreeMap<String, Classified> = BTreeMap::new();
    // The PR head of the round each item was last classified in.
    let mut seen_at: BTreeMap<String, String> = BTreeMap::new();
    let mut excerpts: BTreeMap<String, Excerpt> = BTreeMap::new();
    let mut untrusted: Vec<String> = Vec::new();
    let mut triage: BTreeMap<String, TriageDecision> = BTreeMap::new();
    for round in store.rounds(run_id)? {
        let rdir = dir.join("rounds").join(round.number.to_string());
        let files = file_names(&rdir);
        if let Some(t) = read_json::<ThreadsFile>(&rdir.join("threads.json")) {
            let head = read_json::<PrStateFile>(&rdir.join("pr-state.json")).map(|p| p.pr.head_sha);
            for c in t.items {
                match &head {
                    Some(sha) => seen_at.insert(c.item_id.clone(), sha.clone()),
                    None => seen_at.remove(&c.item_id),
                };
                classified.insert(c.item_id.clone(), c);
            }
            excerpts.extend(t.excerpts);
            untrusted = t.untrusted;
        }
        if let Some(t) = read_json::<TriageAnswer>(&rdir.join("triage.json")) {
            for d in t.items {
                triage.insert(d.id.clone(), d);
            }
        }
        let mut last = round.started_at.as_millis();
        let mut stages = Vec::new();
        let mut other = Vec::new();
        for e in events.iter().filter(|e| e.round == Some(round.number)) {
            if e.kind == "stage" {
                let stage = e.payload["stage"].as_str().unwrap_or("?").to_owned();
                stages.push(StageRow {
                    artifact: stage_artifact(&stage, &files),
                    summary: e.payload["summary"].as_str().unwrap_or("").to_owned(),
                    millis: e.at.as_millis() - last,
                    stage,
                });
                last = e.at.as_millis();
            } else {
                other.push(e.clone());
            }
        }
        rounds.push(RoundView {
            round,
            stages,
            files,
            events: other,
        });
    }

    let mut history: BTreeMap<&str, Vec<LedgerRecord>> = BTreeMap::new();
    for r in &ledger {
        history
            .entry(r.entry.item_id.as_str())
            .or_default()
            .push(r.clone());
    }
    let mut items: Vec<ItemView> = classified
        .into_values()
        .map(|c| ItemView {
            id: c.item_id.clone(),
            excerpt: excerpts.get(&c.item_id).cloned(),
            untrusted: untrusted.contains(&c.item_id),
            triage: triage.get(&c.item_id).cloned(),
            history: history.get(c.item_id.as_str()).cloned().unwrap_or_default(),
            code: Code::NoPlace,
            classified: c,
        })
        .collect();
    if let Some(f) = &file {
        add_code(&mut items, &seen_at, &f.cache_dir);
    }
    items.sort_by(|a, b| {
        (&a.classified.path, a.classified.line, &a.id).cmp(&(
            &b.classified.path,
            b.classified.line,
            &b.id,
        ))
    });

    let mut approvals = Vec::new();
    let mut approval_round = None;
    if let Some(f) = &file {
        // The latest round with approvals: the one the run waits in, or,
        // after it, the one a person decided.
        let mut records = Vec::new();
        for n in (1..=f.round).rev() {
            records = store.approvals(run_id, n)?;
            if !records.is_empty() {
                approval_round = Some(n);
                break;
            }
        }
        let rdir = dir
            .join("rounds")
            .join(approval_round.unwrap_or(f.round).to_string());
        let round_triage = read_json::<TriageAnswer>(&rdir.join("triage.json"))
            .map(|t| t.items)
            .unwrap_or_default();
        let reply_needs_human = reply_needs_human(&dir);
        if !records.is_empty() {
            for t in round_triage {
                let approval = records.iter().find(|a| a.item_id == t.id).cloned();
                let decision = approval.as_ref().map_or(t.decision, |a| a.decision);
                let reply = shepherd_engine::drafted_reply(
                    approval.as_ref().and_then(|a| a.reply_override.as_deref()),
                    Some(&t),
                    decision,
                );
                let held = decision == Decision::NeedsHuman
                    && !reply_needs_human
                    && approval.as_ref().is_none_or(|a| a.reply_override.is_none());
                approvals.push(ApprovalRow {
                    item_id: t.id.clone(),
                    item: items.iter().find(|i| i.id == t.id).cloned(),
                    triage: t,
                    approval,
                    decision,
                    reply,
                    held,
                });
            }
        }
    }

    let resume_failure = matches!(status, RunStatus::Paused | RunStatus::Interrupted)
        .then(|| std::fs::read_to_string(dir.join(crate::state::RESUME_FAILURE_FILE)).ok())
        .flatten()
        .filter(|text| !text.trim().is_empty());
    Ok(RunView {
        resume_failure,
        report_md: std::fs::read_to_string(dir.join("report.md")).ok(),
        files: file_names(&dir),
        events: events.into_iter().filter(|e| e.round.is_none()).collect(),
        run,
        status,
        file,
        rounds,
        items,
        approvals,
        approval_round,
    })
}

/// The file of each review thread with a line, read at the PR head the
/// run last saw it on ([`crate::code`]).
fn add_code(items: &mut [ItemView], seen_at: &BTreeMap<String, String>, git_dir: &Path) {
    let mut wanted = Vec::new();
    for item in items.iter_mut() {
        let c = &item.classified;
        let (Some(path), Some(_)) = (&c.path, c.line) else {
            continue;
        };
        item.code = if c.outdated {
            // Its line is on the commit it was written on; the forge's diff
            // hunk of it is not in the run's artifacts.
            Code::Unavailable("outdated: the lines it was written on are not recorded".to_owned())
        } else if let Some(sha) = seen_at.get(&item.id) {
            wanted.push((sha.clone(), path.clone()));
            Code::NoPlace
        } else {
            Code::Unavailable("the run did not record the commit it saw".to_owned())
        };
    }
    if wanted.is_empty() {
        return;
    }
    let files = read_files(git_dir, &wanted);
    for item in items.iter_mut() {
        let c = &item.classified;
        let (Some(path), Some(sha)) = (&c.path, seen_at.get(&item.id)) else {
            continue;
        };
        if let (Code::NoPlace, Some(found)) = (&item.code, files.get(&(sha.clone(), path.clone())))
        {
            item.code = match found {
                Ok(file) => Code::File(file.clone()),
                Err(why) => Code::Unavailable(why.clone()),
            };
        }
    }
}

/// A fingerprint of what a page of run `run_id` (or, with `None`, the runs
/// list) shows: it changes when a stage ends, a status changes, an
/// approval is given or the ledger grows. Live updates send it.
pub fn version(state: &StateDir, run_id: Option<&str>) -> Result<String, ServeError> {
    let store = Store::open_in(state)?;
    match run_id {
        Some(id) => {
            let run = store.run(id)?.ok_or(ServeError::NotFound)?;
            let status = effective_status(&store, &run);
            let events = store.events(id)?;
            let seq = events.last().map_or(0, |e| e.seq);
            let ledger = store.ledger_records(id)?.len();
            let round = store.rounds(id)?.last().map(|r| r.number).unwrap_or(0);
            let approvals = store
                .approvals(id, round)?
                .iter()
                .map(|a| a.updated_at.as_millis())
                .max()
                .unwrap_or(0);
            Ok(format!(
                "{status}-{}-{seq}-{ledger}-{approvals}",
                run.updated_at.as_millis()
            ))
        }
        None => {
            let runs = store.list_runs()?;
            let mut v = format!("{}", runs.len());
            for run in &runs {
                v.push_str(&format!(
                    "-{}{}",
                    effective_status(&store, run),
                    run.updated_at.as_millis()
                ));
            }
            Ok(v)
        }
    }
}

/// The file `rel` (`report.md`, `rounds/1/threads.json`) of run `run_id`,
/// refusing anything outside the run directory or inside its worktree.
pub fn artifact(state: &StateDir, run_id: &str, rel: &str) -> Result<String, ServeError> {
    let parts: Vec<&str> = rel.split('/').collect();
    let ok_part = |p: &&str| {
        !p.is_empty()
            && !p.starts_with('.')
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    };
    let allowed = match parts.as_slice() {
        [name] => ok_part(name),
        ["rounds", n, name] => n.chars().all(|c| c.is_ascii_digit()) && ok_part(name),
        _ => false,
    };
    if !allowed {
        return Err(ServeError::NotFound);
    }
    let path = state.run_dir(run_id)?.join(rel);
    let meta = std::fs::symlink_metadata(&path).map_err(|_| ServeError::NotFound)?;
    if !meta.is_file() {
        return Err(ServeError::NotFound);
    }
    let bytes = std::fs::read(&path).map_err(|_| ServeError::NotFound)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}
