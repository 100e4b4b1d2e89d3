//! The `shepherd` command line: flag parsing, one module per subcommand, and the
//! single place where errors become messages and exit codes.
//!
//! The work itself lives in the library crates (`shepherd-core`, `shepherd-forge`,
//! `shepherd-emulator`); this crate only wires them to the terminal.

mod approver;
mod cli;
mod commands;
mod error;
pub mod exit_codes;
mod log_format;
mod progress;
mod runs;
mod setup;
mod ui;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

pub use error::{CliError, CliResult};

use cli::{Cli, Command};
use commands::{
    approve, demo, doctor, emulator, reject, report, resume, run as run_cmd, serve, status, threads,
};

/// Parse the command line, run the command, and return its exit code.
pub fn run() -> ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            // clap prints help/version on stdout and errors on stderr.
            let _ = err.print();
            return ExitCode::from(if err.use_stderr() {
                exit_codes::USAGE
            } else {
                exit_codes::SUCCESS
            });
        }
    };
    init_tracing(cli.global.verbose);
    let code = match dispatch(cli) {
        Ok(code) => code,
        Err(err) => {
            let mut stderr = std::io::stderr().lock();
            let _ = writeln!(stderr, "{err}");
            err.exit_code()
        }
    };
    ExitCode::from(code)
}

/// Run the chosen command; the returned number is the exit code.
fn dispatch(cli: Cli) -> CliResult<u8> {
    match cli.command {
        Command::Run(args) => run_cmd::cmd_run(args),
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

fn init_tracing(verbose: u8) {
    use tracing_subscriber::EnvFilter;
    let default = match verbose {
        0 => "warn",
        1 => "info,shepherd=debug",
        _ => "debug",
    };
    let (filter, asked) = match EnvFilter::try_from_env("SHEPHERD_LOG") {
        Ok(filter) => (filter, true),
        Err(_) => (EnvFilter::new(default), verbose > 0),
    };
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        // Through the progress renderer: a warning never lands inside a spinner.
        .with_writer(progress::MakeLogWriter)
        .with_ansi(ui::color_enabled_stderr());
    // Logs when asked for them; otherwise the few warnings read as notes.
    let _ = if asked {
        builder.try_init()
    } else {
        builder.event_format(log_format::Notes).try_init()
    };
}
