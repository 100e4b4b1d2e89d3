//! The JSON fast path (`json.rs`, `pull_request/fast_path.rs`) answers what
//! the async-graphql resolvers answer: each of Shepherd's forge queries, and
//! `gh pr view --json …`'s, is run on the demo scenario twice, once with the
//! fast path (as the handler runs it) and once without, and the two answers
//! must be the same JSON.

use std::sync::Arc;

use axum::http::{header, HeaderMap, HeaderValue};
use serde_json::{json, Value};
use shepherd_forge::github::queries;

use super::json::{data_answer, JsonStrings};
use super::schema;
use super::view::RequestContext;
use crate::auth;
use crate::shared::Shared;

/// `gh pr view --json …`'s query, as `tests/emulator/test_graphql_gh.rs`
/// sends it.
const GH_PR_VIEW: &str = include_str!("../../tests/queries/gh_pr_view.graphql");

/// The answer to `query`, written as the handler writes it; with `fast`,
/// the fast path may write objects whole. Also whether it did.
async fn answer(
    shared: &Arc<Shared>,
    token: &str,
    query: &str,
    variables: &Value,
) -> (Value, Value, bool) {
    let mut headers = HeaderMap::new();
    let bearer = HeaderValue::from_str(&format!("bearer {token}")).unwrap();
    headers.insert(header::AUTHORIZATION, bearer);
    let viewer = auth::authenticate(&shared.read(), &headers).unwrap();
    let request = || {
        async_graphql::Request::new(query)
            .variables(async_graphql::Variables::from_json(variables.clone()))
            .data(RequestContext {
                shared: shared.clone(),
                viewer: viewer.clone(),
            })
    };
    let strings = JsonStrings::default();
    let fast = schema::shared()
        .execute(request().data(strings.clone()))
        .await;
    assert!(fast.errors.is_empty(), "{query}: {:?}", fast.errors);
    let pieces = strings.take();
    let used = !pieces.is_empty();
    let fast: Value = serde_json::from_slice(&data_answer(&fast.data, &pieces)).unwrap();
    let slow = schema::shared().execute(request()).await;
    assert!(slow.errors.is_empty(), "{query}: {:?}", slow.errors);
    let slow: Value = serde_json::from_slice(&data_answer(&slow.data, &[])).unwrap();
    (fast, slow, used)
}

#[tokio::test]
async fn the_fast_path_answers_what_the_resolvers_answer_on_shepherds_and_ghs_queries() {
    let scenario = crate::Scenario::demo().unwrap();
    let emu = crate::Emulator::start(scenario, "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let shared = emu.shared().clone();
    let (token, owner, name, number, thread_ids) = {
        let state = shared.read();
        let pr = state.pull_requests.first().unwrap();
        let author = state.user(&pr.author).unwrap();
        let threads: Vec<String> = pr.threads.iter().map(|t| t.id.clone()).collect();
        (
            author.token.clone(),
            state.repository.owner.clone(),
            state.repository.name.clone(),
            pr.number,
            threads,
        )
    };
    let pr_vars = json!({ "owner": owner, "name": name, "number": number, "cursor": null });
    let mut fast_used = false;
    for (op, query) in queries::all_documents() {
        if *op == queries::RESOLVE_REVIEW_THREAD_OP {
            continue; // a write: answered by the resolvers alone
        }
        let per_thread = matches!(
            *op,
            queries::THREAD_COMMENTS_OP
                | queries::THREAD_COMMENTS_TAIL_OP
                | queries::THREAD_BY_ID_OP
        );
        let variables: Vec<Value> = if per_thread {
            thread_ids
                .iter()
                .map(|id| json!({ "id": id, "cursor": null }))
                .collect()
        } else {
            vec![pr_vars.clone()]
        };
        for vars in variables {
            let (fast, slow, used) = answer(&shared, &token, query, &vars).await;
            assert_eq!(fast, slow, "{op} with {vars}");
            fast_used |= used;
        }
    }
    let gh_vars = json!({ "owner": owner, "repo": name, "pr_number": number });
    let (fast, slow, _) = answer(&shared, &token, GH_PR_VIEW, &gh_vars).await;
    assert_eq!(fast, slow, "gh pr view");
    assert!(
        fast_used,
        "no query took the fast path: the test proves nothing"
    );
}
