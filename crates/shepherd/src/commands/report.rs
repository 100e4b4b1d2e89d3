//! `shepherd report`: a run's report, from the ledger.

use std::io::Write;

use anyhow::anyhow;
use clap::Args;

use crate::error::{CliError, CliResult};
use crate::exit_codes;

use crate::runs::{engine_error, RunRef};
use crate::setup::state_dir;

/// Show a run's report (Markdown, or JSON with --json)
///
/// Built from the ledger's latest entries, so it is current even for a run
/// that was interrupted.
#[derive(Debug, Args)]
pub(crate) struct ReportArgs {
    #[command(flatten)]
    target: RunRef,

    /// Print the JSON twin
    #[arg(long)]
    json: bool,
}

pub(crate) fn cmd_report(args: ReportArgs) -> CliResult<u8> {
    let state = state_dir(args.target.state_dir)?;
    let report = shepherd_engine::run_report(&state, &args.target.run).map_err(engine_error)?;
    let text = if args.json {
        serde_json::to_string_pretty(&report).map_err(|e| CliError::failure(anyhow!(e)))?
    } else {
        // The terminal's rendering; `report.md` keeps the Markdown.
        shepherd_core::escape::terminal(&report.to_markdown())
    };
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}") {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(CliError::failure(anyhow!("cannot write the report: {e}")))
        }
        _ => Ok(exit_codes::SUCCESS),
    }
}
