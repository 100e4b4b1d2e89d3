//! What a failed check printed (issue 31: CI repair reads it).
//!
//! An Actions job's log is `GET /repos/{o}/{r}/actions/jobs/{job_id}/logs`,
//! which answers `302 Found` with a short-lived download URL (GitHub's REST
//! docs, "Download job logs for a workflow run"); the client follows it, and
//! reqwest drops the `Authorization` header when the redirect leaves the
//! API's host. An Actions check run's id is its job's id. A check run of
//! another app has no log: its `output` (title, summary, text) is what it
//! said (`GET /repos/{o}/{r}/check-runs/{id}`).

use serde::Deserialize;
use shepherd_core::model::RepoRef;

use super::client::repo_url;
use crate::ci::CheckRun;
use crate::error::Result;
use crate::transport::{Conditional, Transport};

/// The app that runs GitHub Actions' jobs.
const ACTIONS: &str = "github-actions";

#[derive(Debug, Deserialize)]
struct CheckRunOutputRest {
    output: Option<OutputRest>,
}

#[derive(Debug, Default, Deserialize)]
struct OutputRest {
    title: Option<String>,
    summary: Option<String>,
    text: Option<String>,
}

/// The log of `check` (see the module docs).
pub(crate) async fn check_log(
    transport: &Transport,
    repo: &RepoRef,
    check: &CheckRun,
) -> Result<String> {
    let id = check.id.to_string();
    if check.app_slug.as_deref() == Some(ACTIONS) {
        let url = repo_url(transport, repo, &["actions", "jobs", &id, "logs"])?;
        let answer = transport.get_answer(&url, &[]).await?;
        return Ok(String::from_utf8_lossy(&answer.body).into_owned());
    }
    let url = repo_url(transport, repo, &["check-runs", &id])?;
    let run: CheckRunOutputRest = transport.get(&url, &[], Conditional::No).await?;
    let output = run.output.unwrap_or_default();
    Ok([output.title, output.summary, output.text]
        .into_iter()
        .flatten()
        .filter(|part| !part.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n\n"))
}
