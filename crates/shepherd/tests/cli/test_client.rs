//! The GitHub client against the emulator: pagination cost, forks, Enterprise
//! paths, and errors that never carry the token.

use shepherd_core::{AuthorKind, PrStatus};
use shepherd_emulator::Scenario;
use shepherd_forge::{Forge, ForgeError};

use crate::common::{client, repo, scenario, start, AUTHOR, REVIEWER};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetches_250_threads_with_3_thread_pages_and_1_extra_comment_page() {
    let emu = start(scenario(250, 130)).await;
    let forge = client(&emu.api_url(), AUTHOR);
    emu.reset_request_counts();

    let snapshot = forge.snapshot(7).await.expect("snapshot");

    assert_eq!(snapshot.threads.len(), 250);
    let long = &snapshot.threads[0];
    assert_eq!(long.comments.len(), 130);
    let bodies: Vec<_> = long.comments.iter().map(|c| c.body.as_str()).collect();
    let expected: Vec<_> = (0..130).map(|c| format!("thread 0, comment {c}")).collect();
    assert_eq!(bodies, expected, "every comment, in order");
    assert!(snapshot.threads[1..].iter().all(|t| t.comments.len() == 1));
    assert_eq!(
        long.comments[1].author.as_ref().map(|a| a.kind),
        Some(AuthorKind::Bot)
    );

    assert_eq!(
        emu.request_count("graphql:ReviewThreads"),
        3,
        "{:?}",
        emu.request_counts()
    );
    assert_eq!(
        emu.request_count("graphql:ThreadComments"),
        1,
        "{:?}",
        emu.request_counts()
    );
    assert_eq!(snapshot.viewer, "author");
    assert_eq!(snapshot.comments.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_pr_is_reported_as_a_fork() {
    let mut s = scenario(1, 1);
    s.pull_request.fork = true;
    let emu = start(s).await;
    let pr = client(&emu.api_url(), AUTHOR)
        .pull_request(7)
        .await
        .expect("pull request");
    assert!(pr.is_cross_repository);
    assert_eq!(pr.state, PrStatus::Open);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enterprise_style_base_url_works() {
    let emu = start(scenario(3, 2)).await;
    let api = emu.enterprise_api_url();
    assert!(api.ends_with("/api/v3"), "{api}");
    emu.reset_request_counts();
    let snapshot = client(&api, REVIEWER).snapshot(7).await.expect("snapshot");
    assert_eq!(snapshot.threads.len(), 3);
    assert_eq!(snapshot.viewer, "reviewer");
    assert_eq!(emu.request_count("graphql:ReviewThreads"), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_token_gives_a_clear_error_without_the_token() {
    let emu = start(scenario(1, 1)).await;
    let secret = "ghp_ThisIsNotARealTokenButLooksLikeOne123";
    let err = client(&emu.api_url(), secret)
        .snapshot(7)
        .await
        .expect_err("a wrong token fails");
    assert!(matches!(err, ForgeError::Unauthorized { .. }), "{err:?}");
    let display = err.to_string();
    let debug = format!("{err:?}");
    assert!(display.contains("401"), "{display}");
    assert!(
        display.contains("PullRequestState"),
        "names the request: {display}"
    );
    assert!(!display.contains(secret) && !debug.contains(secret));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_basic_example_scenario_classifies_as_expected() {
    use shepherd_core::classify::{classify, Class};
    let scenario = Scenario::load(crate::common::examples_dir().join("basic")).expect("loads");
    let emu = start(scenario).await;
    let token = emu
        .users()
        .into_iter()
        .find(|u| u.login == "alice")
        .expect("alice")
        .token;
    let mut repo = repo();
    repo.owner = "acme".into();
    repo.name = "greeter".into();
    let endpoints = shepherd_forge::GitHubEndpoints::from_api_url(&emu.api_url()).unwrap();
    let forge =
        shepherd_forge::GitHubClient::new(repo, endpoints, shepherd_forge::Token::new(token))
            .unwrap();
    let snapshot = forge.snapshot(1).await.expect("snapshot");
    // The resolved thread is not fetched as work; the outdated one is kept.
    assert_eq!(snapshot.threads.len(), 3);
    assert!(snapshot.threads.iter().any(|t| t.is_outdated));
    let items = classify(&snapshot, &Default::default());
    // 3 threads, 2 top-level comments, 1 review body: all new.
    assert_eq!(items.len(), 6, "{items:#?}");
    assert!(items.iter().all(|i| i.class == Class::New));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pull_request_fields_are_read_on_both_forges() {
    use shepherd_forge::{GitLabClient, GitLabEndpoints, Token};
    let mut s = scenario(1, 1);
    s.pull_request.body = "The author's own words.".into();
    s.pull_request.labels = vec!["bug".into(), "ready".into()];

    let emu = start(s.clone()).await;
    let fields = client(&emu.api_url(), AUTHOR)
        .pull_request_fields(7)
        .await
        .expect("GitHub fields");
    assert_eq!(fields.title, "Add widgets");
    assert_eq!(fields.body, "The author's own words.");
    assert_eq!(fields.labels, vec!["bug".to_owned(), "ready".to_owned()]);

    let emu = start(s.into_gitlab().expect("a GitLab scenario")).await;
    let endpoints = GitLabEndpoints::from_api_url(&emu.gitlab_api_url()).expect("endpoints");
    let gitlab = GitLabClient::new(repo(), endpoints, Token::new(AUTHOR))
        .expect("client")
        .with_merge_request(7);
    let fields = gitlab.pull_request_fields(7).await.expect("GitLab fields");
    assert_eq!(fields.title, "Add widgets");
    assert_eq!(fields.body, "The author's own words.");
    assert_eq!(fields.labels, vec!["bug".to_owned(), "ready".to_owned()]);
}
