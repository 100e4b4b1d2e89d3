//! A push through the real git to a GitLab path (`/group/sub/project.git`,
//! `oauth2:TOKEN`): the merge request's `sha` moves, positions follow their
//! lines or stay on the old head (outdated), a pipeline starts, the push is
//! noted, and the bot posts a discussion with a diff note.

use reqwest::Method;
use serde_json::Value;
use shepherd_emulator::{BotSpec, CheckSpec, ThreadCommentSpec, ThreadSpec};

use crate::common::*;

fn position_of(threads: &[Value], body: &str) -> Value {
    threads
        .iter()
        .find(|t| t["notes"][0]["body"] == body)
        .unwrap_or_else(|| panic!("no thread `{body}`"))["notes"][0]["position"]
        .clone()
}

#[tokio::test]
async fn a_git_push_moves_the_merge_request_and_has_every_effect() {
    let mut s = gitlab_scenario(3, 1);
    s.threads.push(ThreadSpec::new(
        "src/lib.rs",
        200,
        vec![ThreadCommentSpec::new("bob", "far below")],
    ));
    s.checks = vec![CheckSpec::new("tests", "true")];
    let mut bot = BotSpec::new("review-bot", "TODO", "No `{match}` at {path}:{line}.");
    bot.path = Some("src/**".into());
    s.bots = vec![bot];
    let emu = start(s).await;
    idle(&emu).await;
    let old_head = emu.head_sha(1).unwrap();

    let url = gitlab_git_url(&emu, "oauth2", ALICE);
    let pushed = git_push_to(url, "feature/widgets", |repo| {
        let file = repo.join("src/lib.rs");
        let mut lines = read_lines(&file);
        lines[2] = "LINE 3".into();
        lines.insert(0, "// second".into());
        lines.insert(0, "// TODO: header".into());
        write_lines(&file, &lines);
    })
    .await;

    // By the time `git push` returned, the merge request had moved.
    let mr = gl_get(&emu, &mr_path(""), ALICE).await;
    assert_eq!(mr["sha"], pushed.as_str());
    assert_eq!(mr["diff_refs"]["head_sha"], pushed.as_str());
    let threads = gl_threads(&emu, ALICE).await;
    let moved = position_of(&threads, "thread 0 comment 0");
    assert_eq!(
        (moved["head_sha"].as_str(), moved["new_line"].as_u64()),
        (Some(pushed.as_str()), Some(3))
    );
    let far = position_of(&threads, "far below");
    assert_eq!(
        (far["head_sha"].as_str(), far["new_line"].as_u64()),
        (Some(pushed.as_str()), Some(202))
    );
    // The changed line's thread stays where it was, on the old head.
    let changed = position_of(&threads, "thread 2 comment 0");
    assert_eq!(
        (changed["head_sha"].as_str(), changed["new_line"].as_u64()),
        (Some(old_head.as_str()), Some(3))
    );

    let notes = gl_get(&emu, &mr_path("/notes"), ALICE).await;
    let system: Vec<&Value> = notes
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["system"] == true)
        .collect();
    assert_eq!(system.len(), 1);
    assert_eq!(system[0]["body"], "added 1 commit");
    assert_eq!(system[0]["author"]["username"], "alice");

    idle(&emu).await;
    let pipelines = gl_get(
        &emu,
        &format!("/projects/{GL_PROJECT}/pipelines?sha={pushed}"),
        ALICE,
    )
    .await;
    assert_eq!(pipelines.as_array().unwrap().len(), 1);
    assert_eq!(pipelines[0]["status"], "success");
    let mr = gl_get(&emu, &mr_path(""), ALICE).await;
    assert_eq!(mr["head_pipeline"]["sha"], pushed.as_str());

    // The bot saw the added TODO line.
    let threads = gl_threads(&emu, ALICE).await;
    let bot = threads
        .iter()
        .find(|t| {
            t["notes"][0]["author"]["username"] == "review-bot"
                && t["notes"].as_array().unwrap().len() == 1
        })
        .expect("the bot's discussion");
    let note = &bot["notes"][0];
    assert_eq!(note["type"], "DiffNote");
    assert_eq!(note["body"], "No `TODO` at src/lib.rs:1.");
    assert_eq!(note["author"]["bot"], true);
    assert_eq!(note["position"]["new_line"], 1);
    assert_eq!(note["position"]["head_sha"], pushed.as_str());
    assert_eq!(bot["individual_note"], false);
}

#[tokio::test]
async fn git_at_gitlab_paths_takes_any_user_with_a_token() {
    let emu = start(gitlab_scenario(0, 0)).await;
    let info = format!(
        "{}/info/refs?service=git-upload-pack",
        emu.git_url("acme/tools", "widgets")
    );
    let response = client().get(&info).send().await.unwrap();
    assert_eq!(response.status(), 401);
    assert_eq!(
        response.headers()["www-authenticate"],
        "Basic realm=\"GitLab\""
    );
    let response = client()
        .get(&info)
        .basic_auth("anyone", Some(BOB))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let push = format!(
        "{}/info/refs?service=git-receive-pack",
        emu.git_url("acme/tools", "widgets")
    );
    let response = client()
        .get(&push)
        .basic_auth("oauth2", Some(READER))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
    let response = client()
        .get(&info)
        .basic_auth("oauth2", Some(STRANGER))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    // Another project's path is not this one.
    let other = format!(
        "{}/acme/widgets.git/info/refs?service=git-upload-pack",
        emu.api_url()
    );
    let response = client()
        .get(&other)
        .basic_auth("oauth2", Some(BOB))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    assert!(emu.request_count("GET /{owner}/{repo}.git/info/refs") >= 3);

    // A clone with `oauth2:TOKEN` works end to end.
    let url = gitlab_git_url(&emu, "oauth2", BOB);
    let head = emu.head_sha(1).unwrap();
    let cloned = cloned_head(url, "feature/widgets").await;
    assert_eq!(cloned, head);
    let (status, _, _) = gl(
        &emu,
        Method::GET,
        "/projects/acme%2Ftools%2Fwidgets",
        Some(BOB),
        None,
    )
    .await;
    assert_eq!(status, 200);
}
