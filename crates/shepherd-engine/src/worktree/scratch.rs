//! Temporary worktrees (one per parallel fixer, one per reproduction run of
//! the pre-push review) and the git plumbing the fix and review stages need
//! on the run's worktree: applying a fixer's diff with a three-way merge,
//! listing the commits of a range, resetting after a refused fix.
//!
//! A [`ScratchWorktree`] is a linked worktree of the run's repository,
//! detached at a commit. A fixer edits files there; Shepherd takes the
//! result as a binary diff ([`ScratchWorktree::diff`]) and applies it to the
//! run's worktree ([`apply_patch`]) in a fixed order, then commits there.
//! Nothing is ever committed in a scratch worktree.

use std::path::{Path, PathBuf};

use super::error::WorktreeError;
use super::git::Git;
use super::imp::CommitSha;

type Result<T, E = WorktreeError> = std::result::Result<T, E>;

/// A temporary linked worktree, detached at one commit. Removed by
/// [`ScratchWorktree::remove`], or on drop (best effort).
pub struct ScratchWorktree {
    git: Git,
    repo_dir: PathBuf,
    dir: PathBuf,
    /// The commit it was added at: what the fixer's work is measured
    /// against, even if the fixer committed (an agent's commit is never
    /// taken as it is: its changes become Shepherd's own commit).
    base: String,
    removed: bool,
}

impl std::fmt::Debug for ScratchWorktree {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScratchWorktree")
            .field("dir", &self.dir)
            .field("repo_dir", &self.repo_dir)
            .finish_non_exhaustive()
    }
}

/// What [`apply_patch`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApplyOutcome {
    /// The diff applied (possibly through a three-way merge); the changes are
    /// in the worktree and its index, uncommitted.
    Applied,
    /// The diff conflicts with what the worktree holds now; the worktree was
    /// reset to its HEAD.
    Conflict {
        /// Git's report, trimmed.
        detail: String,
    },
}

impl ScratchWorktree {
    /// Add a worktree of `repo_dir` at `dir`, detached at `sha`. Whatever is
    /// at `dir` already (a crashed run's leftover) is removed first.
    pub fn add(git: &Git, repo_dir: &Path, dir: &Path, sha: &str) -> Result<ScratchWorktree> {
        check_rev(sha)?;
        if dir.exists() {
            remove_linked(git, repo_dir, dir)?;
        }
        if let Some(parent) = dir.parent() {
            std::fs::create_dir_all(parent).map_err(|source| WorktreeError::Scratch {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        git.run(
            repo_dir,
            &[
                "worktree".as_ref(),
                "add".as_ref(),
                "--quiet".as_ref(),
                "--detach".as_ref(),
                dir.as_os_str(),
                sha.as_ref(),
            ] as &[&std::ffi::OsStr],
            None,
        )?;
        tracing::debug!(dir = %dir.display(), sha, "added scratch worktree");
        Ok(ScratchWorktree {
            git: git.clone(),
            repo_dir: repo_dir.to_path_buf(),
            dir: dir.to_path_buf(),
            base: sha.to_owned(),
            removed: false,
        })
    }

    /// The worktree's directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Modified, deleted and untracked (not ignored) paths since the commit
    /// the worktree was added at (so also those of commits a fixer made).
    pub fn changed_paths(&self) -> Result<Vec<String>> {
        let mut paths = changed_paths(&self.git, &self.dir)?;
        let head = self
            .git
            .stdout(&self.dir, &["rev-parse", "--verify", "HEAD"])?;
        if head != self.base {
            tracing::warn!(
                dir = %self.dir.display(),
                base = %self.base,
                head = %head,
                "the fixer moved HEAD (a commit of its own): its changes are taken as files"
            );
            let out = self.git.run(
                &self.dir,
                &[
                    "diff",
                    "--name-only",
                    "-z",
                    "--no-renames",
                    self.base.as_str(),
                    "HEAD",
                    "--",
                ],
                None,
            )?;
            for path in out.stdout.split(|b| *b == 0).filter(|p| !p.is_empty()) {
                let path = String::from_utf8_lossy(path).into_owned();
                if !paths.contains(&path) {
                    paths.push(path);
                }
            }
        }
        Ok(paths)
    }

    /// Every change made in the worktree (untracked files included) as a
    /// binary diff against the commit it was added at (not its HEAD: a
    /// fixer's own commits are part of its change, never kept as commits),
    /// with full blob ids so that a three-way merge can use them. Stages
    /// everything in the scratch index (never committed).
    pub fn diff(&self) -> Result<Vec<u8>> {
        self.git.run(&self.dir, &["add", "--all"], None)?;
        let out = self.git.run(
            &self.dir,
            &[
                "diff",
                "--cached",
                "--binary",
                "--full-index",
                "--no-renames",
                "--no-color",
                "--no-ext-diff",
                self.base.as_str(),
            ],
            None,
        )?;
        Ok(out.stdout)
    }

    /// Delete the worktree and git's record of it.
    pub fn remove(mut self) -> Result<()> {
        self.removed = true;
        remove_linked(&self.git, &self.repo_dir, &self.dir)
    }
}

impl Drop for ScratchWorktree {
    fn drop(&mut self) {
        if !self.removed {
            if let Err(err) = remove_linked(&self.git, &self.repo_dir, &self.dir) {
                tracing::warn!(%err, dir = %self.dir.display(), "cannot remove a scratch worktree");
            }
        }
    }
}

/// Remove the worktree at `dir` (with its changes), or the directory alone
/// when git does not know it as one, and prune git's record of it.
fn remove_linked(git: &Git, repo_dir: &Path, dir: &Path) -> Result<()> {
    let out = git.output(
        repo_dir,
        &[
            "worktree".as_ref(),
            "remove".as_ref(),
            "--force".as_ref(),
            dir.as_os_str(),
        ] as &[&std::ffi::OsStr],
        None,
    )?;
    if !out.status.success() && dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|source| WorktreeError::Scratch {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    git.run(repo_dir, &["worktree", "prune"], None)?;
    Ok(())
}

/// Modified, deleted and untracked (not ignored) paths of the worktree at `dir`.
pub(crate) fn changed_paths(git: &Git, dir: &Path) -> Result<Vec<String>> {
    Ok(git.changed_paths(dir)?)
}

/// Apply `patch` (from [`ScratchWorktree::diff`]) to the clean worktree at
/// `dir`, falling back to a three-way merge. On a conflict the worktree is
/// reset to its HEAD and [`ApplyOutcome::Conflict`] returned. `scratch_file`
/// is where the patch is written for git to read.
pub fn apply_patch(
    git: &Git,
    dir: &Path,
    patch: &[u8],
    scratch_file: &Path,
) -> Result<ApplyOutcome> {
    if patch.is_empty() {
        return Ok(ApplyOutcome::Applied);
    }
    std::fs::write(scratch_file, patch).map_err(|source| WorktreeError::Scratch {
        path: scratch_file.to_path_buf(),
        source,
    })?;
    let out = git.output(
        dir,
        &[
            "apply".as_ref(),
            "--3way".as_ref(),
            "--whitespace=nowarn".as_ref(),
            scratch_file.as_os_str(),
        ] as &[&std::ffi::OsStr],
        None,
    );
    let _ = std::fs::remove_file(scratch_file);
    let out = out?;
    if out.status.success() {
        return Ok(ApplyOutcome::Applied);
    }
    let detail = git.redact(String::from_utf8_lossy(&out.stderr).trim());
    reset_hard(git, dir, "HEAD")?;
    Ok(ApplyOutcome::Conflict { detail })
}

/// `git reset --hard REV` and remove untracked files: the worktree at `dir`
/// becomes exactly commit `rev`.
pub fn reset_hard(git: &Git, dir: &Path, rev: &str) -> Result<()> {
    check_rev(rev)?;
    git.run(dir, &["reset", "--quiet", "--hard", rev], None)?;
    git.run(dir, &["clean", "--quiet", "--force", "-d"], None)?;
    Ok(())
}

/// The commits of `base..head` in the worktree at `dir`, oldest first, with
/// their subjects.
pub fn commits_between(
    git: &Git,
    dir: &Path,
    base: &str,
    head: &str,
) -> Result<Vec<(CommitSha, String)>> {
    check_rev(base)?;
    check_rev(head)?;
    let out = git.run(
        dir,
        &[
            "log",
            "--reverse",
            "--format=%H%x00%s",
            &format!("{base}..{head}"),
        ],
        None,
    )?;
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let (sha, subject) = l.split_once('\0')?;
            Some((CommitSha(sha.to_owned()), subject.to_owned()))
        })
        .collect())
}

/// One commit of HEAD's history that carries trailers of a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrailerCommit {
    /// The commit.
    pub sha: CommitSha,
    /// Its committer's email.
    pub committer_email: String,
    /// The values of the trailer (`Shepherd-Item: ID` gives `ID`).
    pub values: Vec<String>,
}

/// The commits among the last `limit` of HEAD in the worktree at `dir`
/// that carry a `key:` trailer, newest first.
pub fn trailer_commits(
    git: &Git,
    dir: &Path,
    key: &str,
    limit: usize,
) -> Result<Vec<TrailerCommit>> {
    let count = format!("-n{limit}");
    let format =
        format!("--format=%H%x00%ce%x00%(trailers:key={key},valueonly,separator=%x2C)%x1e");
    let out = git.run(dir, &["log", count.as_str(), format.as_str(), "HEAD"], None)?;
    Ok(String::from_utf8_lossy(&out.stdout)
        .split('\u{1e}')
        .filter_map(|record| {
            let mut fields = record.trim_start_matches('\n').splitn(3, '\0');
            let sha = fields.next()?.trim();
            let email = fields.next()?.trim();
            let values: Vec<String> = fields
                .next()?
                .split(',')
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_owned)
                .collect();
            (!sha.is_empty() && !values.is_empty()).then(|| TrailerCommit {
                sha: CommitSha(sha.to_owned()),
                committer_email: email.to_owned(),
                values,
            })
        })
        .collect())
}

/// The email git commits with in the worktree at `dir` (`git var
/// GIT_COMMITTER_IDENT`).
pub fn committer_email(git: &Git, dir: &Path) -> Result<String> {
    let out = git.run(dir, &["var", "GIT_COMMITTER_IDENT"], None)?;
    let ident = String::from_utf8_lossy(&out.stdout);
    Ok(ident
        .split_once('<')
        .and_then(|(_, rest)| rest.split_once('>'))
        .map(|(email, _)| email.trim().to_owned())
        .unwrap_or_default())
}

/// `git diff base..head` in the worktree at `dir`, and the paths it changes.
pub fn diff_between(
    git: &Git,
    dir: &Path,
    base: &str,
    head: &str,
) -> Result<(String, Vec<String>)> {
    check_rev(base)?;
    check_rev(head)?;
    let range = format!("{base}..{head}");
    let diff = git.run(
        dir,
        &[
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--no-renames",
            &range,
        ],
        None,
    )?;
    let names = git.run(
        dir,
        &["diff", "--name-only", "-z", "--no-renames", &range],
        None,
    )?;
    let files = names
        .stdout
        .split(|b| *b == 0)
        .filter(|s| !s.is_empty())
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect();
    Ok((String::from_utf8_lossy(&diff.stdout).into_owned(), files))
}

fn check_rev(rev: &str) -> Result<()> {
    if rev.is_empty() || rev.starts_with('-') {
        return Err(WorktreeError::InvalidRevision {
            rev: rev.to_string(),
        });
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;

    fn git(home: &Path) -> Git {
        Git::new()
            .with_env("HOME", home)
            .with_env("XDG_CONFIG_HOME", home.join(".config"))
            .with_identity("T", "t@example.invalid")
    }

    /// A repository with `a.txt` and `b.txt` committed; returns its HEAD.
    fn repo(git: &Git, dir: &Path) -> String {
        git.run(dir, &["init", "--quiet"], None).unwrap();
        std::fs::write(dir.join("a.txt"), "one\ntwo\nthree\n").unwrap();
        std::fs::write(dir.join("b.txt"), "b\n").unwrap();
        git.run(dir, &["add", "--all"], None).unwrap();
        git.run(dir, &["commit", "--quiet", "-m", "base"], None)
            .unwrap();
        git.stdout(dir, &["rev-parse", "HEAD"]).unwrap()
    }

    #[test]
    fn a_scratch_diff_applies_to_the_main_worktree_and_conflicts_are_reset() {
        let home = tempfile::tempdir().unwrap();
        let git = git(home.path());
        let main = tempfile::tempdir().unwrap();
        let base = repo(&git, main.path());
        let scratch_root = tempfile::tempdir().unwrap();

        let s1 = ScratchWorktree::add(&git, main.path(), &scratch_root.path().join("s1"), &base)
            .unwrap();
        std::fs::write(s1.path().join("a.txt"), "ONE\ntwo\nthree\n").unwrap();
        std::fs::write(s1.path().join("new.txt"), "new\n").unwrap();
        let mut changed = s1.changed_paths().unwrap();
        changed.sort();
        assert_eq!(changed, ["a.txt", "new.txt"]);
        let p1 = s1.diff().unwrap();
        s1.remove().unwrap();
        assert!(!scratch_root.path().join("s1").exists());

        let s2 = ScratchWorktree::add(&git, main.path(), &scratch_root.path().join("s2"), &base)
            .unwrap();
        std::fs::write(s2.path().join("a.txt"), "uno\ntwo\nthree\n").unwrap();
        let p2 = s2.diff().unwrap();
        drop(s2);
        assert!(!scratch_root.path().join("s2").exists(), "removed on drop");

        let patch_file = scratch_root.path().join("patch");
        assert_eq!(
            apply_patch(&git, main.path(), &p1, &patch_file).unwrap(),
            ApplyOutcome::Applied
        );
        assert_eq!(
            std::fs::read_to_string(main.path().join("a.txt")).unwrap(),
            "ONE\ntwo\nthree\n"
        );
        assert!(main.path().join("new.txt").is_file());
        git.run(main.path(), &["commit", "--quiet", "-am", "p1"], None)
            .unwrap();
        let head = git.stdout(main.path(), &["rev-parse", "HEAD"]).unwrap();

        // The same line changed differently: a conflict, and a clean worktree after.
        let outcome = apply_patch(&git, main.path(), &p2, &patch_file).unwrap();
        assert!(
            matches!(outcome, ApplyOutcome::Conflict { .. }),
            "{outcome:?}"
        );
        assert!(changed_paths(&git, main.path()).unwrap().is_empty());
        assert_eq!(
            git.stdout(main.path(), &["rev-parse", "HEAD"]).unwrap(),
            head
        );

        let commits = commits_between(&git, main.path(), &base, &head).unwrap();
        assert_eq!(commits.len(), 1);
        assert_eq!(commits[0].1, "p1");
        let (diff, files) = diff_between(&git, main.path(), &base, &head).unwrap();
        assert!(diff.contains("+ONE"), "{diff}");
        assert_eq!(files, ["a.txt", "new.txt"]);

        reset_hard(&git, main.path(), &base).unwrap();
        assert!(!main.path().join("new.txt").exists());
    }

    #[test]
    fn changes_to_nearby_lines_merge_three_way() {
        let home = tempfile::tempdir().unwrap();
        let git = git(home.path());
        let main = tempfile::tempdir().unwrap();
        let body: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        git.run(main.path(), &["init", "--quiet"], None).unwrap();
        std::fs::write(main.path().join("f.txt"), &body).unwrap();
        git.run(main.path(), &["add", "--all"], None).unwrap();
        git.run(main.path(), &["commit", "--quiet", "-m", "base"], None)
            .unwrap();
        let base = git.stdout(main.path(), &["rev-parse", "HEAD"]).unwrap();
        let root = tempfile::tempdir().unwrap();
        let mut patches = Vec::new();
        for (name, from, to) in [
            ("x", "line 2\n", "line two\n"),
            ("y", "line 19\n", "line nineteen\n"),
        ] {
            let s =
                ScratchWorktree::add(&git, main.path(), &root.path().join(name), &base).unwrap();
            std::fs::write(s.path().join("f.txt"), body.replace(from, to)).unwrap();
            patches.push(s.diff().unwrap());
        }
        for p in &patches {
            assert_eq!(
                apply_patch(&git, main.path(), p, &root.path().join("p")).unwrap(),
                ApplyOutcome::Applied
            );
            git.run(main.path(), &["commit", "--quiet", "-am", "p"], None)
                .unwrap();
        }
        let text = std::fs::read_to_string(main.path().join("f.txt")).unwrap();
        assert!(
            text.contains("line two\n") && text.contains("line nineteen\n"),
            "{text}"
        );
    }
}
