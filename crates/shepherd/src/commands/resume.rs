//! `shepherd resume`: continue a paused or interrupted run.

use clap::Args;
use shepherd_core::config::Overrides;

use crate::error::{CliError, CliResult};
use crate::setup::{config_layers, connect, current_forge_config, runtime, ForgeArgs};

use crate::runs::{engine_error, engine_options, print_outcome, CommonRunArgs};
use crate::setup::{git_with_credentials, state_dir};

/// Continue a paused or interrupted run where it stopped
///
/// The round it stopped in starts again from a fresh look at the PR: what
/// was already replied to is not replied to again, fixes already pushed are
/// replied to rather than redone, and saved triage and approvals are reused.
/// A run paused at the round limit gets another `max_rounds` rounds.
#[derive(Debug, Args)]
pub(crate) struct ResumeArgs {
    /// The run id (see `shepherd status`)
    #[arg(value_name = "RUN")]
    run: String,

    #[command(flatten)]
    common: CommonRunArgs,
}

pub(crate) fn cmd_resume(args: ResumeArgs) -> CliResult<u8> {
    let state = state_dir(args.common.state_dir.clone())?;
    let file = shepherd_engine::load_run_file(&state, &args.run)
        .map_err(|e| CliError::usage(e).with_hint("`shepherd status` lists the runs"))?;
    let forge_args = ForgeArgs {
        forge: None,
        repo: None,
        api_url: file.api_url.clone(),
    };
    let layers = config_layers(Overrides::default())?;
    let forge = connect(&file.target, &forge_args, &current_forge_config(&layers)?)?;
    let git = git_with_credentials(&file.target)?;
    let mut opts = engine_options();
    opts.approve = args.common.approve;
    opts.reply_needs_human = args.common.reply_needs_human;
    opts.checkout = crate::setup::current_checkout();
    let engine = shepherd_engine::Engine::new(forge, state, git, opts);
    let outcome = runtime()?
        .block_on(engine.resume(&args.run))
        .map_err(engine_error)?;
    print_outcome(&outcome, args.common.json)
}
