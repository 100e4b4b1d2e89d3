//! Progress lines on stderr: one line per stage of a run, coloured on a TTY.
//!
//! A wait (CI, the verify command) is a spinner on a TTY, with the time
//! waited and what is still pending; elsewhere a plain line each time what is
//! waited for changes. Log lines ([`LogWriter`]) are printed above the
//! spinner, never through it.

use std::io::{IsTerminal, Write};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use shepherd_core::escape::visible;
use shepherd_engine::{Progress, ProgressEvent, RunStatus};

use crate::ui::Style;

/// The spinner shown now, if any: the log writer suspends it to print.
static SPINNER: Mutex<Option<ProgressBar>> = Mutex::new(None);

fn spinner() -> MutexGuard<'static, Option<ProgressBar>> {
    // A panic while holding the lock leaves a spinner at worst: keep going.
    SPINNER.lock().unwrap_or_else(|e| e.into_inner())
}

/// One line per stage on stderr; colour and symbols on a TTY, and a
/// spinner while waiting.
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

    /// Show `what` on the spinner, started if none runs.
    fn spin(&self, round: u32, what: &str) {
        let mut current = spinner();
        let bar = current.get_or_insert_with(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            let template = format!(
                "  {{spinner}} {} {{elapsed:>4}} {{wide_msg}}",
                self.style.dim(&format!("{round}/waiting   "))
            );
            if let Ok(style) = ProgressStyle::with_template(&template) {
                bar.set_style(style);
            }
            bar.enable_steady_tick(Duration::from_millis(120));
            bar
        });
        bar.set_message(visible(what));
    }
}

/// The line a waiting event prints where no spinner is drawn.
fn waiting_line(s: Style, round: u32, what: &str) -> String {
    format!(
        "  - {} {}",
        s.dim(&format!("{round}/waiting   ")),
        s.dim(&visible(what))
    )
}

impl Progress for LineProgress {
    fn event(&self, event: &ProgressEvent) {
        let s = self.style;
        if let ProgressEvent::Waiting { round, what } = event {
            if self.tty {
                self.spin(*round, what);
            } else {
                let mut err = std::io::stderr().lock();
                let _ = writeln!(err, "{}", waiting_line(s, *round, what));
            }
            return;
        }
        // Whatever comes next ends the wait.
        if let Some(bar) = spinner().take() {
            bar.finish_and_clear();
        }
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
            ProgressEvent::Waiting { round, what } => waiting_line(s, *round, what),
            ProgressEvent::Note { message } => {
                format!("  {} {}", s.yellow("note:"), visible(message))
            }
            ProgressEvent::RunFinished { status, reason, .. } => {
                let word = match status {
                    RunStatus::Converged => s.green("converged"),
                    RunStatus::Paused => s.yellow("paused"),
                    RunStatus::HandedOff => s.yellow("handed-off"),
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

/// The log's writer: stderr, with the spinner (if one is drawn) hidden
/// while a line is written, so that a warning never lands inside it.
#[derive(Debug, Default)]
pub(crate) struct LogWriter {
    buf: Vec<u8>,
}

impl Write for LogWriter {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let buf = std::mem::take(&mut self.buf);
        let write = || std::io::stderr().lock().write_all(&buf);
        let current = spinner().clone();
        match current {
            Some(bar) => bar.suspend(write),
            None => write(),
        }
    }
}

impl Drop for LogWriter {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for MakeLogWriter {
    type Writer = LogWriter;

    fn make_writer(&'a self) -> Self::Writer {
        LogWriter::default()
    }
}

/// Makes a [`LogWriter`] per log event.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct MakeLogWriter;

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;

    #[test]
    fn a_waiting_line_without_a_terminal_is_plain() {
        let line = waiting_line(Style::plain(), 2, "CI of abc: waiting for tests");
        assert_eq!(line, "  - 2/waiting    CI of abc: waiting for tests");
    }

    #[test]
    fn a_log_line_is_written_whole_with_a_spinner_drawn() {
        let bar = ProgressBar::hidden();
        *spinner() = Some(bar.clone());
        let mut w = LogWriter::default();
        w.write_all(b"WARN part one, ").unwrap();
        w.write_all(b"part two\n").unwrap();
        assert_eq!(w.buf, b"WARN part one, part two\n");
        w.flush().unwrap();
        assert!(w.buf.is_empty());
        *spinner() = None;
    }
}
