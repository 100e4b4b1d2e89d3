//! The one repair attempt of the validate stage, in the run's worktree,
//! committed by Shepherd.

use std::collections::BTreeSet;
use std::time::Instant;

use serde::Serialize;
use shepherd_agent::{
    check_fix_answer, Agent, FixStatus, FixTask, PrContext, TriageNote, UsageLog,
};
use shepherd_core::config::Config;

use super::command::VerifyCommand;
use super::run::CommandRun;
use crate::error::{EngineError, Result};
use crate::options::is_builtin;
use crate::round::guard;
use crate::round::runner::Books;
use crate::round::state::{Changes, Fixing};
use crate::round::triage::task_item;
use crate::round::workspace::Workspace;
use crate::worktree::{ProtectedPaths, WorktreeError};

/// The repair attempt, as `validate.json` records it.
#[derive(Debug, Serialize)]
pub(super) struct Repair {
    pub(super) provider: String,
    pub(super) items: Vec<String>,
    pub(super) commit: Option<String>,
    pub(super) outcome: String,
}

/// What failed, for the repair: the verify command, its run, the files
/// its output names, and the files the round's commits touched.
#[derive(Clone, Copy)]
pub(super) struct VerifyFailure<'a> {
    pub(super) cmd: &'a VerifyCommand,
    pub(super) run: &'a CommandRun,
    pub(super) named: &'a BTreeSet<String>,
    pub(super) touched: &'a [String],
}

/// One repair attempt in the run's worktree, committed by Shepherd.
pub(super) async fn attempt_repair(
    books: &mut Books,
    config: &Config,
    fixing: Fixing<'_>,
    changes: &mut Changes,
    failure: VerifyFailure<'_>,
) -> Result<Repair> {
    let VerifyFailure {
        cmd,
        run: failed,
        named,
        touched,
    } = failure;
    let round = fixing.round;
    let Some((agent, role)) = repair_agent(fixing.ws) else {
        return Ok(Repair {
            provider: "builtin".to_owned(),
            items: Vec::new(),
            commit: None,
            outcome: "no repair: the builtin provider makes no repair attempt".to_owned(),
        });
    };
    // The round's own fixes whose commit touches a file the failure
    // names; all of them when it names none.
    let mut fixed = Vec::new();
    for (w, p) in &changes.planned {
        if p.carried {
            continue;
        }
        if let Some(sha) = p.result.commit.clone() {
            let files = fixing.ws.git(move |wt| wt.files_of_commit(&sha)).await?;
            fixed.push((w.clone(), files));
        }
    }
    let blamed: Vec<_> = fixed
        .iter()
        .filter(|(_, files)| files.iter().any(|f| named.contains(f)))
        .map(|(w, _)| w.clone())
        .collect();
    let items: Vec<_> = if blamed.is_empty() {
        fixed.into_iter().map(|(w, _)| w).collect()
    } else {
        blamed
    };
    if items.is_empty() {
        return Ok(Repair {
            provider: agent.name().to_owned(),
            items: Vec::new(),
            commit: None,
            outcome: "no repair: no fix of this round to repair".to_owned(),
        });
    }
    let tail: String = {
        let chars: Vec<char> = failed.output.chars().collect();
        chars[chars.len().saturating_sub(3000)..].iter().collect()
    };
    let reasoning = format!(
        "Shepherd's verify command failed after this round's fixes: `{}` {}. Repair the fix \
         so that the command passes, keeping what the comment asked for; change only what the \
         failure needs. The end of its output: {tail}",
        cmd.shown(),
        failed.failure_words()
    );
    let snapshot = &fixing.synced.snapshot;
    let task_items = items
        .iter()
        .map(|w| {
            task_item(w, snapshot).with_triage(TriageNote {
                reasoning: reasoning.clone(),
                reply_hint: fixing
                    .decided
                    .triage
                    .get(w.id())
                    .map(|d| d.reply_hint.clone())
                    .unwrap_or_default(),
            })
        })
        .collect();
    let files_hint: Vec<String> = {
        let hit: Vec<String> = named
            .iter()
            .filter(|f| touched.contains(f))
            .cloned()
            .collect();
        if hit.is_empty() {
            touched.to_vec()
        } else {
            hit
        }
    };
    let task = FixTask {
        pr: PrContext::new(snapshot.forge, &snapshot.pr),
        worktree: fixing.ws.path().to_path_buf(),
        items: task_items,
        cluster: None,
        files_hint,
    };
    let ids: Vec<String> = items.iter().map(|w| w.id().to_owned()).collect();
    fixing.ws.git(|wt| wt.discard_changes()).await?;
    let usage = UsageLog::new();
    let ctx = round.agent_ctx("repair", &usage);
    let started = Instant::now();
    let got =
        guard::writing_call(books, fixing.ws, round, "repair", agent.fix(&task, &ctx)).await?;
    books.account_agent(role, agent.name(), started.elapsed(), &usage);
    let mut record = Repair {
        provider: agent.name().to_owned(),
        items: ids,
        commit: None,
        outcome: String::new(),
    };
    let answer = match fixing
        .ws
        .keep_checked(got, |a| check_fix_answer(&task, a))
        .await?
    {
        Ok(a) => a,
        Err(refused) => {
            record.outcome = refused.said_of("repair agent");
            return Ok(record);
        }
    };
    if answer
        .outcomes
        .iter()
        .all(|o| o.status == FixStatus::Blocked)
    {
        fixing.ws.git(|wt| wt.discard_changes()).await?;
        record.outcome = "the repair agent could not repair it (blocked)".to_owned();
        return Ok(record);
    }
    let changed = fixing.ws.git(|wt| wt.changed_paths()).await?;
    if changed.is_empty() {
        record.outcome = "the repair agent changed nothing".to_owned();
        return Ok(record);
    }
    let protected = ProtectedPaths::new(&config.paths.protected)?;
    let message = format!(
        "shepherd: repair `{}` after the review fixes\n\nReview threads: {}\n",
        cmd.shown(),
        record.items.join(", ")
    );
    let files = changed.clone();
    let committed = fixing
        .ws
        .git(move |wt| Ok(wt.commit_files(&message, &files, &protected)))
        .await?;
    fixing.ws.git(|wt| wt.discard_changes()).await?;
    match committed {
        Ok(sha) => {
            changes.commits.push(sha.0.clone());
            books.event(
                Some(round.n),
                "commit",
                serde_json::json!({ "sha": sha.0, "items": record.items, "files": changed, "unit": "repair" }),
            )?;
            record.outcome = "repaired and committed".to_owned();
            record.commit = Some(sha.0);
        }
        Err(e @ (WorktreeError::ProtectedPath { .. } | WorktreeError::NothingToCommit)) => {
            record.outcome = format!("the repair was refused: {e}");
        }
        Err(e) => return Err(EngineError::Worktree(e)),
    }
    Ok(record)
}

/// The agent that repairs a fix that broke the verify command: the
/// fix-validation role's provider, else the fix role's; none when both are
/// builtin.
fn repair_agent(ws: &Workspace) -> Option<(std::sync::Arc<dyn Agent>, &'static str)> {
    let (checks, agents) = (&ws.checks, &ws.agents);
    if !is_builtin(checks.fix_validation.as_ref()) {
        Some((checks.fix_validation.clone(), "fix-validation"))
    } else if !is_builtin(agents.fix.as_ref()) {
        Some((agents.fix.clone(), "fix"))
    } else {
        None
    }
}
