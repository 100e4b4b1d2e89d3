//! `shepherd reject`: refuse a paused run's triage.

use clap::Args;

use crate::error::CliResult;
use crate::exit_codes;

use crate::runs::{engine_error, RunRef};
use crate::setup::state_dir;
use crate::ui::outln;

/// Reject the triage a paused run awaits approval for, or abandon a paused run
///
/// Nothing that awaited approval is posted. The run is marked failed; a later
/// `shepherd run` triages the PR afresh (a PR with a paused run refuses a new one).
#[derive(Debug, Args)]
pub(crate) struct RejectArgs {
    #[command(flatten)]
    target: RunRef,

    /// Print the outcome as JSON
    #[arg(long)]
    json: bool,
}

pub(crate) fn cmd_reject(args: RejectArgs) -> CliResult<u8> {
    let state = state_dir(args.target.state_dir)?;
    let approver = std::env::var("USER").unwrap_or_else(|_| "cli".to_owned());
    let n =
        shepherd_engine::reject_run(&state, &args.target.run, &approver).map_err(engine_error)?;
    if args.json {
        let value = serde_json::json!({
            "run_id": args.target.run,
            "rejected": n,
            "abandoned": n == 0,
            "status": "failed",
        });
        outln!(
            "{}",
            serde_json::to_string_pretty(&value).unwrap_or_default()
        );
    } else if n == 0 {
        outln!(
            "Abandoned paused run {}: it is marked failed; what it posted before it paused stays \
             on the forge.",
            args.target.run
        );
    } else {
        outln!(
            "Rejected {n} pending approval(s) of run {}; nothing of them was posted and the run \
             is marked failed.",
            args.target.run
        );
    }
    Ok(exit_codes::SUCCESS)
}
