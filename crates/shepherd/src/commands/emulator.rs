//! `shepherd emulator`: the local forge emulator as a server.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;

use anyhow::anyhow;
use clap::Args;
use shepherd_emulator::{Emulator, Scenario};

use crate::error::{CliError, CliResult};
use crate::exit_codes;
use crate::forge_setup::runtime;

/// Serve the local GitHub emulator for a scenario directory
///
/// The emulator listens on loopback only. It prints its API and git URLs and
/// the (fake) tokens of the scenario's users, then serves until Ctrl-C.
#[derive(Debug, Args)]
pub(crate) struct EmulatorArgs {
    /// The scenario directory (`scenario.toml`, `base/`, `head/`)
    #[arg(long, value_name = "DIR")]
    scenario: PathBuf,

    /// The loopback port to listen on (0: any free port)
    #[arg(long, default_value_t = 0)]
    port: u16,
}

pub(crate) fn cmd_emulator(args: EmulatorArgs) -> CliResult<u8> {
    let scenario = Scenario::load(&args.scenario).map_err(CliError::usage)?;
    let bind = SocketAddr::from((Ipv4Addr::LOCALHOST, args.port));
    runtime()?.block_on(async move {
        let emulator = Emulator::start(scenario, bind)
            .await
            .map_err(CliError::failure)?;
        println!("{}", emulator.banner());
        println!("Press Ctrl-C to stop.");
        tokio::signal::ctrl_c()
            .await
            .map_err(|e| CliError::failure(anyhow!("cannot wait for Ctrl-C: {e}")))?;
        emulator.shutdown().await.map_err(CliError::failure)?;
        Ok(exit_codes::SUCCESS)
    })
}
