//! Stages 16 and 17: the post-CI re-fetch (bots comment while CI runs) and
//! the convergence check: converged exactly when the PR is still open, CI is
//! `PASS`, the re-fetch shows no new item and no resolve is pending retry. A
//! PR closed or merged while CI ran ends the run (not converged, exit 1).
//! Every check writes `mergeability.json`. The round's gate state is recorded for stall
//! detection.

use shepherd_core::ci::CiVerdict;
use shepherd_core::classify::Class;
use shepherd_core::converge::{check, is_stalled, mergeability, ConvergenceInput, GateState};
use shepherd_core::model::PrStatus;
use shepherd_core::reviewers::{ChangesRequested, ReviewerOnHead};

use super::pr_state::{pr_noun, short};
use shepherd_core::config::Config;
use shepherd_forge::Forge;

use super::replies::still_held;
use super::runner::Access;
use super::runner::Books;
use super::state::{Round, RoundEnd};
use super::threads::{classify_snapshot, in_scope, learn_access, trusted};
use crate::error::Result;
use crate::options::Stage;
use crate::store::Timestamp;

/// What the converge summary of a stalled round ends with.
pub(crate) const STALLED_SUFFIX: &str = " (stalled: same state as the previous round)";

/// How the round ends, and whether it stalled (the same state as the
/// previous round).
#[allow(clippy::too_many_arguments)] // a stage's signature says what it reads
pub(crate) async fn stage(
    books: &mut Books,
    forge: &dyn Forge,
    config: &Config,
    access: &mut Access,
    round: &Round,
    ci: &CiVerdict,
    reply_failures: usize,
    reviewers: &[ReviewerOnHead],
    changes_requested: &mut [ChangesRequested],
) -> Result<(RoundEnd, bool)> {
    let trust = &config.trust;
    let snapshot = match forge.snapshot(books.run.target.number).await {
        Ok(s) => s,
        Err(err) => {
            return Ok((
                RoundEnd::Failed {
                    reason: format!(
                        "cannot re-fetch the {} after CI: {err}",
                        pr_noun(books.run.target.forge)
                    ),
                },
                false,
            ))
        }
    };
    let (_, classified, _) = classify_snapshot(books, &snapshot)?;
    let scoped: Vec<_> = classified
        .iter()
        .filter(|c| in_scope(&books.run.target, &snapshot, c))
        .cloned()
        .collect();
    // A person who commented during CI: is their comment feedback?
    if let Err(reason) = learn_access(forge, trust, access, &scoped).await {
        return Ok((RoundEnd::Failed { reason }, false));
    }
    let new_items: Vec<String> = scoped
        .iter()
        .filter(|c| {
            c.class == Class::New
                && trusted(trust, access, c)
                && !still_held(&books.run, &snapshot, &c.item_id)
        })
        .map(|c| c.item_id.clone())
        .collect();
    let resolve_pending: Vec<String> = scoped
        .iter()
        .filter(|c| c.class == Class::ResolveRetry)
        .map(|c| c.item_id.clone())
        .collect();
    let ci = ci.status;
    let convergence = check(&ConvergenceInput {
        pr_state: snapshot.pr.state,
        ci,
        new_items: new_items.clone(),
        resolve_pending,
        reply_failures,
        reviewers: reviewers.to_vec(),
    });
    // A review this run asked again for on this head in an earlier round
    // is still one it asked for.
    for change in changes_requested.iter_mut() {
        change.rerequested = books.run.last_changes_requested.iter().any(|earlier| {
            earlier.rerequested && earlier.login == change.login && earlier.head == change.head
        });
    }
    super::reviewers::settle_change_requests(
        forge,
        &config.reviewers,
        books.run.target.number,
        &classified,
        changes_requested,
    )
    .await;
    let mut record = mergeability(&snapshot, &classified, ci, &convergence);
    record.ci_failures.clone_from(&books.run.ci_failures);
    record.changes_requested = changes_requested
        .iter()
        .map(ChangesRequested::describe)
        .collect();
    books.artifact(round, "mergeability.json", &record)?;
    books.run.last_changes_requested = changes_requested.to_vec();
    books.note_items(&classified);
    books.run.last_open_items = classified.clone();

    let state = GateState::from_snapshot(&snapshot, &scoped, ci);
    let stalled = !convergence.converged
        && convergence.ended.is_none()
        && is_stalled(books.run.last_gate_state.as_ref(), &state);
    let state_json = serde_json::to_value(&state).unwrap_or(serde_json::Value::Null);
    books.store().finish_round(
        &books.run.run_id,
        round.n,
        Some(&state.fingerprint()),
        Some(&state_json),
        Timestamp::now(),
    )?;
    books.run.last_gate_state = Some(state);
    // Feed escalation: the areas of this round's new feedback drew it
    // after the last fix round (filled once, by the next round's items).
    let summary = if convergence.converged {
        format!(
            "converged: CI PASS at {}, nothing new, no resolve pending",
            short(&snapshot.pr.head_sha)
        )
    } else {
        let mut s = format!("not converged: {}", convergence.reasons.join("; "));
        if stalled {
            s.push_str(STALLED_SUFFIX);
        }
        s
    };
    books.stage_done(round, Stage::Converge, summary.clone())?;
    let end = if let Some(state) = convergence.ended {
        let word = if state == PrStatus::Merged {
            "merged"
        } else {
            "closed"
        };
        RoundEnd::Ended {
            reason: format!(
                "the {} was {word} during the round (at {}); nothing more to do",
                pr_noun(books.run.target.forge),
                short(&snapshot.pr.head_sha)
            ),
        }
    } else if convergence.converged {
        RoundEnd::Converged
    } else {
        RoundEnd::Next { note: summary }
    };
    Ok((end, stalled))
}
