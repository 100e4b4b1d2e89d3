//! Debian's `gh` (2.20 or later within 2.x; written against 2.23), unchanged,
//! against the emulator as a GitHub
//! Enterprise host behind an HTTPS front (a private CA made at test time,
//! trusted through `SSL_CERT_FILE`): `gh` reaches `/api/v3` and
//! `/api/graphql` as it does on Enterprise. Every command's real output is
//! checked against the emulator's state.
//!
//! `gh pr checkout` is not here: `gh` matches git remotes to its host by
//! host name without the port, so no remote matches an Enterprise host on
//! an ephemeral port (`GH_REPO` names the repository instead).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use shepherd_emulator::RunningEmulator;
use tokio::net::TcpListener;

use crate::scenario::{names, start_behind, ALICE};
use crate::tls_front::{Pki, TlsFront};
use crate::tools;

/// The emulator behind its HTTPS front, a `gh` config directory and a
/// clone of the repository on the PR's head branch.
struct GhWorld {
    emu: RunningEmulator,
    _front: TlsFront,
    /// `127.0.0.1:PORT`: the front, `gh`'s `GH_HOST`.
    host: String,
    dir: tempfile::TempDir,
    gh: PathBuf,
}

impl GhWorld {
    async fn start() -> GhWorld {
        let gh = tools::gh();
        let pki = Pki::local();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let host = listener.local_addr().unwrap().to_string();
        let emu = start_behind(&format!("https://{host}")).await;
        let front = TlsFront::start_on(&pki, listener, emu.addr());
        let dir = tempfile::tempdir().unwrap();
        pki.write_ca(&dir.path().join("ca.pem"));
        for sub in ["config", "home"] {
            std::fs::create_dir(dir.path().join(sub)).unwrap();
        }
        let world = GhWorld {
            emu,
            _front: front,
            host,
            dir,
            gh,
        };
        world.clone_repository().await;
        world
    }

    fn ca(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    fn clone_dir(&self) -> PathBuf {
        self.dir.path().join("widgets")
    }

    /// `git clone` over the HTTPS front, on the PR's head branch; the
    /// remote keeps no token.
    async fn clone_repository(&self) {
        let url = format!(
            "https://x-access-token:{ALICE}@{}/acme/widgets.git",
            self.host
        );
        let clean = format!("https://{}/acme/widgets.git", self.host);
        let dest = self.clone_dir();
        let ca = self.ca();
        let home = self.dir.path().join("home");
        tokio::task::spawn_blocking(move || {
            let git = |args: &[&str], cwd: &Path| {
                let out = Command::new("git")
                    .args(args)
                    .current_dir(cwd)
                    .env("GIT_SSL_CAINFO", &ca)
                    .env("HOME", &home)
                    .env("GIT_CONFIG_NOSYSTEM", "1")
                    .env("NO_PROXY", "127.0.0.1,localhost")
                    .output()
                    .unwrap();
                assert!(
                    out.status.success(),
                    "git {args:?}: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
            };
            let parent = dest.parent().unwrap();
            git(
                &["clone", "--quiet", "-b", "feature/widgets", &url, "widgets"],
                parent,
            );
            git(&["remote", "set-url", "origin", &clean], &dest);
        })
        .await
        .unwrap();
    }

    /// `gh ARGS` in the clone, with a clean environment: the front as an
    /// Enterprise host, alice's token, the test CA, no prompts, colour or
    /// pager.
    async fn gh(&self, args: &[&str]) -> Output {
        let mut command = Command::new(&self.gh);
        command
            .args(args)
            .current_dir(self.clone_dir())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.dir.path().join("home"))
            .env("GH_CONFIG_DIR", self.dir.path().join("config"))
            .env("GH_HOST", &self.host)
            .env("GH_REPO", format!("{}/acme/widgets", self.host))
            .env("GH_ENTERPRISE_TOKEN", ALICE)
            .env("SSL_CERT_FILE", self.ca())
            .env("GIT_SSL_CAINFO", self.ca())
            .env("GH_PROMPT_DISABLED", "1")
            .env("GH_NO_UPDATE_NOTIFIER", "1")
            .env("NO_COLOR", "1")
            .env("GH_PAGER", "cat")
            .env("NO_PROXY", "127.0.0.1,localhost");
        if let Some(debug) = std::env::var_os("GH_DEBUG_TEST") {
            command.env("GH_DEBUG", debug);
        }
        tokio::task::spawn_blocking(move || command.output().unwrap())
            .await
            .unwrap()
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Asserts `gh` exited 0; its stdout.
fn ok(args: &[&str], out: &Output) -> String {
    assert!(
        out.status.success(),
        "gh {args:?} failed ({}):\n{}\n{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

impl GhWorld {
    /// `gh ARGS`, which must succeed; its stdout.
    async fn ok(&self, args: &[&str]) -> String {
        ok(args, &self.gh(args).await)
    }

    /// `gh ARGS` printing JSON, which must succeed; the JSON.
    async fn json(&self, args: &[&str]) -> Value {
        let out = self.ok(args).await;
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("gh {args:?}: not JSON ({e}): {out}"))
    }

    /// The emulator's pull request #1, as its state dump shows it.
    fn pr_state(&self) -> Value {
        self.emu.state_json()["pull_requests"][0].clone()
    }

    fn web(&self) -> String {
        format!("https://{}/acme/widgets", self.host)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gh_auth_status_logs_in_to_the_enterprise_host() {
    let w = GhWorld::start().await;
    let out = w.gh(&["auth", "status"]).await;
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "Logged in to {} as alice (GH_ENTERPRISE_TOKEN)",
            w.host
        )),
        "{stderr}"
    );
    assert!(!stderr.contains(ALICE), "the token is printed: {stderr}");
    // `gh` checks the token at the Enterprise root, `/api/v3/`.
    assert!(
        w.emu.request_count("GET /") >= 1,
        "{:?}",
        w.emu.request_counts()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gh_pr_view_prints_the_pull_request() {
    let w = GhWorld::start().await;
    let out = w.ok(&["pr", "view", "1"]).await;
    for line in [
        "title:\tAdd widgets\n",
        "state:\tOPEN\n",
        "author:\talice\n",
        "labels:\tenhancement\n",
        "reviewers:\tbob (Commented), review-bot (Commented)\n",
        "number:\t1\n",
        "additions:\t2\n",
        "deletions:\t1\n",
    ] {
        assert!(out.contains(line), "no {line:?} in:\n{out}");
    }
    assert!(
        out.contains(&format!("url:\t{}/pull/1\n", w.web())),
        "{out}"
    );
}

/// The fields `gh pr view --json` accepts, as it lists them.
async fn json_fields(w: &GhWorld) -> Vec<String> {
    let out = w.gh(&["pr", "view", "--json"]).await;
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.starts_with("Specify one or more comma-separated fields for `--json`:"),
        "{stderr}"
    );
    stderr
        .lines()
        .skip(1)
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gh_pr_view_json_answers_every_field_gh_offers() {
    let w = GhWorld::start().await;
    let fields = json_fields(&w).await;
    assert_eq!(fields.len(), 41, "gh 2.23 offers 41 fields: {fields:?}");
    let all = fields.join(",");
    let pr = w.json(&["pr", "view", "1", "--json", &all]).await;
    let keys: Vec<String> = pr.as_object().unwrap().keys().cloned().collect();
    let mut wanted = fields.clone();
    wanted.sort();
    assert_eq!(keys, wanted, "{pr}");

    let state = w.pr_state();
    let head = w.emu.head_sha(1).unwrap();
    let expect = |key: &str, value: Value| assert_eq!(pr[key], value, "{key} in {pr}");
    expect("number", 1.into());
    expect("title", "Add widgets".into());
    expect("state", "OPEN".into());
    expect("body", "".into());
    expect("url", format!("{}/pull/1", w.web()).into());
    expect("id", state["id"].clone());
    expect("baseRefName", "main".into());
    expect("headRefName", "feature/widgets".into());
    expect("headRefOid", head.clone().into());
    expect("isDraft", false.into());
    expect("closed", false.into());
    expect("closedAt", Value::Null);
    expect("mergedAt", Value::Null);
    expect("mergedBy", Value::Null);
    expect("mergeCommit", Value::Null);
    expect("potentialMergeCommit", Value::Null);
    expect("milestone", Value::Null);
    expect("isCrossRepository", false.into());
    expect("maintainerCanModify", false.into());
    expect("mergeable", "UNKNOWN".into());
    // `tests` (required) passed, `lint` failed.
    expect("mergeStateStatus", "UNSTABLE".into());
    expect("reviewDecision", "".into());
    expect("createdAt", state["created_at"].clone());
    expect("updatedAt", state["updated_at"].clone());
    // The diff: `line 5` added to src/lib.rs, README.md's line changed.
    expect("additions", 2.into());
    expect("deletions", 1.into());
    expect("changedFiles", 2.into());
    assert_eq!(names(&pr["files"], "/path"), ["README.md", "src/lib.rs"]);
    assert_eq!(pr["files"][1]["additions"], 1, "{pr}");
    assert_eq!(pr["author"]["login"], "alice", "{pr}");
    assert_eq!(pr["headRepository"]["name"], "widgets", "{pr}");
    assert_eq!(pr["headRepositoryOwner"]["login"], "acme", "{pr}");
    assert_eq!(names(&pr["labels"], "/name"), ["enhancement"]);
    assert_eq!(
        names(&pr["comments"], "/body"),
        ["top-level 0", "top-level 1", "top-level 2"]
    );
    assert_eq!(pr["comments"][0]["author"]["login"], "bob", "{pr}");
    assert_eq!(pr["comments"][0]["authorAssociation"], "COLLABORATOR");
    // Every thread comment came with its own COMMENTED review.
    assert_eq!(pr["reviews"].as_array().unwrap().len(), 10, "{pr}");
    assert_eq!(pr["reviews"][0]["commit"]["oid"], head.as_str(), "{pr}");
    assert_eq!(
        names(&pr["latestReviews"], "/author/login"),
        ["bob", "review-bot"]
    );
    let commits = pr["commits"].as_array().unwrap();
    assert_eq!(commits.len(), 1, "{pr}");
    assert_eq!(commits[0]["oid"], head.as_str());
    assert_eq!(commits[0]["messageHeadline"], "Add widgets");
    assert_eq!(commits[0]["authors"][0]["name"], "alice");
    let mut checks: Vec<(String, String)> = pr["statusCheckRollup"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let name = c["name"].as_str().unwrap().to_owned();
            (name, c["conclusion"].as_str().unwrap().to_owned())
        })
        .collect();
    checks.sort();
    assert_eq!(
        checks,
        [
            ("lint".to_owned(), "FAILURE".to_owned()),
            ("tests".to_owned(), "SUCCESS".to_owned())
        ]
    );
    // What the emulator has none of: empty, as GitHub answers then.
    for key in [
        "assignees",
        "projectCards",
        "reactionGroups",
        "reviewRequests",
    ] {
        assert_eq!(pr[key], Value::Array(Vec::new()), "{key} in {pr}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gh_pr_list_and_status_find_the_pull_request() {
    let w = GhWorld::start().await;
    let list = w.ok(&["pr", "list"]).await;
    assert_eq!(
        list,
        "1\tAdd widgets\tfeature/widgets\tOPEN\t2024-01-01 02:00:00 +0000 UTC\n"
    );
    let closed = w.ok(&["pr", "list", "--state", "closed"]).await;
    assert_eq!(closed, "", "no closed PR");

    // The clone is on the PR's head branch; alice authored it.
    let status = w.ok(&["pr", "status"]).await;
    let current = status
        .split("Current branch")
        .nth(1)
        .unwrap_or_else(|| panic!("{status}"));
    assert!(
        current.starts_with("\n  #1  Add widgets [feature/widgets]\n  × 1/2 checks failing\n"),
        "{status}"
    );
    let created = status
        .split("Created by you")
        .nth(1)
        .unwrap_or_else(|| panic!("{status}"));
    assert!(
        created.starts_with("\n  #1  Add widgets [feature/widgets]\n"),
        "{status}"
    );
    assert!(
        status.contains("Requesting a code review from you\n  You have no pull requests to review"),
        "{status}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gh_pr_checks_and_run_list_show_the_ci() {
    let w = GhWorld::start().await;
    let args = ["pr", "checks", "1"];
    let out = w.gh(&args).await;
    let stdout = text(&out.stdout);
    // A failed check makes `gh pr checks` exit 1, as on GitHub.
    assert_eq!(
        out.status.code(),
        Some(1),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    let runs = w.emu.state_json()["ci"]["workflow_runs"].clone();
    let run = runs[0]["database_id"].as_u64().unwrap();
    let lines: Vec<Vec<&str>> = stdout.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert_eq!(lines[0][..2], ["lint", "fail"], "{stdout}");
    assert_eq!(lines[1][..2], ["tests", "pass"], "{stdout}");
    for line in &lines {
        assert!(
            line[3].starts_with(&format!("{}/actions/runs/{run}/job/", w.web())),
            "{stdout}"
        );
    }

    let list = w.ok(&["run", "list"]).await;
    let fields: Vec<&str> = list.trim_end().split('\t').collect();
    assert_eq!(
        fields[..7],
        [
            "completed",
            "failure",
            "CI",
            "CI",
            "feature/widgets",
            "pull_request",
            &run.to_string()
        ],
        "{list}"
    );
    assert_eq!(list.lines().count(), 1, "{list}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gh_pr_diff_prints_the_diff() {
    let w = GhWorld::start().await;
    let diff = w.ok(&["pr", "diff", "1"]).await;
    assert!(
        diff.starts_with("diff --git a/README.md b/README.md\n"),
        "{diff}"
    );
    assert!(diff.contains("-# widgets\n+# widgets, more\n"), "{diff}");
    assert!(
        diff.contains("diff --git a/src/lib.rs b/src/lib.rs\n"),
        "{diff}"
    );
    assert!(diff.contains(" line 4\n+line 5\n line 6\n"), "{diff}");
    assert!(
        !diff.trim_start().starts_with('{'),
        "JSON, not the diff: {diff}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gh_pr_comment_review_and_edit_write_to_the_emulator() {
    let w = GhWorld::start().await;
    let out = w.ok(&["pr", "comment", "1", "--body", "from gh"]).await;
    let comment = w.pr_state()["issue_comments"]
        .as_array()
        .unwrap()
        .last()
        .cloned()
        .unwrap();
    assert_eq!(comment["body"], "from gh");
    assert_eq!(comment["author"], "alice");
    let id = comment["database_id"].as_u64().unwrap();
    assert_eq!(out, format!("{}/pull/1#issuecomment-{id}\n", w.web()));
    // And REST sees it.
    let rest = w
        .json(&["api", &format!("repos/acme/widgets/issues/comments/{id}")])
        .await;
    assert_eq!(rest["body"], "from gh", "{rest}");
    assert_eq!(rest["user"]["login"], "alice", "{rest}");

    w.ok(&["pr", "review", "1", "--comment", "-b", "gh review"])
        .await;
    let review = w.pr_state()["reviews"]
        .as_array()
        .unwrap()
        .last()
        .cloned()
        .unwrap();
    assert_eq!(review["body"], "gh review", "{review}");
    assert_eq!(review["author"], "alice", "{review}");
    assert_eq!(review["state"], "commented", "{review}");

    let out = w.ok(&["pr", "edit", "1", "--title", "Renamed by gh"]).await;
    assert_eq!(out, format!("{}/pull/1\n", w.web()));
    assert_eq!(w.pr_state()["title"], "Renamed by gh");
    let view = w
        .json(&["pr", "view", "1", "--json", "title,comments"])
        .await;
    assert_eq!(view["title"], "Renamed by gh");
    assert_eq!(view["comments"][3]["body"], "from gh", "{view}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gh_repo_view_and_api_paginate() {
    let w = GhWorld::start().await;
    let repo = format!("{}/acme/widgets", w.host);
    let view = w
        .json(&["repo", "view", &repo, "--json", "name,defaultBranchRef"])
        .await;
    assert_eq!(
        view,
        serde_json::json!({ "name": "widgets", "defaultBranchRef": { "name": "main" } })
    );

    // Ten review comments, three a page: four pages through `Link`.
    w.emu.reset_request_counts();
    let out = w
        .ok(&[
            "api",
            "--paginate",
            "repos/acme/widgets/pulls/1/comments?per_page=3",
        ])
        .await;
    let pages: Vec<Value> = serde_json::Deserializer::from_str(&out)
        .into_iter::<Value>()
        .map(Result::unwrap)
        .collect();
    assert_eq!(pages.len(), 4, "{out}");
    let bodies: Vec<String> = pages.iter().flat_map(|page| names(page, "/body")).collect();
    let expected: Vec<String> = (0..5)
        .flat_map(|t| (0..2).map(move |c| format!("thread {t} comment {c}")))
        .collect();
    assert_eq!(bodies, expected);
    assert_eq!(
        w.emu
            .request_count("GET /repos/{owner}/{repo}/pulls/{number}/comments"),
        4
    );
    // The links `gh` followed are the front's, not the emulator's address.
    assert!(
        pages[0][0]["url"]
            .as_str()
            .unwrap()
            .starts_with(&format!("https://{}/api/v3/", w.host)),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gh_pr_view_of_a_missing_pull_request_fails_with_githubs_message() {
    let w = GhWorld::start().await;
    let out = w.gh(&["pr", "view", "999"]).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr,
        "GraphQL: Could not resolve to a PullRequest with the number of 999. (repository.pullRequest)\n"
    );
    let out = w.gh(&["api", "repos/acme/widgets/pulls/999"]).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("gh: Not Found (HTTP 404)"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gh_api_sets_labels_requests_a_review_reads_a_job_log_and_gets_githubs_node_error() {
    let w = GhWorld::start().await;
    // `PUT …/issues/1/labels`: the labels become the ones given.
    let labels = w
        .json(&[
            "api",
            "-X",
            "PUT",
            "repos/acme/widgets/issues/1/labels",
            "-f",
            "labels[]=triaged",
            "-f",
            "labels[]=enhancement",
        ])
        .await;
    assert_eq!(names(&labels, "/name"), ["enhancement", "triaged"]);
    assert_eq!(
        w.pr_state()["labels"],
        serde_json::json!(["enhancement", "triaged"])
    );

    // A review request (REST), then seen by `gh pr view --json`'s
    // `reviewRequests` (GraphQL).
    w.ok(&[
        "api",
        "-X",
        "POST",
        "repos/acme/widgets/pulls/1/requested_reviewers",
        "-f",
        "reviewers[]=bob",
    ])
    .await;
    let pr = w
        .json(&["pr", "view", "1", "--json", "reviewRequests"])
        .await;
    assert_eq!(names(&pr["reviewRequests"], "/login"), ["bob"], "{pr}");

    // A job's log: `gh api` follows GitHub's redirect to the download URL.
    let lint = w.emu.state_json()["ci"]["check_runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "lint")
        .map(|r| r["database_id"].as_u64().unwrap())
        .unwrap();
    let log = w
        .ok(&[
            "api",
            &format!("repos/acme/widgets/actions/jobs/{lint}/logs"),
        ])
        .await;
    assert!(
        log.ends_with(" ##[error]Process completed with exit code 1.\n"),
        "{log}"
    );

    // A node id of nothing: GitHub's message, which `gh` prints as it is.
    let out = w
        .gh(&[
            "api",
            "graphql",
            "-f",
            r#"query={ node(id: "bogus") { id } }"#,
        ])
        .await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("Could not resolve to a node with the global id of 'bogus'."),
        "{stderr}"
    );
}
