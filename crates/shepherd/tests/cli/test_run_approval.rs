//! `shepherd run` without a TTY pauses for approval (exit 3); `approve`,
//! `status`, `resume` and `report` continue it.

use crate::common::{assert_honest_end_state, shepherd_replies, Demo};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pause_approve_resume() {
    let Demo { emu, api, sh } = Demo::start().await;
    let (code, out, err) = sh.run_pr(&api, "prompt", &[]);
    assert_eq!(code, 3, "{out}\n{err}");
    assert!(
        shepherd_replies(&emu, 42).is_empty(),
        "nothing is posted before approval"
    );
    let run = sh.latest_run(&api);
    assert!(out.contains(&format!("shepherd resume {run}")), "{out}");

    let (code, out, err) = sh.run_at(&api, &["status", &run, "--json"]);
    assert_eq!(code, 0, "{err}");
    let status: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(status["run"]["status"], "paused", "{status}");
    let pending = status["pending_approvals"].as_array().unwrap();
    assert_eq!(pending.len(), 4, "{status}");
    // The builtin agent's needs-human drafts are not posted by default, and
    // status says so rather than showing them as the reply (issue 28.6).
    assert!(
        pending.iter().all(|a| a["reply_posted"] == false),
        "{status}"
    );
    let (code, out, err) = sh.run_at(&api, &["status", &run]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.matches("reply: none posted (a needs-human item is reported to you only")
            .count(),
        4,
        "{out}"
    );
    let question = pending
        .iter()
        .map(|a| a["item_id"].as_str().unwrap().to_owned())
        .next()
        .unwrap();

    // A --decision without its --thread is bad usage.
    let (code, _, err) = sh.run_at(&api, &["approve", &run, "--decision", "question"]);
    assert_eq!(code, 2, "{err}");
    let (code, out, err) = sh.run_at(
        &api,
        &[
            "approve",
            &run,
            "--thread",
            &question,
            "--decision",
            "question",
            "--reply",
            "Answered by hand.",
        ],
    );
    assert_eq!(code, 0, "{out}\n{err}");

    let (code, out, err) = tokio::task::block_in_place(|| sh.run_at(&api, &["resume", &run]));
    assert_eq!(code, crate::common::HANDED_OFF, "{out}\n{err}");
    assert!(err.contains("Resuming"), "{err}");
    assert_honest_end_state(&emu, 42, 7);
    let state = emu.state_json().to_string();
    assert!(state.contains("Answered by hand."));

    let (code, out, _) = sh.run_at(&api, &["report", &run, "--json"]);
    assert_eq!(code, 0);
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["status"], "handed-off");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reject_marks_the_run_failed_and_posts_nothing() {
    let Demo { emu, api, sh } = Demo::start().await;
    let (code, _, err) = sh.run_pr(&api, "prompt", &[]);
    assert_eq!(code, 3, "{err}");
    let run = sh.latest_run(&api);
    let (code, out, err) = sh.run_at(&api, &["reject", &run]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, _, err) = sh.run_at(&api, &["reject", &run]);
    assert_eq!(code, 2, "nothing is left to reject: {err}");
    assert!(err.contains("nothing awaiting approval"), "{err}");
    let (_, out, _) = sh.run_at(&api, &["status", &run, "--json"]);
    let status: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(status["run"]["status"], "failed");
    let (code, _, err) = tokio::task::block_in_place(|| sh.run_at(&api, &["resume", &run]));
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("rejected"), "{err}");
    assert!(shepherd_replies(&emu, 42).is_empty());
}
