use std::path::PathBuf;

/// Why a tool could not be installed or found.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// A program the tests need is not on the machine, or not of a version
    /// they work with.
    #[error("{what}: {found}; {install}")]
    Missing {
        /// The program, as a person would name it (`gh`, `chromium`).
        what: String,
        /// What was found instead (`not on PATH`, `version 1.9.0`).
        found: String,
        /// What installs it (`apt-get install gh`).
        install: String,
    },
    /// No cache directory could be chosen.
    #[error("no cache directory for the test tools: set SHEPHERD_TEST_TOOLS_DIR, XDG_CACHE_HOME or HOME")]
    NoCache,
    /// A file operation failed.
    #[error("{what} {path}: {source}")]
    Io {
        /// What was done.
        what: &'static str,
        /// On which path.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A program could not be started.
    #[error("{what}: cannot run {program}: {source}; {install}")]
    Spawn {
        /// What the program was run for.
        what: String,
        /// The program.
        program: String,
        /// What installs it.
        install: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A program ran and failed.
    #[error("{what} failed ({status}): {output}")]
    Failed {
        /// What the program was run for.
        what: String,
        /// Its exit status.
        status: std::process::ExitStatus,
        /// The end of its output.
        output: String,
    },
}

impl ToolError {
    pub(crate) fn io(
        what: &'static str,
        path: &std::path::Path,
    ) -> impl FnOnce(std::io::Error) -> ToolError {
        let path = path.to_owned();
        move |source| ToolError::Io { what, path, source }
    }
}
