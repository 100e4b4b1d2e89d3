//! GitHub's REST shapes of the emulator's records.

use serde_json::{json, Value};

use crate::auth::Viewer;
use crate::ci_state::{
    CheckRunRecord, CheckSuiteRecord, JobRecord, StatusRecord, WorkflowRunRecord,
};
use crate::git::{CommitDetail, Hunk};
use crate::ids::NodeKind;
use crate::pr_derived::{author_association, mergeable_state};
use crate::scenario::{Permission, PullRequestStatus, ReviewStateSpec, Side, UserKind, Visibility};
use crate::state::{
    IssueCommentRecord, LabelEventRecord, LabelRecord, PullRequestRecord, RepositoryRecord,
    ReviewCommentRecord, ReviewRecord, State, ThreadRecord, UserRecord,
};

/// REST logins of bots carry GitHub's `[bot]` suffix.
pub(crate) fn rest_login(user: &UserRecord) -> String {
    match user.kind {
        UserKind::Bot if !user.login.ends_with("[bot]") => format!("{}[bot]", user.login),
        _ => user.login.clone(),
    }
}

/// The web root of an API root: Enterprise's API is `http(s)://HOST/api/v3`,
/// its pages are under `http(s)://HOST/`.
pub(crate) fn web_root(api_url: &str) -> &str {
    api_url.strip_suffix("/api/v3").unwrap_or(api_url)
}

/// GitHub's `simple-user` for `login` of type `kind` (`User`, `Bot`,
/// `Organization`).
pub(crate) fn account_json(
    login: &str,
    database_id: u64,
    node_id: &str,
    kind: &str,
    api_url: &str,
) -> Value {
    let url = format!("{api_url}/users/{login}");
    json!({
        "login": login,
        "id": database_id,
        "node_id": node_id,
        "avatar_url": format!("{}/avatars/{login}", web_root(api_url)),
        "gravatar_id": "",
        "url": url,
        "html_url": format!("{}/{login}", web_root(api_url)),
        "followers_url": format!("{url}/followers"),
        "following_url": format!("{url}/following{{/other_user}}"),
        "gists_url": format!("{url}/gists{{/gist_id}}"),
        "starred_url": format!("{url}/starred{{/owner}}{{/repo}}"),
        "subscriptions_url": format!("{url}/subscriptions"),
        "organizations_url": format!("{url}/orgs"),
        "repos_url": format!("{url}/repos"),
        "events_url": format!("{url}/events{{/privacy}}"),
        "received_events_url": format!("{url}/received_events"),
        "type": kind,
        "site_admin": false,
    })
}

pub(crate) fn user_json(user: &UserRecord, api_url: &str) -> Value {
    let login = rest_login(user);
    let kind = match user.kind {
        UserKind::User => "User",
        UserKind::Bot => "Bot",
    };
    account_json(&login, user.database_id, &user.id, kind, api_url)
}

/// The owner of a repository: a user of the scenario, else an organization.
pub(crate) fn owner_json(state: &State, login: &str, api_url: &str) -> Value {
    match state.user(login) {
        Some(user) => user_json(user, api_url),
        None => {
            let id = 1_000_000 + state.repository.database_id;
            let node_id = crate::ids::node_id(crate::ids::NodeKind::User, id);
            account_json(login, id, &node_id, "Organization", api_url)
        }
    }
}

/// The user with this login, or `null` (a deleted account).
pub(crate) fn author_json(state: &State, login: &str, api_url: &str) -> Value {
    state
        .user(login)
        .map_or(Value::Null, |user| user_json(user, api_url))
}

/// The GitHub Actions app that owns the emulator's check runs.
pub(crate) fn actions_app_json(api_url: &str) -> Value {
    let node_id = crate::ids::node_id(crate::ids::NodeKind::App, 15368);
    let owner_node = crate::ids::node_id(crate::ids::NodeKind::User, 9919);
    json!({
        "id": 15368,
        "slug": "github-actions",
        "node_id": node_id,
        "client_id": "Iv1.emulator",
        "name": "GitHub Actions",
        "description": "Automate your workflow from idea to production",
        "owner": account_json("github", 9919, &owner_node, "Organization", api_url),
        "external_url": "https://help.github.com/en/actions",
        "html_url": format!("{}/apps/github-actions", web_root(api_url)),
        "created_at": "2018-07-30T09:30:17Z",
        "updated_at": "2019-12-10T19:04:12Z",
        "permissions": { "checks": "write", "contents": "write", "metadata": "read", "statuses": "write" },
        "events": ["check_run", "check_suite", "push", "pull_request", "workflow_run"],
    })
}

/// GitHub's `repository` object for `full_name` (the repository, or a
/// fork's copy of it) with its owner `owner`; `viewer` adds `permissions`.
fn repository_object(
    state: &State,
    repo: &RepositoryRecord,
    owner: &str,
    fork: bool,
    viewer: Option<&Viewer>,
    api_url: &str,
) -> Value {
    let full_name = format!("{owner}/{}", repo.name);
    let url = format!("{api_url}/repos/{full_name}");
    let web = web_root(api_url);
    let html_url = if fork {
        format!("{web}/{full_name}")
    } else {
        repo.html_url.clone()
    };
    let mut value = json!({
        "id": repo.database_id,
        "node_id": repo.id,
        "name": repo.name,
        "full_name": full_name,
        "private": repo.visibility == Visibility::Private,
        "owner": owner_json(state, owner, api_url),
        "html_url": html_url,
        "description": null,
        "fork": fork,
        "url": url,
        "homepage": null,
        "language": null,
        "forks": 0,
        "forks_count": 0,
        "stargazers_count": 0,
        "watchers_count": 0,
        "watchers": 0,
        "size": 0,
        "default_branch": repo.default_branch,
        "open_issues": state.pull_requests.iter().filter(|p| p.status == PullRequestStatus::Open).count(),
        "open_issues_count": state.pull_requests.iter().filter(|p| p.status == PullRequestStatus::Open).count(),
        "is_template": false,
        "topics": [],
        "has_issues": true,
        "has_projects": false,
        "has_wiki": false,
        "has_pages": false,
        "has_downloads": false,
        "has_discussions": false,
    });
    let more = json!({
        "archived": false,
        "disabled": false,
        "visibility": repo.visibility.as_str(),
        "pushed_at": REPOSITORY_TIME,
        "created_at": REPOSITORY_TIME,
        "updated_at": REPOSITORY_TIME,
        "allow_forking": true,
        "web_commit_signoff_required": false,
        "license": null,
        "mirror_url": null,
        "clone_url": repo.git_url,
        "git_url": repo.git_url.replacen("http://", "git://", 1).replacen("https://", "git://", 1),
        "ssh_url": format!("git@{}:{full_name}.git", host_of(web)),
        "svn_url": html_url,
        "network_count": 0,
        "subscribers_count": 0,
    });
    if let (Some(value), Value::Object(more)) = (value.as_object_mut(), more) {
        value.extend(more);
    }
    for (key, tail) in REPOSITORY_URLS {
        value[*key] = json!(format!("{url}{tail}"));
    }
    if let Some(viewer) = viewer {
        value["permissions"] = json!({
            "admin": viewer.permission >= Permission::Admin,
            "maintain": viewer.permission >= Permission::Admin,
            "push": viewer.permission >= Permission::Write,
            "triage": viewer.permission >= Permission::Write,
            "pull": viewer.permission >= Permission::Read,
        });
    }
    value
}

/// The emulated repository's creation and push time (the emulator keeps
/// none).
const REPOSITORY_TIME: &str = "2024-01-01T00:00:00Z";

/// The URL templates of a repository object, under its API URL.
const REPOSITORY_URLS: &[(&str, &str)] = &[
    ("archive_url", "/{archive_format}{/ref}"),
    ("assignees_url", "/assignees{/user}"),
    ("blobs_url", "/git/blobs{/sha}"),
    ("branches_url", "/branches{/branch}"),
    ("collaborators_url", "/collaborators{/collaborator}"),
    ("comments_url", "/comments{/number}"),
    ("commits_url", "/commits{/sha}"),
    ("compare_url", "/compare/{base}...{head}"),
    ("contents_url", "/contents/{+path}"),
    ("contributors_url", "/contributors"),
    ("deployments_url", "/deployments"),
    ("downloads_url", "/downloads"),
    ("events_url", "/events"),
    ("forks_url", "/forks"),
    ("git_commits_url", "/git/commits{/sha}"),
    ("git_refs_url", "/git/refs{/sha}"),
    ("git_tags_url", "/git/tags{/sha}"),
    ("hooks_url", "/hooks"),
    ("issue_comment_url", "/issues/comments{/number}"),
    ("issue_events_url", "/issues/events{/number}"),
    ("issues_url", "/issues{/number}"),
    ("keys_url", "/keys{/key_id}"),
    ("labels_url", "/labels{/name}"),
    ("languages_url", "/languages"),
    ("merges_url", "/merges"),
    ("milestones_url", "/milestones{/number}"),
    (
        "notifications_url",
        "/notifications{?since,all,participating}",
    ),
    ("pulls_url", "/pulls{/number}"),
    ("releases_url", "/releases{/id}"),
    ("stargazers_url", "/stargazers"),
    ("statuses_url", "/statuses/{sha}"),
    ("subscribers_url", "/subscribers"),
    ("subscription_url", "/subscription"),
    ("tags_url", "/tags"),
    ("teams_url", "/teams"),
    ("trees_url", "/git/trees{/sha}"),
];

/// `HOST:PORT` of a URL (`http://HOST:PORT/…`).
fn host_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    rest.split('/').next().unwrap_or(rest)
}

/// `GET /repos/{owner}/{repo}`: the full repository, with the viewer's
/// permissions.
pub(crate) fn repository_json(state: &State, viewer: &Viewer, api_url: &str) -> Value {
    let repo = &state.repository;
    repository_object(state, repo, &repo.owner, false, Some(viewer), api_url)
}

/// The repository as other objects embed it.
pub(crate) fn short_repository_json(state: &State, api_url: &str) -> Value {
    let repo = &state.repository;
    repository_object(state, repo, &repo.owner, false, None, api_url)
}

pub(crate) fn label_json(label: &LabelRecord, repo: &RepositoryRecord, api_url: &str) -> Value {
    json!({
        "id": label.database_id,
        "node_id": label.id,
        "url": format!("{api_url}/repos/{}/labels/{}", repo.full_name(), label.name),
        "name": label.name,
        "color": label.color,
        "default": false,
        // GitHub's schema has no `null` here: no description is "".
        "description": label.description.clone().unwrap_or_default(),
    })
}

/// A `labeled` or `unlabeled` issue event (OpenAPI `labeled-issue-event`,
/// `unlabeled-issue-event`): the label by name and color only, as GitHub
/// gives it there.
pub(crate) fn label_event_json(state: &State, event: &LabelEventRecord, api_url: &str) -> Value {
    let (kind, name) = if event.added {
        (NodeKind::LabeledEvent, "labeled")
    } else {
        (NodeKind::UnlabeledEvent, "unlabeled")
    };
    let color = state
        .label(&event.label)
        .map_or_else(|| "ededed".to_owned(), |l| l.color.clone());
    json!({
        "id": event.database_id,
        "node_id": crate::ids::node_id(kind, event.database_id),
        "url": format!(
            "{api_url}/repos/{}/issues/events/{}",
            state.repository.full_name(),
            event.database_id
        ),
        "actor": author_json(state, &event.actor, api_url),
        "event": name,
        "commit_id": null,
        "commit_url": null,
        "created_at": event.created_at,
        "performed_via_github_app": null,
        "label": { "name": event.label, "color": color },
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

/// The `head` or `base` of a pull request.
fn branch_end(
    state: &State,
    owner: &str,
    branch: &str,
    sha: &str,
    repo: Value,
    api_url: &str,
) -> Value {
    json!({
        "label": format!("{owner}:{branch}"),
        "ref": branch,
        "sha": sha,
        "user": owner_json(state, owner, api_url),
        "repo": repo,
    })
}

pub(crate) fn pull_request_json(
    state: &State,
    repo: &RepositoryRecord,
    pr: &PullRequestRecord,
    api_url: &str,
) -> Value {
    let full_name = repo.full_name();
    let base_repo = repository_object(state, repo, &repo.owner, false, None, api_url);
    // A fork PR's head lives in the author's copy of the repository. The
    // emulator keeps the head branch in the one bare repository (GitHub
    // also exposes it there as refs/pull/N/head).
    let head_owner = if pr.fork {
        pr.author.as_str()
    } else {
        repo.owner.as_str()
    };
    let head_repo = if pr.fork {
        repository_object(state, repo, &pr.author, true, None, api_url)
    } else {
        base_repo.clone()
    };
    let merged = pr.status == PullRequestStatus::Merged;
    let state_word = match pr.status {
        PullRequestStatus::Open => "open",
        PullRequestStatus::Closed | PullRequestStatus::Merged => "closed",
    };
    let review_comments: usize = pr.threads.iter().map(|t| t.comments.len()).sum();
    let (mut additions, mut deletions) = (0, 0);
    for hunks in pr.diff.values() {
        let (added, removed, _, _) = crate::git::change_counts(hunks);
        additions += added;
        deletions += removed;
    }
    let url = format!("{api_url}/repos/{full_name}/pulls/{}", pr.number);
    let issue_url = format!("{api_url}/repos/{full_name}/issues/{}", pr.number);
    let statuses_url = format!("{api_url}/repos/{full_name}/statuses/{}", pr.head_sha);
    let open = pr.status == PullRequestStatus::Open;
    let mut value = json!({
        "url": url,
        "id": pr.database_id,
        "node_id": pr.id,
        "html_url": pr.html_url,
        "diff_url": format!("{}.diff", pr.html_url),
        "patch_url": format!("{}.patch", pr.html_url),
        "issue_url": issue_url,
        "commits_url": format!("{url}/commits"),
        "review_comments_url": format!("{url}/comments"),
        "review_comment_url": format!("{api_url}/repos/{full_name}/pulls/comments{{/number}}"),
        "comments_url": format!("{issue_url}/comments"),
        "statuses_url": statuses_url,
        "number": pr.number,
        "state": state_word,
        "locked": false,
        "active_lock_reason": null,
        "title": pr.title,
        "body": pr.body,
        "user": author_json(state, &pr.author, api_url),
        "labels": labels_json(state, pr, api_url),
        "milestone": null,
        "assignee": null,
        "assignees": [],
        "requested_reviewers": pr
            .requested_reviewers
            .iter()
            .map(|login| author_json(state, login, api_url))
            .collect::<Vec<_>>(),
        "requested_teams": [],
        "created_at": pr.created_at,
        "updated_at": pr.updated_at,
        "closed_at": pr.closed_at,
        "merged_at": if merged { pr.closed_at.clone() } else { None },
        // The emulator makes no test merge commit.
        "merge_commit_sha": null,
        "draft": pr.draft,
        "merged": merged,
        "merged_by": null,
        "mergeable": if open { json!(true) } else { Value::Null },
        "rebaseable": if open { json!(true) } else { Value::Null },
        "mergeable_state": mergeable_state(&state.ci, pr),
        "maintainer_can_modify": false,
        "auto_merge": null,
    });
    let more = json!({
        "head": branch_end(state, head_owner, &pr.head_ref, &pr.head_sha, head_repo, api_url),
        "base": branch_end(state, &repo.owner, &pr.base_ref, &pr.base_sha, base_repo, api_url),
        "_links": {
            "self": { "href": url },
            "html": { "href": pr.html_url },
            "issue": { "href": issue_url },
            "comments": { "href": format!("{issue_url}/comments") },
            "review_comments": { "href": format!("{url}/comments") },
            "review_comment": { "href": format!("{api_url}/repos/{full_name}/pulls/comments{{/number}}") },
            "commits": { "href": format!("{url}/commits") },
            "statuses": { "href": statuses_url },
        },
        "author_association": author_association(state, repo, &pr.author),
        "comments": pr.issue_comments.len(),
        "review_comments": review_comments,
        "commits": pr.commits.len(),
        "additions": additions,
        "deletions": deletions,
        "changed_files": pr.diff.len(),
    });
    if let (Some(value), Value::Object(more)) = (value.as_object_mut(), more) {
        value.extend(more);
    }
    value
}

/// The PR as an issue (`GET …/issues/{number}`).
pub(crate) fn issue_json(state: &State, pr: &PullRequestRecord, api_url: &str) -> Value {
    let repo = &state.repository;
    let full_name = repo.full_name();
    let repository_url = format!("{api_url}/repos/{full_name}");
    let url = format!("{repository_url}/issues/{}", pr.number);
    let state_word = match pr.status {
        PullRequestStatus::Open => "open",
        PullRequestStatus::Closed | PullRequestStatus::Merged => "closed",
    };
    let merged = pr.status == PullRequestStatus::Merged;
    json!({
        "id": pr.database_id,
        "node_id": pr.id,
        "url": url,
        "repository_url": repository_url,
        "labels_url": format!("{url}/labels{{/name}}"),
        "comments_url": format!("{url}/comments"),
        "events_url": format!("{url}/events"),
        "html_url": pr.html_url,
        "number": pr.number,
        "state": state_word,
        "state_reason": null,
        "title": pr.title,
        "body": pr.body,
        "user": author_json(state, &pr.author, api_url),
        "labels": labels_json(state, pr, api_url),
        "assignee": null,
        "assignees": [],
        "milestone": null,
        "locked": false,
        "active_lock_reason": null,
        "comments": pr.issue_comments.len(),
        "pull_request": {
            "url": format!("{repository_url}/pulls/{}", pr.number),
            "html_url": pr.html_url,
            "diff_url": format!("{}.diff", pr.html_url),
            "patch_url": format!("{}.patch", pr.html_url),
            "merged_at": if merged { pr.closed_at.clone() } else { None },
        },
        "closed_at": pr.closed_at,
        "created_at": pr.created_at,
        "updated_at": pr.updated_at,
        "draft": pr.draft,
        "closed_by": null,
        "author_association": author_association(state, repo, &pr.author),
        "reactions": reactions_json(&url),
    })
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
    // GitHub's positions count lines in the file's diff, not file lines.
    let left = thread.side == Side::Left;
    let hunks = pr.diff.get(&thread.path);
    let position = thread
        .line()
        .and_then(|line| crate::git::diff_position(hunks?, line, left));
    // The emulator keeps only the current diff: an outdated comment's
    // original position is where its hunk ends (the lines of its
    // `diff_hunk` below the header).
    let original_position = if thread.outdated {
        thread
            .original_line
            .map(|_| comment.diff_hunk.lines().count().saturating_sub(1).max(1) as u32)
    } else {
        position
    };
    let mut value = json!({
        "url": url,
        "pull_request_review_id": comment.review_id,
        "id": comment.database_id,
        "node_id": comment.id,
        "diff_hunk": comment.diff_hunk,
        "path": thread.path,
        "position": position,
        "original_position": original_position,
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
        "updated_at": comment.updated_at,
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
pub(crate) fn workflow_run_json(
    state: &State,
    run: &WorkflowRunRecord,
    head_commit: Option<&CommitDetail>,
    api_url: &str,
) -> Value {
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
        "artifacts_url": format!("{url}/artifacts"),
        "workflow_url": format!("{api_url}/repos/{}/actions/workflows/1", repo.full_name()),
        "head_commit": head_commit.map(simple_commit_json),
        "repository": minimal_repository_json(state, api_url),
        "head_repository": minimal_repository_json(state, api_url),
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
        "runner_id": null,
        "runner_name": null,
        "runner_group_id": null,
        "runner_group_name": null,
        "workflow_name": run.name,
    })
}

/// The repository as workflow runs embed it (`minimal-repository`).
pub(crate) fn minimal_repository_json(state: &State, api_url: &str) -> Value {
    short_repository_json(state, api_url)
}

/// A commit as workflow runs and check suites embed it (`simple-commit`).
pub(crate) fn simple_commit_json(commit: &CommitDetail) -> Value {
    json!({
        "id": commit.sha,
        "tree_id": commit.tree,
        "message": commit.message,
        "timestamp": commit.committed_date,
        "author": { "name": commit.author_name, "email": commit.author_email },
        "committer": { "name": commit.committer_name, "email": commit.committer_email },
    })
}

/// A check suite.
pub(crate) fn check_suite_json(
    state: &State,
    suite: &CheckSuiteRecord,
    head_commit: Option<&CommitDetail>,
    api_url: &str,
) -> Value {
    let repo = &state.repository;
    let url = format!(
        "{api_url}/repos/{}/check-suites/{}",
        repo.full_name(),
        suite.database_id
    );
    let runs = state
        .ci
        .check_runs
        .iter()
        .filter(|r| r.check_suite_id == suite.database_id)
        .count();
    json!({
        "id": suite.database_id,
        "node_id": suite.id,
        "head_branch": suite.head_branch,
        "head_sha": suite.head_sha,
        "status": suite.status.as_str(),
        "conclusion": suite.conclusion.map(|c| c.as_str()),
        "url": url,
        "before": null,
        "after": suite.head_sha,
        "pull_requests": pull_requests_of(state, &suite.head_sha, api_url),
        "app": actions_app_json(api_url),
        "repository": minimal_repository_json(state, api_url),
        "created_at": suite.created_at,
        "updated_at": suite.updated_at,
        "head_commit": head_commit.map(simple_commit_json),
        "latest_check_runs_count": runs,
        "check_runs_url": format!("{url}/check-runs"),
        "rerequestable": true,
        "runs_rerequestable": true,
    })
}

/// One file of a diff (`diff-entry`), under the commit `sha` it ends at.
pub(crate) fn file_json(
    path: &str,
    hunks: &[Hunk],
    sha: &str,
    api_url: &str,
    full_name: &str,
) -> Value {
    let (added, removed, new_file, deleted) = crate::git::change_counts(hunks);
    let status = if new_file {
        "added"
    } else if deleted {
        "removed"
    } else {
        "modified"
    };
    let web = web_root(api_url);
    json!({
        "sha": null,
        "filename": path,
        "status": status,
        "additions": added,
        "deletions": removed,
        "changes": added + removed,
        "blob_url": format!("{web}/{full_name}/blob/{sha}/{path}"),
        "raw_url": format!("{web}/{full_name}/raw/{sha}/{path}"),
        "contents_url": format!("{api_url}/repos/{full_name}/contents/{path}?ref={sha}"),
        "patch": crate::git::patch_text(hunks),
    })
}

/// A commit (`GET …/commits/{sha}`), with its files when `files` is given.
pub(crate) fn commit_json(
    state: &State,
    commit: &CommitDetail,
    files: Option<&std::collections::BTreeMap<String, Vec<Hunk>>>,
    api_url: &str,
) -> Value {
    let repo = &state.repository;
    let full_name = repo.full_name();
    let url = format!("{api_url}/repos/{full_name}/commits/{}", commit.sha);
    let html_url = format!("{}/commit/{}", repo.html_url, commit.sha);
    let mut value = json!({
        "url": url,
        "sha": commit.sha,
        "node_id": format!("C_{}", commit.sha),
        "html_url": html_url,
        "comments_url": format!("{url}/comments"),
        "commit": {
            "url": format!("{api_url}/repos/{full_name}/git/commits/{}", commit.sha),
            "author": { "name": commit.author_name, "email": commit.author_email, "date": commit.authored_date },
            "committer": { "name": commit.committer_name, "email": commit.committer_email, "date": commit.committed_date },
            "message": commit.message,
            "comment_count": 0,
            "tree": {
                "sha": commit.tree,
                "url": format!("{api_url}/repos/{full_name}/git/trees/{}", commit.tree),
            },
            "verification": { "verified": false, "reason": "unsigned", "payload": null, "signature": null, "verified_at": null },
        },
        // Commit authors are git identities, not accounts of the emulator.
        "author": null,
        "committer": null,
        "parents": commit.parents.iter().map(|p| json!({
            "sha": p,
            "url": format!("{api_url}/repos/{full_name}/commits/{p}"),
            "html_url": format!("{}/commit/{p}", repo.html_url),
        })).collect::<Vec<_>>(),
    });
    if let Some(files) = files {
        let entries: Vec<Value> = files
            .iter()
            .map(|(path, hunks)| file_json(path, hunks, &commit.sha, api_url, &full_name))
            .collect();
        let (mut additions, mut deletions) = (0, 0);
        for hunks in files.values() {
            let (a, d, _, _) = crate::git::change_counts(hunks);
            additions += a;
            deletions += d;
        }
        value["stats"] = json!({ "additions": additions, "deletions": deletions, "total": additions + deletions });
        value["files"] = json!(entries);
    }
    value
}
