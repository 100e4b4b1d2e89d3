//! Git lock files left behind by a killed process.
//!
//! Git guards each file it rewrites with a `<file>.lock` it creates
//! exclusively and renames into place; a process killed in between (SIGKILL,
//! a power cut, a CI runner cancelled) leaves the lock, and every later git
//! command on that file fails ("Unable to create …/index.lock: File
//! exists"). [`clear_stale_git_locks`] removes the locks of a run's worktree
//! (its index, HEAD, per-worktree refs) and of the repository it belongs to
//! (HEAD, `packed-refs`, `shallow`, config, refs), but only when nothing can
//! still be holding them: no live process works in the repository, its
//! common directory or any of its worktrees. The caller calls it only when
//! no git command of its own is running (before the first git command of a
//! process that holds the run's PR lock).
//!
//! A killed `git worktree add` can also leave a half-written administrative
//! entry of a linked worktree (`<common>/worktrees/NAME` with an empty
//! `commondir`, or no `gitdir` or `HEAD`); from then on every git command in
//! the repository fails ("failed to read worktrees/NAME/commondir"), and
//! `git worktree prune` does not remove it (its `gitdir` still names a
//! worktree). The sweep removes such entries under the same condition as
//! the locks: every worktree of Shepherd's cache clone is Shepherd's own, so
//! an entry no live process can be writing was left by one that is gone.
//!
//! A live process is one whose current directory is inside one of those
//! directories (git changes into the worktree's top level, or into the
//! repository, before it takes a lock). Where that cannot be told (no
//! `/proc`), locks are never removed.

use std::path::{Path, PathBuf};

use super::error::WorktreeError;

type Result<T, E = WorktreeError> = std::result::Result<T, E>;

/// What [`clear_stale_git_locks`] found and did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockSweep {
    /// No lock file: nothing to do.
    Clean,
    /// The lock files and half-written worktree entries were stale and have
    /// been removed.
    Removed {
        /// The lock files removed.
        locks: Vec<PathBuf>,
        /// The half-written worktree entries removed (directories).
        entries: Vec<PathBuf>,
    },
    /// Lock files are there, but live processes work in the repository: they
    /// may hold them, so they were left alone.
    Busy {
        /// The lock files found.
        locks: Vec<PathBuf>,
        /// The half-written worktree entries found.
        entries: Vec<PathBuf>,
        /// The live processes working in the repository.
        pids: Vec<u32>,
    },
    /// Lock files are there, but whether a live process works in the
    /// repository cannot be told on this system: they were left alone.
    Unknown {
        /// The lock files found.
        locks: Vec<PathBuf>,
        /// The half-written worktree entries found.
        entries: Vec<PathBuf>,
    },
}

/// Remove the git locks of the worktree at `worktree_dir` (a linked worktree
/// of `repo_dir`, which may not exist yet) and of `repo_dir`, when no live
/// process other than this one works in the repository or any of its
/// worktrees. See the module documentation.
pub fn clear_stale_git_locks(repo_dir: &Path, worktree_dir: &Path) -> Result<LockSweep> {
    let common = common_dir(repo_dir);
    let private = private_git_dir(worktree_dir);
    let mut locks = Vec::new();
    top_level_locks(&common, &mut locks);
    nested_locks(&common.join("refs"), &mut locks);
    if let Some(private) = &private {
        top_level_locks(private, &mut locks);
        nested_locks(&private.join("refs"), &mut locks);
    }
    locks.sort();
    locks.dedup();
    let entries = half_written_worktree_entries(&common);
    if locks.is_empty() && entries.is_empty() {
        return Ok(LockSweep::Clean);
    }
    let mut dirs = vec![common.clone(), worktree_dir.to_path_buf()];
    dirs.extend(private);
    dirs.extend(linked_worktrees(&common));
    let Some(pids) = processes_working_in(&dirs) else {
        tracing::warn!(
            ?locks,
            "git locks found; cannot tell whether a process holds them"
        );
        return Ok(LockSweep::Unknown { locks, entries });
    };
    if !pids.is_empty() {
        tracing::warn!(
            ?locks,
            ?pids,
            "git locks found while processes work in the repository"
        );
        return Ok(LockSweep::Busy {
            locks,
            entries,
            pids,
        });
    }
    for lock in &locks {
        match std::fs::remove_file(lock) {
            Ok(()) => {}
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => {
                return Err(WorktreeError::Path {
                    path: lock.clone(),
                    source,
                })
            }
        }
    }
    for entry in &entries {
        match std::fs::remove_dir_all(entry) {
            Ok(()) => {}
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => {
                return Err(WorktreeError::Path {
                    path: entry.clone(),
                    source,
                })
            }
        }
    }
    tracing::info!(
        ?locks,
        ?entries,
        "removed stale git locks and worktree entries"
    );
    Ok(LockSweep::Removed { locks, entries })
}

/// The administrative entries of linked worktrees (`<common>/worktrees/*`)
/// that git cannot read: `gitdir`, `commondir` or `HEAD` missing or empty,
/// as a `git worktree add` killed while writing them leaves them (git
/// writes the entry file by file, each created before it is written).
fn half_written_worktree_entries(common: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(common.join("worktrees")) else {
        return Vec::new();
    };
    let mut broken: Vec<PathBuf> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|dir| dir.is_dir())
        .filter(|dir| {
            ["gitdir", "commondir", "HEAD"].iter().any(|file| {
                std::fs::read_to_string(dir.join(file)).map_or(true, |text| text.trim().is_empty())
            })
        })
        .collect();
    broken.sort();
    broken
}

/// The repository's common directory: `repo_dir` for a bare repository,
/// else its `.git`.
fn common_dir(repo_dir: &Path) -> PathBuf {
    let dot_git = repo_dir.join(".git");
    if dot_git.is_dir() {
        dot_git
    } else {
        repo_dir.to_path_buf()
    }
}

/// A linked worktree's private git directory, from its `.git` file
/// (`gitdir: /path/to/repo/worktrees/<name>`).
fn private_git_dir(worktree_dir: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(worktree_dir.join(".git")).ok()?;
    let dir = text.trim().strip_prefix("gitdir:")?.trim();
    let dir = Path::new(dir);
    Some(if dir.is_absolute() {
        dir.to_path_buf()
    } else {
        worktree_dir.join(dir)
    })
}

/// The directories of every worktree registered in `common`
/// (`worktrees/<name>/gitdir` names the worktree's `.git` file).
fn linked_worktrees(common: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(common.join("worktrees")) else {
        return Vec::new();
    };
    let mut dirs = Vec::new();
    for entry in entries.flatten() {
        dirs.push(entry.path());
        if let Ok(text) = std::fs::read_to_string(entry.path().join("gitdir")) {
            if let Some(parent) = Path::new(text.trim()).parent() {
                dirs.push(parent.to_path_buf());
            }
        }
    }
    dirs
}

/// The `*.lock` files directly in `dir`.
fn top_level_locks(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if is_lock(&path) && path.is_file() {
            out.push(path);
        }
    }
}

/// The `*.lock` files anywhere under `dir` (ref locks).
fn nested_locks(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            nested_locks(&path, out);
        } else if kind.is_file() && is_lock(&path) {
            out.push(path);
        }
    }
}

fn is_lock(path: &Path) -> bool {
    path.extension().is_some_and(|ext| ext == "lock")
}

/// The live processes (other than this one) whose current directory is
/// inside one of `dirs`; `None` when this system cannot tell (no `/proc`).
fn processes_working_in(dirs: &[PathBuf]) -> Option<Vec<u32>> {
    let proc_dir = Path::new("/proc");
    if !cfg!(target_os = "linux") || !proc_dir.join("self").exists() {
        return None;
    }
    let dirs: Vec<PathBuf> = dirs.iter().filter_map(|d| d.canonicalize().ok()).collect();
    let own = std::process::id();
    let entries = std::fs::read_dir(proc_dir).ok()?;
    let mut pids = Vec::new();
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|name| name.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == own {
            continue;
        }
        // A process that exited meanwhile, or one of another user (which
        // cannot write in this user's state directory), is not a holder.
        let Ok(cwd) = std::fs::read_link(entry.path().join("cwd")) else {
            continue;
        };
        if dirs.iter().any(|dir| cwd.starts_with(dir)) {
            pids.push(pid);
        }
    }
    pids.sort_unstable();
    Some(pids)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)] // a panic is how a test fails
mod tests {
    use super::*;

    /// A bare repository with a linked worktree, made by the real git.
    fn repo_with_worktree() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("src");
        let bare = tmp.path().join("cache.git");
        let wt = tmp.path().join("run").join("worktree");
        let git = |dir: &Path, args: &[&str]| {
            let out = std::process::Command::new("git")
                .current_dir(dir)
                .args(args)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("HOME", tmp.path())
                .env("GIT_AUTHOR_NAME", "t")
                .env("GIT_AUTHOR_EMAIL", "t@e")
                .env("GIT_COMMITTER_NAME", "t")
                .env("GIT_COMMITTER_EMAIL", "t@e")
                .output()
                .unwrap();
            assert!(out.status.success(), "{args:?}: {out:?}");
        };
        std::fs::create_dir_all(&src).unwrap();
        git(&src, &["init", "-q"]);
        std::fs::write(src.join("a.txt"), "a\n").unwrap();
        git(&src, &["add", "a.txt"]);
        git(&src, &["commit", "-qm", "a"]);
        git(tmp.path(), &["clone", "-q", "--bare", "src", "cache.git"]);
        std::fs::create_dir_all(wt.parent().unwrap()).unwrap();
        git(
            &bare,
            &[
                "worktree",
                "add",
                "-q",
                "--detach",
                wt.to_str().unwrap(),
                "HEAD",
            ],
        );
        (tmp, bare, wt)
    }

    fn plant_locks(bare: &Path, wt: &Path) -> Vec<PathBuf> {
        let private = private_git_dir(wt).unwrap();
        let locks = vec![
            private.join("index.lock"),
            private.join("HEAD.lock"),
            bare.join("packed-refs.lock"),
            bare.join("shallow.lock"),
            bare.join("refs/shepherd/worktrees/abc.lock"),
        ];
        for lock in &locks {
            std::fs::create_dir_all(lock.parent().unwrap()).unwrap();
            std::fs::write(lock, "").unwrap();
        }
        locks
    }

    #[test]
    fn nothing_to_do_without_locks() {
        let (_tmp, bare, wt) = repo_with_worktree();
        assert_eq!(clear_stale_git_locks(&bare, &wt).unwrap(), LockSweep::Clean);
    }

    #[test]
    fn stale_locks_are_removed_when_no_process_works_there() {
        let (_tmp, bare, wt) = repo_with_worktree();
        let mut planted = plant_locks(&bare, &wt);
        planted.sort();
        match clear_stale_git_locks(&bare, &wt).unwrap() {
            LockSweep::Removed { locks, entries } => {
                assert_eq!(locks, planted);
                assert!(entries.is_empty());
            }
            other => panic!("expected Removed, got {other:?}"),
        }
        assert!(planted.iter().all(|l| !l.exists()));
        // Objects and refs are untouched: git works in the worktree again.
        let out = std::process::Command::new("git")
            .current_dir(&wt)
            .args(["status", "--porcelain"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    }

    #[test]
    fn locks_are_left_alone_while_a_live_process_works_in_a_worktree() {
        let (_tmp, bare, wt) = repo_with_worktree();
        let planted = plant_locks(&bare, &wt);
        let mut holder = std::process::Command::new("sleep")
            .arg("30")
            .current_dir(&wt)
            .spawn()
            .unwrap();
        let sweep = clear_stale_git_locks(&bare, &wt);
        holder.kill().unwrap();
        holder.wait().unwrap();
        match sweep.unwrap() {
            LockSweep::Busy { locks, pids, .. } => {
                assert_eq!(locks.len(), planted.len());
                assert_eq!(pids, vec![holder.id()]);
            }
            LockSweep::Unknown { .. } if !cfg!(target_os = "linux") => {}
            other => panic!("expected Busy, got {other:?}"),
        }
        assert!(planted.iter().all(|l| l.exists()), "nothing removed");
        // Once the holder is gone, they are stale.
        assert!(matches!(
            clear_stale_git_locks(&bare, &wt).unwrap(),
            LockSweep::Removed { .. }
        ));
    }

    #[test]
    fn a_process_in_the_common_directory_also_blocks() {
        let (_tmp, bare, wt) = repo_with_worktree();
        plant_locks(&bare, &wt);
        let mut holder = std::process::Command::new("sleep")
            .arg("30")
            .current_dir(bare.join("refs"))
            .spawn()
            .unwrap();
        let sweep = clear_stale_git_locks(&bare, &wt).unwrap();
        holder.kill().unwrap();
        holder.wait().unwrap();
        assert!(
            matches!(sweep, LockSweep::Busy { .. } | LockSweep::Unknown { .. }),
            "{sweep:?}"
        );
    }

    /// Wait (at most 10 s) until no process works in `dir`: a git command
    /// that failed may leave a child behind for a moment.
    fn wait_until_no_process_works_in(dir: &Path) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while processes_working_in(&[dir.to_path_buf()]).is_some_and(|pids| !pids.is_empty()) {
            assert!(
                std::time::Instant::now() < deadline,
                "a process still works in {}",
                dir.display()
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// `git fetch` in the cache clone, as the worktree stage does first.
    fn fetch(bare: &Path) -> std::process::Output {
        std::process::Command::new("git")
            .current_dir(bare)
            .args(["fetch", "-q", "origin"])
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap()
    }

    /// A `git worktree add` killed while writing its entry: each of its
    /// files empty (as created, before written) or not yet there wedges
    /// the repository, and the sweep repairs it.
    #[test]
    fn a_half_written_worktree_entry_is_removed_and_git_works_again() {
        for (file, how) in [
            ("commondir", "empty"),
            ("gitdir", "empty"),
            ("HEAD", "missing"),
        ] {
            let (_tmp, bare, wt) = repo_with_worktree();
            let entry = bare.join("worktrees").join("worktree");
            assert!(entry.is_dir(), "git names the entry after the directory");
            if how == "empty" {
                std::fs::write(entry.join(file), "").unwrap();
            } else {
                std::fs::remove_file(entry.join(file)).unwrap();
            }
            if file == "commondir" {
                // What the user saw: every command in the clone fails.
                let out = fetch(&bare);
                assert!(!out.status.success(), "{file} {how}: git still works");
                assert!(
                    String::from_utf8_lossy(&out.stderr).contains("commondir"),
                    "{out:?}"
                );
                // git dies after it spawned `git-upload-pack` (cwd: the
                // clone) for the local remote; the orphan lingers a moment
                // and, while it does, the sweep rightly calls the clone busy.
                wait_until_no_process_works_in(&bare);
            }
            match clear_stale_git_locks(&bare, &wt).unwrap() {
                LockSweep::Removed { locks, entries } => {
                    assert!(locks.is_empty(), "{locks:?}");
                    assert_eq!(entries, vec![entry.clone()], "{file} {how}");
                }
                other => panic!("{file} {how}: expected Removed, got {other:?}"),
            }
            assert!(!entry.exists());
            let out = fetch(&bare);
            assert!(out.status.success(), "{file} {how}: {out:?}");
        }
    }

    #[test]
    fn a_whole_worktree_entry_is_left_alone() {
        let (_tmp, bare, wt) = repo_with_worktree();
        assert_eq!(clear_stale_git_locks(&bare, &wt).unwrap(), LockSweep::Clean);
        assert!(bare
            .join("worktrees")
            .join("worktree")
            .join("commondir")
            .exists());
    }

    #[test]
    fn a_half_written_entry_is_left_alone_while_a_process_works_in_the_clone() {
        let (_tmp, bare, wt) = repo_with_worktree();
        let entry = bare.join("worktrees").join("worktree");
        std::fs::write(entry.join("commondir"), "").unwrap();
        // A live `git worktree add` runs in the clone (its cwd).
        let mut writer = std::process::Command::new("sleep")
            .arg("30")
            .current_dir(&bare)
            .spawn()
            .unwrap();
        let sweep = clear_stale_git_locks(&bare, &wt).unwrap();
        writer.kill().unwrap();
        writer.wait().unwrap();
        match sweep {
            LockSweep::Busy { entries, .. } | LockSweep::Unknown { entries, .. } => {
                assert_eq!(entries, vec![entry.clone()]);
            }
            other => panic!("expected Busy, got {other:?}"),
        }
        assert!(entry.join("commondir").exists(), "nothing removed");
    }
}
