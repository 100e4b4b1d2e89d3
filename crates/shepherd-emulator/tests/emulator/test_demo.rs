//! The demo scenario: embedded copy equals the directory; its suggestions
//! apply with GitHub's semantics; CI passes on base and head and after the
//! suggestions, fails on a broken test; the bot asks for a second round.

use std::collections::BTreeMap;

use reqwest::Method;
use serde_json::{json, Value};
use shepherd_emulator::{RunningEmulator, Scenario, UserKind};

use crate::common::*;

const DEV: &str = "emu_dev_token";

fn demo() -> Scenario {
    Scenario::demo().unwrap()
}

async fn demo_check_runs(emu: &RunningEmulator, sha: &str) -> Vec<Value> {
    let (status, runs) = rest_get(
        &emu.api_url(),
        &format!("/repos/demo/authkit/commits/{sha}/check-runs"),
        Some(DEV),
    )
    .await;
    assert_eq!(status, 200, "{runs}");
    runs["check_runs"].as_array().unwrap().clone()
}

async fn conclusion(emu: &RunningEmulator, sha: &str) -> String {
    let runs = demo_check_runs(emu, sha).await;
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0]["name"], "tests");
    runs[0]["conclusion"].as_str().unwrap_or("none").to_owned()
}

/// The lines of the first ```suggestion block of `body`, if any.
fn suggestion(body: &str) -> Option<Vec<String>> {
    let start = body.find("```suggestion\n")? + "```suggestion\n".len();
    let rest = &body[start..];
    let end = if rest.starts_with("```") {
        0
    } else {
        rest.find("\n```")? + 1
    };
    Some(rest[..end].lines().map(str::to_owned).collect())
}

/// Applies every suggestion of the threads (from the state dump) to the
/// head's files with GitHub's semantics: lines `start_line..=line` on the
/// right side are replaced. Checks first that those lines are exactly the
/// last lines the `diffHunk` shows. Returns the changed files.
fn apply_suggestions(
    emu: &RunningEmulator,
    threads: &[Value],
) -> (BTreeMap<String, Option<String>>, usize) {
    let head = emu.head_sha(42).unwrap();
    let mut files: BTreeMap<String, Vec<String>> = BTreeMap::new();
    // Later lines first, so that earlier replacements keep their numbers.
    let mut edits: Vec<(String, usize, usize, Vec<String>)> = Vec::new();
    for thread in threads {
        let comment = &thread["comments"][0];
        let Some(replacement) = suggestion(comment["body"].as_str().unwrap()) else {
            continue;
        };
        let path = thread["path"].as_str().unwrap().to_owned();
        let line = thread["current_line"].as_u64().unwrap() as usize;
        let start = thread["current_start_line"]
            .as_u64()
            .map_or(line, |s| s as usize);
        let lines = files.entry(path.clone()).or_insert_with(|| {
            file_at(emu, &head, &path)
                .lines()
                .map(str::to_owned)
                .collect()
        });
        let hunk: Vec<&str> = comment["diff_hunk"].as_str().unwrap().lines().collect();
        let shown: Vec<String> = hunk[hunk.len() - (line - start + 1)..]
            .iter()
            .map(|l| l[1..].to_owned())
            .collect();
        assert_eq!(
            &lines[start - 1..line],
            shown.as_slice(),
            "{path}:{start}-{line}: the range is not what the diffHunk shows"
        );
        edits.push((path, start, line, replacement));
    }
    let count = edits.len();
    edits.sort_by(|a, b| (&b.0, b.1).cmp(&(&a.0, a.1)));
    for (path, start, line, replacement) in edits {
        let lines = files.get_mut(&path).unwrap();
        lines.splice(start - 1..line, replacement);
    }
    let changed = files
        .into_iter()
        .map(|(path, lines)| (path, Some(lines.join("\n") + "\n")))
        .collect();
    (changed, count)
}

fn state_threads(emu: &RunningEmulator) -> Vec<Value> {
    emu.state_json()["pull_requests"][0]["threads"]
        .as_array()
        .unwrap()
        .clone()
}

fn bot_threads(threads: &[Value]) -> Vec<Value> {
    threads
        .iter()
        .filter(|t| t["comments"][0]["author"] == "review-bot")
        .cloned()
        .collect()
}

#[test]
fn embedded_demo_matches_the_directory() {
    let embedded = demo();
    let on_disk = Scenario::load(examples_dir().join("demo")).unwrap();
    assert_eq!(
        embedded.base.keys().collect::<Vec<_>>(),
        on_disk.base.keys().collect::<Vec<_>>()
    );
    assert_eq!(
        embedded.head.keys().collect::<Vec<_>>(),
        on_disk.head.keys().collect::<Vec<_>>()
    );
    assert_eq!(embedded, on_disk);
}

#[test]
fn the_demo_has_what_the_issue_promises() {
    let s = demo();
    let by = |login: &str| s.user(login).unwrap().kind;
    assert_eq!(by("dev"), UserKind::User);
    assert_eq!(by("reviewer"), UserKind::User);
    assert_eq!(by("review-bot"), UserKind::Bot);
    assert_eq!(s.pull_request.author, "dev");
    let auth: Vec<_> = s
        .threads
        .iter()
        .filter(|t| t.path.starts_with("src/auth/"))
        .filter(|t| t.comments[0].body.contains("```suggestion"))
        .collect();
    assert_eq!(auth.len(), 4, "the error-handling cluster");
    let files: std::collections::BTreeSet<&str> = auth.iter().map(|t| t.path.as_str()).collect();
    assert_eq!(files.len(), 4, "across src/auth/");
    let naming = s
        .threads
        .iter()
        .find(|t| t.path == "src/util/strings.sh" && t.comments[0].body.contains("naming"))
        .unwrap();
    assert!(naming.comments[0].body.contains("```suggestion"));
    let question = s
        .threads
        .iter()
        .filter(|t| t.comments[0].body.trim_end().ends_with('?'))
        .count();
    assert_eq!(question, 1);
    assert!(s
        .threads
        .iter()
        .any(|t| t.comments[0].body.contains("only strips spaces")));
    assert!(s.comments[0].body.contains("CHANGELOG.md"));
    assert_eq!(s.checks.len(), 1);
    assert!(s.checks[0].required);
    assert_eq!(s.checks[0].command, "sh tests/run.sh");
    assert_eq!(s.bots.len(), 1);
    assert_eq!(s.bots[0].login, "review-bot");
    assert_eq!(s.bots[0].pattern, "TODO");
    assert!(s.bots[0].body.contains("```suggestion\n```"));
    assert!(s.head["verify.sh"].executable);
}

#[tokio::test]
async fn demo_ci_passes_on_base_and_head_and_fails_on_a_broken_test() {
    let emu = start(demo()).await;
    idle(&emu).await;
    let head = emu.head_sha(42).unwrap();
    assert_eq!(conclusion(&emu, &head).await, "success");

    let base = emu.base_sha(42).unwrap();
    let (status, body) = control(&emu, Method::POST, "ci/run", Some(json!({ "ref": base }))).await;
    assert_eq!(status, 201, "{body}");
    idle(&emu).await;
    assert_eq!(conclusion(&emu, &base).await, "success");

    let strings = file_at(&emu, &head, "src/util/strings.sh")
        .replace("tr '[:upper:]' '[:lower:]'", "tr '[:lower:]' '[:upper:]'");
    let files = BTreeMap::from([("src/util/strings.sh".to_owned(), Some(strings))]);
    let broken = demo_push(&emu, files, "Break lc").await;
    assert_eq!(conclusion(&emu, &broken).await, "failure");
    let runs = demo_check_runs(&emu, &broken).await;
    let text = runs[0]["output"]["text"].as_str().unwrap();
    assert!(text.contains("FAIL - lc lower-cases"), "{text}");
}

#[tokio::test]
async fn demo_suggestions_apply_and_the_bot_asks_for_a_second_round() {
    let emu = start(demo()).await;
    idle(&emu).await;
    let threads = state_threads(&emu);
    assert_eq!(threads.len(), 7);
    assert_eq!(bot_threads(&threads).len(), 1, "only the naming thread");

    // Round 1: every suggestion, applied as GitHub would.
    let (files, applied) = apply_suggestions(&emu, &threads);
    assert_eq!(applied, 5);
    assert_eq!(files.len(), 5);
    let round1 = emu
        .act_push("dev", "feature/login", files, "Apply review suggestions")
        .await
        .unwrap();
    // The bot speaks while CI runs: once the check completes, its comment
    // is already there for a client that re-reads the threads.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let runs = demo_check_runs(&emu, &round1).await;
        if runs.first().is_some_and(|r| r["status"] == "completed") {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "CI never completed");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(bot_threads(&state_threads(&emu)).len(), 2);
    idle(&emu).await;
    assert_eq!(conclusion(&emu, &round1).await, "success");
    let token = file_at(&emu, &round1, "src/auth/token.sh");
    assert!(token.contains("|| return 1\n    # TODO"), "{token}");

    // The suggested TODO drew the bot, on its line, with a suggestion.
    let threads = state_threads(&emu);
    let bots = bot_threads(&threads);
    assert_eq!(bots.len(), 2);
    let todo = &bots[1];
    assert_eq!(todo["path"], "src/auth/token.sh");
    assert_eq!(todo["current_line"], 6);
    assert_eq!(todo["commit"], round1.as_str());
    let hunk = todo["comments"][0]["diff_hunk"].as_str().unwrap();
    assert!(
        hunk.ends_with(
            "+    # TODO: fall back to another entropy source when /dev/urandom is missing"
        ),
        "{hunk}"
    );
    // Threads on lines the fixes rewrote are outdated; the others stayed.
    let by_path_line = |path: &str, line: u64| -> &Value {
        threads
            .iter()
            .find(|t| t["path"] == path && t["original_line"] == line)
            .unwrap()
    };
    assert_eq!(by_path_line("src/auth/login.sh", 5)["outdated"], true);
    assert_eq!(by_path_line("src/auth/session.sh", 12)["outdated"], false);
    assert_eq!(by_path_line("src/auth/session.sh", 12)["current_line"], 12);
    assert_eq!(by_path_line("src/util/strings.sh", 10)["outdated"], false);
    let as_dev = graphql(
        &emu,
        DEV,
        r#"query T { repository(owner: "demo", name: "authkit") { pullRequest(number: 42) {
            reviewThreads(first: 100) { nodes { path line comments(first: 1) { nodes { author { __typename login } } } } } } } }"#,
        json!({}),
    )
    .await;
    let nodes = as_dev["data"]["repository"]["pullRequest"]["reviewThreads"]["nodes"]
        .as_array()
        .unwrap();
    let last = nodes.last().unwrap();
    assert_eq!(
        last["comments"]["nodes"][0]["author"],
        json!({ "__typename": "Bot", "login": "review-bot" })
    );
    assert_eq!(last["line"], 6);

    // Round 2: the bot's suggestion (an empty block) deletes the line.
    let (files, applied) = apply_suggestions(&emu, std::slice::from_ref(todo));
    assert_eq!(applied, 1);
    let round2 = demo_push(&emu, files, "Drop the TODO").await;
    assert_eq!(conclusion(&emu, &round2).await, "success");
    assert!(!file_at(&emu, &round2, "src/auth/token.sh").contains("TODO"));
    assert_eq!(
        bot_threads(&state_threads(&emu)).len(),
        2,
        "no new bot comment"
    );
}
