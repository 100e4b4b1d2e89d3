//! The dashboard in a real headless Chromium (one launch): a run paused
//! for approval is opened from the printed URL, a comment holding
//! `<script>` and `<img onerror>` shows as text and runs nothing, one
//! decision is changed and one reply edited, the run is approved and
//! resumed from the page, and the page follows it to convergence. The
//! emulator's final state then shows the edited reply posted and the
//! changed decision is what the honesty gate checked.

use std::process::Command;

use shepherd_engine::RunStatus;

use crate::browser;
use crate::common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approver_edits_changes_and_approves_in_a_real_browser() {
    let chromium = browser::chromium();
    let node_modules = browser::node_modules();
    let p = paused().await;

    let script_item = p.thread_with("<script>");
    let pending = p.pending();
    // Two other reply-only items: one gets a new decision, one a new reply.
    // (The changed one a review thread, so that resolving it means something.)
    let others: Vec<&String> = pending.iter().filter(|i| **i != script_item).collect();
    let change = (*others
        .iter()
        .find(|i| i.starts_with("PRRT_"))
        .expect("a pending review thread"))
    .clone();
    let edit = (*others
        .iter()
        .find(|i| **i != &change)
        .expect("another pending item"))
    .clone();
    let change_reply = "Reviewed: this does not apply to the code on this branch.";
    let edit_reply = "Edited in the browser: a maintainer decides this one.";

    let shots = std::env::var_os("SHEPHERD_SCREENSHOTS");
    let url = p.server.url();
    let run_id = p.run_id.clone();
    let (script_item2, change2, edit2) = (script_item.clone(), change.clone(), edit.clone());
    let out = tokio::task::spawn_blocking(move || {
        let mut cmd = Command::new("node");
        cmd.arg(browser::script())
            .env("NODE_PATH", &node_modules)
            .env("CHROMIUM", &chromium)
            .env("SHEPHERD_URL", url)
            .env("RUN_ID", run_id)
            .env("SCRIPT_ITEM", script_item2)
            .env("CHANGE_ITEM", change2)
            .env("CHANGE_DECISION", "invalid")
            .env("CHANGE_REPLY", change_reply)
            .env("EDIT_ITEM", edit2)
            .env("EDIT_REPLY", edit_reply);
        if let Some(dir) = shots {
            cmd.env("SCREENSHOTS", dir);
        }
        cmd.output()
    })
    .await
    .unwrap()
    .expect("node runs (the test needs Node.js 20 or later)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the browser script failed:\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains("\"ok\":true"), "{stdout}");

    // The run the page watched converged.
    let outcome = p.resumer.outcome().await;
    assert_eq!(outcome.status, RunStatus::Converged, "{:?}", outcome.reason);

    // The edited reply was posted as typed; the changed decision's reply
    // too, and as `invalid` (resolved after approval) its thread resolved.
    let bodies = p.bodies();
    let posted: Vec<&String> = bodies.iter().filter(|b| b.contains(edit_reply)).collect();
    assert_eq!(posted.len(), 1, "{bodies:#?}");
    assert!(posted[0].contains(&format!("item={edit}")), "{}", posted[0]);
    let changed = p.comments_of(&change);
    assert!(
        changed.iter().any(|c| c.contains(change_reply)),
        "{changed:?}"
    );
    assert!(p.resolved(&change), "an approved `invalid` is resolved");
    if edit.starts_with("PRRT_") {
        assert!(!p.resolved(&edit), "a needs-human thread stays open");
    }

    // The gate checked the approver's decision.
    let gate: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            p.state_dir()
                .run_dir(&p.run_id)
                .unwrap()
                .join("rounds/1/gate.json"),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(gate["approved"][&change], "invalid", "{gate}");
    assert_eq!(gate["approved"][&edit], "needs-human", "{gate}");
    assert_eq!(gate["verdict"]["passed"], true, "{gate}");
    assert!(
        gate["verdict"]["authorized"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| *a == change.as_str()),
        "{gate}"
    );
}
