//! Rounds of a run: the stage each reached and the gate state it ended with.

use rusqlite::params;

use super::error::{Result, SqlContext, StoreError};
use super::open::{write, Store};
use super::rows::decode_json;
use super::runs::require_run;
use super::timestamp::Timestamp;
use super::types::Round;

impl Store {
    /// Record that round `number` of `run` started at stage `stage`.
    pub fn start_round(
        &mut self,
        run: &str,
        number: u32,
        stage: &str,
        at: Timestamp,
    ) -> Result<()> {
        write(&mut self.conn, "start round", |tx| {
            require_run(tx, run)?;
            let exists: bool = tx
                .query_row(
                    "SELECT EXISTS (SELECT 1 FROM rounds WHERE run_id = ?1 AND number = ?2)",
                    params![run, number],
                    |r| r.get(0),
                )
                .ctx("read round")?;
            if exists {
                return Err(StoreError::RoundExists {
                    run: run.to_string(),
                    round: number,
                });
            }
            tx.execute(
                "INSERT INTO rounds (run_id, number, stage, started_at) VALUES (?1, ?2, ?3, ?4)",
                params![run, number, stage, at.0],
            )
            .ctx("insert round")?;
            Ok(())
        })
    }

    /// Record the stage round `number` of `run` reached.
    pub fn set_round_stage(&mut self, run: &str, number: u32, stage: &str) -> Result<()> {
        write(&mut self.conn, "set round stage", |tx| {
            let n = tx
                .execute(
                    "UPDATE rounds SET stage = ?3 WHERE run_id = ?1 AND number = ?2",
                    params![run, number, stage],
                )
                .ctx("update round stage")?;
            if n == 0 {
                return Err(StoreError::RoundNotFound {
                    run: run.to_string(),
                    round: number,
                });
            }
            Ok(())
        })
    }

    /// Record that round `number` of `run` ended, with its gate state (its
    /// hash, for stall detection, and the state itself).
    pub fn finish_round(
        &mut self,
        run: &str,
        number: u32,
        gate_hash: Option<&str>,
        gate_state: Option<&serde_json::Value>,
        at: Timestamp,
    ) -> Result<()> {
        let gate_json = gate_state
            .map(serde_json::to_string)
            .transpose()
            .map_err(|source| StoreError::Json {
                context: "encode gate state",
                source,
            })?;
        write(&mut self.conn, "finish round", |tx| {
            let n = tx
                .execute(
                    "UPDATE rounds SET gate_hash = ?3, gate_state = ?4, ended_at = ?5
                     WHERE run_id = ?1 AND number = ?2",
                    params![run, number, gate_hash, gate_json, at.0],
                )
                .ctx("update round")?;
            if n == 0 {
                return Err(StoreError::RoundNotFound {
                    run: run.to_string(),
                    round: number,
                });
            }
            Ok(())
        })
    }

    /// The rounds of `run`, in order.
    pub fn rounds(&self, run: &str) -> Result<Vec<Round>> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT run_id, number, stage, gate_hash, gate_state, started_at, ended_at
                 FROM rounds WHERE run_id = ?1 ORDER BY number",
            )
            .ctx("list rounds")?;
        type RawRound = (
            String,
            u32,
            String,
            Option<String>,
            Option<String>,
            i64,
            Option<i64>,
        );
        let raws: Vec<RawRound> = stmt
            .query_map([run], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                ))
            })
            .and_then(Iterator::collect)
            .ctx("list rounds")?;
        raws.into_iter()
            .map(
                |(run_id, number, stage, gate_hash, gate_state, started, ended)| {
                    Ok(Round {
                        run_id,
                        number,
                        stage,
                        gate_hash,
                        gate_state: gate_state.as_deref().map(decode_json).transpose()?,
                        started_at: Timestamp(started),
                        ended_at: ended.map(Timestamp),
                    })
                },
            )
            .collect()
    }
}
