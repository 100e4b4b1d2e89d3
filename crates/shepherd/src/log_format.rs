//! How log events read on a terminal at the default verbosity: as notes to
//! a person (`warning: not passing a token-like variable to an agent
//! (variable: GITHUB_TOKEN)`), not as raw log lines with a timestamp and a
//! module path. `-v` and `SHEPHERD_LOG` keep tracing's full format.

use std::fmt;

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// The event's message and its other fields, as `message (name: value, ...)`.
#[derive(Default)]
struct Words {
    message: String,
    fields: Vec<String>,
}

impl Visit for Words {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message = value.to_owned();
        } else {
            self.fields.push(format!("{}: {value}", field.name()));
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if field.name() == "message" {
            self.message = format!("{value:?}");
        } else {
            self.fields.push(format!("{}: {value:?}", field.name()));
        }
    }
}

/// `warning: MESSAGE (FIELDS)`: the event's level as a word, its message
/// and fields, nothing else.
pub(crate) struct Notes;

impl<S, N> FormatEvent<S, N> for Notes
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        _ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let mut words = Words::default();
        event.record(&mut words);
        let level = match *event.metadata().level() {
            Level::ERROR => "error",
            Level::WARN => "warning",
            Level::INFO => "note",
            Level::DEBUG | Level::TRACE => "debug",
        };
        write!(writer, "{level}: {}", words.message)?;
        if !words.fields.is_empty() {
            write!(writer, " ({})", words.fields.join(", "))?;
        }
        writeln!(writer)
    }
}
