//! Building the report from what the run recorded.

use std::collections::{BTreeMap, BTreeSet};

use crate::classify::{Class, Classified, ItemKind};
use crate::converge::MERGEABILITY_NOTE;
use crate::reviewers::ReviewerOnHead;

use super::input::{AttentionKind, ItemRecord, ReportInput, ThreadsLook};
use super::model::{thread_paths, OutcomeGroup, Report, ReportItem, ThreadPath, ThreadsClear};
use super::text::OUTCOME_ORDER;

fn sort_key(path: &Option<String>, line: Option<u32>, id: &str) -> (String, u32, String) {
    (
        path.clone().unwrap_or_default(),
        line.unwrap_or(0),
        id.to_owned(),
    )
}

/// Build the report from its input (see the module docs).
pub fn build(input: &ReportInput) -> Report {
    let mut items: Vec<&ItemRecord> = input.items.iter().collect();
    items.sort_by(|a, b| {
        sort_key(&a.path, a.line, &a.entry.item_id).cmp(&sort_key(
            &b.path,
            b.line,
            &b.entry.item_id,
        ))
    });

    let mut groups: BTreeMap<usize, Vec<ReportItem>> = BTreeMap::new();
    for record in &items {
        let e = &record.entry;
        let index = match e.outcome {
            Some(o) => OUTCOME_ORDER
                .iter()
                .position(|x| *x == o)
                .unwrap_or(OUTCOME_ORDER.len()),
            None => OUTCOME_ORDER.len(),
        };
        groups.entry(index).or_default().push(ReportItem {
            item_id: e.item_id.clone(),
            path: record.path.clone(),
            line: record.line,
            decision: e.decision,
            commit: e.commit.clone(),
            replied: e.replied,
            resolved: e.resolved,
            url: record.url.clone(),
            reply: record.reply.clone(),
        });
    }
    let outcomes = groups
        .into_iter()
        .map(|(index, items)| OutcomeGroup {
            outcome: OUTCOME_ORDER.get(index).copied(),
            items,
        })
        .collect();

    let tp = |r: &ItemRecord| ThreadPath {
        item_id: r.entry.item_id.clone(),
        path: r.path.clone(),
    };
    let replied = thread_paths(
        items
            .iter()
            .filter(|r| r.entry.replied)
            .map(|r| tp(r))
            .collect(),
    );
    let resolved = thread_paths(
        items
            .iter()
            .filter(|r| r.entry.resolved)
            .map(|r| tp(r))
            .collect(),
    );
    let authorized_unresolved = thread_paths(
        items
            .iter()
            .filter(|r| r.entry.resolve_authorized && r.entry.replied && !r.entry.resolved)
            .map(|r| tp(r))
            .collect(),
    );
    let classified_path = |c: &Classified| ThreadPath {
        item_id: c.item_id.clone(),
        path: c.path.clone(),
    };
    let awaiting = |person: bool| {
        thread_paths(
            input
                .open_items
                .iter()
                .filter(|c| c.class == Class::AwaitingReviewer && c.waits_for_a_person == person)
                .map(classified_path)
                .collect(),
        )
    };
    let awaiting_reviewer = awaiting(false);
    let handed_to_a_person = awaiting(true);

    let review_threads = threads_clear(input, &items);
    let mut clusters = input.clusters.clone();
    clusters.sort_by(|a, b| (a.theme, &a.area, &a.item_ids).cmp(&(b.theme, &b.area, &b.item_ids)));
    clusters.dedup();
    let mut escalations = input.escalations.clone();
    escalations.sort_by(|a, b| (&a.key, &a.item_ids).cmp(&(&b.key, &b.item_ids)));
    escalations.dedup();
    let mut failures = input.failures.clone();
    failures.sort();
    failures.dedup();
    let mut rounds = input.rounds.clone();
    rounds.sort_by_key(|r| r.number);
    let stalled_rounds = rounds
        .iter()
        .filter(|r| r.stalled)
        .map(|r| r.number)
        .collect();
    let mut agent = input.agent.clone();
    agent.providers.sort();
    agent.providers.dedup();

    Report {
        version: Report::VERSION,
        run_id: input.run_id.clone(),
        target: input.target.clone(),
        pr_url: input.pr_url.clone(),
        title: input.title.clone(),
        status: input.status.clone(),
        converged: input.status == "converged",
        reason: input.reason.clone(),
        rounds,
        outcomes,
        replied,
        resolved,
        awaiting_reviewer,
        handed_to_a_person,
        authorized_unresolved,
        ci: input.ci.clone(),
        ci_failures: Vec::new(),
        review_threads,
        cluster_rounds: Vec::new(),
        clusters,
        escalations,
        failures,
        agent,
        worktree_kept: input.worktree_kept.clone(),
        stalled_rounds,
        reviewers: input.reviewers.clone(),
        changes_requested: input.changes_requested.clone(),
        attention: {
            let mut list = input.attention.clone();
            list.sort();
            list.dedup();
            list
        },
        note: MERGEABILITY_NOTE.to_owned(),
    }
}

/// Whether the review threads are clear, from the run's last look at them
/// and what the run did after it (a reply posted after the look leaves the
/// thread open; a resolve that succeeded after it closes it).
fn threads_clear(input: &ReportInput, items: &[&ItemRecord]) -> ThreadsClear {
    let Some(look) = &input.threads_look else {
        return ThreadsClear {
            known: false,
            clear: false,
            deliberately_open: Vec::new(),
            other_open: Vec::new(),
            not_handled: Vec::new(),
            needs_your_decision: Vec::new(),
            replied_since: Vec::new(),
            resolve_pending: Vec::new(),
            as_of: None,
            summary: "unknown: the run stopped before it looked at the review threads".to_owned(),
        };
    };
    let after_look = |id: &str| {
        items
            .iter()
            .find(|r| r.entry.item_id == id && r.entry.round >= look.round)
            .map(|r| &r.entry)
    };
    let path = |c: &Classified| ThreadPath {
        item_id: c.item_id.clone(),
        path: c.path.clone(),
    };
    let mut deliberately_open = Vec::new();
    let mut not_handled = Vec::new();
    let mut needs_your_decision = Vec::new();
    let held = |id: &str| {
        input
            .attention
            .iter()
            .any(|a| a.kind == AttentionKind::NeedsYourDecision && a.item_id == id)
    };
    let mut replied_since = Vec::new();
    let mut resolve_pending = Vec::new();
    for c in input
        .open_items
        .iter()
        .filter(|c| c.kind == ItemKind::ReviewThread)
    {
        let since = after_look(&c.item_id);
        if since.is_some_and(|e| e.resolved) {
            // Resolved by this run after the look: the forge said so.
            continue;
        }
        match c.class {
            Class::AwaitingReviewer => deliberately_open.push(path(c)),
            Class::ResolveRetry => resolve_pending.push(path(c)),
            Class::New if since.is_some_and(|e| e.replied) => {
                if since.is_some_and(|e| e.resolve_authorized) {
                    resolve_pending.push(path(c));
                } else {
                    replied_since.push(path(c));
                }
            }
            Class::New if held(&c.item_id) => needs_your_decision.push(path(c)),
            Class::New => not_handled.push(path(c)),
        }
    }
    let deliberately_open = thread_paths(deliberately_open);
    let not_handled = thread_paths(not_handled);
    let needs_your_decision = thread_paths(needs_your_decision);
    let replied_since = thread_paths(replied_since);
    let resolve_pending = thread_paths(resolve_pending);
    let other_open = thread_paths(
        not_handled
            .iter()
            .chain(&needs_your_decision)
            .chain(&replied_since)
            .chain(&resolve_pending)
            .cloned()
            .collect(),
    );
    let clear = deliberately_open.is_empty() && other_open.is_empty();
    let mut summary = if clear {
        "yes".to_owned()
    } else {
        let mut parts = Vec::new();
        for (list, what) in [
            (&deliberately_open, "deliberately-open thread"),
            (&not_handled, "thread not handled yet"),
            (&needs_your_decision, "thread needing your decision"),
            (&replied_since, "thread replied to, left open"),
            (&resolve_pending, "thread whose resolve has not succeeded"),
        ] {
            if list.is_empty() {
                continue;
            }
            let paths: BTreeSet<&str> = list.iter().filter_map(|t| t.path.as_deref()).collect();
            let noun = if list.len() == 1 {
                what.to_owned()
            } else {
                what.replacen("thread", "threads", 1)
            };
            parts.push(format!(
                "{} {noun}: {}",
                list.len(),
                paths.into_iter().collect::<Vec<_>>().join(", ")
            ));
        }
        format!("no, {}", parts.join("; "))
    };
    // "yes" only when every awaited reviewer reviewed the final head.
    let unreviewed: Vec<String> = input
        .reviewers
        .iter()
        .filter_map(ReviewerOnHead::statement)
        .collect();
    let clear = clear && unreviewed.is_empty();
    if !unreviewed.is_empty() {
        summary = if summary == "yes" {
            format!("not known: {}", unreviewed.join("; "))
        } else {
            format!("{summary}; {}", unreviewed.join("; "))
        };
    }
    if look.stage != ThreadsLook::CONVERGE {
        summary.push_str(&format!(
            " (as seen at the {} stage of round {}; not looked at since)",
            look.stage, look.round
        ));
    }
    ThreadsClear {
        known: true,
        clear,
        deliberately_open,
        other_open,
        not_handled,
        needs_your_decision,
        replied_since,
        resolve_pending,
        as_of: Some(look.clone()),
        summary,
    }
}
