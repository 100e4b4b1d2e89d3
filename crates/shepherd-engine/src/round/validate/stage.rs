//! The validate stage: the verify command on the round's fixes, one
//! repair when they broke it (`validate.json`, `verify.log`).

use std::collections::BTreeSet;

use serde::Serialize;
use shepherd_core::config::Config;

use super::blame::{classify_failure, files_named_in, FailureClass};
use super::command::{discover, VerifyCommand};
use super::repair::{attempt_repair, Repair, VerifyFailure};
use super::run::{run_command, CommandRun};
use crate::error::Result;
use crate::options::{ProgressEvent, Stage};
use crate::round::guard;
use crate::round::runner::Books;
use crate::round::state::{
    Changes, Fixed, Fixing, Flow, Round, RoundEnd, Step, Validated, Verified,
};
use crate::round::workspace::Workspace;
use crate::run_dir::write_text;

/// One run of the verify command (`validate.json`'s `attempts`).
#[derive(Debug, Serialize)]
pub(super) struct Attempt {
    pub(super) label: &'static str,
    pub(super) head: String,
    pub(super) exit_code: Option<i32>,
    pub(super) timed_out: bool,
    pub(super) passed: bool,
    pub(super) duration_ms: u64,
    pub(super) log: String,
    pub(super) files_named: Vec<String>,
    pub(super) blame: Option<FailureClass>,
}

#[derive(Serialize)]
struct ValidateArtifact<'a> {
    skipped: Option<String>,
    command: Option<VerifyCommand>,
    passed: bool,
    exit_code: Option<i32>,
    timed_out: bool,
    duration_ms: u64,
    touched_files: Vec<String>,
    attempts: Vec<Attempt>,
    repair: Option<Repair>,
    note: Option<String>,
    fix_validation: &'a [crate::round::unit::FixValidationRecord],
}

/// The files the round's commits change, sorted.
async fn touched_files(ws: &Workspace, changes: &Changes) -> Result<Vec<String>> {
    let commits = changes.commits.clone();
    ws.git(move |wt| {
        let mut touched = BTreeSet::new();
        for sha in &commits {
            touched.extend(wt.files_of_commit(sha)?);
        }
        Ok(touched.into_iter().collect())
    })
    .await
}

pub(super) async fn verify_once(
    books: &Books,
    config: &Config,
    round: &Round,
    ws: &Workspace,
    cmd: &VerifyCommand,
    label: &'static str,
    log: &str,
) -> Result<(Attempt, CommandRun)> {
    books.emit(ProgressEvent::Waiting {
        round: round.n,
        what: format!("verify: {}", cmd.shown()),
    });
    let head = ws.git(|wt| wt.head_sha()).await?.0;
    let root = ws.path().to_path_buf();
    let run = run_command(&cmd.argv, &root, config.verify.timeout(), false).await;
    write_text(&round.dir.join(log), &run.output)?;
    let named = if run.passed() {
        BTreeSet::new()
    } else {
        files_named_in(&run.output, &root)
    };
    Ok((
        Attempt {
            label,
            head,
            exit_code: run.exit_code,
            timed_out: run.timed_out,
            passed: run.passed(),
            duration_ms: u64::try_from(run.duration.as_millis()).unwrap_or(u64::MAX),
            log: log.to_owned(),
            files_named: named.into_iter().collect(),
            blame: None,
        },
        run,
    ))
}

/// The verify command on the round's fixes (and one repair when they
/// broke it), or the end of the round when a fix-validation call broke
/// the read-only rule (before any commit of this stage).
pub(crate) async fn stage(
    books: &mut Books,
    config: &Config,
    fixing: Fixing<'_>,
    fixed: Fixed,
) -> Result<Step<Validated>> {
    let Fixed(mut changes) = fixed;
    let flow = validate(books, config, fixing, &mut changes).await?;
    Ok(flow.map(|()| Validated(changes)))
}

async fn validate(
    books: &mut Books,
    config: &Config,
    fixing: Fixing<'_>,
    changes: &mut Changes,
) -> Result<Flow> {
    let round = fixing.round;
    if let Err(reason) = guard::check_fix_validations(books, round, changes)? {
        return Ok(Err(RoundEnd::Failed { reason }));
    }
    if changes.commits.is_empty() {
        let artifact = ValidateArtifact {
            skipped: Some("the round made no commit".to_owned()),
            command: None,
            passed: true,
            exit_code: None,
            timed_out: false,
            duration_ms: 0,
            touched_files: Vec::new(),
            attempts: Vec::new(),
            repair: None,
            note: None,
            fix_validation: &changes.fix_validations,
        };
        books.artifact(round, "validate.json", &artifact)?;
        return Ok(Ok(()));
    }
    let root = fixing.ws.path().to_path_buf();
    let touched = touched_files(fixing.ws, changes).await?;
    let Some(cmd) = discover(config, &root) else {
        let reason = "no verify command: set `[verify] command` in shepherd.toml, or add \
                      verify.sh or .shepherd/verify; nothing unverified is pushed, so the push \
                      was refused"
            .to_owned();
        let head = fixing.ws.git(|wt| wt.head_sha()).await?.0;
        changes.verified = Some(Verified {
            head,
            passed: false,
            reason: Some(reason.clone()),
        });
        books.artifact(
            round,
            "validate.json",
            &ValidateArtifact {
                skipped: None,
                command: None,
                passed: false,
                exit_code: None,
                timed_out: false,
                duration_ms: 0,
                touched_files: touched,
                attempts: Vec::new(),
                repair: None,
                note: Some(reason),
                fix_validation: &changes.fix_validations,
            },
        )?;
        books.stage_done(
            round,
            Stage::Validate,
            "no verify command: the push will be refused".to_owned(),
        )?;
        return Ok(Ok(()));
    };

    let mut attempts = Vec::new();
    let (mut first, run) = verify_once(
        books,
        config,
        round,
        fixing.ws,
        &cmd,
        "verify",
        "verify.log",
    )
    .await?;
    let mut repair = None;
    let mut note = None;
    let mut last = run;
    if !first.passed {
        let named: BTreeSet<String> = first.files_named.iter().cloned().collect();
        let blame = classify_failure(&named, &touched);
        first.blame = Some(blame);
        if blame == FailureClass::PreExisting {
            note = Some(format!(
                "the failure names only files this round did not touch ({}): it looks \
                 pre-existing, so no repair was attempted",
                first.files_named.join(", ")
            ));
        } else {
            let r = attempt_repair(
                books,
                config,
                fixing,
                changes,
                VerifyFailure {
                    cmd: &cmd,
                    run: &last,
                    named: &named,
                    touched: &touched,
                },
            )
            .await?;
            let repaired = r.commit.is_some();
            repair = Some(r);
            if repaired {
                attempts.push(first);
                let (second, run) = verify_once(
                    books,
                    config,
                    round,
                    fixing.ws,
                    &cmd,
                    "after-repair",
                    "verify-after-repair.log",
                )
                .await?;
                first = second;
                last = run;
            }
        }
    }
    let passed = first.passed;
    let head = first.head.clone();
    attempts.push(first);
    let shown = cmd.shown();
    let reason = (!passed).then(|| {
        let log = attempts.last().map_or("verify.log", |a| a.log.as_str());
        // Only a failure in what the round touched is the round's: one
        // already there (a reviewer's push) is not blamed on it.
        let on = if changes.commits.is_empty() {
            "on the PR's head (this round made no commit)"
        } else if note.is_some() {
            "on the PR's head with this round's commits (in files the round did not touch)"
        } else {
            "on this round's commits"
        };
        format!(
            "the verify command `{shown}` {} {on}; the push was refused ({}see {})",
            last.failure_words(),
            note.as_ref().map_or(String::new(), |n| format!("{n}; ")),
            round.dir.join(log).display()
        )
    });
    changes.verified = Some(Verified {
        head,
        passed,
        reason: reason.clone(),
    });
    let summary = match (&repair, passed) {
        (_, true) if attempts.len() > 1 => {
            format!("`{shown}` passed after one repair ({})", cmd.source)
        }
        (_, true) => format!("`{shown}` passed ({})", cmd.source),
        // A repair that was never tried (the builtin provider, no fix
        // to repair) is not called an attempt.
        (Some(r), false) if r.items.is_empty() => format!(
            "`{shown}` {} ({}): the push will be refused",
            last.failure_words(),
            r.outcome
        ),
        (Some(_), false) => format!(
            "`{shown}` {} after one repair attempt: the push will be refused",
            last.failure_words()
        ),
        (None, false) => format!(
            "`{shown}` {}: the push will be refused{}",
            last.failure_words(),
            if note.is_some() {
                " (looks pre-existing)"
            } else {
                ""
            }
        ),
    };
    let artifact = ValidateArtifact {
        skipped: None,
        command: Some(cmd.clone()),
        passed,
        exit_code: last.exit_code,
        timed_out: last.timed_out,
        duration_ms: attempts.iter().map(|a| a.duration_ms).sum(),
        touched_files: touched,
        attempts,
        repair,
        note,
        fix_validation: &changes.fix_validations,
    };
    books.artifact(round, "validate.json", &artifact)?;
    books.stage_done(round, Stage::Validate, summary)?;
    Ok(Ok(()))
}

/// The verify command on the worktree's HEAD for a CI repair (issue 31),
/// its output kept in the round's `log`: passed, failed, or no command
/// known (then nothing is pushed).
pub(crate) async fn verify_repair(
    books: &Books,
    config: &Config,
    round: &Round,
    ws: &Workspace,
    log: &str,
) -> Result<shepherd_core::ci_failure::RepairVerify> {
    use shepherd_core::ci_failure::RepairVerify;
    let Some(cmd) = discover(config, ws.path()) else {
        return Ok(RepairVerify::NoCommand);
    };
    let (attempt, _) = verify_once(books, config, round, ws, &cmd, "ci-repair", log).await?;
    Ok(if attempt.passed {
        RepairVerify::Passed
    } else {
        RepairVerify::Failed
    })
}
