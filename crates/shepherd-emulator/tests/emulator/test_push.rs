//! Push processing with the real git: threads move or become outdated, CI
//! starts for the new head, reviewer bots wake up.

use serde_json::{json, Value};
use shepherd_emulator::{BotSpec, CheckSpec, Scenario, ThreadCommentSpec, ThreadSpec};

use crate::common::*;

/// Threads at lines 10, 19-20 (multi-line) and 30 of `src/lib.rs`, one
/// required check, a TODO bot.
fn push_scenario() -> Scenario {
    let mut s = scenario(0, 0);
    for (start, line) in [(None, 10), (Some(19), 20), (None, 30)] {
        let mut thread = ThreadSpec::new(
            "src/lib.rs",
            line,
            vec![ThreadCommentSpec::new("bob", format!("about line {line}"))],
        );
        thread.start_line = start;
        s.threads.push(thread);
    }
    let mut check = CheckSpec::new("tests", "test -f src/lib.rs");
    check.required = true;
    s.checks.push(check);
    let mut bot = BotSpec::new(
        "review-bot",
        r"TODO",
        "`{match}` at {path}:{line}\n\n```suggestion\n```",
    );
    bot.delay_ms = 50;
    bot.path = Some("src/**".into());
    s.bots.push(bot);
    s
}

async fn lines_of_threads(
    emu: &shepherd_emulator::RunningEmulator,
) -> Vec<(Value, Value, Value, Value)> {
    threads(emu, ALICE)
        .await
        .iter()
        .map(|t| {
            (
                t["line"].clone(),
                t["startLine"].clone(),
                t["originalLine"].clone(),
                t["isOutdated"].clone(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_push_moves_threads_outdates_changed_lines_and_runs_ci() {
    let emu = start(push_scenario()).await;
    idle(&emu).await;
    let first_head = emu.head_sha(1).unwrap();
    assert_eq!(
        check_runs(&emu, &first_head).await,
        [("tests".to_owned(), "completed".to_owned(), json!("success"))]
    );

    // Two lines inserted above line 10, line 30 changed.
    let pushed = git_push(&emu, ALICE, "feature/widgets", |repo| {
        let path = repo.join("src/lib.rs");
        let mut lines = read_lines(&path);
        lines[29] = "line 30 changed".into();
        lines.insert(2, "inserted a".into());
        lines.insert(2, "inserted b".into());
        write_lines(&path, &lines);
    })
    .await;
    assert_eq!(emu.head_sha(1).unwrap(), pushed);
    assert_eq!(
        lines_of_threads(&emu).await,
        [
            (json!(12), Value::Null, json!(10), json!(false)),
            (json!(22), json!(21), json!(20), json!(false)),
            (Value::Null, Value::Null, json!(30), json!(true)),
        ]
    );
    // REST agrees, and says which commit each position refers to.
    let (_, comments) = rest_get(
        &emu.api_url(),
        "/repos/acme/widgets/pulls/1/comments",
        Some(ALICE),
    )
    .await;
    assert_eq!(comments[0]["line"], 12);
    assert_eq!(comments[0]["original_line"], 10);
    assert_eq!(comments[0]["commit_id"], pushed.as_str());
    assert_eq!(comments[0]["original_commit_id"], first_head.as_str());
    assert_eq!(comments[2]["line"], Value::Null);
    assert_eq!(comments[2]["original_line"], 30);

    // CI ran for the new head; the PR lists both commits.
    idle(&emu).await;
    assert_eq!(
        check_runs(&emu, &pushed).await,
        [("tests".to_owned(), "completed".to_owned(), json!("success"))]
    );
    let body = graphql(
        &emu,
        ALICE,
        r#"query C { repository(owner: "acme", name: "widgets") { pullRequest(number: 1) {
            commits(first: 10) { totalCount nodes { commit { oid } } } } } }"#,
        json!({}),
    )
    .await;
    let commits = &body["data"]["repository"]["pullRequest"]["commits"];
    assert_eq!(commits["totalCount"], 2);
    assert_eq!(commits["nodes"][1]["commit"]["oid"], pushed.as_str());

    // A second push deleting lines above moves the threads back up.
    git_push(&emu, BOB, "feature/widgets", |repo| {
        let path = repo.join("src/lib.rs");
        let mut lines = read_lines(&path);
        lines.drain(2..4);
        write_lines(&path, &lines);
    })
    .await;
    let lines = lines_of_threads(&emu).await;
    assert_eq!(lines[0].0, 10);
    assert_eq!(
        (lines[1].0.clone(), lines[1].1.clone()),
        (json!(20), json!(19))
    );
    assert_eq!(lines[2].3, true);
    idle(&emu).await;
}

#[tokio::test]
async fn an_insertion_inside_a_multi_line_thread_outdates_it() {
    let emu = start(push_scenario()).await;
    git_push(&emu, ALICE, "feature/widgets", |repo| {
        let path = repo.join("src/lib.rs");
        let mut lines = read_lines(&path);
        // Between lines 19 and 20.
        lines.insert(19, "wedged".into());
        write_lines(&path, &lines);
    })
    .await;
    let lines = lines_of_threads(&emu).await;
    assert_eq!(lines[0], (json!(10), Value::Null, json!(10), json!(false)));
    assert_eq!(lines[1].3, true, "{lines:?}");
    assert_eq!(lines[2].0, 31);
    idle(&emu).await;
}

#[tokio::test]
async fn the_bot_comments_on_added_todo_lines_once() {
    let emu = start(push_scenario()).await;
    idle(&emu).await;
    let pushed = git_push(&emu, ALICE, "feature/widgets", |repo| {
        let path = repo.join("src/lib.rs");
        let mut lines = read_lines(&path);
        lines.insert(3, "// TODO: handle errors".into());
        write_lines(&path, &lines);
        // Outside the bot's path glob: ignored.
        std::fs::write(repo.join("NOTES.md"), "TODO: write notes\n").unwrap();
    })
    .await;
    idle(&emu).await;
    let all = threads(&emu, ALICE).await;
    let bot: Vec<&Value> = all
        .iter()
        .filter(|t| t["comments"]["nodes"][0]["author"]["__typename"] == "Bot")
        .collect();
    assert_eq!(bot.len(), 1, "{all:?}");
    assert_eq!(bot[0]["path"], "src/lib.rs");
    assert_eq!(bot[0]["line"], 4);
    let comment = &bot[0]["comments"]["nodes"][0];
    assert_eq!(comment["author"]["login"], "review-bot");
    assert_eq!(comment["pullRequestReview"]["state"], "COMMENTED");
    assert_eq!(
        comment["body"],
        "`TODO` at src/lib.rs:4\n\n```suggestion\n```"
    );
    let state = emu.state_json();
    let bot_thread = state["pull_requests"][0]["threads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["comments"][0]["author"] == "review-bot")
        .unwrap()
        .clone();
    let hunk = bot_thread["comments"][0]["diff_hunk"].as_str().unwrap();
    assert!(hunk.starts_with("@@ "), "{hunk}");
    assert!(hunk.ends_with("+// TODO: handle errors"), "{hunk}");
    assert_eq!(bot_thread["side"], "right");
    assert_eq!(bot_thread["commit"], pushed.as_str());

    // Removing and re-adding the same line: the same path, line and body
    // are never posted twice.
    for add in [false, true] {
        git_push(&emu, ALICE, "feature/widgets", move |repo| {
            let path = repo.join("src/lib.rs");
            let mut lines = read_lines(&path);
            if add {
                lines.insert(3, "// TODO: handle errors".into());
            } else {
                lines.remove(3);
            }
            write_lines(&path, &lines);
        })
        .await;
        idle(&emu).await;
    }
    let bot_threads = threads(&emu, ALICE)
        .await
        .iter()
        .filter(|t| t["comments"]["nodes"][0]["author"]["__typename"] == "Bot")
        .count();
    assert_eq!(bot_threads, 1);
}

#[tokio::test]
async fn bots_can_review_the_pr_at_start() {
    let mut s = push_scenario();
    s.bots[0].on_start = true;
    s.bots[0].pattern = r"^line 5$".into();
    let emu = start(s).await;
    idle(&emu).await;
    let bot: Vec<Value> = threads(&emu, ALICE)
        .await
        .into_iter()
        .filter(|t| t["comments"]["nodes"][0]["author"]["__typename"] == "Bot")
        .collect();
    // `line 5` is the line the PR adds.
    assert_eq!(bot.len(), 1);
    assert_eq!(bot[0]["line"], 5);
}

/// Issue 26 point 8: a `git push` killed after the branch moved but
/// before the answer (here while the repository's `post-receive` hook
/// holds the answer back) leaves no split state: the pull request's head
/// follows the branch, as it does on a forge whatever the client does.
/// Before, the client's disconnect dropped the push handler between the
/// two, and the branch and the pull request's head stayed different.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_killed_after_the_branch_moved_still_moves_the_pull_request() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;

    let emu = start(scenario(0, 0)).await;
    idle(&emu).await;
    let bare = emu.repository_path();
    let hook = bare.join("hooks/post-receive");
    std::fs::create_dir_all(hook.parent().unwrap()).unwrap();
    std::fs::write(&hook, "#!/bin/sh\nsleep 2\n").unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();

    let url = authed_git_url(&emu, ALICE);
    let (clone, sha) = tokio::task::spawn_blocking(move || {
        let clone = Checkout::of(&url, Some("feature/widgets"));
        std::fs::write(clone.repo.join("NEW.md"), "new\n").unwrap();
        clone.ok(&["add", "--all"]);
        clone.ok(&["commit", "--quiet", "-m", "change"]);
        let sha = clone.head();
        (clone, sha)
    })
    .await
    .unwrap();
    // `git push` and its `git-remote-http` in a process group of their
    // own, so that the kill takes the connection down with them.
    let mut push = clone
        .git
        .command(&clone.repo)
        .args(["push", "--quiet", "origin", "HEAD:feature/widgets"])
        .process_group(0)
        .spawn()
        .unwrap();
    let branch = |bare: &std::path::Path| {
        let out = std::process::Command::new("git")
            .arg("--git-dir")
            .arg(bare)
            .args(["rev-parse", "refs/heads/feature/widgets"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while branch(&bare) != sha {
        assert!(
            std::time::Instant::now() < deadline,
            "the push never landed"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let killed = std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", push.id())])
        .status()
        .unwrap();
    assert!(killed.success());
    let _ = push.wait();
    assert_ne!(
        emu.head_sha(1).unwrap(),
        sha,
        "the kill came before the pull request's head moved (the hook holds it)"
    );

    // The hook finishes; the push is processed to its end.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while emu.head_sha(1).unwrap() != sha && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    idle(&emu).await;
    assert_eq!(branch(&bare), sha);
    assert_eq!(
        emu.head_sha(1).unwrap(),
        sha,
        "the pull request's head follows its branch"
    );
    let state = emu.state_json();
    assert_eq!(state["pull_requests"][0]["head_sha"], sha, "{state}");
}

/// Issue 26 point 8, for the control API's push: a client that gives up on
/// `POST /_emulator/act` after the branch moved (here while the
/// repository's `reference-transaction` hook holds the ref update's end)
/// leaves no split state either.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_control_push_whose_client_goes_away_still_moves_the_pull_request() {
    use std::os::unix::fs::PermissionsExt;

    let emu = start(scenario(0, 0)).await;
    idle(&emu).await;
    let old = emu.head_sha(1).unwrap();
    let bare = emu.repository_path();
    let hook = bare.join("hooks/reference-transaction");
    std::fs::create_dir_all(hook.parent().unwrap()).unwrap();
    std::fs::write(
        &hook,
        "#!/bin/sh\n[ \"$1\" = committed ] && sleep 1\nexit 0\n",
    )
    .unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();

    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(std::time::Duration::from_millis(300))
        .build()
        .unwrap();
    let sent = client
        .post(format!("{}/_emulator/act", emu.api_url()))
        .json(
            &json!({"action": "push", "as": "alice", "branch": "feature/widgets",
                      "message": "change", "files": {"NEW.md": "new\n"}}),
        )
        .send()
        .await;
    assert!(
        sent.is_err(),
        "the client gave up before the answer: {sent:?}"
    );

    let branch = || {
        let out = std::process::Command::new("git")
            .arg("--git-dir")
            .arg(&bare)
            .args(["rev-parse", "refs/heads/feature/widgets"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while (branch() == old || emu.head_sha(1).unwrap() != branch())
        && std::time::Instant::now() < deadline
    {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    idle(&emu).await;
    assert_ne!(branch(), old, "the push landed");
    assert_eq!(
        emu.head_sha(1).unwrap(),
        branch(),
        "the pull request's head follows its branch"
    );
}
