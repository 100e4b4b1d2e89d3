//! Rounds of a run: the stage each reached and the gate state it ended with.

use rusqlite::params;

use super::error::{Result, SqlContext, StoreError};
use super::open::{write, Store};
use super::rows::{decode_json, query_rows, row};
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
        let sql = "SELECT run_id, number, stage, gate_hash, gate_state, started_at, ended_at
                   FROM rounds WHERE run_id = ?1 ORDER BY number";
        query_rows(&self.conn, "list rounds", sql, [run], RawRound::from_row)?
            .into_iter()
            .map(RawRound::into_round)
            .collect()
    }
}

row! {
    /// A `rounds` row as stored.
    struct RawRound {
        run_id: String,
        number: u32,
        stage: String,
        gate_hash: Option<String>,
        gate_state: Option<String>,
        started_at: i64,
        ended_at: Option<i64>,
    }
}

impl RawRound {
    fn into_round(self) -> Result<Round> {
        Ok(Round {
            run_id: self.run_id,
            number: self.number,
            stage: self.stage,
            gate_hash: self.gate_hash,
            gate_state: self.gate_state.as_deref().map(decode_json).transpose()?,
            started_at: Timestamp(self.started_at),
            ended_at: self.ended_at.map(Timestamp),
        })
    }
}
