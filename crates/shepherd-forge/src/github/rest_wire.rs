//! The shapes of GitHub's REST answers that the write side and the CI reads
//! use, and their translation into this crate's types. Only the fields read
//! are declared; serde ignores the rest.

use std::collections::BTreeSet;

use serde::Deserialize;
use shepherd_core::marker::Marker;
use shepherd_core::model::{Author, AuthorKind, ReviewState, TopLevelComment, TopLevelKind};

use super::wire::{check_conclusion, check_status, review_state};
use crate::ci::{CheckRun, CommitStatus, WorkflowRun};
use crate::forge::{LabelEvent, PostedComment};

/// A REST `user` (`type` is `User`, `Bot`, `Organization`).
#[derive(Debug, Deserialize)]
pub(crate) struct UserRest {
    pub(crate) login: String,
    #[serde(rename = "type", default)]
    pub(crate) kind: Option<String>,
}

fn author(user: Option<UserRest>) -> Option<Author> {
    let user = user?;
    let kind = match user.kind.as_deref() {
        Some("Bot") => AuthorKind::Bot,
        _ => AuthorKind::User,
    };
    Some(Author {
        login: user.login,
        kind,
    })
}

/// An issue event (`GET /repos/{o}/{r}/issues/{n}/events`, oldest first):
/// only `labeled` and `unlabeled` are read, the label and who did it.
#[derive(Debug, Deserialize)]
pub(crate) struct IssueEventRest {
    pub(crate) event: String,
    pub(crate) created_at: String,
    #[serde(default)]
    pub(crate) actor: Option<UserRest>,
    #[serde(default)]
    pub(crate) label: Option<LabelRest>,
}

/// The `label` of a `labeled` or `unlabeled` issue event.
#[derive(Debug, Deserialize)]
pub(crate) struct LabelRest {
    pub(crate) name: String,
}

impl IssueEventRest {
    /// The label event, when it is one. A bot's login loses REST's
    /// `[bot]` suffix, as GraphQL spells it.
    pub(crate) fn into_label_event(self) -> Option<LabelEvent> {
        let added = match self.event.as_str() {
            "labeled" => true,
            "unlabeled" => false,
            _ => return None,
        };
        Some(LabelEvent {
            label: self.label?.name,
            added,
            actor: author(self.actor).map(|mut author| {
                if author.kind == AuthorKind::Bot {
                    if let Some(login) = author.login.strip_suffix("[bot]") {
                        author.login = login.to_owned();
                    }
                }
                author
            }),
            created_at: self.created_at,
        })
    }
}

/// A pull request review comment (`/pulls/comments/{id}`, and the answer to
/// a reply).
#[derive(Debug, Deserialize)]
pub(crate) struct ReviewCommentRest {
    pub(crate) id: u64,
    pub(crate) node_id: String,
    pub(crate) html_url: String,
    #[serde(default)]
    pub(crate) body: String,
    pub(crate) pull_request_review_id: Option<u64>,
    pub(crate) in_reply_to_id: Option<u64>,
    pub(crate) user: Option<UserRest>,
}

impl ReviewCommentRest {
    /// The comment as posted, with the state of its review.
    pub(crate) fn into_posted(self, review_state: Option<ReviewState>) -> PostedComment {
        PostedComment {
            marker: Marker::find(&self.body),
            id: self.node_id,
            database_id: Some(self.id),
            url: self.html_url,
            review_state,
            author: author(self.user),
        }
    }
}

/// A pull request review (`/pulls/{n}/reviews/{id}`).
#[derive(Debug, Deserialize)]
pub(crate) struct ReviewRest {
    pub(crate) state: String,
}

/// A review in the list of a pull request's reviews
/// (`GET /repos/{o}/{r}/pulls/{n}/reviews`), for its body.
#[derive(Debug, Deserialize)]
pub(crate) struct ReviewListedRest {
    pub(crate) id: u64,
    pub(crate) node_id: String,
    #[serde(default)]
    pub(crate) body: Option<String>,
    pub(crate) state: String,
    pub(crate) html_url: String,
    /// Absent on a pending review.
    #[serde(default)]
    pub(crate) submitted_at: Option<String>,
    pub(crate) user: Option<UserRest>,
    /// The commit it was submitted on (what a reviewer bot reviewed).
    #[serde(default)]
    pub(crate) commit_id: Option<String>,
}

impl ReviewListedRest {
    /// The review's body as a top-level item, when the review is submitted
    /// and its body is not blank. Its time is when it was submitted (REST
    /// names no creation time; a review shows from its submission on). A
    /// bot's login loses REST's `[bot]` suffix, as GraphQL spells it.
    pub(crate) fn into_review_body(self) -> Option<TopLevelComment> {
        let body = self.body.unwrap_or_default();
        if self.state == "PENDING" || body.trim().is_empty() {
            return None;
        }
        let created_at = self.submitted_at?;
        let author = author(self.user).map(|mut author| {
            if author.kind == AuthorKind::Bot {
                if let Some(login) = author.login.strip_suffix("[bot]") {
                    author.login = login.to_owned();
                }
            }
            author
        });
        Some(TopLevelComment {
            id: self.node_id,
            database_id: Some(self.id),
            kind: TopLevelKind::ReviewBody,
            author,
            review_state: review_state(&self.state),
            body,
            url: self.html_url,
            created_at,
        })
    }
}

/// An issue (conversation) comment.
#[derive(Debug, Deserialize)]
pub(crate) struct IssueCommentRest {
    pub(crate) id: u64,
    pub(crate) node_id: String,
    pub(crate) html_url: String,
    #[serde(default)]
    pub(crate) body: String,
    pub(crate) user: Option<UserRest>,
    #[serde(default)]
    pub(crate) created_at: Option<String>,
    /// Moves when the body is edited (a bot's summary edited in place).
    #[serde(default)]
    pub(crate) updated_at: Option<String>,
}

impl IssueCommentRest {
    pub(crate) fn into_posted(self) -> PostedComment {
        PostedComment {
            marker: Marker::find(&self.body),
            id: self.node_id,
            database_id: Some(self.id),
            url: self.html_url,
            review_state: None,
            author: author(self.user),
        }
    }
}

/// One page of `/commits/{sha}/check-runs`.
#[derive(Debug, Deserialize)]
pub(crate) struct CheckRunsPage {
    #[serde(default)]
    pub(crate) check_runs: Vec<CheckRunRest>,
}

/// A check run.
#[derive(Debug, Deserialize)]
pub(crate) struct CheckRunRest {
    pub(crate) id: u64,
    pub(crate) name: String,
    pub(crate) head_sha: String,
    pub(crate) status: Option<String>,
    pub(crate) conclusion: Option<String>,
    pub(crate) details_url: Option<String>,
    pub(crate) check_suite: Option<IdRest>,
    pub(crate) app: Option<AppRest>,
}

/// `{ "id": … }`.
#[derive(Debug, Deserialize)]
pub(crate) struct IdRest {
    pub(crate) id: u64,
}

/// A GitHub App (`slug` may be absent on old Enterprise versions).
#[derive(Debug, Deserialize)]
pub(crate) struct AppRest {
    pub(crate) slug: Option<String>,
}

impl From<CheckRunRest> for CheckRun {
    fn from(wire: CheckRunRest) -> CheckRun {
        CheckRun {
            id: wire.id,
            name: wire.name,
            head_sha: wire.head_sha,
            status: check_status(wire.status.as_deref()),
            conclusion: wire.conclusion.as_deref().and_then(check_conclusion),
            details_url: wire.details_url,
            check_suite_id: wire.check_suite.map(|s| s.id),
            app_slug: wire.app.and_then(|a| a.slug),
            required: None,
        }
    }
}

/// One page of `/commits/{sha}/status`.
#[derive(Debug, Deserialize)]
pub(crate) struct CombinedStatusRest {
    pub(crate) state: String,
    pub(crate) sha: String,
    #[serde(default)]
    pub(crate) statuses: Vec<StatusRest>,
}

/// A legacy commit status.
#[derive(Debug, Deserialize)]
pub(crate) struct StatusRest {
    pub(crate) id: u64,
    pub(crate) context: String,
    pub(crate) state: String,
    pub(crate) description: Option<String>,
    pub(crate) target_url: Option<String>,
    /// Listed statuses (`commits/{sha}/statuses`) say when and by whom.
    #[serde(default)]
    pub(crate) created_at: Option<String>,
    #[serde(default)]
    pub(crate) creator: Option<UserRest>,
}

impl From<StatusRest> for CommitStatus {
    fn from(wire: StatusRest) -> CommitStatus {
        CommitStatus {
            id: wire.id,
            context: wire.context,
            state: wire.state,
            description: wire.description,
            target_url: wire.target_url,
        }
    }
}

/// `/branches/{b}/protection/required_status_checks`.
#[derive(Debug, Deserialize)]
pub(crate) struct ProtectionChecksRest {
    #[serde(default)]
    pub(crate) contexts: Vec<String>,
    #[serde(default)]
    pub(crate) checks: Vec<ContextRest>,
}

impl ProtectionChecksRest {
    /// Every required context (`contexts` is the older list, `checks` the newer).
    pub(crate) fn names(self) -> BTreeSet<String> {
        self.contexts
            .into_iter()
            .chain(self.checks.into_iter().map(|c| c.context))
            .collect()
    }
}

/// `{ "context": … }` of a required check.
#[derive(Debug, Deserialize)]
pub(crate) struct ContextRest {
    pub(crate) context: String,
}

/// One rule of `/rules/branches/{b}`; only `required_status_checks` rules
/// are read further.
#[derive(Debug, Deserialize)]
pub(crate) struct RuleRest {
    #[serde(rename = "type")]
    pub(crate) kind: String,
    #[serde(default)]
    pub(crate) parameters: Option<serde_json::Value>,
}

/// `parameters` of a `required_status_checks` rule.
#[derive(Debug, Deserialize)]
pub(crate) struct RequiredStatusChecksParams {
    #[serde(default)]
    pub(crate) required_status_checks: Vec<ContextRest>,
}

/// The required contexts of the rules (of every ruleset that applies).
pub(crate) fn ruleset_names(rules: Vec<RuleRest>) -> Result<BTreeSet<String>, String> {
    let mut names = BTreeSet::new();
    for rule in rules {
        if rule.kind != "required_status_checks" {
            continue;
        }
        let Some(parameters) = rule.parameters else {
            continue;
        };
        let params: RequiredStatusChecksParams = serde_json::from_value(parameters)
            .map_err(|err| format!("a required_status_checks rule: {err}"))?;
        names.extend(params.required_status_checks.into_iter().map(|c| c.context));
    }
    Ok(names)
}

/// One page of `/actions/runs`.
#[derive(Debug, Deserialize)]
pub(crate) struct WorkflowRunsPage {
    #[serde(default)]
    pub(crate) workflow_runs: Vec<WorkflowRunRest>,
}

/// A workflow run.
#[derive(Debug, Deserialize)]
pub(crate) struct WorkflowRunRest {
    pub(crate) id: u64,
    pub(crate) name: Option<String>,
    pub(crate) head_sha: String,
    pub(crate) status: Option<String>,
    pub(crate) conclusion: Option<String>,
    pub(crate) run_attempt: Option<u32>,
    #[serde(default)]
    pub(crate) event: String,
    #[serde(default)]
    pub(crate) html_url: String,
}

impl From<WorkflowRunRest> for WorkflowRun {
    fn from(wire: WorkflowRunRest) -> WorkflowRun {
        WorkflowRun {
            id: wire.id,
            name: wire.name,
            head_sha: wire.head_sha,
            status: check_status(wire.status.as_deref()),
            conclusion: wire.conclusion.as_deref().and_then(check_conclusion),
            run_attempt: wire.run_attempt.unwrap_or(1),
            event: wire.event,
            url: wire.html_url,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;

    #[test]
    fn listed_reviews_give_the_bodies_of_submitted_reviews() {
        let listed: Vec<ReviewListedRest> =
            serde_json::from_str(include_str!("../../tests/fixtures/rest_pull_reviews.json"))
                .unwrap();
        let bodies: Vec<TopLevelComment> = listed
            .into_iter()
            .filter_map(ReviewListedRest::into_review_body)
            .collect();
        // Of five reviews: one empty body, one pending, one null body.
        assert_eq!(bodies.len(), 2);
        assert_eq!(bodies[0].id, "PRR_kwDOABCD1M5yyyy1");
        assert_eq!(bodies[0].database_id, Some(2_000_000_001));
        assert_eq!(bodies[0].kind, TopLevelKind::ReviewBody);
        assert_eq!(bodies[0].review_state, Some(ReviewState::ChangesRequested));
        assert_eq!(bodies[0].created_at, "2024-05-02T10:00:00Z");
        assert_eq!(
            bodies[0].url,
            "https://github.com/octo-org/widgets/pull/42#pullrequestreview-2000000001"
        );
        let bot = bodies[1].author.as_ref().unwrap();
        assert_eq!(bot.login, "coderabbitai", "GraphQL's spelling of a bot");
        assert_eq!(bot.kind, AuthorKind::Bot);
        assert_eq!(bodies[1].review_state, Some(ReviewState::Commented));
    }
}
