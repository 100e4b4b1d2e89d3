//! Stage 11, the honesty gate (SPEC section 4), before anything public: the
//! results must cover the items exactly, match the approved decisions, name
//! commits that exist and touch the right files, and authorize resolves
//! exactly as the table says. A violation stops the round's public steps and
//! fails the run, each violation recorded with its reason (`gate.json`).
//! When the gate passes, every result is written to the ledger ("planned":
//! decided, not yet replied) before the first public call.

use std::collections::BTreeMap;

use serde::Serialize;
use shepherd_core::gate::{check, CommitFact, CommitFacts, GateItem, GateVerdict};
use shepherd_core::Decision;

use shepherd_core::config::Config;

use super::runner::Books;
use super::state::{Decided, Gated, Revalidated, Round, RoundEnd, Step};
use super::workspace::Workspace;
use crate::error::Result;
use crate::options::Stage;
use crate::store::{LedgerRecord, Timestamp};

#[derive(Serialize)]
struct GateArtifact<'a> {
    items: &'a [GateItem],
    approved: &'a BTreeMap<String, Decision>,
    commits: &'a CommitFacts,
    verdict: &'a GateVerdict,
}

/// The honesty gate over the round's changes: only changes it passes
/// go public.
pub(crate) async fn stage(
    books: &mut Books,
    config: &Config,
    round: &Round,
    ws: &Workspace,
    decided: &Decided,
    revalidated: Revalidated,
) -> Result<Step<Gated>> {
    let Revalidated(changes) = revalidated;
    if changes.planned.is_empty() {
        return Ok(Ok(Gated(changes)));
    }
    let items: Vec<GateItem> = changes.planned.iter().map(|(w, _)| w.gate_item()).collect();
    let mut approved = decided.approved.clone();
    for (w, p) in &changes.planned {
        if p.carried {
            approved.insert(w.id().to_owned(), p.result.decision);
        }
    }
    let results: Vec<_> = changes
        .planned
        .iter()
        .map(|(_, p)| p.result.clone())
        .collect();
    let mut facts = CommitFacts::new();
    for sha in results.iter().filter_map(|r| r.commit.clone()) {
        if facts.get(&sha).is_some() {
            continue;
        }
        let probe = sha.clone();
        let (exists, files) = ws
            .git(move |wt| {
                let exists = wt.commit_exists(&probe)?;
                let files = if exists {
                    wt.files_of_commit(&probe)?
                } else {
                    Vec::new()
                };
                Ok((exists, files))
            })
            .await?;
        facts.insert(
            sha,
            CommitFact {
                exists_locally: exists,
                files,
            },
        );
    }
    let verdict = check(&items, &approved, &results, &facts, &config.gate_config());
    books.artifact(
        round,
        "gate.json",
        &GateArtifact {
            items: &items,
            approved: &approved,
            commits: &facts,
            verdict: &verdict,
        },
    )?;
    if !verdict.passed {
        let reasons: Vec<String> = verdict
            .violations
            .iter()
            .map(|v| v.reason.clone())
            .collect();
        books.event(
            Some(round.n),
            "gate-failed",
            serde_json::json!({ "violations": &verdict.violations }),
        )?;
        books.stage_done(
            round,
            Stage::Gate,
            format!(
                "FAILED with {} violation(s): nothing public happens",
                reasons.len()
            ),
        )?;
        return Ok(Err(RoundEnd::Failed {
            reason: format!("the honesty gate refused the round: {}", reasons.join("; ")),
        }));
    }

    // Planned entries: what the round is about to make public.
    let now = Timestamp::now();
    for (_, p) in &changes.planned {
        if p.carried {
            continue;
        }
        let r = &p.result;
        let record = LedgerRecord {
            run_id: books.run.run_id.clone(),
            entry: p.entry(round.n),
            fix_kind: p.fix_kind.clone(),
            reply_body: Some(r.reply.clone()),
            at: now,
        };
        books.store().append_ledger(&record)?;
    }
    books.stage_done(
        round,
        Stage::Gate,
        format!(
            "passed: {} result(s), {} resolve(s) authorized",
            results.len(),
            verdict.authorized.len()
        ),
    )?;
    Ok(Ok(Gated(changes)))
}
