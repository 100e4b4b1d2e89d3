//! The [`Store`] itself: opening `state.db` (WAL, busy timeout, foreign
//! keys), migrating its schema, and the one write transaction every change
//! runs in. What it stores lives beside it: `runs.rs`, `rounds.rs`,
//! `events.rs`, `approvals.rs`, `ledger.rs`, `locks.rs`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, Transaction, TransactionBehavior};

use super::error::{Result, SqlContext, StoreError};
use super::liveness::{ProcessProbe, SystemProbe};
use super::schema::{current_version, MIGRATIONS};
use super::state_dir::StateDir;

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
    pub(super) conn: Connection,
    path: PathBuf,
    pub(super) probe: Box<dyn ProcessProbe>,
    pub(super) lock_ttl: Duration,
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
}

/// Run `f` in a `BEGIN IMMEDIATE` transaction and commit it; an error rolls back.
pub(super) fn write<T>(
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

#[cfg(test)]
impl Store {
    /// The raw connection, for tests that poke at the schema.
    pub(crate) fn conn_for_tests(&self) -> &Connection {
        &self.conn
    }
}
