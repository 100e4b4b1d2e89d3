//! Stage 6, approval: when an item is reply-only (`question`, `wontfix`,
//! `already-addressed`, `invalid`, `needs-human`), a person approves the
//! triage (possibly changing a decision or editing a reply) before anything
//! is posted. `--approve auto` approves at once; a TTY prompt asks; otherwise
//! the pending approvals are saved and the run pauses (exit 3) until
//! `shepherd approve` (or `reject`) and `shepherd resume`. The approved
//! decisions are what the honesty gate checks against (`approval.json`).

use std::collections::BTreeMap;

use serde::Serialize;
use shepherd_core::config::{ApproveMode, APPROVAL_LABEL};
use shepherd_core::Decision;

use super::item::is_reply_only;
use super::runner::Runner;
use super::state::{Decided, Items, Round, RoundEnd, Step, Triaged};
use crate::error::{EngineError, Result};
use crate::options::{ApprovalItem, ApprovalRequest, ApprovalVerdict, Stage};
use crate::run_dir::PauseKind;
use crate::store::{Approval, ApprovalState, Timestamp};

#[derive(Serialize)]
struct ApprovalArtifact<'a> {
    needed: bool,
    mode: &'a str,
    approvals: &'a [Approval],
    approved: &'a BTreeMap<String, Decision>,
}

/// The round artifact of the approval a paused round awaits
/// ([`ApprovalRequest`]): what `shepherd status` shows of each item.
pub(crate) const APPROVAL_REQUEST: &str = "approval-request.json";

/// The reply drafted for a decision when triage gave no hint.
pub(crate) fn default_reply(decision: Decision) -> &'static str {
    match decision {
        Decision::Question => "Thanks for the question; see the reasoning above.",
        Decision::Wontfix => "Reviewed: we decided not to make this change.",
        Decision::AlreadyAddressed => "Reviewed: the code already does this.",
        Decision::Invalid => "Reviewed: this does not apply to the code as it is.",
        Decision::NeedsHuman => {
            "This needs a maintainer's decision; Shepherd did not change anything for it."
        }
        Decision::CodeChange | Decision::MetadataChange => "Done.",
    }
}

/// The reply drafted for an item whose decision is `decision`: the
/// approver's text (`reply_override`), else triage's hint when the decision
/// is still triage's, else the decision's default sentence. (What a round
/// posts for a reply-only item, and what the dashboard shows as proposed.)
pub fn drafted_reply(
    reply_override: Option<&str>,
    triage: Option<&shepherd_agent::TriageDecision>,
    decision: Decision,
) -> String {
    if let Some(text) = reply_override {
        return text.to_owned();
    }
    match triage {
        Some(d) if d.decision == decision && !d.reply_hint.trim().is_empty() => {
            d.reply_hint.clone()
        }
        _ => default_reply(decision).to_owned(),
    }
}

/// Whether an approver who changed `triaged` into `approved` must also give
/// the reply: triage's hint was written for the old decision (a builtin
/// "needs a maintainer's decision" must never be posted, let alone resolve,
/// as an `invalid`), and a default sentence cannot cite the evidence or the
/// harm the new decision asserts. A change to `needs-human` keeps its
/// default (it claims nothing about the code); a change to a fix decision
/// gets the fixer's reply.
pub fn changed_decision_needs_reply(triaged: Decision, approved: Decision) -> bool {
    approved != triaged && is_reply_only(approved) && approved != Decision::NeedsHuman
}

impl Runner {
    /// The reply drafted for an item: the approver's text, else triage's
    /// hint when the decision is still triage's, else the decision's default.
    pub(crate) fn drafted_reply(&self, decided: &Decided, id: &str, decision: Decision) -> String {
        drafted_reply(
            decided.reply_override.get(id).map(String::as_str),
            decided.triage.get(id),
            decision,
        )
    }

    /// The items whose approved decision differs from triage's and needs the
    /// approver's reply, which is missing ([`changed_decision_needs_reply`]).
    fn missing_replies(&self, decided: &Decided) -> Vec<(String, Decision)> {
        decided
            .approved
            .iter()
            .filter(|(id, approved)| {
                decided.triage.get(*id).is_some_and(|t| {
                    changed_decision_needs_reply(t.decision, **approved)
                        && !decided.reply_override.contains_key(*id)
                })
            })
            .map(|(id, d)| (id.clone(), *d))
            .collect()
    }

    pub(crate) async fn stage_approval(
        &mut self,
        round: &Round,
        items: &Items,
        triaged: Triaged,
    ) -> Result<Step<Decided>> {
        let mut decided = Decided::from(triaged);
        if items.work.is_empty() {
            return Ok(Ok(decided));
        }
        let run_id = self.run.run_id.clone();
        let decisions: BTreeMap<String, Decision> = items
            .work
            .iter()
            .filter_map(|w| {
                decided
                    .triage
                    .get(w.id())
                    .map(|d| (w.id().to_owned(), d.decision))
            })
            .collect();
        let reply_only: Vec<String> = decisions
            .iter()
            .filter(|(_, d)| is_reply_only(**d))
            .map(|(id, _)| id.clone())
            .collect();
        let mode = self.config.approve.mode;
        let mode_word = mode.as_str();
        let mut end = None;

        if !reply_only.is_empty() {
            let existing: BTreeMap<String, Approval> = self
                .store()
                .approvals(&run_id, round.n)?
                .into_iter()
                .map(|a| (a.item_id.clone(), a))
                .collect();
            let undecided: Vec<&String> = reply_only
                .iter()
                .filter(|id| {
                    existing
                        .get(*id)
                        .is_none_or(|a| a.state == ApprovalState::Pending)
                })
                .collect();
            let rejected = existing
                .values()
                .any(|a| a.state == ApprovalState::Rejected);
            if rejected {
                end = Some(RoundEnd::Failed {
                    reason: "the approver rejected this round's triage; nothing was posted"
                        .to_owned(),
                });
            } else if !undecided.is_empty() {
                let now = Timestamp::now();
                let put = |id: &str, state: ApprovalState, approver: Option<&str>| Approval {
                    run_id: run_id.clone(),
                    round: round.n,
                    item_id: id.to_owned(),
                    decision: decisions[id],
                    reply_override: existing.get(id).and_then(|a| a.reply_override.clone()),
                    approver: approver.map(str::to_owned),
                    state,
                    updated_at: now,
                };
                match (mode, self.opts.approver.clone()) {
                    (ApproveMode::Auto, _) => {
                        for id in &undecided {
                            self.store().put_approval(&put(
                                id,
                                ApprovalState::Approved,
                                Some("auto"),
                            ))?;
                        }
                    }
                    (ApproveMode::Prompt, Some(approver)) => {
                        let request = self.approval_request(round, items, &decided, &decisions);
                        let verdict =
                            tokio::task::spawn_blocking(move || approver.review(&request))
                                .await
                                .map_err(|e| EngineError::Task(e.to_string()))?;
                        match verdict {
                            ApprovalVerdict::Approve(changes) => {
                                for id in &undecided {
                                    self.store().put_approval(&put(
                                        id,
                                        ApprovalState::Approved,
                                        Some("tty"),
                                    ))?;
                                }
                                for change in changes {
                                    let Some(&decision) = decisions.get(&change.item_id) else {
                                        continue;
                                    };
                                    self.store().put_approval(&Approval {
                                        decision: change.decision.unwrap_or(decision),
                                        reply_override: change.reply,
                                        ..put(&change.item_id, ApprovalState::Approved, Some("tty"))
                                    })?;
                                }
                            }
                            ApprovalVerdict::Reject => {
                                for id in &undecided {
                                    self.store().put_approval(&put(
                                        id,
                                        ApprovalState::Rejected,
                                        Some("tty"),
                                    ))?;
                                }
                                end = Some(RoundEnd::Failed {
                                    reason: "the approver rejected this round's triage; nothing was posted"
                                        .to_owned(),
                                });
                            }
                            ApprovalVerdict::Defer => {
                                let request =
                                    self.approval_request(round, items, &decided, &decisions);
                                self.artifact(round, APPROVAL_REQUEST, &request)?;
                                for id in &undecided {
                                    self.store().put_approval(&put(
                                        id,
                                        ApprovalState::Pending,
                                        None,
                                    ))?;
                                }
                                end = Some(self.approval_pause(undecided.len()));
                            }
                        }
                    }
                    (ApproveMode::Label, _) => {
                        // The approval lives on the forge: a stateless CI
                        // run has no database from the run that paused.
                        let present = self.approval_label_present().await;
                        if let Err(reason) = &present {
                            end = Some(RoundEnd::Failed {
                                reason: reason.clone(),
                            });
                        } else if present == Ok(true) {
                            for id in &undecided {
                                self.store().put_approval(&put(
                                    id,
                                    ApprovalState::Approved,
                                    Some(&format!("label {APPROVAL_LABEL}")),
                                ))?;
                            }
                        } else {
                            for id in &undecided {
                                if !existing.contains_key(*id) {
                                    self.store().put_approval(&put(
                                        id,
                                        ApprovalState::Pending,
                                        None,
                                    ))?;
                                }
                            }
                            end = Some(self.label_pause(undecided.len()));
                        }
                    }
                    (ApproveMode::Prompt, None) => {
                        // What `shepherd status` shows the approver: where
                        // each item is, what it says, the reply drafted.
                        let request = self.approval_request(round, items, &decided, &decisions);
                        self.artifact(round, APPROVAL_REQUEST, &request)?;
                        for id in &undecided {
                            if !existing.contains_key(*id) {
                                self.store().put_approval(&put(
                                    id,
                                    ApprovalState::Pending,
                                    None,
                                ))?;
                            }
                        }
                        end = Some(self.approval_pause(undecided.len()));
                    }
                }
            }
        }

        // Approved decisions (and replies) override triage's.
        let approvals = self.store().approvals(&run_id, round.n)?;
        decided.approved = decisions;
        for a in &approvals {
            if a.state == ApprovalState::Approved && decided.approved.contains_key(&a.item_id) {
                decided.approved.insert(a.item_id.clone(), a.decision);
                if let Some(text) = a.reply_override.clone().filter(|t| !t.trim().is_empty()) {
                    decided.reply_override.insert(a.item_id.clone(), text);
                }
            }
        }
        // A changed decision without a reply that fits it: nothing is
        // posted; the item goes back to the approver for its reply.
        let missing = if end.is_none() {
            self.missing_replies(&decided)
        } else {
            Vec::new()
        };
        if !missing.is_empty() {
            let now = Timestamp::now();
            for a in approvals
                .iter()
                .filter(|a| missing.iter().any(|(id, _)| *id == a.item_id))
            {
                self.store().put_approval(&Approval {
                    state: ApprovalState::Pending,
                    approver: None,
                    updated_at: now,
                    ..a.clone()
                })?;
            }
            end = Some(self.reply_needed_pause(&missing));
        }
        let approvals = self.store().approvals(&run_id, round.n)?;
        self.artifact(
            round,
            "approval.json",
            &ApprovalArtifact {
                needed: !reply_only.is_empty(),
                mode: mode_word,
                approvals: &approvals,
                approved: &decided.approved,
            },
        )?;
        let summary = if reply_only.is_empty() {
            "nothing to approve".to_owned()
        } else {
            match &end {
                Some(RoundEnd::Paused { .. }) if !missing.is_empty() => format!(
                    "{} changed decision(s) need a reply before anything is posted",
                    missing.len()
                ),
                Some(RoundEnd::Paused { .. }) => {
                    format!("{} reply-only decision(s) await approval", reply_only.len())
                }
                Some(_) => "rejected".to_owned(),
                None => format!(
                    "{} reply-only decision(s) approved ({mode_word})",
                    reply_only.len()
                ),
            }
        };
        self.stage_done(round, Stage::Approval, summary)?;
        Ok(match end {
            Some(end) => Err(end),
            None => Ok(decided),
        })
    }

    /// Whether the pull request carries [`APPROVAL_LABEL`] now, as the
    /// forge says (an error reading it fails the round closed: nothing is
    /// posted without the approval seen).
    async fn approval_label_present(&self) -> std::result::Result<bool, String> {
        let fields = self.read_pr_fields().await.map_err(|e| {
            format!("cannot tell whether the `{APPROVAL_LABEL}` label approves the triage: {e}")
        })?;
        Ok(fields.labels.iter().any(|l| l == APPROVAL_LABEL))
    }

    fn label_pause(&self, count: usize) -> RoundEnd {
        let run = &self.run.run_id;
        RoundEnd::Paused {
            kind: PauseKind::Approval,
            reason: format!(
                "{count} reply-only decision(s) await approval: a maintainer adds the label \
                 `{APPROVAL_LABEL}` to the pull request and the next run posts them (or \
                 `shepherd approve {run}` and `shepherd resume {run}` on this machine)"
            ),
        }
    }

    fn approval_pause(&self, count: usize) -> RoundEnd {
        let run = &self.run.run_id;
        RoundEnd::Paused {
            kind: PauseKind::Approval,
            reason: format!(
                "{count} reply-only decision(s) await approval: run `shepherd approve {run}` (or \
                 `shepherd reject {run}`), then `shepherd resume {run}`"
            ),
        }
    }

    fn reply_needed_pause(&self, missing: &[(String, Decision)]) -> RoundEnd {
        let run = &self.run.run_id;
        let items: Vec<String> = missing
            .iter()
            .map(|(id, d)| format!("{id} (changed to {})", super::item::decision_name(*d)))
            .collect();
        let (first, d) = &missing[0];
        RoundEnd::Paused {
            kind: PauseKind::Approval,
            reason: format!(
                "a changed decision needs a reply that fits it, and {} had none: {}; nothing \
                 was posted. Give it with `shepherd approve {run} --thread {first} --decision \
                 {} --reply TEXT`, then `shepherd resume {run}`",
                if missing.len() == 1 {
                    "this item"
                } else {
                    "these items"
                },
                items.join(", "),
                super::item::decision_name(*d),
            ),
        }
    }

    fn approval_request(
        &self,
        round: &Round,
        items: &Items,
        decided: &Decided,
        decisions: &BTreeMap<String, Decision>,
    ) -> ApprovalRequest {
        ApprovalRequest {
            run_id: self.run.run_id.clone(),
            round: round.n,
            items: items
                .work
                .iter()
                .filter_map(|w| {
                    let d = decided.triage.get(w.id())?;
                    let decision = *decisions.get(w.id())?;
                    Some(ApprovalItem {
                        item_id: w.id().to_owned(),
                        path: w.classified.path.clone(),
                        line: w.classified.line,
                        author: w.classified.author.as_ref().map(|a| a.login.clone()),
                        url: w.classified.url.clone(),
                        excerpt: w
                            .attention(
                                shepherd_core::report::AttentionKind::NeedsYourDecision,
                                String::new(),
                            )
                            .excerpt,
                        decision,
                        reasoning: d.reasoning.clone(),
                        reply: self.drafted_reply(decided, w.id(), decision),
                        needs_approval: is_reply_only(decision),
                    })
                })
                .collect(),
        }
    }
}
