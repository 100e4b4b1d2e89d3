//! CI reads of the GitHub client: check runs, legacy statuses, the status
//! rollup, workflow runs, the re-run of failed jobs, and required-check
//! discovery.
//!
//! The polled GETs are conditional (ETag). Discovery asks three sources at
//! once (branch protection, rulesets, `isRequired` on the rollup); a source
//! that fails is recorded, not fatal, and when none answers the required set
//! is `Unknown`, so that the verdict counts every check.

use std::collections::BTreeSet;

use reqwest::Method;
use shepherd_core::model::RepoRef;

use super::client::{next_cursor, not_found, repo_url, repo_vars, GraphQlExec};
use super::queries::{STATUS_CHECK_ROLLUP, STATUS_CHECK_ROLLUP_OP};
use super::rest_wire::{
    ruleset_names, CheckRunsPage, CombinedStatusRest, ProtectionChecksRest, RuleRest,
    WorkflowRunsPage,
};
use super::wire::{rollup_check, RepositoryData, RollupPr};
use crate::ci::{
    CheckRun, CombinedStatus, RequiredChecks, RequiredSource, SourceOutcome, SourceReport,
    StatusRollup, WorkflowRun,
};
use crate::error::{ForgeError, Result};
use crate::transport::{Conditional, Transport};

/// Every latest check run of `sha`.
pub(crate) async fn check_runs(
    transport: &Transport,
    repo: &RepoRef,
    sha: &str,
) -> Result<Vec<CheckRun>> {
    let url = repo_url(transport, repo, &["commits", sha, "check-runs"])?;
    let pages: Vec<CheckRunsPage> = transport.get_pages(&url, &[], Conditional::Yes).await?;
    Ok(pages
        .into_iter()
        .flat_map(|page| page.check_runs)
        .map(CheckRun::from)
        .collect())
}

/// The combined legacy status of `sha`, every page of its statuses.
pub(crate) async fn combined_status(
    transport: &Transport,
    repo: &RepoRef,
    sha: &str,
) -> Result<CombinedStatus> {
    let url = repo_url(transport, repo, &["commits", sha, "status"])?;
    let pages: Vec<CombinedStatusRest> = transport.get_pages(&url, &[], Conditional::Yes).await?;
    let mut pages = pages.into_iter();
    let Some(first) = pages.next() else {
        return Err(ForgeError::Decode {
            request: format!("GET {}", url.path()),
            message: "no page in the answer".into(),
        });
    };
    let mut statuses: Vec<_> = first.statuses.into_iter().map(Into::into).collect();
    statuses.extend(pages.flat_map(|p| p.statuses).map(Into::into));
    Ok(CombinedStatus {
        sha: first.sha,
        state: first.state,
        statuses,
    })
}

/// The workflow runs of `head_sha`.
pub(crate) async fn workflow_runs(
    transport: &Transport,
    repo: &RepoRef,
    head_sha: &str,
) -> Result<Vec<WorkflowRun>> {
    let url = repo_url(transport, repo, &["actions", "runs"])?;
    let pages: Vec<WorkflowRunsPage> = transport
        .get_pages(&url, &[("head_sha", head_sha)], Conditional::Yes)
        .await?;
    Ok(pages
        .into_iter()
        .flat_map(|page| page.workflow_runs)
        .map(WorkflowRun::from)
        .collect())
}

/// `POST …/actions/runs/{id}/rerun-failed-jobs`, once.
pub(crate) async fn rerun_failed_jobs(
    transport: &Transport,
    repo: &RepoRef,
    run_id: u64,
) -> Result<()> {
    let id = run_id.to_string();
    let url = repo_url(
        transport,
        repo,
        &["actions", "runs", &id, "rerun-failed-jobs"],
    )?;
    transport.send(Method::POST, &url, None).await?;
    tracing::info!(run = run_id, "failed jobs re-run");
    Ok(())
}

/// The rollup of the head commit of `number`, every page of its contexts.
pub(crate) async fn status_check_rollup<E: GraphQlExec>(
    exec: &E,
    repo: &RepoRef,
    number: u64,
) -> Result<StatusRollup> {
    let mut cursor: Option<String> = None;
    let mut head: Option<String> = None;
    let mut state = None;
    let mut checks = Vec::new();
    loop {
        let data: RepositoryData<RollupPr> = exec
            .query(
                STATUS_CHECK_ROLLUP_OP,
                STATUS_CHECK_ROLLUP,
                repo_vars(repo, number, cursor.as_deref()),
            )
            .await?;
        let pr = data
            .into_pull_request()
            .ok_or_else(|| not_found(STATUS_CHECK_ROLLUP_OP))?;
        let decode = |message: &str| ForgeError::Decode {
            request: format!("GraphQL {STATUS_CHECK_ROLLUP_OP}"),
            message: message.to_owned(),
        };
        let commit = pr
            .commits
            .into_nodes()
            .last()
            .ok_or_else(|| decode("the pull request has no commit"))?
            .commit;
        match &head {
            Some(oid) if *oid != commit.oid => {
                return Err(decode("the head commit changed while paging; poll again"))
            }
            Some(_) => {}
            None => head = Some(commit.oid.clone()),
        }
        let Some(rollup) = commit.status_check_rollup else {
            break;
        };
        state = rollup.state;
        let page = rollup.contexts.page_info.clone();
        checks.extend(rollup.contexts.into_nodes().filter_map(rollup_check));
        match next_cursor(&page, cursor.as_deref(), STATUS_CHECK_ROLLUP_OP)? {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    Ok(StatusRollup {
        head_sha: head.unwrap_or_default(),
        state,
        checks,
    })
}

/// Required-check discovery from the three sources, asked at once.
pub(crate) async fn required_checks(
    transport: &Transport,
    repo: &RepoRef,
    number: u64,
    base_ref: &str,
) -> RequiredChecks {
    let (protection, rulesets, rollup) = tokio::join!(
        protection_checks(transport, repo, base_ref),
        ruleset_checks(transport, repo, base_ref),
        status_check_rollup(transport, repo, number),
    );
    let rollup = rollup.map(|rollup| {
        rollup
            .checks
            .into_iter()
            .filter(|c| c.required == Some(true))
            .map(|c| c.name)
            .collect()
    });
    let sources = vec![
        report(RequiredSource::BranchProtection, protection),
        report(RequiredSource::Rulesets, rulesets),
        report(RequiredSource::StatusRollup, rollup),
    ];
    let checks = RequiredChecks::from_sources(sources);
    tracing::info!(sources = ?checks.summary(), "required checks discovered");
    checks
}

fn report(source: RequiredSource, answer: Result<BTreeSet<String>>) -> SourceReport {
    let outcome = match answer {
        Ok(contexts) => SourceOutcome::Answered { contexts },
        Err(err) => {
            tracing::warn!(
                source = source.as_str(),
                "required-check discovery: {err}; not fatal"
            );
            SourceOutcome::Unavailable {
                status: err.status(),
                reason: err.to_string(),
            }
        }
    };
    SourceReport { source, outcome }
}

/// Classic branch protection. "Branch not protected" and "Required status
/// checks not enabled" (both 404) are answers: nothing required there.
async fn protection_checks(
    transport: &Transport,
    repo: &RepoRef,
    branch: &str,
) -> Result<BTreeSet<String>> {
    let url = repo_url(
        transport,
        repo,
        &["branches", branch, "protection", "required_status_checks"],
    )?;
    match transport
        .get::<ProtectionChecksRest>(&url, &[], Conditional::No)
        .await
    {
        Ok(checks) => Ok(checks.names()),
        Err(ForgeError::NotFound { message, .. }) if says_nothing_required(&message) => {
            Ok(BTreeSet::new())
        }
        Err(err) => Err(err),
    }
}

/// The 404 messages that mean "protected by nothing".
fn says_nothing_required(message: &str) -> bool {
    let message = message.to_ascii_lowercase();
    message.contains("branch not protected") || message.contains("status checks not enabled")
}

/// Rulesets that apply to the branch (repository and organisation level).
async fn ruleset_checks(
    transport: &Transport,
    repo: &RepoRef,
    branch: &str,
) -> Result<BTreeSet<String>> {
    let url = repo_url(transport, repo, &["rules", "branches", branch])?;
    let pages: Vec<Vec<RuleRest>> = transport.get_pages(&url, &[], Conditional::No).await?;
    ruleset_names(pages.into_iter().flatten().collect()).map_err(|message| ForgeError::Decode {
        request: format!("GET {}", url.path()),
        message,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_nothing_protected_messages_are_answers() {
        assert!(says_nothing_required("Branch not protected"));
        assert!(says_nothing_required("Required status checks not enabled"));
        assert!(!says_nothing_required("Not Found"));
        assert!(!says_nothing_required(""));
    }
}
