//! Shepherd's `GitHubClient` reading what the reviewers did (issue 27)
//! against the emulator: the reviewers stage polls these reads while it
//! waits, so each is conditional and an unchanged answer costs a `304`.
//! GitLab is left out: the forge client reads its notes and merge request
//! plainly (only the commit statuses are conditional there).

use std::collections::BTreeMap;

use shepherd_core::model::RepoRef;
use shepherd_emulator::{BotProfile, BotSpec, RunningEmulator};
use shepherd_forge::{Forge, GitHubClient, GitHubEndpoints, Token};

use crate::common::*;

/// Every GET of one reviewer read.
const READS: [&str; 5] = [
    "GET /repos/{owner}/{repo}/pulls/{number}/reviews",
    "GET /repos/{owner}/{repo}/commits/{ref}/statuses",
    "GET /repos/{owner}/{repo}/commits/{ref}/check-runs",
    "GET /repos/{owner}/{repo}/pulls/{number}/requested_reviewers",
    "GET /repos/{owner}/{repo}/issues/{number}/comments",
];

fn client_for(emu: &RunningEmulator) -> GitHubClient {
    let repo = RepoRef {
        host: "github.com".into(),
        owner: "acme".into(),
        name: "widgets".into(),
    };
    let endpoints = GitHubEndpoints::from_api_url(&emu.api_url()).unwrap();
    GitHubClient::new(repo, endpoints, Token::new(ALICE)).unwrap()
}

fn counts(emu: &RunningEmulator, of: fn(&RunningEmulator, &str) -> u64) -> BTreeMap<&str, u64> {
    READS.iter().map(|key| (*key, of(emu, key))).collect()
}

#[tokio::test]
async fn a_second_unchanged_reviewer_read_is_answered_304_and_reads_the_same() {
    // CodeRabbit's profile leaves a commit status, a review and a
    // walkthrough comment on the head.
    let mut s = scenario(0, 0);
    s.bots = vec![
        BotSpec::new("review-bot", "TODO", "Drop `{match}` at {path}:{line}.")
            .with_profile(BotProfile::Coderabbit),
    ];
    let emu = start(s).await;
    idle(&emu).await;
    let files = BTreeMap::from([("src/todo.sh".to_owned(), Some("# TODO: one\n".to_owned()))]);
    let head = emu
        .act_push("alice", "feature/widgets", files, "More")
        .await
        .unwrap();
    idle(&emu).await;

    let client = client_for(&emu);
    let first = client.reviewer_activity(1, &head).await.unwrap();
    assert!(!first.reviews.is_empty(), "{first:?}");
    assert!(!first.signals.is_empty(), "{first:?}");
    assert!(!first.notes.is_empty(), "{first:?}");
    assert!(
        counts(&emu, RunningEmulator::not_modified_count)
            .values()
            .all(|n| *n == 0),
        "a first read has nothing to match"
    );

    let second = client.reviewer_activity(1, &head).await.unwrap();
    assert_eq!(second, first, "the kept answers read the same");
    let every_once: BTreeMap<&str, u64> = READS.iter().map(|key| (*key, 1)).collect();
    assert_eq!(
        counts(&emu, RunningEmulator::not_modified_count),
        every_once,
        "every read of the second look was answered 304"
    );
    assert_eq!(
        counts(&emu, RunningEmulator::request_count)
            .into_values()
            .collect::<Vec<_>>(),
        [2; 5],
        "each route asked twice, no more"
    );
}
