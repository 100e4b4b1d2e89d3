//! Writes about who reviews: requested reviewers (GitHub's
//! `requested_reviewers`, GitLab's `reviewers`), what each profiled bot has
//! done on a pull request, and a comment edited in place.

use super::records::{BotProgress, PullRequestRecord, WriteError};
use super::store::State;
use crate::scenario::Permission;

impl PullRequestRecord {
    /// Everyone GitLab lists among a merge request's `reviewers`: those who
    /// submitted a review (GitLab adds a person who reviews to the
    /// reviewers, and a reviewer stays listed after reviewing; only their
    /// state changes) and were not taken off since, then those asked and not
    /// yet answered, each once.
    pub(crate) fn listed_reviewers(&self) -> Vec<&str> {
        let mut listed: Vec<&str> = Vec::new();
        let reviewed = self
            .reviews
            .iter()
            .filter(|r| r.submitted_at.is_some())
            .map(|r| r.author.as_str())
            .filter(|login| !self.unlisted_reviewers.iter().any(|u| u == login));
        for login in reviewed.chain(self.requested_reviewers.iter().map(String::as_str)) {
            if !listed.contains(&login) {
                listed.push(login);
            }
        }
        listed
    }
}

impl State {
    /// What bot `login` has done on pull request `number` (nothing yet when
    /// it never looked).
    pub(crate) fn bot_progress(&self, login: &str, number: u64) -> BotProgress {
        self.bot_progress
            .iter()
            .find(|p| p.login == login && p.number == number)
            .cloned()
            .unwrap_or_else(|| BotProgress {
                login: login.to_owned(),
                number,
                ..BotProgress::default()
            })
    }

    /// Bot `login`'s record on pull request `number`, made on first use.
    pub(crate) fn bot_progress_mut(&mut self, login: &str, number: u64) -> &mut BotProgress {
        let at = match self
            .bot_progress
            .iter()
            .position(|p| p.login == login && p.number == number)
        {
            Some(at) => at,
            None => {
                self.bot_progress.push(self.bot_progress(login, number));
                self.bot_progress.len() - 1
            }
        };
        &mut self.bot_progress[at]
    }

    /// Asks `logins` to review pull request `number` (`add`), or withdraws
    /// the request. GitHub's rules (`POST …/pulls/{n}/requested_reviewers`):
    /// a reviewer must have access to the repository (422 "Reviews may only
    /// be requested from collaborators…") and may not be the author (422
    /// "Review cannot be requested from pull request author."). Asking
    /// again someone already asked changes nothing.
    pub(crate) fn apply_review_request(
        &mut self,
        number: u64,
        logins: &[String],
        add: bool,
    ) -> Result<(), WriteError> {
        let p = self.pr_index(number)?;
        if add {
            for login in logins {
                let known = self
                    .user(login)
                    .filter(|u| u.permission != Permission::None);
                if known.is_none() {
                    return Err(WriteError::Unprocessable(format!(
                        "Reviews may only be requested from collaborators. One or more of the \
                         users or teams you specified is not a collaborator of the {} \
                         repository.",
                        self.repository.full_name()
                    )));
                }
                if *login == self.pull_requests[p].author {
                    return Err(WriteError::Unprocessable(
                        "Review cannot be requested from pull request author.".into(),
                    ));
                }
            }
        }
        let now = self.tick();
        let pr = self.pr_mut(p);
        for login in logins {
            pr.requested_reviewers.retain(|r| r != login);
            if add {
                pr.requested_reviewers.push(login.clone());
                pr.unlisted_reviewers.retain(|r| r != login);
            }
        }
        pr.updated_at = now;
        Ok(())
    }

    /// GitLab's `reviewer_ids` (`PUT …/merge_requests/:iid`): `wanted` become
    /// merge request `number`'s reviewers, replacing the list. One listed
    /// already keeps their state; one left out is off the list (and no
    /// longer asked); one not listed is asked. Answers the logins newly
    /// asked.
    pub(crate) fn apply_set_reviewers(
        &mut self,
        number: u64,
        wanted: &[String],
    ) -> Result<Vec<String>, WriteError> {
        let p = self.pr_index(number)?;
        let pr = &self.pull_requests[p];
        let listed: Vec<String> = pr
            .listed_reviewers()
            .into_iter()
            .map(str::to_owned)
            .collect();
        let gone: Vec<String> = listed
            .iter()
            .filter(|l| !wanted.contains(l))
            .cloned()
            .collect();
        let asked: Vec<String> = wanted
            .iter()
            .filter(|l| !listed.contains(l))
            .cloned()
            .collect();
        self.apply_review_request(number, &asked, true)?;
        self.apply_review_request(number, &gone, false)?;
        let pr = self.pr_mut(p);
        for login in gone {
            if !pr.unlisted_reviewers.contains(&login) {
                pr.unlisted_reviewers.push(login);
            }
        }
        Ok(asked)
    }

    /// GitLab's "request a new review" of a reviewer of merge request
    /// `number` (the GraphQL mutation `mergeRequestReviewerRereview`, run by
    /// `by`): `login` is asked again, which puts their reviewer state back
    /// to `unreviewed`, and `by` notes "requested review from @login", as
    /// GitLab's `MergeRequests::RequestReviewService` does
    /// (<https://docs.gitlab.com/api/graphql/reference/#mutationmergerequestreviewerrereview>).
    /// Someone not among the [listed reviewers](PullRequestRecord::listed_reviewers)
    /// is `NotFound("Reviewer not found")`, GitLab's message.
    pub(crate) fn apply_rereview(
        &mut self,
        number: u64,
        by: &str,
        login: &str,
    ) -> Result<(), WriteError> {
        let p = self.pr_index(number)?;
        if !self.pull_requests[p].listed_reviewers().contains(&login) {
            return Err(WriteError::NotFound("Reviewer not found".into()));
        }
        let pr = self.pr_mut(p);
        pr.requested_reviewers.retain(|r| r != login);
        pr.requested_reviewers.push(login.to_owned());
        self.push_system_note(p, by, &format!("requested review from @{login}"), false);
        Ok(())
    }

    /// Replaces the body of conversation comment `id` (a bot's walkthrough
    /// edited in place): `updated_at` moves, `created_at` stays.
    pub(crate) fn apply_issue_comment_edit(
        &mut self,
        number: u64,
        id: u64,
        body: &str,
    ) -> Result<(), WriteError> {
        let p = self.pr_index(number)?;
        self.check_body(body)?;
        let now = self.tick();
        let pr = self.pr_mut(p);
        let comment = pr
            .issue_comments
            .iter_mut()
            .find(|c| c.database_id == id)
            .ok_or_else(|| WriteError::NotFound("Not Found".into()))?;
        comment.body = body.to_owned();
        comment.updated_at = now.clone();
        pr.updated_at = now;
        Ok(())
    }
}
