//! The checks between the fixes and the push, with the scripted agent:
//! validation with one repair attempt, pre-existing failures, fix-validation
//! verdicts, and the pre-push review (refuted and confirmed findings).

use serde_json::{json, Value};
use shepherd_engine::RunStatus;

use crate::common::*;
use crate::test_agents::*;

/// Fixes `src/a.txt` by writing `content` into it.
fn fix_a(lab: &Lab, content: &str) {
    lab.fixer(
        "src/a.txt",
        0,
        json!([{"path": "src/a.txt", "content": content}]),
        "Fixed alpha.",
    );
}

/// One thread on `src/a.txt`, whose fixer breaks the verify command there
/// (writes `BROKEN`).
async fn breaking_fix() -> Lab {
    let lab = Lab::with_threads(vec![thread("src/a.txt", 2, "Fix alpha two.")]).await;
    lab.triage_all("code-change");
    fix_a(&lab, &A_TXT.replace("alpha two", "alpha two BROKEN"));
    lab
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fix_that_breaks_verification_in_its_file_is_repaired_once() {
    let lab = breaking_fix().await;
    lab.script(
        "repair",
        json!({"fix": {"attempts": [[
            {"save_request": lab.path("repair-request.json")},
            {"fix": {"edits": [{"path": "src/a.txt", "content": A_TXT.replace("alpha two", "alpha 2")}],
                     "default": {"status": "fixed", "summary": "repaired", "reply": "Repaired."}}}
        ]]}}),
    );
    let outcome = lab.run("[review]\nenabled = false\n").await;
    assert_eq!(outcome.status, RunStatus::Converged, "{:?}", outcome.reason);
    let repairs = lab.calls_of("repair");
    assert_eq!(repairs.len(), 1, "one repair attempt: {:?}", lab.calls());
    assert_eq!(repairs[0].role, "fix", "a repair is a fix task");
    let validate = read_json(&outcome.run_dir.join("rounds/1/validate.json"));
    assert_eq!(validate["passed"], true, "{validate:#}");
    let attempts = validate["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 2, "{validate:#}");
    assert_eq!(attempts[0]["passed"], false);
    assert_eq!(attempts[0]["blame"], "touched");
    assert_eq!(attempts[0]["files_named"], json!(["src/a.txt"]));
    assert_eq!(attempts[1]["passed"], true);
    assert!(validate["repair"]["commit"].is_string(), "{validate:#}");
    // The repair agent got the failure output.
    let request = read_json(&lab.path("repair-request.json"));
    assert!(request.to_string().contains("contains BROKEN"), "{request}");
    assert_eq!(
        lab.head_file("src/a.txt"),
        A_TXT.replace("alpha two", "alpha 2")
    );
    assert_eq!(lab.thread_on("src/a.txt")["resolved"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fix_that_still_fails_after_its_repair_is_never_pushed() {
    let lab = breaking_fix().await;
    lab.script(
        "repair",
        json!({"fix": {"attempts": [[
            {"fix": {"edits": [{"path": "src/a.txt", "append": "still BROKEN\n"}],
                     "default": {"status": "fixed", "summary": "tried", "reply": "Tried."}}}
        ]]}}),
    );
    let head = lab.setup.emu.head_sha(PR).unwrap();
    let outcome = lab.run("[review]\nenabled = false\n").await;
    assert_eq!(outcome.status, RunStatus::Failed, "{:?}", outcome.reason);
    let reason = outcome.reason.unwrap();
    assert!(
        reason.contains("verify") && reason.contains("refused"),
        "{reason}"
    );
    assert_eq!(
        lab.calls_of("repair").len(),
        1,
        "exactly one repair attempt"
    );
    assert_eq!(lab.setup.emu.head_sha(PR).unwrap(), head, "nothing pushed");
    assert!(
        marker_replies(&lab.setup.pr()).is_empty(),
        "nothing replied"
    );
    let validate = read_json(&outcome.run_dir.join("rounds/1/validate.json"));
    assert_eq!(validate["passed"], false);
    assert_eq!(validate["attempts"].as_array().unwrap().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failure_only_in_untouched_files_is_noted_as_pre_existing() {
    let mut s = project(vec![thread("src/a.txt", 2, "Fix alpha two.")], vec![]);
    s.head.insert(
        "other/legacy.txt".into(),
        shepherd_emulator::FileSpec::text("legacy FAILING\n"),
    );
    let lab = Lab::new(s).await;
    lab.triage_all("code-change");
    fix_a(&lab, &A_TXT.replace("alpha two", "alpha 2"));
    let head = lab.setup.emu.head_sha(PR).unwrap();
    let outcome = lab.run("[review]\nenabled = false\n").await;
    assert_eq!(outcome.status, RunStatus::Failed, "{:?}", outcome.reason);
    assert!(
        lab.calls_of("repair").is_empty(),
        "no repair for a pre-existing failure"
    );
    let validate = read_json(&outcome.run_dir.join("rounds/1/validate.json"));
    let attempts = validate["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 1, "{validate:#}");
    assert_eq!(attempts[0]["blame"], "pre-existing", "{validate:#}");
    assert_eq!(attempts[0]["files_named"], json!(["other/legacy.txt"]));
    assert!(
        validate["note"].as_str().unwrap().contains("pre-existing"),
        "{validate:#}"
    );
    assert!(outcome.reason.unwrap().contains("pre-existing"));
    assert_eq!(
        lab.setup.emu.head_sha(PR).unwrap(),
        head,
        "the hard gate still refuses the push"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fix_judged_not_addressed_is_handed_to_a_person_not_resolved() {
    let lab = Lab::with_threads(vec![thread("src/a.txt", 2, "Fix alpha two.")]).await;
    lab.script(
        "default",
        default_script(
            "code-change",
            json!({"fix-validation": {"attempts": [[{"fix_validation": {"default": {
                "verdict": "not-addressed",
                "reasons": ["the change edits line 5, the comment is about line 2"]
            }}}]]}}),
        ),
    );
    fix_a(&lab, &A_TXT.replace("alpha five", "ALPHA FIVE"));
    let head = lab.setup.emu.head_sha(PR).unwrap();
    let outcome = lab.run("[review]\nenabled = false\n").await;
    assert_handed_off(&outcome);
    let t = lab.thread_on("src/a.txt");
    assert_eq!(t["resolved"], false, "{t}");
    let reply = last_reply(&t);
    assert!(
        reply.contains("fix validation") && reply.contains("line 5"),
        "{reply}"
    );
    assert_eq!(
        lab.setup.emu.head_sha(PR).unwrap(),
        head,
        "the judged fix is not pushed"
    );
    let validate = read_json(&outcome.run_dir.join("rounds/1/validate.json"));
    let verdicts = &validate["fix_validation"][0];
    assert_eq!(verdicts["provider"], "command", "{validate:#}");
    assert_eq!(
        verdicts["verdicts"][0]["verdict"], "not-addressed",
        "{validate:#}"
    );
    let results = read_json(&outcome.run_dir.join("rounds/1/results.json"));
    assert_eq!(results[0]["result"]["outcome"], "needs-human", "{results}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pre_push_review_refutes_one_finding_and_fixes_the_one_that_holds() {
    let lab = Lab::with_threads(vec![thread("src/a.txt", 2, "Fix alpha two.")]).await;
    let finding = |id: &str, severity: &str, confidence: u8, repro: Value| {
        json!({"id": id, "severity": severity, "confidence": confidence,
               "title": format!("finding {id}"), "path": "src/a.txt", "line": 2,
               "explanation": "scripted", "reproduction": repro})
    };
    lab.script(
        "default",
        default_script(
            "code-change",
            json!({
                "review": {"attempts": [[{"review": {"summary": "three findings", "findings": [
                    // Passes as the code stands: refuted, not fixed.
                    finding("F1", "CRITICAL", 90, json!("grep -q 'alpha one' src/a.txt")),
                    // Fails while the bug is there: holds, fixed.
                    finding("F2", "HIGH", 95, json!("! grep -q 'bug here' src/a.txt")),
                    // Below the threshold: noted.
                    finding("F3", "LOW", 99, Value::Null)
                ]}}]]},
                "apply-review": {"attempts": [[
                    {"save_request": lab.path("apply-review-request.json")},
                    {"apply_review": {
                        "edits": [{"path": "src/a.txt", "content": A_TXT.replace("alpha two", "alpha 2")}],
                        "default": {"status": "fixed", "summary": "removed the bug"}
                    }}
                ]]}
            }),
        ),
    );
    fix_a(&lab, &A_TXT.replace("alpha two", "alpha 2 bug here"));
    let base = lab.setup.emu.head_sha(PR).unwrap();
    let outcome = lab.run("").await;
    assert_eq!(outcome.status, RunStatus::Converged, "{:?}", outcome.reason);

    let request = read_json(&lab.path("apply-review-request.json"));
    let ids: Vec<&str> = request["task"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["finding"]["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["F2"], "only the finding that held is fixed");
    assert_eq!(
        lab.head_file("src/a.txt"),
        A_TXT.replace("alpha two", "alpha 2")
    );
    assert_eq!(
        lab.pushed_subjects(&base),
        [
            "shepherd: address review feedback on src/a.txt",
            "shepherd: fix pre-push review findings (F2)"
        ]
    );
    let review = read_json(&outcome.run_dir.join("rounds/1/pre-push-review.json"));
    let fates: Vec<(&str, &str)> = review["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["finding"]["id"].as_str().unwrap(),
                r["fate"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        fates,
        [
            ("F1", "refuted"),
            ("F2", "held-and-fixed"),
            ("F3", "below-threshold")
        ],
        "{review:#}"
    );
    assert_eq!(review["findings"][1]["exit_code"], 1);
    assert_eq!(review["findings"][1]["exit_code_after_fix"], 0);
    let md = read(&outcome.run_dir.join("rounds/1/pre-push-review.md"));
    assert!(
        md.contains("| F1 | CRITICAL | 90 |") && md.contains("refuted"),
        "{md}"
    );
    assert!(md.contains("held, and fixed"), "{md}");
    // The fix commit was verified again before the push.
    let revalidate = read_json(&outcome.run_dir.join("rounds/1/revalidate.json"));
    assert_eq!(revalidate["reused"], false, "{revalidate}");
    assert_eq!(revalidate["passed"], true, "{revalidate}");
    assert_eq!(lab.thread_on("src/a.txt")["resolved"], true);
}
