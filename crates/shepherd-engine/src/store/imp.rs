//! The SQLite store.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{params, Connection, OptionalExtension, Row, Transaction, TransactionBehavior};
use serde::de::DeserializeOwned;
use serde::Serialize;
use shepherd_core::{Decision, ForgeKind, Ledger, LedgerEntry};

use super::error::{Result, SqlContext, StoreError};
use super::liveness::{ProcessProbe, SystemProbe};
use super::schema::{current_version, MIGRATIONS};
use super::state_dir::StateDir;
use super::timestamp::Timestamp;
use super::types::{
    validate_run_id, Approval, ApprovalState, Event, LedgerRecord, LockInfo, LockOutcome, PrKey,
    Round, Run, RunStatus,
};

/// How long a writer waits for another connection's write lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The default lock TTL for holders on other hosts.
pub const DEFAULT_LOCK_TTL: Duration = Duration::from_secs(60 * 60);

/// Shepherd's state: one SQLite connection to `state.db`.
///
/// Reads take `&self`; every change takes `&mut self` and runs in one
/// `BEGIN IMMEDIATE` transaction, so concurrent processes serialize on
/// SQLite's write lock (waiting up to a busy timeout) instead of failing
/// half-way. Several `Store`s on one file (threads, processes) are fine: the
/// database is in WAL mode.
pub struct Store {
    conn: Connection,
    path: PathBuf,
    probe: Box<dyn ProcessProbe>,
    lock_ttl: Duration,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.path)
            .field("lock_ttl", &self.lock_ttl)
            .finish_non_exhaustive()
    }
}

impl Store {
    /// Open (creating it and its directory if needed) the database at `path`,
    /// configure it (WAL, busy timeout, foreign keys) and migrate it to the
    /// current schema. A database of a newer schema is refused
    /// ([`StoreError::TooNew`]) and left untouched.
    pub fn open(path: impl AsRef<Path>) -> Result<Store> {
        let path = path.as_ref().to_path_buf();
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|source| StoreError::CreateDir {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        let open_err = |source| StoreError::Open {
            path: path.clone(),
            source,
        };
        let conn = Connection::open(&path).map_err(open_err)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(open_err)?;
        // Switching a new database to WAL takes an exclusive lock, for which
        // SQLite does not call the busy handler: two processes opening a
        // fresh database at once retry here instead of failing.
        let started = std::time::Instant::now();
        let mode: String = loop {
            match conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0)) {
                Ok(mode) => break mode,
                Err(rusqlite::Error::SqliteFailure(e, _))
                    if e.code == rusqlite::ErrorCode::DatabaseBusy
                        && started.elapsed() < BUSY_TIMEOUT =>
                {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(e) => return Err(open_err(e)),
            }
        };
        if !mode.eq_ignore_ascii_case("wal") {
            tracing::warn!(path = %path.display(), %mode, "state database is not in WAL mode");
        }
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(open_err)?;
        // NORMAL is durable across application crashes in WAL mode.
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(open_err)?;
        let mut store = Store {
            conn,
            path,
            probe: Box::new(SystemProbe),
            lock_ttl: DEFAULT_LOCK_TTL,
        };
        store.migrate()?;
        Ok(store)
    }

    /// Open `<state-dir>/state.db`.
    pub fn open_in(dir: &StateDir) -> Result<Store> {
        Store::open(dir.db_path())
    }

    /// Use `probe` to tell whether a same-host lock holder is alive.
    pub fn with_process_probe(mut self, probe: impl ProcessProbe + 'static) -> Self {
        self.probe = Box::new(probe);
        self
    }

    /// Treat another host's lock as stale once it is not refreshed for `ttl`
    /// (default [`DEFAULT_LOCK_TTL`]).
    pub fn with_lock_ttl(mut self, ttl: Duration) -> Self {
        self.lock_ttl = ttl;
        self
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version of the open database.
    pub fn schema_version(&self) -> Result<i64> {
        self.conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .ctx("read the schema version")
    }

    /// The schema version this binary writes.
    pub fn supported_schema_version() -> i64 {
        current_version()
    }

    fn migrate(&mut self) -> Result<()> {
        let supported = current_version();
        let found = self.schema_version()?;
        let too_new = |found| StoreError::TooNew {
            path: self.path.clone(),
            found,
            supported,
        };
        if found > supported {
            return Err(too_new(found));
        }
        if found == supported {
            return Ok(());
        }
        // A migration may make a table anew (SQLite cannot alter a CHECK):
        // foreign keys are off while it runs (the pragma is a no-op inside a
        // transaction) and checked before the commit.
        self.conn
            .pragma_update(None, "foreign_keys", "OFF")
            .ctx("turn foreign keys off for the migration")?;
        let migrated = self.migrate_from(supported);
        let on = self
            .conn
            .pragma_update(None, "foreign_keys", "ON")
            .ctx("turn foreign keys back on");
        migrated.and(on)
    }

    fn migrate_from(&mut self, supported: i64) -> Result<()> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .ctx("begin the migration")?;
        // Another process may have migrated between our read and our lock.
        let found: i64 = tx
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .ctx("read the schema version")?;
        if found > supported {
            return Err(StoreError::TooNew {
                path,
                found,
                supported,
            });
        }
        for version in found..supported {
            let migration_err = |source| StoreError::Migrate {
                path: path.clone(),
                version: version + 1,
                source,
            };
            // `version` lies in 0..MIGRATIONS.len(): the index is in bounds.
            let sql = MIGRATIONS[version as usize];
            tx.execute_batch(sql).map_err(migration_err)?;
            tx.pragma_update(None, "user_version", version + 1)
                .map_err(migration_err)?;
            tracing::debug!(path = %path.display(), version = version + 1, "migrated state database");
        }
        let broken: i64 = tx
            .query_row("SELECT count(*) FROM pragma_foreign_key_check", [], |r| {
                r.get(0)
            })
            .ctx("check foreign keys after the migration")?;
        if broken > 0 {
            return Err(StoreError::Migrate {
                path,
                version: supported,
                source: rusqlite::Error::SqliteFailure(
                    rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY),
                    Some(format!(
                        "{broken} row(s) break a foreign key after the migration"
                    )),
                ),
            });
        }
        tx.commit().ctx("commit the migration")
    }

    // ---- runs ------------------------------------------------------------

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
        let mut stmt = self.conn.prepare(sql).ctx("list runs")?;
        let raws = stmt
            .query_map(params, RawRun::from_row)
            .and_then(Iterator::collect::<rusqlite::Result<Vec<_>>>)
            .ctx("list runs")?;
        raws.into_iter().map(RawRun::into_run).collect()
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

    // ---- rounds ----------------------------------------------------------

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

    // ---- events ----------------------------------------------------------

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

    // ---- approvals -------------------------------------------------------

    /// Insert or replace the approval of (`run`, `round`, `item_id`).
    pub fn put_approval(&mut self, approval: &Approval) -> Result<()> {
        let decision = enum_to_str(&approval.decision)?;
        write(&mut self.conn, "save approval", |tx| {
            require_run(tx, &approval.run_id)?;
            tx.execute(
                "INSERT INTO approvals
                   (run_id, round, item_id, decision, reply_override, approver, state, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                 ON CONFLICT (run_id, round, item_id) DO UPDATE SET
                   decision = excluded.decision, reply_override = excluded.reply_override,
                   approver = excluded.approver, state = excluded.state,
                   updated_at = excluded.updated_at",
                params![
                    approval.run_id,
                    approval.round,
                    approval.item_id,
                    decision,
                    approval.reply_override,
                    approval.approver,
                    approval.state.as_str(),
                    approval.updated_at.0
                ],
            )
            .ctx("upsert approval")?;
            Ok(())
        })
    }

    /// The approval of one item, if any.
    pub fn approval(&self, run: &str, round: u32, item_id: &str) -> Result<Option<Approval>> {
        let sql = format!(
            "SELECT {APPROVAL_COLUMNS} FROM approvals
             WHERE run_id = ?1 AND round = ?2 AND item_id = ?3"
        );
        let raw = self
            .conn
            .query_row(&sql, params![run, round, item_id], RawApproval::from_row)
            .optional()
            .ctx("read approval")?;
        raw.map(RawApproval::into_approval).transpose()
    }

    /// The approvals of a round, in the order they were first put.
    pub fn approvals(&self, run: &str, round: u32) -> Result<Vec<Approval>> {
        let sql = format!(
            "SELECT {APPROVAL_COLUMNS} FROM approvals
             WHERE run_id = ?1 AND round = ?2 ORDER BY rowid"
        );
        let mut stmt = self.conn.prepare(&sql).ctx("list approvals")?;
        let raws: Vec<RawApproval> = stmt
            .query_map(params![run, round], RawApproval::from_row)
            .and_then(Iterator::collect)
            .ctx("list approvals")?;
        raws.into_iter().map(RawApproval::into_approval).collect()
    }

    /// Set every still-pending approval of a round to `state` (approve all,
    /// reject all); returns how many changed.
    pub fn decide_pending(
        &mut self,
        run: &str,
        round: u32,
        state: ApprovalState,
        approver: &str,
        at: Timestamp,
    ) -> Result<usize> {
        write(&mut self.conn, "decide approvals", |tx| {
            tx.execute(
                "UPDATE approvals SET state = ?3, approver = ?4, updated_at = ?5
                 WHERE run_id = ?1 AND round = ?2 AND state = 'pending'",
                params![run, round, state.as_str(), approver, at.0],
            )
            .ctx("update approvals")
        })
    }

    /// Delete the approval of one item.
    pub fn delete_approval(&mut self, run: &str, round: u32, item_id: &str) -> Result<()> {
        write(&mut self.conn, "delete approval", |tx| {
            let n = tx
                .execute(
                    "DELETE FROM approvals WHERE run_id = ?1 AND round = ?2 AND item_id = ?3",
                    params![run, round, item_id],
                )
                .ctx("delete approval")?;
            if n == 0 {
                return Err(StoreError::ApprovalNotFound {
                    run: run.to_string(),
                    round,
                    item: item_id.to_string(),
                });
            }
            Ok(())
        })
    }

    // ---- ledger ----------------------------------------------------------

    /// Append a ledger entry; returns its sequence number (increasing in
    /// append order across every run and process).
    pub fn append_ledger(&mut self, record: &LedgerRecord) -> Result<i64> {
        let e = &record.entry;
        let decision = e.decision.as_ref().map(enum_to_str).transpose()?;
        let outcome = e.outcome.as_ref().map(enum_to_str).transpose()?;
        write(&mut self.conn, "append ledger entry", |tx| {
            require_run(tx, &record.run_id)?;
            tx.execute(
                "INSERT INTO ledger
                   (run_id, round, item_id, decision, outcome, fix_kind, commit_sha, reply_body,
                    reply_id, resolve_authorized, replied, resolved, at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
                params![
                    record.run_id,
                    e.round,
                    e.item_id,
                    decision,
                    outcome,
                    record.fix_kind,
                    e.commit,
                    record.reply_body,
                    e.reply_id,
                    e.resolve_authorized,
                    e.replied,
                    e.resolved,
                    record.at.0
                ],
            )
            .ctx("insert ledger entry")?;
            Ok(tx.last_insert_rowid())
        })
    }

    /// Every ledger record of `run`, in append order.
    pub fn ledger_records(&self, run: &str) -> Result<Vec<LedgerRecord>> {
        let sql =
            format!("SELECT {LEDGER_COLUMNS} FROM ledger l WHERE l.run_id = ?1 ORDER BY l.seq");
        self.query_ledger(&sql, [run])
    }

    /// Every ledger record of every run of `pr`, in append order.
    pub fn ledger_records_for_pr(&self, pr: &PrKey) -> Result<Vec<LedgerRecord>> {
        let sql = format!(
            "SELECT {LEDGER_COLUMNS} FROM ledger l JOIN runs r ON r.id = l.run_id
             WHERE r.forge = ?1 AND r.host = ?2 AND r.repo = ?3 AND r.number = ?4
             ORDER BY l.seq"
        );
        self.query_ledger(
            &sql,
            params![pr.forge.as_str(), pr.host, pr.repo, pr.number],
        )
    }

    /// The ledger of `pr` across its runs, in append order: what
    /// classification reads (an item's state is its latest entry).
    pub fn ledger_for_pr(&self, pr: &PrKey) -> Result<Ledger> {
        Ok(self
            .ledger_records_for_pr(pr)?
            .into_iter()
            .map(|r| r.entry)
            .collect())
    }

    /// The latest record of each item of `run`, items in the order they first
    /// appeared: what reports are built from.
    pub fn latest_entries(&self, run: &str) -> Result<Vec<LedgerRecord>> {
        let mut latest: Vec<LedgerRecord> = Vec::new();
        let mut index: std::collections::HashMap<String, usize> = Default::default();
        for record in self.ledger_records(run)? {
            match index.get(&record.entry.item_id) {
                Some(&i) => latest[i] = record,
                None => {
                    index.insert(record.entry.item_id.clone(), latest.len());
                    latest.push(record);
                }
            }
        }
        Ok(latest)
    }

    fn query_ledger(&self, sql: &str, params: impl rusqlite::Params) -> Result<Vec<LedgerRecord>> {
        let mut stmt = self.conn.prepare(sql).ctx("read ledger")?;
        let raws: Vec<RawLedger> = stmt
            .query_map(params, RawLedger::from_row)
            .and_then(Iterator::collect)
            .ctx("read ledger")?;
        raws.into_iter().map(RawLedger::into_record).collect()
    }

    // ---- locks -----------------------------------------------------------

    /// Take the lock of `pr` for `run_id`, held by process `pid` on `hostname`.
    ///
    /// A free lock is taken. A lock held by this same process and run is
    /// re-entered (refreshed). A lock whose holder is on this host and whose
    /// pid is not alive, or that is on another host and was not refreshed for
    /// the TTL, is stale: it is taken over and the previous holder reported.
    /// Any other lock is [`StoreError::Locked`].
    pub fn acquire_lock(
        &mut self,
        pr: &PrKey,
        run_id: &str,
        pid: u32,
        hostname: &str,
        now: Timestamp,
    ) -> Result<LockOutcome> {
        let probe = &self.probe;
        let ttl_ms = i64::try_from(self.lock_ttl.as_millis()).unwrap_or(i64::MAX);
        let outcome = write(&mut self.conn, "acquire lock", |tx| {
            let current = read_lock(tx, pr)?;
            let outcome = match current {
                None => LockOutcome::Acquired,
                Some(held)
                    if held.hostname == hostname && held.pid == pid && held.run_id == run_id =>
                {
                    LockOutcome::Acquired
                }
                Some(held) => {
                    let stale = if held.hostname == hostname {
                        !probe.is_alive(held.pid)
                    } else {
                        now.0.saturating_sub(held.refreshed_at.0) >= ttl_ms
                    };
                    if !stale {
                        return Err(StoreError::Locked {
                            pid: held.pid,
                            hostname: held.hostname,
                            run: held.run_id,
                            since: held.acquired_at,
                        });
                    }
                    LockOutcome::TookOverStale {
                        previous_pid: held.pid,
                        previous_hostname: held.hostname,
                        previous_run: held.run_id,
                    }
                }
            };
            tx.execute(
                "INSERT INTO locks (forge, host, repo, number, run_id, pid, hostname, acquired_at, refreshed_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8)
                 ON CONFLICT (forge, host, repo, number) DO UPDATE SET
                   run_id = excluded.run_id, pid = excluded.pid, hostname = excluded.hostname,
                   acquired_at = excluded.acquired_at, refreshed_at = excluded.refreshed_at",
                params![pr.forge.as_str(), pr.host, pr.repo, pr.number, run_id, pid, hostname, now.0],
            )
            .ctx("write lock")?;
            Ok(outcome)
        })?;
        if let LockOutcome::TookOverStale {
            previous_pid,
            previous_hostname,
            previous_run,
        } = &outcome
        {
            tracing::warn!(
                pr = %pr, run = run_id, previous_pid, previous_hostname, previous_run,
                "took over a stale lock"
            );
        }
        Ok(outcome)
    }

    /// Refresh the lock of `pr` held by `run_id` (holders on other hosts are
    /// judged stale when this is not done for the TTL). Returns whether
    /// `run_id` still held it.
    pub fn refresh_lock(&mut self, pr: &PrKey, run_id: &str, now: Timestamp) -> Result<bool> {
        write(&mut self.conn, "refresh lock", |tx| {
            let n = tx
                .execute(
                    "UPDATE locks SET refreshed_at = ?6
                     WHERE forge = ?1 AND host = ?2 AND repo = ?3 AND number = ?4 AND run_id = ?5",
                    params![
                        pr.forge.as_str(),
                        pr.host,
                        pr.repo,
                        pr.number,
                        run_id,
                        now.0
                    ],
                )
                .ctx("update lock")?;
            Ok(n > 0)
        })
    }

    /// Release the lock of `pr` if `run_id` holds it; returns whether it did.
    pub fn release_lock(&mut self, pr: &PrKey, run_id: &str) -> Result<bool> {
        write(&mut self.conn, "release lock", |tx| {
            let n = tx
                .execute(
                    "DELETE FROM locks
                     WHERE forge = ?1 AND host = ?2 AND repo = ?3 AND number = ?4 AND run_id = ?5",
                    params![pr.forge.as_str(), pr.host, pr.repo, pr.number, run_id],
                )
                .ctx("delete lock")?;
            Ok(n > 0)
        })
    }

    /// Remove the lock of `pr` whoever holds it (a person's decision, e.g.
    /// after process-id reuse); returns the removed holder.
    pub fn break_lock(&mut self, pr: &PrKey) -> Result<Option<LockInfo>> {
        write(&mut self.conn, "break lock", |tx| {
            let held = read_lock(tx, pr)?;
            tx.execute(
                "DELETE FROM locks WHERE forge = ?1 AND host = ?2 AND repo = ?3 AND number = ?4",
                params![pr.forge.as_str(), pr.host, pr.repo, pr.number],
            )
            .ctx("delete lock")?;
            Ok(held)
        })
    }

    /// Who holds the lock of `pr`, if anyone.
    pub fn lock(&self, pr: &PrKey) -> Result<Option<LockInfo>> {
        read_lock(&self.conn, pr)
    }
}

/// Run `f` in a `BEGIN IMMEDIATE` transaction and commit it; an error rolls back.
fn write<T>(
    conn: &mut Connection,
    context: &'static str,
    f: impl FnOnce(&Transaction<'_>) -> Result<T>,
) -> Result<T> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .ctx(context)?;
    let value = f(&tx)?;
    tx.commit().ctx(context)?;
    Ok(value)
}

fn run_exists(conn: &Connection, run: &str) -> Result<bool> {
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM runs WHERE id = ?1)",
        [run],
        |r| r.get(0),
    )
    .ctx("read run")
}

fn require_run(conn: &Connection, run: &str) -> Result<()> {
    if run_exists(conn, run)? {
        Ok(())
    } else {
        Err(StoreError::RunNotFound {
            run: run.to_string(),
        })
    }
}

fn read_lock(conn: &Connection, pr: &PrKey) -> Result<Option<LockInfo>> {
    conn.query_row(
        "SELECT run_id, pid, hostname, acquired_at, refreshed_at FROM locks
         WHERE forge = ?1 AND host = ?2 AND repo = ?3 AND number = ?4",
        params![pr.forge.as_str(), pr.host, pr.repo, pr.number],
        |r| {
            Ok(LockInfo {
                pr: pr.clone(),
                run_id: r.get(0)?,
                pid: r.get(1)?,
                hostname: r.get(2)?,
                acquired_at: Timestamp(r.get(3)?),
                refreshed_at: Timestamp(r.get(4)?),
            })
        },
    )
    .optional()
    .ctx("read lock")
}

/// Encode a kebab-case serde enum (Decision, Outcome) as its word.
fn enum_to_str<T: Serialize>(value: &T) -> Result<String> {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => Ok(s),
        Ok(other) => Err(StoreError::Corrupt {
            column: "enum",
            value: other.to_string(),
        }),
        Err(source) => Err(StoreError::Json {
            context: "encode enum",
            source,
        }),
    }
}

fn enum_from_str<T: DeserializeOwned>(column: &'static str, s: String) -> Result<T> {
    serde_json::from_value(serde_json::Value::String(s.clone()))
        .map_err(|_| StoreError::Corrupt { column, value: s })
}

fn decode_json(s: &str) -> Result<serde_json::Value> {
    serde_json::from_str(s).map_err(|source| StoreError::Json {
        context: "decode stored JSON",
        source,
    })
}

fn parse_forge(s: String) -> Result<ForgeKind> {
    ForgeKind::from_name(&s).ok_or(StoreError::Corrupt {
        column: "runs.forge",
        value: s,
    })
}

const RUN_COLUMNS: &str = "id, forge, host, repo, number, status, reason, created_at, updated_at";

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

impl RawRun {
    fn from_row(r: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(RawRun {
            id: r.get(0)?,
            forge: r.get(1)?,
            host: r.get(2)?,
            repo: r.get(3)?,
            number: r.get(4)?,
            status: r.get(5)?,
            reason: r.get(6)?,
            created_at: r.get(7)?,
            updated_at: r.get(8)?,
        })
    }

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

const APPROVAL_COLUMNS: &str =
    "run_id, round, item_id, decision, reply_override, approver, state, updated_at";

struct RawApproval {
    run_id: String,
    round: u32,
    item_id: String,
    decision: String,
    reply_override: Option<String>,
    approver: Option<String>,
    state: String,
    updated_at: i64,
}

impl RawApproval {
    fn from_row(r: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(RawApproval {
            run_id: r.get(0)?,
            round: r.get(1)?,
            item_id: r.get(2)?,
            decision: r.get(3)?,
            reply_override: r.get(4)?,
            approver: r.get(5)?,
            state: r.get(6)?,
            updated_at: r.get(7)?,
        })
    }

    fn into_approval(self) -> Result<Approval> {
        Ok(Approval {
            run_id: self.run_id,
            round: self.round,
            item_id: self.item_id,
            decision: enum_from_str::<Decision>("approvals.decision", self.decision)?,
            reply_override: self.reply_override,
            approver: self.approver,
            state: ApprovalState::parse(&self.state)?,
            updated_at: Timestamp(self.updated_at),
        })
    }
}

const LEDGER_COLUMNS: &str = "l.run_id, l.round, l.item_id, l.decision, l.outcome, l.fix_kind, \
     l.commit_sha, l.reply_body, l.reply_id, l.resolve_authorized, l.replied, l.resolved, l.at";

struct RawLedger {
    run_id: String,
    round: u32,
    item_id: String,
    decision: Option<String>,
    outcome: Option<String>,
    fix_kind: Option<String>,
    commit: Option<String>,
    reply_body: Option<String>,
    reply_id: Option<String>,
    resolve_authorized: bool,
    replied: bool,
    resolved: bool,
    at: i64,
}

impl RawLedger {
    fn from_row(r: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(RawLedger {
            run_id: r.get(0)?,
            round: r.get(1)?,
            item_id: r.get(2)?,
            decision: r.get(3)?,
            outcome: r.get(4)?,
            fix_kind: r.get(5)?,
            commit: r.get(6)?,
            reply_body: r.get(7)?,
            reply_id: r.get(8)?,
            resolve_authorized: r.get(9)?,
            replied: r.get(10)?,
            resolved: r.get(11)?,
            at: r.get(12)?,
        })
    }

    fn into_record(self) -> Result<LedgerRecord> {
        Ok(LedgerRecord {
            run_id: self.run_id,
            entry: LedgerEntry {
                item_id: self.item_id,
                round: self.round,
                decision: self
                    .decision
                    .map(|s| enum_from_str("ledger.decision", s))
                    .transpose()?,
                outcome: self
                    .outcome
                    .map(|s| enum_from_str("ledger.outcome", s))
                    .transpose()?,
                commit: self.commit,
                reply_id: self.reply_id,
                resolve_authorized: self.resolve_authorized,
                replied: self.replied,
                resolved: self.resolved,
            },
            fix_kind: self.fix_kind,
            reply_body: self.reply_body,
            at: Timestamp(self.at),
        })
    }
}

#[cfg(test)]
impl Store {
    /// The raw connection, for tests that poke at the schema.
    pub(crate) fn conn_for_tests(&self) -> &Connection {
        &self.conn
    }
}
