//! Running a command: the project's environment minus every
//! credential-like variable, its own process group, killed as a whole on
//! timeout.

use std::path::Path;
use std::time::{Duration, Instant};

use shepherd_agent::exec::{run as exec_run, EnvPolicy, ProcessSpec, Termination};

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

    pub(super) fn failure_words(&self) -> String {
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

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;

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
