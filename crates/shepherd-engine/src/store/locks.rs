//! The per-PR lock: one run works a PR at a time; a dead or silent holder's
//! lock is taken over.

use rusqlite::{params, Connection, OptionalExtension};

use super::error::{Result, SqlContext, StoreError};
use super::open::{write, Store};
use super::timestamp::Timestamp;
use super::types::{LockInfo, LockOutcome, PrKey};

impl Store {
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
