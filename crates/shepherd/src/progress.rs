//! Progress lines on stderr: one line per stage of a run, coloured on a TTY.

use std::io::{IsTerminal, Write};

use shepherd_core::escape::visible;
use shepherd_engine::{Progress, ProgressEvent, RunStatus};

use crate::ui::Style;

/// One line per stage on stderr; colour and symbols on a TTY.
pub(crate) struct LineProgress {
    style: Style,
    tty: bool,
}

impl LineProgress {
    pub(crate) fn new() -> Self {
        LineProgress {
            style: Style::stderr(),
            tty: std::io::stderr().is_terminal(),
        }
    }
}

impl Progress for LineProgress {
    fn event(&self, event: &ProgressEvent) {
        let s = self.style;
        let line = match event {
            ProgressEvent::RunStarted {
                run_id,
                target,
                resumed,
            } => format!(
                "{} {} (run {run_id})",
                s.bold(if *resumed { "Resuming" } else { "Shepherding" }),
                visible(&target.to_string())
            ),
            ProgressEvent::RoundStarted { round } => s.bold(&format!("Round {round}")),
            ProgressEvent::Stage {
                round,
                stage,
                summary,
            } => {
                let mark = if self.tty { "✓" } else { "-" };
                format!(
                    "  {mark} {} {}",
                    s.cyan(&format!("{round}/{:<10}", stage.as_str())),
                    // Stage summaries and reasons quote forge text (paths,
                    // ids): visible escapes, never raw controls.
                    visible(summary)
                )
            }
            ProgressEvent::Waiting { round, what } => {
                let mark = if self.tty { "…" } else { "-" };
                format!(
                    "  {mark} {} {}",
                    s.dim(&format!("{round}/waiting   ")),
                    s.dim(&visible(what))
                )
            }
            ProgressEvent::Note { message } => {
                format!("  {} {}", s.yellow("note:"), visible(message))
            }
            ProgressEvent::RunFinished { status, reason, .. } => {
                let word = match status {
                    RunStatus::Converged => s.green("converged"),
                    RunStatus::Paused => s.yellow("paused"),
                    other => s.yellow(other.as_str()),
                };
                match reason {
                    Some(r) => format!("{} {word}: {}", s.bold("Run"), visible(r)),
                    None => format!("{} {word}", s.bold("Run")),
                }
            }
        };
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "{line}");
    }
}
