//! Clustering end to end (SPEC section 5): one agent call per cluster, the
//! structural gate (closed: no clustering at all; re-entry within a run and
//! across runs), escalation of an area that keeps drawing feedback, and what
//! `clusters.json` and the report say.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::Value;
use shepherd_agent::{
    Agent, AgentContext, AgentError, BuiltinAgent, FixAnswer, FixTask, TriageAnswer, TriageTask,
};
use shepherd_core::cluster::{escalation_context, AreaKey, ClusterReport};
use shepherd_core::theme::Theme;
use shepherd_emulator::{
    Act, ActThread, BotSpec, FileSpec, Scenario, ThreadCommentSpec, ThreadSpec,
};
use shepherd_engine::{Agents, ProgressEvent, RunOutcome, Stage, Store};

use crate::common::*;

/// One fix call an agent was asked.
#[derive(Debug, Clone)]
struct FixCall {
    ids: Vec<String>,
    brief: Option<String>,
}

/// The builtin provider, recording every call.
#[derive(Default)]
struct Counting {
    triage: Mutex<u32>,
    fixes: Mutex<Vec<FixCall>>,
}

impl Counting {
    fn fixes(&self) -> Vec<FixCall> {
        self.fixes.lock().unwrap().clone()
    }
}

#[async_trait]
impl Agent for Counting {
    fn name(&self) -> &str {
        "builtin"
    }

    async fn triage(
        &self,
        task: &TriageTask,
        ctx: &AgentContext,
    ) -> Result<TriageAnswer, AgentError> {
        *self.triage.lock().unwrap() += 1;
        BuiltinAgent::new().triage(task, ctx).await
    }

    async fn fix(&self, task: &FixTask, ctx: &AgentContext) -> Result<FixAnswer, AgentError> {
        self.fixes.lock().unwrap().push(FixCall {
            ids: task.items.iter().map(|i| i.id.clone()).collect(),
            brief: task.cluster.as_ref().map(|c| c.brief.clone()),
        });
        BuiltinAgent::new().fix(task, ctx).await
    }
}

/// Runs `extra` on `setup` with the counting agent in every role.
async fn run_counting(setup: &Setup, extra: &str) -> (RunOutcome, Arc<Counting>) {
    let counting = Arc::new(Counting::default());
    let agent: Arc<dyn Agent> = counting.clone();
    let mut opts = setup.options();
    opts.agents = Some(Agents {
        triage: agent.clone(),
        fix: agent.clone(),
        cluster_fix: agent,
    });
    let outcome = setup
        .engine_with(opts)
        .start(setup.spec(extra))
        .await
        .expect("the run starts");
    (outcome, counting)
}

fn clusters_json(outcome: &RunOutcome, round: u32) -> Option<ClusterReport> {
    let path = outcome
        .run_dir
        .join(format!("rounds/{round}/clusters.json"));
    path.exists()
        .then(|| serde_json::from_value(read_json(&path)).expect("clusters.json parses"))
}

fn thread_id(pr: &Value, path: &str, root_contains: &str) -> String {
    threads(pr)
        .into_iter()
        .find(|t| {
            t["path"] == path
                && t["comments"][0]["body"]
                    .as_str()
                    .is_some_and(|b| b.contains(root_contains))
        })
        .and_then(|t| t["id"].as_str().map(str::to_owned))
        .unwrap_or_else(|| panic!("no thread on {path} with {root_contains:?}"))
}

fn threads(pr: &Value) -> Vec<Value> {
    pr["threads"].as_array().cloned().unwrap_or_default()
}

fn shepherd_replies(thread: &Value) -> Vec<String> {
    thread["comments"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["body"].as_str())
        .filter(|b| shepherd_core::Marker::find(b).is_some())
        .map(str::to_owned)
        .collect()
}

fn sorted(mut ids: Vec<String>) -> Vec<String> {
    ids.sort();
    ids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_auth_threads_form_one_cluster_fixed_by_one_agent_call() {
    let setup = setup(demo()).await;
    let pr = setup.pr();
    let auth_fixes: Vec<String> = sorted(
        threads(&pr)
            .iter()
            .filter(|t| is_auth_suggestion(t))
            .map(|t| t["id"].as_str().unwrap().to_owned())
            .collect(),
    );
    assert_eq!(auth_fixes.len(), 4, "the demo has four src/auth fixes");

    let (outcome, counting) = run_counting(&setup, "").await;
    assert_handed_off(&outcome);

    // Round 1: nine new items open the gate by volume; the four src/auth
    // error-handling threads form one cluster, everything else is isolated.
    let report = clusters_json(&outcome, 1).expect("round 1 clustered");
    assert!(report.gate.open);
    assert_eq!(
        serde_json::to_value(&report.gate.signals).unwrap(),
        serde_json::json!([{"kind": "volume", "count": 9, "min": 4}])
    );
    assert_eq!(report.clusters.len(), 1, "{report:#?}");
    let cluster = &report.clusters[0];
    assert_eq!(cluster.theme, Theme::ErrorHandling);
    assert_eq!(cluster.area, "src/auth");
    assert_eq!(cluster.item_ids, auth_fixes);
    assert_eq!(
        cluster.files,
        [
            "src/auth/login.sh",
            "src/auth/password.sh",
            "src/auth/session.sh",
            "src/auth/token.sh"
        ]
    );
    assert_eq!(report.isolated.len(), 5, "{report:#?}");
    assert!(report.escalations.is_empty());
    assert_eq!(report.just_fixed_files, None, "round 1 is no re-entry");

    // One agent call for the whole cluster, with the brief and no comment
    // bodies; the isolated naming fix is applied deterministically.
    let fixes = counting.fixes();
    assert_eq!(fixes.len(), 1, "{fixes:#?}");
    assert_eq!(fixes[0].ids, auth_fixes);
    let brief = fixes[0].brief.as_deref().expect("a cluster task");
    assert!(
        brief
            .starts_with("<cluster-brief>\n<theme>error-handling</theme>\n<area>src/auth</area>\n"),
        "{brief}"
    );
    assert!(
        !brief.contains("password_check"),
        "no comment bodies: {brief}"
    );
    assert_eq!(
        brief,
        report.brief(cluster),
        "no <just-fixed-files> in round 1"
    );
    assert_eq!(*counting.triage.lock().unwrap(), 2, "one triage per round");

    // One commit for the cluster, one for the isolated naming thread.
    let results = read_json(&outcome.run_dir.join("rounds/1/results.json"));
    let kinds: Vec<(String, String)> = results
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["result"]["commit"].is_string())
        .map(|r| {
            (
                r["result"]["item_id"].as_str().unwrap().to_owned(),
                r["fix_kind"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    assert_eq!(kinds.len(), 5, "{results:#}");
    for (id, kind) in &kinds {
        let expected = if auth_fixes.contains(id) {
            "cluster"
        } else {
            "suggestion"
        };
        assert_eq!(kind, expected, "{id}");
    }
    assert_eq!(outcome.report.rounds[0].commits, 2);

    // Round 2 re-enters (one new bot comment, below min_volume): the gate
    // opens, and the brief material names the files round 1 fixed.
    let round2 = clusters_json(&outcome, 2).expect("round 2 re-entered");
    assert_eq!(
        serde_json::to_value(&round2.gate.signals).unwrap(),
        serde_json::json!([{"kind": "reentry-within-run"}])
    );
    assert!(round2.clusters.is_empty());
    assert_eq!(round2.isolated.len(), 1);
    assert_eq!(
        round2.just_fixed_files.as_deref(),
        Some(
            &[
                "src/auth/login.sh",
                "src/auth/password.sh",
                "src/auth/session.sh",
                "src/auth/token.sh",
                "src/util/strings.sh"
            ]
            .map(String::from)[..]
        )
    );

    // The report's Clusters section.
    let md = outcome.report.to_markdown();
    assert!(
        md.contains("- error-handling in `src/auth`: 4 items on 4 files"),
        "{md}"
    );
    assert!(md.contains("  - files: `src/auth/login.sh`, `src/auth/password.sh`, `src/auth/session.sh`, `src/auth/token.sh`"), "{md}");
}

/// A shell project whose `src/store/` draws error-handling feedback: two
/// reviewer threads with suggestions, and a bot that, after every push,
/// asks for more error handling on each changed `|| return 1` line (with a
/// suggestion the builtin agent can apply).
fn store_scenario(bot: bool) -> Scenario {
    let mut s = demo();
    s.threads.clear();
    s.reviews.clear();
    s.comments.clear();
    s.bots.clear();
    for check in &mut s.checks {
        check.delay_ms = 400;
    }
    s.head.insert(
        "src/store/db.sh".into(),
        FileSpec::text(
            r#"#!/bin/sh
# The record store: one file per key under $DB_DIR.

db_put() { # KEY VALUE
    printf '%s\n' "$2" > "$DB_DIR/$1"
}

db_get() { # KEY
    cat "$DB_DIR/$1"
}
"#,
        ),
    );
    s.head.insert(
        "src/store/cache.sh".into(),
        FileSpec::text(
            r#"#!/bin/sh
# A copy of the store's records under $CACHE_DIR.

cache_fill() { # KEY
    cp "$DB_DIR/$1" "$CACHE_DIR/$1"
}
"#,
        ),
    );
    s.head.insert(
        "tests/run.sh".into(),
        FileSpec::text(
            r#"#!/bin/sh
# The test suite: every script parses.
cd "$(dirname "$0")/.." || exit 2
for f in src/*/*.sh; do
    sh -n "$f" || { echo "FAIL - $f"; exit 1; }
done
echo ok
"#,
        ),
    );
    s.threads.push(ThreadSpec::new(
        "src/store/db.sh",
        5,
        vec![ThreadCommentSpec::new(
            "reviewer",
            r#"If the write fails (no `$DB_DIR`, a full disk), `db_put` still succeeds and the caller believes the record is stored. Stop on failure:

```suggestion
    printf '%s\n' "$2" > "$DB_DIR/$1" || return 1
```"#,
        )],
    ));
    s.threads.push(ThreadSpec::new(
        "src/store/cache.sh",
        5,
        vec![ThreadCommentSpec::new(
            "reviewer",
            r#"If the copy fails, the cache silently misses the record and the error is lost. Stop on failure:

```suggestion
    cp "$DB_DIR/$1" "$CACHE_DIR/$1" || return 1
```"#,
        )],
    ));
    if bot {
        let mut rule = BotSpec::new(
            "review-bot",
            r"\|\| return 1",
            "_Potential issue_: when this command fails, the error is returned without a message \
             and the caller cannot tell why. Handle the error here:\n\n```suggestion\n{text} # error handled by the caller\n```",
        );
        rule.path = Some("src/store/**".into());
        rule.delay_ms = 100;
        s.bots.push(rule);
    }
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_area_that_keeps_drawing_feedback_is_escalated_after_two_fix_rounds() {
    let setup = setup(store_scenario(true)).await;
    let (outcome, counting) = run_counting(&setup, "").await;
    let md = outcome.report.to_markdown();
    assert_handed_off(&outcome);
    assert_eq!(outcome.report.rounds.len(), 3, "{md}");

    // Round 1: two items, no re-entry: the gate stays closed.
    assert!(clusters_json(&outcome, 1).is_none());
    // Round 2: the bot's two comments re-enter; one cluster, fixed by one
    // agent call; round 1's fixed files go with it.
    let round2 = clusters_json(&outcome, 2).expect("round 2 re-entered");
    assert_eq!(
        serde_json::to_value(&round2.gate.signals).unwrap(),
        serde_json::json!([{"kind": "reentry-within-run"}])
    );
    assert_eq!(round2.clusters.len(), 1, "{round2:#?}");
    assert_eq!(round2.clusters[0].theme, Theme::ErrorHandling);
    assert_eq!(round2.clusters[0].area, "src/store");
    assert!(round2.escalations.is_empty(), "one fix round is not enough");
    assert_eq!(
        round2.just_fixed_files.as_deref(),
        Some(&["src/store/cache.sh", "src/store/db.sh"].map(String::from)[..])
    );
    let fixes = counting.fixes();
    assert_eq!(fixes.len(), 1, "one cluster fix, in round 2: {fixes:#?}");
    assert_eq!(fixes[0].ids, round2.clusters[0].item_ids);
    // The agent got the brief clusters.json describes, with the files round
    // 1 fixed.
    let brief = fixes[0].brief.as_deref().expect("a cluster task");
    assert_eq!(brief, round2.brief(&round2.clusters[0]));
    assert!(
        brief.ends_with(
            "<just-fixed-files>\nsrc/store/cache.sh\nsrc/store/db.sh\n</just-fixed-files>\n</cluster-brief>\n"
        ),
        "{brief}"
    );
    assert_eq!(outcome.report.rounds[1].commits, 1);

    // Round 3: the area was fixed and drew new feedback twice: escalated.
    let round3 = clusters_json(&outcome, 3).expect("round 3 re-entered");
    assert_eq!(round3.escalations.len(), 1, "{round3:#?}");
    let escalation = &round3.escalations[0];
    let context =
        "several rounds of feedback on error-handling in src/store suggest a deeper issue";
    assert_eq!(escalation.context, context);
    assert_eq!(
        escalation.context,
        escalation_context(&AreaKey::new(Theme::ErrorHandling, "src/store"))
    );
    assert_eq!(escalation.rounds, 2);
    assert_eq!(outcome.report.rounds[2].commits, 0, "no more patches");
    assert!(outcome.report.rounds[2].pushed.is_none());

    // On the forge: the escalated threads are open, replied to once each
    // with the context; every earlier thread was fixed and resolved.
    let pr = setup.pr();
    assert_no_duplicate_replies(&pr);
    assert_resolves_authorized(&pr);
    let all = threads(&pr);
    assert_eq!(
        all.len(),
        6,
        "2 reviewer threads and 2 bot comments per push"
    );
    for thread in &all {
        let id = thread["id"].as_str().unwrap().to_owned();
        let replies = shepherd_replies(thread);
        assert_eq!(replies.len(), 1, "{thread:#}");
        if escalation.item_ids.contains(&id) {
            assert_eq!(thread["resolved"], false, "{thread:#}");
            assert!(replies[0].contains(context), "{}", replies[0]);
        } else {
            assert_eq!(thread["resolved"], true, "{thread:#}");
            assert!(!replies[0].contains(context), "{}", replies[0]);
        }
    }
    assert_eq!(escalation.item_ids.len(), 2);

    // The report says so.
    let report = &outcome.report;
    assert_eq!(report.escalations.len(), 1);
    assert!(
        md.contains("- error-handling in `src/store`: 2 items on 2 files (escalated: not patched)"),
        "{md}"
    );
    assert!(
        md.contains(&format!("- {context} (after 2 fix rounds)")),
        "{md}"
    );
    let needs_human: Vec<&str> = report
        .outcomes
        .iter()
        .filter(|g| g.outcome == Some(shepherd_core::Outcome::NeedsHuman))
        .flat_map(|g| g.items.iter().map(|i| i.item_id.as_str()))
        .collect();
    assert_eq!(
        sorted(needs_human.iter().map(|s| (*s).to_owned()).collect()),
        escalation.item_ids
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_unrelated_items_never_open_the_gate_and_a_later_run_re_enters() {
    let mut s = store_scenario(false);
    s.threads.truncate(1);
    s.threads.push(ThreadSpec::new(
        "README.md",
        1,
        vec![ThreadCommentSpec::new(
            "reviewer",
            "The title should say what authkit is for, not only its name.",
        )],
    ));
    s.threads.push(ThreadSpec::new(
        "tests/run.sh",
        4,
        vec![ThreadCommentSpec::new(
            "reviewer",
            "Should the suite also run the functions, not only parse the scripts?",
        )],
    ));
    let setup = setup(s).await;
    let (first, _) = run_counting(&setup, "").await;
    assert_handed_off(&first);
    assert_eq!(first.report.rounds.len(), 1);
    assert_eq!(first.report.rounds[0].new_items, 3);
    assert_eq!(first.report.rounds[0].commits, 1);

    // A closed gate: no clusters.json, no clustering event, no progress line.
    assert!(!first.run_dir.join("rounds/1/clusters.json").exists());
    let store = Store::open_in(&setup.state_dir()).unwrap();
    let events = store.events(&first.run_id).unwrap();
    assert!(
        events.iter().any(|e| e.payload["stage"] == "triage"),
        "the stages before it are recorded: {events:#?}"
    );
    let clustering: Vec<_> = events
        .iter()
        .filter(|e| e.kind.contains("cluster") || e.payload["stage"] == "cluster")
        .collect();
    assert!(clustering.is_empty(), "{clustering:#?}");
    let progress = setup.events.lock().unwrap().clone();
    assert!(!progress.iter().any(|e| matches!(
        e,
        ProgressEvent::Stage {
            stage: Stage::Cluster,
            ..
        }
    )));
    assert!(first.report.clusters.is_empty());
    assert!(first
        .report
        .to_markdown()
        .contains("## Clusters\n\nNo cluster was formed.\n"));

    // One new item later, a new run of the PR: fixes from the earlier run
    // open the gate below min_volume, and name the files they changed.
    let pr = setup.pr();
    let fixed = thread_id(&pr, "src/store/db.sh", "If the write fails");
    setup
        .emu
        .act(Act::Review {
            user: "reviewer".into(),
            pr: None,
            event: None,
            body: None,
            threads: vec![ActThread::new(
                "src/store/cache.sh",
                5,
                "If the copy fails, the error is lost. Stop on failure:\n\n```suggestion\n    cp \"$DB_DIR/$1\" \"$CACHE_DIR/$1\" || return 1\n```",
            )],
        })
        .await
        .unwrap();
    let (second, _) = run_counting(&setup, "").await;
    // What the first run handed to a person still waits for one.
    assert_handed_off(&second);
    assert_eq!(
        second.report.waiting_for_a_person(),
        first.report.waiting_for_a_person()
    );
    let report = clusters_json(&second, 1).expect("the second run re-entered");
    assert!(report.gate.open);
    assert_eq!(
        serde_json::to_value(&report.gate.signals).unwrap(),
        serde_json::json!([{"kind": "reentry-across-runs"}])
    );
    assert_eq!(report.isolated.len(), 1);
    assert_eq!(
        report.just_fixed_files.as_deref(),
        Some(&["src/store/db.sh".to_owned()][..])
    );
    // The earlier run's fix is not handled again.
    let pr = setup.pr();
    let thread = threads(&pr)
        .into_iter()
        .find(|t| t["id"] == fixed.as_str())
        .unwrap();
    assert_eq!(shepherd_replies(&thread).len(), 1);
    assert_no_duplicate_replies(&pr);
}
