//! The shared state seen as GitLab sees it: a pull request is a merge
//! request; a review thread with a submitted comment is a resolvable
//! discussion of diff notes; top-level comments, the bodies of submitted
//! reviews and system notes are individual notes; the comments of a pending
//! review are their author's draft notes; a workflow run is a pipeline
//! whose jobs are the run's jobs.

use crate::ci_state::{Conclusion, JobRecord, RunStatus, WorkflowRunRecord};
use crate::ids;
use crate::state::{
    IssueCommentRecord, PullRequestRecord, ReviewCommentRecord, ReviewRecord, State,
    SystemNoteRecord, ThreadRecord,
};

/// A discussion of a merge request.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Discussion<'a> {
    /// A review thread: resolvable, its notes the submitted comments.
    Thread(&'a ThreadRecord),
    /// A top-level comment: an individual note.
    Comment(&'a IssueCommentRecord),
    /// The body of a submitted review: an individual note.
    ReviewBody(&'a ReviewRecord),
    /// A system note: an individual note.
    System(&'a SystemNoteRecord),
}

impl<'a> Discussion<'a> {
    /// The discussion's id (40 hex digits).
    pub(crate) fn id(&self) -> String {
        match self {
            Discussion::Thread(thread) => thread.discussion_id.clone(),
            Discussion::Comment(comment) => comment.discussion_id.clone(),
            Discussion::ReviewBody(review) => ids::discussion_id(review.database_id),
            Discussion::System(note) => note.discussion_id.clone(),
        }
    }

    /// Its notes, oldest first.
    pub(crate) fn notes(&self, pr: &'a PullRequestRecord) -> Vec<Note<'a>> {
        match *self {
            Discussion::Thread(thread) => thread
                .comments
                .iter()
                .filter(|c| pr.review_published(c.review_id))
                .map(|comment| Note::Thread {
                    thread,
                    comment,
                    created_at: pr.note_time(comment),
                })
                .collect(),
            Discussion::Comment(comment) => vec![Note::Comment(comment)],
            Discussion::ReviewBody(review) => vec![Note::ReviewBody(review)],
            Discussion::System(note) => vec![Note::System(note)],
        }
    }
}

/// A note of a merge request.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Note<'a> {
    /// A comment of a review thread (a diff note).
    Thread {
        thread: &'a ThreadRecord,
        comment: &'a ReviewCommentRecord,
        /// When the note was created ([`PullRequestRecord::note_time`]).
        created_at: &'a str,
    },
    /// A top-level comment.
    Comment(&'a IssueCommentRecord),
    /// A submitted review's body.
    ReviewBody(&'a ReviewRecord),
    /// A system note.
    System(&'a SystemNoteRecord),
}

impl Note<'_> {
    /// The note's id.
    pub(crate) fn id(&self) -> u64 {
        match self {
            Note::Thread { comment, .. } => comment.database_id,
            Note::Comment(comment) => comment.database_id,
            Note::ReviewBody(review) => review.database_id,
            Note::System(note) => note.database_id,
        }
    }

    /// When it was posted.
    pub(crate) fn created_at(&self) -> &str {
        match self {
            Note::Thread { created_at, .. } => created_at,
            Note::Comment(comment) => &comment.created_at,
            Note::ReviewBody(review) => review_time(review),
            Note::System(note) => &note.created_at,
        }
    }

    /// When it last changed: a comment edited in place (a bot's
    /// walkthrough) moves; every other note is never edited.
    pub(crate) fn updated_at(&self) -> &str {
        match self {
            Note::Comment(comment) => &comment.updated_at,
            _ => self.created_at(),
        }
    }
}

/// A submitted review's time.
fn review_time(review: &ReviewRecord) -> &str {
    review.submitted_at.as_deref().unwrap_or(&review.created_at)
}

/// Every discussion anyone may see, ordered as GitLab lists them: by their
/// first note's time.
pub(crate) fn discussions(pr: &PullRequestRecord) -> Vec<Discussion<'_>> {
    let mut all: Vec<(String, u64, Discussion<'_>)> = Vec::new();
    for thread in &pr.threads {
        let first = thread
            .comments
            .iter()
            .find(|c| pr.review_published(c.review_id));
        if let Some(first) = first {
            all.push((
                pr.note_time(first).to_owned(),
                first.database_id,
                Discussion::Thread(thread),
            ));
        }
    }
    for comment in &pr.issue_comments {
        all.push((
            comment.created_at.clone(),
            comment.database_id,
            Discussion::Comment(comment),
        ));
    }
    for review in &pr.reviews {
        if review_body_is_note(review) {
            all.push((
                review_time(review).to_owned(),
                review.database_id,
                Discussion::ReviewBody(review),
            ));
        }
    }
    for note in &pr.system_notes {
        all.push((
            note.created_at.clone(),
            note.database_id,
            Discussion::System(note),
        ));
    }
    all.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
    all.into_iter().map(|(_, _, d)| d).collect()
}

/// Whether a review's body shows on GitLab: a submitted review with a body
/// (GitLab's review summary is a note of its own).
fn review_body_is_note(review: &ReviewRecord) -> bool {
    review.state != crate::scenario::ReviewStateSpec::Pending && !review.body.trim().is_empty()
}

/// The discussion with this id.
pub(crate) fn discussion<'a>(pr: &'a PullRequestRecord, id: &str) -> Option<Discussion<'a>> {
    discussions(pr).into_iter().find(|d| d.id() == id)
}

/// Every note anyone may see, oldest first.
pub(crate) fn notes(pr: &PullRequestRecord) -> Vec<Note<'_>> {
    let mut all: Vec<Note<'_>> = discussions(pr).iter().flat_map(|d| d.notes(pr)).collect();
    all.sort_by(|a, b| (a.created_at(), a.id()).cmp(&(b.created_at(), b.id())));
    all
}

/// A draft note: a comment of `viewer`'s pending review.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Draft<'a> {
    pub(crate) thread: &'a ThreadRecord,
    pub(crate) comment: &'a ReviewCommentRecord,
    /// Whether it answers a discussion others can see (else it starts one).
    pub(crate) in_discussion: bool,
}

/// `viewer`'s draft notes, oldest first.
pub(crate) fn drafts<'a>(pr: &'a PullRequestRecord, viewer: &str) -> Vec<Draft<'a>> {
    let Some(pending) = pr.pending_review_of(viewer) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for thread in &pr.threads {
        let published = pr.thread_published(thread);
        for comment in thread.comments.iter().filter(|c| c.review_id == pending) {
            out.push(Draft {
                thread,
                comment,
                in_discussion: published,
            });
        }
    }
    out.sort_by_key(|d| d.comment.database_id);
    out
}

/// A job's GitLab status.
pub(crate) fn job_status(job: &JobRecord) -> &'static str {
    match (job.status, job.conclusion) {
        (RunStatus::Queued, _) => "pending",
        (RunStatus::InProgress, _) => "running",
        (RunStatus::Completed, Some(Conclusion::Success)) => "success",
        (RunStatus::Completed, _) => "failed",
    }
}

/// Whether job `name` may fail without failing its pipeline: every check
/// not marked `required`.
pub(crate) fn allow_failure(state: &State, name: &str) -> bool {
    !state.ci.required.contains(name)
}

/// A pipeline's GitLab status, from its latest jobs: `running` while a job
/// runs (or some have finished and others wait), `pending` while all wait,
/// then `failed` when a job that may not fail failed, else `success`.
pub(crate) fn pipeline_status(state: &State, run: &WorkflowRunRecord) -> &'static str {
    let latest = run.latest_jobs();
    let running = latest.iter().any(|j| j.status == RunStatus::InProgress);
    let waiting = latest.iter().any(|j| j.status == RunStatus::Queued);
    let finished = latest.iter().any(|j| j.status == RunStatus::Completed);
    if running || (waiting && finished) {
        "running"
    } else if waiting {
        "pending"
    } else if latest
        .iter()
        .any(|j| job_status(j) == "failed" && !allow_failure(state, &j.name))
    {
        "failed"
    } else {
        "success"
    }
}

/// The pipeline of a merge request's head: the latest of its head commit.
pub(crate) fn head_pipeline<'a>(
    state: &'a State,
    pr: &PullRequestRecord,
) -> Option<&'a WorkflowRunRecord> {
    state
        .ci
        .workflow_runs
        .iter()
        .filter(|r| r.head_sha == pr.head_sha)
        .max_by_key(|r| r.database_id)
}

/// GitLab's timestamps carry milliseconds: `2024-01-01T02:00:00.000Z`.
pub(crate) fn time(iso: &str) -> String {
    match iso.strip_suffix('Z') {
        Some(rest) if !rest.contains('.') => format!("{rest}.000Z"),
        _ => iso.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_get_milliseconds() {
        assert_eq!(time("2024-01-01T02:00:00Z"), "2024-01-01T02:00:00.000Z");
        assert_eq!(time("2024-01-01T02:00:00.5Z"), "2024-01-01T02:00:00.5Z");
    }

    #[test]
    fn pipeline_status_follows_the_latest_jobs_and_allow_failure() {
        let mut scenario = crate::scenario::Scenario::new(
            crate::scenario::RepositorySpec::new("o", "r"),
            crate::scenario::PullRequestSpec::new(1, "t", "a", "feature", "main"),
        );
        let mut tests = crate::automation::CheckSpec::new("tests", "true");
        tests.required = true;
        scenario.checks = vec![tests, crate::automation::CheckSpec::new("lint", "true")];
        let state_ci = crate::ci_state::CiState::from_scenario(&scenario);
        let job = |id, name: &str, status, conclusion| JobRecord {
            database_id: id,
            name: name.into(),
            run_attempt: 1,
            status,
            conclusion,
            started_at: None,
            completed_at: None,
        };
        let mut run = WorkflowRunRecord {
            database_id: 1,
            id: String::new(),
            name: "CI".into(),
            run_number: 1,
            head_sha: "s".into(),
            head_branch: "feature".into(),
            event: "push".into(),
            actor: "a".into(),
            status: RunStatus::Queued,
            conclusion: None,
            run_attempt: 1,
            created_at: String::new(),
            updated_at: String::new(),
            run_started_at: String::new(),
            check_suite_id: 2,
            jobs: vec![
                job(3, "tests", RunStatus::Queued, None),
                job(4, "lint", RunStatus::Queued, None),
            ],
        };
        let repo = crate::git::CreatedRepository {
            git_dir: std::path::PathBuf::from("/nonexistent"),
            base_sha: "b".repeat(40),
            head_sha: "h".repeat(40),
        };
        let mut state = State::from_scenario(
            &scenario,
            &repo,
            &std::collections::BTreeMap::new(),
            "http://e",
        );
        state.ci = std::sync::Arc::new(state_ci);
        assert_eq!(pipeline_status(&state, &run), "pending");
        run.jobs[0] = job(3, "tests", RunStatus::Completed, Some(Conclusion::Success));
        assert_eq!(pipeline_status(&state, &run), "running");
        run.jobs[1] = job(4, "lint", RunStatus::Completed, Some(Conclusion::Failure));
        assert_eq!(pipeline_status(&state, &run), "success", "lint may fail");
        run.jobs[0] = job(3, "tests", RunStatus::Completed, Some(Conclusion::TimedOut));
        assert_eq!(pipeline_status(&state, &run), "failed");
        // A retry of the failed job: the latest attempt decides.
        run.jobs.push(job(5, "tests", RunStatus::InProgress, None));
        assert_eq!(pipeline_status(&state, &run), "running");
        run.jobs[2] = job(5, "tests", RunStatus::Completed, Some(Conclusion::Success));
        assert_eq!(pipeline_status(&state, &run), "success");
    }
}
