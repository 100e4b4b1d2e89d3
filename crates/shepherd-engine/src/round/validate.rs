//! Stages 8 and 10, validate and revalidate: the verify command (from
//! `[verify] command`, else a discovered `verify.sh`, `.shepherd/verify`, or
//! the project's obvious test command) runs on the round's commits. It is a
//! hard gate: a missing or failing verify command refuses the push and fails
//! the run with the reason; nothing unverified is pushed. Failures whose
//! output names none of the files the round touched are noted as likely
//! pre-existing. The builtin agent makes no repair attempt
//! (`validate.json`, `verify.log`).

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde::Serialize;
use shepherd_core::config::{CommandSpec, Config};

use super::{Flow, Round, RoundEnd, Runner};
use crate::run::error::Result;
use crate::run::files::write_text;
use crate::run::options::Stage;

/// A verify command and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct VerifyCommand {
    pub(crate) argv: Vec<String>,
    pub(crate) source: String,
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
    if let Ok(text) = std::fs::read_to_string(root.join("Makefile")) {
        if text.lines().any(|l| l.starts_with("test:")) {
            return Some(found(&["make", "test"], "Makefile"));
        }
    }
    if root.join("go.mod").is_file() {
        return Some(found(&["go", "test", "./..."], "go.mod"));
    }
    for script in ["test.sh", "tests/run.sh", "run-tests.sh"] {
        if root.join(script).is_file() {
            return Some(found(&["sh", script], script));
        }
    }
    None
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

#[derive(Debug, Serialize)]
struct ValidateArtifact {
    skipped: Option<String>,
    command: Option<VerifyCommand>,
    exit_code: Option<i32>,
    timed_out: bool,
    passed: bool,
    duration_ms: u64,
    touched_files: Vec<String>,
    note: Option<String>,
}

/// The outcome of running the verify command.
struct VerifyRun {
    exit_code: Option<i32>,
    timed_out: bool,
    output: String,
    duration: Duration,
}

async fn run_verify(
    cmd: &VerifyCommand,
    dir: &Path,
    timeout: Duration,
) -> std::io::Result<VerifyRun> {
    let (program, args) = cmd
        .argv
        .split_first()
        .ok_or_else(|| std::io::Error::other("empty verify command"))?;
    let mut command = tokio::process::Command::new(program);
    command
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .env_clear();
    // The project's own environment, minus every forge token.
    for (k, v) in std::env::vars_os() {
        let keep = k.to_str().is_some_and(|name| {
            !shepherd_agent::exec::is_token_like(name) && !name.starts_with("GIT_")
        });
        if keep {
            command.env(&k, &v);
        }
    }
    command.env("GIT_CONFIG_NOSYSTEM", "1");
    let started = Instant::now();
    let child = command.spawn()?;
    match tokio::time::timeout(timeout, child.wait_with_output()).await {
        Ok(out) => {
            let out = out?;
            let mut output = String::from_utf8_lossy(&out.stdout).into_owned();
            output.push_str(&String::from_utf8_lossy(&out.stderr));
            Ok(VerifyRun {
                exit_code: out.status.code(),
                timed_out: false,
                output,
                duration: started.elapsed(),
            })
        }
        Err(_) => Ok(VerifyRun {
            exit_code: None,
            timed_out: true,
            output: format!("verify command timed out after {}s\n", timeout.as_secs()),
            duration: started.elapsed(),
        }),
    }
}

impl Runner {
    pub(crate) async fn stage_validate(&mut self, round: &mut Round) -> Result<Flow> {
        if round.commits.is_empty() {
            let artifact = ValidateArtifact {
                skipped: Some("the round made no commit".to_owned()),
                command: None,
                exit_code: None,
                timed_out: false,
                passed: true,
                duration_ms: 0,
                touched_files: Vec::new(),
                note: None,
            };
            self.artifact(round, "validate.json", &artifact)?;
            return Ok(Ok(()));
        }
        let root = self.wt().path().to_path_buf();
        let mut touched: Vec<String> = Vec::new();
        for sha in round.commits.clone() {
            let files = self.git(move |wt| wt.files_of_commit(&sha)).await?;
            for f in files {
                if !touched.contains(&f) {
                    touched.push(f);
                }
            }
        }
        touched.sort();
        let Some(cmd) = discover(&self.config, &root) else {
            let reason =
                "no verify command: set `[verify] command` in shepherd.toml, or add verify.sh \
                          or .shepherd/verify; nothing unverified is pushed"
                    .to_owned();
            self.artifact(
                round,
                "validate.json",
                &ValidateArtifact {
                    skipped: None,
                    command: None,
                    exit_code: None,
                    timed_out: false,
                    passed: false,
                    duration_ms: 0,
                    touched_files: touched,
                    note: Some(reason.clone()),
                },
            )?;
            self.stage_done(
                round,
                Stage::Validate,
                "no verify command: push refused".to_owned(),
            )?;
            return Ok(Err(RoundEnd::Failed { reason }));
        };
        self.emit(crate::run::options::ProgressEvent::Waiting {
            round: round.n,
            what: format!("verify: {}", cmd.argv.join(" ")),
        });
        let run = match run_verify(&cmd, &root, self.config.verify.timeout()).await {
            Ok(run) => run,
            Err(err) => VerifyRun {
                exit_code: None,
                timed_out: false,
                output: format!("cannot run the verify command: {err}\n"),
                duration: Duration::ZERO,
            },
        };
        write_text(&round.dir.join("verify.log"), &run.output)?;
        let passed = run.exit_code == Some(0) && !run.timed_out;
        let note = (!passed).then(|| {
            if touched.iter().any(|f| run.output.contains(f.as_str())) {
                "the failure names files this round touched".to_owned()
            } else {
                "the failure output names none of the files this round touched; it may be \
                 pre-existing"
                    .to_owned()
            }
        });
        self.artifact(
            round,
            "validate.json",
            &ValidateArtifact {
                skipped: None,
                command: Some(cmd.clone()),
                exit_code: run.exit_code,
                timed_out: run.timed_out,
                passed,
                duration_ms: u64::try_from(run.duration.as_millis()).unwrap_or(u64::MAX),
                touched_files: touched,
                note: note.clone(),
            },
        )?;
        let shown = cmd.argv.join(" ");
        if passed {
            self.stage_done(
                round,
                Stage::Validate,
                format!("`{shown}` passed ({})", cmd.source),
            )?;
            return Ok(Ok(()));
        }
        let what = if run.timed_out {
            "timed out".to_owned()
        } else {
            format!(
                "failed (exit {})",
                run.exit_code.map_or("signal".to_owned(), |c| c.to_string())
            )
        };
        self.stage_done(
            round,
            Stage::Validate,
            format!("`{shown}` {what}: push refused"),
        )?;
        Ok(Err(RoundEnd::Failed {
            reason: format!(
                "the verify command `{shown}` {what} on this round's commits; the push was refused \
                 ({}; see {})",
                note.unwrap_or_default(),
                round.dir.join("verify.log").display()
            ),
        }))
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
        std::fs::write(root.join("Makefile"), "all:\ntest:\n\ttrue\n").unwrap();
        assert_eq!(discover(&config, root).unwrap().argv, ["make", "test"]);
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

    #[tokio::test]
    async fn tokens_never_reach_the_verify_command() {
        let dir = tempfile::tempdir().unwrap();
        std::env::set_var("GITHUB_TOKEN_FOR_VERIFY_TEST", "secret");
        let cmd = VerifyCommand {
            argv: vec!["sh".into(), "-c".into(), "env".into()],
            source: "test".into(),
        };
        let run = run_verify(&cmd, dir.path(), Duration::from_secs(10))
            .await
            .unwrap();
        assert_eq!(run.exit_code, Some(0));
        assert!(!run.output.contains("secret"), "{}", run.output);
        let slow = VerifyCommand {
            argv: vec!["sh".into(), "-c".into(), "sleep 5".into()],
            source: "test".into(),
        };
        let run = run_verify(&slow, dir.path(), Duration::from_millis(100))
            .await
            .unwrap();
        assert!(run.timed_out);
    }
}
