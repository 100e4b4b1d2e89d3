//! One module per subcommand.

pub(crate) mod approve;
pub(crate) mod demo;
pub(crate) mod doctor;
pub(crate) mod doctor_probe;
pub(crate) mod emulator;
pub(crate) mod reject;
pub(crate) mod report;
pub(crate) mod resume;
pub(crate) mod run;
pub(crate) mod serve;
pub(crate) mod status;
pub(crate) mod threads;

use crate::cli::{Cli, Command};
use crate::error::CliResult;

/// Run the chosen command; the returned number is the exit code.
pub(crate) fn dispatch(cli: Cli) -> CliResult<u8> {
    match cli.command {
        Command::Run(args) => run::cmd_run(args),
        Command::Threads(args) => threads::cmd_threads(args),
        Command::Status(args) => status::cmd_status(args),
        Command::Report(args) => report::cmd_report(args),
        Command::Approve(args) => approve::cmd_approve(args),
        Command::Reject(args) => reject::cmd_reject(args),
        Command::Resume(args) => resume::cmd_resume(args),
        Command::Demo(args) => demo::cmd_demo(args),
        Command::Emulator(args) => emulator::cmd_emulator(args),
        Command::Serve(args) => serve::cmd_serve(args),
        Command::Doctor(args) => doctor::cmd_doctor(args),
    }
}
