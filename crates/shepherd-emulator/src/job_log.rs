//! A job's log as each forge serves it, made from what the check's command
//! printed (its check run's output text: stdout, then stderr, the last
//! 64 KiB) and how it ended.
//!
//! - GitHub (`GET …/actions/jobs/{job_id}/logs`, then its download URL):
//!   plain text, each line stamped with a time in GitHub's form
//!   (`2024-01-01T02:03:00.0000000Z line`), and a failed job's last line
//!   the runner's `##[error]Process completed with exit code N.`, as in an
//!   Actions log.
//! - GitLab (`GET /projects/:id/jobs/:job_id/trace`): the raw trace, the
//!   output as printed, closed by the runner's `Job succeeded` or
//!   `ERROR: Job failed: exit code N`.

use crate::ci_state::{exit_code, CheckRunRecord, Conclusion, RunStatus};

/// GitHub's log of a completed job; `None` before it completes (GitHub
/// archives a job's log when it ends).
pub(crate) fn github_log(run: &CheckRunRecord) -> Option<String> {
    if run.status != RunStatus::Completed {
        return None;
    }
    let stamp = |at: Option<&str>| github_time(at.unwrap_or_default());
    let start = stamp(run.started_at.as_deref());
    let mut log = String::new();
    for line in output(run).lines() {
        log.push_str(&format!("{start} {line}\n"));
    }
    if run.conclusion.is_some_and(Conclusion::failed) {
        let why = match run.output_summary.as_deref().and_then(exit_code) {
            Some(code) => format!("Process completed with exit code {code}."),
            None => run.output_summary.clone().unwrap_or_default(),
        };
        let end = stamp(run.completed_at.as_deref());
        log.push_str(&format!("{end} ##[error]{why}\n"));
    }
    Some(log)
}

/// GitLab's trace: what the job printed so far (nothing until it ends
/// here) and, once it has, the runner's closing line.
pub(crate) fn gitlab_trace(run: &CheckRunRecord) -> String {
    let mut trace = output(run).to_owned();
    if run.status != RunStatus::Completed {
        return trace;
    }
    if !trace.is_empty() && !trace.ends_with('\n') {
        trace.push('\n');
    }
    if run.conclusion.is_some_and(Conclusion::failed) {
        let summary = run.output_summary.as_deref().unwrap_or_default();
        match exit_code(summary) {
            Some(code) => trace.push_str(&format!("ERROR: Job failed: exit code {code}\n")),
            None => trace.push_str(&format!("ERROR: Job failed: {summary}\n")),
        }
    } else {
        trace.push_str("Job succeeded\n");
    }
    trace
}

fn output(run: &CheckRunRecord) -> &str {
    run.output_text.as_deref().unwrap_or_default()
}

/// `2024-01-01T02:03:00Z` as an Actions log stamps its lines:
/// `2024-01-01T02:03:00.0000000Z` (seven fractional digits).
fn github_time(iso: &str) -> String {
    match iso.strip_suffix('Z') {
        Some(rest) if !rest.contains('.') => format!("{rest}.0000000Z"),
        _ => iso.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(conclusion: Conclusion, summary: &str, text: &str) -> CheckRunRecord {
        CheckRunRecord {
            database_id: 7,
            id: String::new(),
            name: "tests".into(),
            head_sha: "s".into(),
            status: RunStatus::Completed,
            conclusion: Some(conclusion),
            started_at: Some("2024-01-01T02:03:00Z".into()),
            completed_at: Some("2024-01-01T02:04:00Z".into()),
            check_suite_id: 1,
            workflow_run_id: 2,
            run_attempt: 1,
            output_title: None,
            output_summary: Some(summary.into()),
            output_text: Some(text.into()),
        }
    }

    #[test]
    fn github_stamps_each_line_and_closes_a_failure() {
        let failed = run(Conclusion::Failure, "exit status 2", "one\ntwo\n");
        assert_eq!(
            github_log(&failed).unwrap(),
            "2024-01-01T02:03:00.0000000Z one\n\
             2024-01-01T02:03:00.0000000Z two\n\
             2024-01-01T02:04:00.0000000Z ##[error]Process completed with exit code 2.\n"
        );
        let passed = run(Conclusion::Success, "exit status 0", "ok");
        assert_eq!(
            github_log(&passed).unwrap(),
            "2024-01-01T02:03:00.0000000Z ok\n"
        );
        let timed_out = run(Conclusion::TimedOut, "timed out after 5s", "");
        assert!(github_log(&timed_out)
            .unwrap()
            .ends_with("Z ##[error]timed out after 5s\n"));
        let mut running = passed;
        running.status = RunStatus::InProgress;
        assert_eq!(github_log(&running), None);
    }

    #[test]
    fn gitlab_closes_the_trace_as_its_runner_does() {
        let failed = run(Conclusion::Failure, "exit status 1", "boom");
        assert_eq!(
            gitlab_trace(&failed),
            "boom\nERROR: Job failed: exit code 1\n"
        );
        let passed = run(Conclusion::Success, "exit status 0", "fine\n");
        assert_eq!(gitlab_trace(&passed), "fine\nJob succeeded\n");
        let mut pending = passed;
        pending.status = RunStatus::Queued;
        pending.output_text = None;
        assert_eq!(gitlab_trace(&pending), "");
    }
}
