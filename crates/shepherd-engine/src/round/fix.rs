//! Stage 7, fix: one fix per cluster and per isolated code-change item, one
//! commit each, made by Shepherd (never the agent), staging only the files
//! that changed and refusing protected paths. An isolated item whose
//! suggestion block applies is fixed deterministically (the builtin
//! provider) whatever agent is configured. A fixer that cannot fix answers
//! `blocked`, which becomes `needs-human`. Reply-only items get their
//! drafted reply. Every result goes to `results.json`.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Instant;

use shepherd_agent::{
    check_fix_answer, Agent, AgentContext, BuiltinAgent, ClusterContext, FixAnswer, FixStatus,
    FixTask, PrContext, SuggestionState, TriageNote,
};
use shepherd_core::cluster::{AreaKey, Cluster, RoundAreas};
use shepherd_core::gate::{resolve_authorized, ItemResult};
use shepherd_core::theme::Theme;
use shepherd_core::{Decision, Outcome};

use super::triage::task_item;
use super::{reply_only_outcome, Flow, Planned, Round, Runner, WorkItem};
use crate::run::error::Result;
use crate::run::options::Stage;
use crate::worktree::{ProtectedPaths, WorktreeError};

/// One fix: a cluster, or an isolated item.
struct Unit {
    items: Vec<WorkItem>,
    cluster: Option<Cluster>,
}

/// What a unit produced for one item.
struct UnitResult {
    status: FixStatus,
    reply: String,
    summary: String,
    commit: Option<String>,
}

impl Runner {
    pub(crate) async fn stage_fix(&mut self, round: &mut Round) -> Result<Flow> {
        let cfg = self.config.gate_config();
        let mut planned: Vec<(WorkItem, Planned)> = Vec::new();

        // Units: clusters of two or more code-change items, then isolated
        // items ordered so that edits lower in a file come first.
        let code: Vec<WorkItem> = round
            .work
            .iter()
            .filter(|w| round.approved.get(w.id()) == Some(&Decision::CodeChange))
            .cloned()
            .collect();
        let mut used: BTreeSet<String> = BTreeSet::new();
        let mut units = Vec::new();
        if let Some(report) = &round.clusters {
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
                    units.push(Unit {
                        items: members,
                        cluster: Some(cluster),
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
        units.extend(singles.into_iter().map(|w| Unit {
            items: vec![w],
            cluster: None,
        }));

        let protected = ProtectedPaths::new(&self.config.paths.protected)?;
        let mut fixed_areas: Vec<AreaKey> = Vec::new();
        for unit in units {
            let results = self.fix_unit(round, &unit, &protected).await?;
            for item in &unit.items {
                let Some(r) = results.get(item.id()) else {
                    continue;
                };
                let outcome = r.status.outcome();
                let gate_item = item.gate_item();
                let fixed = r.commit.is_some();
                if fixed {
                    let theme = round
                        .triage
                        .get(item.id())
                        .and_then(|d| d.theme)
                        .unwrap_or(Theme::Other);
                    let area = match &unit.cluster {
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
                let fix_kind = match (&unit.cluster, fixed) {
                    (_, false) => None,
                    (Some(_), true) => Some("cluster".to_owned()),
                    (None, true) if has_applicable_suggestion(item) => {
                        Some("suggestion".to_owned())
                    }
                    (None, true) => Some("agent".to_owned()),
                };
                let reply = match &r.commit {
                    Some(sha) => format!("{}\n\nFixed in {sha}.", r.reply.trim_end()),
                    None => r.reply.clone(),
                };
                planned.push((
                    item.clone(),
                    Planned {
                        result: ItemResult {
                            item_id: item.id().to_owned(),
                            decision: Decision::CodeChange,
                            outcome,
                            commit: r.commit.clone(),
                            metadata_applied: false,
                            reply,
                            reply_target: item.reply_target(),
                            resolve_authorized: resolve_authorized(
                                Decision::CodeChange,
                                outcome,
                                &gate_item.kind,
                                &cfg,
                            ),
                            cluster_files: match (&unit.cluster, fixed) {
                                (Some(c), true) => c.files.clone(),
                                _ => Vec::new(),
                            },
                        },
                        kind: item.classified.kind,
                        fix_kind,
                        summary: r.summary.clone(),
                        carried: false,
                    },
                ));
            }
        }

        // Reply-only and metadata items.
        for item in &round.work {
            let Some(&decision) = round.approved.get(item.id()) else {
                continue;
            };
            let (outcome, reply) = match decision {
                Decision::CodeChange => continue,
                Decision::MetadataChange => (
                    Outcome::NeedsHuman,
                    "This asks for a change to the pull request's title, description or labels. \
                     Shepherd does not make metadata edits automatically yet, so a maintainer \
                     needs to make it."
                        .to_owned(),
                ),
                other => match reply_only_outcome(other) {
                    Some(outcome) => (outcome, self.drafted_reply(round, item.id(), other)),
                    None => continue,
                },
            };
            let gate_item = item.gate_item();
            planned.push((
                item.clone(),
                Planned {
                    result: ItemResult {
                        item_id: item.id().to_owned(),
                        decision,
                        outcome,
                        commit: None,
                        metadata_applied: false,
                        reply,
                        reply_target: item.reply_target(),
                        resolve_authorized: resolve_authorized(
                            decision,
                            outcome,
                            &gate_item.kind,
                            &cfg,
                        ),
                        cluster_files: Vec::new(),
                    },
                    kind: item.classified.kind,
                    fix_kind: None,
                    summary: String::new(),
                    carried: false,
                },
            ));
        }

        planned.extend(round.carried.iter().cloned());
        // Reply in the forge's order: threads, then top-level items.
        let order: BTreeMap<&str, usize> = round
            .classified
            .iter()
            .enumerate()
            .map(|(i, c)| (c.item_id.as_str(), i))
            .collect();
        planned.sort_by_key(|(w, _)| order.get(w.id()).copied().unwrap_or(usize::MAX));
        round.planned = planned;

        if !round.commits.is_empty() {
            self.run.fix_history.push(RoundAreas {
                fixed: fixed_areas,
                drew_feedback: Vec::new(),
            });
        }
        let results: Vec<&Planned> = round.planned.iter().map(|(_, p)| p).collect();
        self.artifact(round, "results.json", &results)?;
        let fixed = results
            .iter()
            .filter(|p| !p.carried && p.result.commit.is_some())
            .count();
        let blocked = results
            .iter()
            .filter(|p| {
                p.result.decision == Decision::CodeChange && p.result.outcome == Outcome::NeedsHuman
            })
            .count();
        let mut summary = format!(
            "{} result(s): {fixed} fixed in {} commit(s), {blocked} blocked, {} reply-only",
            results.len(),
            round.commits.len(),
            results
                .iter()
                .filter(|p| p.result.decision != Decision::CodeChange && !p.carried)
                .count()
        );
        let carried = results.iter().filter(|p| p.carried).count();
        if carried > 0 {
            summary.push_str(&format!(", {carried} carried"));
        }
        self.stage_done(round, Stage::Fix, summary)?;
        Ok(Ok(()))
    }

    /// Run one unit's fixer in the worktree and commit what it changed.
    async fn fix_unit(
        &mut self,
        round: &mut Round,
        unit: &Unit,
        protected: &ProtectedPaths,
    ) -> Result<BTreeMap<String, UnitResult>> {
        self.git(|wt| wt.discard_changes()).await?;
        let snapshot = round.snapshot();
        let pr = PrContext::new(snapshot.forge, &snapshot.pr);
        let worktree = self.wt().path().to_path_buf();
        let items: Vec<_> = unit
            .items
            .iter()
            .map(|w| {
                let note = round.triage.get(w.id()).map(|d| TriageNote {
                    reasoning: d.reasoning.clone(),
                    reply_hint: d.reply_hint.clone(),
                });
                let item = task_item(w);
                match note {
                    Some(note) => item.with_triage(note),
                    None => item,
                }
            })
            .collect();
        let (task, agent, label): (FixTask, Arc<dyn Agent>, String) = match &unit.cluster {
            Some(cluster) => (
                FixTask::cluster(
                    pr,
                    worktree,
                    ClusterContext::new(cluster.clone(), None),
                    items,
                ),
                self.agents().cluster_fix.clone(),
                format!(
                    "cluster-fix-{}",
                    cluster.item_ids.first().map_or("", String::as_str)
                ),
            ),
            None => {
                let single = &unit.items[0];
                let agent: Arc<dyn Agent> = if has_applicable_suggestion(single) {
                    Arc::new(BuiltinAgent::new())
                } else {
                    self.agents().fix.clone()
                };
                let item = items
                    .into_iter()
                    .next()
                    .unwrap_or_else(|| task_item(single));
                (
                    FixTask::single(pr, worktree, item),
                    agent,
                    format!("fix-{}", single.id()),
                )
            }
        };
        let ctx = AgentContext::new(&round.dir, label);
        let started = Instant::now();
        let answer = agent.fix(&task, &ctx).await;
        self.account_agent(agent.name(), started, &ctx);

        let blocked_all = |why: String| -> BTreeMap<String, UnitResult> {
            unit.items
                .iter()
                .map(|w| {
                    (
                        w.id().to_owned(),
                        UnitResult {
                            status: FixStatus::Blocked,
                            reply: format!(
                                "Shepherd could not fix this automatically ({why}). A maintainer \
                                 needs to look at it."
                            ),
                            summary: why.clone(),
                            commit: None,
                        },
                    )
                })
                .collect()
        };
        let answer: FixAnswer = match answer {
            Ok(a) => match check_fix_answer(&task, &a) {
                Ok(()) => a,
                Err(errors) => {
                    let why = errors
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("; ");
                    self.git(|wt| wt.discard_changes()).await?;
                    return Ok(blocked_all(format!(
                        "the fixer's answer was invalid: {why}"
                    )));
                }
            },
            Err(err) => {
                self.git(|wt| wt.discard_changes()).await?;
                return Ok(blocked_all(format!("the fixer failed: {err}")));
            }
        };

        let changed = self.git(|wt| wt.changed_paths()).await?;
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
                let message = commit_message(unit, &answer);
                let protected = protected.clone();
                let files = changed.clone();
                match self
                    .git(move |wt| wt.commit_files(&message, &files, &protected))
                    .await
                {
                    Ok(sha) => commit = Some(sha.0),
                    Err(crate::run::error::EngineError::Worktree(
                        e @ WorktreeError::ProtectedPath { .. },
                    )) => {
                        commit_error = Some(e.to_string());
                    }
                    Err(crate::run::error::EngineError::Worktree(
                        WorktreeError::NothingToCommit,
                    )) => {
                        commit_error = Some("the fix changed nothing".to_owned());
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        self.git(|wt| wt.discard_changes()).await?;
        if let Some(why) = commit_error {
            return Ok(blocked_all(why));
        }
        if let Some(sha) = &commit {
            round.commits.push(sha.clone());
            self.event(
                Some(round.n),
                "commit",
                serde_json::json!({ "sha": sha, "items": unit.items.iter().map(WorkItem::id).collect::<Vec<_>>(), "files": changed }),
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
                    },
                )
            })
            .collect())
    }
}

fn has_applicable_suggestion(item: &WorkItem) -> bool {
    item.thread.as_ref().is_some_and(|t| {
        matches!(
            SuggestionState::of_thread(t),
            SuggestionState::Applicable { .. }
        )
    })
}

fn parent_dir(path: &str) -> String {
    path.rsplit_once('/')
        .map_or(String::new(), |(d, _)| d.to_owned())
}

/// The commit message: what was fixed, naming the threads (never quoting
/// comment bodies).
fn commit_message(unit: &Unit, answer: &FixAnswer) -> String {
    let ids: Vec<&str> = unit.items.iter().map(WorkItem::id).collect();
    let subject = match &unit.cluster {
        Some(c) => format!(
            "shepherd: fix {} in {} ({} review threads)",
            c.theme,
            c.area,
            ids.len()
        ),
        None => {
            let item = &unit.items[0];
            match &item.classified.path {
                Some(path) => format!("shepherd: address review feedback on {path}"),
                None => "shepherd: address review feedback".to_owned(),
            }
        }
    };
    let mut body = String::new();
    for o in &answer.outcomes {
        if o.status != FixStatus::Blocked {
            let line: String = o
                .summary
                .lines()
                .next()
                .unwrap_or("")
                .chars()
                .take(200)
                .collect();
            body.push_str(&format!("- {}: {line}\n", o.id));
        }
    }
    format!("{subject}\n\n{body}\nReview threads: {}\n", ids.join(", "))
}
