//! The pages, rendered with [`maud`]: every interpolated string is escaped,
//! so forge text (comment bodies, titles, paths, logins) is always shown as
//! text. The only HTML not built here is the report's, made by
//! [`crate::markdown::to_html`], which turns raw HTML into text too. Links
//! to the forge are kept only when they are `http(s)://`.

use std::path::Path;

use maud::{html, Markup, PreEscaped, DOCTYPE};
use serde::Serialize;
use shepherd_core::classify::Class;
use shepherd_core::{Decision, ForgeKind, Outcome};
use shepherd_engine::{RunStatus, Timestamp};

use crate::comment;
use crate::view::{ApprovalRow, ItemView, RunRow, RunView};

const STATUSES: [RunStatus; 7] = [
    RunStatus::Running,
    RunStatus::Paused,
    RunStatus::Converged,
    RunStatus::HandedOff,
    RunStatus::Failed,
    RunStatus::Exhausted,
    RunStatus::Interrupted,
];

/// The serde word of a kebab-case enum (`review-thread`, `needs-human`).
fn word<T: Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// `url` when it is a web link, else nothing (no `javascript:` from the forge).
fn web_link(url: &str) -> Option<&str> {
    (url.starts_with("https://") || url.starts_with("http://")).then_some(url)
}

fn duration(millis: i64) -> String {
    let millis = millis.max(0);
    if millis < 1000 {
        format!("{millis} ms")
    } else if millis < 60_000 {
        format!("{:.1} s", millis as f64 / 1000.0)
    } else {
        format!("{}m {:02}s", millis / 60_000, (millis % 60_000) / 1000)
    }
}

fn time(t: Timestamp) -> String {
    let text = t.to_string(); // 2024-05-01T12:00:00.000Z
    text.get(..19).unwrap_or(&text).replace('T', " ") + " UTC"
}

fn layout(title: &str, body: Markup) -> String {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · Shepherd" }
                link rel="stylesheet" href="/assets/app.css";
                script src="/assets/app.js" defer {}
            }
            body {
                header { a.brand href="/" { "Shepherd" } span.sub { "local dashboard" } }
                main { (body) }
            }
        }
    }
    .into_string()
}

fn status_badge(status: RunStatus) -> Markup {
    html! { span class={ "badge status-" (status.as_str()) } data-status=(status.as_str()) { (status.as_str()) } }
}

/// An error page.
pub fn error_page(status: axum::http::StatusCode, message: &str) -> String {
    layout(
        status.as_str(),
        html! {
            h1 { (status.as_str()) " " (status.canonical_reason().unwrap_or("")) }
            p.error { (message) }
            p { a href="/" { "All runs" } }
        },
    )
}

/// The list of runs, with the repository and status filter.
pub fn runs_page(
    rows: &[RunRow],
    repo: Option<&str>,
    status: Option<&str>,
    state_root: &Path,
) -> String {
    let query = format!(
        "/?repo={}&status={}",
        urlencode(repo.unwrap_or("")),
        urlencode(status.unwrap_or(""))
    );
    layout(
        "Runs",
        html! {
            h1 { "Runs" }
            p.muted { "State: " code { (state_root.display()) } }
            form.filter method="get" action="/" {
                label { "Repository " input type="text" name="repo" value=(repo.unwrap_or("")) placeholder="owner/name"; }
                label { "Status "
                    select name="status" {
                        option value="" { "any" }
                        @for s in STATUSES {
                            option value=(s.as_str()) selected[status == Some(s.as_str())] { (s.as_str()) }
                        }
                    }
                }
                button type="submit" { "Filter" }
            }
            div #live data-live-src=(query) data-events="/events" {
                (runs_table(rows))
            }
        },
    )
}

fn runs_table(rows: &[RunRow]) -> Markup {
    html! {
        @if rows.is_empty() {
            p.muted { "No runs." }
        } @else {
            div.wide { table.runs.stack {
                thead { tr { th { "Run" } th { "Pull request" } th { "Status" } th { "Rounds" } th { "CI" } th { "Started" } th { "Ended" } th { "Why" } } }
                tbody {
                    @for row in rows {
                        @let ended = row.status != RunStatus::Running;
                        tr data-run=(row.run.id) {
                            td data-label="Run" { a href={ "/runs/" (row.run.id) } { code { (row.run.id) } } }
                            td data-label="Pull request" {
                                (pr_link(&row.run.pr.to_string(), row.file.as_ref().map(|f| f.pr_url.as_str())))
                                @if let Some(f) = &row.file { @if !f.pr_title.is_empty() { br; span.muted { (f.pr_title) } } }
                            }
                            td data-label="Status" { (status_badge(row.status)) }
                            td data-label="Rounds" { (row.rounds) }
                            td data-label="CI" { (row.file.as_ref().and_then(|f| f.last_ci.as_ref()).map_or("-", |c| c.status.as_str())) }
                            td data-label="Started" { (time(row.run.created_at)) }
                            td data-label="Ended" { @if ended { (time(row.run.updated_at)) } @else { "-" } }
                            td.reason data-label="Why" { (comment::inline_code(row.run.reason.as_deref().unwrap_or(""))) }
                        }
                    }
                } }
            }
        }
    }
}

fn pr_link(label: &str, url: Option<&str>) -> Markup {
    html! {
        @match url.and_then(web_link) {
            Some(u) => a href=(u) rel="noreferrer noopener" target="_blank" { (label) },
            None => span { (label) },
        }
    }
}

fn urlencode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~' | b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The page of one run. `message` (a refused action) is shown at the top.
pub fn run_page(run: &RunView, secret: &str, message: Option<&str>) -> String {
    let id = &run.run.id;
    let file = run.file.as_ref();
    layout(
        &format!("Run {id}"),
        html! {
            p { a href="/" { "← all runs" } }
            h1 { "Run " code { (id) } }
            @if let Some(m) = message { p.error role="alert" { (m) } }
            @if let (None, Some(why)) = (message, &run.resume_failure) {
                p.error #resume-failure role="alert" { "The last resume failed:\n" (why) }
            }
            p {
                (pr_link(&run.run.pr.to_string(), file.map(|f| f.pr_url.as_str())))
                @if let Some(f) = file { " " span.title { (f.pr_title) } }
            }
            @if run.awaits_approval() { (approval_table(run, secret)) }
            div #live data-live-src={ "/runs/" (id) "/live" } data-events={ "/runs/" (id) "/events" } {
                (live_body(run, secret))
            }
        },
    )
}

fn actions(run: &RunView, secret: &str) -> Markup {
    let id = &run.run.id;
    html! {
        @if run.status == RunStatus::Paused || run.resumable() {
            div.actions {
                @if run.resumable() && !run.awaits_approval() {
                    form method="post" action={ "/runs/" (id) "/resume" } {
                        input type="hidden" name="csrf" value=(secret);
                        button #resume type="submit" { "Resume the run" }
                    }
                }
                @if run.status == RunStatus::Paused {
                    form method="post" action={ "/runs/" (id) "/reject" } {
                        input type="hidden" name="csrf" value=(secret);
                        button #reject.danger type="submit" {
                            @if run.awaits_approval() { "Reject the triage" } @else { "Abandon the run" }
                        }
                    }
                }
            }
        }
    }
}

/// The approval table: its rows, those that wait for the approver first
/// (each keeps its form index), editable when `open`.
fn approval_rows(run: &RunView, open: bool) -> Markup {
    let mut rows: Vec<(usize, &ApprovalRow)> = run.approvals.iter().enumerate().collect();
    rows.sort_by_key(|(_, row)| !row.pending());
    let forge = run.run.pr.forge;
    html! {
        div.wide {
            table.approval.stack {
                thead { tr { th { "Item" } th { "Comment" } th { "Triage" } th { "Decision" } th { "Reply" } } }
                tbody {
                    @for (i, row) in rows {
                        (approval_row(i, row, open, forge))
                    }
                }
            }
        }
    }
}

/// The approval form of a run that awaits it (above the live part: an
/// update never touches what the approver types).
fn approval_table(run: &RunView, secret: &str) -> Markup {
    let id = &run.run.id;
    html! {
        section #approval {
            h2 { "Approval" @if let Some(n) = run.approval_round { " (round " (n) ")" } }
            p { "Reply-only decisions wait for you. Change a decision or edit a reply, then approve; items you leave as they are are approved as triaged. The honesty gate checks the approved decisions before anything is posted." }
            form method="post" action={ "/runs/" (id) "/approve" } {
                input type="hidden" name="csrf" value=(secret);
                (approval_rows(run, true))
                div.actions {
                    button #approve-resume type="submit" name="action" value="approve-resume" { "Approve and resume" }
                    button #approve type="submit" name="action" value="approve" { "Approve only" }
                }
            }
        }
    }
}

/// The approvals of a run that no longer waits for them, folded.
fn decided_approvals(run: &RunView) -> Markup {
    html! {
        @if !run.approvals.is_empty() && !run.awaits_approval() {
            details #approval data-key="approval" {
                summary { "Approval" @if let Some(n) = run.approval_round { " (round " (n) ")" } ": decided" }
                (approval_rows(run, false))
            }
        }
    }
}

fn approval_row(i: usize, row: &ApprovalRow, open: bool, forge: ForgeKind) -> Markup {
    let editable = open && row.pending();
    let state = row
        .approval
        .as_ref()
        .map_or("not reply-only".to_owned(), |a| a.state.as_str().to_owned());
    html! {
        tr.item data-item=(row.item_id) data-pending[row.pending()] {
            td data-label="Item" {
                @if let Some(item) = &row.item { (location(item, forge)) } @else { code { (row.item_id) } }
                br; span.muted { (state) }
            }
            td.excerpt data-label="Comment" { @if let Some(item) = &row.item { (comment::cell(item, forge)) } }
            td data-label="Triage" {
                strong { (row.triage.decision.as_str()) }
                p.reasoning { (comment::inline_code(&row.triage.reasoning)) }
            }
            td data-label="Decision" {
                @if editable {
                    input type="hidden" name={ "item-" (i) } value=(row.item_id);
                    input type="hidden" name={ "orig-decision-" (i) } value=(row.decision.as_str());
                    select name={ "decision-" (i) } aria-label="decision" {
                        @for d in Decision::ALL {
                            option value=(d.as_str()) selected[d == row.decision] { (d.as_str()) }
                        }
                    }
                } @else {
                    (row.decision.as_str())
                }
            }
            td data-label="Reply" {
                @if editable {
                    input type="hidden" name={ "orig-reply-" (i) } value=(row.reply);
                    textarea name={ "reply-" (i) } rows="4" aria-label="reply" { (row.reply) }
                    @if row.held { p.muted.held { "Held for you, not posted, unless you edit it (or the run sets " code { "approve.reply_needs_human" } ")." } }
                } @else {
                    pre.reply { (row.reply) }
                    @if row.held { p.muted.held { "Held for you, not posted." } }
                }
            }
        }
    }
}

fn location(item: &ItemView, forge: ForgeKind) -> Markup {
    let c = &item.classified;
    let place = match (&c.path, c.line) {
        (Some(p), Some(l)) => format!("{p}:{l}"),
        (Some(p), None) => p.clone(),
        _ => comment::kind_label(c.kind, forge),
    };
    html! {
        @match c.url.as_deref().and_then(web_link) {
            Some(u) => a.loc href=(u) rel="noreferrer noopener" target="_blank" title=(item.id) { (place) },
            None => span.loc title=(item.id) { (place) },
        }
        @if c.outdated { " " span.badge { "outdated" } }
        @if item.untrusted { " " span.badge.warn title="opened by someone outside [trust]: reported, not acted on" { "untrusted" } }
    }
}

/// The live part of a run's page (what live updates replace): its
/// status, resume and reject buttons, rounds, threads, clusters, decided
/// approvals, report. A run that is neither running nor waiting for its
/// approval opens on its outcome: the report comes right after the status.
pub fn run_live(run: &RunView, secret: &str) -> Markup {
    html! { div #live { (live_body(run, secret)) } }
}

fn live_body(run: &RunView, secret: &str) -> Markup {
    let id = &run.run.id;
    let file = run.file.as_ref();
    let outcome_first = run.status != RunStatus::Running && !run.awaits_approval();
    html! {
        (actions(run, secret))
        dl.summary {
            dt { "Status" } dd #status { (status_badge(run.status)) }
            @if let Some(r) = &run.run.reason { dt { "Why" } dd #reason { (comment::inline_code(r)) } }
            @if let Some(p) = file.and_then(|f| f.pause) { dt { "Paused for" } dd { (word(&p)) } }
            dt { "Rounds" } dd { (run.rounds.len()) @if let Some(f) = file { " of at most " (f.round_limit) } }
            dt { "CI" } dd { (file.and_then(|f| f.last_ci.as_ref()).map_or("-", |c| c.status.as_str())) }
            dt { "Started" } dd { (time(run.run.created_at)) }
            dt { "Last change" } dd { (time(run.run.updated_at)) }
            @if let Some(f) = file {
                dt { "Agent" } dd { (f.agent.calls) " call(s), " (duration(f.agent.millis as i64))
                    @if let Some(t) = f.agent.tokens { ", " (t) " tokens" } }
            }
        }
        @if let Some(f) = file { @if !f.failures.is_empty() {
            section #failures {
                h2 { "Reply failures needing attention" }
                ul { @for x in &f.failures { li { (x.action) @if let Some(i) = &x.item_id { " " code { (i) } } ": " (x.error) } } }
            }
        } }
        @if outcome_first { (report(run)) }
        section #timeline {
            h2 { "Rounds" }
            @for r in &run.rounds {
                @let n = r.round.number;
                details.round data-key={ "round-" (n) } open[r.round.ended_at.is_none() || n as usize == run.rounds.len()] {
                    summary {
                        "Round " (n) ": " (r.round.stage)
                        @match r.round.ended_at {
                            Some(end) => { " · " (duration(end.as_millis() - r.round.started_at.as_millis())) },
                            None => { " · in progress" },
                        }
                    }
                    div.wide { table.stages {
                        thead { tr { th { "Stage" } th { "Took" } th { "Summary" } } }
                        tbody {
                            @for s in &r.stages {
                                tr data-stage=(s.stage) {
                                    td { @match &s.artifact {
                                        Some(a) => a href={ "/runs/" (id) "/files/rounds/" (n) "/" (a) } { (s.stage) },
                                        None => (s.stage),
                                    } }
                                    td.num { (duration(s.millis)) }
                                    td { (s.summary) }
                                }
                            }
                        }
                    } }
                    @if !r.events.is_empty() {
                        ul.events { @for e in &r.events { li { (time(e.at)) " " (e.kind) " " code { (e.payload.to_string()) } } } }
                    }
                    p.files { "Artifacts: "
                        @for f in &r.files { a href={ "/runs/" (id) "/files/rounds/" (n) "/" (f) } { (f) } " " }
                    }
                }
            }
        }
        (threads_table(run))
        @if let Some(f) = file {
            @if !f.clusters.is_empty() || !f.escalations.is_empty() {
                section #clusters {
                    h2 { "Clusters" }
                    @for c in &f.clusters {
                        details.cluster data-key={ "cluster-" (c.area) "-" (c.theme.as_str()) } {
                            summary { (c.theme.as_str()) " in " code { (c.area) } ": " (c.item_ids.len()) " item(s)" }
                            p { (c.hypothesis) }
                            pre.brief { (shepherd_core::cluster::render_brief(c, None)) }
                        }
                    }
                    @if !f.escalations.is_empty() {
                        h3 { "Escalations" }
                        ul { @for e in &f.escalations { li { (e.key.theme.as_str()) " in " code { (e.key.area) } " after " (e.rounds) " round(s): " (e.context) } } }
                    }
                }
            }
        }
        (decided_approvals(run))
        @if !outcome_first { (report(run)) }
        section #files {
            h2 { "Run directory" }
            p { @for f in &run.files { a href={ "/runs/" (id) "/files/" (f) } { (f) } " " } }
        }
    }
}

fn report(run: &RunView) -> Markup {
    html! {
        @if let Some(md) = &run.report_md {
            section #report {
                h2 { "Report" }
                div.report { (PreEscaped(crate::markdown::to_html(md))) }
            }
        }
    }
}

/// Where an item stands, for the order of the threads table: waiting for
/// the approver's decision, still open (not answered, or held for a
/// person), or done (replied or resolved, or waiting for the reviewer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Standing {
    Decision,
    Open,
    Done,
}

impl Standing {
    fn of(run: &RunView, item: &ItemView) -> Standing {
        let pending = run
            .approvals
            .iter()
            .any(|a| a.item_id == item.id && a.pending());
        let latest = item.latest().map(|r| &r.entry);
        if pending {
            Standing::Decision
        } else if latest.is_some_and(|e| e.replied || e.resolved)
            || item.classified.class == Class::AwaitingReviewer
        {
            Standing::Done
        } else {
            Standing::Open
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Standing::Decision => "decision",
            Standing::Open => "open",
            Standing::Done => "done",
        }
    }
}

fn threads_table(run: &RunView) -> Markup {
    let mut items: Vec<(Standing, &ItemView)> = run
        .items
        .iter()
        .map(|item| (Standing::of(run, item), item))
        .collect();
    items.sort_by_key(|(standing, _)| *standing);
    html! {
        section #threads {
            h2 { "Threads" }
            @if run.items.is_empty() {
                p.muted { "No threads seen yet." }
            } @else {
                div.wide { table.threads.stack {
                    thead { tr { th { "Item" } th { "Comment" } th { "Decision" } th { "Reply" } th { "Outcome" } th { "Commit" } th { "State" } } }
                    tbody {
                        @for (standing, item) in items {
                            (thread_row(run, item, standing))
                        }
                    }
                } }
            }
        }
    }
}

fn thread_row(run: &RunView, item: &ItemView, standing: Standing) -> Markup {
    let forge = run.run.pr.forge;
    let latest = item.latest();
    let approval = run.approvals.iter().find(|a| a.item_id == item.id);
    let decision = latest
        .and_then(|r| r.entry.decision)
        .or(approval.map(|a| a.decision))
        .or(item.triage.as_ref().map(|t| t.decision));
    let (reply, posted) = match latest.and_then(|r| r.reply_body.clone()) {
        Some(body) => (Some(body), latest.is_some_and(|r| r.entry.replied)),
        None => (approval.map(|a| a.reply.clone()), false),
    };
    let held = reply.is_some() && !posted && approval.is_some_and(|a| a.held);
    let mut state = vec![item.classified.class.as_str().to_owned()];
    if let Some(r) = latest {
        if r.entry.replied {
            state.push("replied".into());
        }
        if r.entry.resolved {
            state.push("resolved".into());
        } else if r.entry.resolve_authorized {
            state.push("resolve authorized".into());
        }
    }
    html! {
        tr.item id={ "item-" (item.id) } data-item=(item.id) data-standing=(standing.as_str()) {
            td data-label="Item" { (location(item, forge)) }
            td.excerpt data-label="Comment" { (comment::cell(item, forge)) }
            td data-label="Decision" { (decision.map_or("-", Decision::as_str)) }
            td data-label="Reply" {
                @if let Some(text) = &reply {
                    pre.reply { (text) }
                    span.muted {
                        @if posted { "posted" } @else if held { "held for you: not posted" } @else { "not posted yet" }
                    }
                }
            }
            td data-label="Outcome" { (latest.and_then(|r| r.entry.outcome).map_or("-", Outcome::as_str)) }
            td data-label="Commit" { @if let Some(c) = latest.and_then(|r| r.entry.commit.as_deref()) { code { (c.get(..10).unwrap_or(c)) } } }
            td data-label="State" {
                (state.join(", "))
                @if !item.history.is_empty() {
                    details.history data-key={ "ledger-" (item.id) } {
                        summary { "ledger (" (item.history.len()) ")" }
                        div.wide { table {
                            tr { th { "When" } th { "Run" } th { "Round" } th { "Decision" } th { "Outcome" } th { "Replied" } th { "Resolved" } }
                            @for h in &item.history {
                                tr {
                                    td { (time(h.at)) }
                                    td { code { (h.run_id) } }
                                    td { (h.entry.round) }
                                    td { (h.entry.decision.map_or("", Decision::as_str)) }
                                    td { (h.entry.outcome.map_or("", Outcome::as_str)) }
                                    td { (if h.entry.replied { "yes" } else { "no" }) }
                                    td { (if h.entry.resolved { "yes" } else if h.entry.resolve_authorized { "authorized" } else { "no" }) }
                                }
                            }
                        } }
                    }
                }
            }
        }
    }
}

/// One file of a run directory, as text.
pub fn file_page(run_id: &str, rel: &str, text: &str) -> String {
    layout(
        rel,
        html! {
            p { a href={ "/runs/" (run_id) } { "← run " (run_id) } }
            h1 { code { (rel) } }
            pre.file { (text) }
        },
    )
}
