//! The emulator's own rule bots (profile `rules`): after a push to a PR's
//! head, each rule looks at the added lines and, after its delay, posts a
//! COMMENTED review with one thread per matching line (right side, with the
//! PR diff's `diffHunk`). A bot never posts the same path, line and body
//! twice.

use std::sync::Arc;
use std::time::Duration;

use crate::bot_rules::CompiledBot;
use crate::git::{self, AddedLine};
use crate::scenario::{ReviewStateSpec, Side};
use crate::shared::Shared;
use crate::state::{BotPost, NewThread};

/// Wakes rule bot `bot` for the lines `added` to PR `number` at `sha`.
pub(super) fn wake(
    shared: &Arc<Shared>,
    bot: &CompiledBot,
    number: u64,
    sha: &str,
    added: &[AddedLine],
) {
    for line in added {
        let Some(body) = bot.comment_for(line) else {
            continue;
        };
        let post = BotPost {
            login: bot.spec.login.clone(),
            path: line.path.clone(),
            line: line.line,
            body,
        };
        // Reserved now, so that two quick pushes cannot both post it.
        let epoch = {
            let mut state = shared.write();
            if !state.bot_posts.insert(post.clone()) {
                continue;
            }
            state.epoch
        };
        let (task_shared, sha, delay) = (
            shared.clone(),
            sha.to_owned(),
            Duration::from_millis(bot.spec.delay_ms),
        );
        let text = line.text.clone();
        shared.tasks.spawn(async move {
            tokio::time::sleep(delay).await;
            post_comment(&task_shared, epoch, number, &sha, post, &text).await;
        });
    }
}

/// Posts one bot comment, following its line if the head moved since.
async fn post_comment(
    shared: &Arc<Shared>,
    epoch: u64,
    number: u64,
    sha: &str,
    post: BotPost,
    text: &str,
) {
    // A push may land between reading the head and writing: try again then.
    for _ in 0..5 {
        let Some((head, git_dir)) = ({
            let state = shared.read();
            state
                .pull_request(number)
                .map(|pr| (pr.head_sha.clone(), state.repository.git_dir.clone()))
        }) else {
            return;
        };
        let line = if head == sha {
            Some(post.line)
        } else {
            let (git_env, from, to) = (shared.git.clone(), sha.to_owned(), head.clone());
            let diff =
                tokio::task::spawn_blocking(move || git::diff(&git_env, &git_dir, &from, &to))
                    .await
                    .ok()
                    .and_then(Result::ok);
            diff.and_then(|files| {
                let hunks = files.get(&post.path).map(Vec::as_slice);
                git::remap_range(hunks, post.line, post.line)
                    .ok()
                    .map(|r| r.1)
            })
        };
        let Some(line) = line else {
            tracing::info!(bot = %post.login, path = %post.path, "line gone before the bot posted");
            return;
        };
        let mut state = shared.write();
        if state.epoch != epoch {
            return;
        }
        let Some(pr) = state.pull_request(number) else {
            return;
        };
        if pr.head_sha != head {
            continue;
        }
        let diff_hunk = pr
            .hunk_for(&post.path, line, Side::Right)
            .unwrap_or_else(|| format!("@@ -{line},0 +{line},1 @@\n+{text}"));
        let thread = NewThread {
            path: post.path.clone(),
            line: Some(line),
            start_line: None,
            side: Side::Right,
            body: post.body.clone(),
            diff_hunk,
        };
        match state.apply_review(
            number,
            &post.login,
            ReviewStateSpec::Commented,
            "",
            vec![thread],
        ) {
            Ok(created) => tracing::info!(
                bot = %post.login,
                path = %post.path,
                line,
                review = created.review_id,
                "bot posted a review thread"
            ),
            Err(err) => tracing::warn!(bot = %post.login, %err, "bot could not post"),
        }
        return;
    }
}
