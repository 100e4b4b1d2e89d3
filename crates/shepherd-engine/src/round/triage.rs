//! Stage 4, triage: only when there are new items. The triage agent gives
//! each one a decision, a theme, reasoning and a reply hint; the set of ids
//! must equal the new items exactly (one retry with the error, then the
//! round fails). A resumed round reuses the decisions it saved
//! (`triage.json`), so an approval given for them still holds.

use shepherd_agent::{check_triage_answer, PrContext, TaskItem, TriageAnswer, TriageTask};

use shepherd_core::PrSnapshot;

use super::answer::{checked, Refused};
use super::guard;
use super::item::{Feedback, WorkItem};
use super::runner::Books;
use super::state::{Items, Round, RoundEnd, Step, Synced, Triage};
use super::workspace::Workspace;
use crate::error::Result;
use crate::options::Stage;
use crate::run_dir::read_json;

/// The agent's view of a work item of `snapshot`; suggestion blocks are
/// read with the forge's own semantics (GitLab's `suggestion:-N+M` differs
/// from GitHub's), and only the viewer's comments with a marker are
/// Shepherd's own replies.
pub(crate) fn task_item(item: &WorkItem, snapshot: &PrSnapshot) -> TaskItem {
    match &item.feedback {
        Feedback::Thread(t) => TaskItem::from_thread_on(t, snapshot.forge, &snapshot.viewer),
        Feedback::TopLevel(c) => TaskItem::from_top_level(c),
    }
}

pub(crate) async fn stage(
    books: &mut Books,
    round: &Round,
    synced: &Synced,
    ws: &Workspace,
    items: &Items,
) -> Result<Step<Triage>> {
    let mut triage = Triage::new();
    if items.work.is_empty() {
        return Ok(Ok(triage));
    }
    let path = round.dir.join("triage.json");
    let mut reused = 0usize;
    if let Ok(saved) = read_json::<TriageAnswer>(&path) {
        for d in saved.items {
            if items.work.iter().any(|w| w.id() == d.id) {
                triage.insert(d.id.clone(), d);
                reused += 1;
            }
        }
    }
    let missing: Vec<&WorkItem> = items
        .work
        .iter()
        .filter(|w| !triage.contains_key(w.id()))
        .collect();
    if !missing.is_empty() {
        let task = TriageTask {
            pr: PrContext::new(synced.snapshot.forge, &synced.snapshot.pr),
            worktree: ws.path().to_path_buf(),
            items: missing
                .iter()
                .map(|w| task_item(w, &synced.snapshot))
                .collect(),
        };
        let agent = ws.agents.triage.clone();
        // The agent validates its answer (schema and the exact set of
        // ids) and retries once itself, showing its errors; the check
        // here only guards against a provider that does not.
        // A read-only role: a change to the worktree fails it closed.
        let call = guard::ReadOnly {
            role: "triage",
            provider: agent.name(),
            dir: task.worktree.clone(),
        };
        let (agent_ref, task_ref) = (&agent, &task);
        let guarded = guard::read_only_call(books, &ws.git, round, call, |ctx| async move {
            agent_ref.triage(task_ref, &ctx).await
        })
        .await?;
        let got = match guarded {
            Ok(got) => got,
            Err(reason) => return Ok(Err(RoundEnd::Failed { reason })),
        };
        let answer = match checked(got, |a| check_triage_answer(&task, a).map_err(|e| vec![e])) {
            Ok(answer) => answer,
            Err(Refused::Failed(error) | Refused::Invalid(error)) => {
                tracing::warn!(%error, "triage answer refused");
                return Ok(Err(RoundEnd::Failed {
                    // The agent's error says what was tried ("answer
                    // invalid after 2 attempts", "stopped: the error is
                    // not one a retry fixes"): no retry is claimed here.
                    reason: format!("triage failed: {error}"),
                }));
            }
        };
        for d in answer.items {
            triage.insert(d.id.clone(), d);
        }
    }
    let all = TriageAnswer {
        items: items
            .work
            .iter()
            .filter_map(|w| triage.get(w.id()).cloned())
            .collect(),
    };
    books.artifact(round, "triage.json", &all)?;
    let mut counts = std::collections::BTreeMap::<String, usize>::new();
    for d in &all.items {
        *counts.entry(d.decision.as_str().to_owned()).or_default() += 1;
    }
    let mut summary = counts
        .iter()
        .map(|(k, v)| format!("{v} {k}"))
        .collect::<Vec<_>>()
        .join(", ");
    if reused > 0 {
        summary.push_str(&format!(" ({reused} reused from the saved triage)"));
    }
    books.stage_done(round, Stage::Triage, summary)?;
    Ok(Ok(triage))
}
