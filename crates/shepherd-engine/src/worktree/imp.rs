//! A run's isolated worktree.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::WorktreeError;
use super::git::{http_origin, Git};
use super::protected::ProtectedPaths;

type Result<T, E = WorktreeError> = std::result::Result<T, E>;

/// A full commit id, as git prints it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct CommitSha(pub String);

impl CommitSha {
    /// The hex id.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for CommitSha {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// What [`Worktree::sync_to_remote_head`] did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncOutcome {
    /// HEAD before the sync.
    pub old_sha: CommitSha,
    /// HEAD after: the live remote head.
    pub new_sha: CommitSha,
    /// Whether HEAD changed.
    pub moved: bool,
    /// Local commits the remote head does not contain, newest first. The sync
    /// leaves them behind (they stay in the object store, reachable through
    /// the worktree's HEAD reflog); the caller reports them.
    pub abandoned: Vec<CommitSha>,
    /// Uncommitted paths (modified or untracked, not ignored) the sync threw away.
    pub discarded: Vec<String>,
}

/// What [`Worktree::push`] did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum PushOutcome {
    /// The remote branch now points at `sha` (or already did).
    Pushed {
        /// The pushed commit.
        sha: CommitSha,
    },
    /// The remote refused a non-fast-forward update: someone pushed meanwhile.
    /// Nothing was overwritten; re-sync and re-run the round.
    Rejected {
        /// Git's report, redacted.
        stderr: String,
    },
}

/// An isolated git worktree of one run, detached at the PR head.
///
/// It is a linked worktree of `repo_dir` (the user's checkout or a cache
/// clone): it shares that repository's objects and refs, but has its own
/// HEAD, index and files, so the user's HEAD, index and working files are
/// never touched. The PR head is fetched into a private ref
/// `refs/shepherd/worktrees/<hash of the worktree path>` of `repo_dir`
/// (deleted by [`Worktree::remove`]); the user's `FETCH_HEAD` and branches are
/// not written. Dropping a `Worktree` leaves it on disk: call
/// [`remove`](Worktree::remove) or [`keep`](Worktree::keep).
pub struct Worktree {
    git: Git,
    repo_dir: PathBuf,
    dir: PathBuf,
    remote: String,
    /// The remote's URL when it is HTTP(S): what credentials are scoped to.
    auth_url: Option<String>,
    tracking_ref: String,
}

impl std::fmt::Debug for Worktree {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worktree")
            .field("dir", &self.dir)
            .field("repo_dir", &self.repo_dir)
            .field("remote", &self.git.redact(&self.remote))
            .field("tracking_ref", &self.tracking_ref)
            .field("git", &self.git)
            .finish_non_exhaustive()
    }
}

impl Worktree {
    /// Fetch `head_ref` (a branch name) from `remote` (a remote name of
    /// `repo_dir`, a URL or a path) and add a worktree at `worktree_dir`,
    /// detached at the fetched commit.
    pub fn create(
        git: &Git,
        repo_dir: &Path,
        worktree_dir: &Path,
        remote: &str,
        head_ref: &str,
    ) -> Result<Worktree> {
        let repo_dir = absolute(repo_dir)?;
        let dir = absolute(worktree_dir)?;
        if remote.is_empty() || remote.starts_with('-') {
            return Err(WorktreeError::InvalidRemote {
                remote: git.redact(remote),
            });
        }
        check_branch(git, &repo_dir, head_ref)?;
        let url = resolve_remote_url(git, &repo_dir, remote);
        let auth_url = http_origin(&url).map(|_| url);
        let tracking_ref = format!(
            "refs/shepherd/worktrees/{:016x}",
            fnv1a(dir.to_string_lossy().as_bytes())
        );
        let wt = Worktree {
            git: git.clone(),
            repo_dir,
            dir,
            remote: remote.to_string(),
            auth_url,
            tracking_ref,
        };
        let sha = wt.fetch(&wt.repo_dir, head_ref)?;
        let dir_arg = wt.dir.as_os_str().to_os_string();
        let added = wt.git.run(
            &wt.repo_dir,
            &[
                "worktree".into(),
                "add".into(),
                "--quiet".into(),
                "--detach".into(),
                dir_arg,
                sha.0.clone().into(),
            ] as &[std::ffi::OsString],
            None,
        );
        if let Err(err) = added {
            // Best effort: do not leave the private ref behind.
            let _ = wt
                .git
                .output(&wt.repo_dir, &["update-ref", "-d", &wt.tracking_ref], None);
            return Err(err.into());
        }
        tracing::debug!(dir = %wt.dir.display(), sha = %sha, "created worktree");
        Ok(wt)
    }

    /// The worktree's directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// The repository the worktree belongs to.
    pub fn repo_dir(&self) -> &Path {
        &self.repo_dir
    }

    /// The remote, as given to [`Worktree::create`].
    pub fn remote(&self) -> &str {
        &self.remote
    }

    /// The commit HEAD is at.
    pub fn head_sha(&self) -> Result<CommitSha> {
        self.rev_parse("HEAD")
    }

    /// Fetch `head_ref` and detach HEAD at the live remote head, discarding
    /// uncommitted changes.
    ///
    /// Local commits the remote head does not contain (a rejected push, a
    /// round that never pushed) are not merged or rebased: HEAD moves to the
    /// remote head, and they are listed in [`SyncOutcome::abandoned`] (and
    /// logged) so the caller can report them. Likewise discarded uncommitted
    /// paths are listed in [`SyncOutcome::discarded`].
    pub fn sync_to_remote_head(&self, head_ref: &str) -> Result<SyncOutcome> {
        check_branch(&self.git, &self.dir, head_ref)?;
        let old_sha = self.head_sha()?;
        let new_sha = self.fetch(&self.dir, head_ref)?;
        let abandoned: Vec<CommitSha> = self
            .git
            .stdout(&self.dir, &["rev-list", &format!("{new_sha}..{old_sha}")])?
            .lines()
            .map(|l| CommitSha(l.to_string()))
            .collect();
        let discarded = self.dirty_paths()?;
        self.git.run(
            &self.dir,
            &[
                "checkout",
                "--quiet",
                "--force",
                "--detach",
                new_sha.as_str(),
            ],
            None,
        )?;
        self.git
            .run(&self.dir, &["clean", "--quiet", "--force", "-d"], None)?;
        if !abandoned.is_empty() || !discarded.is_empty() {
            tracing::warn!(
                dir = %self.dir.display(),
                abandoned = ?abandoned,
                discarded = ?discarded,
                "sync to the remote head left local work behind"
            );
        }
        Ok(SyncOutcome {
            moved: old_sha != new_sha,
            old_sha,
            new_sha,
            abandoned,
            discarded,
        })
    }

    /// The paths that differ between commits `from` and `to` (renames show as
    /// both paths).
    pub fn changed_files(&self, from: &str, to: &str) -> Result<Vec<String>> {
        check_rev(from)?;
        check_rev(to)?;
        let out = self.git.run(
            &self.dir,
            &["diff", "--name-only", "-z", "--no-renames", from, to, "--"],
            None,
        )?;
        Ok(split_nul(&out.stdout))
    }

    /// Commit exactly `files` (repository-relative, `/`-separated; additions,
    /// modifications and deletions) with `message`, and nothing else: other
    /// changes stay uncommitted. A path matching a `protected` glob is
    /// refused, naming the path, and nothing is committed; so is a commit
    /// that would change nothing.
    pub fn commit_files<S: AsRef<str>>(
        &self,
        message: &str,
        files: &[S],
        protected: &ProtectedPaths,
    ) -> Result<CommitSha> {
        if message.trim().is_empty() {
            return Err(WorktreeError::EmptyMessage);
        }
        let mut paths = Vec::with_capacity(files.len());
        for file in files {
            let path = normalize_path(file.as_ref())?;
            if let Some(pattern) = protected.matching(&path) {
                return Err(WorktreeError::ProtectedPath {
                    path,
                    pattern: pattern.to_string(),
                });
            }
            paths.push(path);
        }
        if paths.is_empty() {
            return Err(WorktreeError::NothingToCommit);
        }
        // Start from an index equal to HEAD: whatever an agent staged is not ours to commit.
        self.git.run(&self.dir, &["reset", "--quiet"], None)?;
        let mut add: Vec<&str> = vec!["--literal-pathspecs", "add", "--all", "--"];
        add.extend(paths.iter().map(String::as_str));
        self.git.run(&self.dir, &add, None)?;
        let staged = split_nul(
            &self
                .git
                .run(
                    &self.dir,
                    &["diff", "--cached", "--name-only", "-z", "--no-renames"],
                    None,
                )?
                .stdout,
        );
        // A directory pathspec may have staged protected files inside it.
        let violation = staged.iter().find_map(|p| {
            protected
                .matching(p)
                .map(|pat| (p.clone(), pat.to_string()))
        });
        if violation.is_some() || staged.is_empty() {
            self.git.run(&self.dir, &["reset", "--quiet"], None)?;
        }
        if let Some((path, pattern)) = violation {
            return Err(WorktreeError::ProtectedPath { path, pattern });
        }
        if staged.is_empty() {
            return Err(WorktreeError::NothingToCommit);
        }
        self.git.run(
            &self.dir,
            &["commit", "--quiet", "--no-verify", "-m", message],
            None,
        )?;
        let sha = self.head_sha()?;
        tracing::debug!(sha = %sha, files = ?staged, "committed");
        Ok(sha)
    }

    /// Push HEAD to branch `head_ref` of the remote, as a fast-forward only:
    /// never `--force`, never a `+` refspec. A non-fast-forward rejection,
    /// or a push that lost the ref update to a concurrent one
    /// (`lost_ref_update_race`), is [`PushOutcome::Rejected`]; any other
    /// failure (a hook or a protected
    /// branch declining it, no access) is an error.
    pub fn push(&self, head_ref: &str) -> Result<PushOutcome> {
        check_branch(&self.git, &self.dir, head_ref)?;
        let sha = self.head_sha()?;
        let refspec = format!("HEAD:refs/heads/{head_ref}");
        let args = [
            "push",
            "--porcelain",
            "--no-verify",
            self.remote.as_str(),
            refspec.as_str(),
        ];
        // git does not report the HTTP status or `Retry-After` of a failed
        // push; its curl trace (headers only, credentials redacted by git)
        // does. The file lives in the worktree's private git directory and
        // is removed right after.
        let trace = self.push_trace_path()?;
        let _ = std::fs::remove_file(&trace);
        let out = self.git.output_with_env(
            &self.dir,
            &args,
            self.auth_url.as_deref(),
            &[
                ("GIT_TRACE_CURL", trace.as_os_str()),
                ("GIT_TRACE_CURL_NO_DATA", std::ffi::OsStr::new("1")),
                ("GIT_TRACE_REDACT", std::ffi::OsStr::new("1")),
            ],
        );
        let traced = std::fs::read_to_string(&trace).unwrap_or_default();
        let _ = std::fs::remove_file(&trace);
        let out = out?;
        if out.status.success() {
            tracing::debug!(sha = %sha, head_ref, "pushed");
            return Ok(PushOutcome::Pushed { sha });
        }
        let stdout = String::from_utf8_lossy(&out.stdout);
        // Porcelain status line: "!\t<src>:<dst>\t[rejected] (fetch first)".
        // "[remote rejected]" (hooks, protection) is not a race: an error.
        let stderr_text = String::from_utf8_lossy(&out.stderr);
        let raced = lost_ref_update_race(&stdout, &stderr_text);
        let rejected: Vec<&str> = stdout
            .lines()
            .filter(|l| {
                l.starts_with('!')
                    && (l.contains("\t[rejected]") || (raced && l.contains("\t[remote rejected]")))
            })
            .collect();
        if rejected.is_empty() {
            let source = self.git.failed(&args, &out);
            let stderr = String::from_utf8_lossy(&out.stderr);
            return Err(match transient_push_failure(&traced, &stderr) {
                Some(retry_after) => WorktreeError::PushInterrupted {
                    source,
                    retry_after,
                },
                None => source.into(),
            });
        }
        let report = format!(
            "{}\n{}",
            rejected.join("\n"),
            String::from_utf8_lossy(&out.stderr).trim()
        );
        Ok(PushOutcome::Rejected {
            stderr: self.git.redact(report.trim()),
        })
    }

    /// Where a push's curl trace goes: the worktree's own git directory.
    fn push_trace_path(&self) -> Result<PathBuf> {
        let git_dir = self
            .git
            .stdout(&self.dir, &["rev-parse", "--absolute-git-dir"])?;
        Ok(PathBuf::from(git_dir).join("shepherd-push.trace"))
    }

    /// Delete the worktree (even with changes in it), prune git's record of
    /// it, and delete its private ref.
    pub fn remove(self) -> Result<()> {
        let dir_arg = self.dir.as_os_str().to_os_string();
        let out = self.git.output(
            &self.repo_dir,
            &[
                "worktree".into(),
                "remove".into(),
                "--force".into(),
                dir_arg.clone(),
            ] as &[std::ffi::OsString],
            None,
        )?;
        if !out.status.success() && self.dir.exists() {
            return Err(self
                .git
                .failed(
                    &[
                        "worktree".into(),
                        "remove".into(),
                        "--force".into(),
                        dir_arg,
                    ],
                    &out,
                )
                .into());
        }
        self.git.run(&self.repo_dir, &["worktree", "prune"], None)?;
        let has_ref = self
            .git
            .output(
                &self.repo_dir,
                &["show-ref", "--verify", "--quiet", &self.tracking_ref],
                None,
            )?
            .status
            .success();
        if has_ref {
            self.git.run(
                &self.repo_dir,
                &["update-ref", "-d", &self.tracking_ref],
                None,
            )?;
        }
        tracing::debug!(dir = %self.dir.display(), "removed worktree");
        Ok(())
    }

    /// Reopen the worktree a previous process created at `worktree_dir` for
    /// `repo_dir` and `remote` (a resumed run). Refused when `worktree_dir` is
    /// not a git worktree of `repo_dir`.
    pub fn open(git: &Git, repo_dir: &Path, worktree_dir: &Path, remote: &str) -> Result<Worktree> {
        let repo_dir = absolute(repo_dir)?;
        let dir = absolute(worktree_dir)?;
        if remote.is_empty() || remote.starts_with('-') {
            return Err(WorktreeError::InvalidRemote {
                remote: git.redact(remote),
            });
        }
        let common = git.stdout(
            &dir,
            &["rev-parse", "--path-format=absolute", "--git-common-dir"],
        )?;
        let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        };
        if !same(Path::new(&common), &repo_dir) && !same(Path::new(&common), &repo_dir.join(".git"))
        {
            return Err(WorktreeError::NotAWorktree { path: dir });
        }
        let url = resolve_remote_url(git, &repo_dir, remote);
        let auth_url = http_origin(&url).map(|_| url);
        let tracking_ref = format!(
            "refs/shepherd/worktrees/{:016x}",
            fnv1a(dir.to_string_lossy().as_bytes())
        );
        Ok(Worktree {
            git: git.clone(),
            repo_dir,
            dir,
            remote: remote.to_string(),
            auth_url,
            tracking_ref,
        })
    }

    /// Create a bare repository at `dir` (a cache clone's object store) unless
    /// one is there already.
    pub fn init_bare(git: &Git, dir: &Path) -> Result<()> {
        if dir.join("HEAD").is_file() && dir.join("objects").is_dir() {
            return Ok(());
        }
        std::fs::create_dir_all(dir).map_err(|source| WorktreeError::Path {
            path: dir.to_path_buf(),
            source,
        })?;
        git.run(dir, &["init", "--quiet", "--bare"], None)?;
        Ok(())
    }

    /// The live head of `head_ref` on the remote (fetched into the private
    /// ref; HEAD and the files are left alone).
    pub fn remote_head(&self, head_ref: &str) -> Result<CommitSha> {
        check_branch(&self.git, &self.dir, head_ref)?;
        self.fetch(&self.dir, head_ref)
    }

    /// Whether commit `ancestor` is reachable from `descendant` (a commit is
    /// its own ancestor). An unknown commit is not an ancestor.
    pub fn is_ancestor(&self, ancestor: &str, descendant: &str) -> Result<bool> {
        check_rev(ancestor)?;
        check_rev(descendant)?;
        if !self.commit_exists(ancestor)? || !self.commit_exists(descendant)? {
            return Ok(false);
        }
        let out = self.git.output(
            &self.dir,
            &["merge-base", "--is-ancestor", ancestor, descendant],
            None,
        )?;
        match out.status.code() {
            Some(0) => Ok(true),
            Some(1) => Ok(false),
            _ => Err(self
                .git
                .failed(&["merge-base", "--is-ancestor", ancestor, descendant], &out)
                .into()),
        }
    }

    /// Whether `sha` names a commit of the local repository.
    pub fn commit_exists(&self, sha: &str) -> Result<bool> {
        check_rev(sha)?;
        let out = self.git.output(
            &self.dir,
            &["cat-file", "-e", &format!("{sha}^{{commit}}")],
            None,
        )?;
        Ok(out.status.success())
    }

    /// The files commit `sha` changes against its first parent (every file
    /// for a root commit).
    pub fn files_of_commit(&self, sha: &str) -> Result<Vec<String>> {
        check_rev(sha)?;
        let out = self.git.run(
            &self.dir,
            &[
                "diff-tree",
                "--root",
                "--no-commit-id",
                "--name-only",
                "-r",
                "-z",
                "--no-renames",
                sha,
            ],
            None,
        )?;
        Ok(split_nul(&out.stdout))
    }

    /// When commit `sha` was committed (its committer date, RFC 3339 in
    /// UTC as `git log --date=iso-strict-local` with `TZ=UTC` writes it).
    pub fn commit_time(&self, sha: &str) -> Result<String> {
        check_rev(sha)?;
        let out = self
            .git
            .run(&self.dir, &["show", "-s", "--format=%cI", sha], None)?;
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }

    /// Modified, deleted and untracked (not ignored) paths of the worktree.
    pub fn changed_paths(&self) -> Result<Vec<String>> {
        self.dirty_paths()
    }

    /// Throw away every uncommitted change: tracked files back to HEAD,
    /// untracked (not ignored) files deleted.
    pub fn discard_changes(&self) -> Result<()> {
        self.git
            .run(&self.dir, &["reset", "--quiet", "--hard", "HEAD"], None)?;
        self.git
            .run(&self.dir, &["clean", "--quiet", "--force", "-d"], None)?;
        Ok(())
    }

    /// A configuration value as git sees it from the worktree (user and
    /// repository config), if set.
    pub fn config_value(&self, key: &str) -> Option<String> {
        self.git
            .stdout(&self.dir, &["config", "--get", key])
            .ok()
            .filter(|v| !v.is_empty())
    }

    /// Leave the worktree on disk (a failed run keeps it for inspection) and
    /// return its directory.
    pub fn keep(self) -> PathBuf {
        tracing::info!(dir = %self.dir.display(), "keeping worktree");
        self.dir
    }

    /// Fetch `head_ref` into the private ref, from `dir`; return the commit.
    fn fetch(&self, dir: &Path, head_ref: &str) -> Result<CommitSha> {
        let refspec = format!("+refs/heads/{head_ref}:{}", self.tracking_ref);
        self.git.run(
            dir,
            &[
                "fetch",
                "--quiet",
                "--no-tags",
                "--no-write-fetch-head",
                "--no-recurse-submodules",
                self.remote.as_str(),
                refspec.as_str(),
            ],
            self.auth_url.as_deref(),
        )?;
        rev_parse(&self.git, dir, &format!("{}^{{commit}}", self.tracking_ref))
    }

    fn rev_parse(&self, rev: &str) -> Result<CommitSha> {
        rev_parse(&self.git, &self.dir, rev)
    }

    /// Modified, deleted and untracked (not ignored) paths of the worktree.
    fn dirty_paths(&self) -> Result<Vec<String>> {
        Ok(self.git.changed_paths(&self.dir)?)
    }
}

/// Whether a push the remote refused lost a race for the branch: two
/// pushes from the same base both passed the fast-forward check, and the
/// remote moved the ref for the other first (`[remote rejected] (failed to
/// update ref)` with `cannot lock ref …: is at A but expected B`, or
/// GitHub's `incorrect old value provided`). That is the same as a
/// non-fast-forward rejection: nothing was overwritten, re-sync and re-run.
/// A hook or a protected branch declining the push is not a race.
pub(crate) fn lost_ref_update_race(stdout: &str, stderr: &str) -> bool {
    let remote_rejected = stdout
        .lines()
        .any(|l| l.starts_with('!') && l.contains("\t[remote rejected]"));
    let text = format!("{stdout}\n{stderr}");
    remote_rejected
        && ((text.contains("cannot lock ref") && text.contains("but expected"))
            || text.contains("incorrect old value provided"))
}

/// Whether a failed push is worth another try, from git's curl trace and
/// stderr: the remote answered 5xx or a rate limit (429, or a 403 with
/// `Retry-After`), or the network failed. `Some(wait)` when it is, with the
/// `Retry-After` the remote asked for, if any; `None` for anything else (no
/// access, a hook or protected branch declining it, a TLS failure).
pub(crate) fn transient_push_failure(
    trace: &str,
    stderr: &str,
) -> Option<Option<std::time::Duration>> {
    let mut status = None;
    let mut retry_after = None;
    for line in trace.lines() {
        let Some((_, header)) = line.split_once("<= Recv header:") else {
            continue;
        };
        let header = header.trim();
        if let Some(rest) = header.strip_prefix("HTTP/") {
            // A new response: its own status, its own headers.
            status = rest
                .split_whitespace()
                .nth(1)
                .and_then(|code| code.parse::<u16>().ok());
            retry_after = None;
        } else if let Some((name, value)) = header.split_once(':') {
            if name.trim().eq_ignore_ascii_case("retry-after") {
                retry_after = value
                    .trim()
                    .parse::<u64>()
                    .ok()
                    .map(std::time::Duration::from_secs);
            }
        }
    }
    // Without a trace, git's own words: `RPC failed; HTTP 502`,
    // `The requested URL returned error: 429`.
    let status = status.filter(|s| *s >= 400).or_else(|| {
        ["HTTP ", "returned error: "].iter().find_map(|prefix| {
            stderr.split(prefix).skip(1).find_map(|rest| {
                rest.get(..3)
                    .and_then(|code| code.parse::<u16>().ok())
                    .filter(|code| *code >= 400)
            })
        })
    });
    let http_transient = match status {
        Some(code) if (500..=599).contains(&code) || code == 429 => true,
        Some(403) => retry_after.is_some(),
        _ => false,
    };
    const NETWORK: &[&str] = &[
        "Could not resolve host",
        "Failed to connect",
        "Connection refused",
        "Connection reset",
        "Connection timed out",
        "Operation timed out",
        "Empty reply from server",
        "transfer closed with outstanding read data remaining",
    ];
    let network = NETWORK.iter().any(|needle| stderr.contains(needle));
    (http_transient || network).then_some(retry_after)
}

fn rev_parse(git: &Git, dir: &Path, rev: &str) -> Result<CommitSha> {
    check_rev(rev)?;
    Ok(CommitSha(git.stdout(dir, &["rev-parse", "--verify", rev])?))
}

/// The URL of `remote`: a configured remote's URL, else `remote` itself.
fn resolve_remote_url(git: &Git, repo_dir: &Path, remote: &str) -> String {
    if remote.contains("://")
        || remote.contains(':')
        || remote.starts_with('/')
        || remote.starts_with('.')
    {
        return remote.to_string();
    }
    match git.stdout(repo_dir, &["remote", "get-url", remote]) {
        Ok(url) if !url.is_empty() => url,
        _ => remote.to_string(),
    }
}

fn check_branch(git: &Git, dir: &Path, name: &str) -> Result<()> {
    let invalid = || WorktreeError::InvalidBranch {
        name: name.to_string(),
    };
    if name.is_empty() || name.starts_with('-') || name.starts_with('+') || name.contains(':') {
        return Err(invalid());
    }
    let ok = git
        .output(
            dir,
            &["check-ref-format", &format!("refs/heads/{name}")],
            None,
        )?
        .status
        .success();
    if ok {
        Ok(())
    } else {
        Err(invalid())
    }
}

fn check_rev(rev: &str) -> Result<()> {
    if rev.is_empty() || rev.starts_with('-') {
        return Err(WorktreeError::InvalidRevision {
            rev: rev.to_string(),
        });
    }
    Ok(())
}

/// A repository-relative path, `.` and empty components dropped; absolute
/// paths, `..` and `.git` are refused.
fn normalize_path(path: &str) -> Result<String> {
    let invalid = |reason| WorktreeError::InvalidPath {
        path: path.to_string(),
        reason,
    };
    if path.starts_with('/') || Path::new(path).is_absolute() {
        return Err(invalid("absolute path"));
    }
    let mut parts = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err(invalid("leaves the repository")),
            ".git" => return Err(invalid("inside .git")),
            p => parts.push(p),
        }
    }
    if parts.is_empty() {
        return Err(invalid("empty path"));
    }
    Ok(parts.join("/"))
}

fn split_nul(bytes: &[u8]) -> Vec<String> {
    bytes
        .split(|b| *b == 0)
        .filter(|s| !s.is_empty())
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect()
}

fn absolute(path: &Path) -> Result<PathBuf> {
    std::path::absolute(path).map_err(|source| WorktreeError::Path {
        path: path.to_path_buf(),
        source,
    })
}

/// FNV-1a, 64 bits: a stable name for a worktree's private ref (stable across
/// builds, unlike `DefaultHasher`).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod unit_tests {
    use super::*;

    #[test]
    fn paths_are_normalized_and_escapes_refused() {
        assert_eq!(normalize_path("./src//lib.rs").unwrap(), "src/lib.rs");
        for bad in ["/etc/passwd", "../x", "a/../../b", ".git/config", "", "./"] {
            assert!(
                matches!(normalize_path(bad), Err(WorktreeError::InvalidPath { .. })),
                "{bad:?} accepted"
            );
        }
    }

    #[test]
    fn a_lost_ref_update_race_is_told_from_a_declined_push() {
        let raced_out = "To http://h/r.git\n!\tHEAD:refs/heads/f\t[remote rejected] (failed to update ref)\nDone\n";
        let raced_err = "remote: error: cannot lock ref 'refs/heads/f': is at 4ea5 but expected 2af4\nerror: failed to push some refs to 'http://h/r.git'\n";
        assert!(lost_ref_update_race(raced_out, raced_err));
        let github = "!\tHEAD:refs/heads/f\t[remote rejected] (incorrect old value provided)\n";
        assert!(lost_ref_update_race(github, ""));
        let hook = "!\tHEAD:refs/heads/f\t[remote rejected] (pre-receive hook declined)\n";
        assert!(!lost_ref_update_race(hook, "remote: protected branch\n"));
        // Not refused at all: nothing to classify.
        assert!(!lost_ref_update_race("", raced_err));
    }

    #[test]
    fn transient_push_failures_are_told_from_final_ones() {
        use std::time::Duration;
        let trace = |status: &str, extra: &str| {
            format!(
                "12:00:00.000000 http.c:700 <= Recv header: HTTP/1.1 200 OK\n\
                 12:00:00.000000 http.c:700 <= Recv header: retry-after: 9\n\
                 12:00:00.000001 http.c:700 => Send header: Authorization: Basic <redacted>\n\
                 12:00:00.000002 http.c:700 <= Recv header: HTTP/1.1 {status}\n\
                 {extra}"
            )
        };
        let retry = "12:00:00.000003 http.c:700 <= Recv header: Retry-After: 1\n";
        assert_eq!(
            transient_push_failure(&trace("429 Too Many Requests", retry), ""),
            Some(Some(Duration::from_secs(1)))
        );
        assert_eq!(
            transient_push_failure(&trace("502 Bad Gateway", ""), ""),
            Some(None),
            "the Retry-After of an earlier answer does not count"
        );
        assert_eq!(
            transient_push_failure(&trace("403 Forbidden", retry), ""),
            Some(Some(Duration::from_secs(1))),
            "a 403 with Retry-After is a rate limit"
        );
        assert_eq!(
            transient_push_failure(&trace("403 Forbidden", ""), ""),
            None
        );
        assert_eq!(
            transient_push_failure(&trace("401 Unauthorized", ""), ""),
            None
        );
        assert_eq!(
            transient_push_failure(
                "",
                "error: RPC failed; HTTP 503 curl 22 The requested URL returned error: 503"
            ),
            Some(None)
        );
        assert_eq!(
            transient_push_failure(
                "",
                "fatal: unable to access 'http://h/r.git/': Failed to connect to h port 80"
            ),
            Some(None)
        );
        assert_eq!(
            transient_push_failure("", "remote: error: GH006: Protected branch update failed"),
            None
        );
        assert_eq!(
            transient_push_failure(
                "",
                "fatal: unable to access 'https://h/': SSL certificate problem"
            ),
            None
        );
    }

    #[test]
    fn fnv_is_stable() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
