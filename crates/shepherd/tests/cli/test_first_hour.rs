//! Issue 13, "the first hour": what a new user sees, from the demo to a real PR.

use crate::common::{assert_honest_end_state, shepherd_replies, start_demo, Shepherd};

/// Point 2: with the builtin agent, the items it cannot judge are reported
/// to the user (progress, report), not answered on the forge with
/// boilerplate; `--reply-needs-human` posts the drafted reply.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn items_shepherd_cannot_judge_are_reported_not_answered() {
    let emu = start_demo().await;
    let api = emu.api_url();
    let sh = Shepherd::new();
    let (code, out, err) = tokio::task::block_in_place(|| {
        sh.run_at(
            &api,
            &["run", "42", "--repo", "demo/authkit", "--approve", "auto"],
        )
    });
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        err.contains("4 needing your decision reported to you, not answered on the forge"),
        "{err}"
    );
    assert!(out.contains("## Needs your decision (4)"), "{out}");
    assert!(
        !emu.state_json()
            .to_string()
            .contains("needs a maintainer's decision"),
        "no boilerplate on the forge"
    );
    // The six fixes are answered, nothing else.
    assert_honest_end_state(&emu, 42, 6);

    let emu = start_demo().await;
    let api = emu.api_url();
    let sh = Shepherd::new();
    let (code, out, err) = tokio::task::block_in_place(|| {
        sh.run_at(
            &api,
            &[
                "run",
                "42",
                "--repo",
                "demo/authkit",
                "--approve",
                "auto",
                "--reply-needs-human",
            ],
        )
    });
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(!out.contains("## Needs your decision"), "{out}");
    assert_eq!(shepherd_replies(&emu, 42).len(), 10);
}
