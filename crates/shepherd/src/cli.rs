//! The flags of `shepherd`, as clap types.

use clap::{Args, Parser, Subcommand};

use crate::commands::{
    approve::ApproveArgs, demo::DemoArgs, doctor::DoctorArgs, emulator::EmulatorArgs,
    reject::RejectArgs, report::ReportArgs, resume::ResumeArgs, run::RunArgs, serve::ServeArgs,
    status::StatusArgs, threads::ThreadsArgs,
};

/// Drive a pull request or merge request to a clean finish
#[derive(Debug, Parser)]
#[command(name = "shepherd", version, about, long_about = None)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// Flags every command takes.
#[derive(Debug, Args)]
pub(crate) struct GlobalArgs {
    /// Log more (-v: info, -vv: debug); SHEPHERD_LOG overrides
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    Run(RunArgs),
    Threads(ThreadsArgs),
    Status(StatusArgs),
    Report(ReportArgs),
    Approve(ApproveArgs),
    Reject(RejectArgs),
    Resume(ResumeArgs),
    Demo(DemoArgs),
    Emulator(EmulatorArgs),
    Serve(ServeArgs),
    Doctor(DoctorArgs),
}
