//! Approving and rejecting what a paused run awaits (`shepherd approve`,
//! `shepherd reject`, the dashboard), and what its approval request shows.

use crate::error::{EngineError, Result};
use crate::options::{ApprovalChange, ApprovalRequest};
use crate::run_dir::{PauseKind, RunDir};
use crate::store::{Approval, ApprovalState, RunStatus, StateDir, Store, Timestamp};

use super::imp::load_run_file;

/// Approve the pending approvals of the round run `run_id` paused in,
/// applying `changes` (a changed decision, an edited reply) first; returns
/// how many approvals are now approved. Items not named are approved as
/// triaged.
pub fn approve_run(
    state: &StateDir,
    run_id: &str,
    changes: &[ApprovalChange],
    approver: &str,
) -> Result<usize> {
    let mut store = Store::open_in(state)?;
    store.get_run(run_id)?;
    let file = load_run_file(state, run_id)?;
    let round = file.round;
    let existing = store.approvals(run_id, round)?;
    let triage: Vec<shepherd_agent::TriageDecision> =
        crate::run_dir::read_json::<shepherd_agent::TriageAnswer>(
            &RunDir::new(state.run_dir(run_id)?)
                .round(round)
                .join("triage.json"),
        )
        .map(|a| a.items)
        .unwrap_or_default();
    let now = Timestamp::now();
    for change in changes {
        let base = existing
            .iter()
            .find(|a| a.item_id == change.item_id)
            .cloned()
            .or_else(|| {
                triage
                    .iter()
                    .find(|d| d.id == change.item_id)
                    .map(|d| Approval {
                        run_id: run_id.to_owned(),
                        round,
                        item_id: d.id.clone(),
                        decision: d.decision,
                        reply_override: None,
                        approver: None,
                        state: ApprovalState::Pending,
                        updated_at: now,
                    })
            })
            .ok_or_else(|| EngineError::UnknownItem {
                run: run_id.to_owned(),
                round,
                item: change.item_id.clone(),
            })?;
        // A changed decision needs a reply written for it: an earlier
        // override (written for the old decision) does not carry over.
        let decision = change.decision.unwrap_or(base.decision);
        let kept_reply = base
            .reply_override
            .clone()
            .filter(|_| decision == base.decision);
        let reply_override = change.reply.clone().or(kept_reply);
        let triaged = triage
            .iter()
            .find(|d| d.id == change.item_id)
            .map_or(base.decision, |d| d.decision);
        if crate::round::approval::changed_decision_needs_reply(triaged, decision)
            && reply_override
                .as_deref()
                .is_none_or(|t| t.trim().is_empty())
        {
            return Err(EngineError::ReplyNeeded {
                item: change.item_id.clone(),
                triaged: triaged.as_str().to_owned(),
                decision: decision.as_str().to_owned(),
            });
        }
        store.put_approval(&Approval {
            decision,
            reply_override,
            approver: Some(approver.to_owned()),
            state: ApprovalState::Approved,
            updated_at: now,
            ..base
        })?;
    }
    let decided = store.decide_pending(run_id, round, ApprovalState::Approved, approver, now)?;
    if decided == 0 && changes.is_empty() {
        return Err(EngineError::NothingToApprove {
            run: run_id.to_owned(),
        });
    }
    // The pause's reason said decisions await approval: no longer true.
    let run = store.get_run(run_id)?;
    let pending = store
        .approvals(run_id, round)?
        .iter()
        .any(|a| a.state == ApprovalState::Pending);
    if run.status == RunStatus::Paused && file.pause == Some(PauseKind::Approval) && !pending {
        store.set_run_status(
            run_id,
            RunStatus::Paused,
            Some(&format!(
                "round {round}'s decisions are approved (by {approver}); nothing is posted until \
                 `shepherd resume {run_id}`"
            )),
            now,
        )?;
    }
    Ok(store
        .approvals(run_id, round)?
        .iter()
        .filter(|a| a.state == ApprovalState::Approved)
        .count())
}

/// What the approval a paused run awaits shows of each item of its round
/// (path, excerpt, drafted reply, reasoning), as the round saved it; empty
/// when the round saved none.
pub fn approval_request(state: &StateDir, run_id: &str) -> Result<Option<ApprovalRequest>> {
    let file = load_run_file(state, run_id)?;
    let path = RunDir::new(state.run_dir(run_id)?)
        .round(file.round)
        .join(crate::round::approval::APPROVAL_REQUEST);
    Ok(crate::run_dir::read_json::<ApprovalRequest>(&path).ok())
}

/// Reject the pending approvals of run `run_id`: nothing is posted, and
/// the run is marked failed. Returns how many approvals were rejected.
pub fn reject_run(state: &StateDir, run_id: &str, approver: &str) -> Result<usize> {
    let mut store = Store::open_in(state)?;
    let run = store.get_run(run_id)?;
    let file = load_run_file(state, run_id)?;
    let now = Timestamp::now();
    let n = store.decide_pending(run_id, file.round, ApprovalState::Rejected, approver, now)?;
    if n == 0 && run.status != RunStatus::Paused {
        return Err(EngineError::NothingToApprove {
            run: run_id.to_owned(),
        });
    }
    // A run paused for another reason (reply failures, the round limit) is
    // abandoned: a new run of its PR may then start.
    let reason = if n == 0 {
        "abandoned by the approver while paused"
    } else {
        "the approver rejected the triage; nothing was posted"
    };
    store.set_run_status(run_id, RunStatus::Failed, Some(reason), now)?;
    Ok(n)
}
