//! GitHub's REST shapes of the emulator's records.

use serde_json::{json, Value};

use crate::auth::Viewer;
use crate::ci_state::{CheckRunRecord, JobRecord, StatusRecord, WorkflowRunRecord};
use crate::scenario::{Permission, PullRequestStatus, ReviewStateSpec, Side, UserKind};
use crate::state::{
    IssueCommentRecord, LabelRecord, PullRequestRecord, RepositoryRecord, ReviewCommentRecord,
    ReviewRecord, State, ThreadRecord, UserRecord,
};

/// REST logins of bots carry GitHub's `[bot]` suffix.
pub(crate) fn rest_login(user: &UserRecord) -> String {
    match user.kind {
        UserKind::Bot if !user.login.ends_with("[bot]") => format!("{}[bot]", user.login),
        _ => user.login.clone(),
    }
}

pub(crate) fn user_json(user: &UserRecord, api_url: &str) -> Value {
    let login = rest_login(user);
    let kind = match user.kind {
        UserKind::User => "User",
        UserKind::Bot => "Bot",
    };
    json!({
        "login": login,
        "id": user.database_id,
        "node_id": user.id,
        "type": kind,
        "site_admin": false,
        "url": format!("{api_url}/users/{login}"),
        "html_url": format!("{api_url}/{login}"),
    })
}

/// The user with this login, or `null` (a deleted account).
pub(crate) fn author_json(state: &State, login: &str, api_url: &str) -> Value {
    state
        .user(login)
        .map_or(Value::Null, |user| user_json(user, api_url))
}

/// The GitHub Actions app that owns the emulator's check runs.
pub(crate) fn actions_app_json(api_url: &str) -> Value {
    json!({
        "id": 15368,
        "slug": "github-actions",
        "node_id": crate::ids::node_id(crate::ids::NodeKind::App, 15368),
        "name": "GitHub Actions",
        "owner": { "login": "github", "id": 9919, "type": "Organization", "site_admin": false },
        "html_url": format!("{api_url}/apps/github-actions"),
    })
}

pub(crate) fn repository_json(repo: &RepositoryRecord, viewer: &Viewer, api_url: &str) -> Value {
    let owner = json!({ "login": repo.owner, "type": "Organization" });
    json!({
        "id": repo.database_id,
        "node_id": repo.id,
        "name": repo.name,
        "full_name": repo.full_name(),
        "private": true,
        "fork": false,
        "owner": owner,
        "html_url": repo.html_url,
        "url": format!("{api_url}/repos/{}", repo.full_name()),
        "clone_url": repo.git_url,
        "default_branch": repo.default_branch,
        "permissions": {
            "admin": viewer.permission >= Permission::Admin,
            "maintain": viewer.permission >= Permission::Admin,
            "push": viewer.permission >= Permission::Write,
            "triage": viewer.permission >= Permission::Write,
            "pull": viewer.permission >= Permission::Read,
        },
    })
}

/// A short repository object, as embedded in other answers.
pub(crate) fn short_repository_json(repo: &RepositoryRecord, api_url: &str) -> Value {
    json!({
        "id": repo.database_id,
        "node_id": repo.id,
        "name": repo.name,
        "full_name": repo.full_name(),
        "private": true,
        "url": format!("{api_url}/repos/{}", repo.full_name()),
    })
}

pub(crate) fn label_json(label: &LabelRecord, repo: &RepositoryRecord, api_url: &str) -> Value {
    json!({
        "id": label.database_id,
        "node_id": label.id,
        "url": format!("{api_url}/repos/{}/labels/{}", repo.full_name(), label.name),
        "name": label.name,
        "color": label.color,
        "default": false,
        "description": label.description,
    })
}

/// The PR's labels as label objects.
pub(crate) fn labels_json(state: &State, pr: &PullRequestRecord, api_url: &str) -> Value {
    Value::Array(
        pr.labels
            .iter()
            .filter_map(|name| state.label(name))
            .map(|label| label_json(label, &state.repository, api_url))
            .collect(),
    )
}

pub(crate) fn pull_request_json(
    state: &State,
    repo: &RepositoryRecord,
    pr: &PullRequestRecord,
    api_url: &str,
) -> Value {
    let full_name = repo.full_name();
    let base_repo = json!({
        "id": repo.database_id,
        "node_id": repo.id,
        "name": repo.name,
        "full_name": full_name,
        "private": true,
        "fork": false,
        "html_url": repo.html_url,
        "clone_url": repo.git_url,
        "default_branch": repo.default_branch,
        "owner": { "login": repo.owner },
    });
    // A fork PR's head lives in the author's copy of the repository. The
    // emulator keeps the head branch in the one bare repository (GitHub
    // also exposes it there as refs/pull/N/head).
    let (head_owner, head_repo) = if pr.fork {
        let head_full = format!("{}/{}", pr.author, repo.name);
        let head_repo = json!({
            "name": repo.name,
            "full_name": head_full,
            "private": true,
            "fork": true,
            "owner": { "login": pr.author },
            "clone_url": repo.git_url,
        });
        (pr.author.clone(), head_repo)
    } else {
        (repo.owner.clone(), base_repo.clone())
    };
    let merged = pr.status == PullRequestStatus::Merged;
    let state_word = match pr.status {
        PullRequestStatus::Open => "open",
        PullRequestStatus::Closed | PullRequestStatus::Merged => "closed",
    };
    let review_comments: usize = pr.threads.iter().map(|t| t.comments.len()).sum();
    json!({
        "url": format!("{api_url}/repos/{full_name}/pulls/{}", pr.number),
        "id": pr.database_id,
        "node_id": pr.id,
        "html_url": pr.html_url,
        "number": pr.number,
        "state": state_word,
        "locked": false,
        "title": pr.title,
        "body": pr.body,
        "user": author_json(state, &pr.author, api_url),
        "labels": labels_json(state, pr, api_url),
        "created_at": pr.created_at,
        "updated_at": pr.updated_at,
        "closed_at": pr.closed_at,
        "merged_at": if merged { pr.closed_at.clone() } else { None },
        "draft": pr.draft,
        "merged": merged,
        "head": {
            "label": format!("{head_owner}:{}", pr.head_ref),
            "ref": pr.head_ref,
            "sha": pr.head_sha,
            "repo": head_repo,
        },
        "base": {
            "label": format!("{}:{}", repo.owner, pr.base_ref),
            "ref": pr.base_ref,
            "sha": pr.base_sha,
            "repo": base_repo,
        },
        "author_association": author_association(state, repo, &pr.author),
        "comments": pr.issue_comments.len(),
        "review_comments": review_comments,
        "commits": pr.commits.len(),
    })
}

/// How a user relates to the repository, as GitHub words it.
pub(crate) fn author_association(
    state: &State,
    repo: &RepositoryRecord,
    login: &str,
) -> &'static str {
    match state.user(login) {
        _ if login == repo.owner => "OWNER",
        Some(user) if user.permission >= Permission::Write => "COLLABORATOR",
        _ => "CONTRIBUTOR",
    }
}

fn side_word(side: Side) -> &'static str {
    match side {
        Side::Left => "LEFT",
        Side::Right => "RIGHT",
    }
}

fn reactions_json(url: &str) -> Value {
    json!({
        "url": format!("{url}/reactions"),
        "total_count": 0, "+1": 0, "-1": 0, "laugh": 0, "hooray": 0,
        "confused": 0, "heart": 0, "rocket": 0, "eyes": 0,
    })
}

/// A pull request review comment.
pub(crate) fn review_comment_json(
    state: &State,
    pr: &PullRequestRecord,
    thread: &ThreadRecord,
    comment: &ReviewCommentRecord,
    api_url: &str,
) -> Value {
    let repo = &state.repository;
    let url = format!(
        "{api_url}/repos/{}/pulls/comments/{}",
        repo.full_name(),
        comment.database_id
    );
    let html_url = format!("{}#discussion_r{}", pr.html_url, comment.database_id);
    let pr_url = format!("{api_url}/repos/{}/pulls/{}", repo.full_name(), pr.number);
    let multi_line = thread.original_start_line.is_some();
    let mut value = json!({
        "url": url,
        "pull_request_review_id": comment.review_id,
        "id": comment.database_id,
        "node_id": comment.id,
        "diff_hunk": comment.diff_hunk,
        "path": thread.path,
        "position": thread.line(),
        "original_position": thread.original_line,
        "commit_id": thread.commit,
        "original_commit_id": comment.original_commit,
        "user": author_json(state, &comment.author, api_url),
        "body": comment.body,
        "created_at": comment.created_at,
        "updated_at": comment.created_at,
        "html_url": html_url,
        "pull_request_url": pr_url,
        "author_association": author_association(state, repo, &comment.author),
        "_links": {
            "self": { "href": url },
            "html": { "href": html_url },
            "pull_request": { "href": pr_url },
        },
        "reactions": reactions_json(&url),
        "start_line": thread.start_line(),
        "original_start_line": thread.original_start_line,
        "start_side": multi_line.then(|| side_word(thread.side)),
        "line": thread.line(),
        "original_line": thread.original_line,
        "side": side_word(thread.side),
        "subject_type": if thread.original_line.is_some() { "line" } else { "file" },
    });
    // GitHub sends `in_reply_to_id` on replies only.
    if let Some(parent) = comment.reply_to {
        value["in_reply_to_id"] = json!(parent);
    }
    value
}

fn review_state_word(state: ReviewStateSpec) -> &'static str {
    match state {
        ReviewStateSpec::Pending => "PENDING",
        ReviewStateSpec::Commented => "COMMENTED",
        ReviewStateSpec::Approved => "APPROVED",
        ReviewStateSpec::ChangesRequested => "CHANGES_REQUESTED",
        ReviewStateSpec::Dismissed => "DISMISSED",
    }
}

/// A pull request review.
pub(crate) fn review_json(
    state: &State,
    pr: &PullRequestRecord,
    review: &ReviewRecord,
    api_url: &str,
) -> Value {
    let repo = &state.repository;
    let html_url = format!("{}#pullrequestreview-{}", pr.html_url, review.database_id);
    let pr_url = format!("{api_url}/repos/{}/pulls/{}", repo.full_name(), pr.number);
    let mut value = json!({
        "id": review.database_id,
        "node_id": review.id,
        "user": author_json(state, &review.author, api_url),
        "body": review.body,
        "state": review_state_word(review.state),
        "html_url": html_url,
        "pull_request_url": pr_url,
        "author_association": author_association(state, repo, &review.author),
        "_links": {
            "html": { "href": html_url },
            "pull_request": { "href": pr_url },
        },
        "commit_id": review.commit,
    });
    // A pending review has no `submitted_at` on GitHub.
    if let Some(submitted_at) = &review.submitted_at {
        value["submitted_at"] = json!(submitted_at);
    }
    value
}

/// An issue (conversation) comment.
pub(crate) fn issue_comment_json(
    state: &State,
    pr: &PullRequestRecord,
    comment: &IssueCommentRecord,
    api_url: &str,
) -> Value {
    let repo = &state.repository;
    let url = format!(
        "{api_url}/repos/{}/issues/comments/{}",
        repo.full_name(),
        comment.database_id
    );
    json!({
        "id": comment.database_id,
        "node_id": comment.id,
        "url": url,
        "html_url": format!("{}#issuecomment-{}", pr.html_url, comment.database_id),
        "body": comment.body,
        "user": author_json(state, &comment.author, api_url),
        "created_at": comment.created_at,
        "updated_at": comment.created_at,
        "issue_url": format!("{api_url}/repos/{}/issues/{}", repo.full_name(), pr.number),
        "author_association": author_association(state, repo, &comment.author),
        "performed_via_github_app": null,
        "reactions": reactions_json(&url),
    })
}

/// The pull requests a check run or workflow run belongs to.
fn pull_requests_of(state: &State, sha: &str, api_url: &str) -> Value {
    let repo = &state.repository;
    let short = json!({
        "id": repo.database_id,
        "url": format!("{api_url}/repos/{}", repo.full_name()),
        "name": repo.name,
    });
    Value::Array(
        state
            .pull_requests
            .iter()
            .filter(|pr| pr.head_sha == sha)
            .map(|pr| {
                json!({
                    "url": format!("{api_url}/repos/{}/pulls/{}", repo.full_name(), pr.number),
                    "id": pr.database_id,
                    "number": pr.number,
                    "head": { "ref": pr.head_ref, "sha": pr.head_sha, "repo": short },
                    "base": { "ref": pr.base_ref, "sha": pr.base_sha, "repo": short },
                })
            })
            .collect(),
    )
}

/// A check run.
pub(crate) fn check_run_json(state: &State, run: &CheckRunRecord, api_url: &str) -> Value {
    let repo = &state.repository;
    let url = format!(
        "{api_url}/repos/{}/check-runs/{}",
        repo.full_name(),
        run.database_id
    );
    let html_url = format!(
        "{}/actions/runs/{}/job/{}",
        repo.html_url, run.workflow_run_id, run.database_id
    );
    json!({
        "id": run.database_id,
        "head_sha": run.head_sha,
        "node_id": run.id,
        "external_id": "",
        "url": url,
        "html_url": html_url,
        "details_url": html_url,
        "status": run.status.as_str(),
        "conclusion": run.conclusion.map(|c| c.as_str()),
        "started_at": run.started_at,
        "completed_at": run.completed_at,
        "output": {
            "title": run.output_title,
            "summary": run.output_summary,
            "text": run.output_text,
            "annotations_count": 0,
            "annotations_url": format!("{url}/annotations"),
        },
        "name": run.name,
        "check_suite": { "id": run.check_suite_id },
        "app": actions_app_json(api_url),
        "pull_requests": pull_requests_of(state, &run.head_sha, api_url),
    })
}

/// A commit status.
pub(crate) fn status_json(state: &State, status: &StatusRecord, api_url: &str) -> Value {
    let repo = &state.repository;
    let creator = state.user(&status.creator).map_or_else(
        || json!({ "login": status.creator, "id": 41898282, "type": "Bot", "site_admin": false }),
        |user| user_json(user, api_url),
    );
    json!({
        "url": format!("{api_url}/repos/{}/statuses/{}", repo.full_name(), status.sha),
        "avatar_url": null,
        "id": status.database_id,
        "node_id": status.id,
        "state": status.state.as_str(),
        "description": status.description,
        "target_url": status.target_url,
        "context": status.context,
        "created_at": status.created_at,
        "updated_at": status.created_at,
        "creator": creator,
    })
}

/// A workflow run.
pub(crate) fn workflow_run_json(state: &State, run: &WorkflowRunRecord, api_url: &str) -> Value {
    let repo = &state.repository;
    let url = format!(
        "{api_url}/repos/{}/actions/runs/{}",
        repo.full_name(),
        run.database_id
    );
    let actor = author_json(state, &run.actor, api_url);
    json!({
        "id": run.database_id,
        "name": run.name,
        "node_id": run.id,
        "check_suite_id": run.check_suite_id,
        "check_suite_node_id": crate::ids::node_id(crate::ids::NodeKind::CheckSuite, run.check_suite_id),
        "head_branch": run.head_branch,
        "head_sha": run.head_sha,
        "path": format!(".github/workflows/ci.yml@{}", run.head_branch),
        "run_number": run.run_number,
        "event": run.event,
        "display_title": run.name,
        "status": run.status.as_str(),
        "conclusion": run.conclusion.map(|c| c.as_str()),
        "workflow_id": 1,
        "url": url,
        "html_url": format!("{}/actions/runs/{}", repo.html_url, run.database_id),
        "pull_requests": pull_requests_of(state, &run.head_sha, api_url),
        "created_at": run.created_at,
        "updated_at": run.updated_at,
        "actor": actor,
        "triggering_actor": actor,
        "run_attempt": run.run_attempt,
        "run_started_at": run.run_started_at,
        "jobs_url": format!("{url}/jobs"),
        "logs_url": format!("{url}/logs"),
        "check_suite_url": format!("{api_url}/repos/{}/check-suites/{}", repo.full_name(), run.check_suite_id),
        "cancel_url": format!("{url}/cancel"),
        "rerun_url": format!("{url}/rerun"),
        "previous_attempt_url": (run.run_attempt > 1)
            .then(|| format!("{url}/attempts/{}", run.run_attempt - 1)),
        "repository": short_repository_json(repo, api_url),
        "head_repository": short_repository_json(repo, api_url),
    })
}

/// A job of a workflow run.
pub(crate) fn job_json(
    state: &State,
    run: &WorkflowRunRecord,
    job: &JobRecord,
    api_url: &str,
) -> Value {
    let repo = &state.repository;
    json!({
        "id": job.database_id,
        "run_id": run.database_id,
        "run_url": format!("{api_url}/repos/{}/actions/runs/{}", repo.full_name(), run.database_id),
        "run_attempt": job.run_attempt,
        "node_id": crate::ids::node_id(crate::ids::NodeKind::CheckRun, job.database_id),
        "head_sha": run.head_sha,
        "head_branch": run.head_branch,
        "url": format!("{api_url}/repos/{}/actions/jobs/{}", repo.full_name(), job.database_id),
        "html_url": format!("{}/actions/runs/{}/job/{}", repo.html_url, run.database_id, job.database_id),
        "status": job.status.as_str(),
        "conclusion": job.conclusion.map(|c| c.as_str()),
        "created_at": run.created_at,
        "started_at": job.started_at,
        "completed_at": job.completed_at,
        "name": job.name,
        "steps": [],
        "check_run_url": format!("{api_url}/repos/{}/check-runs/{}", repo.full_name(), job.database_id),
        "labels": ["ubuntu-latest"],
        "workflow_name": run.name,
    })
}
