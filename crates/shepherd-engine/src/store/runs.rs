//! Runs: one a `shepherd run` (or `resume`) of a PR, with its status.

use rusqlite::{params, Connection, OptionalExtension};
use shepherd_core::ForgeKind;

use super::error::{Result, SqlContext, StoreError};
use super::open::{write, Store};
use super::rows::{query_rows, row};
use super::timestamp::Timestamp;
use super::types::{validate_run_id, PrKey, Run, RunStatus};

impl Store {
    /// Create a run of `pr` with status `running`.
    pub fn create_run(&mut self, id: &str, pr: &PrKey, at: Timestamp) -> Result<Run> {
        validate_run_id(id)?;
        write(&mut self.conn, "create run", |tx| {
            if run_exists(tx, id)? {
                return Err(StoreError::RunExists {
                    run: id.to_string(),
                });
            }
            tx.execute(
                "INSERT INTO runs (id, forge, host, repo, number, status, reason, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, NULL, ?7, ?7)",
                params![id, pr.forge.as_str(), pr.host, pr.repo, pr.number, RunStatus::Running.as_str(), at.0],
            )
            .ctx("insert run")?;
            Ok(())
        })?;
        Ok(Run {
            id: id.to_string(),
            pr: pr.clone(),
            status: RunStatus::Running,
            reason: None,
            created_at: at,
            updated_at: at,
        })
    }

    /// The run `id`, if it exists.
    pub fn run(&self, id: &str) -> Result<Option<Run>> {
        let raw = self
            .conn
            .query_row(
                &format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = ?1"),
                [id],
                RawRun::from_row,
            )
            .optional()
            .ctx("read run")?;
        raw.map(RawRun::into_run).transpose()
    }

    /// The run `id`, or [`StoreError::RunNotFound`].
    pub fn get_run(&self, id: &str) -> Result<Run> {
        self.run(id)?.ok_or_else(|| StoreError::RunNotFound {
            run: id.to_string(),
        })
    }

    /// The runs of `pr`, oldest first.
    pub fn runs_for_pr(&self, pr: &PrKey) -> Result<Vec<Run>> {
        let sql = format!(
            "SELECT {RUN_COLUMNS} FROM runs
             WHERE forge = ?1 AND host = ?2 AND repo = ?3 AND number = ?4
             ORDER BY created_at, rowid"
        );
        self.query_runs(
            &sql,
            params![pr.forge.as_str(), pr.host, pr.repo, pr.number],
        )
    }

    /// Every run, newest first.
    pub fn list_runs(&self) -> Result<Vec<Run>> {
        let sql = format!("SELECT {RUN_COLUMNS} FROM runs ORDER BY created_at DESC, rowid DESC");
        self.query_runs(&sql, [])
    }

    fn query_runs(&self, sql: &str, params: impl rusqlite::Params) -> Result<Vec<Run>> {
        query_rows(&self.conn, "list runs", sql, params, RawRun::from_row)?
            .into_iter()
            .map(RawRun::into_run)
            .collect()
    }

    /// Set a run's status and reason (`None` clears the reason).
    pub fn set_run_status(
        &mut self,
        id: &str,
        status: RunStatus,
        reason: Option<&str>,
        at: Timestamp,
    ) -> Result<()> {
        write(&mut self.conn, "set run status", |tx| {
            let n = tx
                .execute(
                    "UPDATE runs SET status = ?2, reason = ?3, updated_at = ?4 WHERE id = ?1",
                    params![id, status.as_str(), reason, at.0],
                )
                .ctx("update run status")?;
            if n == 0 {
                return Err(StoreError::RunNotFound {
                    run: id.to_string(),
                });
            }
            Ok(())
        })
    }
}

fn run_exists(conn: &Connection, run: &str) -> Result<bool> {
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM runs WHERE id = ?1)",
        [run],
        |r| r.get(0),
    )
    .ctx("read run")
}

pub(super) fn require_run(conn: &Connection, run: &str) -> Result<()> {
    if run_exists(conn, run)? {
        Ok(())
    } else {
        Err(StoreError::RunNotFound {
            run: run.to_string(),
        })
    }
}

fn parse_forge(s: String) -> Result<ForgeKind> {
    ForgeKind::from_name(&s).ok_or(StoreError::Corrupt {
        column: "runs.forge",
        value: s,
    })
}

const RUN_COLUMNS: &str = "id, forge, host, repo, number, status, reason, created_at, updated_at";

row! {
    /// A `runs` row as stored.
    struct RawRun {
        id: String,
        forge: String,
        host: String,
        repo: String,
        number: u64,
        status: String,
        reason: Option<String>,
        created_at: i64,
        updated_at: i64,
    }
}

impl RawRun {
    fn into_run(self) -> Result<Run> {
        Ok(Run {
            id: self.id,
            pr: PrKey {
                forge: parse_forge(self.forge)?,
                host: self.host,
                repo: self.repo,
                number: self.number,
            },
            status: RunStatus::parse(&self.status)?,
            reason: self.reason,
            created_at: Timestamp(self.created_at),
            updated_at: Timestamp(self.updated_at),
        })
    }
}
