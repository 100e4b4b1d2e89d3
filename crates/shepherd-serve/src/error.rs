//! The dashboard's errors.

use std::net::SocketAddr;

/// Why the dashboard could not do something.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The state store failed.
    #[error(transparent)]
    Store(#[from] shepherd_engine::StoreError),
    /// The engine refused (an approval that does not hold, a run that is not paused).
    #[error(transparent)]
    Engine(#[from] shepherd_engine::EngineError),
    /// No such run or file.
    #[error("not found")]
    NotFound,
    /// The server could not listen.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// Where.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// No secret could be made.
    #[error("cannot make the dashboard's secret: {0}")]
    Random(String),
    /// A blocking task died.
    #[error("internal error: {0}")]
    Task(String),
}
