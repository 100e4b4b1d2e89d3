//! The demo on GitLab: the same files, threads, CI and bot as the GitHub
//! demo, with GitLab's suggestion syntax; its suggestions apply with
//! GitLab's semantics (checked with `shepherd_core::suggestion`), CI passes
//! after each round, and the bot's own suggestion draws a second round.

use std::collections::BTreeMap;

use serde_json::Value;
use shepherd_core::suggestion::{extract_suggestions, Suggestion};
use shepherd_emulator::{EmulatedForge, RunningEmulator, Scenario};

use crate::common::*;

const DEV: &str = "emu_dev_token";
const PROJECT: &str = "demo%2Fauthkit";

fn mr(tail: &str) -> String {
    format!("/projects/{PROJECT}/merge_requests/42{tail}")
}

#[test]
fn the_gitlab_demo_is_the_demo_with_gitlabs_suggestions() {
    let github = Scenario::demo().unwrap();
    let gitlab = Scenario::demo_gitlab().unwrap();
    assert_eq!(Scenario::demo_for(EmulatedForge::GitHub).unwrap(), github);
    assert_eq!(Scenario::demo_for(EmulatedForge::GitLab).unwrap(), gitlab);
    assert_eq!(github.forge, EmulatedForge::GitHub);
    assert_eq!(gitlab.forge, EmulatedForge::GitLab);
    assert_eq!((&gitlab.base, &gitlab.head), (&github.base, &github.head));
    assert_eq!(gitlab.comments, github.comments);
    assert_eq!(gitlab.checks, github.checks);
    assert_eq!(gitlab.threads.len(), github.threads.len());
    let mut suggestions = 0;
    for (gh, gl) in github.threads.iter().zip(&gitlab.threads) {
        assert_eq!(
            (&gh.path, gh.line, gh.start_line),
            (&gl.path, gl.line, gl.start_line)
        );
        let line = gh.line.unwrap();
        let start = gh.start_line.unwrap_or(line);
        let ours = extract_suggestions(&gh.comments[0].body);
        let theirs = extract_suggestions(&gl.comments[0].body);
        assert_eq!(ours.len(), theirs.len(), "{}", gl.comments[0].body);
        for (ours, theirs) in ours.iter().zip(&theirs) {
            suggestions += 1;
            assert!(ours.is_range());
            let Suggestion::Relative {
                above,
                below,
                lines,
            } = theirs
            else {
                panic!("not GitLab's form: {}", gl.comments[0].body);
            };
            assert_eq!((*above, *below), (line - start, 0));
            assert_eq!(lines, ours.lines());
            assert_eq!(theirs.effective_range(start, line), Some((start, line)));
        }
    }
    assert_eq!(suggestions, 5);
    let bot = extract_suggestions(&gitlab.bots[0].body);
    assert_eq!(
        bot,
        [Suggestion::Relative {
            above: 0,
            below: 0,
            lines: vec![]
        }]
    );
    assert!(gitlab.bots[0].body.contains("```suggestion:-0+0\n```"));

    // `forge` in scenario.toml.
    let text = format!(
        "forge = \"gitlab\"\n{}",
        std::fs::read_to_string(examples_dir().join("demo/scenario.toml")).unwrap()
    );
    assert_eq!(
        Scenario::from_toml(&text).unwrap().forge,
        EmulatedForge::GitLab
    );
    let err = Scenario::from_toml(&text.replace("\"gitlab\"", "\"bitbucket\""))
        .unwrap_err()
        .to_string();
    assert!(err.contains("bitbucket") && err.contains("gitlab"), "{err}");
}

/// Every suggestion of `threads` (GitLab discussions) applied with GitLab's
/// semantics: the range `effective_range(start, line)` of the note's
/// position is replaced. Returns the changed files and how many applied.
fn apply(emu: &RunningEmulator, threads: &[Value]) -> (BTreeMap<String, Option<String>>, usize) {
    let head = emu.head_sha(42).unwrap();
    let mut files: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut edits = Vec::new();
    for thread in threads {
        let note = &thread["notes"][0];
        let suggestions = extract_suggestions(note["body"].as_str().unwrap());
        let Some(suggestion) = suggestions.first() else {
            continue;
        };
        assert!(!suggestion.is_range(), "GitLab's form: {}", note["body"]);
        let position = &note["position"];
        assert_eq!(position["head_sha"], head.as_str(), "current");
        let path = position["new_path"].as_str().unwrap().to_owned();
        let line = position["new_line"].as_u64().unwrap() as u32;
        let start = position["line_range"]["start"]["new_line"]
            .as_u64()
            .map_or(line, |s| s as u32);
        let (from, to) = suggestion.effective_range(start, line).unwrap();
        assert_eq!((from, to), (start, line), "the range the thread covers");
        files.entry(path.clone()).or_insert_with(|| {
            file_at(emu, &head, &path)
                .lines()
                .map(str::to_owned)
                .collect()
        });
        edits.push((
            path,
            from as usize,
            to as usize,
            suggestion.lines().to_vec(),
        ));
    }
    let count = edits.len();
    // Later lines first, so that earlier ranges keep their numbers.
    edits.sort_by(|a, b| (&b.0, b.1).cmp(&(&a.0, a.1)));
    for (path, from, to, lines) in edits {
        files.get_mut(&path).unwrap().splice(from - 1..to, lines);
    }
    let changed = files
        .into_iter()
        .map(|(path, lines)| (path, Some(lines.join("\n") + "\n")))
        .collect();
    (changed, count)
}

async fn pipeline_status(emu: &RunningEmulator, sha: &str) -> String {
    let pipelines = gl_get(
        emu,
        &format!("/projects/{PROJECT}/pipelines?sha={sha}"),
        DEV,
    )
    .await;
    pipelines[0]["status"].as_str().unwrap().to_owned()
}

async fn demo_threads(emu: &RunningEmulator) -> Vec<Value> {
    let all = gl_get(emu, &mr("/discussions?per_page=100"), DEV).await;
    all.as_array()
        .unwrap()
        .iter()
        .filter(|d| d["individual_note"] == false)
        .cloned()
        .collect()
}

fn bot_threads(threads: &[Value]) -> Vec<Value> {
    threads
        .iter()
        .filter(|t| t["notes"][0]["author"]["username"] == "review-bot")
        .cloned()
        .collect()
}

#[tokio::test]
async fn gitlab_demo_suggestions_apply_and_the_bot_asks_for_a_second_round() {
    let emu = start(Scenario::demo_gitlab().unwrap()).await;
    idle(&emu).await;
    let head = emu.head_sha(42).unwrap();
    assert_eq!(pipeline_status(&emu, &head).await, "success");
    let mr_json = gl_get(&emu, &mr(""), DEV).await;
    assert_eq!(mr_json["author"]["username"], "dev");
    let items = gl_get(&emu, &mr("/discussions?per_page=100"), DEV).await;
    let individual: Vec<&Value> = items
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["individual_note"] == true)
        .collect();
    // The reviewer's review summary and the CHANGELOG request.
    assert_eq!(individual.len(), 2);
    assert!(individual[1]["notes"][0]["body"]
        .as_str()
        .unwrap()
        .contains("CHANGELOG.md"));

    let threads = demo_threads(&emu).await;
    assert_eq!(threads.len(), 7);
    let (files, applied) = apply(&emu, &threads);
    assert_eq!((applied, files.len()), (5, 5));
    let round1 = demo_push(&emu, files, "Apply review suggestions").await;
    assert_eq!(pipeline_status(&emu, &round1).await, "success");
    let token = file_at(&emu, &round1, "src/auth/token.sh");
    assert!(token.contains("|| return 1\n    # TODO"), "{token}");

    // The suggested TODO drew the bot, with GitLab's suggestion.
    let threads = demo_threads(&emu).await;
    let bots = bot_threads(&threads);
    assert_eq!(bots.len(), 2);
    let todo = &bots[1]["notes"][0];
    assert_eq!(todo["position"]["new_path"], "src/auth/token.sh");
    assert_eq!(todo["position"]["new_line"], 6);
    assert!(todo["body"]
        .as_str()
        .unwrap()
        .contains("```suggestion:-0+0\n```"));

    // Round 2: the bot's suggestion deletes the line.
    let (files, applied) = apply(&emu, std::slice::from_ref(&bots[1]));
    assert_eq!(applied, 1);
    let round2 = demo_push(&emu, files, "Drop the TODO").await;
    assert_eq!(pipeline_status(&emu, &round2).await, "success");
    assert!(!file_at(&emu, &round2, "src/auth/token.sh").contains("TODO"));
    assert_eq!(
        bot_threads(&demo_threads(&emu).await).len(),
        2,
        "no new bot comment"
    );
}

#[tokio::test]
async fn the_gitlab_example_scenario_loads_and_serves() {
    let scenario = Scenario::load(examples_dir().join("gitlab")).unwrap();
    assert_eq!(scenario.forge, EmulatedForge::GitLab);
    let emu = start(scenario).await;
    idle(&emu).await;
    const ALICE_TOKEN: &str = "emu_alice_token";
    let mr = gl_get(
        &emu,
        "/projects/acme%2Ftools%2Fgreeter/merge_requests/7",
        ALICE_TOKEN,
    )
    .await;
    assert_eq!(mr["title"], "Add custom greetings and greet_all");
    assert_eq!(
        mr["head_pipeline"]["status"], "success",
        "strict-shell may fail"
    );
    let pipeline = mr["head_pipeline"]["id"].as_u64().unwrap();
    let jobs = gl_get(
        &emu,
        &format!("/projects/acme%2Ftools%2Fgreeter/pipelines/{pipeline}/jobs"),
        ALICE_TOKEN,
    )
    .await;
    let statuses: BTreeMap<&str, (&str, bool)> = jobs
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["name"].as_str().unwrap(),
                (
                    j["status"].as_str().unwrap(),
                    j["allow_failure"].as_bool().unwrap(),
                ),
            )
        })
        .collect();
    assert_eq!(
        statuses,
        BTreeMap::from([
            ("strict-shell", ("failed", true)),
            ("tests", ("success", false))
        ])
    );
    let all = gl_get(
        &emu,
        "/projects/acme%2Ftools%2Fgreeter/merge_requests/7/discussions",
        ALICE_TOKEN,
    )
    .await;
    let threads: Vec<&Value> = all
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["individual_note"] == false)
        .collect();
    assert_eq!(threads.len(), 3);
    let note = &threads[0]["notes"][0];
    let position = &note["position"];
    assert_eq!(position["line_range"]["start"]["new_line"], 3);
    assert_eq!(position["new_line"], 5);
    let suggestion = &extract_suggestions(note["body"].as_str().unwrap())[0];
    assert_eq!(suggestion.effective_range(3, 5), Some((3, 5)));
    assert_eq!(threads[2]["notes"][0]["resolved"], true);
}
