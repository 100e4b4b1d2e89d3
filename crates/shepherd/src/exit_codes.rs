//! The documented exit codes of `shepherd` (SPEC section 1).

/// The run converged, or the command succeeded.
pub const SUCCESS: u8 = 0;
/// The command or run failed.
pub const FAILURE: u8 = 1;
/// Bad usage or input (a target that does not parse, an unknown flag).
pub const USAGE: u8 = 2;
/// The run is paused, awaiting approval.
pub const PAUSED: u8 = 3;
/// The round limit was reached without convergence.
pub const EXHAUSTED: u8 = 4;
