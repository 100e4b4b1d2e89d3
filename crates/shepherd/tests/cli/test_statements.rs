//! What the CLI prints is true and safe (issue 11): forge text with
//! control or bidi characters is shown with visible escapes, and a changed
//! decision needs its own reply.

use shepherd_emulator::{FileSpec, ThreadCommentSpec, ThreadSpec};

use crate::common::{scenario, shepherd_replies, Demo, AUTHOR};

const EVIL_PATH: &str = "src/\u{1b}[2J\u{7}evil\u{202e}txt.rs";

fn raw_controls(text: &str) -> Vec<char> {
    text.chars()
        .filter(|c| *c != '\n' && shepherd_core::escape::is_unsafe(*c))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn control_characters_in_paths_are_escaped_in_every_output() {
    let mut s = scenario(1, 1);
    s.head
        .insert(EVIL_PATH.into(), FileSpec::text("fn x() {}\n"));
    s.threads.push(ThreadSpec::new(
        EVIL_PATH,
        1,
        vec![ThreadCommentSpec::new("reviewer", "Why this file?")],
    ));
    let Demo { emu: _emu, api, sh } = Demo::with(s).await;
    let run = |args: &[&str]| {
        let out = sh
            .run_cmd(&api, args)
            .env("GITHUB_TOKEN", AUTHOR)
            .output()
            .expect("shepherd runs");
        (
            crate::common::text(&out.stdout),
            crate::common::text(&out.stderr),
        )
    };
    let (out, err) = tokio::task::block_in_place(|| {
        run(&["run", "7", "--repo", "acme/widgets", "--approve", "prompt"])
    });
    for text in [&out, &err] {
        assert!(raw_controls(text).is_empty(), "raw controls in:\n{text}");
    }
    assert!(out.contains("evil\\u{202e}txt.rs"), "{out}\n{err}");
    let (out, err) = run(&["status", "--json"]);
    let runs: serde_json::Value = serde_json::from_str(&out).expect(&err);
    let id = runs[0]["run_id"].as_str().unwrap().to_owned();
    let (out, _) = run(&["threads", "7", "--repo", "acme/widgets"]);
    assert!(out.contains("evil\\u{202e}txt.rs"), "{out}");
    for args in [
        vec!["threads", "7", "--repo", "acme/widgets"],
        vec!["report", id.as_str()],
        vec!["status", id.as_str()],
        vec!["status"],
    ] {
        let (out, err) = run(&args);
        for text in [&out, &err] {
            assert!(
                raw_controls(text).is_empty(),
                "{args:?}: raw controls in:\n{text}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approve_refuses_a_changed_decision_without_its_reply() {
    let Demo { emu, api, sh } = Demo::start().await;
    let (code, out, err) = sh.run_pr(&api, "prompt", &[]);
    assert_eq!(code, 3, "{out}\n{err}");
    let run = sh.latest_run(&api);
    let (_, out, _) = sh.run_at(&api, &["status", &run, "--json"]);
    let status: serde_json::Value = serde_json::from_str(&out).unwrap();
    let item = status["pending_approvals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["decision"] == "needs-human")
        .map(|a| a["item_id"].as_str().unwrap().to_owned())
        .expect("a needs-human item");

    let (code, out, err) = sh.run_at(
        &api,
        &["approve", &run, "--thread", &item, "--decision", "invalid"],
    );
    assert_eq!(code, 2, "{out}\n{err}");
    assert!(err.contains("--reply"), "{err}");
    let (_, out, _) = sh.run_at(&api, &["status", &run, "--json"]);
    let status: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        status["pending_approvals"].as_array().unwrap().len(),
        4,
        "nothing was approved: {status}"
    );
    assert!(shepherd_replies(&emu, 42).is_empty(), "nothing posted");
}
