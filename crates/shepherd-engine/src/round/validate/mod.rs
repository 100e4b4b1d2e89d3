//! Stages 8 and 10, validate and revalidate (SPEC section 3).
//!
//! The verify command comes from `[verify] command`, else a discovered
//! `verify.sh`, `.shepherd/verify`, or the project's obvious test command
//! (`cargo test`, `npm test`, `pytest`, `go test ./...`, `make test`). It
//! runs with the project's environment minus every credential-like
//! variable, in its own process group, killed as a whole on timeout.
//!
//! - **validate** (soft): the command runs on the round's combined result.
//!   When it fails and its output names a file the round touched (or names
//!   no file of the repository: when unsure, the round is blamed), one
//!   repair attempt is made by the fix-validation role's provider (else the
//!   fix role's; the builtin provider makes none) in the run's worktree,
//!   with the failure output; Shepherd commits the repair and runs the
//!   command again. A failure whose output names only files the round did
//!   not touch is noted as pre-existing, with no repair. The fix-validation
//!   verdicts of the round's fixes are recorded here too (`validate.json`,
//!   `verify.log`, `verify-after-repair.log`).
//! - **revalidate** (hard gate, after the pre-push review): the command must
//!   pass on the exact HEAD to be pushed; a missing or failing command
//!   refuses the push and fails the run with the reason. When HEAD has not
//!   moved since the validate stage, its result stands (`revalidate.json`,
//!   `revalidate.log`).
//! - a CI repair's commit (the repair stage, issue 31) is verified the same
//!   way before it is pushed ([`verify_repair`]).

mod blame;
mod command;
mod repair;
mod revalidate;
mod run;
mod stage;

pub(crate) use revalidate::stage as stage_revalidate;
pub(crate) use run::run_command;
pub(crate) use stage::{stage, verify_repair};
