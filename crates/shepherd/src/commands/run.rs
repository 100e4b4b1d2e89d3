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
    let (target, head_unknown) = match &job {
        Some(job) => match job.target(&mut args.forge) {
            Some(target) => (target, job.head_unknown()),
            None => return job.skipped(),
        },
        // clap requires TARGET without --from-event.
        None => (args.target.clone().unwrap_or_default(), false),
    };
    let result = match run_target(&args, &target, head_unknown) {
        Ok(Started::Ran(outcome)) => Ok(*outcome),
        Ok(Started::Fork(reason)) => {
            return match &job {
                Some(job) => job.skip(&reason),
                // Only a CI job's event leaves the head unknown.
                None => Err(CliError::failure(anyhow::anyhow!(reason))),
            };
        }
        Err(err) => Err(err),
    };
    if let Some(job) = &job {
        job.finish(&result)?;
    }
    print_outcome(&result?, args.common.json)
}

/// How [`run_target`] ended.
enum Started {
    /// The run ran, to this outcome.
    Ran(Box<RunOutcome>),
    /// The pull request's head lives in a fork: the run did not start.
    Fork(String),
}

/// `shepherd run` for the target text `input`, to its outcome. With
/// `head_unknown` (a CI event that does not say where the head lives), the
/// pull request is read first and a fork's is not run.
fn run_target(args: &RunArgs, input: &str, head_unknown: bool) -> CliResult<Started> {
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
    let forge = connect(&target, &forge_args, &current_forge_config(&layers)?)?;
    let hint = endpoint_hint(&target, &forge_args);
    if head_unknown {
        // One read, before anything is written anywhere.
        let pr = runtime()?
            .block_on(forge.pull_request(target.number))
            .map_err(|e| CliError::failure(e).with_unreachable_hint(|| hint.clone()))?;
        if pr.is_cross_repository {
            return Ok(Started::Fork(
                "the pull request's head lives in a fork (the forge says so; the event does not \
                 name the head): Shepherd does not push to forks"
                    .to_owned(),
            ));
        }
    }
    let state = state_dir(args.common.state_dir.clone())?;
    let git = git_with_credentials(&target)?;
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
        .map(|outcome| Started::Ran(Box::new(outcome)))
        .map_err(|e| engine_error(e).with_unreachable_hint(|| hint))
}
