//! The report as Markdown (`report.md`).

use crate::cluster::ThemeSource;

use super::input::{excerpt, gate_signal_text, AttentionItem, AttentionKind};
use super::model::{Report, ThreadPath};
use super::text::{code, count, decision_word, md, outcome_word, short, where_};

fn list_paths(out: &mut String, title: &str, list: &[ThreadPath]) {
    out.push_str(&format!("- {title}: {}", list.len()));
    if list.is_empty() {
        out.push('\n');
        return;
    }
    out.push('\n');
    for t in list {
        out.push_str(&format!(
            "  - {} {}\n",
            where_(&t.path, None),
            md(&t.item_id)
        ));
    }
}

impl Report {
    /// The report as Markdown (`report.md`).
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        out.push_str(&format!("# Shepherd report: {}\n\n", md(&self.target)));
        out.push_str(&format!("- Title: {}\n", md(&self.title)));
        out.push_str(&format!("- URL: {}\n", md(&self.pr_url)));
        out.push_str(&format!("- Run: `{}`\n", self.run_id));
        out.push_str(&format!("- Status: **{}**", self.status));
        if let Some(reason) = &self.reason {
            out.push_str(&format!(" ({})", md(reason)));
        }
        out.push('\n');
        out.push_str(&format!("- Rounds: {}\n", self.rounds.len()));
        let ci = self
            .ci
            .as_ref()
            .map_or("not checked".to_owned(), |c| c.status.to_string());
        out.push_str(&format!("- CI: {ci}\n"));
        out.push_str(&format!(
            "- Review threads clear: {}\n",
            md(&self.review_threads.summary)
        ));
        if let Some(dir) = &self.worktree_kept {
            out.push_str(&format!("- Worktree kept at: {}\n", code(dir)));
        }
        for r in &self.reviewers {
            out.push_str(&format!("- Reviewer: {}\n", md(&r.describe())));
        }
        for c in &self.changes_requested {
            out.push_str(&format!("- Changes requested: {}\n", md(&c.describe())));
        }

        out.push_str("\n## Rounds\n\n");
        if self.rounds.is_empty() {
            out.push_str("No round ran.\n");
        } else {
            out.push_str("| Round | Stage | New items | Commits | Pushed | CI | Note |\n");
            out.push_str("|---|---|---|---|---|---|---|\n");
            for r in &self.rounds {
                let mut note = r.note.as_deref().map(md).unwrap_or_default();
                if r.stalled {
                    if !note.is_empty() {
                        note.push_str("; ");
                    }
                    note.push_str("stalled: same state as the previous round");
                }
                // Commits made locally and never pushed are not on the
                // forge: the table says so.
                let commits = match (r.commits, &r.pushed) {
                    (0, _) | (_, Some(_)) => r.commits.to_string(),
                    (n, None) => format!("{n} (not pushed)"),
                };
                out.push_str(&format!(
                    "| {} | {} | {} | {} | {} | {} | {} |\n",
                    r.number,
                    md(&r.ended_at()),
                    r.new_items,
                    commits,
                    r.pushed
                        .as_deref()
                        .map_or("-".to_owned(), |s| format!("`{}`", short(s))),
                    r.ci.map_or("-".to_owned(), |c| c.to_string()),
                    note
                ));
            }
        }

        let times: Vec<String> = self
            .rounds
            .iter()
            .filter_map(|r| {
                r.times_line()
                    .map(|t| format!("- Round {}: {}\n", r.number, md(&t)))
            })
            .collect();
        if !times.is_empty() {
            out.push_str("\nStage times:\n\n");
            out.push_str(&times.concat());
        }

        out.push_str("\n## Items by outcome\n\n");
        if self.outcomes.is_empty() {
            out.push_str("No item was acted on.\n");
        }
        for group in &self.outcomes {
            out.push_str(&format!(
                "### {} ({})\n\n",
                outcome_word(group.outcome),
                group.items.len()
            ));
            for item in &group.items {
                let mut facts = Vec::new();
                if let Some(d) = item.decision {
                    facts.push(decision_word(d).to_owned());
                }
                if let Some(c) = &item.commit {
                    facts.push(format!("commit `{}`", short(c)));
                }
                facts.push(
                    if item.replied {
                        "replied"
                    } else {
                        "not replied"
                    }
                    .to_owned(),
                );
                if item.resolved {
                    facts.push("resolved".to_owned());
                }
                out.push_str(&format!(
                    "- {} {}: {}\n",
                    where_(&item.path, item.line),
                    md(&item.item_id),
                    facts.join(", ")
                ));
                if let Some(url) = item.url.as_deref().filter(|u| !u.is_empty()) {
                    out.push_str(&format!("  - link: {}\n", code(url)));
                }
                if let Some(reply) = item.reply.as_deref().map(excerpt).filter(|r| !r.is_empty()) {
                    let said = if item.replied {
                        "reply"
                    } else {
                        "drafted reply, not posted"
                    };
                    out.push_str(&format!("  - {said}: \"{}\"\n", md(&reply)));
                }
            }
            out.push('\n');
        }

        out.push_str("## Threads\n\n");
        list_paths(&mut out, "Replied", &self.replied);
        list_paths(&mut out, "Resolved", &self.resolved);
        list_paths(&mut out, "Awaiting reviewer", &self.awaiting_reviewer);
        list_paths(&mut out, "Waiting for a person", &self.handed_to_a_person);
        list_paths(
            &mut out,
            "Authorized but unresolved",
            &self.authorized_unresolved,
        );
        if !self.review_threads.other_open.is_empty() {
            list_paths(
                &mut out,
                "Other unresolved threads",
                &self.review_threads.other_open,
            );
        }

        out.push_str("\n## CI\n\n");
        match &self.ci {
            None => out.push_str("CI was not checked.\n"),
            Some(v) => {
                out.push_str(&format!("Verdict: **{}**\n\n", v.status));
                for reason in &v.reasons {
                    out.push_str(&format!("- {}\n", md(reason)));
                }
            }
        }
        self.ci_failures_markdown(&mut out);

        self.clusters_markdown(&mut out);

        self.attention_markdown(&mut out);

        out.push_str("\n## Needs attention\n\n");
        if self.failures.is_empty() {
            out.push_str("No reply, resolve, push or edit failed.\n");
        }
        for f in &self.failures {
            out.push_str(&format!(
                "- {}{}: {}\n",
                f.action,
                f.item_id
                    .as_deref()
                    .map_or(String::new(), |i| format!(" {}", md(i))),
                md(&f.error)
            ));
        }

        out.push_str("\n## Agent\n\n");
        let providers = if self.agent.providers.is_empty() {
            "none".to_owned()
        } else {
            self.agent.providers.join(", ")
        };
        out.push_str(&format!(
            "- Providers: {providers}\n- Calls: {}\n- Time: {:.1}s\n",
            self.agent.calls,
            self.agent.millis as f64 / 1000.0
        ));
        out.push_str(&format!(
            "- Tokens: {}\n- Cost: {}\n",
            self.agent
                .tokens
                .map_or("not reported".to_owned(), |t| t.to_string()),
            self.agent
                .cost_usd
                .map_or("not reported".to_owned(), |c| format!("${c:.4}"))
        ));
        for r in &self.agent.roles {
            let mut line = format!(
                "- {} ({}): {} call(s), {:.1}s",
                md(&r.role),
                md(&r.providers.join(", ")),
                r.calls,
                r.millis as f64 / 1000.0
            );
            if r.input_tokens.is_some() || r.output_tokens.is_some() {
                line.push_str(&format!(
                    ", tokens {} in / {} out",
                    r.input_tokens.unwrap_or(0),
                    r.output_tokens.unwrap_or(0)
                ));
            }
            if let Some(c) = r.cost_usd {
                line.push_str(&format!(", ${c:.4}"));
            }
            line.push('\n');
            out.push_str(&line);
        }

        out.push_str(&format!("\n---\n\n{}\n", self.note));
        out
    }
}

impl Report {
    /// The sections of items reported to the user and not acted on.
    fn attention_markdown(&self, out: &mut String) {
        for (kind, title, blurb) in [
            (
                AttentionKind::NeedsYourDecision,
                "Needs your decision",
                "Shepherd could not judge these and posted nothing on them; decide them on the \
                 forge (or run with `--reply-needs-human` to post the drafted reply).",
            ),
            (
                AttentionKind::Untrusted,
                "Untrusted, not acted on",
                "Their authors are not trusted (`[trust]`): reported, not triaged, replied to or \
                 resolved.",
            ),
        ] {
            let items: Vec<&AttentionItem> =
                self.attention.iter().filter(|a| a.kind == kind).collect();
            if items.is_empty() {
                continue;
            }
            out.push_str(&format!("\n## {title} ({})\n\n{blurb}\n\n", items.len()));
            for a in items {
                let link = a
                    .url
                    .as_deref()
                    .filter(|u| !u.is_empty())
                    .map_or(String::new(), |u| format!(" {}", code(u)));
                out.push_str(&format!(
                    "- {} {}{link}\n  - \"{}\"\n  - why: {}\n",
                    where_(&a.path, a.line),
                    md(&a.item_id),
                    md(&a.excerpt),
                    md(&a.why)
                ));
            }
        }
    }

    /// The Clusters section: the gate's signals in each round it opened,
    /// the clusters (theme, area, files, items), isolated items, and the
    /// escalations with their context sentence.
    fn clusters_markdown(&self, out: &mut String) {
        out.push_str("\n## Clusters\n\n");
        if !self.cluster_rounds.is_empty() {
            out.push_str(
                "Cluster gate (rounds not listed did not open it and clustered nothing):\n\n",
            );
            for r in &self.cluster_rounds {
                // Shepherd's own words, not untrusted text: no escaping.
                let signals: Vec<String> = r.signals.iter().map(gate_signal_text).collect();
                out.push_str(&format!(
                    "- Round {}: opened by {}; {}, {}, {}\n",
                    r.round,
                    signals.join(" and "),
                    count(r.clusters, "cluster"),
                    count(r.isolated, "isolated item"),
                    count(r.escalations, "escalation")
                ));
                for (source, label) in [
                    (ThemeSource::Agent, "themes from the triage agent"),
                    (ThemeSource::Lexical, "lexical themes (no agent theme)"),
                ] {
                    let items: Vec<String> = r
                        .themes
                        .iter()
                        .filter(|t| t.source == source)
                        .map(|t| format!("{} {}", md(&t.id), t.theme))
                        .collect();
                    if !items.is_empty() {
                        out.push_str(&format!("  - {label}: {}\n", items.join(", ")));
                    }
                }
            }
            out.push('\n');
        }
        if self.clusters.is_empty() {
            out.push_str("No cluster was formed.\n");
        } else {
            out.push_str("Clusters formed (one fix each, unless escalated):\n\n");
        }
        for c in &self.clusters {
            let escalated = self
                .escalations
                .iter()
                .any(|e| c.item_ids.iter().all(|id| e.item_ids.contains(id)));
            out.push_str(&format!(
                "- {} in {}: {} on {}{}\n",
                c.theme,
                code(&c.area),
                count(c.item_ids.len(), "item"),
                count(c.files.len(), "file"),
                if escalated {
                    " (escalated: not patched)"
                } else {
                    ""
                }
            ));
            let files: Vec<String> = c.files.iter().map(|f| code(f)).collect();
            out.push_str(&format!("  - files: {}\n", files.join(", ")));
            let items: Vec<String> = c.item_ids.iter().map(|i| md(i)).collect();
            out.push_str(&format!("  - items: {}\n", items.join(", ")));
            out.push_str(&format!("  - hypothesis: {}\n", md(&c.hypothesis)));
        }
        if !self.escalations.is_empty() {
            out.push_str(
                "\nEscalated to a person (no longer patched; the items are left open as \
                 needs-human):\n\n",
            );
            for e in &self.escalations {
                let items: Vec<String> = e.item_ids.iter().map(|i| md(i)).collect();
                out.push_str(&format!(
                    "- {} (after {}): {}\n",
                    md(&e.context),
                    count(e.rounds as usize, "fix round"),
                    items.join(", ")
                ));
            }
        }
    }
}
