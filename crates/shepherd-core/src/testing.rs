//! Test fixtures shared by every crate's tests: builders for the domain
//! types tests and benches write by hand (behind the `test-support` feature,
//! which the dev-dependencies enable, this crate's own for its benches;
//! never part of a release build).
//!
//! `thread("PRRT_1").path("src/a.rs").range(Some(2), 3).build()` is an
//! unresolved thread on lines 2-3 of `src/a.rs`; every field the test does
//! not name keeps its default.

use crate::model::{Comment, DiffSide, ReviewThread, SubjectType};

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
}
