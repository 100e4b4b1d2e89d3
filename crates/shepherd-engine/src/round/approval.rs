//! Stage 6, approval: when an item is reply-only (`question`, `wontfix`,
//! `already-addressed`, `invalid`, `needs-human`), a person approves the
//! triage (possibly changing a decision or editing a reply) before anything
//! is posted. `--approve auto` approves at once; a TTY prompt asks; otherwise
//! the pending approvals are saved and the run pauses (exit 3) until
//! `shepherd approve` (or `reject`) and `shepherd resume`. The approved
//! decisions are what the honesty gate checks against (`approval.json`).
//!
//! `--approve label` reads the approval from the forge, every round (a CI
//! job has no database from the job that paused): the `shepherd-approved`
//! label, or a conversation comment whose first paragraph starts with
//! `/shepherd approve` ([`APPROVE_COMMAND`]). Either counts only when the
//! forge says a user who may write ([`shepherd_forge::UserAccess`]), other
//! than Shepherd's own account, gave it (for the label: its latest event
//! adding it, [`shepherd_forge::LabelEvent`]), and it approves the
//! reply-only decisions on feedback published before it (an item whose
//! latest comment was published after it waits for another approval; a
//! review comment is published when its review is submitted). A label or
//! command by anyone else approves nothing and is reported (issue 26). A command is never
//! feedback: in every mode it is answered once, by a reply carrying the
//! command's marker, with what it approved (or why not).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;
use shepherd_core::config::{ApproveConfig, ApproveMode, APPROVAL_LABEL};
use shepherd_core::marker::Marker;
use shepherd_core::model::{AuthorKind, Comment, TopLevelComment, TopLevelKind};
use shepherd_core::reply::Said;
use shepherd_core::Decision;
use shepherd_forge::Forge;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use super::item::{is_reply_only, Feedback, WorkItem};
use super::metadata::read_pr_fields;
use super::replies::holds_needs_human;
use super::runner::Books;
use super::state::{Decided, Items, Round, RoundEnd, Step, Synced, Triaged};
use crate::error::{EngineError, Result};
use crate::options::{ApprovalItem, ApprovalRequest, ApprovalVerdict, Approver, Stage};
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

/// The reply drafted for an item whose decision is `decision`: the
/// approver's text (`reply_override`), else triage's hint when the decision
/// is still triage's, else the decision's default sentence. (What a round
/// posts for a reply-only item, and what the dashboard shows as proposed.)
pub fn drafted_reply(
    reply_override: Option<&str>,
    triage: Option<&shepherd_agent::TriageDecision>,
    decision: Decision,
) -> String {
    Said::Decided {
        decision,
        approver: reply_override,
        hint: triage
            .filter(|d| d.decision == decision)
            .map(|d| d.reply_hint.as_str()),
    }
    .text()
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

/// The comment command that approves reply-only decisions (approve mode
/// `label`): the first line of a conversation comment.
pub const APPROVE_COMMAND: &str = "/shepherd approve";

/// Whether `body` is an [`APPROVE_COMMAND`]: read as Markdown (CommonMark,
/// as both forges render it), its first block is a top-level paragraph whose
/// first line is plain text `/shepherd approve`, possibly followed by words
/// of the approver's. Code (fenced, indented or inline), quotes, lists and
/// headings are text about a command, never the command: a four-space
/// indent is a code block, not a paragraph.
pub fn is_approve_command(body: &str) -> bool {
    use pulldown_cmark::{Event, Parser, Tag, TagEnd};
    let mut events = Parser::new(body);
    if !matches!(events.next(), Some(Event::Start(Tag::Paragraph))) {
        return false;
    }
    // The paragraph's first line, from plain text only: anything else
    // (inline code, emphasis, a link, HTML) stands in as a character no
    // command has.
    let mut line = String::new();
    for event in events {
        match event {
            Event::Text(text) => match text.split_once('\n') {
                Some((first, _)) => {
                    line.push_str(first);
                    break;
                }
                None => line.push_str(&text),
            },
            Event::SoftBreak | Event::HardBreak | Event::End(TagEnd::Paragraph) => break,
            _ => line.push('\u{fffc}'),
        }
    }
    let mut words = line.split_whitespace();
    words
        .next()
        .is_some_and(|w| w.eq_ignore_ascii_case("/shepherd"))
        && words
            .next()
            .is_some_and(|w| w.eq_ignore_ascii_case("approve"))
}

/// A forge timestamp (RFC 3339).
fn forge_time(text: &str) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(text, &Rfc3339).ok()
}

/// When a review comment was published, so that others could see it: its
/// review's submission when the forge gives one (GitHub: a comment drafted
/// in a pending review keeps its draft-time `createdAt`, and the review's
/// `submittedAt` is when it appeared), else its creation (GitLab creates
/// the note when a draft is published). `None` when a time is unreadable.
fn published_at(comment: &Comment) -> Option<OffsetDateTime> {
    let created = forge_time(&comment.created_at)?;
    match &comment.review_submitted_at {
        None => Some(created),
        Some(submitted) => Some(created.max(forge_time(submitted)?)),
    }
}

/// When an item last changed, as others could see it: its latest
/// published comment (a thread) or the comment itself (a top-level item;
/// a review body is dated by its submission). `None` when the forge gave
/// no readable time: then no approval from the forge covers it.
fn item_time(item: &WorkItem) -> Option<OffsetDateTime> {
    match &item.feedback {
        Feedback::Thread(t) => t
            .comments
            .iter()
            .map(published_at)
            .try_fold(None, |latest: Option<OffsetDateTime>, t| {
                t.map(|t| Some(latest.map_or(t, |l| l.max(t))))
            })
            .flatten(),
        Feedback::TopLevel(c) => forge_time(&c.created_at),
    }
}

/// The `/shepherd approve` commands of the pull request's conversation,
/// oldest first: not Shepherd's own replies, with a readable time.
fn approve_commands<'c>(
    comments: &'c [TopLevelComment],
    viewer: &'c str,
) -> impl Iterator<Item = (&'c TopLevelComment, OffsetDateTime)> + 'c {
    comments.iter().filter_map(move |c| {
        let command = c.kind == TopLevelKind::IssueComment
            && is_approve_command(&c.body)
            && Marker::find_own(&c.body, c.author.as_ref(), viewer).is_none();
        if !command {
            return None;
        }
        Some((c, forge_time(&c.created_at)?))
    })
}

/// The answer to a command: what it approved, or why nothing.
fn command_answer(
    command: &CommandSeen,
    reply_only: &[String],
    item_times: &BTreeMap<String, OffsetDateTime>,
) -> String {
    match &command.verdict {
        Err(why) => format!("This `{APPROVE_COMMAND}` approves nothing: {why}."),
        Ok(()) => {
            let n = reply_only
                .iter()
                .filter(|id| item_times.get(*id).is_some_and(|t| *t <= command.at))
                .count();
            if n == 0 {
                "Seen: no reply-only decision on feedback posted before this command was \
                 waiting, so it approves nothing."
                    .to_owned()
            } else {
                format!(
                    "Approved: this command approves Shepherd's {n} reply-only decision(s) on \
                     feedback posted before it. Feedback posted after it waits for another \
                     approval."
                )
            }
        }
    }
}

/// One command, as this round read it.
struct CommandSeen {
    id: String,
    login: String,
    at: OffsetDateTime,
    /// `Ok(())` when it approves; else why not (for the report and the
    /// command's answer).
    verdict: std::result::Result<(), String>,
}

/// The approval label on the pull request, as this round read it: who
/// added it last and when, as the forge's label events say.
struct LabelSeen {
    login: String,
    at: OffsetDateTime,
    /// `Ok(())` when it approves (feedback published before `at`); else
    /// why not.
    verdict: std::result::Result<(), String>,
}

impl LabelSeen {
    /// Why it approves nothing, when it does not.
    fn ignored(&self) -> Option<String> {
        self.verdict
            .as_ref()
            .err()
            .map(|why| format!("the label `{APPROVAL_LABEL}` was ignored: {why}"))
    }
}

/// The commands of a round in approve mode `label`, and what they approve.
struct Commands {
    seen: Vec<CommandSeen>,
}

impl Commands {
    /// The latest honoured command: what approves items older than it.
    fn latest_honoured(&self) -> Option<&CommandSeen> {
        self.seen
            .iter()
            .filter(|c| c.verdict.is_ok())
            .max_by_key(|c| c.at)
    }

    /// Why each ignored command approves nothing, one sentence each.
    fn ignored(&self) -> Vec<String> {
        self.seen
            .iter()
            .filter_map(|c| {
                c.verdict
                    .as_ref()
                    .err()
                    .map(|why| format!("`{APPROVE_COMMAND}` by @{} was ignored: {why}", c.login))
            })
            .collect()
    }
}

/// The reply drafted for item `id` of `decided`, whose decision is
/// `decision` ([`drafted_reply`]).
pub(crate) fn drafted_reply_of(decided: &Decided, id: &str, decision: Decision) -> String {
    drafted_reply(
        decided.reply_override.get(id).map(String::as_str),
        decided.triage.get(id),
        decision,
    )
}

/// The items whose approved decision differs from triage's and needs the
/// approver's reply, which is missing ([`changed_decision_needs_reply`]).
fn missing_replies(decided: &Decided) -> Vec<(String, Decision)> {
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

/// The decisions the round acts on: triage's, as a person approved (or
/// changed) them where the mode asks for it.
#[allow(clippy::too_many_arguments)] // a stage's signature says what it reads
pub(crate) async fn stage(
    books: &mut Books,
    forge: &dyn Forge,
    approve: &ApproveConfig,
    approver: Option<&Arc<dyn Approver>>,
    round: &Round,
    synced: &Synced,
    items: &Items,
    triaged: Triaged,
) -> Result<Step<Decided>> {
    let mut decided = Decided::from(triaged);
    if items.work.is_empty() {
        return Ok(Ok(decided));
    }
    let run_id = books.run.run_id.clone();
    let number = books.run.target.number;
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
    // `/shepherd approve` comments are commands, not feedback: they
    // need no approval and get an answer (a `question`: replied to,
    // never resolved), whatever triage made of them.
    let command_items: Vec<String> = items
        .work
        .iter()
        .filter(|w| {
            matches!(&w.feedback, Feedback::TopLevel(c)
                if c.kind == TopLevelKind::IssueComment && is_approve_command(&c.body))
        })
        .map(|w| w.id().to_owned())
        .collect();
    let mut decisions = decisions;
    for id in &command_items {
        decisions.insert(id.clone(), Decision::Question);
    }
    let reply_only: Vec<String> = decisions
        .iter()
        .filter(|(id, d)| is_reply_only(**d) && !command_items.contains(id))
        .map(|(id, _)| id.clone())
        .collect();
    let item_times: BTreeMap<String, OffsetDateTime> = items
        .work
        .iter()
        .filter_map(|w| Some((w.id().to_owned(), item_time(w)?)))
        .collect();
    let mode = approve.mode;
    let mode_word = mode.as_str();
    let mut end = None;
    // Why the approval label approves nothing, when it is there and
    // does not (for the stage's summary).
    let mut label_ignored: Option<String> = None;
    // Read from the forge every round: nothing of an earlier job's
    // approval survives on a CI runner.
    let commands =
        if mode == ApproveMode::Label && (!reply_only.is_empty() || !command_items.is_empty()) {
            match read_approve_commands(forge, synced).await {
                Ok(c) => Some(c),
                Err(reason) => {
                    end = Some(RoundEnd::Failed { reason });
                    None
                }
            }
        } else {
            None
        };

    if !reply_only.is_empty() && end.is_none() {
        let existing: BTreeMap<String, Approval> = books
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
                reason: "the approver rejected this round's triage; nothing was posted".to_owned(),
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
            match (mode, approver.cloned()) {
                (ApproveMode::Auto, _) => {
                    for id in &undecided {
                        books.store().put_approval(&put(
                            id,
                            ApprovalState::Approved,
                            Some("auto"),
                        ))?;
                    }
                }
                (ApproveMode::Prompt, Some(approver)) => {
                    let request =
                        approval_request(&run_id, approve, round, items, &decided, &decisions);
                    let verdict = tokio::task::spawn_blocking(move || approver.review(&request))
                        .await
                        .map_err(|e| EngineError::Task(e.to_string()))?;
                    match verdict {
                        ApprovalVerdict::Approve(changes) => {
                            for id in &undecided {
                                books.store().put_approval(&put(
                                    id,
                                    ApprovalState::Approved,
                                    Some("tty"),
                                ))?;
                            }
                            for change in changes {
                                let Some(&decision) = decisions.get(&change.item_id) else {
                                    continue;
                                };
                                books.store().put_approval(&Approval {
                                    decision: change.decision.unwrap_or(decision),
                                    reply_override: change.reply,
                                    ..put(&change.item_id, ApprovalState::Approved, Some("tty"))
                                })?;
                            }
                        }
                        ApprovalVerdict::Reject => {
                            for id in &undecided {
                                books.store().put_approval(&put(
                                    id,
                                    ApprovalState::Rejected,
                                    Some("tty"),
                                ))?;
                            }
                            end = Some(RoundEnd::Failed {
                                reason:
                                    "the approver rejected this round's triage; nothing was posted"
                                        .to_owned(),
                            });
                        }
                        ApprovalVerdict::Defer => {
                            let request = approval_request(
                                &run_id, approve, round, items, &decided, &decisions,
                            );
                            let pending = undecided
                                .iter()
                                .map(|id| put(id, ApprovalState::Pending, None));
                            end = Some(await_approver(
                                books,
                                round,
                                &request,
                                undecided.len(),
                                pending,
                            )?);
                        }
                    }
                }
                (ApproveMode::Label, _) => {
                    // The approval lives on the forge: a stateless CI
                    // run has no database from the run that paused.
                    let label = read_approval_label(forge, number, synced).await;
                    let honoured = commands.as_ref().and_then(Commands::latest_honoured);
                    match label {
                        Err(reason) => end = Some(RoundEnd::Failed { reason }),
                        Ok(label) => {
                            let label_ok = label.as_ref().filter(|l| l.verdict.is_ok());
                            let mut waiting = 0;
                            for id in &undecided {
                                // An approval covers what was published
                                // when it was given: feedback that came
                                // (or changed) after it waits.
                                let seen_by = |at: OffsetDateTime| {
                                    item_times.get(*id).is_some_and(|t| *t <= at)
                                };
                                let by = label_ok
                                    .filter(|l| seen_by(l.at))
                                    .map(|l| {
                                        format!("label {APPROVAL_LABEL} added by @{}", l.login)
                                    })
                                    .or_else(|| {
                                        honoured.filter(|c| seen_by(c.at)).map(|c| {
                                            format!("comment {APPROVE_COMMAND} by @{}", c.login)
                                        })
                                    });
                                match by {
                                    Some(by) => {
                                        books.store().put_approval(&put(
                                            id,
                                            ApprovalState::Approved,
                                            Some(&by),
                                        ))?;
                                    }
                                    None => {
                                        waiting += 1;
                                        if !existing.contains_key(*id) {
                                            books.store().put_approval(&put(
                                                id,
                                                ApprovalState::Pending,
                                                None,
                                            ))?;
                                        }
                                    }
                                }
                            }
                            if let Some(why) = label.as_ref().and_then(LabelSeen::ignored) {
                                tracing::warn!(round = round.n, "{why}");
                                label_ignored = Some(why);
                            }
                            if waiting > 0 {
                                end = Some(label_pause(
                                    &run_id,
                                    waiting,
                                    commands.as_ref(),
                                    label.as_ref(),
                                ));
                            }
                        }
                    }
                }
                (ApproveMode::Prompt, None) => {
                    // What `shepherd status` shows the approver: where
                    // each item is, what it says, the reply drafted.
                    let request =
                        approval_request(&run_id, approve, round, items, &decided, &decisions);
                    let pending = undecided
                        .iter()
                        .filter(|id| !existing.contains_key(**id))
                        .map(|id| put(id, ApprovalState::Pending, None));
                    end = Some(await_approver(
                        books,
                        round,
                        &request,
                        undecided.len(),
                        pending,
                    )?);
                }
            }
        }
    }

    // Each command's answer: what it approved, or why nothing.
    for id in &command_items {
        let answer = match (mode, commands.as_ref()) {
            (ApproveMode::Label, Some(commands)) => {
                match commands.seen.iter().find(|c| c.id == *id) {
                    Some(c) => command_answer(c, &reply_only, &item_times),
                    None => format!(
                        "This `{APPROVE_COMMAND}` approves nothing: the forge gave no \
                         readable time for it, so Shepherd cannot tell what it saw."
                    ),
                }
            }
            _ => format!(
                "This `{APPROVE_COMMAND}` approves nothing: Shepherd runs with \
                 `approve = {mode_word}` on this pull request, where comment commands \
                 do not approve."
            ),
        };
        decided.reply_override.insert(id.clone(), answer);
    }
    if let Some(commands) = &commands {
        for why in commands.ignored() {
            tracing::warn!(round = round.n, "{why}");
        }
    }

    // Approved decisions (and replies) override triage's.
    let approvals = books.store().approvals(&run_id, round.n)?;
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
        missing_replies(&decided)
    } else {
        Vec::new()
    };
    if !missing.is_empty() {
        let now = Timestamp::now();
        for a in approvals
            .iter()
            .filter(|a| missing.iter().any(|(id, _)| *id == a.item_id))
        {
            books.store().put_approval(&Approval {
                state: ApprovalState::Pending,
                approver: None,
                updated_at: now,
                ..a.clone()
            })?;
        }
        end = Some(reply_needed_pause(&run_id, &missing));
    }
    let approvals = books.store().approvals(&run_id, round.n)?;
    books.artifact(
        round,
        "approval.json",
        &ApprovalArtifact {
            needed: !reply_only.is_empty(),
            mode: mode_word,
            approvals: &approvals,
            approved: &decided.approved,
        },
    )?;
    let mut summary = if reply_only.is_empty() {
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
            None => {
                let mut said = format!(
                    "{} reply-only decision(s) approved ({mode_word})",
                    reply_only.len()
                );
                // Needs-human items with no reply to post are held for
                // the user: approved is not answered (issue 28 point 2).
                let held = reply_only
                    .iter()
                    .filter(|id| {
                        decided.approved.get(*id) == Some(&Decision::NeedsHuman)
                            && holds_needs_human(approve, &decided, id)
                    })
                    .count();
                if held > 0 {
                    said.push_str(&format!(
                        ": {held} of them needs-human, reported to you and not answered \
                         on the forge"
                    ));
                }
                said
            }
        }
    };
    if !command_items.is_empty() {
        summary.push_str(&format!(
            "; {} `{APPROVE_COMMAND}` command(s) answered",
            command_items.len()
        ));
    }
    if let Some(commands) = &commands {
        for why in commands.ignored() {
            summary.push_str("; ");
            summary.push_str(&why);
        }
    }
    if let Some(why) = &label_ignored {
        summary.push_str("; ");
        summary.push_str(why);
    }
    books.stage_done(round, Stage::Approval, summary)?;
    Ok(match end {
        Some(end) => Err(end),
        None => Ok(decided),
    })
}

/// The [`APPROVAL_LABEL`] on the pull request now, with who added it
/// and when, as the forge says (`None`: it is not there). It approves
/// only when the forge's latest event adding it names a person other
/// than Shepherd's own account who may write to the repository now
/// (issue 26.2: Shepherd once added the label itself, as a metadata
/// change a commenter asked for, and then counted it). An error
/// reading any of it fails the round closed: nothing is posted
/// without the approval seen.
async fn read_approval_label(
    forge: &dyn Forge,
    number: u64,
    synced: &Synced,
) -> std::result::Result<Option<LabelSeen>, String> {
    let cannot = |e: String| {
        format!("cannot tell whether the `{APPROVAL_LABEL}` label approves the triage: {e}")
    };
    let fields = read_pr_fields(forge, number).await.map_err(cannot)?;
    // GitHub's label names are case-insensitive (it refuses a second label
    // that differs only in case); Shepherd matches them so on both forges,
    // as the events below are matched. Only a writer's adding counts.
    if !fields
        .labels
        .iter()
        .any(|l| l.eq_ignore_ascii_case(APPROVAL_LABEL))
    {
        return Ok(None);
    }
    let events = forge
        .label_events(number)
        .await
        .map_err(|e| cannot(e.to_string()))?;
    // The latest event adding it (by the forge's times, not the list's
    // order) is the one that put it where it is now.
    let latest = events
        .iter()
        .filter(|e| e.added && e.label.eq_ignore_ascii_case(APPROVAL_LABEL))
        .filter_map(|e| Some((forge_time(&e.created_at)?, e)))
        .max_by_key(|(at, _)| *at);
    let Some((at, event)) = latest else {
        return Ok(Some(LabelSeen {
            login: "unknown".to_owned(),
            at: OffsetDateTime::UNIX_EPOCH,
            verdict: Err(
                "the forge shows no readable event adding it, so who added it \
                          and when is unknown"
                    .to_owned(),
            ),
        }));
    };
    let Some(actor) = event.actor.as_ref() else {
        return Ok(Some(LabelSeen {
            login: "ghost".to_owned(),
            at,
            verdict: Err("the account that added it was deleted".to_owned()),
        }));
    };
    let login = actor.login.clone();
    let verdict = if login.eq_ignore_ascii_case(&synced.snapshot.viewer) {
        Err(format!(
            "it was added by Shepherd's own account (@{login}); only a maintainer's label \
             approves"
        ))
    } else if actor.kind == AuthorKind::Bot {
        Err(format!("it was added by a bot (@{login})"))
    } else {
        let user = forge
            .user_access(&login)
            .await
            .map_err(|e| cannot(format!("cannot read @{login}'s access: {e}")))?;
        if user.can_write {
            Ok(())
        } else {
            Err(format!(
                "@{login}, who added it, has `{}` access to the repository; approving takes \
                 write, maintain or admin (GitLab: Developer or above)",
                user.role
            ))
        }
    };
    Ok(Some(LabelSeen { login, at, verdict }))
}

/// What a label-mode pause says: what waits, how to approve it, and
/// which commands did not count.
fn label_pause(
    run: &str,
    count: usize,
    commands: Option<&Commands>,
    label: Option<&LabelSeen>,
) -> RoundEnd {
    let mut reason = format!(
        "{count} reply-only decision(s) await approval: a maintainer adds the label \
         `{APPROVAL_LABEL}` to the pull request or comments `{APPROVE_COMMAND}`, and the \
         next run posts them (or `shepherd approve {run}` and `shepherd resume {run}` on \
         this machine)"
    );
    if let Some(label) = label {
        match &label.verdict {
            Err(why) => reason.push_str(&format!(
                ". The label `{APPROVAL_LABEL}` was ignored: {why}"
            )),
            Ok(()) => reason.push_str(&format!(
                ". The label `{APPROVAL_LABEL}` (added by @{}) approves only feedback \
                 posted before it was added; these came after it",
                label.login
            )),
        }
    }
    if let Some(commands) = commands {
        if let Some(c) = commands.latest_honoured() {
            reason.push_str(&format!(
                ". The latest `{APPROVE_COMMAND}` (by @{}) approves only feedback posted \
                 before it; these came after it",
                c.login
            ));
        }
        for why in commands.ignored() {
            reason.push_str(". ");
            reason.push_str(&why);
        }
    }
    RoundEnd::Paused {
        kind: PauseKind::Approval,
        reason,
    }
}

/// The `/shepherd approve` commands of the pull request and whether
/// each approves: its author may write to the repository, as the forge
/// says now. A forge that cannot tell fails the round closed.
async fn read_approve_commands(
    forge: &dyn Forge,
    synced: &Synced,
) -> std::result::Result<Commands, String> {
    let snapshot = &synced.snapshot;
    let mut access: BTreeMap<String, shepherd_forge::UserAccess> = BTreeMap::new();
    let mut seen = Vec::new();
    for (c, at) in approve_commands(&snapshot.comments, &snapshot.viewer) {
        let Some(author) = c.author.as_ref() else {
            seen.push(CommandSeen {
                id: c.id.clone(),
                login: "ghost".to_owned(),
                at,
                verdict: Err("its author's account was deleted".to_owned()),
            });
            continue;
        };
        let login = author.login.clone();
        // Shepherd never approves itself: not by its own account's
        // comment either (SPEC section 10).
        if login.eq_ignore_ascii_case(&snapshot.viewer) {
            seen.push(CommandSeen {
                id: c.id.clone(),
                login: login.clone(),
                at,
                verdict: Err(format!(
                    "it was written by Shepherd's own account (@{login}); only a \
                     maintainer's command approves"
                )),
            });
            continue;
        }
        let known = access.get(&login).cloned();
        let user = match known {
            Some(user) => user,
            None => {
                let user = forge.user_access(&login).await.map_err(|e| {
                    format!(
                        "cannot tell whether @{login} may approve with `{APPROVE_COMMAND}`: {e}"
                    )
                })?;
                access.insert(login.clone(), user.clone());
                user
            }
        };
        let verdict = if author.kind == shepherd_core::model::AuthorKind::Bot {
            Err("a bot's comment never approves".to_owned())
        } else if user.can_write {
            Ok(())
        } else {
            Err(format!(
                "@{login} has `{}` access to the repository; approving takes write, \
                 maintain or admin (GitLab: Developer or above)",
                user.role
            ))
        };
        seen.push(CommandSeen {
            id: c.id.clone(),
            login,
            at,
            verdict,
        });
    }
    Ok(Commands { seen })
}

/// Leave the approval to a person later: what `shepherd status` shows
/// the approver (`request`: where each item is, what it says, the reply
/// drafted) and the `pending` approvals are saved, and the round pauses
/// on the `undecided` items.
fn await_approver(
    books: &mut Books,
    round: &Round,
    request: &ApprovalRequest,
    undecided: usize,
    pending: impl Iterator<Item = Approval>,
) -> Result<RoundEnd> {
    books.artifact(round, APPROVAL_REQUEST, request)?;
    for approval in pending {
        books.store().put_approval(&approval)?;
    }
    Ok(approval_pause(&request.run_id, undecided))
}

fn approval_pause(run: &str, count: usize) -> RoundEnd {
    RoundEnd::Paused {
        kind: PauseKind::Approval,
        reason: format!(
            "{count} reply-only decision(s) await approval: run `shepherd approve {run}` (or \
             `shepherd reject {run}`), then `shepherd resume {run}`"
        ),
    }
}

fn reply_needed_pause(run: &str, missing: &[(String, Decision)]) -> RoundEnd {
    let items: Vec<String> = missing
        .iter()
        .map(|(id, d)| format!("{id} (changed to {})", d.as_str()))
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
            d.as_str(),
        ),
    }
}

fn approval_request(
    run_id: &str,
    approve: &ApproveConfig,
    round: &Round,
    items: &Items,
    decided: &Decided,
    decisions: &BTreeMap<String, Decision>,
) -> ApprovalRequest {
    ApprovalRequest {
        run_id: run_id.to_owned(),
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
                    reply: drafted_reply_of(decided, w.id(), decision),
                    needs_approval: is_reply_only(decision),
                    reply_posted: decision != Decision::NeedsHuman
                        || !holds_needs_human(approve, decided, w.id()),
                })
            })
            .collect(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;

    #[test]
    fn the_approve_command_is_the_first_line() {
        for yes in [
            "/shepherd approve",
            "  /Shepherd APPROVE  ",
            "\n/shepherd approve the wontfix too\nthanks",
            "/shepherd approve\n\n    indented code after it",
            "   /shepherd approve",
        ] {
            assert!(is_approve_command(yes), "{yes:?}");
        }
        for no in [
            "",
            "/shepherd",
            "/shepherd approved",
            "please /shepherd approve",
            "LGTM\n/shepherd approve",
            "/shepherdapprove",
            // Markdown that shows a command without being one (issue 26.4).
            "    /shepherd approve",
            "\t/shepherd approve",
            "```\n/shepherd approve\n```",
            "> /shepherd approve",
            "`/shepherd approve`",
            "`/shepherd` approve",
            "- /shepherd approve",
            "# /shepherd approve",
            "*/shepherd approve*",
        ] {
            assert!(!is_approve_command(no), "{no:?}");
        }
    }

    #[test]
    fn forge_times_compare_as_instants() {
        let github = forge_time("2024-03-01T10:00:00Z").unwrap();
        let gitlab = forge_time("2024-03-01T10:00:00.500Z").unwrap();
        let offset = forge_time("2024-03-01T11:00:01+01:00").unwrap();
        assert!(github < gitlab && gitlab < offset);
        assert!(forge_time("yesterday").is_none());
    }
}
