//! GitLab's bodies carry the fields GitLab's REST documentation lists for
//! each resource (the ones python-gitlab and Shepherd read among them), and
//! the repository names merge request heads as GitLab does
//! (`refs/merge-requests/N/head`, never GitHub's `refs/pull/N/head`).

use std::process::Command;

use serde_json::Value;
use shepherd_emulator::{EmulatedForge, RunningEmulator};

use crate::scenario::{start, ALICE};

const PROJECT: &str = "acme%2Ftools%2Fwidgets";

async fn get(emu: &RunningEmulator, path: &str) -> Value {
    let response = reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap()
        .get(format!("{}{path}", emu.gitlab_api_url()))
        .header("private-token", ALICE)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200, "GET {path}");
    response.json().await.unwrap()
}

/// The keys of `fields` that `value` lacks.
fn missing<'f>(value: &Value, fields: &[&'f str]) -> Vec<&'f str> {
    fields
        .iter()
        .copied()
        .filter(|f| value.get(f).is_none())
        .collect()
}

// From GitLab's REST documentation (users, projects, merge requests, notes,
// discussions, pipelines, jobs).
const USER: &[&str] = &["id", "username", "name", "state", "avatar_url", "web_url"];
const PROJECT_FIELDS: &[&str] = &[
    "id",
    "name",
    "name_with_namespace",
    "path",
    "path_with_namespace",
    "default_branch",
    "web_url",
    "http_url_to_repo",
    "namespace",
    "visibility",
    "archived",
    "permissions",
];
const MERGE_REQUEST: &[&str] = &[
    "id",
    "iid",
    "project_id",
    "title",
    "description",
    "state",
    "created_at",
    "updated_at",
    "merged_by",
    "merge_user",
    "merged_at",
    "closed_by",
    "closed_at",
    "target_branch",
    "source_branch",
    "user_notes_count",
    "upvotes",
    "downvotes",
    "author",
    "assignees",
    "assignee",
    "reviewers",
    "source_project_id",
    "target_project_id",
    "labels",
    "draft",
    "work_in_progress",
    "milestone",
    "merge_when_pipeline_succeeds",
    "merge_status",
    "detailed_merge_status",
    "sha",
    "merge_commit_sha",
    "squash_commit_sha",
    "discussion_locked",
    "should_remove_source_branch",
    "force_remove_source_branch",
    "reference",
    "references",
    "web_url",
    "squash",
    "has_conflicts",
    "blocking_discussions_resolved",
    "diff_refs",
];
const NOTE: &[&str] = &[
    "id",
    "type",
    "body",
    "author",
    "created_at",
    "updated_at",
    "system",
    "noteable_id",
    "noteable_type",
    "noteable_iid",
    "resolvable",
    "project_id",
    "internal",
    "confidential",
];
const DIFF_NOTE: &[&str] = &["position", "resolved", "resolved_by", "resolvable"];
const DISCUSSION: &[&str] = &["id", "individual_note", "notes"];
const PIPELINE: &[&str] = &[
    "id",
    "iid",
    "project_id",
    "sha",
    "ref",
    "status",
    "source",
    "created_at",
    "updated_at",
    "web_url",
];
const JOB: &[&str] = &[
    "id",
    "name",
    "stage",
    "status",
    "ref",
    "created_at",
    "started_at",
    "finished_at",
    "allow_failure",
    "user",
    "commit",
    "pipeline",
    "web_url",
];

const VERSION: &[&str] = &[
    "id",
    "head_commit_sha",
    "base_commit_sha",
    "start_commit_sha",
    "created_at",
    "merge_request_id",
    "state",
    "real_size",
];
const APPROVALS: &[&str] = &[
    "approved",
    "approved_by",
    "user_has_approved",
    "user_can_approve",
];
const COMMIT: &[&str] = &[
    "id",
    "short_id",
    "title",
    "message",
    "author_name",
    "author_email",
    "authored_date",
    "committer_name",
    "committer_email",
    "committed_date",
    "created_at",
    "parent_ids",
    "web_url",
];

/// A commit status (GitLab's "Commits API", list the statuses of a commit).
const COMMIT_STATUS: &[&str] = &[
    "id",
    "sha",
    "ref",
    "status",
    "name",
    "target_url",
    "description",
    "created_at",
    "started_at",
    "finished_at",
    "allow_failure",
    "coverage",
    "author",
];

#[tokio::test]
async fn gitlab_bodies_carry_the_documented_fields() {
    let emu = start(EmulatedForge::GitLab).await;
    let mut gaps = Vec::new();
    let mut check = |what: &str, value: &Value, fields: &[&str]| {
        let lacks = missing(value, fields);
        if !lacks.is_empty() {
            gaps.push(format!("{what} lacks {lacks:?}"));
        }
    };
    check("user", &get(&emu, "/user").await, USER);
    check(
        "project",
        &get(&emu, &format!("/projects/{PROJECT}")).await,
        PROJECT_FIELDS,
    );
    let mr = format!("/projects/{PROJECT}/merge_requests/1");
    check("merge request", &get(&emu, &mr).await, MERGE_REQUEST);
    let listed = get(&emu, &format!("/projects/{PROJECT}/merge_requests")).await;
    check("listed merge request", &listed[0], MERGE_REQUEST);
    let changes = get(&emu, &format!("{mr}/changes")).await;
    check("merge request changes", &changes, MERGE_REQUEST);
    check("merge request changes", &changes, &["changes", "overflow"]);
    let versions = get(&emu, &format!("{mr}/versions")).await;
    check("diff version", &versions[0], VERSION);
    let version = get(&emu, &format!("{mr}/versions/{}", versions[0]["id"])).await;
    check("one diff version", &version, VERSION);
    check("one diff version", &version, &["commits", "diffs"]);
    check("commit", &version["commits"][0], COMMIT);
    let commits = get(&emu, &format!("{mr}/commits")).await;
    check("merge request commit", &commits[0], COMMIT);
    check(
        "approvals",
        &get(&emu, &format!("{mr}/approvals")).await,
        APPROVALS,
    );
    check(
        "participant",
        &get(&emu, &format!("{mr}/participants")).await[0],
        USER,
    );
    let notes = get(&emu, &format!("{mr}/notes")).await;
    check("note", &notes[0], NOTE);
    let discussions = get(&emu, &format!("{mr}/discussions")).await;
    let thread = discussions
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["individual_note"] == false)
        .expect("a thread");
    check("discussion", thread, DISCUSSION);
    check("diff note", &thread["notes"][0], NOTE);
    check("diff note", &thread["notes"][0], DIFF_NOTE);
    let note_id = thread["notes"][0]["id"].as_u64().unwrap();
    let discussion_id = thread["id"].as_str().unwrap();
    let one = get(
        &emu,
        &format!("{mr}/discussions/{discussion_id}/notes/{note_id}"),
    )
    .await;
    assert_eq!(
        one, thread["notes"][0],
        "a note by id is the discussion's note"
    );
    let pipelines = get(&emu, &format!("{mr}/pipelines")).await;
    let pipeline_id = pipelines[0]["id"].as_u64().unwrap();
    let pipeline = get(
        &emu,
        &format!("/projects/{PROJECT}/pipelines/{pipeline_id}"),
    )
    .await;
    check("pipeline", &pipeline, PIPELINE);
    let jobs = get(
        &emu,
        &format!("/projects/{PROJECT}/pipelines/{pipeline_id}/jobs"),
    )
    .await;
    check("job", &jobs[0], JOB);
    let sha = pipeline["sha"].as_str().unwrap();
    let statuses = get(
        &emu,
        &format!("/projects/{PROJECT}/repository/commits/{sha}/statuses"),
    )
    .await;
    check("commit status", &statuses[0], COMMIT_STATUS);
    check("commit status author", &statuses[0]["author"], USER);
    assert!(gaps.is_empty(), "{}", gaps.join("\n"));
}

#[tokio::test]
async fn gitlab_repositories_name_merge_request_heads_as_gitlab_does() {
    let emu = start(EmulatedForge::GitLab).await;
    let out = Command::new("git")
        .args(["--git-dir"])
        .arg(emu.repository_path())
        .args(["for-each-ref", "--format=%(refname) %(objectname)"])
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git runs");
    assert!(out.status.success());
    let refs = String::from_utf8(out.stdout).unwrap();
    let head = emu.head_sha(1).unwrap();
    assert!(
        refs.contains(&format!("refs/merge-requests/1/head {head}")),
        "{refs}"
    );
    assert!(!refs.contains("refs/pull/"), "{refs}");
    let github = start(EmulatedForge::GitHub).await;
    let out = Command::new("git")
        .args(["--git-dir"])
        .arg(github.repository_path())
        .args(["for-each-ref", "--format=%(refname)"])
        .output()
        .expect("git runs");
    let refs = String::from_utf8(out.stdout).unwrap();
    assert!(refs.contains("refs/pull/1/head"), "{refs}");
    assert!(!refs.contains("refs/merge-requests/"), "{refs}");
}
