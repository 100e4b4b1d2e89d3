//! Shepherd's pure domain.
//!
//! Types for pull requests, threads and ledger entries; target parsing; the
//! reply marker; thread classification; the honesty gate; suggestion blocks;
//! clustering; token arithmetic. Nothing here does IO, spawns, sleeps or
//! reads a clock: every function is deterministic and tested as such.
#![warn(missing_docs)]

pub mod ci;
pub mod ci_failure;
pub mod classify;
pub mod cluster;
pub mod config;
pub mod converge;
pub mod escape;
pub mod forges;
pub mod gate;
pub mod glob;
pub mod ledger;
pub mod marker;
pub mod model;
pub mod reply;
pub mod report;
pub mod reviewers;
pub mod suggestion;
pub mod target;
#[cfg(any(test, feature = "test-support"))]
pub mod testing;
pub mod theme;
pub mod usage;

pub use ledger::{Decision, Ledger, LedgerEntry, Outcome};
pub use marker::Marker;
pub use model::*;
