//! One module per subcommand; `cli` names their flags and the crate root
//! dispatches to them.

pub(crate) mod approve;
pub(crate) mod ci_event;
pub(crate) mod demo;
pub(crate) mod doctor;
pub(crate) mod doctor_probe;
pub(crate) mod emulator;
pub(crate) mod reject;
pub(crate) mod report;
pub(crate) mod resume;
pub(crate) mod run;
pub(crate) mod serve;
pub(crate) mod status;
pub(crate) mod threads;
