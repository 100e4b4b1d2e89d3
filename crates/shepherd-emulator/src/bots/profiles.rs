//! Bots that behave as real reviewers do (`[[bots]] profile`), each
//! showing that it looked the way the real one shows it:
//!
//! - `coderabbit`: a commit status `CodeRabbit` on the head, `pending`
//!   ("Review in progress") at once and `success` ("Review completed") when
//!   done; a walkthrough comment edited in place; a review with the
//!   findings; incremental (a head it reviewed is never reviewed again);
//!   past its rate limit, the "Review limit reached" notice and a `success`
//!   status "Review rate limited", and no review until asked again with
//!   `@coderabbitai review` (SignalK/freeboard-sk#620: "A refused review
//!   means that push has spent its trigger, and CodeRabbit never returns to
//!   the PR").
//! - `codex`: a review on the head ("Reviewed commit: …") when it has
//!   findings; nothing on a clean pass (hathach/tinyusb#3910).
//! - `copilot`: a requested reviewer (asked on each push, as a ruleset's
//!   automatic review does; asked again, it reviews again:
//!   kubernetes/org#6380); it submits a review on the head, also on a clean
//!   pass, which takes it off the requested reviewers; past its quota, a
//!   comment that the quota is used up
//!   (Ambiguous-Interactive/unity-helpers#428).
//! - `ask_only`: reviews only when a comment asks (`/gemini review`).
//!
//! Each review is of the lines added since the last head it reviewed (the
//! base for the first), found by the bot's pattern; `findings = false` makes
//! every review clean. A review whose head moved before it finished is
//! dropped: the new head's review covers both.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use super::notices;
use crate::automation::BotProfile;
use crate::bot_rules::CompiledBot;
use crate::ci_state::StatusState;
use crate::git::{self, Hunk};
use crate::scenario::{ReviewStateSpec, Side};
use crate::shared::Shared;
use crate::state::{NewThread, State};

/// What woke a bot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Why {
    /// A push moved the head.
    Push,
    /// The emulator started (or was reset), for a bot marked `on_start`.
    Start,
    /// A comment carried the bot's trigger.
    Trigger,
    /// The bot was asked to review (a review request).
    Request,
}

/// Starts bot `bot`'s review of PR `number` at head `sha`: what shows at
/// once (CodeRabbit's pending status, Copilot as a requested reviewer),
/// then, after the bot's delay, the review or the refusal.
pub(super) fn start_pass(
    shared: &Arc<Shared>,
    bot: &CompiledBot,
    number: u64,
    sha: &str,
    why: Why,
) {
    let spec = &bot.spec;
    let login = spec.login.as_str();
    let (epoch, limited) = {
        let mut state = shared.write();
        let progress = state.bot_progress(login, number);
        let seen = progress.reviewed.iter().any(|s| s == sha);
        let running = progress.running.iter().any(|s| s == sha);
        let incremental = spec.profile == BotProfile::Coderabbit;
        if running || (seen && (incremental || matches!(why, Why::Push | Why::Start))) {
            if why == Why::Trigger && incremental {
                comment(&mut state, number, login, notices::ACTIONS_PERFORMED);
            }
            return;
        }
        let limited = spec.rate_limit_after.is_some_and(|n| progress.reviews >= n);
        state
            .bot_progress_mut(login, number)
            .running
            .push(sha.to_owned());
        match spec.profile {
            BotProfile::Coderabbit => {
                if why == Why::Trigger && !limited {
                    comment(&mut state, number, login, notices::ACTIONS_PERFORMED);
                }
                let in_progress = Some(notices::REVIEW_IN_PROGRESS.to_owned());
                state.ci_add_status(
                    sha,
                    notices::CODERABBIT_CONTEXT,
                    StatusState::Pending,
                    in_progress,
                    None,
                    login,
                );
            }
            BotProfile::Copilot => {
                if let Err(err) = state.apply_review_request(number, &[login.to_owned()], true) {
                    tracing::warn!(bot = login, %err, "bot could not be requested");
                }
            }
            _ => {}
        }
        (state.epoch, limited)
    };
    let task = Pass {
        shared: shared.clone(),
        login: login.to_owned(),
        profile: spec.profile,
        number,
        sha: sha.to_owned(),
        why,
        epoch,
        limited,
        minutes: spec.rate_limit_minutes,
    };
    let (delay, bot_index) = (
        Duration::from_millis(spec.delay_ms),
        shared.bots.iter().position(|b| b.spec == *spec),
    );
    shared.tasks.spawn(async move {
        tokio::time::sleep(delay).await;
        if let Some(index) = bot_index {
            task.finish(index).await;
        }
    });
}

/// One review in flight.
struct Pass {
    shared: Arc<Shared>,
    login: String,
    profile: BotProfile,
    number: u64,
    sha: String,
    why: Why,
    epoch: u64,
    limited: bool,
    minutes: u32,
}

impl Pass {
    /// Reviews (or refuses) once the delay is over.
    async fn finish(self, bot_index: usize) {
        let Some((from, git_dir)) = self.still_current(&self.shared.read()) else {
            self.drop_pass();
            return;
        };
        if self.limited {
            self.refuse();
            return;
        }
        let (git_env, sha) = (self.shared.git.clone(), self.sha.clone());
        let diff = tokio::task::spawn_blocking(move || git::diff(&git_env, &git_dir, &from, &sha))
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default();
        let bot = &self.shared.bots[bot_index];
        let findings: Vec<(git::AddedLine, String)> = if bot.spec.findings {
            git::added_lines(&diff)
                .into_iter()
                .filter_map(|line| bot.comment_for(&line).map(|body| (line, body)))
                .collect()
        } else {
            Vec::new()
        };
        self.review(&diff, findings);
    }

    /// The head this review started from is still the PR's head, and no
    /// reset came between: where to review from, and the repository.
    fn still_current(&self, state: &State) -> Option<(String, std::path::PathBuf)> {
        let pr = state.pull_request(self.number)?;
        if state.epoch != self.epoch || pr.head_sha != self.sha {
            return None;
        }
        let progress = state.bot_progress(&self.login, self.number);
        let from = progress.reviewed.last().unwrap_or(&pr.base_sha).clone();
        Some((from, state.repository.git_dir.clone()))
    }

    /// Forgets a review whose head moved (or that a reset cancelled).
    fn drop_pass(&self) {
        let mut state = self.shared.write();
        if state.epoch == self.epoch {
            let progress = state.bot_progress_mut(&self.login, self.number);
            progress.running.retain(|s| *s != self.sha);
        }
        tracing::info!(bot = %self.login, sha = %self.sha, "bot review dropped: the head moved");
    }

    /// The rate limit (CodeRabbit) or the quota (Copilot) refuses it.
    fn refuse(&self) {
        let mut state = self.shared.write();
        if state.epoch != self.epoch {
            return;
        }
        let (number, login) = (self.number, self.login.as_str());
        match self.profile {
            BotProfile::Coderabbit => {
                let author = state
                    .pull_request(number)
                    .map(|pr| pr.author.clone())
                    .unwrap_or_default();
                let notice = notices::review_limit_reached(&author, self.minutes);
                walkthrough(&mut state, number, login, &notice);
                if self.why == Why::Trigger {
                    let reply = notices::action_not_completed(self.minutes);
                    comment(&mut state, number, login, &reply);
                }
                let limited = Some(notices::REVIEW_RATE_LIMITED.to_owned());
                let sha = self.sha.clone();
                let context = notices::CODERABBIT_CONTEXT;
                state.ci_add_status(&sha, context, StatusState::Success, limited, None, login);
            }
            _ => {
                comment(&mut state, number, login, notices::COPILOT_QUOTA);
                if let Err(err) = state.apply_review_request(number, &[login.to_owned()], false) {
                    tracing::warn!(bot = login, %err, "bot request not withdrawn");
                }
            }
        }
        let progress = state.bot_progress_mut(login, number);
        progress.running.retain(|s| *s != self.sha);
        progress.declined.push(self.sha.clone());
        // The limit's window has passed by the time anyone asks again: the
        // count starts over (`rate_limit_after = 0` refuses every time).
        progress.reviews = 0;
        tracing::info!(bot = login, sha = %self.sha, "bot refused to review: rate limited");
    }

    /// Posts the review of `findings` (lines of `diff`) the profile's way.
    fn review(&self, diff: &BTreeMap<String, Vec<Hunk>>, findings: Vec<(git::AddedLine, String)>) {
        let mut state = self.shared.write();
        if self.still_current(&state).is_none() {
            drop(state);
            self.drop_pass();
            return;
        }
        let (number, login) = (self.number, self.login.as_str());
        let Some(pr) = state.pull_request(number) else {
            return;
        };
        let threads: Vec<NewThread> = findings
            .into_iter()
            .map(|(line, body)| NewThread {
                diff_hunk: pr
                    .hunk_for(&line.path, line.line, Side::Right)
                    .unwrap_or_else(|| {
                        format!("@@ -{n},0 +{n},1 @@\n+{}", line.text, n = line.line)
                    }),
                path: line.path,
                line: Some(line.line),
                start_line: None,
                side: Side::Right,
                body,
            })
            .collect();
        let count = threads.len();
        let reviews = state.bot_progress(login, number).reviews + 1;
        let body = match self.profile {
            BotProfile::Coderabbit => {
                let summary = notices::walkthrough(&self.sha, reviews, count);
                walkthrough(&mut state, number, login, &summary);
                let done = Some(notices::REVIEW_COMPLETED.to_owned());
                let (sha, context) = (self.sha.clone(), notices::CODERABBIT_CONTEXT);
                state.ci_add_status(&sha, context, StatusState::Success, done, None, login);
                (count > 0).then(|| notices::coderabbit_review(count))
            }
            BotProfile::Codex => (count > 0).then(|| notices::codex_review(&self.sha)),
            BotProfile::Copilot => Some(notices::copilot_review(diff.len(), count)),
            _ => Some(notices::ask_only_review(count)),
        };
        if let Some(body) = body {
            let review = ReviewStateSpec::Commented;
            match state.apply_review(number, login, review, &body, threads) {
                Ok(created) => tracing::info!(
                    bot = login,
                    review = created.review_id,
                    findings = count,
                    "bot reviewed the head"
                ),
                Err(err) => tracing::warn!(bot = login, %err, "bot could not review"),
            }
        }
        let progress = state.bot_progress_mut(login, number);
        progress.running.retain(|s| *s != self.sha);
        progress.reviewed.push(self.sha.clone());
        progress.reviews = reviews;
    }
}

/// Posts a conversation comment as the bot.
fn comment(state: &mut State, number: u64, login: &str, body: &str) {
    if let Err(err) = state.apply_issue_comment(number, login, body) {
        tracing::warn!(bot = login, %err, "bot could not comment");
    }
}

/// Writes the bot's walkthrough comment: the first time a new comment,
/// afterwards the same comment edited in place.
fn walkthrough(state: &mut State, number: u64, login: &str, body: &str) {
    let existing = state.bot_progress(login, number).walkthrough;
    let written = match existing {
        Some(id) => state
            .apply_issue_comment_edit(number, id, body)
            .map(|()| id),
        None => state.apply_issue_comment(number, login, body),
    };
    match written {
        Ok(id) => state.bot_progress_mut(login, number).walkthrough = Some(id),
        Err(err) => tracing::warn!(bot = login, %err, "bot could not write its walkthrough"),
    }
}
