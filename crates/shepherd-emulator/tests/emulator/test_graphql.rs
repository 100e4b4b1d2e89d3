//! GraphQL: pagination, node lookups, GitHub's errors and field shapes.

use serde_json::{json, Value};
use shepherd_forge::github::queries::THREAD_COMMENTS;

use crate::common::*;

const THREADS: &str = r#"
query ReviewThreads($owner: String!, $name: String!, $number: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: 100, after: $after) {
        totalCount
        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
        edges { cursor }
        nodes {
          id isResolved isOutdated path line startLine originalLine originalStartLine
          diffSide subjectType viewerCanReply viewerCanResolve
          comments(first: 100) {
            totalCount
            pageInfo { hasNextPage endCursor }
            nodes {
              id databaseId body url createdAt diffHunk
              author { __typename login }
              pullRequestReview { state }
            }
          }
        }
      }
    }
  }
}"#;

fn vars(after: Option<&str>) -> Value {
    json!({ "owner": "acme", "name": "widgets", "number": 1, "after": after })
}

#[tokio::test]
async fn fetches_250_threads_in_3_pages_and_130_comments_with_1_extra_page() {
    let emu = start(scenario(250, 130)).await;
    let mut threads: Vec<Value> = Vec::new();
    let mut after: Option<String> = None;
    let mut cursors = Vec::new();
    loop {
        let body = graphql(&emu, ALICE, THREADS, vars(after.as_deref())).await;
        assert!(body.get("errors").is_none(), "{body}");
        let page = &body["data"]["repository"]["pullRequest"]["reviewThreads"];
        assert_eq!(page["totalCount"], 250);
        threads.extend(page["nodes"].as_array().unwrap().iter().cloned());
        cursors.push(page["pageInfo"]["endCursor"].clone());
        if !page["pageInfo"]["hasNextPage"].as_bool().unwrap() {
            break;
        }
        after = Some(page["pageInfo"]["endCursor"].as_str().unwrap().to_owned());
    }
    assert_eq!(threads.len(), 250);
    assert_eq!(cursors.len(), 3);
    let mut ids: Vec<&str> = threads.iter().map(|t| t["id"].as_str().unwrap()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 250, "thread ids are unique");

    // The big thread pages its comments through node(id:).
    let big = &threads[0];
    assert_eq!(big["comments"]["totalCount"], 130);
    assert_eq!(big["comments"]["nodes"].as_array().unwrap().len(), 100);
    assert_eq!(big["comments"]["pageInfo"]["hasNextPage"], true);
    let mut comments: Vec<Value> = big["comments"]["nodes"].as_array().unwrap().clone();
    let mut after = big["comments"]["pageInfo"]["endCursor"]
        .as_str()
        .map(str::to_owned);
    while let Some(cursor) = after.take() {
        let body = graphql(
            &emu,
            ALICE,
            THREAD_COMMENTS,
            json!({ "id": big["id"], "cursor": cursor }),
        )
        .await;
        let page = &body["data"]["node"]["comments"];
        comments.extend(page["nodes"].as_array().unwrap().iter().cloned());
        if page["pageInfo"]["hasNextPage"].as_bool().unwrap() {
            after = page["pageInfo"]["endCursor"].as_str().map(str::to_owned);
        }
    }
    assert_eq!(comments.len(), 130);
    assert_eq!(comments[129]["body"], "thread 0 comment 129");
    assert_eq!(comments[1]["author"]["__typename"], "Bot");
    assert_eq!(comments[0]["author"]["__typename"], "User");

    assert_eq!(emu.request_count("graphql:ReviewThreads"), 3);
    assert_eq!(emu.request_count("graphql:ThreadComments"), 1);
}

#[tokio::test]
async fn first_above_100_and_missing_first_give_githubs_errors() {
    let emu = start(scenario(3, 1)).await;
    let query = |args: &str| {
        format!(
            "query Q {{ repository(owner: \"acme\", name: \"widgets\") {{ pullRequest(number: 1) {{ reviewThreads{args} {{ totalCount }} }} }} }}"
        )
    };
    let body = graphql(&emu, ALICE, &query("(first: 101)"), json!({})).await;
    let error = &body["errors"][0];
    assert_eq!(
        error["message"],
        "Requesting 101 records on the `reviewThreads` connection exceeds the `first` limit of 100 records."
    );
    assert_eq!(error["type"], "EXCESSIVE_PAGINATION");
    assert!(error.get("extensions").is_none(), "{error}");
    assert_eq!(body["data"]["repository"]["pullRequest"], Value::Null);

    let body = graphql(&emu, ALICE, &query(""), json!({})).await;
    assert_eq!(
        body["errors"][0]["message"],
        "You must provide a `first` or `last` value to properly paginate the `reviewThreads` connection."
    );

    let body = graphql(&emu, ALICE, &query("(last: 500)"), json!({})).await;
    assert!(body["errors"][0]["message"]
        .as_str()
        .unwrap()
        .contains("exceeds the `last` limit of 100 records"));
}

#[tokio::test]
async fn last_and_before_page_backwards() {
    let emu = start(scenario(5, 1)).await;
    let q = r#"query Back($before: String) { repository(owner: "acme", name: "widgets") {
        pullRequest(number: 1) { reviewThreads(last: 2, before: $before) {
          pageInfo { hasPreviousPage hasNextPage startCursor } nodes { originalLine } } } } }"#;
    let body = graphql(&emu, ALICE, q, json!({ "before": null })).await;
    let page = &body["data"]["repository"]["pullRequest"]["reviewThreads"];
    assert_eq!(
        page["nodes"],
        json!([{ "originalLine": 4 }, { "originalLine": 5 }])
    );
    assert_eq!(page["pageInfo"]["hasPreviousPage"], true);
    assert_eq!(page["pageInfo"]["hasNextPage"], false);
    let start = page["pageInfo"]["startCursor"].clone();
    let body = graphql(&emu, ALICE, q, json!({ "before": start })).await;
    let page = &body["data"]["repository"]["pullRequest"]["reviewThreads"];
    assert_eq!(
        page["nodes"],
        json!([{ "originalLine": 2 }, { "originalLine": 3 }])
    );
}

#[tokio::test]
async fn node_ids_are_opaque_and_resolve_through_node() {
    let emu = start(scenario(1, 2)).await;
    let q = r#"query Ids { repository(owner: "acme", name: "widgets") { pullRequest(number: 1) {
        id reviews(first: 10) { nodes { id } }
        comments(first: 10) { nodes { id databaseId } }
        reviewThreads(first: 10) { nodes { id comments(first: 10) { nodes { id } } } } } } }"#;
    let body = graphql(&emu, ALICE, q, json!({})).await;
    let pr = &body["data"]["repository"]["pullRequest"];
    let pr_id = pr["id"].as_str().unwrap();
    let thread_id = pr["reviewThreads"]["nodes"][0]["id"].as_str().unwrap();
    let comment_id = pr["reviewThreads"]["nodes"][0]["comments"]["nodes"][0]["id"]
        .as_str()
        .unwrap();
    let review_id = pr["reviews"]["nodes"][0]["id"].as_str().unwrap();
    let issue_comment_id = pr["comments"]["nodes"][0]["id"].as_str().unwrap();
    assert!(pr_id.starts_with("PR_"), "{pr_id}");
    assert!(thread_id.starts_with("PRRT_"), "{thread_id}");
    assert!(comment_id.starts_with("PRRC_"), "{comment_id}");
    assert!(review_id.starts_with("PRR_"), "{review_id}");
    assert!(issue_comment_id.starts_with("IC_"), "{issue_comment_id}");

    let q = r#"query Node($id: ID!) { node(id: $id) { __typename id
        ... on PullRequest { number }
        ... on PullRequestReviewComment { body }
        ... on PullRequestReviewThread { path } } }"#;
    for (id, typename) in [
        (pr_id, "PullRequest"),
        (thread_id, "PullRequestReviewThread"),
        (comment_id, "PullRequestReviewComment"),
        (review_id, "PullRequestReview"),
        (issue_comment_id, "IssueComment"),
    ] {
        let body = graphql(&emu, ALICE, q, json!({ "id": id })).await;
        assert_eq!(body["data"]["node"]["__typename"], typename, "{body}");
        assert_eq!(body["data"]["node"]["id"], id);
    }
    let body = graphql(&emu, ALICE, q, json!({ "id": "PRRT_bm9wZQ" })).await;
    assert_eq!(body["data"]["node"], Value::Null);
    assert_eq!(body["errors"][0]["type"], "NOT_FOUND");
}

#[tokio::test]
async fn basic_scenario_fields_match_githubs_shapes() {
    let emu = start(shepherd_emulator::Scenario::load(examples_dir().join("basic")).unwrap()).await;
    let q = r#"query Pr { viewer { login }
      repository(owner: "acme", name: "greeter") { pullRequest(number: 1) {
        number title url state isDraft headRefName headRefOid baseRefName isCrossRepository
        author { __typename login }
        reviews(first: 100, states: [CHANGES_REQUESTED]) { totalCount nodes { body state author { login } } }
        comments(first: 100) { totalCount nodes { body author { __typename login } } }
        reviewThreads(first: 100) { nodes {
          path line startLine originalLine isOutdated isResolved diffSide subjectType
          comments(first: 100) { totalCount nodes { diffHunk author { __typename login } pullRequestReview { state } } } } } } } }"#;
    let body = graphql(&emu, "emu_alice_token", q, json!({})).await;
    assert!(body.get("errors").is_none(), "{body}");
    assert_eq!(body["data"]["viewer"]["login"], "alice");
    let pr = &body["data"]["repository"]["pullRequest"];
    assert_eq!(pr["state"], "OPEN");
    assert_eq!(pr["isCrossRepository"], false);
    assert_eq!(pr["headRefName"], "feature/greetings");
    assert_eq!(pr["headRefOid"].as_str().unwrap().len(), 40);
    assert_eq!(
        pr["author"],
        json!({ "__typename": "User", "login": "alice" })
    );
    assert!(pr["url"]
        .as_str()
        .unwrap()
        .ends_with("/acme/greeter/pull/1"));
    assert_eq!(pr["reviews"]["totalCount"], 1);
    assert!(pr["reviews"]["nodes"][0]["body"]
        .as_str()
        .unwrap()
        .starts_with("Nice addition"));
    assert_eq!(pr["comments"]["totalCount"], 2);
    assert_eq!(pr["comments"]["nodes"][0]["author"]["__typename"], "Bot");

    let threads = pr["reviewThreads"]["nodes"].as_array().unwrap();
    assert_eq!(threads.len(), 4);
    assert_eq!(threads[0]["comments"]["totalCount"], 3);
    assert_eq!(
        threads[0]["comments"]["nodes"][0]["pullRequestReview"]["state"],
        "CHANGES_REQUESTED"
    );
    assert_eq!(
        threads[0]["comments"]["nodes"][1]["pullRequestReview"]["state"],
        "COMMENTED"
    );
    let hunk = threads[0]["comments"]["nodes"][0]["diffHunk"]
        .as_str()
        .unwrap();
    assert!(hunk.starts_with("@@ "), "{hunk}");
    assert!(
        hunk.ends_with("+    names = parse_names(argv[1])"),
        "{hunk}"
    );
    assert_eq!(
        threads[1]["comments"]["nodes"][0]["author"]["__typename"],
        "Bot"
    );
    assert_eq!(threads[1]["startLine"], 13);
    assert_eq!(threads[1]["line"], 16);
    // Outdated: GitHub drops `line` and keeps `originalLine`.
    assert_eq!(threads[2]["isOutdated"], true);
    assert_eq!(threads[2]["line"], Value::Null);
    assert_eq!(threads[2]["originalLine"], 21);
    assert_eq!(threads[3]["isResolved"], true);
    assert_eq!(threads[3]["diffSide"], "RIGHT");
    assert_eq!(threads[3]["subjectType"], "LINE");
}

#[tokio::test]
async fn pending_reviews_are_visible_only_to_their_author() {
    use shepherd_emulator::{ReviewSpec, ReviewStateSpec, ThreadCommentSpec, ThreadSpec};
    let mut s = scenario(1, 1);
    let mut pending = ReviewSpec::new("bob", ReviewStateSpec::Pending, "");
    pending.name = Some("draft".into());
    s.reviews.push(pending);
    // A pending reply in a visible thread, and a thread that is all pending.
    let mut reply = ThreadCommentSpec::new("bob", "pending reply");
    reply.review = Some("draft".into());
    s.threads[0].comments.push(reply.clone());
    s.threads
        .push(ThreadSpec::new("src/lib.rs", 7, vec![reply]));
    let emu = start(s).await;
    let q = r#"query Vis { repository(owner: "acme", name: "widgets") { pullRequest(number: 1) {
        reviews(first: 100, states: [PENDING]) { totalCount }
        reviewThreads(first: 100) { totalCount nodes { comments(first: 100) { totalCount } } } } } }"#;
    let as_bob = graphql(&emu, BOB, q, json!({})).await;
    let pr = &as_bob["data"]["repository"]["pullRequest"];
    assert_eq!(pr["reviews"]["totalCount"], 1);
    assert_eq!(pr["reviewThreads"]["totalCount"], 2);
    assert_eq!(pr["reviewThreads"]["nodes"][0]["comments"]["totalCount"], 2);

    let as_alice = graphql(&emu, ALICE, q, json!({})).await;
    let pr = &as_alice["data"]["repository"]["pullRequest"];
    assert_eq!(pr["reviews"]["totalCount"], 0);
    assert_eq!(pr["reviewThreads"]["totalCount"], 1);
    assert_eq!(pr["reviewThreads"]["nodes"][0]["comments"]["totalCount"], 1);
}

#[tokio::test]
async fn unknown_pull_request_is_not_found() {
    let emu = start(scenario(1, 1)).await;
    let body = graphql(
        &emu,
        ALICE,
        r#"query Missing { repository(owner: "acme", name: "widgets") { pullRequest(number: 7) { id } } }"#,
        json!({}),
    )
    .await;
    assert_eq!(body["data"]["repository"]["pullRequest"], Value::Null);
    assert_eq!(
        body["errors"][0]["message"],
        "Could not resolve to a PullRequest with the number of 7."
    );
    assert_eq!(body["errors"][0]["type"], "NOT_FOUND");
}

/// A page of threads and comments whose fields are all plain is written
/// straight to JSON (`graphql/json.rs`); the answer is the one
/// async-graphql's own resolution gives, which a directive on the fields'
/// fragments forces.
#[tokio::test]
async fn threads_and_comments_written_straight_to_json_answer_as_resolved_ones() {
    let mut s = scenario(4, 4);
    s.threads[1].comments[0].body = "say \"hi\"\n\t\\ é 😀 \u{1} </script>".into();
    s.threads[2].line = None;
    s.threads[3].start_line = Some(2);
    s.threads[3].resolved = true;
    let emu = start(s).await;
    let comment = "__typename id databaseId body url createdAt diffHunk path outdated \
                   viewerDidAuthor key: body author { __typename login url resourcePath } \
                   pullRequestReview { __typename id databaseId state body url createdAt }";
    let thread = "__typename id isResolved isCollapsed isOutdated path line startLine \
                  originalLine originalStartLine diffSide subjectType viewerCanReply \
                  viewerCanResolve viewerCanUnresolve \
                  comments(first: $n, after: $after) { __typename totalCount \
                  pageInfo { __typename hasNextPage hasPreviousPage startCursor endCursor } \
                  nodes { ...C } }";
    let query = |threads: &str, comments: &str| {
        format!(
            "query Q($n: Int, $after: String) {{ repository(owner: \"acme\", name: \"widgets\") {{ \
             pullRequest(number: 1) {{ reviewThreads(first: 10) {{ nodes {{ {threads} }} }} }} }} }} \
             fragment T on PullRequestReviewThread {{ {thread} }} \
             fragment C on PullRequestReviewComment {{ {comments} }} \
             fragment F on PullRequestReviewComment {{ {comment} }}"
        )
    };
    let include = |on: &str, spread: &str| format!("... on {on} @include(if: true) {{ {spread} }}");
    let variables = json!({ "n": 3, "after": null });
    let fast = graphql(&emu, ALICE, &query("...T", "...F"), variables.clone()).await;
    assert!(fast.get("errors").is_none(), "{fast}");
    for (threads, comments) in [
        (
            include("PullRequestReviewThread", "...T"),
            "...F".to_owned(),
        ),
        (
            "...T".to_owned(),
            include("PullRequestReviewComment", "...F"),
        ),
    ] {
        let resolved = graphql(&emu, ALICE, &query(&threads, &comments), variables.clone()).await;
        assert_eq!(fast, resolved);
    }
    let threads = &fast["data"]["repository"]["pullRequest"]["reviewThreads"]["nodes"];
    let comment = &threads[1]["comments"]["nodes"][0];
    assert_eq!(comment["body"], "say \"hi\"\n\t\\ é 😀 \u{1} </script>");
    assert_eq!(comment["key"], comment["body"]);
    assert_eq!(
        threads[0]["comments"]["nodes"][1]["author"]["__typename"],
        "Bot"
    );
    assert_eq!(threads[0]["comments"]["nodes"].as_array().unwrap().len(), 3);
    assert_eq!(threads[0]["comments"]["pageInfo"]["hasNextPage"], true);
    assert!(comment["diffHunk"].as_str().unwrap().starts_with("@@"));
    assert_eq!(threads[2]["subjectType"], "FILE");
    assert_eq!(threads[2]["comments"]["nodes"][0]["diffHunk"], "");
    assert_eq!(threads[3]["viewerCanUnresolve"], true);
}

/// Who added or removed a label, and when, on the timeline
/// (`LabeledEvent`, `UnlabeledEvent`), and by REST
/// (`GET …/issues/{n}/events`): the same events, the same actors.
#[tokio::test]
async fn label_events_are_on_the_timeline_with_their_actor() {
    let emu = start(scenario(0, 0)).await;
    for (user, remove) in [("bob", false), ("alice", true)] {
        emu.act(shepherd_emulator::Act::Label {
            user: user.into(),
            pr: Some(1),
            label: "shepherd-approved".into(),
            remove,
        })
        .await
        .unwrap();
    }
    const TIMELINE: &str = r#"
query Timeline($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      timelineItems(first: 10, itemTypes: [LABELED_EVENT, UNLABELED_EVENT]) {
        totalCount
        nodes {
          __typename
          ... on LabeledEvent { id createdAt actor { login } label { name } }
          ... on UnlabeledEvent { id createdAt actor { login } label { name } }
        }
      }
    }
  }
}"#;
    let body = graphql(&emu, ALICE, TIMELINE, vars(None)).await;
    assert!(body.get("errors").is_none(), "{body}");
    let items = &body["data"]["repository"]["pullRequest"]["timelineItems"];
    assert_eq!(items["totalCount"], 2, "{body}");
    let seen: Vec<(String, String, String)> = items["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["__typename"].as_str().unwrap().to_owned(),
                n["actor"]["login"].as_str().unwrap().to_owned(),
                n["label"]["name"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (
                "LabeledEvent".into(),
                "bob".into(),
                "shepherd-approved".into()
            ),
            (
                "UnlabeledEvent".into(),
                "alice".into(),
                "shepherd-approved".into()
            ),
        ]
    );
    let nodes = items["nodes"].as_array().unwrap();
    assert!(nodes[0]["createdAt"].as_str() < nodes[1]["createdAt"].as_str());
    // Only the removals.
    let only = TIMELINE.replace("[LABELED_EVENT, UNLABELED_EVENT]", "[UNLABELED_EVENT]");
    let body = graphql(&emu, ALICE, &only, vars(None)).await;
    assert_eq!(
        body["data"]["repository"]["pullRequest"]["timelineItems"]["totalCount"], 1,
        "{body}"
    );
    // REST: the same events, oldest first, with the same times.
    let (status, events) = rest_get(
        &emu.api_url(),
        "/repos/acme/widgets/issues/1/events",
        Some(ALICE),
    )
    .await;
    assert_eq!(status, 200, "{events}");
    let rest: Vec<(&str, &str, &str)> = events
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["event"].as_str().unwrap(),
                e["actor"]["login"].as_str().unwrap(),
                e["created_at"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rest,
        [
            ("labeled", "bob", nodes[0]["createdAt"].as_str().unwrap()),
            (
                "unlabeled",
                "alice",
                nodes[1]["createdAt"].as_str().unwrap()
            ),
        ]
    );
}
