//! Stage 15, CI: wait for the checks of the head the round ends at.
//! Required checks come from branch protection, rulesets and `isRequired`;
//! when discovery fails every check counts (strict). Checks that have not
//! appeared are waited for (up to `config.appear_timeout_secs`); failed jobs
//! are re-run at most once per head SHA; a timeout, a check still pending at
//! the deadline, or no checks at all is `UNKNOWN`, never `PASS`. Polls start
//! soon and back off to the configured interval
//! ([`shepherd_core::ci::ci_poll_schedule`]: 2, 4, 8, ... s), so a quick check
//! is seen in seconds; `ci.json` records when each poll was made. A
//! `Waiting` progress event is emitted when what is waited for changes. The same on GitLab, where
//! the checks are the jobs of the head pipeline, the required ones those
//! that may not fail (`allow_failure: false`), and a re-run retries the
//! failed jobs.

use std::time::{Duration, Instant};

use serde::Serialize;
use shepherd_core::ci::{
    ci_poll_schedule, should_rerun, verdict, CheckState, CiStatus, CiVerdict, RequiredSet,
};

use super::pr_state::short;
use shepherd_core::config::CiConfig;
use shepherd_forge::Forge;

use super::runner::Books;
use super::state::{Round, Synced};
use crate::error::Result;
use crate::options::{ProgressEvent, Stage};

#[derive(Serialize)]
struct CiArtifact<'a> {
    sha: &'a str,
    required: &'a RequiredSet,
    discovery: Vec<String>,
    checks: &'a [CheckState],
    reran: Vec<u64>,
    polls: u32,
    /// When each poll was made, in ms after the wait started.
    poll_offsets_ms: Vec<u64>,
    waited_ms: u64,
    verdict: &'a CiVerdict,
}

/// The checks of commit `sha` of PR `number`: check runs and statuses,
/// with `isRequired` from the rollup when it describes `sha`.
pub(crate) async fn ci_checks(
    forge: &dyn Forge,
    number: u64,
    sha: &str,
) -> std::result::Result<Vec<CheckState>, String> {
    let runs = forge.check_runs(sha).await.map_err(|e| e.to_string())?;
    Ok(checks_with_runs(forge, number, sha, &runs).await)
}

/// [`ci_checks`] of `sha` whose check runs (`runs`) were already read.
pub(crate) async fn checks_with_runs(
    forge: &dyn Forge,
    number: u64,
    sha: &str,
    runs: &[shepherd_forge::CheckRun],
) -> Vec<CheckState> {
    let mut checks: Vec<CheckState> = runs.iter().map(|r| r.to_state()).collect();
    match forge.combined_status(sha).await {
        Ok(status) => checks.extend(status.statuses.iter().map(|s| s.to_state())),
        Err(err) => tracing::debug!(%err, "no combined status"),
    }
    // `isRequired` from the rollup, when it describes this commit.
    if let Ok(rollup) = forge.status_check_rollup(number).await {
        if rollup.head_sha == sha {
            for check in &mut checks {
                if let Some(flag) = rollup
                    .checks
                    .iter()
                    .find(|c| c.name == check.name && c.source == check.source)
                    .and_then(|c| c.required)
                {
                    check.required = Some(flag);
                }
            }
        }
    }
    checks
}

/// The CI verdict on what the round pushed (else on its start).
pub(crate) async fn stage(
    books: &mut Books,
    ci: Waiter<'_>,
    round: &Round,
    synced: &Synced,
    pushed: Option<&str>,
) -> Result<CiVerdict> {
    let sha = pushed.unwrap_or(&synced.start_sha);
    let head = Head {
        sha,
        fresh: pushed.is_some(),
        artifact: "ci.json",
    };
    let (result, summary) = wait(books, ci, round, synced, head).await?;
    books.stage_done(round, Stage::Ci, summary)?;
    Ok(result)
}

/// What a CI wait reads: the forge, the `[ci]` settings, and the poll
/// interval the run uses.
#[derive(Clone, Copy)]
pub(crate) struct Waiter<'a> {
    pub(crate) forge: &'a dyn Forge,
    pub(crate) config: &'a CiConfig,
    pub(crate) poll: Duration,
}

/// The head a CI wait is for.
#[derive(Clone, Copy)]
pub(crate) struct Head<'a> {
    pub(crate) sha: &'a str,
    /// Whether it was just pushed: its checks take a moment to appear.
    pub(crate) fresh: bool,
    /// The round's artifact the wait is recorded in (`ci.json`).
    pub(crate) artifact: &'a str,
}

/// Wait for the checks of `head` (re-running failed jobs once per head),
/// record the wait in its artifact, and keep the verdict as the run's
/// last; the verdict and its one-line summary.
pub(crate) async fn wait(
    books: &mut Books,
    ci: Waiter<'_>,
    round: &Round,
    synced: &Synced,
    head: Head<'_>,
) -> Result<(CiVerdict, String)> {
    let Waiter {
        forge,
        config,
        poll,
    } = ci;
    let sha = head.sha.to_owned();
    let number = books.run.target.number;
    let base_ref = synced.snapshot.pr.base_ref.clone();
    let (required, discovery) = match forge.required_checks(number, &base_ref).await {
        Ok(found) => (found.required.clone(), found.summary()),
        Err(err) => (
            RequiredSet::Unknown,
            vec![format!(
                "required-check discovery failed ({err}): every check counts"
            )],
        ),
    };
    let started = Instant::now();
    let deadline = started + config.timeout();
    let appear_deadline = started + config.appear_timeout().min(config.timeout());
    let rerun_enabled = config.rerun_failed;

    let mut attempt = 0u32;
    let mut polls = 0u32;
    let mut poll_offsets_ms = Vec::new();
    let mut last_waiting: Option<String> = None;
    let mut reran = Vec::new();
    let mut rerun_checks: Vec<String> = Vec::new();
    if head.fresh {
        // A new head: its checks take a moment to be created, and bots
        // react to the push meanwhile.
        tokio::time::sleep(ci_poll_schedule(0, poll)).await;
        attempt = 1;
    }
    let (checks, mut result) = loop {
        polls += 1;
        let now = Instant::now();
        poll_offsets_ms.push(millis(now.duration_since(started)));
        let (checks, last_error) = match ci_checks(forge, number, &sha).await {
            Ok(checks) => (checks, None),
            Err(err) => (Vec::new(), Some(err)),
        };
        let deadline_passed = now >= deadline || (checks.is_empty() && now >= appear_deadline);
        let mut v = verdict(&checks, &required, &[], deadline_passed);
        if let Some(err) = &last_error {
            v.reasons
                .push(format!("the checks could not be read: {err}"));
        }
        if rerun_enabled && should_rerun(&v, books.run.rerun_shas.contains(&sha)) {
            // Recorded before the call: a crash after it must not re-run
            // a second time.
            books.run.rerun_shas.push(sha.clone());
            books.save_run()?;
            // GitHub re-runs the failed jobs of each completed workflow
            // run, GitLab retries each failed job (even while its
            // pipeline still runs): the forge knows which.
            match forge.rerun_failed_checks(number, &sha).await {
                Ok(ids) => {
                    reran = ids;
                    rerun_checks.clone_from(&v.failed);
                }
                Err(err) => tracing::warn!(%err, sha = %sha, "cannot re-run the failed jobs"),
            }
            if !reran.is_empty() {
                books.emit(ProgressEvent::Note {
                    message: format!(
                        "CI failed on {} ({}); re-running the failed jobs once",
                        short(&sha),
                        v.failed.join(", ")
                    ),
                });
                books.event(
                    Some(round.n),
                    "ci-rerun",
                    serde_json::json!({ "sha": sha, "runs": reran }),
                )?;
                attempt = 1;
                last_waiting = None;
                tokio::time::sleep(ci_poll_schedule(0, poll)).await;
                continue;
            }
        }
        if v.status.is_final() {
            break (checks, v);
        }
        // One event per change of what is waited for: the terminal's
        // spinner shows it (with the time waited), a log gets a line.
        let mut waiting: Vec<String> = v.pending.clone();
        waiting.extend(v.missing.iter().map(|m| format!("{m} (not yet reported)")));
        let what = if waiting.is_empty() {
            format!("CI of {}: waiting for checks to appear", short(&sha))
        } else {
            format!("CI of {}: waiting for {}", short(&sha), waiting.join(", "))
        };
        if last_waiting.as_deref() != Some(what.as_str()) {
            books.emit(ProgressEvent::Waiting {
                round: round.n,
                what: what.clone(),
            });
            last_waiting = Some(what);
        }
        let remaining = deadline.saturating_duration_since(Instant::now());
        let delay = ci_poll_schedule(attempt, poll).min(remaining.max(Duration::from_millis(10)));
        attempt += 1;
        tokio::time::sleep(delay).await;
    };

    result.rerun = rerun_checks;
    books.artifact(
        round,
        head.artifact,
        &CiArtifact {
            sha: &sha,
            required: &required,
            discovery: discovery.clone(),
            checks: &checks,
            reran: reran.clone(),
            polls,
            poll_offsets_ms,
            waited_ms: millis(started.elapsed()),
            verdict: &result,
        },
    )?;
    let mut summary = format!("{} on {}", result.status, short(&sha));
    if result.status != CiStatus::Pass {
        if let Some(reason) = result.reasons.first() {
            summary.push_str(&format!(": {reason}"));
        }
    }
    if !reran.is_empty() {
        summary.push_str(" (failed jobs re-run once)");
    }
    if matches!(required, RequiredSet::Unknown) {
        summary.push_str(" [strict: required checks unknown]");
    }
    books.run.last_ci = Some(result.clone());
    Ok((result, summary))
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
