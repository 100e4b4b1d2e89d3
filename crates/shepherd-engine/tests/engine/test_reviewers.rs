//! Reviewers settle (issue 27): a run waits after CI for the reviewers it
//! waits for to review the head it pushed, on both forges, against the
//! emulator's bot profiles (CodeRabbit's status, a rate limit with its
//! notice, a bot that only reviews when asked, one that never shows).

use serde_json::Value;
use shepherd_emulator::BotProfile;

use crate::common::*;

/// The demo with its review bot behaving as CodeRabbit, reviewing each push
/// `delay_ms` after it (longer than the demo's CI).
fn slow_coderabbit(delay_ms: u64) -> shepherd_emulator::Scenario {
    let mut s = demo();
    let bot = &mut s.bots[0];
    bot.profile = BotProfile::Coderabbit;
    bot.delay_ms = delay_ms;
    s
}

/// The threads the review bot opened on the PR.
fn bot_threads(pr: &Value) -> Vec<&Value> {
    pr["threads"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| {
            t["comments"][0]["author"]
                .as_str()
                .is_some_and(|a| a.starts_with("review-bot"))
        })
        .collect()
}

fn reviewers_json(outcome: &shepherd_engine::RunOutcome, round: usize) -> Value {
    read_json(
        &outcome
            .run_dir
            .join("rounds")
            .join(round.to_string())
            .join("reviewers.json"),
    )
}

/// The bot reviews Shepherd's push 3 s after it, long after CI passed: the
/// run waits for its status, and its TODO thread is handled (fixed, replied
/// to) by the next round before the run ends.
async fn a_bot_slower_than_ci_has_its_feedback_handled(forge: ForgeKind) {
    let setup = setup_on(forge, slow_coderabbit(3000)).await;
    let outcome = setup
        .run("[reviewers]\nwait_for = [\"review-bot\"]\nsettle_timeout_secs = 60\n")
        .await;
    let round1 = reviewers_json(&outcome, 1);
    assert_eq!(round1["wait_for"][0], "review-bot", "{round1}");
    assert_eq!(round1["reviewers"][0]["state"], "reviewed", "{round1}");
    assert!(
        round1["waited_ms"].as_u64().unwrap() >= 1000,
        "it waited: {round1}"
    );
    let pr = setup.pr();
    let threads = bot_threads(&pr);
    assert!(!threads.is_empty(), "the bot found the TODO: {pr}");
    for thread in threads {
        let last = thread["comments"].as_array().unwrap().last().unwrap();
        assert!(
            shepherd_core::Marker::find(last["body"].as_str().unwrap()).is_some(),
            "the bot's late thread was answered before the run ended: {thread}"
        );
    }
    let last = outcome.report.reviewers.last().expect("reviewers reported");
    assert!(last.reviewed(), "{last:?}");
    assert!(
        !outcome
            .report
            .review_threads
            .summary
            .contains("did not review"),
        "{}",
        outcome.report.review_threads.summary
    );
    setup.assert_clean();
}
both_forges!(a_bot_slower_than_ci_has_its_feedback_handled);

/// A rate-limited bot declines: the run does not wait out the timeout, and
/// ends saying so, never "Review threads clear: yes".
async fn a_rate_limited_bot_ends_the_run_with_the_statement(forge: ForgeKind) {
    let mut s = slow_coderabbit(300);
    s.bots[0].rate_limit_after = Some(0);
    let setup = setup_on(forge, s).await;
    let outcome = setup
        .run("[reviewers]\nwait_for = [\"review-bot\"]\nsettle_timeout_secs = 60\n")
        .await;
    let round1 = reviewers_json(&outcome, 1);
    assert_eq!(round1["reviewers"][0]["state"], "declined", "{round1}");
    assert!(round1["waited_ms"].as_u64().unwrap() < 50_000, "{round1}");
    let summary = &outcome.report.review_threads.summary;
    assert!(summary.contains("review-bot did not review"), "{summary}");
    assert!(
        summary.contains("rate limited, next review in 30 min"),
        "{summary}"
    );
    let md = outcome.report.to_markdown();
    assert!(!md.contains("Review threads clear: yes"), "{md}");
}
both_forges!(a_rate_limited_bot_ends_the_run_with_the_statement);

/// A reviewer that never shows is not-seen after the timeout, said in words.
async fn a_reviewer_that_never_shows_is_not_seen(forge: ForgeKind) {
    let setup = setup_on(forge, demo()).await;
    let outcome = setup
        .run("[loop]\nmax_rounds = 1\non_exhaust = \"fail\"\n[reviewers]\nwait_for = [\"ghost-bot\"]\nsettle_timeout_secs = 2\n")
        .await;
    let round1 = reviewers_json(&outcome, 1);
    assert_eq!(round1["reviewers"][0]["login"], "ghost-bot", "{round1}");
    assert_eq!(round1["reviewers"][0]["state"], "not-seen", "{round1}");
    let summary = &outcome.report.review_threads.summary;
    assert!(summary.contains("ghost-bot did not review"), "{summary}");
    assert!(summary.contains("within 2 s"), "{summary}");
}
both_forges!(a_reviewer_that_never_shows_is_not_seen);

/// A bot that reviews only when asked gets the trigger comment once per
/// head, after the grace period, and then reviews; the trigger is never
/// taken for feedback.
async fn a_trigger_is_posted_once_per_head(forge: ForgeKind) {
    let mut s = demo();
    s.bots[0].profile = BotProfile::AskOnly;
    s.bots[0].trigger = Some("/gemini review".into());
    s.bots[0].delay_ms = 200;
    let setup = setup_on(forge, s).await;
    let outcome = setup
        .run(
            "[reviewers]\nwait_for = [\"review-bot\"]\nsettle_timeout_secs = 8\n\
             [reviewers.trigger]\n\"review-bot\" = \"/gemini review\"\n",
        )
        .await;
    let pr = setup.pr();
    let triggers: Vec<&str> = pr["issue_comments"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["body"].as_str())
        .filter(|b| b.starts_with("/gemini review"))
        .collect();
    let heads: std::collections::BTreeSet<&str> = triggers
        .iter()
        .filter_map(|b| b.split("shepherd:trigger head=").nth(1))
        .collect();
    assert!(!triggers.is_empty(), "{pr}");
    assert_eq!(
        triggers.len(),
        heads.len(),
        "one trigger per head: {triggers:?}"
    );
    let round1 = reviewers_json(&outcome, 1);
    assert_eq!(round1["triggered"][0], "review-bot", "{round1}");
    assert_eq!(round1["reviewers"][0]["state"], "reviewed", "{round1}");
    // No round took Shepherd's own trigger for feedback: nothing replied
    // to it, nothing reported about it.
    let trigger_ids: Vec<&str> = pr["issue_comments"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| {
            c["body"]
                .as_str()
                .is_some_and(|b| b.starts_with("/gemini review"))
        })
        .filter_map(|c| c["id"].as_str())
        .collect();
    for (item, _) in marker_replies(&pr) {
        assert!(
            !trigger_ids.contains(&item.as_str()),
            "replied to a trigger: {item}"
        );
    }
    let md = outcome.report.to_markdown();
    assert!(!md.contains("/gemini review"), "{md}");
}
both_forges!(a_trigger_is_posted_once_per_head);

/// With no `wait_for` and a forge whose reviews cannot be read, nobody is
/// known to wait for: the run does not spend the timeout waiting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreadable_forge_does_not_stall_the_default_wait() {
    let mut s = demo();
    s.faults.push(
        shepherd_emulator::FaultSpec::every("GET /repos/{owner}/{repo}/commits/{ref}/statuses")
            .with_status(404, None),
    );
    let setup = setup(s).await;
    let started = std::time::Instant::now();
    let outcome = setup
        .run("[loop]\nmax_rounds = 1\non_exhaust = \"fail\"\n[reviewers]\nsettle_timeout_secs = 300\n")
        .await;
    let round1 = reviewers_json(&outcome, 1);
    assert!(
        round1["reviewers"].as_array().unwrap().is_empty(),
        "{round1}"
    );
    assert!(!round1["errors"].as_array().unwrap().is_empty(), "{round1}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(240),
        "the run waited out the timeout: {round1}"
    );
}

/// The `reviewers.json` of every round that wrote one, in order.
fn every_reviewers_json(outcome: &shepherd_engine::RunOutcome) -> Vec<Value> {
    (1..=outcome.report.rounds.len())
        .map(|n| {
            outcome
                .run_dir
                .join("rounds")
                .join(n.to_string())
                .join("reviewers.json")
        })
        .filter(|path| path.exists())
        .map(|path| read_json(&path))
        .collect()
}

/// The request that asks for a review: GitHub's `requested_reviewers`, and
/// on GitLab the user look-up Shepherd makes for each login it adds to the
/// merge request's `reviewer_ids` (the `PUT` of the merge request also
/// carries other edits).
fn review_request_key(forge: ForgeKind) -> &'static str {
    match forge {
        ForgeKind::GitHub => "POST /repos/{owner}/{repo}/pulls/{number}/requested_reviewers",
        ForgeKind::GitLab => "PUT /api/v4/projects/{id}/merge_requests/{iid}",
    }
}

/// The request that asks again for the review of someone who reviewed:
/// GitHub's `requested_reviewers` (as for a first request), and on GitLab
/// the `mergeRequestReviewerRereview` mutation, the only GraphQL Shepherd
/// sends there (a reviewer stays listed after reviewing, and putting their
/// id in `reviewer_ids` again would change nothing).
fn rereview_key(forge: ForgeKind) -> &'static str {
    match forge {
        ForgeKind::GitHub => review_request_key(forge),
        ForgeKind::GitLab => "POST /api/graphql",
    }
}

/// Every request for a review the forge got: on GitLab, adding to the
/// reviewers and asking a listed reviewer again.
fn review_requests(setup: &Setup) -> u64 {
    let first = setup.emu.request_count(review_request_key(setup.kind));
    match setup.kind {
        ForgeKind::GitHub => first,
        ForgeKind::GitLab => first + setup.emu.request_count(rereview_key(setup.kind)),
    }
}

/// With `request = true`, a bot that does not ask itself to review (the
/// Codex profile; Copilot's requests itself on every push, which would hide
/// Shepherd's) is requested by Shepherd, once per head: the forge sees as
/// many requests as there are heads waited on, and the bot is a requested
/// reviewer until it reviews.
async fn request_true_asks_a_bot_that_does_not_ask_itself(forge: ForgeKind) {
    let mut s = demo();
    s.bots[0].profile = BotProfile::Codex;
    s.bots[0].delay_ms = 1500;
    // The demo's person who requested changes would be asked again too.
    for review in &mut s.reviews {
        review.state = shepherd_emulator::ReviewStateSpec::Commented;
    }
    let setup = setup_on(forge, s).await;
    let outcome = setup
        .run("[reviewers]\nwait_for = [\"review-bot\"]\nsettle_timeout_secs = 6\nrequest = true\n")
        .await;
    let waits = every_reviewers_json(&outcome);
    assert!(!waits.is_empty(), "a round waited for reviewers");
    let asked: Vec<&str> = waits
        .iter()
        .filter(|w| w["requested"].as_array().is_some_and(|r| !r.is_empty()))
        .map(|w| {
            assert_eq!(w["requested"][0], "review-bot", "{w}");
            w["head"].as_str().expect("a head")
        })
        .collect();
    assert!(!asked.is_empty(), "Shepherd asked the bot: {waits:?}");
    let heads: std::collections::BTreeSet<&str> = asked.iter().copied().collect();
    assert_eq!(heads.len(), asked.len(), "once per head: {asked:?}");
    assert_eq!(
        review_requests(&setup),
        asked.len() as u64,
        "the forge got one request per head asked"
    );
}
both_forges!(request_true_asks_a_bot_that_does_not_ask_itself);

/// The demo's `reviewer` requested changes on the PR's first head. Once
/// Shepherd pushed, that review is of an older head: the report, `--json`
/// and `mergeability.json` name them with their threads' state, and with
/// `request = true`, once every thread of theirs is handled, their review
/// is requested again, once (on GitLab, where they stay a listed reviewer,
/// through the rereview mutation).
async fn a_stale_change_request_is_named_and_asked_again(forge: ForgeKind, request: bool) {
    let setup = setup_on(forge, demo()).await;
    let first_head = setup.emu.head_sha(PR).expect("the PR's head");
    let outcome = setup
        .run(&format!(
            "[reviewers]\nsettle_timeout_secs = 5\nrequest = {request}\n"
        ))
        .await;
    let changes = &outcome.report.changes_requested;
    assert_eq!(changes.len(), 1, "{changes:?}");
    let change = &changes[0];
    assert_eq!(change.login, "reviewer", "{change:?}");
    match forge {
        ForgeKind::GitHub => assert_eq!(change.commit.as_deref(), Some(first_head.as_str())),
        // GitLab's reviewer states name no commit.
        ForgeKind::GitLab => assert_eq!(change.commit, None),
    }
    assert_eq!(change.open_threads, Some(0), "their threads are handled");
    // Asked in the round whose threads were all handled; a later round on
    // another head sees the request still standing and does not ask again.
    assert_eq!(change.requested, request, "{change:?}");
    assert!(request || !change.rerequested, "{change:?}");
    let md = outcome.report.to_markdown();
    assert!(
        md.contains("- Changes requested: reviewer requested changes"),
        "{md}"
    );
    assert!(md.contains("their threads are handled"), "{md}");
    assert_eq!(md.contains("their review"), request, "{md}");
    let last_round = outcome.report.rounds.len();
    let mergeability = read_json(
        &outcome
            .run_dir
            .join("rounds")
            .join(last_round.to_string())
            .join("mergeability.json"),
    );
    assert!(
        mergeability["changes_requested"][0]
            .as_str()
            .is_some_and(|s| s.starts_with("reviewer requested changes")),
        "{mergeability}"
    );
    let asked = setup.emu.request_count(rereview_key(forge));
    assert_eq!(
        asked,
        u64::from(request),
        "asked again once, and only when configured"
    );
    assert_eq!(review_requests(&setup), asked, "and asked nothing else");
    // The round that asked says so; the report and `--json` name the
    // request still standing.
    let rerequested = (1..=last_round)
        .map(|n| {
            read_json(
                &outcome
                    .run_dir
                    .join("rounds")
                    .join(n.to_string())
                    .join("mergeability.json"),
            )
        })
        .filter(|m| {
            m["changes_requested"][0]
                .as_str()
                .is_some_and(|s| s.ends_with("their review was requested again"))
        })
        .count();
    assert_eq!(rerequested, usize::from(request), "one round asked");
    let json = serde_json::to_value(&outcome.report).expect("the report as JSON");
    assert_eq!(json["changes_requested"][0]["requested"], request, "{json}");
    let requested = setup.pr()["requested_reviewers"].clone();
    assert_eq!(
        requested
            .as_array()
            .is_some_and(|r| r.iter().any(|l| l == "reviewer")),
        request,
        "{requested}"
    );
}

async fn a_stale_change_request_is_asked_again_with_request_true(forge: ForgeKind) {
    a_stale_change_request_is_named_and_asked_again(forge, true).await;
}
both_forges!(a_stale_change_request_is_asked_again_with_request_true);

async fn a_stale_change_request_is_only_named_without_request(forge: ForgeKind) {
    a_stale_change_request_is_named_and_asked_again(forge, false).await;
}
both_forges!(a_stale_change_request_is_only_named_without_request);

/// A GitLab merge request's `reviewers`, and each one's state, as GitLab's
/// API gives them to Shepherd's account.
async fn gitlab_reviewers(setup: &Setup) -> (Vec<String>, Vec<(String, String)>) {
    let mr = format!(
        "{}/projects/{}/merge_requests/{PR}",
        setup.emu.gitlab_api_url(),
        setup.emu.gitlab_project_id()
    );
    let http = reqwest::Client::new();
    let get = |url: String| {
        let http = http.clone();
        async move {
            http.get(url)
                .header("PRIVATE-TOKEN", DEV_TOKEN)
                .send()
                .await
                .expect("the emulator answers")
                .json::<Value>()
                .await
                .expect("JSON")
        }
    };
    let listed = get(mr.clone()).await["reviewers"]
        .as_array()
        .expect("reviewers")
        .iter()
        .map(|u| u["username"].as_str().expect("a username").to_owned())
        .collect();
    let states = get(format!("{mr}/reviewers"))
        .await
        .as_array()
        .expect("reviewer states")
        .iter()
        .map(|r| {
            let login = r["user"]["username"].as_str().expect("a username");
            (
                login.to_owned(),
                r["state"].as_str().expect("a state").to_owned(),
            )
        })
        .collect();
    (listed, states)
}

/// On GitLab the demo's `reviewer`, who requested changes on the first
/// head, stays a listed reviewer (state `requested_changes`): Shepherd does
/// not take them as asked, asks again once through the rereview mutation
/// when their threads are handled, and after the run they are still listed,
/// `unreviewed`, with GitLab's note "requested review from @reviewer".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gitlab_reviewer_who_requested_changes_stays_listed_and_is_asked_again_once() {
    let setup = setup_on(ForgeKind::GitLab, demo()).await;
    let reviewer = |states: &[(String, String)]| {
        states
            .iter()
            .find(|(login, _)| login == "reviewer")
            .map(|(_, state)| state.clone())
    };
    let (listed, states) = gitlab_reviewers(&setup).await;
    assert!(listed.iter().any(|l| l == "reviewer"), "{listed:?}");
    assert_eq!(reviewer(&states).as_deref(), Some("requested_changes"));

    let outcome = setup
        .run("[reviewers]\nsettle_timeout_secs = 5\nrequest = true\n")
        .await;
    assert_eq!(
        setup.emu.request_count("POST /api/graphql"),
        1,
        "asked again once"
    );
    let (listed, states) = gitlab_reviewers(&setup).await;
    assert!(listed.iter().any(|l| l == "reviewer"), "{listed:?}");
    assert_eq!(reviewer(&states).as_deref(), Some("unreviewed"));
    let notes = setup.pr()["system_notes"].to_string();
    assert_eq!(
        notes.matches("requested review from @reviewer").count(),
        1,
        "{notes}"
    );
    let change = &outcome.report.changes_requested;
    assert_eq!(change.len(), 1, "{change:?}");
    assert!(change[0].requested, "{change:?}");
}

/// The emulated GitLab's `mergeRequestReviewerRereview` answers as GitLab's
/// (`MergeRequests::RequestReviewService`): a listed reviewer is asked
/// again; someone not among the reviewers is the payload's "Reviewer not
/// found"; an id of no user, or not of a user, and a viewer who may not
/// update the merge request are top-level errors; no token is 401.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_emulated_gitlab_rereview_answers_as_gitlab() {
    let setup = setup_on(ForgeKind::GitLab, demo()).await;
    let api = setup.emu.gitlab_api_url();
    let graphql = api.replace("/api/v4", "/api/graphql");
    let project = setup.emu.gitlab_project_id();
    let http = reqwest::Client::new();
    let members: Value = http
        .get(format!("{api}/projects/{project}/members/all"))
        .header("PRIVATE-TOKEN", DEV_TOKEN)
        .send()
        .await
        .expect("the emulator answers")
        .json()
        .await
        .expect("JSON");
    let id_of = |login: &str| {
        members
            .as_array()
            .expect("members")
            .iter()
            .find(|m| m["username"] == login)
            .map(|m| m["id"].as_u64().expect("an id"))
            .expect("a member")
    };
    let rereview = |token: Option<&'static str>, user: String| {
        let http = http.clone();
        let graphql = graphql.clone();
        async move {
            let mut request = http.post(graphql).json(&serde_json::json!({
                "query": "mutation R($p: ID!, $i: String!, $u: UserID!) { \
                    mergeRequestReviewerRereview(input: {projectPath: $p, iid: $i, userId: $u}) \
                    { errors mergeRequest { iid } } }",
                "variables": { "p": "demo/authkit", "i": PR.to_string(), "u": user },
            }));
            if let Some(token) = token {
                request = request.header("Authorization", format!("Bearer {token}"));
            }
            let answer = request.send().await.expect("the emulator answers");
            let status = answer.status().as_u16();
            (status, answer.json::<Value>().await.expect("JSON"))
        }
    };
    let gid = |login: &str| format!("gid://gitlab/User/{}", id_of(login));

    let (status, asked) = rereview(Some(DEV_TOKEN), gid("reviewer")).await;
    assert_eq!(status, 200);
    let payload = &asked["data"]["mergeRequestReviewerRereview"];
    assert_eq!(payload["errors"], serde_json::json!([]), "{asked}");
    assert_eq!(payload["mergeRequest"]["iid"], PR.to_string(), "{asked}");

    let (_, not_listed) = rereview(Some(DEV_TOKEN), gid("reader")).await;
    assert_eq!(
        not_listed["data"]["mergeRequestReviewerRereview"]["errors"],
        serde_json::json!(["Reviewer not found"]),
        "{not_listed}"
    );
    for (token, user) in [
        (DEV_TOKEN, "gid://gitlab/User/999999".to_owned()),
        (DEV_TOKEN, "gid://gitlab/Project/1".to_owned()),
        ("emu_reader_token", gid("reviewer")),
    ] {
        let (_, refused) = rereview(Some(token), user).await;
        assert!(refused["errors"][0]["message"].is_string(), "{refused}");
        assert!(
            refused["data"]["mergeRequestReviewerRereview"].is_null(),
            "{refused}"
        );
    }
    let (status, _) = rereview(None, gid("reviewer")).await;
    assert_eq!(status, 401);
    let notes = setup.pr()["system_notes"].to_string();
    assert_eq!(
        notes.matches("requested review from @reviewer").count(),
        1,
        "{notes}"
    );
    assert_eq!(setup.emu.request_count("POST /api/graphql"), 6);
}
