//! What an agent may change in a worktree, checked rather than trusted
//! (SPEC section 7: read-only roles change nothing, whatever the provider's
//! CLI allows; Shepherd pushes only commits it made itself).
//!
//! [`GitState::capture`] records, before an agent call, everything git
//! would carry forward: HEAD (its commit, and the branch it names when it
//! is not detached), every ref (`git for-each-ref`: branches, tags, the
//! stash, per-worktree refs), the worktree's status (`git status
//! --porcelain=v2 -z --untracked-files=all --ignored=no`) and the content of
//! every path that status names (so that an edit of a file that was already
//! modified counts too). Shepherd's own fetch refs
//! (`refs/shepherd/worktrees/…`) are left out: every run of the repository
//! rewrites them, and each sync overwrites them anyway.
//!
//! After the call, [`GitState::changes`] lists what moved. For a read-only
//! role any change fails the call closed and [`restore`] puts the worktree
//! back (HEAD, files, refs). For a writing role in the run's worktree,
//! [`undo_agent_commits`] takes back commits and ref changes the agent made
//! and keeps its files, for Shepherd to stage and commit itself.

use std::collections::BTreeMap;
use std::path::Path;

use super::error::WorktreeError;
use super::git::Git;

type Result<T, E = WorktreeError> = std::result::Result<T, E>;

/// Refs every run's fetch rewrites: not the agent's doing.
const SHEPHERD_FETCH_REFS: &str = "refs/shepherd/worktrees/";

/// The state of a worktree that an agent must not change behind Shepherd's back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitState {
    /// The commit HEAD is at.
    pub head: String,
    /// The branch HEAD names, when it is not detached.
    pub head_branch: Option<String>,
    /// Every ref and the object it points at (Shepherd's fetch refs left out).
    pub refs: BTreeMap<String, String>,
    /// `git status --porcelain=v2 -z --untracked-files=all --ignored=no`.
    pub status: Vec<u8>,
    /// The blob id of each path the status names (`deleted` when gone).
    pub contents: BTreeMap<String, String>,
}

impl GitState {
    /// Record the state of the worktree at `dir`.
    pub fn capture(git: &Git, dir: &Path) -> Result<GitState> {
        let head = git.stdout(dir, &["rev-parse", "--verify", "HEAD"])?;
        let symbolic = git.output(dir, &["symbolic-ref", "--quiet", "HEAD"], None)?;
        let head_branch = symbolic
            .status
            .success()
            .then(|| String::from_utf8_lossy(&symbolic.stdout).trim().to_owned());
        let listed = git.stdout(dir, &["for-each-ref", "--format=%(objectname) %(refname)"])?;
        let refs = listed
            .lines()
            .filter_map(|line| line.split_once(' '))
            .filter(|(_, name)| !name.starts_with(SHEPHERD_FETCH_REFS))
            .map(|(sha, name)| (name.to_owned(), sha.to_owned()))
            .collect();
        let status = git
            .run(
                dir,
                &[
                    "status",
                    "--porcelain=v2",
                    "-z",
                    "--untracked-files=all",
                    "--ignored=no",
                ],
                None,
            )?
            .stdout;
        let mut contents = BTreeMap::new();
        for path in status_paths(&status) {
            let full = dir.join(&path);
            let id = if full.is_file() {
                let out = git.run(
                    dir,
                    &["hash-object", "--no-filters", "--", path.as_str()],
                    None,
                )?;
                String::from_utf8_lossy(&out.stdout).trim().to_owned()
            } else if full.exists() {
                "not a file".to_owned()
            } else {
                "deleted".to_owned()
            };
            contents.insert(path, id);
        }
        Ok(GitState {
            head,
            head_branch,
            refs,
            status,
            contents,
        })
    }

    /// What differs in `after`, one sentence each; empty when nothing does.
    pub fn changes(&self, after: &GitState) -> Vec<String> {
        let mut out = Vec::new();
        if self.head != after.head {
            out.push(format!(
                "HEAD moved from {} to {} (a commit or a checkout)",
                short(&self.head),
                short(&after.head)
            ));
        }
        if self.head_branch != after.head_branch {
            out.push(format!(
                "HEAD now names {} (was {})",
                after.head_branch.as_deref().unwrap_or("no branch"),
                self.head_branch.as_deref().unwrap_or("no branch")
            ));
        }
        for (name, sha) in &after.refs {
            match self.refs.get(name) {
                None => out.push(format!("ref {name} created at {}", short(sha))),
                Some(old) if old != sha => out.push(format!(
                    "ref {name} moved from {} to {}",
                    short(old),
                    short(sha)
                )),
                Some(_) => {}
            }
        }
        for name in self.refs.keys() {
            if !after.refs.contains_key(name) {
                out.push(format!("ref {name} deleted"));
            }
        }
        let mut paths: Vec<&String> = self.contents.keys().chain(after.contents.keys()).collect();
        paths.sort();
        paths.dedup();
        let changed: Vec<&str> = paths
            .into_iter()
            .filter(|p| self.contents.get(*p) != after.contents.get(*p))
            .map(String::as_str)
            .collect();
        if !changed.is_empty() {
            out.push(format!("files changed: {}", changed.join(", ")));
        } else if self.status != after.status {
            out.push("the index or the worktree's status changed".to_owned());
        }
        out
    }
}

/// What a read-only call changed, and whether the worktree is back as it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// What changed, one sentence each.
    pub changes: Vec<String>,
    /// `Ok` when the worktree was restored to its state before the call,
    /// else why not.
    pub restored: std::result::Result<(), String>,
}

impl Violation {
    /// The sentence a person reads: what the `role` agent changed, and what
    /// became of it.
    pub fn describe(&self, role: &str) -> String {
        format!(
            "the {role} agent changed the worktree, which a read-only role must not do ({}); \
             the call failed closed, {}, and nothing is pushed",
            self.changes.join("; "),
            match &self.restored {
                Ok(()) => "the worktree was restored".to_owned(),
                Err(why) => format!("the worktree could not be restored ({why})"),
            }
        )
    }
}

/// After a read-only call in the worktree at `dir`: `None` when nothing
/// changed since `before`; else restore it ([`restore`]), check again, and
/// say what happened.
pub fn check_read_only(git: &Git, dir: &Path, before: &GitState) -> Option<Violation> {
    let changes = match GitState::capture(git, dir) {
        Ok(after) => before.changes(&after),
        Err(err) => vec![format!("the worktree cannot be read after the call: {err}")],
    };
    if changes.is_empty() {
        return None;
    }
    let restored = restore(git, dir, before)
        .map_err(|e| e.to_string())
        .and_then(|()| {
            let now = GitState::capture(git, dir).map_err(|e| e.to_string())?;
            let left = before.changes(&now);
            if left.is_empty() {
                Ok(())
            } else {
                Err(format!("still: {}", left.join("; ")))
            }
        });
    tracing::error!(dir = %dir.display(), ?changes, ?restored, "a read-only agent changed the worktree");
    Some(Violation { changes, restored })
}

/// Put the worktree at `dir` back to `before` after a read-only call changed
/// it: refs as they were, HEAD detached at its commit (or on its branch),
/// tracked files as in that commit, untracked files the call added deleted.
/// Changes that were uncommitted before the call cannot come back (read-only
/// roles run on a clean worktree).
pub fn restore(git: &Git, dir: &Path, before: &GitState) -> Result<()> {
    restore_refs(git, dir, before)?;
    git.run(
        dir,
        &[
            "checkout",
            "--quiet",
            "--force",
            "--detach",
            before.head.as_str(),
        ],
        None,
    )?;
    git.run(
        dir,
        &["reset", "--quiet", "--hard", before.head.as_str()],
        None,
    )?;
    git.run(dir, &["clean", "--quiet", "--force", "-d"], None)?;
    if let Some(branch) = &before.head_branch {
        git.run(dir, &["symbolic-ref", "HEAD", branch.as_str()], None)?;
    }
    Ok(())
}

/// After a writing call in the run's worktree: take back the commits and ref
/// changes the agent made, keeping its files as they are (HEAD goes back to
/// its commit without touching the files or the index), so that Shepherd
/// stages and commits them itself. Returns what was taken back.
pub fn undo_agent_commits(git: &Git, dir: &Path, before: &GitState) -> Result<Vec<String>> {
    let after = GitState::capture(git, dir)?;
    let undone: Vec<String> = before
        .changes(&after)
        .into_iter()
        .filter(|c| !c.starts_with("files changed") && !c.starts_with("the index"))
        .collect();
    if undone.is_empty() {
        return Ok(undone);
    }
    restore_refs(git, dir, before)?;
    match &before.head_branch {
        None => git.run(
            dir,
            &["update-ref", "--no-deref", "HEAD", before.head.as_str()],
            None,
        )?,
        Some(branch) => {
            git.run(dir, &["symbolic-ref", "HEAD", branch.as_str()], None)?;
            git.run(
                dir,
                &["update-ref", branch.as_str(), before.head.as_str()],
                None,
            )?
        }
    };
    tracing::warn!(dir = %dir.display(), ?undone, "took back an agent's commits and ref changes");
    Ok(undone)
}

/// Every ref back to where `before` had it: moved ones reset, created ones
/// deleted, deleted ones re-created.
fn restore_refs(git: &Git, dir: &Path, before: &GitState) -> Result<()> {
    let now = GitState::capture_refs(git, dir)?;
    for (name, sha) in &now {
        match before.refs.get(name) {
            Some(old) if old == sha => {}
            Some(old) => {
                git.run(
                    dir,
                    &["update-ref", "--no-deref", name.as_str(), old.as_str()],
                    None,
                )?;
            }
            None => {
                git.run(
                    dir,
                    &["update-ref", "--no-deref", "-d", name.as_str()],
                    None,
                )?;
            }
        }
    }
    for (name, old) in &before.refs {
        if !now.contains_key(name) {
            git.run(
                dir,
                &["update-ref", "--no-deref", name.as_str(), old.as_str()],
                None,
            )?;
        }
    }
    Ok(())
}

impl GitState {
    fn capture_refs(git: &Git, dir: &Path) -> Result<BTreeMap<String, String>> {
        let listed = git.stdout(dir, &["for-each-ref", "--format=%(objectname) %(refname)"])?;
        Ok(listed
            .lines()
            .filter_map(|line| line.split_once(' '))
            .filter(|(_, name)| !name.starts_with(SHEPHERD_FETCH_REFS))
            .map(|(sha, name)| (name.to_owned(), sha.to_owned()))
            .collect())
    }
}

/// The paths of a `--porcelain=v2 -z` status: ordinary (`1`), renamed or
/// copied (`2`, then its source path as the next entry), unmerged (`u`) and
/// untracked (`?`) entries.
fn status_paths(status: &[u8]) -> Vec<String> {
    let entries: Vec<String> = status
        .split(|b| *b == 0)
        .filter(|e| !e.is_empty())
        .map(|e| String::from_utf8_lossy(e).into_owned())
        .collect();
    let mut paths = Vec::new();
    let mut iter = entries.into_iter();
    while let Some(entry) = iter.next() {
        let fields = match entry.chars().next() {
            Some('1') => 8,
            Some('2') => 9,
            Some('u') => 10,
            Some('?' | '!') => 1,
            _ => continue,
        };
        if let Some(path) = entry.splitn(fields + 1, ' ').nth(fields) {
            paths.push(path.to_owned());
        }
        if entry.starts_with('2') {
            if let Some(source) = iter.next() {
                paths.push(source);
            }
        }
    }
    paths
}

fn short(sha: &str) -> &str {
    sha.get(..10).unwrap_or(sha)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)] // a panic is how a test fails
mod tests {
    use super::*;

    fn repo() -> (tempfile::TempDir, Git) {
        let tmp = tempfile::tempdir().unwrap();
        let git = Git::new()
            .with_env("HOME", tmp.path())
            .with_identity("t", "t@e");
        let dir = tmp.path();
        git.run(dir, &["init", "-q"], None).unwrap();
        std::fs::write(dir.join("a.txt"), "a\n").unwrap();
        std::fs::write(dir.join(".gitignore"), "target/\n").unwrap();
        git.run(dir, &["add", "-A"], None).unwrap();
        git.run(dir, &["commit", "-qm", "a"], None).unwrap();
        git.run(dir, &["checkout", "-q", "--detach"], None).unwrap();
        (tmp, git)
    }

    #[test]
    fn status_paths_of_every_kind() {
        let status = b"1 .M N... 100644 100644 100644 abc abc a.txt\0\
2 R. N... 100644 100644 100644 abc abc R100 new name.txt\0old.txt\0\
? untracked dir/f.txt\0";
        assert_eq!(
            status_paths(status),
            ["a.txt", "new name.txt", "old.txt", "untracked dir/f.txt"]
        );
    }

    #[test]
    fn nothing_done_is_no_change_and_ignored_files_do_not_count() {
        let (tmp, git) = repo();
        let before = GitState::capture(&git, tmp.path()).unwrap();
        std::fs::create_dir_all(tmp.path().join("target")).unwrap();
        std::fs::write(tmp.path().join("target/out"), "x").unwrap();
        let after = GitState::capture(&git, tmp.path()).unwrap();
        assert!(
            before.changes(&after).is_empty(),
            "{:?}",
            before.changes(&after)
        );
    }

    #[test]
    fn a_commit_an_edit_a_branch_and_a_stash_are_all_seen_and_restored() {
        let (tmp, git) = repo();
        let dir = tmp.path();
        let before = GitState::capture(&git, dir).unwrap();
        // What a prompt-injected agent might do.
        std::fs::write(dir.join("a.txt"), "evil\n").unwrap();
        git.run(dir, &["commit", "-qam", "evil"], None).unwrap();
        git.run(dir, &["branch", "evil"], None).unwrap();
        std::fs::write(dir.join("a.txt"), "stashed\n").unwrap();
        git.run(dir, &["stash", "-q"], None).unwrap();
        std::fs::write(dir.join("new.txt"), "new\n").unwrap();
        let after = GitState::capture(&git, dir).unwrap();
        let changes = before.changes(&after).join("\n");
        assert!(changes.contains("HEAD moved"), "{changes}");
        assert!(changes.contains("ref refs/heads/evil created"), "{changes}");
        assert!(changes.contains("ref refs/stash created"), "{changes}");
        assert!(changes.contains("files changed: new.txt"), "{changes}");

        restore(&git, dir, &before).unwrap();
        let restored = GitState::capture(&git, dir).unwrap();
        assert_eq!(before.changes(&restored), Vec::<String>::new());
        assert_eq!(std::fs::read_to_string(dir.join("a.txt")).unwrap(), "a\n");
        assert!(!dir.join("new.txt").exists());
    }

    #[test]
    fn an_edit_of_an_already_modified_file_is_seen() {
        let (tmp, git) = repo();
        let dir = tmp.path();
        std::fs::write(dir.join("a.txt"), "one\n").unwrap();
        let before = GitState::capture(&git, dir).unwrap();
        std::fs::write(dir.join("a.txt"), "two\n").unwrap();
        let after = GitState::capture(&git, dir).unwrap();
        assert_eq!(before.changes(&after), ["files changed: a.txt"]);
    }

    #[test]
    fn a_writer_s_commit_is_taken_back_and_its_files_kept() {
        let (tmp, git) = repo();
        let dir = tmp.path();
        let before = GitState::capture(&git, dir).unwrap();
        std::fs::write(dir.join("a.txt"), "fixed\n").unwrap();
        git.run(dir, &["commit", "-qam", "agent"], None).unwrap();
        git.run(dir, &["tag", "agent-tag"], None).unwrap();
        let undone = undo_agent_commits(&git, dir, &before).unwrap();
        assert!(
            undone.iter().any(|u| u.contains("HEAD moved")),
            "{undone:?}"
        );
        let after = GitState::capture(&git, dir).unwrap();
        assert_eq!(after.head, before.head);
        assert_eq!(after.refs, before.refs, "the tag is gone");
        assert_eq!(
            std::fs::read_to_string(dir.join("a.txt")).unwrap(),
            "fixed\n",
            "the agent's file is kept for Shepherd to commit"
        );
        // Nothing to take back the second time.
        assert!(undo_agent_commits(&git, dir, &before).unwrap().is_empty());
    }
}
