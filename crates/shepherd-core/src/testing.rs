//! Test fixtures shared by every crate's tests: builders for the domain
//! types tests and benches write by hand (behind the `test-support` feature,
//! which the dev-dependencies enable, this crate's own for its benches;
//! never part of a release build).
//!
//! `thread("PRRT_1").path("src/a.rs").range(Some(2), 3).build()` is an
//! unresolved thread on lines 2-3 of `src/a.rs`, and
//! `comment("c1", "rev", "please rename").hunk("@@ -1 +1 @@").build()` a
//! reviewer's comment on it; every field the test does not name keeps its
//! default.

use crate::model::{
    Author, AuthorKind, Comment, DiffSide, ForgeKind, PrSnapshot, PrStatus, PullRequest, RepoRef,
    ReviewState, ReviewThread, SubjectType, TopLevelComment,
};

/// A review thread `id` to build: unresolved, current, on line 1 of
/// `src/lib.rs` (the head side), repliable and resolvable, with no comments.
pub fn thread(id: impl Into<String>) -> ThreadBuilder {
    ThreadBuilder {
        thread: ReviewThread {
            id: id.into(),
            is_resolved: false,
            is_outdated: false,
            path: "src/lib.rs".to_owned(),
            line: Some(1),
            start_line: None,
            original_line: Some(1),
            original_start_line: None,
            diff_side: DiffSide::Right,
            subject_type: SubjectType::Line,
            viewer_can_reply: true,
            viewer_can_resolve: true,
            comments: Vec::new(),
        },
    }
}

/// A [`ReviewThread`] under construction; see [`thread`].
#[derive(Debug, Clone)]
#[must_use]
pub struct ThreadBuilder {
    thread: ReviewThread,
}

impl ThreadBuilder {
    /// The file the thread is on.
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.thread.path = path.into();
        self
    }

    /// On `line` alone, now and when it was written.
    pub fn at(self, line: u32) -> Self {
        self.range(None, line)
    }

    /// On `start..=line` (`start` `None`: one line), now and when it was
    /// written.
    pub fn range(mut self, start: Option<u32>, line: u32) -> Self {
        self.thread.start_line = start;
        self.thread.line = Some(line);
        self.thread.original_start_line = start;
        self.thread.original_line = Some(line);
        self
    }

    /// The current range only: `line` `None` when the lines are gone.
    pub fn current(mut self, start: Option<u32>, line: Option<u32>) -> Self {
        self.thread.start_line = start;
        self.thread.line = line;
        self
    }

    /// The range when the thread was written only.
    pub fn original(mut self, start: Option<u32>, line: Option<u32>) -> Self {
        self.thread.original_start_line = start;
        self.thread.original_line = line;
        self
    }

    /// Whether the lines it is anchored to changed since.
    pub fn outdated(mut self, outdated: bool) -> Self {
        self.thread.is_outdated = outdated;
        self
    }

    /// Whether the thread is resolved.
    pub fn resolved(mut self, resolved: bool) -> Self {
        self.thread.is_resolved = resolved;
        self
    }

    /// Which side of the diff.
    pub fn side(mut self, side: DiffSide) -> Self {
        self.thread.diff_side = side;
        self
    }

    /// Line or file thread.
    pub fn subject(mut self, subject: SubjectType) -> Self {
        self.thread.subject_type = subject;
        self
    }

    /// Whether the viewer may reply and may resolve.
    pub fn viewer_can(mut self, reply: bool, resolve: bool) -> Self {
        self.thread.viewer_can_reply = reply;
        self.thread.viewer_can_resolve = resolve;
        self
    }

    /// One more comment, after the others.
    pub fn comment(mut self, comment: Comment) -> Self {
        self.thread.comments.push(comment);
        self
    }

    /// More comments, after the others.
    pub fn comments(mut self, comments: impl IntoIterator<Item = Comment>) -> Self {
        self.thread.comments.extend(comments);
        self
    }

    /// The thread.
    pub fn build(self) -> ReviewThread {
        self.thread
    }
}

impl From<ThreadBuilder> for ReviewThread {
    fn from(builder: ThreadBuilder) -> Self {
        builder.build()
    }
}

/// A comment `id` by the person `login` saying `body`, to build: database
/// id 1, no URL, written 2024-01-01T00:00:00Z, on no diff hunk, in no review.
pub fn comment(id: impl Into<String>, login: &str, body: impl Into<String>) -> CommentBuilder {
    CommentBuilder {
        comment: Comment {
            id: id.into(),
            database_id: Some(1),
            author: Some(Author {
                login: login.to_owned(),
                kind: AuthorKind::User,
            }),
            body: body.into(),
            url: String::new(),
            created_at: "2024-01-01T00:00:00Z".to_owned(),
            diff_hunk: None,
            review_state: None,
            review_submitted_at: None,
        },
    }
}

/// A [`Comment`] under construction; see [`comment`].
#[derive(Debug, Clone)]
#[must_use]
pub struct CommentBuilder {
    comment: Comment,
}

impl CommentBuilder {
    /// Person or bot (the author stays whoever [`comment`] named).
    pub fn kind(mut self, kind: AuthorKind) -> Self {
        if let Some(author) = self.comment.author.as_mut() {
            author.kind = kind;
        }
        self
    }

    /// Written by a deleted account (GitHub's "ghost"): no author.
    pub fn ghost(mut self) -> Self {
        self.comment.author = None;
        self
    }

    /// The diff hunk it was made on.
    pub fn hunk(mut self, hunk: impl AsRef<str>) -> Self {
        self.comment.diff_hunk = Some(hunk.as_ref().into());
        self
    }

    /// The numeric id REST uses (`None`: the forge gave none).
    pub fn database_id(mut self, id: Option<u64>) -> Self {
        self.comment.database_id = id;
        self
    }

    /// Its web URL.
    pub fn url(mut self, url: impl Into<String>) -> Self {
        self.comment.url = url.into();
        self
    }

    /// When it was written (RFC 3339).
    pub fn created_at(mut self, at: impl Into<String>) -> Self {
        self.comment.created_at = at.into();
        self
    }

    /// The state of the review it belongs to.
    pub fn review(mut self, state: ReviewState) -> Self {
        self.comment.review_state = Some(state);
        self
    }

    /// The comment.
    pub fn build(self) -> Comment {
        self.comment
    }
}

impl From<CommentBuilder> for Comment {
    fn from(builder: CommentBuilder) -> Self {
        builder.build()
    }
}

/// PR `number` of `github.com/o/r`, open, by `dev`, from `feature` (head
/// `abc`) into `main`.
pub fn pull_request(number: u64) -> PullRequest {
    PullRequest {
        number,
        id: None,
        title: "t".to_owned(),
        url: format!("https://github.com/o/r/pull/{number}"),
        state: PrStatus::Open,
        is_draft: false,
        head_ref: "feature".to_owned(),
        head_sha: "abc".to_owned(),
        base_ref: "main".to_owned(),
        is_cross_repository: false,
        viewer_has_pending_review: false,
        author: Some(Author {
            login: "dev".to_owned(),
            kind: AuthorKind::User,
        }),
    }
}

/// What `viewer` sees of PR 1 of `github.com/o/r`, open, by `dev`, from
/// `feature` (head `abc`) into `main`: these threads and top-level comments.
pub fn snapshot(
    viewer: &str,
    threads: Vec<ReviewThread>,
    comments: Vec<TopLevelComment>,
) -> PrSnapshot {
    PrSnapshot {
        forge: ForgeKind::GitHub,
        repo: RepoRef {
            host: "github.com".to_owned(),
            owner: "o".to_owned(),
            name: "r".to_owned(),
        },
        viewer: viewer.to_owned(),
        pr: pull_request(1),
        threads,
        comments,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_setters() {
        let t = thread("T").build();
        assert_eq!(t.id, "T");
        assert_eq!(
            (t.line, t.original_line, t.start_line),
            (Some(1), Some(1), None)
        );
        assert!(t.viewer_can_reply && t.viewer_can_resolve && !t.is_outdated);
        let t = thread("T")
            .path("a.sh")
            .range(Some(12), 13)
            .original(Some(2), Some(3))
            .outdated(true)
            .resolved(true)
            .side(DiffSide::Left)
            .subject(SubjectType::File)
            .viewer_can(false, false)
            .build();
        assert_eq!(t.path, "a.sh");
        assert_eq!((t.start_line, t.line), (Some(12), Some(13)));
        assert_eq!((t.original_start_line, t.original_line), (Some(2), Some(3)));
        assert!(t.is_outdated && t.is_resolved && !t.viewer_can_reply && !t.viewer_can_resolve);
        assert_eq!(
            (t.diff_side, t.subject_type),
            (DiffSide::Left, SubjectType::File)
        );
        let t = thread("T").current(None, None).build();
        assert_eq!((t.line, t.original_line), (None, Some(1)));
    }

    #[test]
    fn comment_defaults_and_setters() {
        let c = comment("c1", "rev", "please").build();
        assert_eq!((c.id.as_str(), c.body.as_str()), ("c1", "please"));
        assert_eq!(c.database_id, Some(1));
        let author = c.author.unwrap_or_else(|| panic!("an author"));
        assert_eq!(
            (author.login.as_str(), author.kind),
            ("rev", AuthorKind::User)
        );
        assert_eq!(c.created_at, "2024-01-01T00:00:00Z");
        assert!(c.diff_hunk.is_none() && c.review_state.is_none() && c.url.is_empty());
        let c = comment("c2", "bot", "hi")
            .kind(AuthorKind::Bot)
            .hunk("@@ -1 +1 @@")
            .database_id(None)
            .url("https://x/2")
            .created_at("2025-01-01T00:00:00Z")
            .review(ReviewState::Commented)
            .build();
        assert_eq!(c.author.map(|a| a.kind), Some(AuthorKind::Bot));
        assert_eq!(c.diff_hunk.as_deref(), Some("@@ -1 +1 @@"));
        assert_eq!(c.database_id, None);
        assert_eq!(c.url, "https://x/2");
        assert_eq!(c.created_at, "2025-01-01T00:00:00Z");
        assert_eq!(c.review_state, Some(ReviewState::Commented));
        assert!(comment("c3", "x", "y").ghost().build().author.is_none());
    }
}
