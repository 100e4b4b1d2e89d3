//! Reviewer bots that behave as the real ones (`[[bots]] profile`): how
//! each shows it reviewed the head (a commit status, a review on the head,
//! a requested reviewer), a clean pass, a rate limit with its notice, and
//! the comment or request that makes it review again; on GitHub and GitLab.

use std::collections::BTreeMap;
use std::time::Duration;

use reqwest::Method;
use serde_json::{json, Value};
use shepherd_emulator::{BotProfile, BotSpec, CheckSpec, RunningEmulator, Scenario};

use crate::common::*;

/// The widgets scenario with one bot of `profile` (login `review-bot`)
/// flagging added `TODO` lines after `delay_ms`.
fn with_bot(mut s: Scenario, profile: BotProfile, delay_ms: u64) -> Scenario {
    let mut bot = BotSpec::new("review-bot", "TODO", "Drop `{match}` at {path}:{line}.")
        .with_profile(profile);
    bot.delay_ms = delay_ms;
    s.bots = vec![bot];
    s
}

/// Pushes a new file holding `line` (as alice); the new head. Each push
/// adds a file of its own, so its added lines are exactly `line`.
async fn push_line(emu: &RunningEmulator, line: &str) -> String {
    let commits = emu.state_json()["pull_requests"][0]["commits"]
        .as_array()
        .map_or(0, Vec::len);
    let path = format!("src/added_{commits}.sh");
    let files = BTreeMap::from([(path, Some(format!("{line}\n")))]);
    emu.act_push("alice", "feature/widgets", files, "More")
        .await
        .unwrap()
}

/// The statuses of `sha` named `context`, oldest first: `(state, description)`.
async fn statuses(emu: &RunningEmulator, sha: &str, context: &str) -> Vec<(String, String)> {
    let path = format!("/repos/acme/widgets/commits/{sha}/statuses?per_page=100");
    let (status, body) = rest_get(&emu.api_url(), &path, Some(ALICE)).await;
    assert_eq!(status, 200, "{body}");
    let mut out: Vec<(String, String)> = body
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["context"] == context)
        .map(|s| {
            (
                s["state"].as_str().unwrap().to_owned(),
                s["description"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    // GitHub lists a commit's statuses newest first.
    out.reverse();
    out
}

/// The items of a REST list of PR 1 (`tail` under `/repos/acme/widgets/`)
/// whose `user` is the bot.
async fn by_bot(emu: &RunningEmulator, tail: &str) -> Vec<Value> {
    let path = format!("/repos/acme/widgets/{tail}?per_page=100");
    let (status, body) = rest_get(&emu.api_url(), &path, Some(ALICE)).await;
    assert_eq!(status, 200, "{body}");
    let items = body.as_array().unwrap().iter();
    items
        .filter(|item| item["user"]["login"] == "review-bot[bot]")
        .cloned()
        .collect()
}

/// The reviews of PR 1 by `review-bot[bot]`: `(commit_id, body)`.
async fn bot_reviews(emu: &RunningEmulator) -> Vec<(String, String)> {
    let text = |v: &Value| v.as_str().unwrap().to_owned();
    let reviews = by_bot(emu, "pulls/1/reviews").await;
    reviews
        .iter()
        .map(|r| (text(&r["commit_id"]), text(&r["body"])))
        .collect()
}

/// The conversation comments of PR 1 by the bot.
async fn bot_comments(emu: &RunningEmulator) -> Vec<Value> {
    by_bot(emu, "issues/1/comments").await
}

async fn requested(emu: &RunningEmulator) -> Vec<Value> {
    let path = "/repos/acme/widgets/pulls/1/requested_reviewers";
    let (status, body) = rest_get(&emu.api_url(), path, Some(ALICE)).await;
    assert_eq!(status, 200, "{body}");
    body["users"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["login"].clone())
        .collect()
}

#[tokio::test]
async fn coderabbit_settles_on_its_commit_status_and_edits_its_walkthrough() {
    let emu = start(with_bot(scenario(0, 0), BotProfile::Coderabbit, 600)).await;
    idle(&emu).await;
    let first = push_line(&emu, "# TODO: one").await;
    // At once: pending, before any review.
    assert_eq!(
        statuses(&emu, &first, "CodeRabbit").await,
        [("pending".into(), "Review in progress".into())]
    );
    assert!(bot_reviews(&emu).await.is_empty());
    idle(&emu).await;
    assert_eq!(
        statuses(&emu, &first, "CodeRabbit").await,
        [
            ("pending".into(), "Review in progress".into()),
            ("success".into(), "Review completed".into())
        ]
    );
    assert_eq!(
        bot_reviews(&emu).await,
        [(first.clone(), "**Actionable comments posted: 1**".into())]
    );
    let walkthrough = bot_comments(&emu).await;
    assert_eq!(walkthrough.len(), 1, "{walkthrough:?}");
    assert!(walkthrough[0]["body"].as_str().unwrap().contains(&first));

    // A clean push: completed, no new review, the walkthrough edited in
    // place (same id and created_at, later updated_at).
    let second = push_line(&emu, "echo clean").await;
    idle(&emu).await;
    assert_eq!(
        statuses(&emu, &second, "CodeRabbit").await.last().unwrap(),
        &("success".to_owned(), "Review completed".to_owned())
    );
    assert_eq!(bot_reviews(&emu).await.len(), 1);
    // GraphQL names the status's creator: the bot, so a status of that
    // context by another account can be told apart.
    let body = graphql(
        &emu,
        ALICE,
        r#"{ repository(owner: "acme", name: "widgets") { pullRequest(number: 1) {
            commits(last: 1) { nodes { commit { oid statusCheckRollup { contexts(first: 20) {
              nodes { ... on StatusContext { context state description creator { login } } }
            } } } } } } } }"#,
        json!({}),
    )
    .await;
    let commit = &body["data"]["repository"]["pullRequest"]["commits"]["nodes"][0]["commit"];
    assert_eq!(commit["oid"], second.as_str(), "{body}");
    let contexts = commit["statusCheckRollup"]["contexts"]["nodes"]
        .as_array()
        .unwrap();
    let rabbit = contexts
        .iter()
        .find(|c| c["context"] == "CodeRabbit")
        .unwrap_or_else(|| panic!("{body}"));
    assert_eq!(rabbit["state"], "SUCCESS");
    assert_eq!(rabbit["description"], "Review completed");
    assert_eq!(rabbit["creator"]["login"], "review-bot");
    let edited = bot_comments(&emu).await;
    assert_eq!(edited.len(), 1);
    assert_eq!(edited[0]["id"], walkthrough[0]["id"]);
    assert_eq!(edited[0]["created_at"], walkthrough[0]["created_at"]);
    assert!(edited[0]["updated_at"].as_str() > walkthrough[0]["updated_at"].as_str());
    assert!(edited[0]["body"].as_str().unwrap().contains(&second));
    // The new review covered only the push's lines (incremental): the
    // first TODO was not flagged twice.
    assert_eq!(threads(&emu, ALICE).await.len(), 1);

    // Asked to review a head it reviewed: it says so and reviews nothing.
    emu.act_comment("alice", "@coderabbitai review")
        .await
        .unwrap();
    idle(&emu).await;
    assert_eq!(bot_reviews(&emu).await.len(), 1);
    let replies = bot_comments(&emu).await;
    assert!(replies[1]["body"]
        .as_str()
        .unwrap()
        .contains("Actions performed"));
    assert_eq!(statuses(&emu, &second, "CodeRabbit").await.len(), 2);
}

#[tokio::test]
async fn a_rate_limited_coderabbit_does_not_review_until_asked_again() {
    let mut s = with_bot(scenario(0, 0), BotProfile::Coderabbit, 50);
    s.bots[0].rate_limit_after = Some(1);
    s.bots[0].rate_limit_minutes = 32;
    let emu = start(s).await;
    idle(&emu).await;
    let first = push_line(&emu, "# TODO: one").await;
    idle(&emu).await;
    assert_eq!(bot_reviews(&emu).await.len(), 1);

    let second = push_line(&emu, "# TODO: two").await;
    idle(&emu).await;
    // Refused: a success status that says the review did not run, the
    // notice in the walkthrough, and no review of the head.
    assert_eq!(
        statuses(&emu, &second, "CodeRabbit").await.last().unwrap(),
        &("success".to_owned(), "Review rate limited".to_owned())
    );
    let notice = bot_comments(&emu).await[0]["body"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(notice.contains("Review limit reached"), "{notice}");
    assert!(
        notice.contains("**Next review available in:** **32 minutes**"),
        "{notice}"
    );
    assert_eq!(
        bot_reviews(&emu).await,
        [(first, "**Actionable comments posted: 1**".into())]
    );
    // It does not come back on its own.
    tokio::time::sleep(Duration::from_millis(300)).await;
    idle(&emu).await;
    assert_eq!(bot_reviews(&emu).await.len(), 1);

    // The trigger comment makes it review the head.
    emu.act_comment("alice", "@coderabbitai review")
        .await
        .unwrap();
    idle(&emu).await;
    let reviews = bot_reviews(&emu).await;
    assert_eq!(reviews.len(), 2);
    assert_eq!(reviews[1].0, second);
    assert_eq!(
        statuses(&emu, &second, "CodeRabbit").await.last().unwrap(),
        &("success".to_owned(), "Review completed".to_owned())
    );
}

#[tokio::test]
async fn a_coderabbit_limited_every_time_answers_the_trigger_with_action_not_completed() {
    let mut s = with_bot(scenario(0, 0), BotProfile::Coderabbit, 0);
    s.bots[0].rate_limit_after = Some(0);
    let emu = start(s).await;
    idle(&emu).await;
    push_line(&emu, "# TODO: one").await;
    idle(&emu).await;
    emu.act_comment("alice", "@coderabbitai review")
        .await
        .unwrap();
    idle(&emu).await;
    assert!(bot_reviews(&emu).await.is_empty());
    let comments = bot_comments(&emu).await;
    let reply = comments.last().unwrap()["body"].as_str().unwrap();
    assert!(reply.contains("⚠️ Action not completed"), "{reply}");
    assert!(reply.contains("Review rate limited"), "{reply}");
}

#[tokio::test]
async fn codex_reviews_on_the_head_only_when_it_has_findings() {
    let emu = start(with_bot(scenario(0, 0), BotProfile::Codex, 0)).await;
    idle(&emu).await;
    let first = push_line(&emu, "# TODO: one").await;
    idle(&emu).await;
    let reviews = bot_reviews(&emu).await;
    assert_eq!(reviews.len(), 1);
    assert_eq!(reviews[0].0, first);
    assert!(
        reviews[0]
            .1
            .contains(&format!("**Reviewed commit:** `{}`", &first[..10])),
        "{}",
        reviews[0].1
    );
    // GraphQL's review `commit { oid }` is the reviewed head too.
    let body = graphql(
        &emu,
        ALICE,
        r#"{ repository(owner: "acme", name: "widgets") { pullRequest(number: 1) {
            reviews(first: 10) { nodes { author { login } commit { oid } } } } } }"#,
        json!({}),
    )
    .await;
    let nodes = &body["data"]["repository"]["pullRequest"]["reviews"]["nodes"];
    assert_eq!(nodes[0]["commit"]["oid"], first.as_str(), "{body}");

    // A clean pass posts nothing at all.
    push_line(&emu, "echo clean").await;
    idle(&emu).await;
    assert_eq!(bot_reviews(&emu).await.len(), 1);
    assert!(bot_comments(&emu).await.is_empty());
}

#[tokio::test]
async fn a_bot_without_findings_makes_every_review_clean() {
    let mut s = with_bot(scenario(0, 0), BotProfile::Codex, 0);
    s.bots[0].findings = false;
    let emu = start(s).await;
    idle(&emu).await;
    push_line(&emu, "# TODO: one").await;
    idle(&emu).await;
    assert!(bot_reviews(&emu).await.is_empty());
    assert!(threads(&emu, ALICE).await.is_empty());
}

#[tokio::test]
async fn copilot_is_a_requested_reviewer_that_reviews_the_head_and_again_when_asked() {
    let emu = start(with_bot(scenario(0, 0), BotProfile::Copilot, 600)).await;
    idle(&emu).await;
    let head = push_line(&emu, "echo clean").await;
    // Requested at once, in REST and GraphQL.
    assert_eq!(requested(&emu).await, [json!("review-bot[bot]")]);
    let body = graphql(
        &emu,
        ALICE,
        r#"{ repository(owner: "acme", name: "widgets") { pullRequest(number: 1) {
            reviewRequests(first: 10) { totalCount nodes { requestedReviewer {
              __typename ... on Bot { login } } } } } } }"#,
        json!({}),
    )
    .await;
    let requests = &body["data"]["repository"]["pullRequest"]["reviewRequests"];
    assert_eq!(requests["totalCount"], 1, "{body}");
    assert_eq!(
        requests["nodes"][0]["requestedReviewer"],
        json!({"__typename": "Bot", "login": "review-bot"})
    );
    idle(&emu).await;
    // A review on the head even without findings, and no longer requested.
    let reviews = bot_reviews(&emu).await;
    assert_eq!(reviews.len(), 1);
    assert_eq!(reviews[0].0, head);
    assert!(
        reviews[0].1.contains("generated 0 comments"),
        "{}",
        reviews[0].1
    );
    assert!(requested(&emu).await.is_empty());

    // Requesting it again makes it review the same head again.
    let url = format!(
        "{}/repos/acme/widgets/pulls/1/requested_reviewers",
        emu.api_url()
    );
    let body = json!({"reviewers": ["review-bot[bot]"]});
    let (status, _, pr) = rest(Method::POST, &url, Some(ALICE), Some(body)).await;
    assert_eq!(status, 201, "{pr}");
    assert_eq!(pr["requested_reviewers"][0]["login"], "review-bot[bot]");
    idle(&emu).await;
    assert_eq!(bot_reviews(&emu).await.len(), 2);
    assert!(requested(&emu).await.is_empty());
}

#[tokio::test]
async fn review_requests_follow_githubs_rules() {
    let emu = start(scenario(0, 0)).await;
    let url = format!(
        "{}/repos/acme/widgets/pulls/1/requested_reviewers",
        emu.api_url()
    );
    let ask = |who: &str| json!({ "reviewers": [who] });
    let (status, _, body) = rest(Method::POST, &url, Some(BOB), Some(ask("alice"))).await;
    assert_eq!(status, 422, "the author: {body}");
    assert_eq!(
        body["message"],
        "Review cannot be requested from pull request author."
    );
    let (status, _, _) = rest(Method::POST, &url, Some(BOB), Some(ask("nobody"))).await;
    assert_eq!(status, 422);
    let (status, _, _) = rest(Method::POST, &url, Some(READER), Some(ask("bob"))).await;
    assert_eq!(status, 403, "read-only");
    let (status, _, _) = rest(Method::POST, &url, Some(ALICE), Some(ask("bob"))).await;
    assert_eq!(status, 201);
    assert_eq!(requested(&emu).await, [json!("bob")]);
    // Bob's review answers the request.
    emu.act(shepherd_emulator::Act::Review {
        user: "bob".into(),
        pr: None,
        event: Some("APPROVE".into()),
        body: None,
        threads: Vec::new(),
    })
    .await
    .unwrap();
    assert!(requested(&emu).await.is_empty());
    let (status, _, _) = rest(Method::POST, &url, Some(ALICE), Some(ask("bob"))).await;
    assert_eq!(status, 201);
    let (status, _, pr) = rest(Method::DELETE, &url, Some(ALICE), Some(ask("bob"))).await;
    assert_eq!(status, 200);
    assert_eq!(pr["requested_reviewers"], json!([]));
}

#[tokio::test]
async fn copilot_past_its_quota_comments_instead_of_reviewing() {
    let mut s = with_bot(scenario(0, 0), BotProfile::Copilot, 0);
    s.bots[0].rate_limit_after = Some(0);
    let emu = start(s).await;
    idle(&emu).await;
    push_line(&emu, "# TODO: one").await;
    idle(&emu).await;
    assert!(bot_reviews(&emu).await.is_empty());
    let comments = bot_comments(&emu).await;
    assert_eq!(comments.len(), 1);
    assert!(comments[0]["body"]
        .as_str()
        .unwrap()
        .contains("reached their quota limit"));
    assert!(requested(&emu).await.is_empty());
}

#[tokio::test]
async fn an_ask_only_bot_reviews_only_when_a_comment_asks() {
    let emu = start(with_bot(scenario(0, 0), BotProfile::AskOnly, 0)).await;
    idle(&emu).await;
    let head = push_line(&emu, "# TODO: one").await;
    idle(&emu).await;
    assert!(bot_reviews(&emu).await.is_empty());
    emu.act_comment("alice", "please /gemini review")
        .await
        .unwrap();
    idle(&emu).await;
    let reviews = bot_reviews(&emu).await;
    assert_eq!(reviews.len(), 1);
    assert_eq!(reviews[0].0, head);
    assert_eq!(threads(&emu, ALICE).await.len(), 1);
}

#[tokio::test]
async fn the_demo_with_a_slow_bot_reviews_after_ci_completes() {
    let s = Scenario::demo()
        .unwrap()
        .with_bot_delay(Duration::from_millis(2500));
    assert_eq!(s.bots[0].delay_ms, 2500);
    let emu = start(s).await;
    idle(&emu).await;
    let before = emu.state_json()["pull_requests"][0]["threads"]
        .as_array()
        .unwrap()
        .len();
    let files = BTreeMap::from([(
        "src/util/extra.sh".to_owned(),
        Some("# TODO: later\n".to_owned()),
    )]);
    let sha = emu.act_push("dev", "feature/login", files, "x").await;
    let sha = sha.unwrap_or_else(|err| panic!("push: {err}"));
    // CI (0.5 s) completes while the bot still waits.
    let done = wait_for_check(&emu, &sha, Duration::from_secs(10)).await;
    assert!(done, "CI did not complete");
    let during = emu.state_json()["pull_requests"][0]["threads"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(during, before, "the bot posted before CI completed");
    idle(&emu).await;
    let after = emu.state_json()["pull_requests"][0]["threads"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(after, before + 1);
}

/// Whether every check run of `sha` completes within `timeout`.
async fn wait_for_check(emu: &RunningEmulator, sha: &str, timeout: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + timeout;
    while tokio::time::Instant::now() < deadline {
        let runs = emu.state_json()["ci"]["check_runs"].clone();
        let of_sha: Vec<&Value> = runs
            .as_array()
            .into_iter()
            .flatten()
            .filter(|r| r["head_sha"] == sha)
            .collect();
        if !of_sha.is_empty() && of_sha.iter().all(|r| r["status"] == "completed") {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

#[tokio::test]
async fn on_gitlab_coderabbit_posts_a_commit_status_and_notes() {
    let mut s = with_bot(gitlab_scenario(0, 0), BotProfile::Coderabbit, 0);
    s.checks = vec![CheckSpec::new("tests", "true")];
    let emu = start(s).await;
    idle(&emu).await;
    let head = push_line(&emu, "# TODO: one").await;
    idle(&emu).await;
    let path = format!("/projects/{GL_PROJECT}/repository/commits/{head}/statuses");
    let statuses = gl_get(&emu, &path, ALICE).await;
    assert_eq!(
        statuses.as_array().unwrap().len(),
        1,
        "latest only: {statuses}"
    );
    assert_eq!(statuses[0]["name"], "CodeRabbit");
    assert_eq!(statuses[0]["status"], "success");
    assert_eq!(statuses[0]["description"], "Review completed");
    assert_eq!(statuses[0]["author"]["username"], "review-bot");
    let all = gl_get(&emu, &format!("{path}?all=true"), ALICE).await;
    assert_eq!(all.as_array().unwrap().len(), 2);
    assert_eq!(all[0]["status"], "pending");
    // Its finding is a discussion; its review body and walkthrough notes.
    let threads = gl_threads(&emu, ALICE).await;
    assert_eq!(threads.len(), 1);
    assert_eq!(threads[0]["notes"][0]["author"]["username"], "review-bot");
    assert_eq!(
        threads[0]["notes"][0]["position"]["head_sha"],
        head.as_str()
    );

    // A trigger note on GitLab asks too; a reviewed head is not reviewed
    // again, and the bot says so.
    let (status, _, _) = gl(
        &emu,
        Method::POST,
        &mr_path("/notes"),
        Some(ALICE),
        Some(json!({"body": "@coderabbitai review"})),
    )
    .await;
    assert_eq!(status, 201);
    idle(&emu).await;
    let notes = gl_get(&emu, &mr_path("/notes?sort=asc&per_page=100"), ALICE).await;
    let last = notes.as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["author"]["username"], "review-bot");
    assert!(last["body"].as_str().unwrap().contains("Actions performed"));
}

#[tokio::test]
async fn on_gitlab_a_reviewer_set_through_reviewer_ids_reviews() {
    let emu = start(with_bot(gitlab_scenario(0, 0), BotProfile::Copilot, 0)).await;
    idle(&emu).await;
    let bot_id = emu.state_json()["users"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["login"] == "review-bot")
        .unwrap()["database_id"]
        .clone();
    let (status, _, mr) = gl(
        &emu,
        Method::PUT,
        &mr_path(""),
        Some(ALICE),
        Some(json!({ "reviewer_ids": [bot_id] })),
    )
    .await;
    assert_eq!(status, 200, "{mr}");
    assert_eq!(mr["reviewers"][0]["username"], "review-bot");
    idle(&emu).await;
    // The review is the bot's note; it stays a listed reviewer once done,
    // its state `reviewed` (GitLab changes the state, not the list).
    let notes = gl_get(&emu, &mr_path("/notes?per_page=100"), ALICE).await;
    assert!(notes
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n["author"]["username"] == "review-bot"
            && n["body"]
                .as_str()
                .unwrap()
                .contains("Pull request overview")));
    let mr = gl_get(&emu, &mr_path(""), ALICE).await;
    assert_eq!(mr["reviewers"][0]["username"], "review-bot");
    let states = gl_get(&emu, &mr_path("/reviewers"), ALICE).await;
    assert_eq!(states[0]["state"], "reviewed", "{states}");
    let (status, _, _) = gl(
        &emu,
        Method::PUT,
        &mr_path(""),
        Some(ALICE),
        Some(json!({ "reviewer_ids": [999_999] })),
    )
    .await;
    assert_eq!(status, 400);
}
