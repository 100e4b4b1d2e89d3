//! `shepherd status`: the runs, or one run, and where they stand.

use std::path::PathBuf;

use anyhow::anyhow;
use clap::Args;
use serde::Serialize;
use shepherd_core::escape::visible;
use shepherd_engine::{effective_status, Approval, ApprovalState, RunStatus, Store};

use crate::error::{CliError, CliResult};
use crate::exit_codes;

use crate::runs::engine_error;
use crate::setup::state_dir;
use crate::ui::outln;

/// Show the runs, or one run in detail (pending approvals, rounds, where its files are)
#[derive(Debug, Args)]
pub(crate) struct StatusArgs {
    /// A run id; without one, every run is listed, newest first
    #[arg(value_name = "RUN")]
    run: Option<String>,

    /// Where the state lives
    #[arg(long, value_name = "DIR", env = "SHEPHERD_STATE_DIR")]
    state_dir: Option<PathBuf>,

    /// Print JSON
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Serialize)]
struct RunLine {
    run_id: String,
    pr: String,
    status: RunStatus,
    reason: Option<String>,
    round: Option<u32>,
    updated_at: String,
}

#[derive(Debug, Serialize)]
struct RunDetail {
    #[serde(rename = "run")]
    line: RunLine,
    target: String,
    pause: Option<shepherd_engine::PauseKind>,
    rounds: Vec<shepherd_core::report::RoundSummary>,
    pending_approvals: Vec<PendingApproval>,
    run_dir: PathBuf,
    worktree_kept: Option<PathBuf>,
    lock_holder: Option<shepherd_engine::LockInfo>,
    /// The reviewer wait of a run in progress, while it lasts.
    #[serde(skip_serializing_if = "Option::is_none")]
    reviewer_wait: Option<shepherd_engine::ReviewerWait>,
}

/// A decision awaiting approval, with what the approver needs to judge it:
/// where the item is, what it says, the reply Shepherd would post.
#[derive(Debug, Serialize)]
struct PendingApproval {
    #[serde(flatten)]
    approval: Approval,
    path: Option<String>,
    line: Option<u32>,
    author: Option<String>,
    url: Option<String>,
    /// The first line of the item's first comment.
    excerpt: Option<String>,
    /// Triage's reasoning.
    reasoning: Option<String>,
    /// The reply that would be posted (the approver's, else the drafted one).
    proposed_reply: Option<String>,
    /// Whether that reply is posted once approved: false for a needs-human
    /// item reported to you only, until you write a reply for it.
    reply_posted: bool,
}

pub(crate) fn cmd_status(args: StatusArgs) -> CliResult<u8> {
    let state = state_dir(args.state_dir)?;
    let store = Store::open_in(&state).map_err(CliError::failure)?;
    let line = |run: &shepherd_engine::Run| RunLine {
        run_id: run.id.clone(),
        pr: run.pr.to_string(),
        status: effective_status(&store, run),
        reason: run.reason.clone(),
        round: shepherd_engine::load_run_file(&state, &run.id)
            .ok()
            .map(|f| f.round),
        updated_at: run.updated_at.to_string(),
    };
    let json = |value: &dyn erased::Json| -> CliResult<u8> {
        outln!(
            "{}",
            value.to_json().map_err(|e| CliError::failure(anyhow!(e)))?
        );
        Ok(exit_codes::SUCCESS)
    };
    let Some(id) = args.run else {
        let runs = store.list_runs().map_err(CliError::failure)?;
        let lines: Vec<RunLine> = runs.iter().map(line).collect();
        if args.json {
            return json(&lines);
        }
        if lines.is_empty() {
            outln!("No runs yet. Start one with `shepherd run PR` or try `shepherd demo`.");
        }
        for l in &lines {
            outln!(
                "{}  {:<11}  {}  round {}{}",
                l.run_id,
                l.status.as_str(),
                l.pr,
                l.round.unwrap_or(0),
                l.reason
                    .as_deref()
                    .map(|r| format!("  ({})", visible(r.lines().next().unwrap_or(""))))
                    .unwrap_or_default()
            );
        }
        return Ok(exit_codes::SUCCESS);
    };
    let run = store.get_run(&id).map_err(|e| engine_error(e.into()))?;
    let file = shepherd_engine::load_run_file(&state, &id).map_err(engine_error)?;
    let request = shepherd_engine::approval_request(&state, &id).map_err(engine_error)?;
    let pending = store
        .approvals(&id, file.round)
        .map_err(CliError::failure)?
        .into_iter()
        .filter(|a| a.state == ApprovalState::Pending)
        .map(|a| {
            let item = request
                .as_ref()
                .and_then(|r| r.items.iter().find(|i| i.item_id == a.item_id));
            let info = file.items.get(&a.item_id);
            PendingApproval {
                path: item
                    .and_then(|i| i.path.clone())
                    .or_else(|| info.and_then(|i| i.path.clone())),
                line: item
                    .and_then(|i| i.line)
                    .or_else(|| info.and_then(|i| i.line)),
                author: item.and_then(|i| i.author.clone()),
                url: item.and_then(|i| i.url.clone()),
                excerpt: item.map(|i| i.excerpt.clone()),
                reasoning: item.map(|i| i.reasoning.clone()),
                proposed_reply: a
                    .reply_override
                    .clone()
                    .or_else(|| item.map(|i| i.reply.clone())),
                reply_posted: a.reply_override.is_some() || item.is_none_or(|i| i.reply_posted),
                approval: a,
            }
        })
        .collect();
    let run_dir = state.run_dir(&id).map_err(CliError::failure)?;
    let line = line(&run);
    // Only a run in progress waits; a wait file left by a run that stopped
    // mid-wait says nothing of now.
    let reviewer_wait = (line.status == RunStatus::Running)
        .then(|| {
            shepherd_engine::reviewer_wait(
                &shepherd_engine::RunDir::new(run_dir.clone()),
                file.round,
            )
        })
        .flatten();
    let detail = RunDetail {
        line,
        target: file.target.to_string(),
        pause: file.pause,
        rounds: file.rounds.clone(),
        pending_approvals: pending,
        run_dir,
        worktree_kept: file.worktree_kept.clone(),
        lock_holder: store.lock(&run.pr).map_err(CliError::failure)?,
        reviewer_wait,
    };
    if args.json {
        return json(&detail);
    }
    let l = &detail.line;
    // Reasons, targets and item ids carry forge text: no raw control or
    // bidi character reaches the terminal.
    outln!("Run {} of {}", l.run_id, visible(&detail.target));
    outln!("  status: {}", l.status.as_str());
    if let Some(reason) = &l.reason {
        outln!("  reason: {}", visible(reason));
    }
    outln!(
        "  round:  {} (updated {})",
        l.round.unwrap_or(0),
        l.updated_at
    );
    for r in &detail.rounds {
        outln!(
            "    round {}: reached {}, {} new item(s), {} commit(s){}",
            r.number,
            r.ended_at(),
            r.new_items,
            r.commits,
            r.ci.map(|c| format!(", CI {c}")).unwrap_or_default()
        );
    }
    if let Some(w) = &detail.reviewer_wait {
        let short: String = w.head.chars().take(7).collect();
        let whom = if w.waiting_for.is_empty() {
            "reading their reviews".to_owned()
        } else {
            w.waiting_for.join(", ")
        };
        // Logins come from the config or the forge: shown escaped.
        outln!(
            "  waiting for reviewers: {} on {short} since {} (round {})",
            visible(&whom),
            w.since,
            w.round
        );
    }
    if !detail.pending_approvals.is_empty() {
        outln!("  awaiting approval:");
        for p in &detail.pending_approvals {
            let a = &p.approval;
            let word = a.decision.as_str();
            let place = match (&p.path, p.line) {
                (Some(path), Some(line)) => visible(&format!("{path}:{line}")),
                (Some(path), None) => visible(path),
                (None, _) => "(conversation)".to_owned(),
            };
            let by = p
                .author
                .as_deref()
                .map(|a| format!(" by @{}", visible(a)))
                .unwrap_or_default();
            outln!("    {place}{by} -> {word}  {}", visible(&a.item_id));
            if let Some(excerpt) = p.excerpt.as_deref().filter(|e| !e.is_empty()) {
                outln!("      says:  {}", visible(excerpt));
            }
            if let Some(why) = p.reasoning.as_deref().and_then(|r| r.lines().next()) {
                outln!("      why:   {}", visible(why));
            }
            match &p.proposed_reply {
                Some(_) if !p.reply_posted => outln!(
                    "      reply: none posted (a needs-human item is reported to you only, \
                     `approve.reply_needs_human = false`); one you give with `--reply` is posted"
                ),
                Some(reply) => outln!(
                    "      reply: {}",
                    visible(reply.lines().next().unwrap_or(""))
                ),
                None => {}
            }
        }
        outln!(
            "  approve with `shepherd approve {id}` (or reject with `shepherd reject {id}`), then `shepherd resume {id}`"
        );
    }
    outln!("  files:  {}", detail.run_dir.display());
    if let Some(kept) = &detail.worktree_kept {
        outln!(
            "  worktree kept at {}",
            visible(&kept.display().to_string())
        );
    }
    if let Some(lock) = &detail.lock_holder {
        outln!(
            "  lock:   held by run {} (pid {} on {})",
            lock.run_id,
            lock.pid,
            lock.hostname
        );
    }
    Ok(exit_codes::SUCCESS)
}

/// Serialize any of the two outputs through one helper.
mod erased {
    pub(super) trait Json {
        fn to_json(&self) -> Result<String, serde_json::Error>;
    }
    impl<T: serde::Serialize> Json for T {
        fn to_json(&self) -> Result<String, serde_json::Error> {
            serde_json::to_string_pretty(self)
        }
    }
}
