//! A `shepherd run` killed at a public step, then `shepherd resume`: no
//! duplicate reply, no thread lost, no unauthorized resolve. The emulator
//! holds the step's request (a delay fault) while the process is killed.
//! Also: a second run while the first holds the lock is refused.

use std::time::{Duration, Instant};

use shepherd_emulator::{FaultSpec, RunningEmulator};

use crate::common::{assert_honest_end_state, shepherd_replies, Demo};

const REPLY: &str = "POST /repos/{owner}/{repo}/pulls/{number}/comments/{comment_id}/replies";
const RESOLVE: &str = "graphql:ResolveReviewThread";

async fn wait_for(emu: &RunningEmulator, key: &str, count: u64) {
    let start = Instant::now();
    while emu.request_count(key) < count {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{key} never reached {count}: {:?}",
            emu.request_counts()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// What else the killed process left behind.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Leftover {
    /// Nothing but its interrupted run.
    Nothing,
    /// The run worktree's administrative entry in the cache clone with an
    /// empty `commondir`, as a kill inside `git worktree add` leaves it:
    /// every git command in the clone fails until it is repaired.
    HalfWrittenWorktreeEntry,
}

/// Start a run, wait until it is held at the `nth` call of `key`, kill it,
/// clear the fault, resume, and check the end state.
async fn kill_and_resume(key: &str, nth: u64, also_refuse_a_second_run: bool) {
    kill_and_resume_with(key, nth, also_refuse_a_second_run, Leftover::Nothing).await;
}

async fn kill_and_resume_with(
    key: &str,
    nth: u64,
    also_refuse_a_second_run: bool,
    leftover: Leftover,
) {
    let Demo { emu, api, sh } = Demo::start().await;
    let fault = emu
        .set_fault(FaultSpec::nth(key, nth).with_delay(120_000))
        .unwrap();
    let mut child = sh
        .run_pr_cmd(&api, "auto", &[])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_for(&emu, key, nth).await;

    if also_refuse_a_second_run {
        let (code, out, err) = tokio::task::block_in_place(|| {
            sh.run_at(&api, &["run", "42", "--repo", "demo/authkit"])
        });
        assert_eq!(code, 1, "{out}\n{err}");
        assert!(
            err.contains("holds this pull request") && err.contains(&child.id().to_string()),
            "{err}"
        );
    }

    child.kill().unwrap();
    child.wait().unwrap();
    emu.clear_fault(fault);
    // Let the bot react to the push (and CI finish) before resuming, so the
    // end state does not depend on timing.
    emu.wait_idle(Duration::from_secs(30)).await;
    let run = sh.latest_run(&api);
    let (_, out, _) = sh.run_at(&api, &["status", &run, "--json"]);
    let status: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(status["run"]["status"], "interrupted", "{status}");
    let wrecked = if leftover == Leftover::HalfWrittenWorktreeEntry {
        let entries = worktree_entries(&sh.state_dir().join("cache"));
        assert_eq!(entries.len(), 1, "one run worktree: {entries:?}");
        std::fs::write(entries[0].join("commondir"), "").unwrap();
        let fetch = std::process::Command::new("git")
            .args(["fetch", "-q", "origin"])
            .current_dir(entries[0].parent().unwrap().parent().unwrap())
            .output()
            .unwrap();
        assert!(!fetch.status.success(), "the clone is wedged: {fetch:?}");
        Some(entries[0].clone())
    } else {
        None
    };

    let out = tokio::task::block_in_place(|| sh.run_cmd(&api, &["resume", &run]).output().unwrap());
    let (stdout, stderr) = crate::common::exited(&out, crate::common::HANDED_OFF);
    assert!(stderr.contains("took over the stale lock"), "{stderr}");
    if let Some(entry) = wrecked {
        assert!(
            stderr.contains(
                "removed 1 half-written git worktree entry(ies) left by a process that is gone"
            ) && stderr.contains(&entry.display().to_string()),
            "{stderr}"
        );
    }
    if std::env::var_os("SHOW").is_some() {
        eprintln!("{stderr}\n{stdout}");
    }
    assert_honest_end_state(&emu, 42, 6);
    // Fixes are pushed once: 2 commits in round 1 (the src/auth cluster and
    // the naming fix), 1 in round 2.
    let commits = emu.state_json()["pull_requests"][0]["commits"]
        .as_array()
        .map(Vec::len)
        .unwrap();
    assert_eq!(commits, 1 + 3, "the PR's commit plus Shepherd's three");
    assert!(shepherd_replies(&emu, 42).len() == 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_during_a_reply_then_resumed() {
    kill_and_resume(REPLY, 3, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_during_a_resolve_then_resumed() {
    kill_and_resume(RESOLVE, 2, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_right_after_the_push_then_resumed() {
    // The first reply follows the push: holding it stops the run with the
    // fixes on the forge and nothing replied.
    kill_and_resume(REPLY, 1, false).await;
}

/// Issue 26.5: a kill inside `git worktree add` leaves a half-written
/// administrative entry; `resume` removes it, says so, and converges
/// (before, every resume and new run failed at `git fetch`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_leaving_a_half_written_worktree_entry_then_resumed() {
    kill_and_resume_with(REPLY, 1, false, Leftover::HalfWrittenWorktreeEntry).await;
}

/// Every linked worktree's administrative entry (`…/worktrees/<name>`)
/// under `dir` (the state directory's cache clones).
fn worktree_entries(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if !path.is_dir() {
            continue;
        }
        if path.file_name().is_some_and(|n| n == "worktrees") {
            out.extend(
                std::fs::read_dir(&path)
                    .unwrap()
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| p.is_dir()),
            );
        } else {
            out.extend(worktree_entries(&path));
        }
    }
    out
}

/// Every `index.lock` under `dir` (the state directory's cache clones).
fn index_locks(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(index_locks(&path));
        } else if path.file_name().is_some_and(|n| n == "index.lock") {
            out.push(path);
        }
    }
    out
}

/// Issue 11.4: the whole process group of a run (Shepherd, git, git's
/// filter) is SIGKILLed while git holds the run worktree's `index.lock`.
/// The lock stays behind; `resume` sees its owner is gone, removes it, says
/// so, and converges.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_while_git_holds_the_index_lock_then_resumed() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;

    let Demo { emu, api, sh } = Demo::start().await;
    let home = sh.home.path().to_path_buf();
    // A clean filter that, while `slow` exists, stops git (index lock held)
    // when it hashes the fixed `src/auth/login.sh` in the run's worktree.
    let slow = home.join("slow");
    let sleeping = home.join("sleeping");
    let filter = home.join("slow-filter.sh");
    std::fs::write(
        &filter,
        format!(
            "#!/bin/sh\ntmp=$(mktemp)\ncat > \"$tmp\"\n\
             case \"$PWD\" in */runs/*/worktree)\n\
               if [ -e '{slow}' ] && [ \"$1\" = src/auth/login.sh ] && grep -q 'return 1' \"$tmp\"; then\n\
                 touch '{sleeping}'; sleep 120\n\
               fi;;\nesac\ncat \"$tmp\"\nrm -f \"$tmp\"\n",
            slow = slow.display(),
            sleeping = sleeping.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&filter, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(
        home.join(".gitconfig"),
        format!(
            "[filter \"slow\"]\n\tclean = {} %f\n\tsmudge = cat\n",
            filter.display()
        ),
    )
    .unwrap();
    std::fs::create_dir_all(home.join(".config/git")).unwrap();
    std::fs::write(home.join(".config/git/attributes"), "*.sh filter=slow\n").unwrap();
    std::fs::write(&slow, "").unwrap();

    let mut child = sh
        .run_pr_cmd(&api, "auto", &[])
        .process_group(0)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !sleeping.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(90),
            "git never reached the fixed file"
        );
        assert!(child.try_wait().unwrap().is_none(), "the run ended first");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let locks = index_locks(&sh.state_dir().join("cache"));
    assert_eq!(locks.len(), 1, "git holds the run worktree's index lock");
    // SIGKILL to the whole group, as a cancelled CI job or the OOM killer.
    let killed = std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", child.id())])
        .status()
        .unwrap();
    assert!(killed.success());
    child.wait().unwrap();
    std::fs::remove_file(&slow).unwrap();
    // Wait for the group to be gone (the sleeping filter included).
    let start = Instant::now();
    while std::process::Command::new("kill")
        .args(["-0", "--", &format!("-{}", child.id())])
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap()
        .success()
    {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the group lives on"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(locks[0].exists(), "the killed git left its lock behind");

    let run = sh.latest_run(&api);
    let out = tokio::task::block_in_place(|| sh.run_cmd(&api, &["resume", &run]).output().unwrap());
    let (_, stderr) = crate::common::exited(&out, crate::common::HANDED_OFF);
    assert!(stderr.contains("took over the stale lock"), "{stderr}");
    assert!(
        stderr.contains("removed 1 stale git lock(s) left by a process that is gone")
            && stderr.contains("index.lock"),
        "{stderr}"
    );
    assert!(!locks[0].exists());
    emu.wait_idle(Duration::from_secs(30)).await;
    assert_honest_end_state(&emu, 42, 6);
    assert_eq!(shepherd_replies(&emu, 42).len(), 6);
}
