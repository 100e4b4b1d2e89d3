//! A run's event log, append-only (a trigger refuses changes).

use rusqlite::params;

use super::error::{Result, SqlContext, StoreError};
use super::open::{write, Store};
use super::rows::decode_json;
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
        let mut stmt = self
            .conn
            .prepare(
                "SELECT seq, run_id, round, kind, payload, at FROM events
                 WHERE run_id = ?1 ORDER BY seq",
            )
            .ctx("list events")?;
        type RawEvent = (i64, String, Option<u32>, String, String, i64);
        let raws: Vec<RawEvent> = stmt
            .query_map([run], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                ))
            })
            .and_then(Iterator::collect)
            .ctx("list events")?;
        raws.into_iter()
            .map(|(seq, run_id, round, kind, payload, at)| {
                Ok(Event {
                    seq,
                    run_id,
                    round,
                    kind,
                    payload: decode_json(&payload)?,
                    at: Timestamp(at),
                })
            })
            .collect()
    }
}
