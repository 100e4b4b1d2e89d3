//! Errors of the state store.

use std::path::PathBuf;

use super::timestamp::Timestamp;

/// Everything that can go wrong reading or writing Shepherd's state.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// No `--state-dir`, `SHEPHERD_STATE_DIR`, `XDG_STATE_HOME` nor `HOME`.
    #[error(
        "cannot locate the state directory: set --state-dir, SHEPHERD_STATE_DIR, XDG_STATE_HOME or HOME"
    )]
    NoStateDir,
    /// A directory could not be created.
    #[error("cannot create directory {path}")]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The database could not be opened or configured.
    #[error("cannot open state database {path}")]
    Open {
        /// The database file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: rusqlite::Error,
    },
    /// The database was written by a newer Shepherd.
    #[error(
        "state database {path} has schema version {found}, newer than the {supported} this shepherd \
         knows; upgrade shepherd or point --state-dir elsewhere"
    )]
    TooNew {
        /// The database file.
        path: PathBuf,
        /// The database's `user_version`.
        found: i64,
        /// The newest version this binary knows.
        supported: i64,
    },
    /// A schema migration failed.
    #[error("cannot migrate state database {path} to schema version {version}")]
    Migrate {
        /// The database file.
        path: PathBuf,
        /// The version being migrated to.
        version: i64,
        /// The cause.
        #[source]
        source: rusqlite::Error,
    },
    /// A query failed.
    #[error("state database: cannot {context}")]
    Sqlite {
        /// What was being done ("append ledger entry", ...).
        context: &'static str,
        /// The cause.
        #[source]
        source: rusqlite::Error,
    },
    /// A JSON value could not be encoded or decoded.
    #[error("state database: cannot {context}")]
    Json {
        /// What was being done.
        context: &'static str,
        /// The cause.
        #[source]
        source: serde_json::Error,
    },
    /// A column held a value this binary does not understand.
    #[error("state database: {column} holds unknown value {value:?}")]
    Corrupt {
        /// The table and column (`runs.status`).
        column: &'static str,
        /// The value found.
        value: String,
    },
    /// A run id is not usable (empty, or characters unsafe in a path).
    #[error(
        "invalid run id {run:?}: use letters, digits, '.', '_' and '-', not starting with '.'"
    )]
    InvalidRunId {
        /// The offending id.
        run: String,
    },
    /// No run has this id.
    #[error("no run {run}")]
    RunNotFound {
        /// The run id.
        run: String,
    },
    /// A run with this id already exists.
    #[error("run {run} already exists")]
    RunExists {
        /// The run id.
        run: String,
    },
    /// The round was never started.
    #[error("run {run} has no round {round}")]
    RoundNotFound {
        /// The run id.
        run: String,
        /// The round number.
        round: u32,
    },
    /// The round was already started.
    #[error("run {run} already has a round {round}")]
    RoundExists {
        /// The run id.
        run: String,
        /// The round number.
        round: u32,
    },
    /// No approval for this item exists.
    #[error("run {run} round {round} has no approval for item {item}")]
    ApprovalNotFound {
        /// The run id.
        run: String,
        /// The round number.
        round: u32,
        /// The item id.
        item: String,
    },
    /// Another live run holds the PR's lock.
    #[error(
        "another shepherd run ({run}, pid {pid} on {hostname}) holds this pull request since \
         {since}; wait for it to finish"
    )]
    Locked {
        /// The holder's process id.
        pid: u32,
        /// The holder's host name.
        hostname: String,
        /// The holder's run id.
        run: String,
        /// When the holder acquired the lock.
        since: Timestamp,
    },
}

/// Results of the store.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// Attach a context to a rusqlite error.
pub(crate) trait SqlContext<T> {
    fn ctx(self, context: &'static str) -> Result<T>;
}

impl<T> SqlContext<T> for std::result::Result<T, rusqlite::Error> {
    fn ctx(self, context: &'static str) -> Result<T> {
        self.map_err(|source| StoreError::Sqlite { context, source })
    }
}
