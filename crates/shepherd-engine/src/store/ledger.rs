//! The ledger: what was decided, fixed, replied and resolved for each item,
//! append-only; an item's state is its latest entry.

use rusqlite::params;
use shepherd_core::{Ledger, LedgerEntry};

use super::error::{Result, SqlContext};
use super::open::{write, Store};
use super::rows::{enum_from_str, enum_to_str, query_rows, row};
use super::runs::require_run;
use super::timestamp::Timestamp;
use super::types::{LedgerRecord, PrKey};

impl Store {
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
        query_rows(&self.conn, "read ledger", sql, params, RawLedger::from_row)?
            .into_iter()
            .map(RawLedger::into_record)
            .collect()
    }
}

const LEDGER_COLUMNS: &str = "l.run_id, l.round, l.item_id, l.decision, l.outcome, l.fix_kind, \
     l.commit_sha, l.reply_body, l.reply_id, l.resolve_authorized, l.replied, l.resolved, l.at";

row! {
    /// A `ledger` row as stored.
    struct RawLedger {
        run_id: String,
        round: u32,
        item_id: String,
        decision: Option<String>,
        outcome: Option<String>,
        fix_kind: Option<String>,
        commit_sha: Option<String>,
        reply_body: Option<String>,
        reply_id: Option<String>,
        resolve_authorized: bool,
        replied: bool,
        resolved: bool,
        at: i64,
    }
}

impl RawLedger {
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
                commit: self.commit_sha,
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
