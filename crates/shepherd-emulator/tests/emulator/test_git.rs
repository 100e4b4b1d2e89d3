//! Git over smart HTTP with the real git: clone, commit, push.

use crate::common::*;

/// `git push` of the clone's HEAD to the PR's head branch.
const PUSH_HEAD: &[&str] = &["push", "--quiet", "origin", "HEAD:feature/widgets"];

#[tokio::test]
async fn clone_commit_push_updates_the_head_sha() {
    let emu = start(scenario(1, 1)).await;
    let before = head_ref_oid(&emu, ALICE).await;
    let url = authed_git_url(&emu, ALICE);
    // Client-side git blocks: run it off the runtime that serves the emulator.
    let (cloned, pushed, out) = tokio::task::spawn_blocking(move || {
        let clone = Checkout::of(&url, Some("feature/widgets"));
        assert!(clone.repo.join("src/lib.rs").exists());
        let cloned = clone.head();
        std::fs::write(clone.repo.join("NEW.md"), "new file\n").unwrap();
        clone.ok(&["add", "NEW.md"]);
        clone.ok(&["commit", "--quiet", "-m", "Add NEW.md"]);
        (cloned, clone.head(), clone.run(PUSH_HEAD))
    })
    .await
    .unwrap();
    assert_git_ok(&out);
    assert_eq!(cloned, before);
    assert_ne!(pushed, before);

    assert_eq!(head_ref_oid(&emu, ALICE).await, pushed);
    let (_, pr) = rest_get(&emu.api_url(), "/repos/acme/widgets/pulls/1", Some(ALICE)).await;
    assert_eq!(pr["head"]["sha"], pushed.as_str());
    let git = GitClient::new();
    let pull_ref = git.ok(&emu.repository_path(), &["rev-parse", "refs/pull/1/head"]);
    assert_eq!(pull_ref, pushed);
    assert_eq!(
        emu.request_count("POST /{owner}/{repo}.git/git-receive-pack"),
        1
    );
    assert!(emu.request_count("POST /{owner}/{repo}.git/git-upload-pack") >= 1);
}

#[tokio::test]
async fn push_to_another_branch_leaves_the_head_alone() {
    let emu = start(scenario(0, 0)).await;
    let before = head_ref_oid(&emu, ALICE).await;
    let url = authed_git_url(&emu, ALICE);
    let out = tokio::task::spawn_blocking(move || {
        let clone = Checkout::of(&url, None);
        clone.ok(&["commit", "--quiet", "--allow-empty", "-m", "side"]);
        clone.run(&["push", "--quiet", "origin", "HEAD:refs/heads/side"])
    })
    .await
    .unwrap();
    assert_git_ok(&out);
    assert_eq!(head_ref_oid(&emu, ALICE).await, before);
}

#[tokio::test]
async fn read_only_user_can_fetch_but_not_push() {
    let emu = start(scenario(0, 0)).await;
    let before = head_ref_oid(&emu, ALICE).await;
    let url = authed_git_url(&emu, READER);
    let out = tokio::task::spawn_blocking(move || {
        let clone = Checkout::of(&url, Some("feature/widgets"));
        clone.ok(&["commit", "--quiet", "--allow-empty", "-m", "nope"]);
        clone.run(&["push", "origin", "HEAD:feature/widgets"])
    })
    .await
    .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("403"), "{stderr}");
    assert!(!stderr.contains(READER), "token leaked: {stderr}");
    assert_eq!(head_ref_oid(&emu, ALICE).await, before);
}

#[tokio::test]
async fn clone_without_valid_token_or_access_fails() {
    let emu = start(scenario(0, 0)).await;
    for token in ["wrong-token", STRANGER] {
        let url = authed_git_url(&emu, token);
        let out = tokio::task::spawn_blocking(move || {
            let git = GitClient::new();
            let work = tempfile::tempdir().unwrap();
            git.run(work.path(), &["clone", "--quiet", &url, "repo"])
        })
        .await
        .unwrap();
        assert!(!out.status.success(), "clone with {token} succeeded");
    }
    // No credentials at all: the challenge that makes git ask for them.
    let response = client()
        .get(format!(
            "{}/info/refs?service=git-upload-pack",
            emu.git_url("acme", "widgets")
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
    assert_eq!(
        response.headers()["www-authenticate"],
        "Basic realm=\"GitHub\""
    );
}

#[tokio::test]
async fn large_push_with_a_chunked_body_goes_through() {
    let emu = start(scenario(0, 0)).await;
    let url = authed_git_url(&emu, ALICE);
    let (pushed, out) = tokio::task::spawn_blocking(move || {
        let clone = Checkout::of(&url, Some("feature/widgets"));
        // Incompressible bytes, more than git's 1 MiB post buffer, so git
        // sends the pack with chunked transfer encoding (no Content-Length).
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let blob: Vec<u8> = (0..3 * 1024 * 1024)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            })
            .collect();
        std::fs::write(clone.repo.join("big.bin"), blob).unwrap();
        clone.ok(&["add", "big.bin"]);
        clone.ok(&["commit", "--quiet", "-m", "Add a big file"]);
        (clone.head(), clone.run(PUSH_HEAD))
    })
    .await
    .unwrap();
    assert_git_ok(&out);
    assert_eq!(head_ref_oid(&emu, ALICE).await, pushed);
}

/// A `commit_then_fail` fault on git's receive-pack: the push lands (the PR's
/// head moves), but the client sees a failure, as after a lost response.
#[tokio::test]
async fn a_commit_then_fail_push_lands_but_the_client_sees_an_error() {
    let emu = start(scenario(1, 1)).await;
    emu.set_fault(
        shepherd_emulator::FaultSpec::nth("POST /{owner}/{repo}.git/git-receive-pack", 1)
            .with_commit_then_fail(),
    )
    .unwrap();
    let (pushed, out) = try_push(authed_git_url(&emu, ALICE)).await;
    assert!(!out.status.success(), "the client must see the failure");
    assert_eq!(head_ref_oid(&emu, ALICE).await, pushed, "the push landed");
}

/// A plain status fault on git answers that status and serves nothing.
#[tokio::test]
async fn a_status_fault_on_git_refuses_the_push() {
    let emu = start(scenario(1, 1)).await;
    let before = head_ref_oid(&emu, ALICE).await;
    emu.set_fault(
        shepherd_emulator::FaultSpec::every("POST /{owner}/{repo}.git/git-receive-pack")
            .with_status(503, None),
    )
    .unwrap();
    let (_, out) = try_push(authed_git_url(&emu, ALICE)).await;
    assert!(!out.status.success());
    assert_eq!(head_ref_oid(&emu, ALICE).await, before, "nothing landed");
}

/// Clones `feature/widgets` from `url`, commits (empty) and tries to push it
/// back: the commit made and git's answer to the push.
async fn try_push(url: String) -> (String, std::process::Output) {
    tokio::task::spawn_blocking(move || {
        let clone = Checkout::of(&url, Some("feature/widgets"));
        clone.ok(&["commit", "--quiet", "--allow-empty", "-m", "a change"]);
        (clone.head(), clone.run(PUSH_HEAD))
    })
    .await
    .unwrap()
}
