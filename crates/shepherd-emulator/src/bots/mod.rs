//! Reviewer bots: what wakes them (a push, the emulator's start, a trigger
//! comment, a review request) and which kind answers: the emulator's own
//! rule bots (`rules.rs`) or bots that behave as real reviewers do
//! (`profiles.rs`, with their notices' texts in `notices.rs`).

mod notices;
mod profiles;
mod rules;

use std::sync::Arc;

use crate::automation::BotProfile;
use crate::git::AddedLine;
use crate::shared::Shared;

pub(crate) use profiles::Why;

/// Wakes the bots for the lines `added` to PR `number` at commit `sha`;
/// `start` selects the bots that run at start instead of after pushes. A
/// bot that reviews only when asked (`ask_only`) sleeps through both.
pub(crate) fn wake(shared: &Arc<Shared>, number: u64, sha: &str, added: &[AddedLine], start: bool) {
    for bot in shared.bots.iter().filter(|b| !start || b.spec.on_start) {
        match bot.spec.profile {
            BotProfile::Rules => rules::wake(shared, bot, number, sha, added),
            BotProfile::AskOnly => {}
            _ => {
                let why = if start { Why::Start } else { Why::Push };
                profiles::start_pass(shared, bot, number, sha, why);
            }
        }
    }
}

/// A conversation comment by `author` on PR `number`: every bot whose
/// trigger it carries reviews the head again (CodeRabbit's
/// `@coderabbitai review`, Gemini's `/gemini review`). A bot's own comments
/// trigger nothing.
pub(crate) fn on_comment(shared: &Arc<Shared>, number: u64, author: &str, body: &str) {
    let Some(sha) = head_of(shared, number) else {
        return;
    };
    for bot in &shared.bots {
        let asked = bot
            .spec
            .trigger()
            .is_some_and(|trigger| body.contains(trigger));
        if asked && bot.spec.login != author {
            profiles::start_pass(shared, bot, number, &sha, Why::Trigger);
        }
    }
}

/// `logins` were asked to review PR `number` (GitHub's requested reviewers,
/// GitLab's `reviewers`): a Copilot-like bot among them reviews the head,
/// as requesting Copilot again makes it review again.
pub(crate) fn on_review_request(shared: &Arc<Shared>, number: u64, logins: &[String]) {
    let Some(sha) = head_of(shared, number) else {
        return;
    };
    for bot in &shared.bots {
        if bot.spec.profile == BotProfile::Copilot && logins.contains(&bot.spec.login) {
            profiles::start_pass(shared, bot, number, &sha, Why::Request);
        }
    }
}

fn head_of(shared: &Shared, number: u64) -> Option<String> {
    let state = shared.read();
    state.pull_request(number).map(|pr| pr.head_sha.clone())
}
