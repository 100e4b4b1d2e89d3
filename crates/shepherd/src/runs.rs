//! What the commands that start, resume or read runs share: their common
//! flags, the engine's options for a terminal, the engine's errors as CLI
//! errors, and a run's outcome printed with its exit code.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::anyhow;
use clap::Args;
use shepherd_core::config::ApproveMode;
use shepherd_engine::{EngineError, EngineOptions, RunOutcome, RunStatus, StoreError};

use crate::approver::TtyApprover;
use crate::error::{CliError, CliResult};
use crate::exit_codes;
use crate::progress::LineProgress;

/// The paused or finished run `reject` and `report` are about, and where
/// the state lives.
#[derive(Debug, Clone, Args)]
pub(crate) struct RunRef {
    /// The run id (see `shepherd status`)
    #[arg(value_name = "RUN")]
    pub(crate) run: String,

    /// Where the state lives
    #[arg(long, value_name = "DIR", env = "SHEPHERD_STATE_DIR")]
    pub(crate) state_dir: Option<PathBuf>,
}

/// Flags `run`, `resume` and `demo` share.
#[derive(Debug, Clone, Args)]
pub(crate) struct CommonRunArgs {
    /// How reply-only decisions are approved: `prompt` asks on a terminal (and pauses without
    /// one), `auto` approves at once, `label` approves what a maintainer approved on the forge: the
    /// `shepherd-approved` label or a `/shepherd approve` comment (and pauses without it)
    #[arg(long, value_name = "MODE", value_parser = parse_approve)]
    pub approve: Option<ApproveMode>,

    /// Where the state database and run directories live (default
    /// `$XDG_STATE_HOME/shepherd`)
    #[arg(long, value_name = "DIR", env = "SHEPHERD_STATE_DIR")]
    pub state_dir: Option<PathBuf>,

    /// Print the report as JSON on stdout (progress still goes to stderr)
    #[arg(long)]
    pub json: bool,

    /// Post the drafted reply on items Shepherd could not judge (needs-human);
    /// without it they are reported to you only (`approve.reply_needs_human`)
    #[arg(long)]
    pub reply_needs_human: bool,
}

fn parse_approve(text: &str) -> Result<ApproveMode, String> {
    match text {
        "auto" => Ok(ApproveMode::Auto),
        "prompt" => Ok(ApproveMode::Prompt),
        "label" => Ok(ApproveMode::Label),
        other => Err(format!(
            "`{other}` is not an approval mode; use `auto`, `prompt` or `label`"
        )),
    }
}

/// The engine's error as the CLI reports it.
pub(crate) fn engine_error(err: EngineError) -> CliError {
    match err {
        EngineError::Store(StoreError::Locked { .. }) => CliError::failure(err).with_hint(
            "one run per pull request at a time: wait for it, or check it with `shepherd status`",
        ),
        EngineError::Config(_) => CliError::usage(err),
        EngineError::PausedRunExists { .. } => CliError::failure(err),
        EngineError::Store(StoreError::RunNotFound { .. } | StoreError::InvalidRunId { .. })
        | EngineError::NothingToApprove { .. }
        | EngineError::ReplyNeeded { .. }
        | EngineError::UnknownItem { .. } => CliError::usage(err),
        other => CliError::failure(other),
    }
}

/// Print the outcome (the report, or its JSON) and return the exit code.
pub(crate) fn print_outcome(outcome: &RunOutcome, json: bool) -> CliResult<u8> {
    let mut out = std::io::stdout().lock();
    let written = if json {
        serde_json::to_string_pretty(&outcome.report)
            .map_err(|e| CliError::failure(anyhow!(e)))
            .map(|text| writeln!(out, "{text}"))?
    } else {
        // The terminal's rendering; `report.md` keeps the Markdown.
        writeln!(
            out,
            "{}",
            shepherd_core::escape::terminal(&outcome.report.to_markdown())
        )
        .and_then(|()| {
            writeln!(out, "Run directory: {}", outcome.run_dir.display())?;
            if outcome.status == RunStatus::Paused {
                writeln!(out, "Continue with: shepherd resume {}", outcome.run_id)?;
            }
            Ok(())
        })
    };
    if let Err(err) = written {
        if err.kind() != std::io::ErrorKind::BrokenPipe {
            return Err(CliError::failure(anyhow!("cannot write the report: {err}")));
        }
    }
    // A repository file the run read (base branch, PR head) that is not a
    // valid configuration is bad input, like the user's own file: exit 2.
    if outcome.failed_on_config() {
        return Ok(exit_codes::USAGE);
    }
    Ok(exit_codes::of_run(outcome))
}

/// Engine options for a command: progress lines, the TTY approver.
pub(crate) fn engine_options() -> EngineOptions {
    EngineOptions {
        progress: Arc::new(LineProgress::new()),
        approver: TtyApprover::if_terminal(),
        ..EngineOptions::default()
    }
}
