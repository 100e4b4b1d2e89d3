//! What agent calls cost: tokens, dollars and time, where the provider says.
//!
//! Every call a subprocess provider makes records one [`UsageRecord`] in the
//! call's [`UsageLog`] (carried by [`crate::AgentContext`]), whether its
//! answer then passes validation or not: tokens spent on a refused answer
//! were still spent. A call that timed out or could not be started records
//! nothing. The engine reads the log after the call (or shares one log
//! between many calls) and writes it to the run's artifacts.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use shepherd_core::usage::known_sum;

use crate::task::Role;

/// What one agent process consumed. A provider that does not report tokens
/// or cost leaves them `None`; the duration is always measured by Shepherd.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Input (prompt) tokens, cache reads and writes included.
    pub input_tokens: Option<u64>,
    /// Output (completion) tokens.
    pub output_tokens: Option<u64>,
    /// Cost in US dollars, as the provider computed it.
    pub cost_usd: Option<f64>,
    /// Wall-clock time of the process.
    #[serde(rename = "duration_ms", with = "duration_ms")]
    pub duration: Duration,
}

impl Usage {
    /// A usage of `duration` and nothing else known.
    pub fn timed(duration: Duration) -> Self {
        Usage {
            duration,
            ..Usage::default()
        }
    }

    /// Adds `other` to this usage. A known figure plus an unknown one stays
    /// known (the sum of what was reported); two unknowns stay unknown.
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens = known_sum(self.input_tokens, other.input_tokens);
        self.output_tokens = known_sum(self.output_tokens, other.output_tokens);
        self.cost_usd = known_sum(self.cost_usd, other.cost_usd);
        self.duration += other.duration;
    }
}

mod duration_ms {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        u64::deserialize(d).map(Duration::from_millis)
    }
}

/// One call's usage, with what it was for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UsageRecord {
    /// The role asked.
    pub role: Role,
    /// The provider's name (`claude`, `command`, ...).
    pub provider: String,
    /// 1 for the first call, 2 for the retry.
    pub attempt: u32,
    /// What it consumed.
    pub usage: Usage,
}

/// A shared, append-only list of [`UsageRecord`]s. Cloning it shares the
/// list: every clone sees every record.
#[derive(Debug, Clone, Default)]
pub struct UsageLog {
    records: Arc<Mutex<Vec<UsageRecord>>>,
}

impl UsageLog {
    /// An empty log.
    pub fn new() -> Self {
        UsageLog::default()
    }

    fn lock(&self) -> MutexGuard<'_, Vec<UsageRecord>> {
        // A panic while pushing cannot leave the Vec inconsistent: keep going.
        self.records
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Appends a record.
    pub fn record(&self, record: UsageRecord) {
        tracing::debug!(
            role = %record.role,
            provider = %record.provider,
            attempt = record.attempt,
            input_tokens = ?record.usage.input_tokens,
            output_tokens = ?record.usage.output_tokens,
            cost_usd = ?record.usage.cost_usd,
            duration_ms = record.usage.duration.as_millis(),
            "agent usage"
        );
        self.lock().push(record);
    }

    /// Every record so far, oldest first.
    pub fn records(&self) -> Vec<UsageRecord> {
        self.lock().clone()
    }

    /// The sum of every record so far.
    pub fn total(&self) -> Usage {
        let mut total = Usage::default();
        for r in self.lock().iter() {
            total.add(&r.usage);
        }
        total
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;

    #[test]
    fn sums_keep_what_is_known() {
        let log = UsageLog::new();
        let shared = log.clone();
        shared.record(UsageRecord {
            role: Role::Triage,
            provider: "claude".into(),
            attempt: 1,
            usage: Usage {
                input_tokens: Some(10),
                output_tokens: None,
                cost_usd: Some(0.5),
                duration: Duration::from_millis(100),
            },
        });
        log.record(UsageRecord {
            role: Role::Triage,
            provider: "claude".into(),
            attempt: 2,
            usage: Usage {
                input_tokens: Some(5),
                output_tokens: None,
                cost_usd: None,
                duration: Duration::from_millis(50),
            },
        });
        assert_eq!(log.records().len(), 2);
        assert_eq!(
            shared.total(),
            Usage {
                input_tokens: Some(15),
                output_tokens: None,
                cost_usd: Some(0.5),
                duration: Duration::from_millis(150),
            }
        );
    }

    #[test]
    fn serializes_duration_in_milliseconds() {
        let u = Usage::timed(Duration::from_millis(1234));
        let json = serde_json::to_value(u).unwrap();
        assert_eq!(json["duration_ms"], 1234);
        assert_eq!(serde_json::from_value::<Usage>(json).unwrap(), u);
    }
}
