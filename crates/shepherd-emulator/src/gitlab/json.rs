//! GitLab's REST shapes (API v4) of the emulator's records.

use serde_json::{json, Value};

use super::view::{self, Discussion, Draft, Note};
use crate::ci_state::{JobRecord, RunStatus, WorkflowRunRecord};
use crate::ids;
use crate::scenario::{Permission, PullRequestStatus, Side, UserKind};
use crate::state::{PullRequestRecord, State, ThreadRecord, UserRecord};

/// The offset of a fork's (unserved) source project id from the project's.
pub(crate) const FORK_PROJECT_OFFSET: u64 = 1_000_000;

/// What the shapes need: the state and the web root.
pub(crate) struct Cx<'a> {
    pub(crate) state: &'a State,
    /// `http://127.0.0.1:PORT`.
    pub(crate) base_url: &'a str,
}

impl<'a> Cx<'a> {
    /// The shapes of `state`, with links under `base_url`.
    pub(crate) fn new(state: &'a State, base_url: &'a str) -> Cx<'a> {
        Cx { state, base_url }
    }

    fn project_id(&self) -> u64 {
        self.state.repository.database_id
    }

    /// The project's web URL, `http://…/group/project`.
    fn project_web(&self) -> &str {
        &self.state.repository.html_url
    }

    /// The user with this login, as GitLab embeds users; a missing account
    /// is GitLab's ghost user.
    pub(crate) fn user(&self, login: &str) -> Value {
        match self.state.user(login) {
            Some(user) => user_json(user, self.base_url),
            None => json!({
                "id": 1,
                "username": "ghost",
                "name": "Ghost User",
                "state": "active",
                "locked": false,
                "avatar_url": null,
                "web_url": format!("{}/ghost", self.base_url),
                "bot": false,
            }),
        }
    }
}

/// A user (`GET /user` and every embedded author).
pub(crate) fn user_json(user: &UserRecord, base_url: &str) -> Value {
    json!({
        "id": user.database_id,
        "username": user.login,
        "name": user.login,
        "state": "active",
        "locked": false,
        "avatar_url": null,
        "web_url": format!("{base_url}/{}", user.login),
        "bot": user.kind == UserKind::Bot,
    })
}

/// GitLab's access level of a permission (Guest 10, Reporter 20,
/// Developer 30, Maintainer 40).
pub(crate) fn access_level(permission: Permission) -> u32 {
    match permission {
        Permission::None => 0,
        Permission::Read => 20,
        Permission::Write => 30,
        Permission::Admin => 40,
    }
}

/// The project (`GET /projects/:id`).
pub(crate) fn project_json(cx: &Cx<'_>, viewer_permission: Permission) -> Value {
    let repo = &cx.state.repository;
    let (namespace, group) = match repo.owner.rsplit_once('/') {
        Some((_, last)) => (repo.owner.as_str(), last),
        None => (repo.owner.as_str(), repo.owner.as_str()),
    };
    json!({
        "id": repo.database_id,
        "name": repo.name,
        "path": repo.name,
        "name_with_namespace": format!("{} / {}", namespace.replace('/', " / "), repo.name),
        "path_with_namespace": repo.full_name(),
        "default_branch": repo.default_branch,
        "visibility": repo.visibility.as_str(),
        "web_url": repo.html_url,
        "http_url_to_repo": repo.git_url,
        "namespace": {
            "name": group,
            "path": group,
            "kind": "group",
            "full_path": namespace,
            "web_url": format!("{}/groups/{namespace}", cx.base_url),
        },
        "archived": false,
        "empty_repo": false,
        "permissions": {
            "project_access": { "access_level": access_level(viewer_permission), "notification_level": 3 },
            "group_access": null,
        },
    })
}

/// A merge request's `state`.
pub(crate) fn mr_state(status: PullRequestStatus) -> &'static str {
    match status {
        PullRequestStatus::Open => "opened",
        PullRequestStatus::Closed => "closed",
        PullRequestStatus::Merged => "merged",
    }
}

/// A merge request (`GET …/merge_requests/:iid`).
pub(crate) fn merge_request_json(cx: &Cx<'_>, pr: &PullRequestRecord) -> Value {
    let project_id = cx.project_id();
    let source_project_id = if pr.fork {
        project_id + FORK_PROJECT_OFFSET
    } else {
        project_id
    };
    let threads_resolved = pr
        .threads
        .iter()
        .filter(|t| pr.thread_published(t))
        .all(|t| t.resolved);
    let user_notes = view::notes(pr)
        .iter()
        .filter(|n| !matches!(n, Note::System(_)))
        .count();
    let head_pipeline = view::head_pipeline(cx.state, pr).map(|run| pipeline_json(cx, run));
    let detailed = if pr.status != PullRequestStatus::Open {
        "not_open"
    } else if pr.draft {
        "draft_status"
    } else if !threads_resolved {
        "discussions_not_resolved"
    } else {
        "mergeable"
    };
    let full = cx.state.repository.full_name();
    let mut value = json!({
        "id": pr.database_id,
        "iid": pr.number,
        "project_id": project_id,
        "title": pr.title,
        "description": pr.body,
        "state": mr_state(pr.status),
        "created_at": view::time(&pr.created_at),
        "updated_at": view::time(&pr.updated_at),
        "merged_by": null,
        "merged_at": (pr.status == PullRequestStatus::Merged)
            .then(|| pr.closed_at.as_deref().map(view::time))
            .flatten(),
        "closed_by": null,
        "closed_at": (pr.status == PullRequestStatus::Closed)
            .then(|| pr.closed_at.as_deref().map(view::time))
            .flatten(),
        "target_branch": pr.base_ref,
        "source_branch": pr.head_ref,
        "user_notes_count": user_notes,
        "upvotes": 0,
        "downvotes": 0,
        "author": cx.user(&pr.author),
        "assignees": [],
        "assignee": null,
        // A reviewer stays listed after reviewing (GitLab changes their
        // state, not the list).
        "reviewers": pr
            .listed_reviewers()
            .into_iter()
            .map(|login| cx.user(login))
            .collect::<Vec<_>>(),
        "source_project_id": source_project_id,
        "target_project_id": project_id,
        "labels": pr.labels,
        "draft": pr.draft,
        "work_in_progress": pr.draft,
        "milestone": null,
        "sha": pr.head_sha,
        "web_url": pr.html_url,
        "head_pipeline": head_pipeline,
        "diff_refs": {
            "base_sha": pr.base_sha,
            "head_sha": pr.head_sha,
            "start_sha": pr.base_sha,
        },
    });
    let reference = format!("!{}", pr.number);
    let more = json!({
        "merge_user": null,
        "merge_when_pipeline_succeeds": false,
        "merge_status": "can_be_merged",
        "detailed_merge_status": detailed,
        "merge_commit_sha": null,
        "squash_commit_sha": null,
        "discussion_locked": null,
        "should_remove_source_branch": null,
        "force_remove_source_branch": false,
        "reference": reference,
        "references": {
            "short": reference,
            "relative": reference,
            "full": format!("{full}{reference}"),
        },
        "squash": false,
        "has_conflicts": false,
        "blocking_discussions_resolved": threads_resolved,
        "changes_count": pr.diff.len().to_string(),
        "pipeline": value["head_pipeline"].clone(),
        "first_contribution": false,
    });
    if let (Some(object), Value::Object(extra)) = (value.as_object_mut(), more) {
        object.extend(extra);
    }
    value
}

/// The commit a thread's position refers to. A thread the scenario made
/// outdated was never moved: it points at the base, before the head.
fn position_head<'a>(pr: &'a PullRequestRecord, thread: &'a ThreadRecord) -> &'a str {
    if thread.outdated && thread.commit == pr.head_sha {
        &pr.base_sha
    } else {
        &thread.commit
    }
}

/// A diff note's `position`: where the thread is at the commit it refers
/// to, `line_range` for a multi-line thread, `position_type: "file"` for
/// a file-level one.
pub(crate) fn position_json(pr: &PullRequestRecord, thread: &ThreadRecord) -> Value {
    let left = thread.side == Side::Left;
    let sides = |line: Option<u32>| if left { (line, None) } else { (None, line) };
    let (old_line, new_line) = sides(thread.current_line);
    let point = |line: u32| {
        let (old, new) = sides(Some(line));
        json!({
            "line_code": ids::line_code(&thread.path, old, new),
            "type": if left { "old" } else { "new" },
            "old_line": old,
            "new_line": new,
        })
    };
    let line_range = match (thread.current_start_line, thread.current_line) {
        (Some(start), Some(end)) => json!({ "start": point(start), "end": point(end) }),
        _ => Value::Null,
    };
    json!({
        "base_sha": pr.base_sha,
        "start_sha": pr.base_sha,
        "head_sha": position_head(pr, thread),
        "old_path": thread.path,
        "new_path": thread.path,
        "position_type": if thread.current_line.is_some() { "text" } else { "file" },
        "old_line": old_line,
        "new_line": new_line,
        "line_range": line_range,
    })
}

/// A note.
pub(crate) fn note_json(cx: &Cx<'_>, pr: &PullRequestRecord, note: &Note<'_>) -> Value {
    let mut value = json!({
        "id": note.id(),
        "type": null,
        "attachment": null,
        "created_at": view::time(note.created_at()),
        "updated_at": view::time(note.updated_at()),
        "system": false,
        "noteable_id": pr.database_id,
        "noteable_type": "MergeRequest",
        "noteable_iid": pr.number,
        "project_id": cx.project_id(),
        "commit_id": null,
        "resolvable": false,
        "confidential": false,
        "internal": false,
        "imported": false,
        "imported_from": "none",
        "commands_changes": {},
    });
    let (author, body) = match note {
        Note::Thread {
            thread, comment, ..
        } => {
            // A discussion started without a position is GitLab's
            // `DiscussionNote`: resolvable, on no line.
            if thread.is_overview() {
                value["type"] = json!("DiscussionNote");
            } else {
                value["type"] = json!("DiffNote");
                value["position"] = position_json(pr, thread);
            }
            value["resolvable"] = json!(true);
            value["resolved"] = json!(thread.resolved);
            value["resolved_by"] = thread
                .resolved_by
                .as_deref()
                .filter(|_| thread.resolved)
                .map_or(Value::Null, |login| cx.user(login));
            (comment.author.as_str(), comment.body.as_str())
        }
        Note::Comment(comment) => (comment.author.as_str(), comment.body.as_str()),
        Note::ReviewBody(review) => (review.author.as_str(), review.body.as_str()),
        Note::System(system) => {
            value["system"] = json!(true);
            (system.author.as_str(), system.body.as_str())
        }
    };
    value["author"] = cx.user(author);
    value["body"] = json!(body);
    value
}

/// A discussion with its notes.
pub(crate) fn discussion_json(
    cx: &Cx<'_>,
    pr: &PullRequestRecord,
    discussion: &Discussion<'_>,
) -> Value {
    let notes: Vec<Value> = discussion
        .notes(pr)
        .iter()
        .map(|note| note_json(cx, pr, note))
        .collect();
    json!({
        "id": discussion.id(),
        "individual_note": !matches!(discussion, Discussion::Thread(_)),
        "notes": notes,
    })
}

/// A draft note.
pub(crate) fn draft_note_json(pr: &PullRequestRecord, viewer_id: u64, draft: &Draft<'_>) -> Value {
    let thread = draft.thread;
    let (discussion_id, position, line_code) = if draft.in_discussion {
        (json!(thread.discussion_id), Value::Null, Value::Null)
    } else {
        let left = thread.side == Side::Left;
        let code = thread.current_line.map(|line| {
            let (old, new) = if left {
                (Some(line), None)
            } else {
                (None, Some(line))
            };
            ids::line_code(&thread.path, old, new)
        });
        (Value::Null, position_json(pr, thread), json!(code))
    };
    json!({
        "id": draft.comment.database_id,
        "author_id": viewer_id,
        "merge_request_id": pr.database_id,
        "resolve_discussion": false,
        "discussion_id": discussion_id,
        "note": draft.comment.body,
        "commit_id": null,
        "line_code": line_code,
        "position": position,
    })
}

fn pipeline_ref(run: &WorkflowRunRecord) -> &str {
    if run.head_branch.is_empty() {
        &run.head_sha
    } else {
        &run.head_branch
    }
}

/// A pipeline, as lists give it (and a merge request's `head_pipeline`,
/// which adds a few fields GitLab gives there too).
pub(crate) fn pipeline_json(cx: &Cx<'_>, run: &WorkflowRunRecord) -> Value {
    let status = view::pipeline_status(cx.state, run);
    let started = run
        .jobs
        .iter()
        .filter_map(|j| j.started_at.as_deref())
        .min()
        .map(view::time);
    let finished = (matches!(status, "success" | "failed"))
        .then(|| {
            run.jobs
                .iter()
                .filter_map(|j| j.completed_at.as_deref())
                .max()
                .map(view::time)
        })
        .flatten();
    json!({
        "id": run.database_id,
        "iid": run.run_number,
        "project_id": cx.project_id(),
        "sha": run.head_sha,
        "ref": pipeline_ref(run),
        "status": status,
        "source": "push",
        "name": run.name,
        "tag": false,
        "created_at": view::time(&run.created_at),
        "updated_at": view::time(&run.updated_at),
        "started_at": started,
        "finished_at": finished,
        "web_url": format!("{}/-/pipelines/{}", cx.project_web(), run.database_id),
        "user": cx.user(&run.actor),
        "detailed_status": { "group": status, "text": status, "label": status },
    })
}

/// A job of a pipeline.
pub(crate) fn job_json(cx: &Cx<'_>, run: &WorkflowRunRecord, job: &JobRecord) -> Value {
    let status = view::job_status(job);
    let reason = match job.conclusion {
        Some(crate::ci_state::Conclusion::TimedOut) => "job_execution_timeout",
        _ => "script_failure",
    };
    let failure_reason = (status == "failed").then_some(reason);
    let retried = run
        .jobs
        .iter()
        .any(|j| j.name == job.name && j.database_id > job.database_id);
    json!({
        "id": job.database_id,
        "name": job.name,
        "stage": "test",
        "status": status,
        "allow_failure": view::allow_failure(cx.state, &job.name),
        "ref": pipeline_ref(run),
        "tag": false,
        "retried": retried,
        "created_at": view::time(&run.created_at),
        "started_at": job.started_at.as_deref().map(view::time),
        "finished_at": (job.status == RunStatus::Completed)
            .then(|| job.completed_at.as_deref().map(view::time))
            .flatten(),
        "failure_reason": failure_reason,
        "web_url": format!("{}/-/jobs/{}", cx.project_web(), job.database_id),
        "user": cx.user(&run.actor),
        "commit": { "id": run.head_sha, "short_id": &run.head_sha[..run.head_sha.len().min(8)] },
        "pipeline": {
            "id": run.database_id,
            "iid": run.run_number,
            "project_id": cx.project_id(),
            "sha": run.head_sha,
            "ref": pipeline_ref(run),
            "status": view::pipeline_status(cx.state, run),
            "source": "push",
            "web_url": format!("{}/-/pipelines/{}", cx.project_web(), run.database_id),
        },
    })
}

/// A resource label event of a merge request (GitLab's "Resource label
/// events" API): `add` or `remove`, by `user`; `label` as GitLab embeds it.
pub(crate) fn label_event_json(
    cx: &Cx<'_>,
    pr: &PullRequestRecord,
    event: &crate::state::LabelEventRecord,
) -> Value {
    let label = cx.state.label(&event.label).map(|l| {
        json!({
            "id": l.database_id,
            "name": l.name,
            "color": format!("#{}", l.color),
            "description": l.description,
        })
    });
    json!({
        "id": event.database_id,
        "user": cx.user(&event.actor),
        "created_at": view::time(&event.created_at),
        "resource_type": "MergeRequest",
        "resource_id": pr.database_id,
        "label": label,
        "action": if event.added { "add" } else { "remove" },
    })
}
