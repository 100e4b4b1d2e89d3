//! Stage 15b, CI failures (issue 31): when CI is `FAIL` on a head the round
//! pushed, read why. For every counted check that failed, and every one
//! whose one re-run passed, the stage reads the check's log
//! ([`Forge::check_log`]: an Actions job's log, another app's check-run
//! output, a GitLab job's trace), cuts it to an inert excerpt
//! ([`shepherd_core::ci_failure::excerpt`]), and says whose failure it is
//! ([`classify`]) against the same check on the head the round started
//! from (the head before Shepherd's push). It writes `repair.json`,
//! keeps the failures in `run.json` for the report, and names each in the
//! progress. A failing check is never resolved or replied to: the run stays
//! not converged while CI is red.

use shepherd_core::ci::{CheckOutcome, CheckState, CiStatus, CiVerdict};
use shepherd_core::ci_failure::{
    classify, excerpt, looks_like_infra, CheckFailure, ExcerptLimits, FailureClass, FailureFacts,
};
use shepherd_forge::{CheckRun, Forge};

use super::ci::ci_checks;
use super::pr_state::short;
use super::runner::Books;
use super::state::{Round, Synced};
use crate::error::Result;
use crate::options::{ProgressEvent, Stage};

/// Read and judge the failing checks of `pushed`, the head the round pushed
/// (`ci` is its verdict). Nothing is done when the round did not push or CI
/// did not fail there: a head Shepherd did not push has no regression of
/// its own.
pub(crate) async fn stage(
    books: &mut Books,
    forge: &dyn Forge,
    round: &Round,
    synced: &Synced,
    pushed: Option<&str>,
    ci: &CiVerdict,
) -> Result<Vec<CheckFailure>> {
    if ci.status == CiStatus::Pass {
        // Green: what failed on an earlier head is history.
        if !books.run.ci_failures.is_empty() {
            books.run.ci_failures.clear();
            books.save_run()?;
        }
    }
    let Some(sha) = pushed else {
        return Ok(Vec::new());
    };
    let flaky: Vec<&String> = ci.rerun.iter().filter(|c| !ci.failed.contains(c)).collect();
    if ci.status != CiStatus::Fail && flaky.is_empty() {
        return Ok(Vec::new());
    }
    let number = books.run.target.number;
    let runs = match forge.check_runs(sha).await {
        Ok(runs) => runs,
        Err(err) => {
            tracing::warn!(%err, sha, "cannot read the check runs of the failing head");
            Vec::new()
        }
    };
    let now_checks: Vec<CheckState> = ci_checks(forge, number, sha).await.unwrap_or_default();
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
        let tried = vec![match class {
            FailureClass::Flaky => "re-run once; the re-run passed".to_owned(),
            FailureClass::Infra => {
                "left alone: the CI infrastructure failed, not the code".to_owned()
            }
            FailureClass::PreExisting => format!(
                "left alone: it failed on {} before Shepherd's push too",
                short(&synced.start_sha)
            ),
            FailureClass::Regression => format!(
                "left for a person: it did not fail on {} before Shepherd's push",
                short(&synced.start_sha)
            ),
        }];
        books.emit(ProgressEvent::Note {
            message: format!(
                "CI check `{name}` on {}: {} ({})",
                short(sha),
                class.as_str(),
                tried.join("; ")
            ),
        });
        failures.push(CheckFailure {
            name: name.clone(),
            sha: sha.to_owned(),
            class,
            before_sha: Some(synced.start_sha.clone()),
            excerpt,
            no_log,
            tried,
            fixed_by: None,
            handed_to_a_person: class == FailureClass::Regression,
        });
    }

    books.artifact(round, "repair.json", &failures)?;
    books.event(
        Some(round.n),
        "ci-failures",
        serde_json::json!({
            "sha": sha,
            "checks": failures
                .iter()
                .map(|f| serde_json::json!({ "check": f.name, "class": f.class }))
                .collect::<Vec<_>>(),
        }),
    )?;
    books.run.ci_failures.clone_from(&failures);
    let summary = if failures.is_empty() {
        "no failing check to read".to_owned()
    } else {
        failures
            .iter()
            .map(|f| format!("{}: {}", f.name, f.class.as_str()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    books.stage_done(round, Stage::Repair, summary)?;
    Ok(failures)
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
