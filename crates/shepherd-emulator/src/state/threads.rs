//! Writes to review threads, reviews and notes: replies, new threads and
//! discussions, resolving, system notes, approvals, and submitting a
//! review.

use super::records::{
    CreatedReview, LabelRecord, NewComment, NewThread, PullRequestRecord, ReviewCommentRecord,
    ReviewRecord, SystemNoteRecord, ThreadRecord, WriteError,
};
use super::store::State;
use crate::ids::{self, NodeKind};
use crate::scenario::ReviewStateSpec;

/// The writes: each one of GitHub's effects, applied whole.
impl State {
    pub(super) fn pr_index(&self, number: u64) -> Result<usize, WriteError> {
        self.pull_requests
            .iter()
            .position(|p| p.number == number)
            .ok_or_else(|| WriteError::NotFound("Not Found".into()))
    }

    /// The pull request holding review thread `thread_id`, and the thread's index.
    pub(crate) fn thread_location(&self, thread_id: u64) -> Option<(usize, usize)> {
        self.pull_requests.iter().enumerate().find_map(|(p, pr)| {
            let t = pr.threads.iter().position(|t| t.database_id == thread_id)?;
            Some((p, t))
        })
    }

    /// The pull request and index of review thread `thread_id` when `found`
    /// accepts it (visible to the actor, published); a 404 otherwise.
    fn thread_where(
        &self,
        thread_id: u64,
        found: impl Fn(&PullRequestRecord, &ThreadRecord) -> bool,
    ) -> Result<(usize, usize), WriteError> {
        self.thread_location(thread_id)
            .filter(|(p, t)| {
                let pr = &self.pull_requests[*p];
                found(pr, &pr.threads[*t])
            })
            .ok_or_else(|| WriteError::NotFound(String::new()))
    }

    /// A reply by `author` in thread `t` of PR `p`, in the review `review`
    /// picks once the body passed (a refused body makes no review).
    fn reply_in(
        &mut self,
        (p, t): (usize, usize),
        author: &str,
        body: &str,
        review: impl FnOnce(&mut Self) -> u64,
    ) -> Result<NewComment, WriteError> {
        self.check_body(body)?;
        let review_id = review(self);
        Ok(self.push_reply(p, t, author, body, review_id))
    }

    /// Creates the label `name` in the repository unless it exists.
    pub(crate) fn ensure_label(&mut self, name: &str) {
        if self
            .labels
            .iter()
            .any(|l| l.name.eq_ignore_ascii_case(name))
        {
            return;
        }
        let database_id = self.next_id();
        self.labels.push(LabelRecord {
            database_id,
            id: ids::node_id(NodeKind::Label, database_id),
            name: name.to_owned(),
            // GitHub's default colour for labels created on the fly.
            color: "ededed".to_owned(),
            description: None,
        });
    }

    /// The label record named `name` (case-insensitive, as on GitHub).
    pub(crate) fn label(&self, name: &str) -> Option<&LabelRecord> {
        self.labels
            .iter()
            .find(|l| l.name.eq_ignore_ascii_case(name))
    }

    /// The review a new comment of `author` joins: their pending review if
    /// they have one (as on GitHub, where it then stays invisible to others
    /// until submitted), else a new COMMENTED review of its own.
    pub(super) fn review_for_comment(&mut self, p: usize, author: &str) -> u64 {
        if let Some(id) = self.pull_requests[p].pending_review_of(author) {
            return id;
        }
        self.commented_review(p, author)
    }

    /// A new, submitted COMMENTED review with an empty body.
    pub(super) fn commented_review(&mut self, p: usize, author: &str) -> u64 {
        let database_id = self.next_id();
        let created_at = self.tick();
        let commit = self.pull_requests[p].head_sha.clone();
        self.pr_mut(p).reviews.push(ReviewRecord::commented(
            database_id,
            author,
            commit,
            created_at,
        ));
        database_id
    }

    /// Appends a reply to thread `t` of PR `p`.
    pub(super) fn push_reply(
        &mut self,
        p: usize,
        t: usize,
        author: &str,
        body: &str,
        review_id: u64,
    ) -> NewComment {
        let database_id = self.next_id();
        let created_at = self.tick();
        let pr = self.pr_mut(p);
        let thread = &mut pr.threads[t];
        let root = &thread.comments[0];
        let comment = ReviewCommentRecord {
            database_id,
            id: ids::node_id(NodeKind::ReviewComment, database_id),
            author: author.to_owned(),
            body: body.to_owned(),
            created_at: created_at.clone(),
            review_id,
            reply_to: Some(root.database_id),
            diff_hunk: root.diff_hunk.clone(),
            original_commit: thread.commit.clone(),
        };
        thread.comments.push(comment);
        let thread_id = thread.database_id;
        pr.updated_at = created_at;
        NewComment {
            pr_number: pr.number,
            thread_id,
            comment_id: database_id,
            review_id,
        }
    }

    /// REST `POST …/pulls/{n}/comments/{comment_id}/replies`: a reply in the
    /// thread of comment `comment_id` (a reply to a reply joins the same
    /// thread, answering its first comment).
    pub(crate) fn apply_reply_to_comment(
        &mut self,
        number: u64,
        author: &str,
        comment_id: u64,
        body: &str,
    ) -> Result<NewComment, WriteError> {
        let p = self.pr_index(number)?;
        let pr = &self.pull_requests[p];
        let t = pr
            .find_comment(comment_id)
            .filter(|(t, c)| pr.review_visible_to(pr.threads[*t].comments[*c].review_id, author))
            .map(|(t, _)| t)
            .ok_or_else(|| WriteError::NotFound("Not Found".into()))?;
        self.reply_in((p, t), author, body, |s| s.review_for_comment(p, author))
    }

    /// GraphQL `addPullRequestReviewThreadReply`: a reply in thread
    /// `thread_id`, in review `review_id` when given (which must be the
    /// author's pending review).
    pub(crate) fn apply_thread_reply(
        &mut self,
        thread_id: u64,
        author: &str,
        body: &str,
        review_id: Option<u64>,
    ) -> Result<NewComment, WriteError> {
        let (p, t) =
            self.thread_where(thread_id, |pr, thread| pr.thread_visible_to(thread, author))?;
        self.check_body(body)?;
        let review_id = match review_id {
            Some(id) => {
                let pr = &self.pull_requests[p];
                let ok = pr
                    .review(id)
                    .is_some_and(|r| r.author == author && r.state == ReviewStateSpec::Pending);
                if !ok {
                    return Err(WriteError::Unprocessable(
                        "The review must be a pending review of the viewer.".into(),
                    ));
                }
                id
            }
            None => self.review_for_comment(p, author),
        };
        Ok(self.push_reply(p, t, author, body, review_id))
    }

    /// `resolveReviewThread` / `unresolveReviewThread`; idempotent. Returns
    /// the PR number and the thread's index.
    pub(crate) fn apply_resolve(
        &mut self,
        thread_id: u64,
        viewer: &str,
        may_write: bool,
        resolve: bool,
    ) -> Result<(u64, usize), WriteError> {
        let (p, t) =
            self.thread_where(thread_id, |pr, thread| pr.thread_visible_to(thread, viewer))?;
        let pr = &self.pull_requests[p];
        if !may_write && pr.author != viewer {
            return Err(WriteError::Forbidden(format!(
                "{viewer} does not have the correct permissions to execute `{}`",
                if resolve {
                    "ResolveReviewThread"
                } else {
                    "UnresolveReviewThread"
                }
            )));
        }
        let now = ids::iso8601(self.clock);
        let pr = self.pr_mut(p);
        let thread = &mut pr.threads[t];
        if thread.resolved != resolve {
            thread.resolved = resolve;
            thread.resolved_by = resolve.then(|| viewer.to_owned());
            pr.updated_at = now;
            self.clock += 60;
        }
        Ok((self.pull_requests[p].number, t))
    }

    /// GitLab's `POST …/discussions/:id/notes`: a reply posted at once (the
    /// API never adds it to the author's draft notes), in a COMMENTED
    /// review of its own. The thread must have a submitted comment.
    pub(crate) fn apply_direct_reply(
        &mut self,
        thread_id: u64,
        author: &str,
        body: &str,
    ) -> Result<NewComment, WriteError> {
        let (p, t) = self.thread_where(thread_id, |pr, thread| pr.thread_published(thread))?;
        self.reply_in((p, t), author, body, |s| s.commented_review(p, author))
    }

    /// GitLab's `PUT …/discussions/:id?resolved=`: resolves or unresolves as
    /// [`State::apply_resolve`] does. A resolve that leaves every thread of
    /// the merge request resolved posts the system note `resolved all
    /// threads`; a resolve of a thread that was resolved already changes
    /// nothing but posts a system note all the same (marked `duplicate`), as
    /// GitLab records a repeated resolution again.
    pub(crate) fn apply_discussion_resolve(
        &mut self,
        thread_id: u64,
        viewer: &str,
        may_write: bool,
        resolve: bool,
    ) -> Result<(u64, usize), WriteError> {
        let was_resolved = self
            .thread_location(thread_id)
            .is_some_and(|(p, t)| self.pull_requests[p].threads[t].resolved);
        let (number, t) = self.apply_resolve(thread_id, viewer, may_write, resolve)?;
        if !resolve {
            return Ok((number, t));
        }
        let p = self.pr_index(number)?;
        let pr = &self.pull_requests[p];
        let all = pr
            .threads
            .iter()
            .filter(|thread| pr.thread_published(thread))
            .all(|thread| thread.resolved);
        if all || was_resolved {
            let body = if all {
                "resolved all threads"
            } else {
                "resolved this thread"
            };
            self.push_system_note(p, viewer, body, was_resolved);
        }
        Ok((number, t))
    }

    /// A GitLab system note on PR `number` (`added 1 commit`).
    pub(crate) fn apply_system_note(
        &mut self,
        number: u64,
        author: &str,
        body: &str,
    ) -> Result<u64, WriteError> {
        let p = self.pr_index(number)?;
        Ok(self.push_system_note(p, author, body, false))
    }

    pub(super) fn push_system_note(
        &mut self,
        p: usize,
        author: &str,
        body: &str,
        duplicate: bool,
    ) -> u64 {
        let database_id = self.next_id();
        let created_at = self.tick();
        let pr = self.pr_mut(p);
        pr.system_notes.push(SystemNoteRecord {
            database_id,
            discussion_id: ids::discussion_id(database_id),
            author: author.to_owned(),
            body: body.to_owned(),
            created_at: created_at.clone(),
            duplicate,
        });
        pr.updated_at = created_at;
        database_id
    }

    /// GitLab's approve (`approve = true`) or unapprove of merge request
    /// `number` by `login`. An approval is an APPROVED review with no body
    /// (GitLab's approvals are no notes), withdrawing it dismisses that
    /// review; each posts GitLab's system note (`approved this merge
    /// request`, `unapproved this merge request`). Approving twice is
    /// `Forbidden`, withdrawing an approval never given `NotFound`.
    pub(crate) fn apply_approval(
        &mut self,
        number: u64,
        login: &str,
        approve: bool,
    ) -> Result<(), WriteError> {
        let p = self.pr_index(number)?;
        let standing = self.pull_requests[p]
            .approval_of(login)
            .map(|r| r.database_id);
        match (approve, standing) {
            (true, Some(_)) => {
                return Err(WriteError::Forbidden(
                    "the merge request is approved by this user already".into(),
                ))
            }
            (false, None) => return Err(WriteError::NotFound(String::new())),
            (true, None) => {
                let database_id = self.next_id();
                let created_at = self.tick();
                let pr = self.pr_mut(p);
                let commit = pr.head_sha.clone();
                // Approving answers the approver's review request (their
                // GitLab reviewer state becomes `approved`).
                pr.requested_reviewers.retain(|r| r != login);
                pr.reviews.push(ReviewRecord {
                    database_id,
                    id: ids::node_id(NodeKind::Review, database_id),
                    author: login.to_owned(),
                    state: ReviewStateSpec::Approved,
                    body: String::new(),
                    submitted_at: Some(created_at.clone()),
                    created_at,
                    commit,
                });
            }
            (false, Some(review_id)) => {
                let pr = self.pr_mut(p);
                if let Some(review) = pr.reviews.iter_mut().find(|r| r.database_id == review_id) {
                    review.state = ReviewStateSpec::Dismissed;
                }
            }
        }
        let note = if approve {
            "approved this merge request"
        } else {
            "unapproved this merge request"
        };
        self.push_system_note(p, login, note, false);
        Ok(())
    }

    /// How many duplicate system notes repeated resolves posted (GitLab).
    pub(crate) fn duplicate_resolve_notes(&self) -> u64 {
        self.pull_requests
            .iter()
            .flat_map(|pr| &pr.system_notes)
            .filter(|n| n.duplicate)
            .count() as u64
    }

    /// A review by `author` with `threads` (each a new thread of one
    /// comment). `Pending` creates the author's draft review.
    pub(crate) fn apply_review(
        &mut self,
        number: u64,
        author: &str,
        state: ReviewStateSpec,
        body: &str,
        threads: Vec<NewThread>,
    ) -> Result<CreatedReview, WriteError> {
        let p = self.pr_index(number)?;
        if self.pull_requests[p].pending_review_of(author).is_some() {
            return Err(WriteError::Unprocessable(
                "User can only have one pending review per pull request".into(),
            ));
        }
        if state == ReviewStateSpec::Dismissed {
            return Err(WriteError::Unprocessable(
                "a review cannot be created dismissed".into(),
            ));
        }
        if matches!(
            state,
            ReviewStateSpec::Commented | ReviewStateSpec::ChangesRequested
        ) && body.trim().is_empty()
            && threads.is_empty()
        {
            return Err(WriteError::Unprocessable(
                "Review body is required for this event".into(),
            ));
        }
        for thread in &threads {
            self.check_body(&thread.body)?;
        }
        let review_id = self.next_id();
        let created_at = self.tick();
        let commit = self.pull_requests[p].head_sha.clone();
        self.pr_mut(p).reviews.push(ReviewRecord {
            database_id: review_id,
            id: ids::node_id(NodeKind::Review, review_id),
            author: author.to_owned(),
            state,
            body: body.to_owned(),
            submitted_at: (state != ReviewStateSpec::Pending).then(|| created_at.clone()),
            created_at: created_at.clone(),
            commit: commit.clone(),
        });
        let mut created = Vec::new();
        for thread in threads {
            created.extend(self.push_thread(p, author, thread, review_id).threads);
        }
        let pr = self.pr_mut(p);
        pr.updated_at = created_at;
        // A submitted review answers its author's review request.
        if state != ReviewStateSpec::Pending {
            pr.requested_reviewers.retain(|r| r != author);
        }
        Ok(CreatedReview {
            review_id,
            threads: created,
        })
    }

    /// GitLab's `POST …/merge_requests/:iid/discussions`: a new thread
    /// posted at once (the API never adds it to the author's draft notes),
    /// in a COMMENTED review of its own. A thread with an empty `path` is
    /// a discussion of the merge request itself (no position).
    pub(crate) fn apply_discussion(
        &mut self,
        number: u64,
        author: &str,
        thread: NewThread,
    ) -> Result<CreatedReview, WriteError> {
        self.apply_new_thread(number, author, thread, false)
    }

    /// A new thread of one comment on PR `number`, in the author's pending
    /// review (`into_pending`, when they have one: REST's `POST
    /// …/pulls/{n}/comments`) or in a COMMENTED review of its own.
    pub(crate) fn apply_new_thread(
        &mut self,
        number: u64,
        author: &str,
        thread: NewThread,
        into_pending: bool,
    ) -> Result<CreatedReview, WriteError> {
        let p = self.pr_index(number)?;
        self.check_body(&thread.body)?;
        let review_id = if into_pending {
            self.review_for_comment(p, author)
        } else {
            self.commented_review(p, author)
        };
        Ok(self.push_thread(p, author, thread, review_id))
    }

    /// Appends `thread`, its one comment in review `review_id`, to PR `p`
    /// on its current head.
    pub(super) fn push_thread(
        &mut self,
        p: usize,
        author: &str,
        thread: NewThread,
        review_id: u64,
    ) -> CreatedReview {
        let thread_id = self.next_id();
        let comment_id = self.next_id();
        let created_at = self.tick();
        let pr = self.pr_mut(p);
        let commit = pr.head_sha.clone();
        pr.threads.push(ThreadRecord {
            database_id: thread_id,
            id: ids::node_id(NodeKind::ReviewThread, thread_id),
            discussion_id: ids::discussion_id(thread_id),
            path: thread.path,
            original_line: thread.line,
            original_start_line: thread.start_line,
            current_line: thread.line,
            current_start_line: thread.start_line,
            commit: commit.clone(),
            side: thread.side,
            outdated: false,
            resolved: false,
            resolved_by: None,
            comments: vec![ReviewCommentRecord {
                database_id: comment_id,
                id: ids::node_id(NodeKind::ReviewComment, comment_id),
                author: author.to_owned(),
                body: thread.body,
                created_at: created_at.clone(),
                review_id,
                reply_to: None,
                diff_hunk: thread.diff_hunk.into(),
                original_commit: commit,
            }],
        });
        pr.updated_at = created_at;
        CreatedReview {
            review_id,
            threads: vec![(thread_id, comment_id)],
        }
    }

    /// Submits `viewer`'s pending review `review_id` as `state`.
    pub(crate) fn apply_submit_review(
        &mut self,
        number: u64,
        viewer: &str,
        review_id: u64,
        state: ReviewStateSpec,
        body: Option<&str>,
    ) -> Result<(), WriteError> {
        let p = self.pr_index(number)?;
        let pr = &self.pull_requests[p];
        let Some(review) = pr
            .review(review_id)
            .filter(|r| pr.review_visible_to(r.database_id, viewer))
        else {
            return Err(WriteError::NotFound("Not Found".into()));
        };
        if review.state != ReviewStateSpec::Pending || review.author != viewer {
            return Err(WriteError::Unprocessable(
                "Can not submit a non-pending review".into(),
            ));
        }
        if matches!(state, ReviewStateSpec::Pending | ReviewStateSpec::Dismissed) {
            return Err(WriteError::Unprocessable(
                "event must be APPROVE, REQUEST_CHANGES or COMMENT".into(),
            ));
        }
        let now = self.tick();
        let pr = self.pr_mut(p);
        if let Some(review) = pr.reviews.iter_mut().find(|r| r.database_id == review_id) {
            review.state = state;
            review.submitted_at = Some(now.clone());
            if let Some(body) = body {
                review.body = body.to_owned();
            }
        }
        pr.updated_at = now;
        Ok(())
    }
}
