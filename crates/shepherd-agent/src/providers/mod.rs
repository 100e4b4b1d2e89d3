//! The providers that drive agent CLIs: [`CliAgent`] and, per CLI, how its
//! command line is built and its output read.

pub(crate) mod claude;
pub mod cli;
pub(crate) mod codex;
pub mod copilot;
pub(crate) mod extract;
pub(crate) mod gemini;
pub(crate) mod invocation;
pub(crate) mod opencode;
pub mod registry;
pub(crate) mod spec;
pub(crate) mod strict;
pub mod versions;

pub use cli::{CliAgent, CliConfig, CliConfigError};
pub use registry::CliProvider;
