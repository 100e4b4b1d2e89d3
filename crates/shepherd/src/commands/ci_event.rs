//! `shepherd run --from-event`: one stateless run for the pull request of a
//! CI job (SPEC section 12).
//!
//! The pull request and its repository come from the job, not from a
//! target on the command line: a GitHub event payload (`GITHUB_EVENT_PATH`,
//! for `pull_request*`, `issue_comment` on a PR, `check_suite`, `check_run`
//! and `workflow_run`), or GitLab's merge request pipeline variables
//! (`CI_MERGE_REQUEST_IID`, `CI_MERGE_REQUEST_PROJECT_PATH`,
//! `CI_SERVER_URL`). An event without a pull request, or one whose head
//! lives in a fork, is skipped before anything else happens (exit 0,
//! `status=skipped`). An `issue_comment` event does not say where the head
//! lives: one read of the pull request tells, and a fork's is skipped then,
//! before anything changes.
//!
//! An event that cannot be read (a missing, empty or garbled file) exits 2
//! with `status=error` and the reason in the outputs, so that the job's
//! later steps can tell.
//!
//! The result goes where the CI engine shows it: `key=value` outputs
//! (`status`, `rounds`, `report-path`, `run-dir`, `reason`, GitHub's
//! `$GITHUB_OUTPUT` format) and a Markdown summary (`$GITHUB_STEP_SUMMARY`),
//! or the files `--outputs`/`--summary` name.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context};
use clap::Args;
use shepherd_engine::{RunOutcome, RunStatus};

use crate::error::{CliError, CliResult};
use crate::setup::{ForgeArgs, ForgeFlag};
use shepherd_core::ForgeKind;

/// Flags of a run started by a CI job.
#[derive(Debug, Clone, Args)]
pub(crate) struct CiArgs {
    /// Run for the pull request of a CI job instead of TARGET: a GitHub event payload file; with no
    /// PATH, the job's own (`$GITHUB_EVENT_PATH`, else GitLab's merge request pipeline variables)
    #[arg(long, value_name = "PATH", conflicts_with = "target")]
    pub from_event: Option<Option<PathBuf>>,

    /// With --from-event: append the outputs (`status`, `rounds`, `report-path`, `run-dir`,
    /// `reason`) to FILE [default: $GITHUB_OUTPUT]
    #[arg(long, value_name = "FILE", requires = "from_event")]
    pub outputs: Option<PathBuf>,

    /// With --from-event: append the Markdown summary to FILE [default: $GITHUB_STEP_SUMMARY]
    #[arg(long, value_name = "FILE", requires = "from_event")]
    pub summary: Option<PathBuf>,
}

/// The pull request a CI job is about, or why there is none to run for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum EventPr {
    /// Run for this pull request.
    Pr {
        /// The forge.
        forge: ForgeFlag,
        /// `--repo`: the repository, with its host when not the public one.
        repo: String,
        /// The PR/MR number.
        number: u64,
        /// `--api-url` for a forge that is not github.com/gitlab.com.
        api_url: Option<String>,
        /// Whether the event does not say where the head lives (an
        /// `issue_comment`): the run reads the pull request first and skips
        /// a fork's.
        head_unknown: bool,
    },
    /// Nothing to run: the reason.
    Skip(String),
}

/// A run started by a CI job: where its pull request came from, and where
/// its result goes.
#[derive(Debug)]
pub(crate) struct CiJob {
    pr: EventPr,
    outputs: Option<PathBuf>,
    summary: Option<PathBuf>,
}

fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

impl CiJob {
    /// The CI job of `--from-event`, if given.
    /// An event that cannot be read is an error (exit 2) written to the
    /// outputs and the summary too (`status=error`).
    pub(crate) fn from_args(args: &CiArgs) -> CliResult<Option<CiJob>> {
        let Some(path) = &args.from_event else {
            return Ok(None);
        };
        let mut job = CiJob {
            pr: EventPr::Skip(String::new()),
            outputs: args
                .outputs
                .clone()
                .or_else(|| env_var("GITHUB_OUTPUT").map(PathBuf::from)),
            summary: args
                .summary
                .clone()
                .or_else(|| env_var("GITHUB_STEP_SUMMARY").map(PathBuf::from)),
        };
        let pr = if let Some(path) = path {
            github_event_file(path, env_var)
        } else if let Some(path) = env_var("GITHUB_EVENT_PATH") {
            github_event_file(Path::new(&path), env_var)
        } else if env_var("GITLAB_CI").is_some() || env_var("CI_PROJECT_PATH").is_some() {
            gitlab_pipeline(env_var)
        } else {
            Err(CliError::usage(anyhow!(
                "--from-event without a PATH needs a CI job: neither GITHUB_EVENT_PATH nor GitLab's \
                 CI variables are set"
            )))
        };
        match pr {
            Ok(pr) => {
                job.pr = pr;
                Ok(Some(job))
            }
            Err(err) => {
                job.error(&err)?;
                Err(err)
            }
        }
    }

    /// Whether the run must read the pull request to learn whether its
    /// head lives in a fork (an `issue_comment` event).
    pub(crate) fn head_unknown(&self) -> bool {
        matches!(
            self.pr,
            EventPr::Pr {
                head_unknown: true,
                ..
            }
        )
    }

    /// The target text of the run, with `forge` completed from the event
    /// (flags given on the command line win); `None` when the job is skipped.
    pub(crate) fn target(&self, forge: &mut ForgeArgs) -> Option<String> {
        let EventPr::Pr {
            forge: kind,
            repo,
            number,
            api_url,
            ..
        } = &self.pr
        else {
            return None;
        };
        forge.forge.get_or_insert(*kind);
        forge.repo.get_or_insert_with(|| repo.clone());
        if forge.api_url.is_none() {
            forge.api_url.clone_from(api_url);
        }
        Some(number.to_string())
    }

    /// Report a skipped job (exit 0, `status=skipped`).
    pub(crate) fn skipped(&self) -> CliResult<u8> {
        let reason = match &self.pr {
            EventPr::Skip(reason) => reason.as_str(),
            EventPr::Pr { .. } => "nothing to do",
        };
        self.skip(reason)
    }

    /// Report a job skipped for `reason` (exit 0, `status=skipped`).
    pub(crate) fn skip(&self, reason: &str) -> CliResult<u8> {
        eprintln!("Skipped: {reason}");
        self.write(
            &[("status", "skipped"), ("rounds", "0"), ("reason", reason)],
            &format!("## Shepherd: skipped\n\n{reason}\n"),
        )?;
        Ok(crate::exit_codes::SUCCESS)
    }

    /// Write the outputs and the summary of a finished run (or of a run
    /// that could not start or failed with an error).
    pub(crate) fn finish(&self, result: &CliResult<RunOutcome>) -> CliResult<()> {
        match result {
            Ok(outcome) => {
                let rounds = outcome.report.rounds.len().to_string();
                let report_path = outcome.run_dir.join("report.md");
                let run_dir = outcome.run_dir.display().to_string();
                let report_path = report_path.display().to_string();
                let reason = outcome.reason.clone().unwrap_or_default();
                let status = outcome.status.as_str();
                // One line per awaited reviewer of the final head: what is
                // true of it (issue 27).
                let reviewers: Vec<String> = outcome
                    .report
                    .reviewers
                    .iter()
                    .map(shepherd_core::reviewers::ReviewerOnHead::describe)
                    .collect();
                let reviewers = reviewers.join("\n");
                // One line per check that failed on the last head Shepherd
                // pushed: whose failure it is (issue 31).
                let ci_failures: Vec<String> = outcome
                    .report
                    .ci_failures
                    .iter()
                    .map(shepherd_core::ci_failure::CheckFailure::describe)
                    .collect();
                let ci_failures = ci_failures.join("\n");
                self.write(
                    &[
                        ("status", status),
                        ("rounds", &rounds),
                        ("report-path", &report_path),
                        ("run-dir", &run_dir),
                        ("reason", &reason),
                        ("reviewers", &reviewers),
                        ("ci-failures", &ci_failures),
                    ],
                    &summary_markdown(outcome),
                )
            }
            Err(err) => self.error(err),
        }
    }

    /// Write `status=error` and why: the run could not start or failed
    /// with an error.
    fn error(&self, err: &CliError) -> CliResult<()> {
        let reason = err.to_string();
        self.write(
            &[("status", "error"), ("rounds", "0"), ("reason", &reason)],
            &format!(
                "## Shepherd: error\n\nThe run did not finish: {}\n",
                shepherd_core::escape::visible(&reason)
            ),
        )
    }

    fn write(&self, outputs: &[(&str, &str)], summary: &str) -> CliResult<()> {
        if let Some(path) = &self.outputs {
            append(path, &output_lines(outputs)).map_err(CliError::failure)?;
        }
        if let Some(path) = &self.summary {
            append(path, summary).map_err(CliError::failure)?;
        }
        Ok(())
    }
}

fn append(path: &Path, text: &str) -> anyhow::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("cannot open {} to append the CI result", path.display()))?;
    file.write_all(text.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))
}

/// `key=value` lines in GitHub's `$GITHUB_OUTPUT` format: a value with a
/// line break is written as `key<<DELIMITER`, its lines, `DELIMITER`, with
/// a delimiter that does not occur in it.
pub(crate) fn output_lines(outputs: &[(&str, &str)]) -> String {
    let mut out = String::new();
    for (key, value) in outputs {
        if value.contains('\n') || value.contains('\r') {
            let mut delimiter = "SHEPHERD_EOF".to_owned();
            while value.contains(&delimiter) {
                delimiter.push('_');
            }
            let value = value.replace('\r', "");
            out.push_str(&format!("{key}<<{delimiter}\n{value}\n{delimiter}\n"));
        } else {
            out.push_str(&format!("{key}={value}\n"));
        }
    }
    out
}

/// The job summary: the verdict, what waits or why it failed, then the report.
fn summary_markdown(outcome: &RunOutcome) -> String {
    let headline = match outcome.status {
        RunStatus::Converged => "converged".to_owned(),
        RunStatus::Paused => "paused, waiting for a person".to_owned(),
        RunStatus::HandedOff => "handed off: the loop is done, items wait for a person".to_owned(),
        other => other.as_str().to_owned(),
    };
    let mut text = format!("## Shepherd: {headline}\n\n");
    if let Some(reason) = &outcome.reason {
        let label = match outcome.status {
            RunStatus::Paused | RunStatus::HandedOff => "What waits",
            RunStatus::Converged => "Note",
            _ => "Why",
        };
        text.push_str(&format!(
            "**{label}:** {}\n\n",
            shepherd_core::escape::visible(reason)
        ));
    }
    text.push_str(&outcome.report.to_markdown());
    text.push('\n');
    text
}

/// The pull request of a GitHub event payload file.
fn github_event_file(path: &Path, env: impl Fn(&str) -> Option<String>) -> CliResult<EventPr> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        CliError::usage(anyhow!(
            "cannot read the event payload {}: {e}",
            path.display()
        ))
    })?;
    let event: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        CliError::usage(anyhow!(
            "the event payload {} is not JSON: {e}",
            path.display()
        ))
    })?;
    github_event(&event, env).map_err(|e| CliError::usage(anyhow!("{}: {e}", path.display())))
}

/// The pull request of a GitHub event payload; `env` gives
/// `GITHUB_SERVER_URL` and `GITHUB_API_URL` (an Enterprise host, or the
/// emulator).
pub(crate) fn github_event(
    event: &serde_json::Value,
    env: impl Fn(&str) -> Option<String>,
) -> anyhow::Result<EventPr> {
    let Some(full_name) = event["repository"]["full_name"].as_str() else {
        return Err(anyhow!(
            "the event names no repository (`repository.full_name`)"
        ));
    };
    let base_id = &event["repository"]["id"];
    let mut head_unknown = false;
    let skip = |why: &str| Ok(EventPr::Skip(why.to_owned()));
    let number = if let Some(pr) = event.get("pull_request").filter(|p| p.is_object()) {
        let head = pr["head"]["repo"]["full_name"].as_str();
        let base = pr["base"]["repo"]["full_name"]
            .as_str()
            .unwrap_or(full_name);
        match head {
            None => return skip("the pull request's head repository is gone (a deleted fork)"),
            Some(head) if !head.eq_ignore_ascii_case(base) => {
                return Ok(EventPr::Skip(format!(
                    "the pull request's head lives in the fork {head}: Shepherd does not push to \
                     forks"
                )))
            }
            Some(_) => {}
        }
        pr["number"].as_u64()
    } else if let Some(issue) = event.get("issue").filter(|i| i.is_object()) {
        if issue
            .get("pull_request")
            .is_none_or(serde_json::Value::is_null)
        {
            return skip("a comment on an issue, not on a pull request");
        }
        // `issue.pull_request` holds URLs only, not the head repository
        // (GitHub's `issue_comment` payload): the run reads the pull
        // request before anything else.
        head_unknown = true;
        issue["number"].as_u64()
    } else if let Some(prs) = ["check_suite", "check_run", "workflow_run"]
        .iter()
        .find_map(|k| event[*k]["pull_requests"].as_array())
    {
        // A check event lists the pull requests of its head in the same
        // repository (forks are not listed); more than one is ambiguous.
        let same_repo: Vec<&serde_json::Value> = prs
            .iter()
            .filter(|p| {
                let head = &p["head"]["repo"]["id"];
                head.is_null() || base_id.is_null() || head == base_id
            })
            .collect();
        match same_repo.as_slice() {
            [] => return skip("the check event belongs to no pull request of this repository"),
            [one] => one["number"].as_u64(),
            _ => {
                return skip(
                    "the check event belongs to several pull requests; run Shepherd on each",
                )
            }
        }
    } else {
        return skip("the event is not about a pull request");
    };
    let Some(number) = number else {
        return Err(anyhow!("the event's pull request has no number"));
    };
    let server = env("GITHUB_SERVER_URL").unwrap_or_else(|| "https://github.com".to_owned());
    let server = server.trim_end_matches('/');
    let public = server.eq_ignore_ascii_case("https://github.com");
    Ok(EventPr::Pr {
        forge: ForgeFlag(ForgeKind::GitHub),
        repo: if public {
            full_name.to_owned()
        } else {
            format!("{server}/{full_name}")
        },
        number,
        api_url: if public {
            None
        } else {
            env("GITHUB_API_URL").or_else(|| Some(format!("{server}/api/v3")))
        },
        head_unknown,
    })
}

/// The merge request of a GitLab merge request pipeline, from its variables.
pub(crate) fn gitlab_pipeline(env: impl Fn(&str) -> Option<String>) -> CliResult<EventPr> {
    // A pipeline started by a trigger (a webhook on review notes) names
    // the merge request in SHEPHERD_MR_IID.
    let Some(iid) = env("CI_MERGE_REQUEST_IID").or_else(|| env("SHEPHERD_MR_IID")) else {
        return Ok(EventPr::Skip(
            "not a merge request pipeline (no CI_MERGE_REQUEST_IID or SHEPHERD_MR_IID)".to_owned(),
        ));
    };
    let number = iid
        .trim()
        .parse::<u64>()
        .map_err(|_| CliError::usage(anyhow!("CI_MERGE_REQUEST_IID is not a number: {iid:?}")))?;
    let Some(project) = env("CI_MERGE_REQUEST_PROJECT_PATH").or_else(|| env("CI_PROJECT_PATH"))
    else {
        return Err(CliError::usage(anyhow!(
            "CI_MERGE_REQUEST_PROJECT_PATH and CI_PROJECT_PATH are not set"
        )));
    };
    if let Some(source) = env("CI_MERGE_REQUEST_SOURCE_PROJECT_PATH") {
        if !source.eq_ignore_ascii_case(&project) {
            return Ok(EventPr::Skip(format!(
                "the merge request's source branch lives in the fork {source}: Shepherd does not \
                 push to forks"
            )));
        }
    }
    let server = env("CI_SERVER_URL").unwrap_or_else(|| "https://gitlab.com".to_owned());
    let server = server.trim_end_matches('/');
    let public = server.eq_ignore_ascii_case("https://gitlab.com");
    Ok(EventPr::Pr {
        forge: ForgeFlag(ForgeKind::GitLab),
        repo: if public {
            project
        } else {
            format!("{server}/{project}")
        },
        number,
        api_url: if public {
            None
        } else {
            env("CI_API_V4_URL").or_else(|| Some(format!("{server}/api/v4")))
        },
        head_unknown: false,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;
    use serde_json::json;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    fn pr(repo: &str, number: u64) -> EventPr {
        EventPr::Pr {
            forge: ForgeFlag(ForgeKind::GitHub),
            repo: repo.to_owned(),
            number,
            api_url: None,
            head_unknown: false,
        }
    }

    /// An `issue_comment`'s pull request: where its head lives is read
    /// before the run.
    fn commented_pr(repo: &str, number: u64) -> EventPr {
        EventPr::Pr {
            forge: ForgeFlag(ForgeKind::GitHub),
            repo: repo.to_owned(),
            number,
            api_url: None,
            head_unknown: true,
        }
    }

    #[test]
    fn each_github_event_kind_names_its_pull_request() {
        let repo = json!({"id": 1, "full_name": "o/r"});
        let same = json!({"repo": {"id": 1, "full_name": "o/r"}});
        let review =
            json!({"repository": repo, "pull_request": {"number": 5, "head": same, "base": same}});
        assert_eq!(github_event(&review, no_env).unwrap(), pr("o/r", 5));
        let comment =
            json!({"repository": repo, "issue": {"number": 6, "pull_request": {"url": "x"}}});
        assert_eq!(
            github_event(&comment, no_env).unwrap(),
            commented_pr("o/r", 6)
        );
        let suite = json!({"repository": repo, "check_suite": {"pull_requests": [{"number": 7, "head": same, "base": same}]}});
        assert_eq!(github_event(&suite, no_env).unwrap(), pr("o/r", 7));
        let run = json!({"repository": repo, "workflow_run": {"pull_requests": [{"number": 8}]}});
        assert_eq!(github_event(&run, no_env).unwrap(), pr("o/r", 8));
    }

    #[test]
    fn forks_issues_and_ambiguous_checks_are_skipped() {
        let repo = json!({"id": 1, "full_name": "o/r"});
        let fork = json!({"repository": repo, "pull_request": {"number": 5,
            "head": {"repo": {"id": 2, "full_name": "mallory/r"}},
            "base": {"repo": {"id": 1, "full_name": "o/r"}}}});
        let EventPr::Skip(why) = github_event(&fork, no_env).unwrap() else {
            panic!("a fork PR runs");
        };
        assert!(why.contains("mallory/r"), "{why}");
        let gone =
            json!({"repository": repo, "pull_request": {"number": 5, "head": {"repo": null}}});
        assert!(matches!(
            github_event(&gone, no_env).unwrap(),
            EventPr::Skip(_)
        ));
        let issue = json!({"repository": repo, "issue": {"number": 6}});
        assert!(matches!(
            github_event(&issue, no_env).unwrap(),
            EventPr::Skip(_)
        ));
        let none = json!({"repository": repo, "check_suite": {"pull_requests": []}});
        assert!(matches!(
            github_event(&none, no_env).unwrap(),
            EventPr::Skip(_)
        ));
        let two = json!({"repository": repo, "check_suite": {"pull_requests": [{"number": 1}, {"number": 2}]}});
        assert!(matches!(
            github_event(&two, no_env).unwrap(),
            EventPr::Skip(_)
        ));
        let push = json!({"repository": repo, "ref": "refs/heads/main"});
        assert!(matches!(
            github_event(&push, no_env).unwrap(),
            EventPr::Skip(_)
        ));
        assert!(github_event(&json!({}), no_env).is_err());
    }

    #[test]
    fn an_enterprise_server_names_its_host_and_api() {
        let env = |k: &str| match k {
            "GITHUB_SERVER_URL" => Some("https://ghe.corp/".to_owned()),
            "GITHUB_API_URL" => Some("https://ghe.corp/api/v3".to_owned()),
            _ => None,
        };
        let event =
            json!({"repository": {"full_name": "o/r"}, "issue": {"number": 3, "pull_request": {}}});
        assert_eq!(
            github_event(&event, env).unwrap(),
            EventPr::Pr {
                forge: ForgeFlag(ForgeKind::GitHub),
                repo: "https://ghe.corp/o/r".into(),
                number: 3,
                api_url: Some("https://ghe.corp/api/v3".into()),
                head_unknown: true,
            }
        );
    }

    #[test]
    fn gitlab_merge_request_pipelines() {
        let vars = |extra: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                [
                    ("CI_MERGE_REQUEST_IID", "17"),
                    ("CI_MERGE_REQUEST_PROJECT_PATH", "grp/sub/proj"),
                    ("CI_SERVER_URL", "https://gitlab.com"),
                ]
                .iter()
                .chain(extra)
                .rev()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| (*v).to_owned())
            }
        };
        assert_eq!(
            gitlab_pipeline(vars(&[])).unwrap(),
            EventPr::Pr {
                forge: ForgeFlag(ForgeKind::GitLab),
                repo: "grp/sub/proj".into(),
                number: 17,
                api_url: None,
                head_unknown: false,
            }
        );
        let EventPr::Skip(why) = gitlab_pipeline(vars(&[(
            "CI_MERGE_REQUEST_SOURCE_PROJECT_PATH",
            "mallory/proj",
        )]))
        .unwrap() else {
            panic!("a fork MR runs");
        };
        assert!(why.contains("mallory/proj"));
        let hosted = gitlab_pipeline(vars(&[
            ("CI_SERVER_URL", "http://127.0.0.1:9"),
            ("CI_API_V4_URL", "http://127.0.0.1:9/api/v4"),
        ]))
        .unwrap();
        assert!(
            matches!(&hosted, EventPr::Pr { repo, api_url: Some(api), .. }
                if repo == "http://127.0.0.1:9/grp/sub/proj" && api.ends_with("/api/v4")),
            "{hosted:?}"
        );
        assert!(matches!(
            gitlab_pipeline(|_| None).unwrap(),
            EventPr::Skip(_)
        ));
        assert!(gitlab_pipeline(vars(&[("CI_MERGE_REQUEST_IID", "x")])).is_err());
    }

    #[test]
    fn multi_line_outputs_use_a_delimiter_absent_from_the_value() {
        assert_eq!(
            output_lines(&[("status", "converged")]),
            "status=converged\n"
        );
        let text = output_lines(&[("reason", "a\nSHEPHERD_EOF\nb")]);
        assert_eq!(
            text,
            "reason<<SHEPHERD_EOF_\na\nSHEPHERD_EOF\nb\nSHEPHERD_EOF_\n"
        );
    }
}
