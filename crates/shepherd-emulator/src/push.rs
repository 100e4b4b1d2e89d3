//! What happens after a push: the one hook point for push processing.
//!
//! Today a push that moves a pull request's head branch updates the PR's
//! head SHA (`headRefOid`) and `refs/pull/N/head`. Issue 3 hangs the rest of
//! GitHub's push effects here, per moved PR: marking threads outdated where
//! their lines changed, starting CI, and waking the reviewer bots.

use crate::git::{self, GitError};
use crate::server::Shared;
use crate::state::HeadMoved;

/// Reads the repository's branches after a successful `git-receive-pack`
/// and applies the push to the state. Returns the pull requests whose head
/// moved.
pub(crate) async fn after_receive_pack(shared: &Shared) -> Result<Vec<HeadMoved>, GitError> {
    let git_dir = shared.read().repository.git_dir.clone();
    let git_env = shared.git.clone();
    let branches = {
        let git_dir = git_dir.clone();
        let git_env = git_env.clone();
        tokio::task::spawn_blocking(move || git::branches(&git_env, &git_dir))
            .await
            .map_err(|join| GitError::Spawn {
                what: "for-each-ref".into(),
                source: std::io::Error::other(join),
            })??
    };

    let moved: Vec<HeadMoved> = {
        let mut state = shared.write();
        let heads: Vec<(String, String)> = state
            .pull_requests
            .iter()
            .filter_map(|pr| {
                let sha = branches.get(&pr.head_ref)?;
                (*sha != pr.head_sha).then(|| (pr.head_ref.clone(), sha.clone()))
            })
            .collect();
        heads
            .iter()
            .flat_map(|(branch, sha)| state.move_branch(branch, sha))
            .collect()
    };

    for event in &moved {
        tracing::info!(
            pr = event.number,
            old = %event.old_sha,
            new = %event.new_sha,
            "pull request head moved"
        );
        let pull_ref = format!("refs/pull/{}/head", event.number);
        let (git_env, git_dir, new_sha) = (git_env.clone(), git_dir.clone(), event.new_sha.clone());
        tokio::task::spawn_blocking(move || {
            git_env.run(&git_dir, &["update-ref", &pull_ref, &new_sha])
        })
        .await
        .map_err(|join| GitError::Spawn {
            what: "update-ref".into(),
            source: std::io::Error::other(join),
        })??;
        // Issue 3: outdated threads, CI and reviewer bots start here.
    }
    Ok(moved)
}
