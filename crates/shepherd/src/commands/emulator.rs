//! `shepherd emulator`: the local forge emulator as a server.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;

use anyhow::anyhow;
use clap::Args;
use shepherd_core::ForgeKind;
use shepherd_emulator::{EmulatedForge, Emulator, Scenario};

use crate::error::{CliError, CliResult};
use crate::exit_codes;
use crate::setup::{runtime, ForgeFlag};
use crate::ui::outln;

/// Serve the local forge emulator (GitHub or GitLab) for a scenario directory
///
/// The emulator listens on loopback only. It prints its API and git URLs and
/// the (fake) tokens of the scenario's users, then serves until Ctrl-C. The
/// scenario's `forge` says which API is served; `--forge gitlab` serves a
/// GitHub scenario as GitLab (its suggestion blocks in GitLab's syntax).
#[derive(Debug, Args)]
pub(crate) struct EmulatorArgs {
    /// The scenario directory (`scenario.toml`, `base/`, `head/`)
    #[arg(long, value_name = "DIR")]
    scenario: PathBuf,

    /// The forge to play, instead of the scenario's `forge`
    #[arg(long, value_enum)]
    forge: Option<ForgeFlag>,

    /// The loopback port to listen on (0: any free port)
    #[arg(long, default_value_t = 0)]
    port: u16,
}

/// `scenario` served as `forge`: a GitHub scenario becomes GitLab's; a
/// GitLab scenario cannot become GitHub's (its suggestions are written in
/// GitLab's syntax).
fn as_forge(scenario: Scenario, forge: Option<ForgeFlag>) -> CliResult<Scenario> {
    match (forge.map(ForgeKind::from), scenario.forge) {
        (None, _)
        | (Some(ForgeKind::GitHub), EmulatedForge::GitHub)
        | (Some(ForgeKind::GitLab), EmulatedForge::GitLab) => Ok(scenario),
        (Some(ForgeKind::GitLab), EmulatedForge::GitHub) => {
            scenario.into_gitlab().map_err(CliError::usage)
        }
        (Some(ForgeKind::GitHub), EmulatedForge::GitLab) => Err(CliError::usage(anyhow!(
            "the scenario is a GitLab scenario (`forge = \"gitlab\"`); it cannot be served as GitHub"
        ))),
    }
}

pub(crate) fn cmd_emulator(args: EmulatorArgs) -> CliResult<u8> {
    let scenario = Scenario::load(&args.scenario).map_err(CliError::usage)?;
    let scenario = as_forge(scenario, args.forge)?;
    let bind = SocketAddr::from((Ipv4Addr::LOCALHOST, args.port));
    runtime()?.block_on(async move {
        let emulator = Emulator::start(scenario, bind)
            .await
            .map_err(CliError::failure)?;
        outln!("{}", emulator.banner());
        outln!("Press Ctrl-C to stop.");
        tokio::signal::ctrl_c()
            .await
            .map_err(|e| CliError::failure(anyhow!("cannot wait for Ctrl-C: {e}")))?;
        emulator.shutdown().await.map_err(CliError::failure)?;
        Ok(exit_codes::SUCCESS)
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;

    #[test]
    fn the_flag_or_the_scenario_picks_the_forge() {
        let github = Scenario::demo().unwrap();
        let gitlab = Scenario::demo_gitlab().unwrap();
        assert_eq!(as_forge(github.clone(), None).unwrap(), github);
        assert_eq!(
            as_forge(github.clone(), Some(ForgeFlag(ForgeKind::GitHub))).unwrap(),
            github
        );
        assert_eq!(
            as_forge(github.clone(), Some(ForgeFlag(ForgeKind::GitLab))).unwrap(),
            gitlab
        );
        // A GitLab scenario needs no flag, and is not turned twice.
        assert_eq!(as_forge(gitlab.clone(), None).unwrap(), gitlab);
        assert_eq!(
            as_forge(gitlab.clone(), Some(ForgeFlag(ForgeKind::GitLab))).unwrap(),
            gitlab
        );
        let err = as_forge(gitlab, Some(ForgeFlag(ForgeKind::GitHub))).unwrap_err();
        assert!(err.to_string().contains("GitLab scenario"), "{err}");
    }
}
