//! Stage 12, push: the detached HEAD to the PR's head branch, never forced.
//! A rejected push (someone pushed meanwhile) re-syncs and re-runs the round;
//! it never overwrites. A push whose answer was lost is checked against the
//! remote head before anything else happens, so a push that landed is never
//! repeated (`push.json`).

use serde::Serialize;

use super::pr_state::short;
use super::{Flow, Round, RoundEnd, Runner};
use crate::run::error::Result;
use crate::run::options::{ProgressEvent, Stage};
use crate::worktree::PushOutcome;

#[derive(Serialize)]
struct PushArtifact<'a> {
    pushed: bool,
    head_ref: &'a str,
    from: &'a str,
    sha: Option<String>,
    commits: &'a [String],
    outcome: String,
}

impl Runner {
    pub(crate) async fn stage_push(&mut self, round: &mut Round) -> Result<Flow> {
        let head_ref = round.snapshot().pr.head_ref.clone();
        if round.commits.is_empty() {
            self.artifact(
                round,
                "push.json",
                &PushArtifact {
                    pushed: false,
                    head_ref: &head_ref,
                    from: &round.start_sha,
                    sha: None,
                    commits: &round.commits,
                    outcome: "nothing to push".to_owned(),
                },
            )?;
            return Ok(Ok(()));
        }
        let local = self.git(|wt| wt.head_sha()).await?.0;
        self.event(
            Some(round.n),
            "push-started",
            serde_json::json!({ "sha": local, "head_ref": head_ref }),
        )?;
        let target = head_ref.clone();
        let outcome = self.git(move |wt| wt.push(&target)).await;
        let (pushed, text, end) = match outcome {
            Ok(PushOutcome::Pushed { sha }) => (Some(sha.0), "pushed".to_owned(), None),
            Ok(PushOutcome::Rejected { stderr }) => {
                let note = format!(
                    "the push to {head_ref} was rejected (someone pushed meanwhile); re-syncing and \
                     re-running the round"
                );
                self.emit(ProgressEvent::Note {
                    message: note.clone(),
                });
                (
                    None,
                    format!("rejected: {stderr}"),
                    Some(RoundEnd::Restart { note }),
                )
            }
            Err(err) => {
                // The push may have landed with its answer lost.
                let target = head_ref.clone();
                let remote = self.git(move |wt| wt.remote_head(&target)).await;
                match remote {
                    Ok(remote) if remote.0 == local => (
                        Some(local.clone()),
                        format!("the push reported an error but the remote has it: {err}"),
                        None,
                    ),
                    _ => (
                        None,
                        format!("failed: {err}"),
                        Some(RoundEnd::Failed {
                            reason: format!("cannot push to {head_ref}: {err}"),
                        }),
                    ),
                }
            }
        };
        self.artifact(
            round,
            "push.json",
            &PushArtifact {
                pushed: pushed.is_some(),
                head_ref: &head_ref,
                from: &round.start_sha,
                sha: pushed.clone(),
                commits: &round.commits,
                outcome: text.clone(),
            },
        )?;
        self.event(
            Some(round.n),
            "push-finished",
            serde_json::json!({ "sha": pushed, "outcome": text }),
        )?;
        let summary = match &pushed {
            Some(sha) => format!(
                "{} commit(s) pushed to {head_ref} at {}",
                round.commits.len(),
                short(sha)
            ),
            None => text,
        };
        if let Some(sha) = &pushed {
            self.run.review_base = Some(sha.clone());
        }
        round.pushed = pushed;
        self.stage_done(round, Stage::Push, summary)?;
        Ok(match end {
            Some(end) => Err(end),
            None => Ok(()),
        })
    }
}
