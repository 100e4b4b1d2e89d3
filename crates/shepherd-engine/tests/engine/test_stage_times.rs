//! The stage times of `run.json` and the report (issue 28 point 6): the
//! time a paused round waits for the user's approval is a wait of its own,
//! named so, never the time of the stage the resume runs first.

use std::time::Duration;

use serde_json::Value;
use shepherd_engine::{approve_run, RunStatus};

use crate::common::*;

/// How long the user takes to approve: longer than any stage of the demo
/// against the emulator takes.
const WAIT_MS: u64 = 2_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_wait_is_its_own_time_not_pr_states() {
    let setup = setup_on(ForgeKind::GitHub, demo()).await;
    let outcome = setup.run("[approve]\nmode = \"prompt\"\n").await;
    assert_eq!(outcome.status, RunStatus::Paused, "{:?}", outcome.reason);
    tokio::time::sleep(Duration::from_millis(WAIT_MS)).await;
    approve_run(&setup.state_dir(), &outcome.run_id, &[], "tester").unwrap();
    let resumed = setup.engine().resume(&outcome.run_id).await.unwrap();
    assert_handed_off(&resumed);

    let run = read_json(&resumed.run_dir.join("run.json"));
    let first = run["rounds"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["number"] == 1)
        .unwrap();
    let times: Vec<(&str, u64)> = first["stage_times"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["stage"].as_str().unwrap(), t["ms"].as_u64().unwrap()))
        .collect();
    let waits: Vec<u64> = times
        .iter()
        .filter(|(stage, _)| *stage == "approval wait")
        .map(|(_, ms)| *ms)
        .collect();
    assert_eq!(waits.len(), 1, "{times:?}");
    assert!(waits[0] >= WAIT_MS, "{times:?}");
    // The round ran its first stages twice (before the pause and after the
    // resume), each as long as it took.
    let pr_state: Vec<u64> = times
        .iter()
        .filter(|(stage, _)| *stage == "pr-state")
        .map(|(_, ms)| *ms)
        .collect();
    assert_eq!(pr_state.len(), 2, "{times:?}");
    assert!(pr_state.iter().all(|ms| *ms < WAIT_MS), "{times:?}");
    // The order: the approval that paused, the wait, then the resumed round.
    let at = times
        .iter()
        .position(|(s, _)| *s == "approval wait")
        .unwrap();
    assert_eq!(times[at - 1].0, "approval", "{times:?}");
    assert_eq!(times[at + 1].0, "pr-state", "{times:?}");

    // The report says it as run.json does.
    let report = std::fs::read_to_string(resumed.run_dir.join("report.md")).unwrap();
    assert!(report.contains("approval wait "), "{report}");
    let json: Value = read_json(&resumed.run_dir.join("report.json"));
    assert!(json.to_string().contains("approval wait"), "{json}");
}
