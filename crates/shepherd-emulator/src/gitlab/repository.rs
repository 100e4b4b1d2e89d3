//! `GET /projects/:id/repository/compare`: the real `git diff` between two
//! commits, in GitLab's shape.

use axum::extract::Path;
use axum::Json;
use serde_json::{json, Value};

use super::common::{parse_bool, project, GlError, GlReq, QueryMap};
use crate::git::{self, CommitInfo, FileChange};

/// Runs blocking git work off the async runtime; a failure is GitLab's 500.
pub(crate) async fn blocking<T, F>(work: F) -> Result<T, GlError>
where
    F: FnOnce() -> Result<T, git::GitError> + Send + 'static,
    T: Send + 'static,
{
    match tokio::task::spawn_blocking(work).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(err)) => {
            tracing::error!(error = %err, "compare failed");
            Err(GlError::bad_request("cannot compare these refs"))
        }
        Err(join) => {
            tracing::error!(error = %join, "compare task failed");
            Err(GlError::bad_request("cannot compare these refs"))
        }
    }
}

/// `from`, `to` (SHAs, branches or tags) and `straight` (`true`: the diff
/// from `from` to `to`; `false`, the default: from their merge base).
pub(crate) async fn compare(
    GlReq(shared, viewer): GlReq,
    Path(id): Path<String>,
    QueryMap(query): QueryMap,
) -> Result<Json<Value>, GlError> {
    let (git_dir, web_url) = {
        let state = shared.read();
        let repo = project(&state, &viewer, &id)?;
        (repo.git_dir.clone(), repo.html_url.clone())
    };
    let from = query
        .get("from")
        .cloned()
        .ok_or_else(|| GlError::parameter("from is missing"))?;
    let to = query
        .get("to")
        .cloned()
        .ok_or_else(|| GlError::parameter("to is missing"))?;
    let straight = match query.get("straight") {
        None => false,
        Some(text) => parse_bool(text).ok_or_else(|| GlError::parameter("straight is invalid"))?,
    };
    let git_env = shared.git.clone();
    let (from_sha, to_sha) = {
        let (git_env, git_dir, from, to) = (git_env.clone(), git_dir.clone(), from, to);
        tokio::task::spawn_blocking(move || {
            (
                git::resolve_commit(&git_env, &git_dir, &from),
                git::resolve_commit(&git_env, &git_dir, &to),
            )
        })
        .await
        .map_err(|_| GlError::not_found())?
    };
    let (Some(from_sha), Some(to_sha)) = (from_sha, to_sha) else {
        return Err(GlError::not_found_named("Ref"));
    };
    let (changes, commits) = {
        let (from_sha, to_sha) = (from_sha.clone(), to_sha.clone());
        blocking(move || {
            let start = if straight {
                from_sha.clone()
            } else {
                git::merge_base(&git_env, &git_dir, &from_sha, &to_sha)?
            };
            let changes = git::compare(&git_env, &git_dir, &start, &to_sha)?;
            let commits = git::log(&git_env, &git_dir, &from_sha, &to_sha)?;
            Ok((changes, commits))
        })
        .await?
    };
    let commits: Vec<Value> = commits.iter().map(|c| commit_json(c, &web_url)).collect();
    Ok(Json(json!({
        "commit": commits.last().cloned().unwrap_or(Value::Null),
        "commits": commits,
        "diffs": changes.iter().map(diff_json).collect::<Vec<_>>(),
        "compare_timeout": false,
        "compare_same_ref": from_sha == to_sha,
        "web_url": format!("{web_url}/-/compare/{from_sha}...{to_sha}?straight={straight}"),
    })))
}

/// A commit, as GitLab's commit lists give it.
/// `web` is the project's web URL.
pub(crate) fn commit_json(commit: &CommitInfo, web: &str) -> Value {
    json!({
        "id": commit.sha,
        "short_id": &commit.sha[..8],
        "title": commit.title,
        "message": commit.message,
        "author_name": commit.author_name,
        "author_email": commit.author_email,
        "authored_date": commit.authored_date,
        "committer_name": commit.author_name,
        "committer_email": commit.author_email,
        "committed_date": commit.committed_date,
        "created_at": commit.committed_date,
        "parent_ids": [],
        "web_url": format!("{web}/-/commit/{}", commit.sha),
    })
}

/// A changed file, as GitLab's diffs give it.
pub(crate) fn diff_json(change: &FileChange) -> Value {
    json!({
        "old_path": change.old_path,
        "new_path": change.new_path,
        "a_mode": change.a_mode,
        "b_mode": change.b_mode,
        "new_file": change.new_file,
        "renamed_file": change.renamed_file,
        "deleted_file": change.deleted_file,
        "generated_file": false,
        "diff": change.diff,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commits_have_short_ids() {
        let commit = CommitInfo {
            sha: "a".repeat(40),
            title: "t".into(),
            message: "t\n".into(),
            author_name: "n".into(),
            author_email: "e".into(),
            authored_date: "d".into(),
            committed_date: "d".into(),
        };
        assert_eq!(commit_json(&commit, "http://h/g/p")["short_id"], "aaaaaaaa");
    }
}
