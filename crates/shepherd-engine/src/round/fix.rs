//! Stage 7, fix: suggestion blocks first, then one fix agent per cluster and
//! per isolated item, in parallel ([`super::parallel`]), then metadata edits
//! through the forge ([`super::metadata`]).
//!
//! - An isolated code-change item whose suggestion block applies is fixed
//!   deterministically (the builtin provider) in the run's worktree, whatever
//!   agent is configured, before any agent runs: the reviewer wrote the code.
//! - Every other cluster and code-change item gets a fix agent in its own
//!   scratch worktree; results are merged back in order and committed by
//!   Shepherd, one commit per item or cluster, staging only the files the
//!   agent changed and refusing protected paths.
//! - A `metadata-change` item gets a fix agent too, which edits the PR's
//!   title, description and labels as files; Shepherd applies the change
//!   through the forge API, adding to the description, never replacing it.
//! - A fixer that cannot fix answers `blocked`, which becomes `needs-human`.
//!
//! Reply-only items get their drafted reply. Every result goes to
//! `results.json`.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use shepherd_agent::{check_fix_answer, Agent, BuiltinAgent, FixStatus, SuggestionState, UsageLog};
use shepherd_core::cluster::{AreaKey, Cluster, RoundAreas};
use shepherd_core::config::Config;
use shepherd_core::reply::Said;
use shepherd_core::{Decision, Outcome};
use shepherd_forge::Forge;

use super::approval::drafted_reply_of;
use super::item::{reply_only_outcome, Planned, WorkItem};
use super::metadata;
use super::parallel::{fix_task, run_units, Merging};
use super::runner::Books;
use super::state::{Changes, Fixed, Fixing, Items, Round, Synced, Triage};
use super::unit::{blocked_all, commit_message, FixUnit, UnitKind, UnitResult, ITEM_TRAILER};
use super::workspace::Workspace;
use crate::error::{EngineError, Result};
use crate::options::{is_builtin, Stage};
use crate::worktree::{ProtectedPaths, WorktreeError};

/// The round's changes: every item's planned result (new and carried,
/// in reply order) and the commits that fix them.
pub(crate) async fn stage(
    books: &mut Books,
    forge: &dyn Forge,
    config: &Config,
    max_parallel: usize,
    fixing: Fixing<'_>,
    items: &Items,
) -> Result<Fixed> {
    let Fixing {
        round,
        synced,
        decided,
        ..
    } = fixing;
    let mut changes = Changes::default();
    let cfg = config.gate_config();
    let protected = ProtectedPaths::new(&config.paths.protected)?;

    // Code-change units: clusters of two or more, then isolated items
    // ordered so that edits lower in a file come first.
    let code: Vec<WorkItem> = items
        .work
        .iter()
        .filter(|w| decided.approved.get(w.id()) == Some(&Decision::CodeChange))
        .cloned()
        .collect();
    // Fixes an earlier run already pushed (its reply was lost and its
    // state directory is gone): replied to, not redone.
    let earlier: BTreeMap<String, UnitResult> = decided
        .earlier_fixes
        .iter()
        .filter(|(id, _)| code.iter().any(|w| w.id() == id.as_str()))
        .map(|(id, sha)| (id.clone(), earlier_fix_result(sha)))
        .collect();
    let code: Vec<WorkItem> = code
        .into_iter()
        .filter(|w| !earlier.contains_key(w.id()))
        .collect();
    let mut used: BTreeSet<String> = BTreeSet::new();
    let mut units: Vec<FixUnit> = Vec::new();
    if let Some(report) = &decided.clusters {
        for cluster in &report.clusters {
            let members: Vec<WorkItem> = code
                .iter()
                .filter(|w| cluster.item_ids.iter().any(|id| id == w.id()))
                .cloned()
                .collect();
            if members.len() >= 2 {
                used.extend(members.iter().map(|w| w.id().to_owned()));
                let mut cluster = cluster.clone();
                cluster.item_ids = members.iter().map(|w| w.id().to_owned()).collect();
                units.push(FixUnit {
                    label: format!("cluster-fix-{}", members[0].id()),
                    files: cluster.files.clone(),
                    items: members,
                    cluster: Some(cluster),
                    kind: UnitKind::Code,
                });
            }
        }
    }
    let mut singles: Vec<WorkItem> = code
        .iter()
        .filter(|w| !used.contains(w.id()))
        .cloned()
        .collect();
    singles.sort_by_key(|w| {
        (
            w.classified.path.clone(),
            Reverse(w.classified.line),
            w.id().to_owned(),
        )
    });
    let (suggested, agent_singles): (Vec<WorkItem>, Vec<WorkItem>) = singles
        .into_iter()
        .partition(|w| has_applicable_suggestion(w, &synced.snapshot));
    units.extend(agent_singles.into_iter().map(|w| FixUnit {
        label: format!("fix-{}", w.id()),
        files: w.classified.path.iter().cloned().collect(),
        items: vec![w],
        cluster: None,
        kind: UnitKind::Code,
    }));

    // Metadata units, when they can run at all.
    let mut results: BTreeMap<String, UnitResult> = earlier;
    let meta: Vec<WorkItem> = items
        .work
        .iter()
        .filter(|w| decided.approved.get(w.id()) == Some(&Decision::MetadataChange))
        .cloned()
        .collect();
    let mut fields = None;
    if !meta.is_empty() {
        let cannot = if is_builtin(fixing.ws.agents.fix.as_ref()) {
            Some(
                "the builtin agent cannot write a change to the pull request's title, \
                 description or labels"
                    .to_owned(),
            )
        } else {
            match metadata::read_pr_fields(forge, books.run.target.number).await {
                Ok(f) => {
                    fields = Some(f);
                    None
                }
                Err(why) => Some(why),
            }
        };
        match cannot {
            Some(why) => {
                for w in &meta {
                    results.insert(w.id().to_owned(), UnitResult::blocked(&why));
                }
            }
            None => units.extend(meta.iter().map(|w| FixUnit {
                label: format!("metadata-{}", w.id()),
                files: Vec::new(),
                items: vec![w.clone()],
                cluster: None,
                kind: UnitKind::Metadata,
            })),
        }
    }

    // Suggestion blocks first, in the run's worktree. A block that no
    // longer applies goes to the fix agent, when there is one.
    let fallback = !is_builtin(fixing.ws.agents.fix.as_ref());
    let mut by_suggestion: BTreeSet<String> = BTreeSet::new();
    for item in &suggested {
        let r = fix_suggestion(books, fixing, &mut changes, item, &protected).await?;
        let applied = r.get(item.id()).is_some_and(|u| u.commit.is_some());
        if applied {
            by_suggestion.insert(item.id().to_owned());
        }
        if !applied && fallback {
            units.push(FixUnit {
                label: format!("fix-{}", item.id()),
                files: item.classified.path.iter().cloned().collect(),
                items: vec![item.clone()],
                cluster: None,
                kind: UnitKind::Code,
            });
        } else {
            results.extend(r);
        }
    }
    // Then the agents, in parallel.
    if !units.is_empty() {
        let merging = Merging {
            forge,
            config,
            protected: &protected,
        };
        let r = run_units(
            books,
            merging,
            max_parallel,
            fixing,
            &mut changes,
            &units,
            fields.as_ref(),
        )
        .await?;
        results.extend(r);
    }

    // Planned results of code and metadata items.
    let mut planned: Vec<(WorkItem, Planned)> = Vec::new();
    let mut fixed_areas: Vec<AreaKey> = Vec::new();
    let cluster_of: BTreeMap<String, Cluster> = units
        .iter()
        .filter_map(|u| u.cluster.as_ref().map(|c| (u, c)))
        .flat_map(|(u, c)| u.ids().into_iter().map(|id| (id.to_owned(), c.clone())))
        .collect();
    for item in &items.work {
        let Some(&decision) = decided.approved.get(item.id()) else {
            continue;
        };
        if !matches!(decision, Decision::CodeChange | Decision::MetadataChange) {
            continue;
        }
        let cluster = cluster_of.get(item.id());
        let r = results
            .remove(item.id())
            .unwrap_or_else(|| UnitResult::blocked("the fixer gave no outcome for it"));
        let (outcome, commit, metadata_applied, reply) = match decision {
            Decision::MetadataChange => {
                let applied = r.metadata_applied && r.status != FixStatus::Blocked;
                let outcome = if applied {
                    Outcome::Fixed
                } else {
                    Outcome::NeedsHuman
                };
                (outcome, None, applied, r.reply.clone())
            }
            _ => {
                let outcome = if r.commit.is_some() {
                    r.status.outcome()
                } else {
                    Outcome::NeedsHuman
                };
                let reply = match &r.commit {
                    Some(sha) => Said::Fixed {
                        text: &r.reply,
                        commit: sha,
                    }
                    .text(),
                    None => r.reply.clone(),
                };
                (outcome, r.commit.clone(), false, reply)
            }
        };
        let fixed = commit.is_some();
        if fixed {
            let theme = decided
                .triage
                .get(item.id())
                .and_then(|d| d.theme)
                // The same lexical theme the cluster stage gives an
                // unthemed item, so escalation areas match across rounds.
                .unwrap_or_else(|| item.lexical_theme());
            let area = match cluster {
                Some(c) => AreaKey::of_cluster(c),
                None => AreaKey::new(
                    theme,
                    &parent_dir(item.classified.path.as_deref().unwrap_or("")),
                ),
            };
            if !fixed_areas.contains(&area) {
                fixed_areas.push(area);
            }
        }
        let fix_kind = match (decision, cluster, fixed) {
            (Decision::MetadataChange, _, _) if metadata_applied => Some("metadata".to_owned()),
            (_, _, false) => None,
            (_, Some(_), true) => Some("cluster".to_owned()),
            (_, None, true) if by_suggestion.contains(item.id()) => Some("suggestion".to_owned()),
            (_, None, true) => Some("agent".to_owned()),
        };
        let mut plan = Planned::new(item, decision, outcome, reply, &cfg);
        plan.result.commit = commit;
        plan.result.metadata_applied = metadata_applied;
        if let (Some(c), true) = (cluster, fixed) {
            plan.result.cluster_files.clone_from(&c.files);
        }
        plan.fix_kind = fix_kind;
        plan.summary.clone_from(&r.summary);
        planned.push((item.clone(), plan));
    }

    // Reply-only items.
    for item in &items.work {
        let Some(&decision) = decided.approved.get(item.id()) else {
            continue;
        };
        let Some(outcome) = reply_only_outcome(decision) else {
            continue;
        };
        let reply = drafted_reply_of(decided, item.id(), decision);
        planned.push((
            item.clone(),
            Planned::new(item, decision, outcome, reply, &cfg),
        ));
    }

    planned.extend(items.carried.iter().cloned());
    // Reply in the forge's order: threads, then top-level items.
    let order: BTreeMap<&str, usize> = items
        .classified
        .iter()
        .enumerate()
        .map(|(i, c)| (c.item_id.as_str(), i))
        .collect();
    planned.sort_by_key(|(w, _)| order.get(w.id()).copied().unwrap_or(usize::MAX));
    changes.planned = planned;

    if !changes.commits.is_empty() {
        // A round re-run after a crash replaces its own entry: counted
        // twice, it would fake a re-entry or hasten an escalation.
        books.run.fix_history.retain(|h| h.round != round.n);
        books.run.fix_history.push(RoundAreas {
            round: round.n,
            fixed: fixed_areas,
            drew_feedback: Vec::new(),
        });
    }
    let results: Vec<&Planned> = changes.planned.iter().map(|(_, p)| p).collect();
    books.artifact(round, "results.json", &results)?;
    let fixed = results
        .iter()
        .filter(|p| !p.carried && p.result.commit.is_some())
        .count();
    let metadata = results
        .iter()
        .filter(|p| !p.carried && p.result.metadata_applied)
        .count();
    let blocked = results
        .iter()
        .filter(|p| {
            matches!(
                p.result.decision,
                Decision::CodeChange | Decision::MetadataChange
            ) && p.result.outcome == Outcome::NeedsHuman
        })
        .count();
    let mut summary = format!(
        "{} result(s): {fixed} fixed in {} commit(s), {blocked} blocked, {} reply-only",
        results.len(),
        changes.commits.len(),
        results
            .iter()
            .filter(|p| reply_only_outcome(p.result.decision).is_some() && !p.carried)
            .count()
    );
    if metadata > 0 {
        summary.push_str(&format!(", {metadata} metadata edit(s)"));
    }
    let carried = results.iter().filter(|p| p.carried).count();
    if carried > 0 {
        summary.push_str(&format!(", {carried} carried"));
    }
    books.stage_done(round, Stage::Fix, summary)?;
    Ok(Fixed(changes))
}

/// Find the items of the round that a Shepherd commit in the PR's
/// history already fixes, and act on them as fixed by that commit
/// (after triage, which a fresh state directory could not skip): the
/// commit's `Shepherd-Item` trailer names the item, it was committed by
/// the identity Shepherd commits as, it changes the item's file, and the
/// account Shepherd posts as has not replied on the item (after a reply,
/// a later comment is new feedback on that fix). The item's decision
/// becomes `code-change`, the fix stage replies citing the commit, and
/// nothing is fixed or pushed again.
pub(crate) async fn adopt_earlier_fixes(
    books: &mut Books,
    round: &Round,
    synced: &Synced,
    ws: &Workspace,
    items: &Items,
    triage: &mut Triage,
) -> Result<BTreeMap<String, String>> {
    let mut earlier = BTreeMap::new();
    let viewer = synced.snapshot.viewer.clone();
    let candidates: Vec<WorkItem> = items
        .work
        .iter()
        .filter(|w| {
            w.classified.path.is_some()
                && w.thread().is_some()
                && !has_own_reply(w, &viewer)
                && triage.contains_key(w.id())
        })
        .cloned()
        .collect();
    if candidates.is_empty() {
        return Ok(earlier);
    }
    let git = ws.git.clone();
    let (commits, email) = ws
        .git(move |wt| {
            let commits = crate::worktree::trailer_commits(
                &git,
                wt.path(),
                ITEM_TRAILER,
                TRAILER_SEARCH_DEPTH,
            )?;
            let email = crate::worktree::committer_email(&git, wt.path())?;
            Ok((commits, email))
        })
        .await?;
    for item in candidates {
        let Some(commit) = commits.iter().find(|c| {
            !email.is_empty()
                && c.committer_email == email
                && c.values.iter().any(|v| v == item.id())
        }) else {
            continue;
        };
        let sha = commit.sha.0.clone();
        let files = {
            let sha = sha.clone();
            ws.git(move |wt| wt.files_of_commit(&sha)).await?
        };
        if !item
            .classified
            .path
            .as_ref()
            .is_some_and(|p| files.contains(p))
        {
            continue;
        }
        if let Some(d) = triage.get_mut(item.id()) {
            d.decision = Decision::CodeChange;
            d.reasoning = format!(
                "Already fixed by Shepherd's commit {sha} on the pull request (its \
                 {ITEM_TRAILER} trailer names this item); that run's reply was lost. \
                 Triage said: {}",
                d.reasoning
            );
        }
        books.event(
            Some(round.n),
            "earlier-fix-adopted",
            serde_json::json!({ "item": item.id(), "commit": sha }),
        )?;
        earlier.insert(item.id().to_owned(), sha);
    }
    Ok(earlier)
}

/// Apply an isolated item's suggestion block in the run's worktree (the
/// builtin provider) and commit it.
async fn fix_suggestion(
    books: &mut Books,
    fixing: Fixing<'_>,
    changes: &mut Changes,
    item: &WorkItem,
    protected: &ProtectedPaths,
) -> Result<BTreeMap<String, UnitResult>> {
    let round = fixing.round;
    fixing.ws.git(|wt| wt.discard_changes()).await?;
    let unit = FixUnit {
        items: vec![item.clone()],
        cluster: None,
        kind: UnitKind::Code,
        files: item.classified.path.iter().cloned().collect(),
        label: format!("fix-{}", item.id()),
    };
    let (task, _, _) = fix_task(fixing, &unit, fixing.ws.path().to_path_buf());
    let agent = BuiltinAgent::new();
    let usage = UsageLog::new();
    let ctx = round.agent_ctx(&unit.label, &usage);
    let started = Instant::now();
    let answer = shepherd_agent::Agent::fix(&agent, &task, &ctx).await;
    books.account_agent("fix", agent.name(), started.elapsed(), &usage);
    let answer = match fixing
        .ws
        .keep_checked(answer, |a| check_fix_answer(&task, a))
        .await?
    {
        Ok(a) => a,
        Err(refused) => return Ok(blocked_all(&unit, &refused.said_of("fixer"))),
    };
    let changed = fixing.ws.git(|wt| wt.changed_paths()).await?;
    let any_fixed = answer
        .outcomes
        .iter()
        .any(|o| o.status != FixStatus::Blocked);
    let mut commit = None;
    let mut commit_error = None;
    if any_fixed {
        if changed.is_empty() {
            commit_error = Some("the fixer reported a fix but changed no file".to_owned());
        } else {
            let message = commit_message(&unit, &answer.outcomes);
            let protected = protected.clone();
            let files = changed.clone();
            match fixing
                .ws
                .git(move |wt| wt.commit_files(&message, &files, &protected))
                .await
            {
                Ok(sha) => commit = Some(sha.0),
                Err(EngineError::Worktree(e @ WorktreeError::ProtectedPath { .. })) => {
                    commit_error = Some(e.to_string());
                }
                Err(EngineError::Worktree(WorktreeError::NothingToCommit)) => {
                    commit_error = Some("the fix changed nothing".to_owned());
                }
                Err(e) => return Err(e),
            }
        }
    }
    fixing.ws.git(|wt| wt.discard_changes()).await?;
    if let Some(why) = commit_error {
        return Ok(blocked_all(&unit, &why));
    }
    if let Some(sha) = &commit {
        changes.commits.push(sha.clone());
        books.event(
            Some(round.n),
            "commit",
            serde_json::json!({ "sha": sha, "items": unit.ids(), "files": changed, "unit": unit.label }),
        )?;
    }
    Ok(answer
        .outcomes
        .into_iter()
        .map(|o| {
            let fixed = o.status != FixStatus::Blocked;
            (
                o.id,
                UnitResult {
                    status: o.status,
                    reply: o.reply,
                    summary: o.summary,
                    commit: if fixed { commit.clone() } else { None },
                    metadata_applied: false,
                },
            )
        })
        .collect())
}

fn has_applicable_suggestion(item: &WorkItem, snapshot: &shepherd_core::PrSnapshot) -> bool {
    item.thread().is_some_and(|t| {
        matches!(
            SuggestionState::of_thread_on(t, snapshot.forge, &snapshot.viewer),
            SuggestionState::Applicable { .. }
        )
    })
}

fn parent_dir(path: &str) -> String {
    path.rsplit_once('/')
        .map_or(String::new(), |(d, _)| d.to_owned())
}

/// The result of an item fixed by `sha`, a commit of an earlier run.
fn earlier_fix_result(sha: &str) -> UnitResult {
    UnitResult {
        status: FixStatus::Fixed,
        reply: Said::FixedEarlier.text(),
        summary: format!("already fixed by {sha} (found by its {ITEM_TRAILER} trailer)"),
        commit: Some(sha.to_owned()),
        metadata_applied: false,
    }
}

/// How many commits of the PR's history are searched for an earlier fix.
const TRAILER_SEARCH_DEPTH: usize = 500;

/// Whether the account Shepherd posts as has replied on `item` with its
/// marker (then a later comment makes the item new again, and a pushed fix
/// is not an answer to it).
fn has_own_reply(item: &WorkItem, viewer: &str) -> bool {
    let Some(comments) = item.thread().map(|t| t.comments.as_slice()) else {
        return false;
    };
    comments.iter().any(|c| {
        c.author.as_ref().is_some_and(|a| a.login == viewer)
            && shepherd_core::Marker::is_for(&c.body, item.id())
    })
}
