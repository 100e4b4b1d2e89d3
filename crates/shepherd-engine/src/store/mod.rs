//! Shepherd's state in SQLite (SPEC section 6).
//!
//! One database per user, `state.db` in the [`StateDir`], with run
//! directories beside it (`runs/<run-id>/`). The [`Store`] holds runs, rounds,
//! events, approvals, the append-only ledger and the per-PR lock. The schema
//! is versioned with `PRAGMA user_version`; a database newer than this binary
//! is refused. Events and the ledger are append-only (enforced by triggers).

mod approvals;
mod error;
mod events;
mod ledger;
mod liveness;
mod locks;
mod open;
mod rounds;
mod rows;
mod runs;
mod schema;
mod state_dir;
mod timestamp;
mod types;

#[cfg(test)]
mod tests;

pub use error::{Result, StoreError};
pub use liveness::{local_hostname, ProcessProbe, SystemProbe};
pub use open::{Store, DEFAULT_LOCK_TTL};
pub use state_dir::{StateDir, DB_FILE, STATE_DIR_ENV};
pub use timestamp::Timestamp;
pub use types::{
    validate_run_id, Approval, ApprovalState, Event, LedgerRecord, LockInfo, LockOutcome, PrKey,
    Round, Run, RunStatus,
};
