//! Stage 15b, CI failures and their repair (issue 31): when CI is `FAIL`
//! on a head the round pushed, read why, and fix what Shepherd broke.
//!
//! For every counted check that failed, and every one whose one re-run
//! passed, the stage reads the check's log ([`Forge::check_log`]: an
//! Actions job's log, another app's check-run output, a GitLab job's
//! trace), cuts it to an inert excerpt
//! ([`shepherd_core::ci_failure::excerpt`]), and says whose failure it is
//! ([`classify`]) against the same check on the head the round started
//! from (the head before Shepherd's push).
//!
//! A regression (and, with `ci.repair_pre_existing`, a pre-existing
//! failure) is then a work item of its own, kind `ci-failure`: the fix
//! role's agent gets the check's name, the excerpt and the diff of
//! Shepherd's commits since the round's start (the `ci-fix` prompt);
//! Shepherd commits what it changed, runs the verify command, and the
//! repair's gate ([`gate_repair`]) lets it out only as a verified commit
//! that changes files. The commits are pushed (never forced) and CI is
//! awaited again (`push-ci-repair-K.json`, `ci-repair-K.json`), at most
//! `ci.repair_attempts` fixes per check per run. What is still red after
//! that, or with the builtin agent (which writes no code), waits for a
//! person, with its excerpt. A failing check is never replied to and never
//! resolves a thread. The stage writes `repair.json`, keeps the failures in
//! `run.json` for the report, and names each in the progress.

use std::time::Instant;

use shepherd_agent::{
    check_fix_answer, CiFailureContext, FixStatus, FixTask, PrContext, TaskItem, UsageLog,
};
use shepherd_core::ci::{CheckOutcome, CheckState, CiStatus, CiVerdict};
use shepherd_core::ci_failure::{
    classify, excerpt, gate_repair, looks_like_infra, may_attempt, CheckFailure, ExcerptLimits,
    FailureClass, FailureFacts, RepairFacts, RepairVerify,
};
use shepherd_core::config::Config;
use shepherd_forge::{CheckRun, Forge};

use super::ci::{checks_with_runs, ci_checks, Head, Waiter};
use super::guard;
use super::pr_state::short;
use super::push::{self, Outgoing};
use super::runner::Books;
use super::state::{Round, Step, Synced};
use super::validate::verify_repair;
use super::workspace::Workspace;
use crate::error::{EngineError, Result};
use crate::options::{is_builtin, ProgressEvent, Stage};
use crate::worktree::{diff_between, reset_hard, ProtectedPaths, WorktreeError};

/// What the repair stage leaves: CI's verdict on the head the round ends
/// at, and that head when the round pushed one (a repair moves both).
pub(crate) struct Repaired {
    pub(crate) ci: CiVerdict,
    pub(crate) pushed: Option<String>,
}

/// The most characters of Shepherd's diff a CI fix task carries.
const MAX_DIFF: usize = shepherd_agent::prompts::MAX_PROMPT_DIFF;

/// Read, judge and repair the failing checks of `pushed`, the head the
/// round pushed (`ci` is its verdict). Nothing is done when the round did
/// not push or CI did not fail there: a head Shepherd did not push has no
/// regression of its own. A repair push that is rejected or fails ends the
/// round as the round's own push would.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn stage(
    books: &mut Books,
    waiter: Waiter<'_>,
    config: &Config,
    round: &Round,
    synced: &Synced,
    ws: &Workspace,
    pushed: Option<&str>,
    ci: CiVerdict,
) -> Result<Step<Repaired>> {
    if ci.status == CiStatus::Pass {
        // Green: what failed on an earlier head is history, but a repair
        // that made it green stays in the report.
        let before = books.run.ci_failures.len();
        books.run.ci_failures.retain(|f| f.fixed_by.is_some());
        if books.run.ci_failures.len() != before {
            books.save_run()?;
        }
    }
    let Some(sha) = pushed else {
        return Ok(Ok(Repaired { ci, pushed: None }));
    };
    let forge = waiter.forge;
    let has_flaky = ci.rerun.iter().any(|c| !ci.failed.contains(c));
    if ci.status != CiStatus::Fail && !has_flaky {
        return Ok(Ok(Repaired {
            ci,
            pushed: Some(sha.to_owned()),
        }));
    }

    let pre = config.ci.repair_pre_existing;
    let mut failures = judge(books, forge, synced, sha, &ci, pre).await;
    still_ours(&mut failures, &books.run.ci_failures);
    let mut head = sha.to_owned();
    let mut verdict = ci;
    let writes_code = !is_builtin(ws.agents.fix.as_ref());
    let mut batch = 0u32;
    loop {
        let todo: Vec<usize> = (0..failures.len())
            .filter(|&i| {
                let f = &failures[i];
                f.fixed_by.is_none()
                    && may_attempt(
                        f.class,
                        config.ci.repair_pre_existing,
                        writes_code,
                        books.run.repair_attempts.get(&f.name).copied().unwrap_or(0),
                        config.ci.repair_attempts,
                    )
            })
            .collect();
        if todo.is_empty() {
            break;
        }
        batch += 1;
        let mut made: Vec<(usize, String)> = Vec::new();
        for i in todo {
            let n = {
                let count = books
                    .run
                    .repair_attempts
                    .entry(failures[i].name.clone())
                    .or_insert(0);
                *count += 1;
                *count
            };
            books.save_run()?;
            failures[i].attempts = n;
            let tried =
                attempt_fix(books, config, round, synced, ws, &failures[i], &head, batch).await?;
            match tried {
                Ok(commit) => {
                    failures[i].tried.push(format!(
                        "fix {n} of {}: committed as {}",
                        config.ci.repair_attempts,
                        short(&commit)
                    ));
                    made.push((i, commit));
                }
                Err(reason) => failures[i].tried.push(format!(
                    "fix {n} of {}: {reason}",
                    config.ci.repair_attempts
                )),
            }
        }
        if made.is_empty() {
            continue;
        }
        let commits: Vec<String> = made.iter().map(|(_, c)| c.clone()).collect();
        let artifact = format!("push-ci-repair-{batch}.json");
        let out = Outgoing {
            head_ref: &synced.snapshot.pr.head_ref,
            from: &head,
            commits: &commits,
            artifact: &artifact,
        };
        let sent = match push::send(books, round, ws, out).await? {
            Ok((sent, _)) => sent,
            Err(end) => {
                save(books, round, &failures)?;
                return Ok(Err(end));
            }
        };
        let new_head = match sent {
            Ok(Some(new_head)) => new_head,
            // `send` pushes only with commits to push.
            Ok(None) => break,
            Err(end) => {
                save(books, round, &failures)?;
                return Ok(Err(end));
            }
        };
        books.emit(ProgressEvent::Note {
            message: format!(
                "CI repair pushed {} ({}); waiting for CI again",
                short(&new_head),
                made.iter()
                    .map(|(i, _)| format!("`{}`", failures[*i].name))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        });
        let artifact = format!("ci-repair-{batch}.json");
        let again = Head {
            sha: &new_head,
            fresh: true,
            artifact: &artifact,
        };
        let (v, _) = super::ci::wait(books, waiter, round, synced, again).await?;
        let now = if v.status == CiStatus::Pass {
            Vec::new()
        } else {
            judge(books, forge, synced, &new_head, &v, pre).await
        };
        merge(&mut failures, now, &made, &new_head);
        head = new_head;
        verdict = v;
    }
    for f in &mut failures {
        // The run's count, rounds before this one included.
        f.attempts = books.run.repair_attempts.get(&f.name).copied().unwrap_or(0);
        if f.fixed_by.is_some() || !f.class.is_repaired(config.ci.repair_pre_existing) {
            continue;
        }
        f.handed_to_a_person = true;
        let why = if !writes_code {
            "the fix agent is `builtin`, which writes no code".to_owned()
        } else if config.ci.repair_attempts == 0 {
            "`ci.repair_attempts` is 0".to_owned()
        } else {
            format!(
                "{} fix attempt(s) of {} did not make it pass",
                f.attempts, config.ci.repair_attempts
            )
        };
        f.tried.push(format!("left for a person: {why}"));
    }
    for f in &failures {
        books.emit(ProgressEvent::Note {
            message: format!(
                "CI check `{}` on {}: {} ({})",
                f.name,
                short(&f.sha),
                f.class.as_str(),
                f.tried.join("; ")
            ),
        });
    }
    save(books, round, &failures)?;
    let summary = if failures.is_empty() {
        "no failing check to read".to_owned()
    } else {
        failures
            .iter()
            .map(|f| match &f.fixed_by {
                Some(c) => format!("{}: {}, fixed by {}", f.name, f.class.as_str(), short(c)),
                None => format!("{}: {}", f.name, f.class.as_str()),
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    books.stage_done(round, Stage::Repair, summary)?;
    let pushed = Some(head);
    Ok(Ok(Repaired {
        ci: verdict,
        pushed,
    }))
}

/// A check an earlier round of this run found to be Shepherd's
/// regression, not fixed since, failed on this round's start too: it is
/// still Shepherd's regression, not a pre-existing failure (its fix
/// attempts are the run's, counted across rounds).
fn still_ours(failures: &mut [CheckFailure], earlier: &[CheckFailure]) {
    for f in failures.iter_mut() {
        let Some(first) = earlier.iter().find(|e| {
            e.name == f.name && e.class == FailureClass::Regression && e.fixed_by.is_none()
        }) else {
            continue;
        };
        if f.class == FailureClass::PreExisting {
            f.class = FailureClass::Regression;
            f.before_sha.clone_from(&first.before_sha);
            f.tried = vec![format!(
                "Shepherd's regression since {}: it did not fail on {} before Shepherd's push",
                short(&first.sha),
                first
                    .before_sha
                    .as_deref()
                    .map(short)
                    .unwrap_or("the earlier head")
            )];
        }
    }
}

/// `repair.json`, the failures added to the round's `ci.json` (as
/// `ci_failures`), the event, and the failures kept for the report.
fn save(books: &mut Books, round: &Round, failures: &[CheckFailure]) -> Result<()> {
    books.artifact(round, "repair.json", &failures)?;
    // `ci.json` was written by the CI wait; it gains what was read of
    // its failures. A file that cannot be read back is left as it is.
    if let Some(mut ci) = std::fs::read(round.dir.join("ci.json"))
        .ok()
        .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
    {
        if let (Some(object), Ok(listed)) = (ci.as_object_mut(), serde_json::to_value(failures)) {
            object.insert("ci_failures".to_owned(), listed);
            books.artifact(round, "ci.json", &ci)?;
        }
    }
    books.event(
        Some(round.n),
        "ci-failures",
        serde_json::json!({
            "checks": failures
                .iter()
                .map(|f| serde_json::json!({
                    "check": f.name,
                    "sha": f.sha,
                    "class": f.class,
                    "fixed_by": f.fixed_by,
                }))
                .collect::<Vec<_>>(),
        }),
    )?;
    books.run.ci_failures = failures.to_vec();
    books.save_run()
}

/// After a repair push: a check a repair was made for that no longer
/// fails on `new_head` is fixed by that repair; one still failing is
/// re-read there (its class stays what it was against the round's start);
/// a check that fails only now is added as found.
fn merge(
    failures: &mut Vec<CheckFailure>,
    now: Vec<CheckFailure>,
    made: &[(usize, String)],
    new_head: &str,
) {
    for (i, f) in failures.iter_mut().enumerate() {
        let still = now
            .iter()
            .find(|n| n.name == f.name && n.class != FailureClass::Flaky);
        match still {
            Some(n) => {
                f.sha = n.sha.clone();
                f.excerpt.clone_from(&n.excerpt);
                f.no_log.clone_from(&n.no_log);
                f.tried
                    .push(format!("still failing on {}", short(new_head)));
            }
            None => {
                if let Some((_, commit)) = made.iter().find(|(j, _)| *j == i) {
                    f.fixed_by = Some(commit.clone());
                    f.tried.push(format!("passed on {}", short(new_head)));
                }
            }
        }
    }
    for n in now {
        if !failures.iter().any(|f| f.name == n.name) {
            failures.push(n);
        }
    }
}

/// One fix of `failure` on `head` by the fix role's agent, committed,
/// verified and gated: the commit, or why there is none (the worktree is
/// back at `head` then).
#[allow(clippy::too_many_arguments)]
async fn attempt_fix(
    books: &mut Books,
    config: &Config,
    round: &Round,
    synced: &Synced,
    ws: &Workspace,
    failure: &CheckFailure,
    head: &str,
    batch: u32,
) -> Result<std::result::Result<String, String>> {
    let agent = ws.agents.fix.clone();
    let (diff, files) = {
        let git = ws.git.clone();
        let (base, to) = (synced.start_sha.clone(), head.to_owned());
        ws.git(move |wt| diff_between(&git, wt.path(), &base, &to))
            .await?
    };
    let diff = if diff.chars().count() > MAX_DIFF {
        let kept: String = diff.chars().take(MAX_DIFF).collect();
        format!(
            "{kept}
[diff cut at {MAX_DIFF} characters: read the rest with git diff]"
        )
    } else {
        diff
    };
    let log = match (&failure.excerpt, &failure.no_log) {
        (Some(e), _) => e.text.clone(),
        (None, Some(why)) => format!("(no log: {why})"),
        (None, None) => String::new(),
    };
    let before = match failure.class {
        FailureClass::PreExisting => "it failed there too",
        _ => "it did not fail there",
    };
    let item = TaskItem::from_ci_failure(CiFailureContext {
        check: failure.name.clone(),
        sha: failure.sha.clone(),
        before_sha: synced.start_sha.clone(),
        before: before.to_owned(),
        log,
        diff,
    });
    let snapshot = &synced.snapshot;
    let mut task = FixTask::single(
        PrContext::new(snapshot.forge, &snapshot.pr),
        ws.path().to_path_buf(),
        item,
    );
    task.files_hint = files;
    ws.git(|wt| wt.discard_changes()).await?;
    let usage = UsageLog::new();
    let label = format!("ci-fix-{}", failure.name);
    let ctx = round.agent_ctx(&label, &usage);
    let started = Instant::now();
    let got = guard::writing_call(books, ws, round, "ci-fix", agent.fix(&task, &ctx)).await?;
    books.account_agent("fix", agent.name(), started.elapsed(), &usage);
    let answer = match ws.keep_checked(got, |a| check_fix_answer(&task, a)).await? {
        Ok(a) => a,
        Err(refused) => return Ok(Err(refused.said_of("fix agent"))),
    };
    let agent_fixed = answer
        .outcomes
        .iter()
        .any(|o| o.status != FixStatus::Blocked);
    let changed = ws.git(|wt| wt.changed_paths()).await?;
    let mut commit = None;
    if agent_fixed && !changed.is_empty() {
        let protected = ProtectedPaths::new(&config.paths.protected)?;
        let message = format!(
            "shepherd: fix CI check `{}`

It failed on {} after Shepherd's commits; it did not              fail on {}.
",
            failure.name,
            short(&failure.sha),
            short(&synced.start_sha)
        );
        let files = changed.clone();
        let committed = ws
            .git(move |wt| Ok(wt.commit_files(&message, &files, &protected)))
            .await?;
        match committed {
            Ok(sha) => commit = Some(sha.0),
            Err(e @ (WorktreeError::ProtectedPath { .. } | WorktreeError::NothingToCommit)) => {
                ws.git(|wt| wt.discard_changes()).await?;
                return Ok(Err(format!("the fix was refused: {e}")));
            }
            Err(e) => return Err(EngineError::Worktree(e)),
        }
    }
    ws.git(|wt| wt.discard_changes()).await?;
    let (files, verify) = match &commit {
        Some(sha) => {
            let of = sha.clone();
            let files = ws.git(move |wt| wt.files_of_commit(&of)).await?;
            let log = format!(
                "verify-ci-repair-{batch}-{}.log",
                shepherd_agent::file_name_safe(&failure.name, "check")
            );
            (files, verify_repair(books, config, round, ws, &log).await?)
        }
        None => (Vec::new(), RepairVerify::Failed),
    };
    let verdict = gate_repair(&RepairFacts {
        agent_fixed,
        commit: commit.as_deref(),
        files: &files,
        verify,
    });
    match (verdict, commit) {
        (Ok(()), Some(sha)) => {
            books.event(
                Some(round.n),
                "commit",
                serde_json::json!({ "sha": sha, "check": failure.name, "files": files, "unit": "ci-repair" }),
            )?;
            Ok(Ok(sha))
        }
        (verdict, commit) => {
            if commit.is_some() {
                // Refused: the commit never leaves the worktree.
                let git = ws.git.clone();
                let back = head.to_owned();
                ws.git(move |wt| reset_hard(&git, wt.path(), &back)).await?;
            }
            let reason = verdict
                .err()
                .unwrap_or_else(|| "the fix changed no file".to_owned());
            Ok(Err(reason))
        }
    }
}

/// The failing checks of `sha` (with `ci` its verdict), each with its log
/// excerpt and whose failure it is against the round's start.
async fn judge(
    books: &Books,
    forge: &dyn Forge,
    synced: &Synced,
    sha: &str,
    ci: &CiVerdict,
    repair_pre_existing: bool,
) -> Vec<CheckFailure> {
    let flaky: Vec<&String> = ci.rerun.iter().filter(|c| !ci.failed.contains(c)).collect();
    let number = books.run.target.number;
    let runs = match forge.check_runs(sha).await {
        Ok(runs) => runs,
        Err(err) => {
            tracing::warn!(%err, sha, "cannot read the check runs of the failing head");
            Vec::new()
        }
    };
    let now_checks = checks_with_runs(forge, number, sha, &runs).await;
    let before = match ci_checks(forge, number, &synced.start_sha).await {
        Ok(checks) => checks,
        Err(err) => {
            tracing::warn!(%err, sha = %synced.start_sha, "cannot read the checks before the push");
            Vec::new()
        }
    };

    let mut failures = Vec::new();
    let mut names: Vec<(&String, bool)> = ci.failed.iter().map(|c| (c, false)).collect();
    names.extend(flaky.iter().map(|c| (*c, true)));
    let mut seen = std::collections::BTreeSet::new();
    names.retain(|(name, _)| seen.insert(*name));
    for (name, rerun_passed) in names {
        let run = failing_run(&runs, name, rerun_passed);
        let (excerpt, no_log) = match run {
            Some(run) => match forge.check_log(run).await {
                Ok(log) => (Some(excerpt(&log, ExcerptLimits::default())), None),
                Err(err) => (None, Some(err.to_string())),
            },
            None => (
                None,
                Some("no check run of this name: a commit status has no log to read".to_owned()),
            ),
        };
        let now = now_checks
            .iter()
            .find(|c| &c.name == name && (rerun_passed || c.outcome() == CheckOutcome::Fail))
            .cloned()
            .or_else(|| run.map(CheckRun::to_state));
        let Some(now) = now else {
            continue;
        };
        let before_outcome = worst(&before, name);
        let class = classify(&FailureFacts {
            now: &now,
            before: before_outcome,
            rerun_passed,
            infra_log: excerpt.as_ref().is_some_and(|e| looks_like_infra(&e.text)),
        });
        let tried = match class {
            FailureClass::Flaky => vec!["re-run once; the re-run passed".to_owned()],
            FailureClass::Infra => {
                vec!["left alone: the CI infrastructure failed, not the code".to_owned()]
            }
            FailureClass::PreExisting if !repair_pre_existing => vec![format!(
                "left alone: it failed on {} before Shepherd's push too",
                short(&synced.start_sha)
            )],
            FailureClass::PreExisting => vec![format!(
                "it failed on {} before Shepherd's push too",
                short(&synced.start_sha)
            )],
            FailureClass::Regression => vec![format!(
                "it did not fail on {} before Shepherd's push",
                short(&synced.start_sha)
            )],
        };
        failures.push(CheckFailure {
            name: name.clone(),
            sha: sha.to_owned(),
            class,
            before_sha: Some(synced.start_sha.clone()),
            excerpt,
            no_log,
            tried,
            attempts: 0,
            fixed_by: None,
            handed_to_a_person: false,
        });
    }
    failures
}

/// The check run of `name` to read the log of: one that failed, or when
/// its re-run passed, any of that name.
fn failing_run<'a>(runs: &'a [CheckRun], name: &str, rerun_passed: bool) -> Option<&'a CheckRun> {
    let named = || runs.iter().filter(move |r| r.name == name);
    named()
        .find(|r| r.to_state().outcome() == CheckOutcome::Fail)
        .or_else(|| if rerun_passed { named().next() } else { None })
}

/// What the checks named `name` said on the earlier head: `Fail` when any
/// failed, else the first one's outcome; `None` when none ran there.
fn worst(checks: &[CheckState], name: &str) -> Option<CheckOutcome> {
    let mut named = checks
        .iter()
        .filter(|c| c.name == name)
        .map(CheckState::outcome);
    let first = named.next()?;
    if first == CheckOutcome::Fail || named.any(|o| o == CheckOutcome::Fail) {
        Some(CheckOutcome::Fail)
    } else {
        Some(first)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(name: &str, sha: &str, class: FailureClass, fixed_by: Option<&str>) -> CheckFailure {
        CheckFailure {
            name: name.to_owned(),
            sha: sha.to_owned(),
            class,
            before_sha: Some(format!("before-{sha}")),
            excerpt: None,
            no_log: None,
            tried: vec!["judged".to_owned()],
            attempts: 0,
            fixed_by: fixed_by.map(str::to_owned),
            handed_to_a_person: false,
        }
    }

    /// A regression of round 1 that round 2 finds failing before its own
    /// push stays Shepherd's; anything else keeps its class.
    #[test]
    fn an_earlier_regression_stays_ours() {
        use FailureClass::*;
        let earlier = [
            failure("lint", "r1", Regression, None),
            failure("fmt", "r1", Regression, Some("fix1")),
            failure("docs", "r1", PreExisting, None),
        ];
        let mut now = vec![
            failure("lint", "r2", PreExisting, None),
            failure("fmt", "r2", PreExisting, None),
            failure("docs", "r2", PreExisting, None),
            failure("tests", "r2", PreExisting, None),
        ];
        still_ours(&mut now, &earlier);
        let classes: Vec<FailureClass> = now.iter().map(|f| f.class).collect();
        assert_eq!(classes, [Regression, PreExisting, PreExisting, PreExisting]);
        assert_eq!(now[0].before_sha.as_deref(), Some("before-r1"));
        assert!(now[0].tried[0].contains("since r1"), "{:?}", now[0].tried);
        assert_eq!(now[3].tried, ["judged"]);
    }
}
