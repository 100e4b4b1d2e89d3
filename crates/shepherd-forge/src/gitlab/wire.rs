//! The shapes of GitLab's REST answers (API v4) that the client reads, and
//! their translation into `shepherd_core::model` and this crate's CI types.
//! Only the fields read are declared; serde ignores the rest. Fields GitLab
//! added over the years (`draft`, `bot`, `line_range` line numbers) are
//! optional, so that older self-managed instances decode too.

use serde::Deserialize;
use shepherd_core::ci::{CheckConclusion, CheckSource, CheckState, CheckStatus};
use shepherd_core::marker::Marker;
use shepherd_core::model::{Author, AuthorKind, PrStatus, PullRequest};

use crate::ci::{CheckRun, WorkflowRun};
use crate::forge::PostedComment;

/// A user as notes, merge requests and `/user` give it (`bot` only on some
/// entities: the merge request's author, `/user`).
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct UserWire {
    #[serde(default)]
    pub(crate) id: Option<u64>,
    pub(crate) username: String,
    #[serde(default)]
    pub(crate) bot: Option<bool>,
}

impl UserWire {
    /// The author, its kind from `bot` when GitLab gave it, else from the
    /// username ([`is_bot_username`]).
    pub(crate) fn author(&self) -> Author {
        let bot = self.bot.unwrap_or_else(|| is_bot_username(&self.username));
        Author {
            login: self.username.clone(),
            kind: if bot {
                AuthorKind::Bot
            } else {
                AuthorKind::User
            },
        }
    }
}

/// Whether a username is a bot's, when GitLab does not say (note authors
/// carry no `bot` flag):
///
/// - the bot users behind project and group access tokens
///   (`project_123_bot`, `project_123_bot_<hex>`, `group_7_bot2`);
/// - service accounts (`service_account_…`);
/// - GitLab's own bots (`GitLabDuo`, `support-bot`, `alert-bot`, …) and any
///   name ending in `bot` after a separator (`renovate-bot`, `lint_bot`,
///   `coderabbit[bot]`).
///
/// Anything else is a person. A wrong guess only changes who the engine
/// trusts by default; the `[trust]` configuration decides in the end.
pub(crate) fn is_bot_username(username: &str) -> bool {
    let name = username.to_ascii_lowercase();
    if name == "gitlabduo" || name.starts_with("service_account_") {
        return true;
    }
    if name.ends_with("[bot]") || name.ends_with("-bot") || name.ends_with("_bot") {
        return true;
    }
    // `project_<id>_bot…` / `group_<id>_bot…`.
    for prefix in ["project_", "group_"] {
        if let Some(rest) = name.strip_prefix(prefix) {
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            if digits > 0 && rest[digits..].starts_with("_bot") {
                return true;
            }
        }
    }
    false
}

/// `diff_refs` of a merge request.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct DiffRefsWire {
    #[serde(default)]
    pub(crate) start_sha: Option<String>,
}

/// A merge request (`GET /projects/:id/merge_requests/:iid`).
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct MergeRequestWire {
    pub(crate) id: u64,
    pub(crate) iid: u64,
    pub(crate) title: String,
    #[serde(default)]
    pub(crate) description: Option<String>,
    #[serde(default)]
    pub(crate) labels: Vec<String>,
    pub(crate) web_url: String,
    pub(crate) state: String,
    #[serde(default)]
    pub(crate) draft: Option<bool>,
    #[serde(default)]
    pub(crate) work_in_progress: Option<bool>,
    pub(crate) source_branch: String,
    pub(crate) target_branch: String,
    #[serde(default)]
    pub(crate) sha: Option<String>,
    pub(crate) source_project_id: u64,
    pub(crate) target_project_id: u64,
    #[serde(default)]
    pub(crate) author: Option<UserWire>,
    #[serde(default)]
    pub(crate) diff_refs: Option<DiffRefsWire>,
    #[serde(default)]
    pub(crate) head_pipeline: Option<PipelineWire>,
}

impl MergeRequestWire {
    /// The head commit (`sha`); an MR without one cannot be worked on.
    pub(crate) fn head_sha(&self) -> Result<&str, String> {
        self.sha
            .as_deref()
            .filter(|sha| !sha.is_empty())
            .ok_or_else(|| format!("merge request !{} has no head commit (`sha`)", self.iid))
    }

    /// The merge request as a round sees it. `opened` is open; `locked` (a
    /// merge in progress: nothing may be pushed to it any more) reads as
    /// closed, so the run ends; any other state is an error.
    pub(crate) fn pull_request(
        &self,
        viewer_has_pending_review: bool,
    ) -> Result<PullRequest, String> {
        let state = match self.state.as_str() {
            "opened" => PrStatus::Open,
            "closed" | "locked" => PrStatus::Closed,
            "merged" => PrStatus::Merged,
            other => return Err(format!("unknown merge request state `{other}`")),
        };
        Ok(PullRequest {
            number: self.iid,
            id: Some(self.id.to_string()),
            title: self.title.clone(),
            url: self.web_url.clone(),
            state,
            is_draft: self.draft.or(self.work_in_progress).unwrap_or(false),
            head_ref: self.source_branch.clone(),
            head_sha: self.head_sha()?.to_owned(),
            base_ref: self.target_branch.clone(),
            // The source branch lives in a fork: pushing to it is refused.
            is_cross_repository: self.source_project_id != self.target_project_id,
            viewer_has_pending_review,
            author: self.author.as_ref().map(UserWire::author),
        })
    }
}

/// A draft note (`GET …/draft_notes`): only its author sees it.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct DraftNoteWire {
    #[serde(default)]
    pub(crate) author_id: Option<u64>,
}

/// One end of a multi-line `line_range`.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct LinePointWire {
    #[serde(default)]
    pub(crate) line_code: Option<String>,
    #[serde(default)]
    pub(crate) old_line: Option<u32>,
    #[serde(default)]
    pub(crate) new_line: Option<u32>,
}

impl LinePointWire {
    /// `(old, new)` line numbers: the explicit fields, else those of the line
    /// code `<sha1 of path>_<old>_<new>` (0 meaning "not on that side").
    pub(crate) fn lines(&self) -> (Option<u32>, Option<u32>) {
        let from_code = self.line_code.as_deref().and_then(|code| {
            let mut parts = code.rsplitn(3, '_');
            let new: u32 = parts.next()?.parse().ok()?;
            let old: u32 = parts.next()?.parse().ok()?;
            Some((old, new))
        });
        let nonzero = |n: u32| (n > 0).then_some(n);
        let old = self
            .old_line
            .or_else(|| from_code.and_then(|(old, _)| nonzero(old)));
        let new = self
            .new_line
            .or_else(|| from_code.and_then(|(_, new)| nonzero(new)));
        (old, new)
    }
}

/// `line_range` of a multi-line diff note.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct LineRangeWire {
    #[serde(default)]
    pub(crate) start: Option<LinePointWire>,
}

/// Where a diff note is anchored.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct PositionWire {
    #[serde(default)]
    pub(crate) start_sha: Option<String>,
    #[serde(default)]
    pub(crate) head_sha: Option<String>,
    #[serde(default)]
    pub(crate) old_path: Option<String>,
    #[serde(default)]
    pub(crate) new_path: Option<String>,
    #[serde(default)]
    pub(crate) position_type: Option<String>,
    #[serde(default)]
    pub(crate) old_line: Option<u32>,
    #[serde(default)]
    pub(crate) new_line: Option<u32>,
    #[serde(default)]
    pub(crate) line_range: Option<LineRangeWire>,
}

/// A note (comment), in a discussion or alone.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct NoteWire {
    pub(crate) id: u64,
    #[serde(default)]
    pub(crate) body: String,
    #[serde(default)]
    pub(crate) author: Option<UserWire>,
    #[serde(default)]
    pub(crate) created_at: String,
    #[serde(default)]
    pub(crate) system: bool,
    #[serde(default)]
    pub(crate) resolvable: bool,
    #[serde(default)]
    pub(crate) resolved: Option<bool>,
    #[serde(default)]
    pub(crate) position: Option<PositionWire>,
    /// Moves when the note is edited.
    #[serde(default)]
    pub(crate) updated_at: Option<String>,
}

impl NoteWire {
    /// The note as Shepherd's own comment, found or just posted.
    pub(crate) fn into_posted(self, url: String) -> PostedComment {
        PostedComment {
            marker: Marker::find(&self.body),
            id: self.id.to_string(),
            database_id: Some(self.id),
            url,
            // GitLab's API posts notes directly: never into a pending review.
            review_state: None,
            author: self.author.as_ref().map(UserWire::author),
        }
    }
}

/// A discussion: a thread of notes, or one note alone (`individual_note`).
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct DiscussionWire {
    pub(crate) id: String,
    #[serde(default)]
    pub(crate) individual_note: bool,
    #[serde(default)]
    pub(crate) notes: Vec<NoteWire>,
}

impl DiscussionWire {
    /// Whether the discussion can be resolved: GitLab's rule, a discussion of
    /// several notes (never an individual note) with a resolvable note.
    pub(crate) fn is_resolvable(&self) -> bool {
        !self.individual_note && self.notes.iter().any(|n| n.resolvable && !n.system)
    }

    /// Whether it is resolved: every resolvable note is.
    pub(crate) fn is_resolved(&self) -> bool {
        self.is_resolvable()
            && self
                .notes
                .iter()
                .filter(|n| n.resolvable && !n.system)
                .all(|n| n.resolved == Some(true))
    }
}

/// A pipeline (lists, and a merge request's `head_pipeline`).
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct PipelineWire {
    pub(crate) id: u64,
    #[serde(default)]
    pub(crate) sha: String,
    #[serde(rename = "ref", default)]
    pub(crate) git_ref: Option<String>,
    #[serde(default)]
    pub(crate) status: String,
    #[serde(default)]
    pub(crate) source: Option<String>,
    #[serde(default)]
    pub(crate) name: Option<String>,
    #[serde(default)]
    pub(crate) web_url: Option<String>,
}

impl PipelineWire {
    /// Whether this is a pipeline of merge request `iid`'s merge ref
    /// (merged results or a merge train), whose `sha` is a merge commit.
    pub(crate) fn is_merge_ref_of(&self, iid: u64) -> bool {
        let merge = format!("refs/merge-requests/{iid}/merge");
        let train = format!("refs/merge-requests/{iid}/train");
        matches!(self.git_ref.as_deref(), Some(r) if r == merge || r == train)
    }
}

impl From<PipelineWire> for WorkflowRun {
    fn from(wire: PipelineWire) -> WorkflowRun {
        let (status, conclusion) = ci_state(&wire.status);
        WorkflowRun {
            id: wire.id,
            name: wire.name,
            head_sha: wire.sha,
            status,
            conclusion,
            run_attempt: 1,
            event: wire.source.unwrap_or_default(),
            url: wire.web_url.unwrap_or_default(),
        }
    }
}

/// `pipeline` of a job.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct JobPipelineWire {
    pub(crate) id: u64,
    #[serde(default)]
    pub(crate) sha: String,
}

/// A CI job.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct JobWire {
    pub(crate) id: u64,
    pub(crate) name: String,
    #[serde(default)]
    pub(crate) status: String,
    #[serde(default)]
    pub(crate) allow_failure: bool,
    #[serde(default)]
    pub(crate) web_url: Option<String>,
    #[serde(default)]
    pub(crate) pipeline: Option<JobPipelineWire>,
}

impl JobWire {
    /// Whether the job ended badly and can be retried (failed or canceled).
    pub(crate) fn failed(&self) -> bool {
        matches!(self.status.as_str(), "failed" | "canceled")
    }

    /// The job as the verdict reads it: required exactly when it may not fail.
    pub(crate) fn to_state(&self) -> CheckState {
        let (status, conclusion) = ci_state(&self.status);
        CheckState {
            name: self.name.clone(),
            source: CheckSource::CheckRun,
            status,
            conclusion,
            required: Some(!self.allow_failure),
        }
    }

    /// The job as a check run of commit `sha` (the pipeline's, when known).
    pub(crate) fn into_check_run(self, sha: &str) -> CheckRun {
        let (status, conclusion) = ci_state(&self.status);
        let pipeline = self.pipeline;
        CheckRun {
            id: self.id,
            name: self.name,
            head_sha: pipeline
                .as_ref()
                .map(|p| p.sha.clone())
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| sha.to_owned()),
            status,
            conclusion,
            details_url: self.web_url,
            check_suite_id: pipeline.map(|p| p.id),
            app_slug: Some("gitlab-ci".to_owned()),
            required: Some(!self.allow_failure),
        }
    }
}

/// A job's or a pipeline's status as a check status and conclusion.
///
/// `success`, `failed`, `canceled` and `skipped` are finished (`skipped`
/// passes, as on GitHub); `manual` and `scheduled` wait for a person or a
/// time (never a pass: a manual job that may not fail blocks its pipeline);
/// `running` and `canceling` are in progress; `created`, `pending`,
/// `preparing` and `waiting_for_resource` are queued. An unknown status
/// reads as pending: never a pass.
pub(crate) fn ci_state(status: &str) -> (CheckStatus, Option<CheckConclusion>) {
    match status {
        "success" => (CheckStatus::Completed, Some(CheckConclusion::Success)),
        "failed" => (CheckStatus::Completed, Some(CheckConclusion::Failure)),
        "canceled" => (CheckStatus::Completed, Some(CheckConclusion::Cancelled)),
        "skipped" => (CheckStatus::Completed, Some(CheckConclusion::Skipped)),
        "manual" | "scheduled" => (CheckStatus::Waiting, None),
        "running" | "canceling" => (CheckStatus::InProgress, None),
        "created" => (CheckStatus::Requested, None),
        "pending" | "preparing" | "waiting_for_resource" => (CheckStatus::Queued, None),
        _ => (CheckStatus::Pending, None),
    }
}

/// A pipeline's status in the rollup's vocabulary (`SUCCESS`, `FAILURE`,
/// `PENDING`, `ERROR`).
pub(crate) fn rollup_state(status: &str) -> String {
    let state = match ci_state(status) {
        (CheckStatus::Completed, Some(CheckConclusion::Success | CheckConclusion::Skipped)) => {
            "SUCCESS"
        }
        (CheckStatus::Completed, Some(CheckConclusion::Failure | CheckConclusion::Cancelled)) => {
            "FAILURE"
        }
        (CheckStatus::Completed, _) => "ERROR",
        _ => "PENDING",
    };
    state.to_owned()
}

/// One file of `GET …/repository/compare`.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct FileDiffWire {
    #[serde(default)]
    pub(crate) old_path: String,
    #[serde(default)]
    pub(crate) new_path: String,
    #[serde(default)]
    pub(crate) diff: String,
    #[serde(default)]
    pub(crate) renamed_file: bool,
    #[serde(default)]
    pub(crate) deleted_file: bool,
    #[serde(default)]
    pub(crate) too_large: Option<bool>,
    #[serde(default)]
    pub(crate) collapsed: Option<bool>,
}

/// `GET …/repository/compare`.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct CompareWire {
    #[serde(default)]
    pub(crate) diffs: Vec<FileDiffWire>,
    #[serde(default)]
    pub(crate) compare_timeout: bool,
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;

    #[test]
    fn bots_by_flag_or_by_name() {
        for bot in [
            "project_42_bot",
            "project_42_bot_3f2a9c",
            "group_7_bot2",
            "service_account_group_9_ab12",
            "GitLabDuo",
            "support-bot",
            "renovate-bot",
            "lint_bot",
            "coderabbit[bot]",
        ] {
            assert!(is_bot_username(bot), "{bot}");
        }
        for person in ["alice", "robot", "abbott", "project_x_bot1", "bot"] {
            assert!(!is_bot_username(person), "{person}");
        }
        let flagged = UserWire {
            id: Some(1),
            username: "reviewer".into(),
            bot: Some(true),
        };
        assert_eq!(flagged.author().kind, AuthorKind::Bot);
        let unflagged = UserWire {
            bot: Some(false),
            username: "lint_bot".into(),
            ..flagged
        };
        assert_eq!(unflagged.author().kind, AuthorKind::User, "the flag wins");
    }

    #[test]
    fn line_codes_give_line_numbers() {
        let point = LinePointWire {
            line_code: Some("588440f66559714280628a4f9799f0c4eb880a4a_10_12".into()),
            old_line: None,
            new_line: None,
        };
        assert_eq!(point.lines(), (Some(10), Some(12)));
        let added = LinePointWire {
            line_code: Some("588440f66559714280628a4f9799f0c4eb880a4a_0_5".into()),
            ..LinePointWire::default()
        };
        assert_eq!(added.lines(), (None, Some(5)));
        let explicit = LinePointWire {
            line_code: Some("x_1_1".into()),
            old_line: None,
            new_line: Some(9),
        };
        assert_eq!(explicit.lines(), (Some(1), Some(9)));
    }

    #[test]
    fn ci_states() {
        assert_eq!(
            ci_state("success"),
            (CheckStatus::Completed, Some(CheckConclusion::Success))
        );
        assert_eq!(ci_state("manual").0, CheckStatus::Waiting);
        assert_eq!(ci_state("mystery"), (CheckStatus::Pending, None));
        assert_eq!(rollup_state("canceled"), "FAILURE");
        assert_eq!(rollup_state("running"), "PENDING");
        assert_eq!(rollup_state("skipped"), "SUCCESS");
    }

    #[test]
    fn merge_request_states() {
        let json = serde_json::json!({
            "id": 9, "iid": 3, "title": "t", "web_url": "u", "state": "locked",
            "source_branch": "f", "target_branch": "main", "sha": "abc",
            "source_project_id": 1, "target_project_id": 1,
            "work_in_progress": true
        });
        let mr: MergeRequestWire = serde_json::from_value(json.clone()).unwrap();
        let pr = mr.pull_request(false).unwrap();
        assert_eq!(pr.state, PrStatus::Closed);
        assert!(pr.is_draft, "work_in_progress counts when draft is absent");
        let mut other = json;
        other["state"] = "reopened".into();
        let mr: MergeRequestWire = serde_json::from_value(other).unwrap();
        assert!(mr.pull_request(false).is_err());
    }
}
