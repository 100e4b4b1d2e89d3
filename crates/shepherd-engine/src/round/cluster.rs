//! Stage 5, cluster gate and analysis (SPEC section 5): with the gate closed
//! nothing is grouped; with it open, the new items are grouped by theme and
//! proximity, and areas that keep drawing feedback after fixes are escalated
//! to a person (their items become `needs-human`) (`clusters.json`).

use shepherd_core::cluster::{
    area_feedback, escalations, evaluate_gate, group, ClusterGateInput, ClusterItem, ClusterReport,
    Grouping,
};
use shepherd_core::theme::classify_theme;
use shepherd_core::Decision;

use super::{Flow, Round, Runner};
use crate::run::error::Result;
use crate::run::options::Stage;

impl Runner {
    pub(crate) async fn stage_cluster(&mut self, round: &mut Round) -> Result<Flow> {
        if round.work.is_empty() {
            return Ok(Ok(()));
        }
        let earlier_run_fixes = self
            .store()
            .ledger_records_for_pr(&self.run.pr)?
            .iter()
            .any(|r| r.run_id != self.run.run_id && r.entry.commit.is_some());
        let input = ClusterGateInput {
            new_items: round.work.len(),
            min_volume: self.config.cluster.min_volume,
            fix_rounds_this_run_before: !self.run.fix_history.is_empty(),
            earlier_run_fixes,
            enabled: self.config.cluster.enabled,
            targeted: self.run.target.is_targeted(),
        };
        let decision = evaluate_gate(&input);
        let (grouping, escalated) = if decision.open {
            let items: Vec<ClusterItem> = round
                .work
                .iter()
                .map(|w| {
                    let theme = round
                        .triage
                        .get(w.id())
                        .and_then(|d| d.theme)
                        .unwrap_or_else(|| {
                            let body = w
                                .thread
                                .as_ref()
                                .and_then(|t| t.root())
                                .map(|c| c.body.as_str())
                                .or(w.comment.as_ref().map(|c| c.body.as_str()))
                                .unwrap_or("");
                            classify_theme(body, None)
                        });
                    ClusterItem::new(w.id(), w.classified.path.as_deref(), theme)
                })
                .collect();
            let grouping = group(&items);
            let feedback = area_feedback(&grouping, &items);
            let escalated = escalations(
                &self.run.fix_history,
                &feedback,
                self.config.cluster.escalate_after,
            );
            // The last fix round drew this feedback.
            if let Some(last) = self.run.fix_history.last_mut() {
                if last.drew_feedback.is_empty() {
                    last.drew_feedback = feedback.iter().map(|f| f.key.clone()).collect();
                }
            }
            (grouping, escalated)
        } else {
            (Grouping::default(), Vec::new())
        };

        for e in &escalated {
            for id in &e.item_ids {
                round.escalated.insert(id.clone(), e.context.clone());
                if let Some(d) = round.triage.get_mut(id) {
                    d.decision = Decision::NeedsHuman;
                    d.reasoning = format!("escalated: {}", e.context);
                    d.reply_hint = format!(
                        "Shepherd stopped patching this area: {}. A maintainer should look at the \
                         design here rather than another patch.",
                        e.context
                    );
                }
            }
        }
        let report = ClusterReport::new(round.n, decision, grouping, escalated);
        self.artifact(round, "clusters.json", &report)?;
        self.run.clusters.extend(report.clusters.iter().cloned());
        self.run
            .escalations
            .extend(report.escalations.iter().cloned());
        let summary = if !report.gate.open {
            "gate closed: no clustering".to_owned()
        } else {
            format!(
                "gate open: {} cluster(s), {} isolated, {} escalation(s)",
                report.clusters.len(),
                report.isolated.len(),
                report.escalations.len()
            )
        };
        round.clusters = Some(report);
        self.stage_done(round, Stage::Cluster, summary)?;
        Ok(Ok(()))
    }
}
