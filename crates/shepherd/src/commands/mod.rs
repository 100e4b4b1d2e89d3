//! One module per subcommand.

pub(crate) mod emulator;
pub(crate) mod threads;

use crate::cli::{Cli, Command};
use crate::error::CliResult;

/// Run the chosen command; the returned number is the exit code.
pub(crate) fn dispatch(cli: Cli) -> CliResult<u8> {
    match cli.command {
        Command::Threads(args) => threads::cmd_threads(args),
        Command::Emulator(args) => emulator::cmd_emulator(args),
    }
}
