//! GitHub's JSON for what the client reads, as the fakes of GitHub answer
//! it: shared by the integration tests and, through `#[path]` in
//! `src/github/mod.rs`, by the client's unit tests.

use serde_json::{json, Value};

/// Review comment `i` of thread `thread` as GitHub's GraphQL answers it:
/// ids from both numbers, the first comment of a thread by a bot.
pub fn review_comment(thread: usize, i: usize) -> Value {
    json!({
        "id": format!("PRRC_{thread}_{i}"),
        "databaseId": thread * 1000 + i,
        "body": format!("comment {i}"),
        "url": format!("https://github.com/o/r/pull/1#discussion_r{}", thread * 1000 + i),
        "createdAt": "2024-05-02T10:00:00Z",
        "diffHunk": "@@ -1 +1 @@",
        "author": { "__typename": if i == 0 { "Bot" } else { "User" }, "login": "rev" },
        "pullRequestReview": { "state": "COMMENTED" },
    })
}
