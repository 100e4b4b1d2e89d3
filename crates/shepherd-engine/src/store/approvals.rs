//! Approvals: a person's decision on one item of a round.

use rusqlite::{params, OptionalExtension};
use shepherd_core::Decision;

use super::error::{Result, SqlContext, StoreError};
use super::open::{write, Store};
use super::rows::{enum_from_str, enum_to_str, query_rows, row};
use super::runs::require_run;
use super::timestamp::Timestamp;
use super::types::{Approval, ApprovalState};

impl Store {
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
        let raws = query_rows(
            &self.conn,
            "list approvals",
            &sql,
            params![run, round],
            RawApproval::from_row,
        )?;
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
}

const APPROVAL_COLUMNS: &str =
    "run_id, round, item_id, decision, reply_override, approver, state, updated_at";

row! {
    /// An `approvals` row as stored.
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
}

impl RawApproval {
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
