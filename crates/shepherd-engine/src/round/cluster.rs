//! Stage 5, cluster gate and analysis (SPEC section 5).
//!
//! The gate is structural: it opens when the round has at least
//! `cluster.min_volume` new items, or on a re-entry (new items after a fix
//! round of this run, or fixes from an earlier run of this PR in the
//! ledger). With the gate closed the stage does nothing at all: no theme is
//! classified, nothing is grouped, no `clusters.json` is written and no event
//! is recorded. With it open, the new items are grouped by theme and
//! proximity, areas that keep drawing feedback after fixes are escalated to a
//! person (their items become `needs-human`), and on a re-entry the files the
//! previous fix round changed go with the round's clusters (the brief's
//! `<just-fixed-files>`). Everything lands in `clusters.json`.

use std::collections::BTreeSet;

use shepherd_core::cluster::{
    area_feedback, escalations, evaluate_gate, group, ClusterGateInput, ClusterItem, ClusterReport,
    GateSignal, ThemeSource,
};
use shepherd_core::report::gate_signal_text;
use shepherd_core::Decision;

use shepherd_core::config::ClusterConfig;

use super::runner::Books;
use super::state::{Items, Round, Triage};
use super::workspace::Workspace;
use crate::error::Result;
use crate::options::{is_builtin, Stage};
use crate::store::LedgerRecord;

/// The clusters of the round's new items, when the gate opens; an
/// escalated item's decision becomes `needs-human` in `triage`.
pub(crate) async fn stage(
    books: &mut Books,
    config: &ClusterConfig,
    round: &Round,
    ws: &Workspace,
    items: &Items,
    triage: &mut Triage,
) -> Result<Option<ClusterReport>> {
    if items.work.is_empty() {
        return Ok(None);
    }
    let records = books.store().ledger_records_for_pr(&books.run.pr)?;
    let earlier_run_fixes = records
        .iter()
        .any(|r| r.run_id != books.run.run_id && r.entry.commit.is_some());
    let input = ClusterGateInput {
        new_items: items.work.len(),
        min_volume: config.min_volume,
        fix_rounds_this_run_before: books.run.fix_history.iter().any(|h| h.round < round.n),
        earlier_run_fixes,
        enabled: config.enabled,
        targeted: books.run.target.is_targeted(),
    };
    let decision = evaluate_gate(&input);
    if !decision.open {
        // SPEC section 5: a closed gate does no clustering work at all.
        tracing::debug!(
            round = round.n,
            new_items = input.new_items,
            signals = decision.signals.len(),
            "cluster gate closed"
        );
        return Ok(None);
    }

    // Agent themes first: a theme the triage agent gave is what grouping
    // uses; the lexical classifier fills in where it gave none. The
    // builtin provider has no model: its themes are the lexical ones.
    let agent_themes = !is_builtin(ws.agents.triage.as_ref());
    let items: Vec<ClusterItem> = items
        .work
        .iter()
        .map(|w| {
            let (theme, source) = match triage.get_mut(w.id()) {
                Some(d) => match d.theme {
                    Some(theme) if agent_themes => (theme, ThemeSource::Agent),
                    Some(theme) => (theme, ThemeSource::Lexical),
                    None => (*d.theme.insert(w.lexical_theme()), ThemeSource::Lexical),
                },
                None => (w.lexical_theme(), ThemeSource::Lexical),
            };
            ClusterItem::new(w.id(), w.classified.path.as_deref(), theme).with_source(source)
        })
        .collect();
    let grouping = group(&items);
    let feedback = area_feedback(&grouping, &items);
    // Only earlier rounds: this round's own entry exists when it is
    // re-run after a crash that followed its fix stage.
    let earlier: Vec<_> = books
        .run
        .fix_history
        .iter()
        .filter(|h| h.round < round.n)
        .cloned()
        .collect();
    let escalated = escalations(&earlier, &feedback, config.escalate_after);
    // The last earlier fix round drew this feedback.
    if let Some(last) = books
        .run
        .fix_history
        .iter_mut()
        .filter(|h| h.round < round.n)
        .last()
    {
        if last.drew_feedback.is_empty() {
            last.drew_feedback = feedback.iter().map(|f| f.key.clone()).collect();
        }
    }

    for e in &escalated {
        for id in &e.item_ids {
            if let Some(d) = triage.get_mut(id) {
                d.decision = Decision::NeedsHuman;
                d.reasoning = format!("escalated: {}", e.context);
                d.reply_hint = format!(
                    "Shepherd stopped patching this area: {}. A maintainer should look at the \
                     design here rather than another patch.",
                    e.context
                );
            }
        }
    }
    let mut report = ClusterReport::new(round.n, decision, grouping, escalated);
    if let Some(files) = just_fixed_files(books, ws, &records, &report.gate.signals).await? {
        report = report.with_just_fixed_files(&files);
    }
    books.artifact(round, "clusters.json", &report)?;
    books
        .run
        .cluster_rounds
        .push(shepherd_core::report::ClusterRound::from(&report));
    books.run.clusters.extend(report.clusters.iter().cloned());
    books
        .run
        .escalations
        .extend(report.escalations.iter().cloned());
    let summary = format!(
        "gate open ({}): {} cluster(s), {} isolated, {} escalation(s)",
        report
            .gate
            .signals
            .iter()
            .map(gate_signal_text)
            .collect::<Vec<_>>()
            .join(", "),
        report.clusters.len(),
        report.isolated.len(),
        report.escalations.len()
    );
    books.stage_done(round, Stage::Cluster, summary)?;
    Ok(Some(report))
}

/// On a re-entry, the files the previous fix round changed: the last fix
/// round of this run, else the last fix round of the latest earlier run
/// of this PR (from the ledger). `None` when the round is no re-entry.
async fn just_fixed_files(
    books: &Books,
    ws: &Workspace,
    records: &[LedgerRecord],
    signals: &[GateSignal],
) -> Result<Option<Vec<String>>> {
    let within = signals.contains(&GateSignal::ReentryWithinRun);
    let across = signals.contains(&GateSignal::ReentryAcrossRuns);
    if !within && !across {
        return Ok(None);
    }
    let fixes = records
        .iter()
        .filter(|r| r.entry.commit.is_some() && (r.run_id == books.run.run_id) == within);
    // The ledger is in append order: the last fix names the fix round.
    let Some(last) = fixes.clone().last() else {
        return Ok(Some(Vec::new()));
    };
    let (run_id, fix_round) = (last.run_id.clone(), last.entry.round);
    let commits: BTreeSet<String> = fixes
        .filter(|r| r.run_id == run_id && r.entry.round == fix_round)
        .filter_map(|r| r.entry.commit.clone())
        .collect();
    let files = ws
        .git(move |wt| {
            let mut files = BTreeSet::new();
            for sha in &commits {
                // A commit the cache no longer has (rewritten history)
                // names no file; the brief is a hint, not a gate.
                match wt.files_of_commit(sha) {
                    Ok(changed) => files.extend(changed),
                    Err(err) => {
                        tracing::warn!(%err, sha, "cannot list the files of a fix commit");
                    }
                }
            }
            Ok(files.into_iter().collect::<Vec<_>>())
        })
        .await?;
    Ok(Some(files))
}
