//! Reviewer bots: after a push to a PR's head, each rule looks at the added
//! lines and, after its delay, posts a COMMENTED review with one thread per
//! matching line (right side, with the PR diff's `diffHunk`). A bot never
//! posts the same path, line and body twice.

use std::sync::Arc;
use std::time::Duration;

use regex::Regex;

use crate::automation::{glob_matches, BotSpec};
use crate::git::{self, AddedLine};
use crate::scenario::{ReviewStateSpec, Side};
use crate::server::Shared;
use crate::state::{BotPost, NewThread};

/// A bot rule with its pattern compiled.
pub(crate) struct CompiledBot {
    pub(crate) spec: BotSpec,
    regex: Regex,
}

impl CompiledBot {
    /// Compiles the rules of a validated scenario (an invalid pattern was
    /// refused by validation; such a rule is skipped here).
    pub(crate) fn compile(specs: &[BotSpec]) -> Vec<CompiledBot> {
        specs
            .iter()
            .filter_map(|spec| {
                let regex = Regex::new(&spec.pattern).ok()?;
                Some(CompiledBot {
                    spec: spec.clone(),
                    regex,
                })
            })
            .collect()
    }

    /// The comment this rule posts on `line`, if it matches.
    fn comment_for(&self, line: &AddedLine) -> Option<String> {
        if let Some(glob) = &self.spec.path {
            if !glob_matches(glob, &line.path) {
                return None;
            }
        }
        let found = self.regex.find(&line.text)?;
        Some(
            self.spec
                .body
                .replace("{path}", &line.path)
                .replace("{line}", &line.line.to_string())
                .replace("{match}", found.as_str())
                .replace("{text}", &line.text),
        )
    }
}

/// Wakes the bots for the lines `added` to PR `number` at commit `sha`;
/// `start` selects the rules that run at start instead of after pushes.
pub(crate) fn wake(shared: &Arc<Shared>, number: u64, sha: &str, added: &[AddedLine], start: bool) {
    for bot in shared.bots.iter().filter(|b| !start || b.spec.on_start) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_fill_in_path_line_match_and_text() {
        let mut spec = BotSpec::new("bot", r"TODO\S*", "{path}:{line} `{match}` in `{text}`");
        spec.path = Some("src/**".into());
        let bot = &CompiledBot::compile(&[spec])[0];
        let line = AddedLine {
            path: "src/a.sh".into(),
            line: 4,
            text: "# TODO: x".into(),
        };
        assert_eq!(
            bot.comment_for(&line).unwrap(),
            "src/a.sh:4 `TODO:` in `# TODO: x`"
        );
        let elsewhere = AddedLine {
            path: "README.md".into(),
            ..line.clone()
        };
        assert_eq!(bot.comment_for(&elsewhere), None);
        let clean = AddedLine {
            text: "echo ok".into(),
            ..line
        };
        assert_eq!(bot.comment_for(&clean), None);
    }
}
