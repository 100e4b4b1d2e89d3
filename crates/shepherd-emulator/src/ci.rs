//! Running the scenario's checks: each job waits its delay, checks out the
//! commit into a temporary directory (git plumbing, no work tree of the
//! repository), runs `sh -c COMMAND` as its own process group with a
//! time-out, and reports a conclusion.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use crate::ci_state::{exit_summary, Conclusion, JobLaunch};
use crate::git;
use crate::shared::Shared;
use crate::state::WriteError;

/// How much output a check run keeps (the end of it).
const OUTPUT_LIMIT: usize = 64 * 1024;

/// Queues a workflow run of every check for `sha` and starts its jobs.
/// Returns the run's id, or `None` when the scenario has no checks.
pub(crate) fn start_run(
    shared: &Arc<Shared>,
    sha: &str,
    branch: &str,
    event: &str,
    actor: &str,
) -> Option<u64> {
    let (launches, epoch) = {
        let mut state = shared.write();
        let launches = state.ci_queue_run(
            sha,
            branch,
            event,
            actor,
            &shared.scenario.ci.workflow,
            &shared.scenario.checks,
        );
        (launches, state.epoch)
    };
    let run_id = launches.first().map(|l| l.run_id);
    for launch in launches {
        spawn_job(shared, epoch, launch);
    }
    run_id
}

/// Re-runs the failed jobs (`failed_only`) or every job of run `run_id`
/// (a new attempt).
pub(crate) fn rerun(
    shared: &Arc<Shared>,
    run_id: u64,
    failed_only: bool,
) -> Result<(), WriteError> {
    let (launches, epoch) = {
        let mut state = shared.write();
        let launches = state.ci_rerun(run_id, &shared.scenario.checks, failed_only)?;
        (launches, state.epoch)
    };
    for launch in launches {
        spawn_job(shared, epoch, launch);
    }
    Ok(())
}

/// Retries job `job_id` alone (GitLab); returns the new job's id.
pub(crate) fn retry_job(shared: &Arc<Shared>, job_id: u64) -> Result<u64, WriteError> {
    let (launch, epoch) = {
        let mut state = shared.write();
        let launch = state.ci_retry_job(job_id, &shared.scenario.checks)?;
        (launch, state.epoch)
    };
    let id = launch.job_id;
    spawn_job(shared, epoch, launch);
    Ok(id)
}

/// Retries every failed job of run `run_id` (the latest attempt of each
/// name), each as [`retry_job`] does: GitLab's pipeline retry. Returns the
/// new jobs' ids (none when nothing failed).
pub(crate) fn retry_failed_jobs(shared: &Arc<Shared>, run_id: u64) -> Result<Vec<u64>, WriteError> {
    let failed: Vec<u64> = {
        let state = shared.read();
        let run = state
            .ci
            .workflow_run(run_id)
            .ok_or_else(|| WriteError::NotFound("Not Found".into()))?;
        run.latest_jobs()
            .iter()
            .filter(|j| j.conclusion.is_some_and(Conclusion::failed))
            .map(|j| j.database_id)
            .collect()
    };
    failed.into_iter().map(|id| retry_job(shared, id)).collect()
}

fn spawn_job(shared: &Arc<Shared>, epoch: u64, launch: JobLaunch) {
    let task_shared = shared.clone();
    shared.tasks.spawn(async move {
        run_job(task_shared, epoch, launch).await;
    });
}

async fn run_job(shared: Arc<Shared>, epoch: u64, launch: JobLaunch) {
    if launch.spec.delay_ms > 0 {
        tokio::time::sleep(Duration::from_millis(launch.spec.delay_ms)).await;
    }
    let runs = {
        let mut state = shared.write();
        if state.epoch != epoch {
            return;
        }
        state.ci_job_started(launch.job_id)
    };
    let (conclusion, summary, text) = if runs <= launch.spec.flaky {
        (
            Conclusion::Failure,
            format!(
                "flaky check: run {runs} of the {} that fail",
                launch.spec.flaky
            ),
            String::new(),
        )
    } else {
        execute(&shared, &launch).await
    };
    tracing::info!(
        check = %launch.spec.name,
        sha = %launch.sha,
        conclusion = conclusion.as_str(),
        "check run completed"
    );
    let mut state = shared.write();
    if state.epoch != epoch {
        return;
    }
    state.ci_job_finished(
        launch.job_id,
        conclusion,
        summary,
        text,
        launch.spec.status_context,
    );
}

/// Kills a process group when dropped (time-out, abort, or normal end, to
/// reap leftovers a command started in the background).
struct GroupKill(Option<u32>);

impl Drop for GroupKill {
    fn drop(&mut self) {
        let Some(pgid) = self.0 else { return };
        // `kill` on a group is not in std; the shell's builtin does it.
        let _ = std::process::Command::new("sh")
            .args(["-c", "kill -KILL -- \"-$1\" 2>/dev/null", "sh"])
            .arg(pgid.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// Checks out the commit and runs the check's command.
async fn execute(shared: &Arc<Shared>, launch: &JobLaunch) -> (Conclusion, String, String) {
    let dir = shared.work_dir.join(format!("job-{}", launch.job_id));
    let result = execute_in(shared, launch, &dir).await;
    let cleanup = dir.clone();
    let _ = tokio::task::spawn_blocking(move || std::fs::remove_dir_all(cleanup)).await;
    match result {
        Ok(outcome) => outcome,
        Err(message) => {
            tracing::warn!(check = %launch.spec.name, %message, "check could not run");
            (Conclusion::Failure, message, String::new())
        }
    }
}

async fn execute_in(
    shared: &Arc<Shared>,
    launch: &JobLaunch,
    dir: &Path,
) -> Result<(Conclusion, String, String), String> {
    let tree = dir.join("tree");
    let home = dir.join("home");
    for d in [&tree, &home] {
        std::fs::create_dir_all(d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
    }
    {
        let (git_env, git_dir) = (shared.git.clone(), shared.read().repository.git_dir.clone());
        let (sha, tree, index) = (launch.sha.clone(), tree.clone(), dir.join("index"));
        tokio::task::spawn_blocking(move || git::checkout(&git_env, &git_dir, &sha, &tree, &index))
            .await
            .map_err(|e| format!("checkout task failed: {e}"))?
            .map_err(|e| format!("cannot check out {}: {e}", launch.sha))?;
    }

    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c")
        .arg(&launch.spec.command)
        .current_dir(&tree)
        .env_clear()
        .env("HOME", &home)
        .env("LC_ALL", "C")
        .env("CI", "true")
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_SHA", &launch.sha)
        .env("GITHUB_JOB", &launch.spec.name)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .process_group(0);
    if shared.scenario.forge == crate::scenario::EmulatedForge::GitLab {
        cmd.env("GITLAB_CI", "true")
            .env("CI_COMMIT_SHA", &launch.sha)
            .env("CI_JOB_NAME", &launch.spec.name)
            .env("CI_JOB_ID", launch.job_id.to_string());
    }
    if let Some(path) = std::env::var_os("PATH") {
        cmd.env("PATH", path);
    }
    tracing::debug!(cmd = ?cmd, "running check");
    let child = cmd
        .spawn()
        .map_err(|e| format!("cannot run sh -c {}: {e}", launch.spec.command))?;
    let _group = GroupKill(child.id());
    let timeout = Duration::from_secs(launch.spec.timeout_secs);
    match tokio::time::timeout(timeout, child.wait_with_output()).await {
        Err(_) => Ok((
            Conclusion::TimedOut,
            format!("timed out after {}s", launch.spec.timeout_secs),
            String::new(),
        )),
        Ok(Err(e)) => Err(format!("cannot wait for the check: {e}")),
        Ok(Ok(output)) => {
            let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
            text.push_str(&String::from_utf8_lossy(&output.stderr));
            if text.len() > OUTPUT_LIMIT {
                let mut cut = text.len() - OUTPUT_LIMIT;
                while !text.is_char_boundary(cut) {
                    cut += 1;
                }
                text = text[cut..].to_owned();
            }
            let conclusion = if output.status.success() {
                Conclusion::Success
            } else {
                Conclusion::Failure
            };
            let summary = match output.status.code() {
                Some(code) => exit_summary(code),
                None => "killed by a signal".to_owned(),
            };
            Ok((conclusion, summary, text))
        }
    }
}
