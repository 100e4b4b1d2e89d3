//! Writes to a pull request itself: conversation comments, its title, body
//! and state, and its labels.

use super::records::{IssueCommentRecord, LabelEventRecord, PullRequestEdit, WriteError};
use super::store::{gitlab_draft_title, State};
use crate::scenario::{EmulatedForge, PullRequestStatus};

impl State {
    /// A comment body must not be blank, nor longer than the forge takes:
    /// GitHub 65,536 characters, GitLab (notes) 1,000,000.
    pub(super) fn check_body(&self, body: &str) -> Result<(), WriteError> {
        if body.trim().is_empty() {
            return Err(WriteError::Unprocessable("Body cannot be blank".into()));
        }
        let (limit, what) = match self.forge {
            EmulatedForge::GitHub => (65_536, "Body"),
            EmulatedForge::GitLab => (1_000_000, "Note"),
        };
        if body.chars().count() > limit {
            return Err(WriteError::Unprocessable(format!(
                "{what} is too long (maximum is {limit} characters)"
            )));
        }
        Ok(())
    }

    /// A top-level (issue) comment; returns its database id.
    pub(crate) fn apply_issue_comment(
        &mut self,
        number: u64,
        author: &str,
        body: &str,
    ) -> Result<u64, WriteError> {
        let p = self.pr_index(number)?;
        self.check_body(body)?;
        let database_id = self.next_id();
        let created_at = self.tick();
        let pr = self.pr_mut(p);
        pr.issue_comments.push(IssueCommentRecord::new(
            database_id,
            author,
            body,
            created_at.clone(),
        ));
        pr.updated_at = created_at;
        Ok(database_id)
    }

    /// `PATCH …/pulls/{n}`: title, body, open or closed.
    pub(crate) fn apply_pull_request_edit(
        &mut self,
        number: u64,
        edit: &PullRequestEdit,
    ) -> Result<(), WriteError> {
        let p = self.pr_index(number)?;
        if let Some(title) = &edit.title {
            if title.trim().is_empty() {
                return Err(WriteError::Unprocessable("title cannot be blank".into()));
            }
        }
        if edit.state.is_some() && self.pull_requests[p].status == PullRequestStatus::Merged {
            return Err(WriteError::Unprocessable(
                "Cannot change the state of a merged pull request".into(),
            ));
        }
        let now = self.tick();
        let gitlab = self.forge == EmulatedForge::GitLab;
        let pr = self.pr_mut(p);
        if let Some(title) = &edit.title {
            pr.title = title.clone();
            // On GitLab the title says whether it is a draft.
            if gitlab {
                pr.draft = gitlab_draft_title(title);
            }
        }
        if let Some(body) = &edit.body {
            pr.body = body.clone();
        }
        if let Some(state) = edit.state {
            if state != pr.status {
                pr.closed_at = (state == PullRequestStatus::Closed).then(|| now.clone());
                pr.status = state;
            }
        }
        pr.updated_at = now;
        Ok(())
    }

    /// `POST …/issues/{n}/labels` by `actor`: adds labels (creating unknown
    /// ones); each label not there before gets an event.
    pub(crate) fn apply_add_labels(
        &mut self,
        number: u64,
        actor: &str,
        names: &[String],
    ) -> Result<(), WriteError> {
        let p = self.pr_index(number)?;
        check_label_names(names)?;
        let now = self.tick();
        for name in names {
            self.ensure_label(name);
            let canonical = self
                .label(name)
                .map_or_else(|| name.clone(), |l| l.name.clone());
            if self.pull_requests[p]
                .labels
                .iter()
                .any(|l| l.eq_ignore_ascii_case(name))
            {
                continue;
            }
            let database_id = self.next_id();
            let pr = self.pr_mut(p);
            pr.labels.push(canonical.clone());
            pr.label_events.push(LabelEventRecord {
                database_id,
                actor: actor.to_owned(),
                label: canonical,
                added: true,
                created_at: now.clone(),
            });
        }
        self.pr_mut(p).updated_at = now;
        Ok(())
    }

    /// `PUT …/issues/{n}/labels` (GitHub) or GitLab's `labels=` by
    /// `actor`: the labels become `names` (compared case-insensitively);
    /// each label removed and each added gets its event.
    pub(crate) fn apply_set_labels(
        &mut self,
        number: u64,
        actor: &str,
        names: &[String],
    ) -> Result<(), WriteError> {
        let p = self.pr_index(number)?;
        check_label_names(names)?;
        let gone: Vec<String> = self.pull_requests[p]
            .labels
            .iter()
            .filter(|l| !names.iter().any(|n| n.eq_ignore_ascii_case(l)))
            .cloned()
            .collect();
        for label in &gone {
            self.apply_remove_label(number, actor, label)?;
        }
        self.apply_add_labels(number, actor, names)
    }

    /// `DELETE …/issues/{n}/labels/{name}` by `actor`, with its event.
    pub(crate) fn apply_remove_label(
        &mut self,
        number: u64,
        actor: &str,
        name: &str,
    ) -> Result<(), WriteError> {
        let p = self.pr_index(number)?;
        let pr = &self.pull_requests[p];
        let Some(index) = pr.labels.iter().position(|l| l.eq_ignore_ascii_case(name)) else {
            return Err(WriteError::NotFound("Label does not exist".into()));
        };
        let now = self.tick();
        let database_id = self.next_id();
        let pr = self.pr_mut(p);
        let label = pr.labels.remove(index);
        pr.label_events.push(LabelEventRecord {
            database_id,
            actor: actor.to_owned(),
            label,
            added: false,
            created_at: now.clone(),
        });
        pr.updated_at = now;
        Ok(())
    }
}

/// Label names must not be blank (GitHub's 422, GitLab's 400).
pub(super) fn check_label_names(names: &[String]) -> Result<(), WriteError> {
    if names.iter().any(|n| n.trim().is_empty()) {
        return Err(WriteError::Unprocessable(
            "a label name cannot be blank".into(),
        ));
    }
    Ok(())
}
