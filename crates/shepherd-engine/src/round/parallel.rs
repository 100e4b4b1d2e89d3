//! Parallel fixers (SPEC section 3, step 7): one fix agent per cluster and
//! per isolated item, each in its own scratch worktree (a detached linked
//! worktree of the round's current HEAD), at most
//! `EngineOptions::max_parallel_fixes` at once, never two at once on the same
//! file. Results are merged back into the run's worktree in a fixed order
//! (the units' order: clusters, then items) by applying each fixer's diff
//! with a three-way merge, and Shepherd commits each one (only the files the
//! fixer changed, never a protected path). A diff that conflicts with what
//! was merged before it re-runs that unit after the others, on the merged
//! result; a second conflict hands its items to a person.
//!
//! Scheduling: a unit starts when a slot is free, its files overlap no
//! running unit's, and no earlier unit touching its files is still unmerged,
//! so items on one file run one after the other, each starting from the
//! commit of the one before. A unit whose files are unknown (a top-level
//! item) overlaps every code unit. Metadata units touch no file of the
//! repository and overlap nothing.
//!
//! Before a code unit is merged, the fix-validation role (when its provider
//! is not `builtin`) judges, read-only in the fixer's worktree, whether the
//! fix addresses each item; an item judged `not-addressed` gets no commit
//! and is handed to a person.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use shepherd_agent::{
    check_fix_answer, check_fix_validation_answer, Agent, AgentContext, AgentError, ClusterContext,
    FixAnswer, FixStatus, FixTask, FixValidationTask, FixVerdict, PrContext, TriageNote, UsageLog,
};
use shepherd_core::config::Config;
use shepherd_forge::Forge;

use super::answer::{checked, Refused};
use super::metadata::{self, merge_metadata, PR_DIR};
use super::runner::Books;
use super::state::{Changes, Fixing};
use super::triage::task_item;
use super::unit::{
    blocked_all, blocked_by_failure, commit_message, AgentCall, FixUnit, FixValidationRecord,
    JobOutput, UnitKind, UnitResult,
};
use crate::error::{EngineError, Result};
use crate::options::PrFields;
use crate::worktree::{
    apply_patch, reset_hard, ApplyOutcome, Git, ProtectedPaths, ScratchWorktree,
};

/// Everything a fixer job needs, owned: it runs on its own task.
struct Job {
    agent: Arc<dyn Agent>,
    role: &'static str,
    validator: Option<Arc<dyn Agent>>,
    task: FixTask,
    kind: UnitKind,
    git: Git,
    repo_dir: PathBuf,
    base_sha: String,
    transcripts: PathBuf,
    label: String,
    metadata_before: Option<PrFields>,
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> std::result::Result<T, String> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| format!("internal task failed: {e}"))
}

async fn run_job(job: Job) -> JobOutput {
    let git = job.git.clone();
    let repo = job.repo_dir.clone();
    let dir = job.task.worktree.clone();
    let sha = job.base_sha.clone();
    let scratch = match blocking(move || ScratchWorktree::add(&git, &repo, &dir, &sha)).await {
        Ok(Ok(s)) => Arc::new(s),
        Ok(Err(e)) => {
            return JobOutput::failed(
                "the fixer's worktree could not be prepared",
                e.to_string(),
                Vec::new(),
            )
        }
        Err(e) => return JobOutput::failed("the fixer's job stopped", e, Vec::new()),
    };
    let out = work(&job, scratch.clone()).await;
    // Removed here, off the async threads, whatever happened.
    let _ = blocking(move || match Arc::try_unwrap(scratch) {
        Ok(s) => s.remove(),
        Err(_) => Ok(()),
    })
    .await;
    out
}

/// The fixer, then what it changed, then (for code) fix-validation.
async fn work(job: &Job, scratch: Arc<ScratchWorktree>) -> JobOutput {
    let mut calls = Vec::new();
    if let Some(fields) = &job.metadata_before {
        if let Err(e) = metadata::write_fields(scratch.path(), fields) {
            return JobOutput::failed(
                "the pull request's fields could not be given to the fixer",
                e.to_string(),
                calls,
            );
        }
    }

    let usage = UsageLog::new();
    let ctx = AgentContext::new(&job.transcripts, &job.label).with_usage(usage.clone());
    let started = Instant::now();
    let got = job.agent.fix(&job.task, &ctx).await;
    calls.push(AgentCall {
        role: job.role,
        provider: job.agent.name().to_owned(),
        elapsed: started.elapsed(),
        usage,
    });
    let answer = match checked(got, |a| check_fix_answer(&job.task, a)) {
        Ok(a) => a,
        Err(Refused::Invalid(why)) => {
            return JobOutput::failed("the fixer's answer was invalid", why, calls)
        }
        Err(Refused::Failed(why)) => return JobOutput::failed("the fixer failed", why, calls),
    };

    let kind = job.kind;
    let inspect = scratch.clone();
    let inspected = blocking(move || {
        let changed = inspect.changed_paths()?;
        let (changed, patch, after) = match kind {
            UnitKind::Code => (changed, inspect.diff()?, None),
            UnitKind::Metadata => {
                let after = metadata::read_fields(inspect.path());
                let code: Vec<String> = changed
                    .into_iter()
                    .filter(|p| !p.starts_with(&format!("{PR_DIR}/")) && p != PR_DIR)
                    .collect();
                (code, Vec::new(), Some(after))
            }
        };
        Ok::<_, crate::worktree::WorktreeError>((changed, patch, after))
    })
    .await;
    let (changed, patch, after) = match inspected {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => {
            return JobOutput::failed(
                "the fixer's changes could not be read",
                e.to_string(),
                calls,
            )
        }
        Err(e) => return JobOutput::failed("the fixer's job stopped", e, calls),
    };
    let metadata_after = match after {
        None => None,
        Some(Ok(fields)) => Some(fields),
        Some(Err(e)) => {
            return JobOutput::failed(
                "the pull request's fields could not be read back from the fixer",
                e.to_string(),
                calls,
            )
        }
    };

    let mut validation = None;
    let fixed_any = answer
        .outcomes
        .iter()
        .any(|o| o.status != FixStatus::Blocked);
    if let (Some(validator), UnitKind::Code, true, false) =
        (&job.validator, job.kind, fixed_any, patch.is_empty())
    {
        // A read-only role: checked, failed closed on any change.
        let (git, dir) = (job.git.clone(), job.task.worktree.clone());
        let before = blocking(move || crate::worktree::GitState::capture(&git, &dir)).await;
        let (mut record, call) = validate(job, validator.as_ref(), &answer, &patch).await;
        let (git, dir) = (job.git.clone(), job.task.worktree.clone());
        let violation = match before {
            Ok(Ok(before)) => {
                blocking(move || crate::worktree::check_read_only(&git, &dir, &before))
                    .await
                    .unwrap_or_else(|e| {
                        Some(crate::worktree::Violation {
                            changes: vec![e],
                            restored: Ok(()),
                        })
                    })
            }
            Ok(Err(e)) => Some(crate::worktree::Violation {
                changes: vec![format!("cannot record the worktree before the call: {e}")],
                restored: Ok(()),
            }),
            Err(e) => Some(crate::worktree::Violation {
                changes: vec![e],
                restored: Ok(()),
            }),
        };
        if let Some(v) = violation {
            record.verdicts.clear();
            record.read_only_violation = Some(v);
        }
        calls.push(call);
        validation = Some(record);
    }
    JobOutput {
        answer: Ok(answer),
        changed,
        patch,
        metadata_before: job.metadata_before.clone(),
        metadata_after,
        validation,
        calls,
    }
}

/// Ask the fix-validation role, read-only in the fixer's worktree, whether
/// the fix addresses each item.
async fn validate(
    job: &Job,
    validator: &dyn Agent,
    answer: &FixAnswer,
    patch: &[u8],
) -> (FixValidationRecord, AgentCall) {
    let mut task = FixValidationTask::new(
        job.task.pr.clone(),
        job.task.worktree.clone(),
        job.task.items.clone(),
        String::from_utf8_lossy(patch).into_owned(),
    );
    task.claimed = answer.outcomes.clone();
    let usage = UsageLog::new();
    let label = format!("fix-validation-{}", job.label);
    let ctx = AgentContext::new(&job.transcripts, &label).with_usage(usage.clone());
    let started = Instant::now();
    let got = validator.validate_fix(&task, &ctx).await;
    let call = AgentCall {
        role: "fix-validation",
        provider: validator.name().to_owned(),
        elapsed: started.elapsed(),
        usage,
    };
    let mut record = FixValidationRecord {
        unit: job.label.clone(),
        provider: validator.name().to_owned(),
        verdicts: Vec::new(),
        note: None,
        read_only_violation: None,
    };
    if let Err(AgentError::Unsupported { .. }) = got {
        record.note = Some("the provider does not support fix-validation".to_owned());
        return (record, call);
    }
    match checked(got, |v| check_fix_validation_answer(&task, v)) {
        Ok(v) => record.verdicts = v.items,
        Err(Refused::Invalid(why)) => {
            record.note = Some(format!("the verdicts were invalid, so none is used: {why}"))
        }
        Err(Refused::Failed(why)) => record.note = Some(format!("fix-validation failed: {why}")),
    }
    (record, call)
}

/// What merging a unit's output gave.
enum Merge {
    /// Per item results.
    Done(BTreeMap<String, UnitResult>),
    /// The diff conflicts with what was merged before: run again later.
    Retry(String),
}

/// What merging a fixer's output reads besides the round's products: the
/// forge and the configuration (a metadata unit edits the pull request,
/// under the gate's rules), and the paths no commit may touch.
#[derive(Clone, Copy)]
pub(crate) struct Merging<'a> {
    pub(crate) forge: &'a dyn Forge,
    pub(crate) config: &'a Config,
    pub(crate) protected: &'a ProtectedPaths,
}

/// Run `units` (in this order) as parallel fixers and merge their
/// results; returns the result of every item of every unit.
pub(crate) async fn run_units(
    books: &mut Books,
    merging: Merging<'_>,
    max_parallel: usize,
    fixing: Fixing<'_>,
    changes: &mut Changes,
    units: &[FixUnit],
    fields: Option<&PrFields>,
) -> Result<BTreeMap<String, UnitResult>> {
    let round = fixing.round;
    let n = units.len();
    let max = max_parallel.max(1);
    let mut results = BTreeMap::new();
    let mut started = vec![false; n];
    let mut running_idx: BTreeSet<usize> = BTreeSet::new();
    let mut outputs: BTreeMap<usize, JobOutput> = BTreeMap::new();
    let mut deferred: Vec<(usize, String)> = Vec::new();
    let mut running: tokio::task::JoinSet<(usize, JobOutput)> = tokio::task::JoinSet::new();
    let mut next = 0usize;
    let mut peak = 0usize;
    while next < n {
        let mut head: Option<String> = None;
        for i in next..n {
            if running.len() >= max {
                break;
            }
            if started[i] {
                continue;
            }
            let busy = (next..i).any(|j| units[j].overlaps(&units[i]))
                || running_idx.iter().any(|&j| units[j].overlaps(&units[i]));
            if busy {
                continue;
            }
            let base = match &head {
                Some(h) => h.clone(),
                None => {
                    let h = fixing.ws.git(|wt| wt.head_sha()).await?.0;
                    head = Some(h.clone());
                    h
                }
            };
            let job = job(books, fixing, &units[i], &base, 1, fields);
            started[i] = true;
            running_idx.insert(i);
            running.spawn(async move { (i, run_job(job).await) });
            peak = peak.max(running.len());
        }
        if let Some(out) = outputs.remove(&next) {
            match merge(books, merging, fixing, changes, &units[next], out).await? {
                Merge::Done(r) => results.extend(r),
                Merge::Retry(detail) => deferred.push((next, detail)),
            }
            next += 1;
            continue;
        }
        match running.join_next().await {
            Some(Ok((i, out))) => {
                running_idx.remove(&i);
                account_calls(books, &out.calls);
                outputs.insert(i, out);
            }
            Some(Err(e)) => return Err(EngineError::Task(e.to_string())),
            None => {
                return Err(EngineError::Task(
                    "the fix scheduler has nothing to run or merge".to_owned(),
                ))
            }
        }
    }
    // Conflicting units again, one at a time, on the merged result.
    for (i, detail) in deferred {
        books.event(
            Some(round.n),
            "fix-rerun",
            serde_json::json!({ "unit": units[i].label, "items": units[i].ids(), "conflict": detail }),
        )?;
        let base = fixing.ws.git(|wt| wt.head_sha()).await?.0;
        let job = job(books, fixing, &units[i], &base, 2, fields);
        let out = run_job(job).await;
        account_calls(books, &out.calls);
        match merge(books, merging, fixing, changes, &units[i], out).await? {
            Merge::Done(r) => results.extend(r),
            // git's conflict detail names files of other items: it
            // stays in the local record, out of the public replies.
            Merge::Retry(detail) => results.extend(units[i].items.iter().map(|w| {
                (
                    w.id().to_owned(),
                    UnitResult::blocked_privately(
                        "its change conflicts with the other fixes of this round",
                        &format!(
                            "its change conflicts with the other fixes of this round \
                             ({detail})"
                        ),
                    ),
                )
            })),
        }
    }
    tracing::debug!(units = n, peak, "parallel fixers done");
    Ok(results)
}

fn account_calls(books: &mut Books, calls: &[AgentCall]) {
    for c in calls {
        books.account_agent(c.role, &c.provider, c.elapsed, &c.usage);
    }
}

/// The fix task of `unit` in `dir`, the agent that runs it, and its role.
pub(crate) fn fix_task(
    fixing: Fixing<'_>,
    unit: &FixUnit,
    dir: PathBuf,
) -> (FixTask, Arc<dyn Agent>, &'static str) {
    let snapshot = &fixing.synced.snapshot;
    let pr = PrContext::new(snapshot.forge, &snapshot.pr);
    let items: Vec<_> = unit
        .items
        .iter()
        .map(|w| {
            let item = task_item(w, snapshot);
            match fixing.decided.triage.get(w.id()) {
                Some(d) => item.with_triage(TriageNote {
                    reasoning: d.reasoning.clone(),
                    reply_hint: d.reply_hint.clone(),
                }),
                None => item,
            }
        })
        .collect();
    match (&unit.cluster, unit.kind) {
        (Some(cluster), _) => {
            let just_fixed = fixing
                .decided
                .clusters
                .as_ref()
                .and_then(|r| r.just_fixed_files.clone());
            (
                FixTask::cluster(
                    pr,
                    dir,
                    ClusterContext::new(cluster.clone(), just_fixed),
                    items,
                ),
                fixing.ws.agents.cluster_fix.clone(),
                "cluster-fix",
            )
        }
        (None, UnitKind::Code) => {
            let item = items.into_iter().next().unwrap_or_else(|| {
                // A unit always has an item: units are built from items.
                task_item(&unit.items[0], snapshot)
            });
            (
                FixTask::single(pr, dir, item),
                fixing.ws.agents.fix.clone(),
                "fix",
            )
        }
        (None, UnitKind::Metadata) => (
            metadata::metadata_task(pr, dir, items),
            fixing.ws.agents.fix.clone(),
            "fix",
        ),
    }
}

/// The job of `unit`, starting from commit `base`.
fn job(
    books: &Books,
    fixing: Fixing<'_>,
    unit: &FixUnit,
    base: &str,
    attempt: u32,
    fields: Option<&PrFields>,
) -> Job {
    let round = fixing.round;
    let label = if attempt > 1 {
        format!("{}-rerun", unit.label)
    } else {
        unit.label.clone()
    };
    let dir = books
        .dir
        .root()
        .join("scratch")
        .join(format!("{}-{}", round.n, path_safe(&label)));
    let (task, agent, role) = fix_task(fixing, unit, dir);
    let checks = &fixing.ws.checks;
    let validator = (unit.kind == UnitKind::Code
        && !crate::options::is_builtin(checks.fix_validation.as_ref()))
    .then(|| checks.fix_validation.clone());
    Job {
        agent,
        role,
        validator,
        task,
        kind: unit.kind,
        git: fixing.ws.git.clone(),
        repo_dir: fixing.ws.repo_dir().to_path_buf(),
        base_sha: base.to_owned(),
        transcripts: round.dir.join("agents"),
        label,
        metadata_before: match unit.kind {
            UnitKind::Metadata => fields.cloned(),
            UnitKind::Code => None,
        },
    }
}

/// Merge one unit's output into the run's worktree (code) or the PR
/// (metadata).
async fn merge(
    books: &mut Books,
    merging: Merging<'_>,
    fixing: Fixing<'_>,
    changes: &mut Changes,
    unit: &FixUnit,
    out: JobOutput,
) -> Result<Merge> {
    let Fixing { round, ws, .. } = fixing;
    let protected = merging.protected;
    if let Some(record) = &out.validation {
        changes.fix_validations.push(record.clone());
    }
    if unit.kind == UnitKind::Metadata {
        return Ok(Merge::Done(
            merge_metadata(books, merging.forge, merging.config, round, unit, out).await?,
        ));
    }
    let answer = match out.answer {
        Ok(a) => a,
        Err(failure) => return Ok(Merge::Done(blocked_by_failure(unit, &failure))),
    };
    let mut results: BTreeMap<String, UnitResult> = answer
        .outcomes
        .iter()
        .map(|o| {
            (
                o.id.clone(),
                UnitResult {
                    status: o.status,
                    reply: o.reply.clone(),
                    summary: o.summary.clone(),
                    commit: None,
                    metadata_applied: false,
                },
            )
        })
        .collect();
    let fixed: Vec<String> = answer
        .outcomes
        .iter()
        .filter(|o| o.status != FixStatus::Blocked)
        .map(|o| o.id.clone())
        .collect();
    if fixed.is_empty() {
        return Ok(Merge::Done(results));
    }
    if out.changed.is_empty() || out.patch.is_empty() {
        return Ok(Merge::Done(blocked_all(
            unit,
            "the fixer reported a fix but changed no file",
        )));
    }
    // Protected paths. A unit of one item: blocked, its reply names the
    // path its fix touched. A cluster: only the items whose own file is
    // protected are blocked (their reply names that file, which is what
    // the thread is about); the other items keep their fixes, committed
    // without the protected files, and their replies name no protected
    // path.
    let (allowed, refused) = protected.partition(&out.changed);
    let files: Vec<String> = allowed.into_iter().cloned().collect();
    let refused: Vec<(String, String)> = refused
        .into_iter()
        .map(|(p, pat)| (p.clone(), pat.to_owned()))
        .collect();
    if let (Some((path, pattern)), [_]) = (refused.first(), unit.items.as_slice()) {
        // One item: the whole diff is its fix, protected part included;
        // it is handed to a person, nothing is committed.
        let err = crate::worktree::WorktreeError::ProtectedPath {
            path: path.clone(),
            pattern: pattern.clone(),
        };
        return Ok(Merge::Done(blocked_all(unit, &err.to_string())));
    }
    if !refused.is_empty() {
        books.event(
            Some(round.n),
            "protected-refused",
            serde_json::json!({ "unit": unit.label, "paths": refused }),
        )?;
        for item in &unit.items {
            let Some(r) = results.get_mut(item.id()) else {
                continue;
            };
            if r.status == FixStatus::Blocked {
                continue;
            }
            let own = item.classified.path.as_deref();
            if let Some((path, pattern)) = refused.iter().find(|(p, _)| Some(p.as_str()) == own) {
                let err = crate::worktree::WorktreeError::ProtectedPath {
                    path: path.clone(),
                    pattern: pattern.clone(),
                };
                *r = UnitResult::blocked(&err.to_string());
            } else if files.is_empty() {
                *r = UnitResult::blocked_privately(
                    "its fix would only change protected paths (`[paths] protected`), which \
                     Shepherd never commits",
                    &format!(
                        "the fix changed only protected paths: {}",
                        refused
                            .iter()
                            .map(|(p, _)| p.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                );
            }
        }
    }
    let not_addressed: BTreeMap<String, String> = out
        .validation
        .iter()
        .flat_map(|r| r.verdicts.iter())
        .filter(|v| v.verdict == FixVerdict::NotAddressed)
        .map(|v| (v.id.clone(), v.reasons.join(" ")))
        .collect();
    for (id, reasons) in &not_addressed {
        if let Some(r) = results.get_mut(id) {
            let reasons: String = reasons.chars().take(400).collect();
            *r = UnitResult::blocked(&format!(
                "the fix did not pass Shepherd's fix validation, which judged that it does \
                 not address the comment: {reasons}"
            ));
        }
    }
    let keep: Vec<&String> = fixed
        .iter()
        .filter(|id| !not_addressed.contains_key(*id))
        .filter(|id| {
            results
                .get(*id)
                .is_some_and(|r| r.status != FixStatus::Blocked)
        })
        .collect();
    if keep.is_empty() {
        return Ok(Merge::Done(results));
    }

    let patch_file = books.dir.root().join("scratch").join(format!(
        "{}-{}.diff",
        round.n,
        path_safe(&unit.label)
    ));
    let git = ws.git.clone();
    let patch = out.patch;
    let applied = ws
        .git(move |wt| apply_patch(&git, wt.path(), &patch, &patch_file))
        .await?;
    if let ApplyOutcome::Conflict { detail } = applied {
        return Ok(Merge::Retry(detail.chars().take(300).collect()));
    }
    let kept_outcomes: Vec<_> = answer
        .outcomes
        .iter()
        .filter(|o| keep.contains(&&o.id))
        .cloned()
        .collect();
    let message = commit_message(unit, &kept_outcomes);
    let commit_paths = files.clone();
    let protected = protected.clone();
    let git = ws.git.clone();
    let leftover = !refused.is_empty();
    let committed = ws
        .git(move |wt| {
            let r = wt.commit_files(&message, &commit_paths, &protected);
            // A failed commit, or protected changes left out of it: the
            // worktree goes back to exactly HEAD.
            if r.is_err() || leftover {
                reset_hard(&git, wt.path(), "HEAD")?;
            }
            Ok(r)
        })
        .await?;
    let sha = match committed {
        Ok(sha) => sha.0,
        Err(e @ crate::worktree::WorktreeError::ProtectedPath { .. }) => {
            return Ok(Merge::Done(blocked_all(unit, &e.to_string())))
        }
        Err(crate::worktree::WorktreeError::NothingToCommit) => {
            return Ok(Merge::Done(blocked_all(unit, "the fix changed nothing")))
        }
        Err(e) => return Err(e.into()),
    };
    changes.commits.push(sha.clone());
    books.event(
        Some(round.n),
        "commit",
        serde_json::json!({ "sha": sha, "items": keep, "files": files, "unit": unit.label }),
    )?;
    for id in keep {
        if let Some(r) = results.get_mut(id) {
            r.commit = Some(sha.clone());
        }
    }
    Ok(Merge::Done(results))
}

/// `label` as a file name (`u` in front of one that would be empty or
/// hidden).
pub(crate) fn path_safe(label: &str) -> String {
    shepherd_agent::file_name_safe(label, "u")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::round::item::{Feedback, WorkItem};
    use shepherd_core::classify::{Class, Classified, ItemKind};

    fn unit(kind: UnitKind, files: &[&str]) -> FixUnit {
        FixUnit {
            items: vec![WorkItem {
                classified: Classified {
                    item_id: "T".into(),
                    kind: ItemKind::ReviewThread,
                    class: Class::New,
                    reason: String::new(),
                    path: None,
                    line: None,
                    author: None,
                    outdated: false,
                    url: None,
                    replied_round: None,
                    waits_for_a_person: false,
                },
                feedback: Feedback::Thread(shepherd_core::testing::thread("T").build()),
            }],
            cluster: None,
            kind,
            files: files.iter().map(|f| (*f).to_owned()).collect(),
            label: "fix-T".into(),
        }
    }

    #[test]
    fn overlap_rules() {
        let a = unit(UnitKind::Code, &["src/a.rs"]);
        let b = unit(UnitKind::Code, &["src/b.rs"]);
        let ab = unit(UnitKind::Code, &["src/b.rs", "src/a.rs"]);
        let unknown = unit(UnitKind::Code, &[]);
        let meta = unit(UnitKind::Metadata, &[]);
        assert!(!a.overlaps(&b));
        assert!(a.overlaps(&ab) && ab.overlaps(&b));
        assert!(unknown.overlaps(&a) && a.overlaps(&unknown));
        assert!(!meta.overlaps(&unknown) && !meta.overlaps(&a) && !meta.overlaps(&meta));
        assert_eq!(path_safe("fix-PRRT_1/../x"), "fix-PRRT_1_.._x");
        assert_eq!(path_safe(".."), "u..");
    }
}
