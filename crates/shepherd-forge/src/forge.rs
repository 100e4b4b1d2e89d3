//! The `Forge` trait: what the engine asks of GitHub or GitLab.

use async_trait::async_trait;
use shepherd_core::model::{
    ForgeKind, PrSnapshot, PullRequest, RepoRef, ReviewThread, TopLevelComment,
};

use crate::error::Result;

/// One repository on one forge, as seen by one token.
///
/// Used as `Arc<dyn Forge>`. This is the read side; the writes (reply,
/// resolve, edit, CI) join it in a later issue. Implementations retry reads
/// on transient failures; writes will never be retried blindly.
#[async_trait]
pub trait Forge: Send + Sync {
    /// Which forge this is.
    fn kind(&self) -> ForgeKind;

    /// The repository this client talks about.
    fn repo(&self) -> &RepoRef;

    /// The login of the account the token belongs to.
    async fn viewer(&self) -> Result<String>;

    /// The state of pull request `number`.
    async fn pull_request(&self, number: u64) -> Result<PullRequest>;

    /// Every unresolved review thread of `number`, outdated ones included,
    /// each with every comment (oldest first), in forge order.
    async fn review_threads(&self, number: u64) -> Result<Vec<ReviewThread>>;

    /// The conversation comments of `number` and the non-empty bodies of its
    /// submitted reviews, oldest first.
    async fn top_level_comments(&self, number: u64) -> Result<Vec<TopLevelComment>>;

    /// Everything a round starts from: the PR, the viewer, the unresolved
    /// threads and the top-level comments. The PR is fetched first (a client
    /// may learn the viewer from it), then the rest concurrently.
    async fn snapshot(&self, number: u64) -> Result<PrSnapshot> {
        let pr = self.pull_request(number).await?;
        let viewer = self.viewer().await?;
        let (threads, comments) =
            tokio::try_join!(self.review_threads(number), self.top_level_comments(number))?;
        Ok(PrSnapshot {
            forge: self.kind(),
            repo: self.repo().clone(),
            viewer,
            pr,
            threads,
            comments,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};

    use shepherd_core::model::{PrStatus, TopLevelKind};

    use super::*;

    /// A forge that records the order of calls; `viewer` is known only after
    /// `pull_request`, as on GitHub.
    #[derive(Default)]
    struct Recording {
        calls: Mutex<Vec<&'static str>>,
        viewer_fetches: AtomicUsize,
        repo: Option<RepoRef>,
    }

    #[async_trait]
    impl Forge for Recording {
        fn kind(&self) -> ForgeKind {
            ForgeKind::GitHub
        }
        fn repo(&self) -> &RepoRef {
            self.repo.as_ref().unwrap()
        }
        async fn viewer(&self) -> Result<String> {
            self.calls.lock().unwrap().push("viewer");
            self.viewer_fetches.fetch_add(1, Ordering::SeqCst);
            Ok("me".into())
        }
        async fn pull_request(&self, number: u64) -> Result<PullRequest> {
            self.calls.lock().unwrap().push("pull_request");
            Ok(PullRequest {
                number,
                id: None,
                title: "t".into(),
                url: "u".into(),
                state: PrStatus::Open,
                is_draft: false,
                head_ref: "h".into(),
                head_sha: "0".repeat(40),
                base_ref: "main".into(),
                is_cross_repository: false,
                viewer_has_pending_review: false,
                author: None,
            })
        }
        async fn review_threads(&self, _number: u64) -> Result<Vec<ReviewThread>> {
            self.calls.lock().unwrap().push("review_threads");
            Ok(Vec::new())
        }
        async fn top_level_comments(&self, _number: u64) -> Result<Vec<TopLevelComment>> {
            self.calls.lock().unwrap().push("top_level_comments");
            Ok(vec![TopLevelComment {
                id: "IC_1".into(),
                database_id: Some(1),
                kind: TopLevelKind::IssueComment,
                author: None,
                body: "b".into(),
                url: "u".into(),
                created_at: "2024-01-01T00:00:00Z".into(),
                review_state: None,
            }])
        }
    }

    #[tokio::test]
    async fn snapshot_fetches_the_pr_first_and_combines_everything() {
        let repo = RepoRef {
            host: "github.com".into(),
            owner: "o".into(),
            name: "r".into(),
        };
        let recording = Arc::new(Recording {
            repo: Some(repo.clone()),
            ..Recording::default()
        });
        let forge: Arc<dyn Forge> = recording.clone();
        let snapshot = forge.snapshot(7).await.unwrap();
        assert_eq!(snapshot.forge, ForgeKind::GitHub);
        assert_eq!(snapshot.repo, repo);
        assert_eq!(snapshot.viewer, "me");
        assert_eq!(snapshot.pr.number, 7);
        assert_eq!(snapshot.comments.len(), 1);
        let calls = recording.calls.lock().unwrap().clone();
        assert_eq!(&calls[..2], ["pull_request", "viewer"]);
        assert_eq!(calls.len(), 4);
        assert_eq!(recording.viewer_fetches.load(Ordering::SeqCst), 1);
    }
}
