//! `shepherd run`: drive a PR to a clean finish.

use clap::Args;
use shepherd_core::config::Overrides;
use shepherd_engine::{Engine, EngineOptions, RunOutcome, RunSpec};

use super::ci_event::{CiArgs, CiJob};
use crate::error::{CliError, CliResult};
use crate::runs::{engine_error, engine_options, print_outcome, CommonRunArgs};
use crate::setup::{
    config_layers, connect, current_checkout, current_forge_config, endpoint_hint, git_url,
    git_with_credentials, resolve_target_with, runtime, state_dir, trusted_repo_config,
    with_target_scheme, ForgeArgs,
};

/// Drive a pull request to a clean finish: fix, reply, resolve, wait for CI, repeat
///
/// Rounds run until CI is green and no new feedback arrives (exit 0), a
/// person is needed (exit 3: approve or resume), the run fails (exit 1), or
/// the round limit is reached (exit 4). A `#discussion_r…` URL handles that
/// one thread only.
#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// The PR: `42`, `#42`, `owner/repo#42`, or a PR URL (with `#discussion_rN`: targeted mode)
    #[arg(value_name = "TARGET", required_unless_present = "from_event")]
    target: Option<String>,

    #[command(flatten)]
    ci: CiArgs,

    #[command(flatten)]
    forge: ForgeArgs,

    #[command(flatten)]
    common: CommonRunArgs,

    /// Most rounds this run makes (`loop.max_rounds`)
    #[arg(long, value_name = "N")]
    max_rounds: Option<u32>,
}

pub(crate) fn cmd_run(mut args: RunArgs) -> CliResult<u8> {
    let job = CiJob::from_args(&args.ci)?;
    let target = match &job {
        Some(job) => match job.target(&mut args.forge) {
            Some(target) => target,
            None => return job.skipped(),
        },
        // clap requires TARGET without --from-event.
        None => args.target.clone().unwrap_or_default(),
    };
    let result = run_target(&args, &target);
    if let Some(job) = &job {
        job.finish(&result)?;
    }
    print_outcome(&result?, args.common.json)
}

/// `shepherd run` for the target text `input`, to its outcome.
fn run_target(args: &RunArgs, input: &str) -> CliResult<RunOutcome> {
    // Loaded once: the `[forge]` hosts decide the forge of a remote, and the
    // run is given the same layers.
    let mut layers = config_layers(Overrides {
        max_rounds: args.max_rounds,
        approve: args.common.approve,
        reply_needs_human: args.common.reply_needs_human.then_some(true),
        ..Overrides::default()
    })?;
    let target = resolve_target_with(input, &args.forge, &layers)?;
    let forge_args = with_target_scheme(input, &target, &args.forge);
    let (checkout_file, repo_config) = trusted_repo_config(&target)?;
    if let Some(file) = checkout_file {
        layers.insert(0, file);
        // Checked with the file before anything starts: a bad key is a
        // usage error naming the file.
        shepherd_core::config::Config::layered(&layers).map_err(CliError::usage)?;
    }
    let state = state_dir(args.common.state_dir.clone())?;
    let forge = connect(&target, &forge_args, &current_forge_config(&layers)?)?;
    let git = git_with_credentials(&target)?;
    let hint = endpoint_hint(&target, &forge_args);
    let spec = RunSpec {
        git_url: git_url(&target, forge_args.api_url.as_deref())?,
        api_url: forge_args.api_url.clone(),
        target,
        layers,
        repo_config,
    };
    let opts = EngineOptions {
        checkout: current_checkout(),
        ..engine_options()
    };
    let engine = Engine::new(forge, state, git, opts);
    runtime()?
        .block_on(engine.start(spec))
        .map_err(|e| engine_error(e).with_unreachable_hint(|| hint))
}
