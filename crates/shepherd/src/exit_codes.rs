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
/// The loop is done, but items wait for a person (`handed-off`); 0 instead
/// with `loop.succeed_when_handed_off`.
pub const HANDED_OFF: u8 = 5;

/// The exit code of a run that ended as `outcome` (SPEC section 1): 0
/// converged, 3 paused, 4 round limit reached without convergence, 5
/// handed off (0 where the user opted in), 1 otherwise. The engine reports
/// the status; only the CLI knows codes.
pub fn of_run(outcome: &shepherd_engine::RunOutcome) -> u8 {
    use shepherd_engine::RunStatus;
    if outcome.succeeded() {
        return SUCCESS;
    }
    match outcome.status {
        RunStatus::HandedOff => HANDED_OFF,
        RunStatus::Converged => SUCCESS,
        RunStatus::Paused => PAUSED,
        RunStatus::Exhausted => EXHAUSTED,
        RunStatus::Failed | RunStatus::Interrupted | RunStatus::Running => FAILURE,
    }
}
