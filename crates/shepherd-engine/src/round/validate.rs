//! Stages 8 and 10, validate and revalidate (SPEC section 3).
//!
//! The verify command comes from `[verify] command`, else a discovered
//! `verify.sh`, `.shepherd/verify`, or the project's obvious test command
//! (`cargo test`, `npm test`, `pytest`, `go test ./...`, `make test`). It
//! runs with the project's environment minus every credential-like
//! variable, in its own process group, killed as a whole on timeout.
//!
//! - **validate** (soft): the command runs on the round's combined result.
//!   When it fails and its output names a file the round touched (or names
//!   no file of the repository: when unsure, the round is blamed), one
//!   repair attempt is made by the fix-validation role's provider (else the
//!   fix role's; the builtin provider makes none) in the run's worktree,
//!   with the failure output; Shepherd commits the repair and runs the
//!   command again. A failure whose output names only files the round did
//!   not touch is noted as pre-existing, with no repair. The fix-validation
//!   verdicts of the round's fixes are recorded here too (`validate.json`,
//!   `verify.log`, `verify-after-repair.log`).
//! - **revalidate** (hard gate, after the pre-push review): the command must
//!   pass on the exact HEAD to be pushed; a missing or failing command
//!   refuses the push and fails the run with the reason. When HEAD has not
//!   moved since the validate stage, its result stands (`revalidate.json`,
//!   `revalidate.log`).

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

use serde::Serialize;
use shepherd_agent::exec::{run as exec_run, EnvPolicy, ProcessSpec, Termination};
use shepherd_agent::{
    check_fix_answer, Agent, FixStatus, FixTask, PrContext, TriageNote, UsageLog,
};
use shepherd_core::config::{CommandSpec, Config};

use super::guard;
use super::runner::Books;
use super::state::{
    Changes, Fixed, Fixing, Flow, Revalidated, Reviewed, Round, RoundEnd, Step, Validated, Verified,
};
use super::triage::task_item;
use super::workspace::Workspace;
use crate::error::{EngineError, Result};
use crate::options::{is_builtin, ProgressEvent, Stage};
use crate::run_dir::write_text;
use crate::worktree::{ProtectedPaths, WorktreeError};

/// A verify command and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct VerifyCommand {
    pub(crate) argv: Vec<String>,
    pub(crate) source: String,
}

impl VerifyCommand {
    fn shown(&self) -> String {
        self.argv.join(" ")
    }
}

/// Find the verify command of the repository at `root`.
pub(crate) fn discover(config: &Config, root: &Path) -> Option<VerifyCommand> {
    if let Some(spec) = &config.verify.command {
        let argv = match spec {
            CommandSpec::Shell(line) => vec!["sh".to_owned(), "-c".to_owned(), line.clone()],
            CommandSpec::Argv(argv) => argv.clone(),
        };
        return Some(VerifyCommand {
            argv,
            source: "[verify] command".to_owned(),
        });
    }
    let found = |argv: &[&str], source: &str| VerifyCommand {
        argv: argv.iter().map(|s| (*s).to_owned()).collect(),
        source: source.to_owned(),
    };
    if root.join("verify.sh").is_file() {
        return Some(found(&["sh", "verify.sh"], "verify.sh"));
    }
    let dot = root.join(".shepherd/verify");
    if dot.is_file() {
        return Some(if is_executable(&dot) {
            found(&["./.shepherd/verify"], ".shepherd/verify")
        } else {
            found(&["sh", ".shepherd/verify"], ".shepherd/verify")
        });
    }
    if root.join("Cargo.toml").is_file() {
        return Some(found(&["cargo", "test"], "Cargo.toml"));
    }
    if let Ok(text) = std::fs::read_to_string(root.join("package.json")) {
        let has_test = serde_json::from_str::<serde_json::Value>(&text)
            .ok()
            .is_some_and(|v| v["scripts"]["test"].is_string());
        if has_test {
            return Some(found(&["npm", "test"], "package.json"));
        }
    }
    if let Some(source) = python_tests(root) {
        return Some(found(&["pytest"], source));
    }
    if root.join("go.mod").is_file() {
        return Some(found(&["go", "test", "./..."], "go.mod"));
    }
    if let Ok(text) = std::fs::read_to_string(root.join("Makefile")) {
        let has_test = text.lines().any(|l| {
            l.strip_prefix("test")
                .is_some_and(|rest| rest.trim_start().starts_with(':') && !rest.starts_with(":="))
        });
        if has_test {
            return Some(found(&["make", "test"], "Makefile"));
        }
    }
    for script in ["test.sh", "tests/run.sh", "run-tests.sh"] {
        if root.join(script).is_file() {
            return Some(found(&["sh", script], script));
        }
    }
    None
}

/// Why the project's tests look like pytest's: the file that says so.
fn python_tests(root: &Path) -> Option<&'static str> {
    if root.join("pytest.ini").is_file() || root.join("conftest.py").is_file() {
        return Some("pytest.ini");
    }
    let says = |file: &str, section: &str| {
        std::fs::read_to_string(root.join(file)).is_ok_and(|t| t.contains(section))
    };
    if says("pyproject.toml", "[tool.pytest") {
        return Some("pyproject.toml");
    }
    if says("setup.cfg", "[tool:pytest]") || says("tox.ini", "[pytest]") {
        return Some("setup.cfg");
    }
    let python_project = [
        "pyproject.toml",
        "setup.py",
        "setup.cfg",
        "requirements.txt",
    ]
    .iter()
    .any(|f| root.join(f).is_file());
    let test_files = std::fs::read_dir(root.join("tests")).is_ok_and(|entries| {
        entries.filter_map(|e| e.ok()).any(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.ends_with(".py") && (name.starts_with("test_") || name.ends_with("_test.py"))
        })
    });
    (python_project && test_files).then_some("tests/")
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

/// The outcome of running a command.
pub(crate) struct CommandRun {
    pub(crate) exit_code: Option<i32>,
    pub(crate) timed_out: bool,
    pub(crate) output: String,
    pub(crate) duration: Duration,
}

impl CommandRun {
    pub(crate) fn passed(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out
    }

    fn failure_words(&self) -> String {
        if self.timed_out {
            "timed out".to_owned()
        } else {
            format!(
                "failed (exit {})",
                self.exit_code
                    .map_or("by a signal".to_owned(), |c| c.to_string())
            )
        }
    }
}

/// Run `argv` in `dir` with the project's environment minus credentials
/// (or, `sealed`, only the agents' base environment), in its own process
/// group, killed as a whole after `timeout`.
pub(crate) async fn run_command(
    argv: &[String],
    dir: &Path,
    timeout: Duration,
    sealed: bool,
) -> CommandRun {
    let Some((program, args)) = argv.split_first() else {
        return CommandRun {
            exit_code: None,
            timed_out: false,
            output: "empty command\n".to_owned(),
            duration: Duration::ZERO,
        };
    };
    let pass = if sealed {
        Vec::new()
    } else {
        std::env::vars_os()
            .filter_map(|(k, _)| k.into_string().ok())
            .filter(|name| !name.starts_with("GIT_"))
            .collect()
    };
    let spec = ProcessSpec {
        program: program.into(),
        args: args.to_vec(),
        cwd: dir.to_path_buf(),
        env: EnvPolicy {
            pass,
            set: vec![("GIT_CONFIG_NOSYSTEM".to_owned(), "1".to_owned())],
            ..EnvPolicy::default()
        },
        stdin: Vec::new(),
        total_timeout: timeout,
        idle_timeout: timeout,
        kill_grace: Duration::from_secs(2),
        transcript: None,
    };
    let started = Instant::now();
    match exec_run(&spec).await {
        Ok(out) => {
            let mut output = String::from_utf8_lossy(&out.stdout).into_owned();
            output.push_str(&String::from_utf8_lossy(&out.stderr));
            let (exit_code, timed_out) = match out.termination {
                Termination::Exited(status) => (status.code(), false),
                Termination::TimedOut(_) => {
                    output.push_str(&format!(
                        "\ntimed out after {}s; the process group was killed\n",
                        timeout.as_secs()
                    ));
                    (None, true)
                }
            };
            CommandRun {
                exit_code,
                timed_out,
                output,
                duration: out.duration,
            }
        }
        Err(err) => CommandRun {
            exit_code: None,
            timed_out: false,
            output: format!("cannot run `{}`: {err}\n", argv.join(" ")),
            duration: started.elapsed(),
        },
    }
}

/// Repository files named in a command's output: tokens that, once stripped
/// of `:line:col`, quotes and the worktree's own prefix, are files under
/// `root`. Conservative: anything that is not an existing file is ignored.
pub(crate) fn files_named_in(output: &str, root: &Path) -> BTreeSet<String> {
    let prefix = format!("{}/", root.display());
    let mut found = BTreeSet::new();
    let separators = |c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '"' | '\'' | '`' | '(' | ')' | '[' | ']' | '<' | '>' | ',' | ';' | '=' | '|'
            )
    };
    for raw in output.split(separators) {
        let mut token = raw.strip_prefix("file://").unwrap_or(raw);
        if let Some(rest) = token.strip_prefix(prefix.as_str()) {
            token = rest;
        }
        let token = token.split(':').next().unwrap_or("");
        let token = token.trim_start_matches("./").trim_end_matches('.');
        if token.is_empty()
            || token.starts_with('/')
            || token.split('/').any(|p| p == ".." || p == ".git")
            || !(token.contains('/') || token.contains('.'))
        {
            continue;
        }
        if root.join(token).is_file() {
            found.insert(token.to_owned());
        }
    }
    found
}

/// Whom a verify failure is blamed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum FailureClass {
    /// The output names a file the round touched.
    Touched,
    /// The output names files, none of which the round touched.
    PreExisting,
    /// The output names no file: treated as the round's.
    Unsure,
}

pub(crate) fn classify_failure(named: &BTreeSet<String>, touched: &[String]) -> FailureClass {
    if named.iter().any(|f| touched.contains(f)) {
        FailureClass::Touched
    } else if named.is_empty() {
        FailureClass::Unsure
    } else {
        FailureClass::PreExisting
    }
}

#[derive(Debug, Serialize)]
struct Attempt {
    label: &'static str,
    head: String,
    exit_code: Option<i32>,
    timed_out: bool,
    passed: bool,
    duration_ms: u64,
    log: String,
    files_named: Vec<String>,
    blame: Option<FailureClass>,
}

#[derive(Debug, Serialize)]
struct Repair {
    provider: String,
    items: Vec<String>,
    commit: Option<String>,
    outcome: String,
}

/// What failed, for the repair: the verify command, its run, the files
/// its output names, and the files the round's commits touched.
#[derive(Clone, Copy)]
struct VerifyFailure<'a> {
    cmd: &'a VerifyCommand,
    run: &'a CommandRun,
    named: &'a BTreeSet<String>,
    touched: &'a [String],
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
    fix_validation: &'a [super::unit::FixValidationRecord],
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

async fn verify_once(
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

/// One repair attempt in the run's worktree, committed by Shepherd.
async fn attempt_repair(
    books: &mut Books,
    config: &Config,
    fixing: Fixing<'_>,
    changes: &mut Changes,
    failure: VerifyFailure<'_>,
) -> Result<Repair> {
    let VerifyFailure {
        cmd,
        run: failed,
        named,
        touched,
    } = failure;
    let round = fixing.round;
    let Some((agent, role)) = repair_agent(fixing.ws) else {
        return Ok(Repair {
            provider: "builtin".to_owned(),
            items: Vec::new(),
            commit: None,
            outcome: "no repair: the builtin provider makes no repair attempt".to_owned(),
        });
    };
    // The round's own fixes whose commit touches a file the failure
    // names; all of them when it names none.
    let mut fixed = Vec::new();
    for (w, p) in &changes.planned {
        if p.carried {
            continue;
        }
        if let Some(sha) = p.result.commit.clone() {
            let files = fixing.ws.git(move |wt| wt.files_of_commit(&sha)).await?;
            fixed.push((w.clone(), files));
        }
    }
    let blamed: Vec<_> = fixed
        .iter()
        .filter(|(_, files)| files.iter().any(|f| named.contains(f)))
        .map(|(w, _)| w.clone())
        .collect();
    let items: Vec<_> = if blamed.is_empty() {
        fixed.into_iter().map(|(w, _)| w).collect()
    } else {
        blamed
    };
    if items.is_empty() {
        return Ok(Repair {
            provider: agent.name().to_owned(),
            items: Vec::new(),
            commit: None,
            outcome: "no repair: no fix of this round to repair".to_owned(),
        });
    }
    let tail: String = {
        let chars: Vec<char> = failed.output.chars().collect();
        chars[chars.len().saturating_sub(3000)..].iter().collect()
    };
    let reasoning = format!(
        "Shepherd's verify command failed after this round's fixes: `{}` {}. Repair the fix \
         so that the command passes, keeping what the comment asked for; change only what the \
         failure needs. The end of its output: {tail}",
        cmd.shown(),
        failed.failure_words()
    );
    let snapshot = &fixing.synced.snapshot;
    let task_items = items
        .iter()
        .map(|w| {
            task_item(w, snapshot).with_triage(TriageNote {
                reasoning: reasoning.clone(),
                reply_hint: fixing
                    .decided
                    .triage
                    .get(w.id())
                    .map(|d| d.reply_hint.clone())
                    .unwrap_or_default(),
            })
        })
        .collect();
    let files_hint: Vec<String> = {
        let hit: Vec<String> = named
            .iter()
            .filter(|f| touched.contains(f))
            .cloned()
            .collect();
        if hit.is_empty() {
            touched.to_vec()
        } else {
            hit
        }
    };
    let task = FixTask {
        pr: PrContext::new(snapshot.forge, &snapshot.pr),
        worktree: fixing.ws.path().to_path_buf(),
        items: task_items,
        cluster: None,
        files_hint,
    };
    let ids: Vec<String> = items.iter().map(|w| w.id().to_owned()).collect();
    fixing.ws.git(|wt| wt.discard_changes()).await?;
    let usage = UsageLog::new();
    let ctx = round.agent_ctx("repair", &usage);
    let started = Instant::now();
    let got =
        guard::writing_call(books, fixing.ws, round, "repair", agent.fix(&task, &ctx)).await?;
    books.account_agent(role, agent.name(), started.elapsed(), &usage);
    let mut record = Repair {
        provider: agent.name().to_owned(),
        items: ids,
        commit: None,
        outcome: String::new(),
    };
    let answer = match fixing
        .ws
        .keep_checked(got, |a| check_fix_answer(&task, a))
        .await?
    {
        Ok(a) => a,
        Err(refused) => {
            record.outcome = refused.said_of("repair agent");
            return Ok(record);
        }
    };
    if answer
        .outcomes
        .iter()
        .all(|o| o.status == FixStatus::Blocked)
    {
        fixing.ws.git(|wt| wt.discard_changes()).await?;
        record.outcome = "the repair agent could not repair it (blocked)".to_owned();
        return Ok(record);
    }
    let changed = fixing.ws.git(|wt| wt.changed_paths()).await?;
    if changed.is_empty() {
        record.outcome = "the repair agent changed nothing".to_owned();
        return Ok(record);
    }
    let protected = ProtectedPaths::new(&config.paths.protected)?;
    let message = format!(
        "shepherd: repair `{}` after the review fixes\n\nReview threads: {}\n",
        cmd.shown(),
        record.items.join(", ")
    );
    let files = changed.clone();
    let committed = fixing
        .ws
        .git(move |wt| Ok(wt.commit_files(&message, &files, &protected)))
        .await?;
    fixing.ws.git(|wt| wt.discard_changes()).await?;
    match committed {
        Ok(sha) => {
            changes.commits.push(sha.0.clone());
            books.event(
                Some(round.n),
                "commit",
                serde_json::json!({ "sha": sha.0, "items": record.items, "files": changed, "unit": "repair" }),
            )?;
            record.outcome = "repaired and committed".to_owned();
            record.commit = Some(sha.0);
        }
        Err(e @ (WorktreeError::ProtectedPath { .. } | WorktreeError::NothingToCommit)) => {
            record.outcome = format!("the repair was refused: {e}");
        }
        Err(e) => return Err(EngineError::Worktree(e)),
    }
    Ok(record)
}

/// The verify command on the HEAD to push (reused when validate ran it
/// there), or the end of the round when it did not pass.
pub(crate) async fn stage_revalidate(
    books: &mut Books,
    config: &Config,
    round: &Round,
    ws: &Workspace,
    reviewed: Reviewed,
) -> Result<Step<Revalidated>> {
    let Reviewed(mut changes) = reviewed;
    let flow = revalidate(books, config, round, ws, &mut changes).await?;
    Ok(flow.map(|()| Revalidated(changes)))
}

async fn revalidate(
    books: &mut Books,
    config: &Config,
    round: &Round,
    ws: &Workspace,
    changes: &mut Changes,
) -> Result<Flow> {
    if changes.commits.is_empty() {
        return Ok(Ok(()));
    }
    let head = ws.git(|wt| wt.head_sha()).await?.0;
    #[derive(Serialize)]
    struct Revalidate<'a> {
        head: &'a str,
        reused: bool,
        passed: bool,
        command: Option<VerifyCommand>,
        exit_code: Option<i32>,
        reason: Option<&'a str>,
    }
    if let Some(v) = changes.verified.clone().filter(|v| v.head == head) {
        books.artifact(
            round,
            "revalidate.json",
            &Revalidate {
                head: &head,
                reused: true,
                passed: v.passed,
                command: None,
                exit_code: None,
                reason: v.reason.as_deref(),
            },
        )?;
        if v.passed {
            books.stage_done(
                round,
                Stage::Revalidate,
                "HEAD unchanged since the verify command passed".to_owned(),
            )?;
            return Ok(Ok(()));
        }
        books.stage_done(round, Stage::Revalidate, "push refused".to_owned())?;
        return Ok(Err(RoundEnd::Failed {
            reason: v
                .reason
                .unwrap_or_else(|| "the verify command failed".to_owned()),
        }));
    }
    let root = ws.path().to_path_buf();
    let Some(cmd) = discover(config, &root) else {
        let reason = "no verify command: nothing unverified is pushed, so the push was refused";
        books.artifact(
            round,
            "revalidate.json",
            &Revalidate {
                head: &head,
                reused: false,
                passed: false,
                command: None,
                exit_code: None,
                reason: Some(reason),
            },
        )?;
        books.stage_done(round, Stage::Revalidate, "push refused".to_owned())?;
        return Ok(Err(RoundEnd::Failed {
            reason: reason.to_owned(),
        }));
    };
    let (attempt, run) = verify_once(
        books,
        config,
        round,
        ws,
        &cmd,
        "revalidate",
        "revalidate.log",
    )
    .await?;
    let reason = (!attempt.passed).then(|| {
        format!(
            "the verify command `{}` {} on the commits to push (after the pre-push review); \
             the push was refused (see {})",
            cmd.shown(),
            run.failure_words(),
            round.dir.join("revalidate.log").display()
        )
    });
    books.artifact(
        round,
        "revalidate.json",
        &Revalidate {
            head: &head,
            reused: false,
            passed: attempt.passed,
            command: Some(cmd.clone()),
            exit_code: attempt.exit_code,
            reason: reason.as_deref(),
        },
    )?;
    changes.verified = Some(Verified {
        head,
        passed: attempt.passed,
        reason: reason.clone(),
    });
    match reason {
        None => {
            books.stage_done(
                round,
                Stage::Revalidate,
                format!("`{}` passed on the commits to push", cmd.shown()),
            )?;
            Ok(Ok(()))
        }
        Some(reason) => {
            books.stage_done(round, Stage::Revalidate, "push refused".to_owned())?;
            Ok(Err(RoundEnd::Failed { reason }))
        }
    }
}

/// The agent that repairs a fix that broke the verify command: the
/// fix-validation role's provider, else the fix role's; none when both are
/// builtin.
fn repair_agent(ws: &Workspace) -> Option<(std::sync::Arc<dyn Agent>, &'static str)> {
    let (checks, agents) = (&ws.checks, &ws.agents);
    if !is_builtin(checks.fix_validation.as_ref()) {
        Some((checks.fix_validation.clone(), "fix-validation"))
    } else if !is_builtin(agents.fix.as_ref()) {
        Some((agents.fix.clone(), "fix"))
    } else {
        None
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;

    #[test]
    fn discovery_order() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let config = Config::default();
        assert_eq!(discover(&config, root), None);
        std::fs::write(root.join("test.sh"), "true").unwrap();
        assert_eq!(discover(&config, root).unwrap().source, "test.sh");
        std::fs::write(root.join("Makefile"), "all:\nTESTS := x\ntest :\n\ttrue\n").unwrap();
        assert_eq!(discover(&config, root).unwrap().argv, ["make", "test"]);
        std::fs::write(root.join("go.mod"), "module x\n").unwrap();
        assert_eq!(
            discover(&config, root).unwrap().argv,
            ["go", "test", "./..."]
        );
        std::fs::write(root.join("pyproject.toml"), "[project]\nname = \"x\"\n").unwrap();
        assert_eq!(
            discover(&config, root).unwrap().argv,
            ["go", "test", "./..."]
        );
        std::fs::create_dir_all(root.join("tests")).unwrap();
        std::fs::write(root.join("tests/test_x.py"), "def test_x(): pass\n").unwrap();
        assert_eq!(discover(&config, root).unwrap().argv, ["pytest"]);
        std::fs::write(root.join("package.json"), r#"{"scripts": {"build": "x"}}"#).unwrap();
        assert_eq!(discover(&config, root).unwrap().argv, ["pytest"]);
        std::fs::write(
            root.join("package.json"),
            r#"{"scripts": {"test": "jest"}}"#,
        )
        .unwrap();
        assert_eq!(discover(&config, root).unwrap().argv, ["npm", "test"]);
        std::fs::write(root.join("Cargo.toml"), "").unwrap();
        assert_eq!(discover(&config, root).unwrap().argv, ["cargo", "test"]);
        std::fs::create_dir_all(root.join(".shepherd")).unwrap();
        std::fs::write(root.join(".shepherd/verify"), "true").unwrap();
        assert_eq!(
            discover(&config, root).unwrap().argv,
            ["sh", ".shepherd/verify"]
        );
        std::fs::write(root.join("verify.sh"), "true").unwrap();
        assert_eq!(discover(&config, root).unwrap().argv, ["sh", "verify.sh"]);
        let mut config = Config::default();
        config.verify.command = Some(CommandSpec::Shell("make check".into()));
        let cmd = discover(&config, root).unwrap();
        assert_eq!(cmd.argv, ["sh", "-c", "make check"]);
        assert_eq!(cmd.source, "[verify] command");
    }

    #[test]
    fn a_makefile_without_a_test_target_is_not_a_test_command() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("Makefile"), "tests:\n\ttrue\ntest_x := 1\n").unwrap();
        assert_eq!(discover(&Config::default(), dir.path()), None);
    }

    #[test]
    fn failures_are_blamed_on_the_files_they_name() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/a.rs"), "").unwrap();
        std::fs::write(root.join("src/b.rs"), "").unwrap();
        std::fs::write(root.join("README.md"), "").unwrap();
        let output = format!(
            "error[E0308]: mismatched types\n --> src/a.rs:12:5\nFAIL {}/src/b.rs (1 test)\n\
             see README.md. not/a/file.rs and words.\n",
            root.display()
        );
        let named = files_named_in(&output, root);
        assert_eq!(
            named.iter().map(String::as_str).collect::<Vec<_>>(),
            ["README.md", "src/a.rs", "src/b.rs"]
        );
        let touched = vec!["src/a.rs".to_owned()];
        assert_eq!(classify_failure(&named, &touched), FailureClass::Touched);
        let other = vec!["src/c.rs".to_owned()];
        assert_eq!(classify_failure(&named, &other), FailureClass::PreExisting);
        assert_eq!(
            classify_failure(&files_named_in("1 test failed", root), &touched),
            FailureClass::Unsure
        );
        assert!(files_named_in("../../etc/passwd /etc/passwd .git/config", root).is_empty());
    }

    #[tokio::test]
    async fn tokens_never_reach_the_verify_command_and_timeouts_kill_the_group() {
        let dir = tempfile::tempdir().unwrap();
        std::env::set_var("GITHUB_TOKEN_FOR_VERIFY_TEST", "secret");
        let run = run_command(
            &["sh".into(), "-c".into(), "env".into()],
            dir.path(),
            Duration::from_secs(10),
            false,
        )
        .await;
        assert_eq!(run.exit_code, Some(0));
        assert!(!run.output.contains("secret"), "{}", run.output);
        assert!(run.output.contains("PATH="), "{}", run.output);
        let started = Instant::now();
        let slow = run_command(
            &["sh".into(), "-c".into(), "sleep 5 & sleep 5".into()],
            dir.path(),
            Duration::from_millis(200),
            false,
        )
        .await;
        assert!(slow.timed_out && !slow.passed());
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "{:?}",
            started.elapsed()
        );
    }
}
