//! Deleting a comment, as both forges allow: a reply in a review thread
//! (GitHub review comment, GitLab discussion note) or a conversation
//! comment (GitLab merge request note). The author may delete their own;
//! a moderator (GitHub: write access; GitLab: Maintainer) anyone's. The
//! first comment of a thread that has replies is not deleted here (not
//! emulated: refused with 422); a thread's only comment takes the thread
//! with it.

use crate::state::{State, WriteError};

/// Which comment a delete names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DeleteTarget<'a> {
    /// A review comment (GitHub `pulls/comments/{id}`).
    ReviewComment,
    /// A conversation comment (GitHub `issues/comments/{id}`).
    IssueComment,
    /// A GitLab note of merge request `number`, in discussion `discussion`
    /// when the route names one.
    Note {
        number: u64,
        discussion: Option<&'a str>,
    },
}

impl State {
    /// Deletes comment `id` as `viewer` (`moderator`: may delete anyone's);
    /// returns the number of the pull request it was on.
    pub(crate) fn apply_delete_comment(
        &mut self,
        target: DeleteTarget<'_>,
        id: u64,
        viewer: &str,
        moderator: bool,
    ) -> Result<u64, WriteError> {
        let not_found = || WriteError::NotFound("Not Found".into());
        let in_pr = |number: u64| match target {
            DeleteTarget::Note { number: n, .. } => n == number,
            _ => true,
        };
        let may_thread = matches!(
            target,
            DeleteTarget::ReviewComment | DeleteTarget::Note { .. }
        );
        let may_issue = target != DeleteTarget::ReviewComment;
        for p in 0..self.pull_requests.len() {
            let pr = &self.pull_requests[p];
            if !in_pr(pr.number) {
                continue;
            }
            if may_thread {
                if let Some((t, c)) = pr.find_comment(id) {
                    let thread = &pr.threads[t];
                    let comment = &thread.comments[c];
                    if !pr.review_visible_to(comment.review_id, viewer) {
                        return Err(not_found());
                    }
                    if let DeleteTarget::Note {
                        discussion: Some(d),
                        ..
                    } = target
                    {
                        if thread.discussion_id != d {
                            return Err(not_found());
                        }
                    }
                    if comment.author != viewer && !moderator {
                        return Err(WriteError::Forbidden(String::new()));
                    }
                    if c == 0 && thread.comments.len() > 1 {
                        return Err(WriteError::Unprocessable(
                            "the emulator does not delete the first comment of a thread with \
                             replies"
                                .into(),
                        ));
                    }
                    let now = self.tick();
                    let pr = self.pr_mut(p);
                    if pr.threads[t].comments.len() == 1 {
                        pr.threads.remove(t);
                    } else {
                        pr.threads[t].comments.remove(c);
                    }
                    pr.updated_at = now;
                    return Ok(pr.number);
                }
            }
            if may_issue {
                if let Some(i) = pr.issue_comments.iter().position(|c| c.database_id == id) {
                    let comment = &pr.issue_comments[i];
                    if let DeleteTarget::Note {
                        discussion: Some(d),
                        ..
                    } = target
                    {
                        if comment.discussion_id != d {
                            return Err(not_found());
                        }
                    }
                    if comment.author != viewer && !moderator {
                        return Err(WriteError::Forbidden(String::new()));
                    }
                    let now = self.tick();
                    let pr = self.pr_mut(p);
                    pr.issue_comments.remove(i);
                    pr.updated_at = now;
                    return Ok(pr.number);
                }
            }
        }
        Err(not_found())
    }
}
