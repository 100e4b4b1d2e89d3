//! A run's event log, append-only (a trigger refuses changes).

use rusqlite::params;

use super::error::{Result, SqlContext, StoreError};
use super::open::{write, Store};
use super::rows::{decode_json, query_rows, row};
use super::runs::require_run;
use super::timestamp::Timestamp;
use super::types::Event;

impl Store {
    /// Append an event to `run`'s log; returns its sequence number.
    pub fn append_event(
        &mut self,
        run: &str,
        round: Option<u32>,
        kind: &str,
        payload: &serde_json::Value,
        at: Timestamp,
    ) -> Result<i64> {
        let payload = serde_json::to_string(payload).map_err(|source| StoreError::Json {
            context: "encode event payload",
            source,
        })?;
        write(&mut self.conn, "append event", |tx| {
            require_run(tx, run)?;
            tx.execute(
                "INSERT INTO events (run_id, round, kind, payload, at) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![run, round, kind, payload, at.0],
            )
            .ctx("insert event")?;
            Ok(tx.last_insert_rowid())
        })
    }

    /// The events of `run`, in append order.
    pub fn events(&self, run: &str) -> Result<Vec<Event>> {
        let sql = "SELECT seq, run_id, round, kind, payload, at FROM events
                   WHERE run_id = ?1 ORDER BY seq";
        query_rows(&self.conn, "list events", sql, [run], RawEvent::from_row)?
            .into_iter()
            .map(RawEvent::into_event)
            .collect()
    }
}

row! {
    /// An `events` row as stored.
    struct RawEvent {
        seq: i64,
        run_id: String,
        round: Option<u32>,
        kind: String,
        payload: String,
        at: i64,
    }
}

impl RawEvent {
    fn into_event(self) -> Result<Event> {
        Ok(Event {
            seq: self.seq,
            run_id: self.run_id,
            round: self.round,
            kind: self.kind,
            payload: decode_json(&self.payload)?,
            at: Timestamp(self.at),
        })
    }
}
