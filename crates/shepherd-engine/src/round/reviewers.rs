//! Stage 15b, reviewers: after CI, wait until the reviewers the run waits
//! for have seen the head (issue 27), so that a bot slower than CI has its
//! feedback handled instead of arriving after the run said "converged".
//!
//! Whom: `[reviewers] wait_for`, else the review bots of `[trust] bots`
//! that put a status or check run of their own on the head (they say when
//! they are done: [`default_wait_for`]), never Shepherd's own account. Each one's state on the head comes from the forge's structured
//! data ([`shepherd_core::reviewers`]): reviewed, pending, declined,
//! not-seen. The wait polls on the CI wait's schedule
//! ([`ci_poll_schedule`]) until every one is settled or
//! `settle_timeout_secs` has passed since the stage began.
//!
//! Once per head, and across runs (a stateless CI job asks the forge, not
//! its memory): with `request = true`, review is re-requested from awaited
//! reviewers that are not requested and have not reviewed; a configured
//! trigger comment is posted for a reviewer that has shown nothing after a
//! grace period (a quarter of the timeout, at most two minutes), never for
//! one that declined (a retry spends the quota it waits for: CodeRabbit
//! counts review attempts). The trigger carries a marker naming the head:
//! the next run sees it was posted, and classification never takes it for
//! feedback.

use std::time::Duration;

use serde::Serialize;
use shepherd_core::ci::ci_poll_schedule;
use shepherd_core::ci::{CiStatus, CiVerdict};
use shepherd_core::classify::{Class, Classified, ItemKind};
use shepherd_core::config::{Config, ReviewersConfig};
use shepherd_core::reviewers::{
    changes_requested_on_older_heads, default_wait_for, is_own_trigger, same_login, state_of,
    trigger_body, Activity, Awaiting, ChangesRequested, ReviewerOnHead, ReviewerState,
};
use shepherd_forge::Forge;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;
use tokio::time::Instant;

use super::pr_state::short;
use super::runner::Books;
use super::state::{Round, Synced};
use super::workspace::Workspace;
use crate::error::Result;
use crate::options::{ProgressEvent, Stage};

/// What the wait reads and may write.
pub(crate) struct Wait<'a> {
    pub(crate) forge: &'a dyn Forge,
    pub(crate) config: &'a ReviewersConfig,
    /// The PR.
    pub(crate) number: u64,
    /// The head the round ends at.
    pub(crate) head: &'a str,
    /// When the head was pushed, by the local clock: used only when the
    /// forge does not say ([`Activity::pushed_at`](shepherd_core::reviewers::Activity)).
    pub(crate) pushed_at: OffsetDateTime,
    /// Shepherd's own account.
    pub(crate) viewer: &'a str,
    /// The review bots the default `wait_for` is chosen from (`[trust] bots`).
    pub(crate) known_bots: &'a [String],
    /// The longest wait between two looks.
    pub(crate) poll: Duration,
    /// The stale change requests the previous round named.
    pub(crate) named_before: &'a [ChangesRequested],
}

/// What the wait found (`reviewers.json`).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Settled {
    /// The head.
    pub(crate) head: String,
    /// Whom it waited for.
    pub(crate) wait_for: Vec<String>,
    /// Whether that list was the default (bots that reviewed earlier heads).
    pub(crate) by_default: bool,
    /// Each one's state when the wait ended.
    pub(crate) reviewers: Vec<ReviewerOnHead>,
    /// Reviewers a trigger comment was posted for.
    pub(crate) triggered: Vec<String>,
    /// Reviewers review was requested from.
    pub(crate) requested: Vec<String>,
    /// The people whose latest review requests changes on an older head,
    /// as the last look saw them.
    pub(crate) changes_requested: Vec<ChangesRequested>,
    /// Looks at the forge.
    pub(crate) polls: u32,
    /// How long it waited, in ms.
    pub(crate) waited_ms: u64,
    /// Reads or writes that failed (the wait goes on without them).
    pub(crate) errors: Vec<String>,
}

/// The reviewer wait of a round while it lasts
/// (`rounds/<n>/reviewers-wait.json`, written whenever whom it waits for
/// changes; the wait's end writes `reviewers.json`): what `shepherd status`
/// says of a run in progress.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ReviewerWait {
    /// The round.
    pub round: u32,
    /// The head waited on.
    pub head: String,
    /// Whom the wait is for now (empty while the first look is made).
    pub waiting_for: Vec<String>,
    /// When the wait began (RFC 3339, UTC, with milliseconds).
    pub since: String,
}

/// What `rounds/<n>/` says of a reviewer wait while it lasts.
const WAIT_FILE: &str = "reviewers-wait.json";

/// The reviewer wait of round `round` of the run in `run_dir`, while it
/// lasts: `None` once the wait ended (`reviewers.json` written) or when it
/// never began.
pub fn reviewer_wait(run_dir: &crate::run_dir::RunDir, round: u32) -> Option<ReviewerWait> {
    let dir = run_dir.round(round);
    if dir.join("reviewers.json").exists() {
        return None;
    }
    crate::run_dir::read_json(&dir.join(WAIT_FILE)).ok()
}

/// Wait for the reviewers (see the module docs); `waiting` hears what is
/// said of the wait and whom it waits for whenever that changes.
pub(crate) async fn wait(w: Wait<'_>, mut waiting: impl FnMut(String, Vec<String>)) -> Settled {
    let timeout = w.config.settle_timeout();
    let started = Instant::now();
    let deadline = started + timeout;
    let grace = (timeout / 4).min(Duration::from_secs(120));
    let short = short(w.head);
    let configured: Option<Vec<String>> = w.config.wait_for.as_ref().map(|list| {
        list.iter()
            .filter(|l| !same_login(l, w.viewer))
            .cloned()
            .collect()
    });
    let mut settled = Settled {
        head: w.head.to_owned(),
        wait_for: configured.clone().unwrap_or_default(),
        by_default: configured.is_none(),
        reviewers: Vec::new(),
        triggered: Vec::new(),
        requested: Vec::new(),
        changes_requested: Vec::new(),
        polls: 0,
        waited_ms: 0,
        errors: Vec::new(),
    };
    let mut wait_for = configured;
    let mut attempt = 0u32;
    let mut last_said: Option<String> = None;
    loop {
        settled.polls += 1;
        let over = Instant::now() >= deadline;
        let activity = match w.forge.reviewer_activity(w.number, w.head).await {
            Ok(activity) => Some(activity),
            Err(err) => {
                settled
                    .errors
                    .push(format!("reading the reviews of {short}: {err}"));
                None
            }
        };
        if let Some(activity) = &activity {
            let logins = wait_for.get_or_insert_with(|| {
                default_wait_for(activity, w.known_bots)
                    .into_iter()
                    .filter(|l| !same_login(l, w.viewer))
                    .collect()
            });
            settled.wait_for.clone_from(logins);
            settled.changes_requested = stale_changes(activity, w.head, w.viewer, w.named_before);
            let look = activity.look(w.head, w.pushed_at);
            settled.reviewers = logins
                .iter()
                .map(|login| ReviewerOnHead {
                    login: login.clone(),
                    head: w.head.to_owned(),
                    state: state_of(login, &look, over),
                    waited_secs: timeout.as_secs(),
                })
                .collect();
            if w.config.request && settled.polls == 1 {
                let ask: Vec<String> = settled
                    .reviewers
                    .iter()
                    .filter(|r| {
                        matches!(
                            r.state,
                            ReviewerState::Pending {
                                awaiting: Awaiting::Nothing
                            }
                        )
                    })
                    .map(|r| r.login.clone())
                    .collect();
                if !ask.is_empty() {
                    match w.forge.request_review(w.number, &ask).await {
                        Ok(()) => settled.requested = ask,
                        Err(err) => settled
                            .errors
                            .push(format!("requesting review from {}: {err}", ask.join(", "))),
                    }
                }
            }
            if !over && started.elapsed() >= grace {
                for r in &settled.reviewers {
                    let nothing = matches!(
                        r.state,
                        ReviewerState::Pending {
                            awaiting: Awaiting::Nothing
                        }
                    );
                    let Some(text) = w.config.trigger_for(&r.login) else {
                        continue;
                    };
                    let posted = settled.triggered.contains(&r.login)
                        || activity.notes.iter().any(|n| {
                            n.body.starts_with(text.trim_end())
                                && is_own_trigger(&n.body, Some(&n.author), w.viewer, Some(w.head))
                        });
                    if !nothing || posted {
                        continue;
                    }
                    match w
                        .forge
                        .post_issue_comment(w.number, &trigger_body(text, w.head))
                        .await
                    {
                        Ok(_) => settled.triggered.push(r.login.clone()),
                        Err(err) => settled
                            .errors
                            .push(format!("asking {} to review: {err}", r.login)),
                    }
                }
            }
        }
        let all_settled =
            activity.is_some() && settled.reviewers.iter().all(|r| r.state.is_settled());
        // Nobody to wait for is known yet (the default list comes from the
        // first read) and the forge cannot be read: waiting would only
        // spend the timeout.
        let nobody = activity.is_none() && wait_for.as_ref().is_none_or(Vec::is_empty);
        if over || all_settled || nobody {
            if activity.is_none() {
                // Nothing could be read: none of them was seen.
                settled.reviewers = settled
                    .wait_for
                    .iter()
                    .map(|login| ReviewerOnHead {
                        login: login.clone(),
                        head: w.head.to_owned(),
                        state: ReviewerState::NotSeen { started: false },
                        waited_secs: timeout.as_secs(),
                    })
                    .collect();
            }
            settled.waited_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            return settled;
        }
        let names: Vec<&str> = settled
            .reviewers
            .iter()
            .filter(|r| !r.state.is_settled())
            .map(|r| r.login.as_str())
            .collect();
        let said = if names.is_empty() {
            format!("reviews of {short}: reading them")
        } else {
            format!("reviews of {short}: waiting for {}", names.join(", "))
        };
        if last_said.as_deref() != Some(said.as_str()) {
            waiting(
                said.clone(),
                names.iter().map(|n| (*n).to_owned()).collect(),
            );
            last_said = Some(said);
        }
        let remaining = deadline.saturating_duration_since(Instant::now());
        let delay = ci_poll_schedule(attempt, w.poll).min(remaining.max(Duration::from_millis(10)));
        attempt += 1;
        tokio::time::sleep(delay).await;
    }
}

/// Wait for the awaited reviewers' review of the head the round ends at,
/// when its CI passed (a run whose CI failed does not converge this round
/// anyway, and the next round sees what reviewers said).
#[allow(clippy::too_many_arguments)] // a stage's signature says what it reads
pub(crate) async fn stage(
    books: &mut Books,
    forge: &dyn Forge,
    config: &Config,
    poll: Duration,
    round: &Round,
    synced: &Synced,
    ws: &Workspace,
    pushed: Option<&str>,
    ci: &CiVerdict,
) -> Result<(Vec<ReviewerOnHead>, Vec<ChangesRequested>)> {
    let head = pushed.map_or_else(|| synced.start_sha.clone(), str::to_owned);
    let short_head = short(&head);
    if ci.status != CiStatus::Pass {
        books.run.last_reviewers.clear();
        let number = books.run.target.number;
        let changes = match forge.reviewer_activity(number, &head).await {
            Ok(activity) => stale_changes(
                &activity,
                &head,
                &synced.snapshot.viewer,
                &books.run.last_changes_requested,
            ),
            Err(err) => {
                tracing::warn!(%err, "reading the reviews of {short_head}");
                Vec::new()
            }
        };
        books.stage_done(
            round,
            Stage::Reviewers,
            format!("not waited for: CI is {}", ci.status),
        )?;
        return Ok((Vec::new(), changes));
    }
    // When the head was pushed: its committer date (Shepherd commits just
    // before it pushes; a person's head is no newer than that).
    let sha = head.clone();
    let pushed_at = ws
        .git(move |wt| wt.commit_time(&sha))
        .await
        .ok()
        .and_then(|t| OffsetDateTime::parse(&t, &Rfc3339).ok())
        .unwrap_or_else(OffsetDateTime::now_utc);
    let n = round.n;
    let since = crate::store::Timestamp::now().to_string();
    let settled = {
        let books = &*books;
        wait(
            Wait {
                forge,
                config: &config.reviewers,
                number: books.run.target.number,
                head: &head,
                pushed_at,
                viewer: &synced.snapshot.viewer,
                known_bots: &config.trust.bots,
                poll,
                named_before: &books.run.last_changes_requested,
            },
            |what, waiting_for| {
                let now = ReviewerWait {
                    round: n,
                    head: head.clone(),
                    waiting_for,
                    since: since.clone(),
                };
                if let Err(err) = books.artifact(round, WAIT_FILE, &now) {
                    tracing::warn!(%err, "writing {WAIT_FILE}");
                }
                books.emit(ProgressEvent::Waiting { round: n, what });
            },
        )
        .await
    };
    for err in &settled.errors {
        tracing::warn!(%err, "reviewer wait");
    }
    books.artifact(round, "reviewers.json", &settled)?;
    let states: Vec<(String, &str)> = settled
        .reviewers
        .iter()
        .map(|r| (r.login.clone(), r.state.as_str()))
        .collect();
    books.event(
        Some(round.n),
        "reviewers",
        serde_json::json!({
            "head": settled.head,
            "states": states,
            "triggered": settled.triggered,
            "requested": settled.requested,
        }),
    )?;
    let summary = if settled.reviewers.is_empty() {
        format!("none awaited on {short_head}")
    } else {
        let each: Vec<String> = settled
            .reviewers
            .iter()
            .map(|r| format!("{} {}", r.login, r.state.as_str()))
            .collect();
        format!("{} on {short_head}", each.join(", "))
    };
    books.run.last_reviewers.clone_from(&settled.reviewers);
    books.stage_done(round, Stage::Reviewers, summary)?;
    Ok((settled.reviewers, settled.changes_requested))
}

/// The people other than Shepherd whose latest review in `activity`
/// requests changes on a head other than `head`; and those `named_before`
/// (by the previous round) whose review was requested then and still is,
/// with no review since: GitLab puts a reviewer asked again back to
/// `unreviewed`, which takes their change request out of its reviewer
/// states (GitHub keeps the review, so it is still in `activity`).
fn stale_changes(
    activity: &Activity,
    head: &str,
    viewer: &str,
    named_before: &[ChangesRequested],
) -> Vec<ChangesRequested> {
    let mut changes =
        changes_requested_on_older_heads(&activity.reviews, head, &activity.requested);
    for earlier in named_before.iter().filter(|c| c.requested) {
        let login = earlier.login.as_str();
        let named = changes.iter().any(|c| same_login(&c.login, login));
        let reviewed = activity
            .reviews
            .iter()
            .any(|r| same_login(&r.author, login));
        let asked = activity.requested.iter().any(|l| same_login(l, login));
        if asked && !named && !reviewed {
            changes.push(ChangesRequested {
                head: head.to_owned(),
                open_threads: None,
                requested: true,
                rerequested: false,
                ..earlier.clone()
            });
        }
    }
    changes.retain(|c| !same_login(&c.login, viewer));
    changes
}

/// After the post-CI look classified the PR's feedback (`classified`):
/// counts each stale change request's open threads (threads of theirs that
/// wait for Shepherd), and with `request = true` asks again for the review
/// of each one whose threads are all handled. Once per head, as the wait's
/// requests: one already requested on the forge is not asked again (a
/// later run asks the forge, not its memory).
pub(crate) async fn settle_change_requests(
    forge: &dyn Forge,
    config: &ReviewersConfig,
    number: u64,
    classified: &[Classified],
    changes: &mut [ChangesRequested],
) {
    let open: Vec<&str> = classified
        .iter()
        .filter(|c| c.kind == ItemKind::ReviewThread && c.class == Class::New)
        .filter_map(|c| c.author.as_ref().map(|a| a.login.as_str()))
        .collect();
    for change in changes.iter_mut() {
        change.count_open(open.iter().copied());
        if !config.request || change.requested || !change.all_handled() {
            continue;
        }
        let login = [change.login.clone()];
        match forge.request_review(number, &login).await {
            Ok(()) => {
                change.requested = true;
                change.rerequested = true;
            }
            Err(err) => tracing::warn!(%err, login = %change.login, "re-requesting a review"),
        }
    }
}
