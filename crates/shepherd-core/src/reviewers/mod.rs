//! Whether the reviewers a run waits for have seen the head it pushed
//! (issue 27: converge only when they have).
//!
//! Review bots are slower than CI and say "done" in their own ways, so a
//! reviewer's state on a head is read from the forge's structured data,
//! never from the time of a comment that may have been edited in place:
//!
//! - **reviewed**: a submitted review by that account whose commit is the
//!   head (Codex and Copilot submit one; CodeRabbit too when it has
//!   findings); a finished commit status or check run of that account on
//!   the head (CodeRabbit's `CodeRabbit` status goes from pending to
//!   success); on GitLab, whose reviews carry no commit, a note or an
//!   approval by that account made after the head was pushed.
//! - **declined**: a notice by that account after the push that it did not
//!   review (rate limit, quota, paused, skipped: [`notice`]), or a finished
//!   status of it whose description says so (CodeRabbit reports a skipped
//!   review as a `success` status).
//! - **pending**: review requested from it, or its status or check run on
//!   the head still running, or nothing yet while the wait lasts.
//! - **not-seen**: the wait is over and nothing finished.
//!
//! A status, check run, review or note counts only when the reviewer's own
//! account made it: one by another account proves nothing.

pub mod notice;
#[cfg(test)]
mod tests;

use std::time::Duration;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::ci::CheckOutcome;
pub use crate::model::ReviewState;
pub use notice::{find_notice, DeclineReason, Notice};

/// A review as the forge lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewSeen {
    /// Its author's login.
    pub author: String,
    /// Whether the author is a bot account.
    pub author_is_bot: bool,
    /// The commit it was submitted on (GitHub's `commit_id`); `None` where the
    /// forge does not say.
    pub commit: Option<String>,
    /// Its state.
    pub state: ReviewState,
    /// Its body, for a notice.
    pub body: String,
}

/// A commit status or check run on the head, with the account that made it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignalSeen {
    /// The status's context, or the check run's name.
    pub name: String,
    /// The account that made it: a status's creator, a check run's app (as
    /// its bot login, `slug[bot]`), a GitLab status's author. `None` when the
    /// forge did not say: then it is no one's.
    pub creator: Option<String>,
    /// What it says.
    pub outcome: CheckOutcome,
    /// A status's description, or a check run's title.
    pub description: Option<String>,
}

/// A comment of the PR's conversation (GitHub issue comment, GitLab note).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteSeen {
    /// Its author's login.
    pub author: String,
    /// Its body.
    pub body: String,
    /// When it was made.
    pub created_at: OffsetDateTime,
    /// When it was last edited, if the forge says.
    pub updated_at: Option<OffsetDateTime>,
}

/// What one read of the forge showed of a PR's reviews (the forge client
/// fills it; [`Activity::look`] reads it for a head).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Activity {
    /// Whether the forge's reviews carry their commit (GitHub).
    pub reviews_carry_commit: bool,
    /// The PR's reviews, every head's.
    pub reviews: Vec<ReviewSeen>,
    /// The head's commit statuses and check runs.
    pub signals: Vec<SignalSeen>,
    /// Logins review is requested from.
    pub requested: Vec<String>,
    /// The conversation's comments made or edited since the read's `since`.
    pub notes: Vec<NoteSeen>,
    /// Approvals with their time (GitLab's "approved this merge request").
    pub approvals: Vec<(String, OffsetDateTime)>,
    /// When the forge saw the head arrive, by its own clock (GitLab's
    /// "added N commits" note; on GitHub the first status of the head), when
    /// it shows it. Times of comments are compared with this rather than
    /// with the local clock.
    pub pushed_at: Option<OffsetDateTime>,
}

impl Activity {
    /// The look at `head`, pushed at the forge's [`Activity::pushed_at`],
    /// else at `pushed_at`.
    pub fn look<'a>(&'a self, head: &'a str, pushed_at: OffsetDateTime) -> HeadLook<'a> {
        HeadLook {
            head,
            pushed_at: self.pushed_at.unwrap_or(pushed_at),
            activity: self,
        }
    }
}

/// What the forge showed of a head's reviews: an [`Activity`] read for
/// one head.
#[derive(Debug, Clone, Copy)]
pub struct HeadLook<'a> {
    /// The head commit.
    pub head: &'a str,
    /// When the head was pushed.
    pub pushed_at: OffsetDateTime,
    /// What the forge showed.
    pub activity: &'a Activity,
}

/// How a reviewer showed it reviewed the head.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "by", rename_all = "kebab-case")]
pub enum Evidence {
    /// A review submitted on the head.
    Review {
        /// Its state.
        state: ReviewState,
    },
    /// A finished commit status or check run on the head.
    Signal {
        /// Its context or name.
        name: String,
    },
    /// A note after the push (GitLab).
    Note,
    /// An approval after the push (GitLab).
    Approval,
}

/// Why a reviewer is still awaited.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "why", rename_all = "kebab-case")]
pub enum Awaiting {
    /// Review is requested from it.
    Requested,
    /// Its status or check run on the head is running.
    Running {
        /// Its context or name.
        name: String,
    },
    /// Nothing of it on the head yet.
    Nothing,
}

/// A reviewer's state on one head.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum ReviewerState {
    /// It reviewed the head.
    Reviewed {
        /// How it showed it.
        evidence: Evidence,
    },
    /// Still awaited.
    Pending {
        /// Why.
        awaiting: Awaiting,
    },
    /// It said it would not review.
    Declined {
        /// Its notice.
        notice: Notice,
    },
    /// The wait ended without a review.
    NotSeen {
        /// Whether it had started (requested, or a running status).
        started: bool,
    },
}

impl ReviewerState {
    /// `reviewed`, `pending`, `declined`, `not-seen`.
    pub fn as_str(&self) -> &'static str {
        match self {
            ReviewerState::Reviewed { .. } => "reviewed",
            ReviewerState::Pending { .. } => "pending",
            ReviewerState::Declined { .. } => "declined",
            ReviewerState::NotSeen { .. } => "not-seen",
        }
    }

    /// Whether the wait for it is over (anything but pending).
    pub fn is_settled(&self) -> bool {
        !matches!(self, ReviewerState::Pending { .. })
    }
}

/// What opens the marker of a trigger comment Shepherd posted.
const TRIGGER_MARKER: &str = "<!-- shepherd:trigger head=";

/// The body of the comment that asks a bot to review `head` again: the
/// configured `text`, and a marker naming the head, so that the comment is
/// posted once per head (by this run or a later one) and is never taken for
/// feedback.
pub fn trigger_body(text: &str, head: &str) -> String {
    format!("{}\n\n{TRIGGER_MARKER}{head} -->", text.trim_end())
}

/// Whether `body`, written by `author`, is Shepherd's trigger comment: the
/// viewer's comment with the trigger marker (for `head`, when given). A
/// marker in anyone else's comment is text.
pub fn is_own_trigger(body: &str, author: Option<&str>, viewer: &str, head: Option<&str>) -> bool {
    let Some(author) = author else { return false };
    if !same_login(author, viewer) {
        return false;
    }
    match head {
        Some(head) => body.contains(&format!("{TRIGGER_MARKER}{head} -->")),
        None => body.contains(TRIGGER_MARKER),
    }
}

/// Whether two logins name one account: case aside, and with or without
/// the `[bot]` suffix (GitHub's REST API adds it to bot logins, GraphQL
/// does not).
pub fn same_login(a: &str, b: &str) -> bool {
    fn stem(login: &str) -> &str {
        let l = login.trim();
        l.strip_suffix("[bot]").unwrap_or(l)
    }
    stem(a).eq_ignore_ascii_case(stem(b))
}

/// `login`'s state on the head of `look`; `wait_over` says whether its
/// settle timeout has passed.
pub fn state_of(login: &str, look: &HeadLook<'_>, wait_over: bool) -> ReviewerState {
    if let Some(evidence) = reviewed(login, look) {
        return ReviewerState::Reviewed { evidence };
    }
    if let Some(notice) = declined(login, look) {
        return ReviewerState::Declined { notice };
    }
    let awaiting = awaiting(login, look);
    if wait_over {
        return ReviewerState::NotSeen {
            started: awaiting != Awaiting::Nothing,
        };
    }
    ReviewerState::Pending { awaiting }
}

/// How `login` showed it reviewed the head, if it did.
fn reviewed(login: &str, look: &HeadLook<'_>) -> Option<Evidence> {
    let review = look.activity.reviews.iter().find(|r| {
        same_login(&r.author, login)
            && r.state != ReviewState::Pending
            && r.commit.as_deref() == Some(look.head)
            && find_notice(&r.body).is_none()
    });
    if let Some(r) = review {
        return Some(Evidence::Review { state: r.state });
    }
    let signal = look.activity.signals.iter().find(|s| {
        owned_by(s, login)
            && matches!(s.outcome, CheckOutcome::Pass | CheckOutcome::Fail)
            && s.description.as_deref().and_then(find_notice).is_none()
    });
    if let Some(s) = signal {
        return Some(Evidence::Signal {
            name: s.name.clone(),
        });
    }
    if look.activity.reviews_carry_commit {
        return None;
    }
    // GitLab: what it wrote after the push, by the time it was made (an
    // edit of an older note proves nothing).
    let noted = look.activity.notes.iter().any(|n| {
        same_login(&n.author, login)
            && n.created_at > look.pushed_at
            && find_notice(&n.body).is_none()
    });
    if noted {
        return Some(Evidence::Note);
    }
    look.activity
        .approvals
        .iter()
        .any(|(who, at)| same_login(who, login) && *at > look.pushed_at)
        .then_some(Evidence::Approval)
}

/// `login`'s notice after the push that it did not review, if any: in a
/// note made or edited after the push (CodeRabbit edits its summary comment
/// in place to say so), in a review on the head, or in a finished status's
/// description.
fn declined(login: &str, look: &HeadLook<'_>) -> Option<Notice> {
    let from_status = look
        .activity
        .signals
        .iter()
        .filter(|s| owned_by(s, login) && s.outcome != CheckOutcome::Pending)
        .find_map(|s| s.description.as_deref().and_then(find_notice));
    let from_review = look
        .activity
        .reviews
        .iter()
        .filter(|r| same_login(&r.author, login) && r.commit.as_deref() == Some(look.head))
        .find_map(|r| find_notice(&r.body));
    let from_note = look
        .activity
        .notes
        .iter()
        .filter(|n| {
            same_login(&n.author, login)
                && (n.created_at > look.pushed_at
                    || n.updated_at.is_some_and(|at| at > look.pushed_at))
        })
        // The latest first: it says where things stand.
        .max_by_key(|n| n.updated_at.unwrap_or(n.created_at).max(n.created_at))
        .and_then(|n| find_notice(&n.body));
    // The notice that names its wait says the most (CodeRabbit's status
    // says "Review rate limited", its comment when the next review is).
    let found = [from_note, from_review, from_status];
    let with_wait = found.iter().flatten().find(|n| n.wait.is_some()).cloned();
    with_wait.or_else(|| found.into_iter().flatten().next())
}

/// Why `login` is awaited, as far as the forge shows.
fn awaiting(login: &str, look: &HeadLook<'_>) -> Awaiting {
    if let Some(s) = look
        .activity
        .signals
        .iter()
        .find(|s| owned_by(s, login) && s.outcome == CheckOutcome::Pending)
    {
        return Awaiting::Running {
            name: s.name.clone(),
        };
    }
    if look.activity.requested.iter().any(|r| same_login(r, login)) {
        return Awaiting::Requested;
    }
    Awaiting::Nothing
}

fn owned_by(signal: &SignalSeen, login: &str) -> bool {
    signal
        .creator
        .as_deref()
        .is_some_and(|c| same_login(c, login))
}

/// The reviewers awaited when `[reviewers] wait_for` is not set: the
/// review bots among `known_bots` (`[trust] bots`) that put a commit status
/// or check run of their own on the head (CodeRabbit's `CodeRabbit`
/// status). Such a bot says when it is done, so waiting for it costs only
/// its review's time. A bot that only comments is not awaited unless
/// listed: its clean pass (Codex posts no review when it finds nothing)
/// looks the same as not having started, and would cost the whole timeout
/// on every push.
/// The CI's own accounts: their checks are CI's, which the CI wait
/// already waited for, not reviews.
pub fn default_wait_for(activity: &Activity, known_bots: &[String]) -> Vec<String> {
    const CI_ACCOUNTS: &[&str] = &["github-actions", "gitlab-ci"];
    let mut logins: Vec<String> = Vec::new();
    for creator in activity.signals.iter().filter_map(|s| s.creator.as_deref()) {
        let known = known_bots.iter().any(|b| same_login(b, creator))
            && !CI_ACCOUNTS.iter().any(|ci| same_login(ci, creator));
        if known && !logins.iter().any(|l| same_login(l, creator)) {
            logins.push(creator.to_owned());
        }
    }
    logins
}

/// The people whose latest review requests changes on a head other than
/// `head`: their review is stale, and the report names them. A review
/// whose commit the forge does not say (GitLab's reviewer states) is
/// counted, with no commit: it is not known to be of `head`.
pub fn changes_requested_on_older_heads(
    reviews: &[ReviewSeen],
    head: &str,
    requested: &[String],
) -> Vec<ChangesRequested> {
    let mut latest: Vec<&ReviewSeen> = Vec::new();
    for r in reviews.iter().filter(|r| {
        matches!(
            r.state,
            ReviewState::Approved | ReviewState::ChangesRequested | ReviewState::Dismissed
        )
    }) {
        match latest.iter_mut().find(|l| same_login(&l.author, &r.author)) {
            Some(slot) => *slot = r,
            None => latest.push(r),
        }
    }
    latest
        .into_iter()
        .filter(|r| r.state == ReviewState::ChangesRequested && r.commit.as_deref() != Some(head))
        .map(|r| ChangesRequested {
            login: r.author.clone(),
            commit: r.commit.clone(),
            head: head.to_owned(),
            open_threads: None,
            requested: requested.iter().any(|l| same_login(l, &r.author)),
            rerequested: false,
        })
        .collect()
}

/// A person whose latest review requests changes on a head older than the
/// one the round ends at, for the report and the CI outputs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangesRequested {
    /// Their login.
    pub login: String,
    /// The commit their review was on; `None` where the forge does not say
    /// (GitLab).
    pub commit: Option<String>,
    /// The head the round ends at.
    pub head: String,
    /// How many review threads they opened are still open (not handled:
    /// no reply of Shepherd's yet); `None` until the post-CI look counted.
    pub open_threads: Option<usize>,
    /// Whether review is requested from them on the forge.
    pub requested: bool,
    /// Whether this run re-requested their review of `head`.
    pub rerequested: bool,
}

impl ChangesRequested {
    /// Counts their threads among `open` (the post-CI look's items that
    /// wait for Shepherd).
    pub fn count_open<'a>(&mut self, open: impl IntoIterator<Item = &'a str>) {
        self.open_threads = Some(
            open.into_iter()
                .filter(|author| same_login(author, &self.login))
                .count(),
        );
    }

    /// Whether every thread of theirs is handled (none open), as counted.
    pub fn all_handled(&self) -> bool {
        self.open_threads == Some(0)
    }

    /// What a report says of them: `alice requested changes on 1a2b3c4, an
    /// older head; their threads are handled; review requested again`.
    pub fn describe(&self) -> String {
        let mut s = match &self.commit {
            Some(commit) => format!(
                "{} requested changes on {}, an older head",
                self.login,
                commit.chars().take(7).collect::<String>()
            ),
            None => format!(
                "{} requested changes (the forge does not say on which head; the head is now {})",
                self.login,
                self.head.chars().take(7).collect::<String>()
            ),
        };
        match self.open_threads {
            Some(0) => s.push_str("; their threads are handled"),
            Some(1) => s.push_str("; 1 of their threads is open"),
            Some(n) => s.push_str(&format!("; {n} of their threads are open")),
            None => {}
        }
        if self.rerequested {
            s.push_str("; their review was requested again");
        } else if self.requested {
            s.push_str("; their review is requested");
        }
        s
    }
}

/// One reviewer's state on a head, for the report and the CI outputs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewerOnHead {
    /// The reviewer's login.
    pub login: String,
    /// The head commit.
    pub head: String,
    /// Its state there.
    #[serde(flatten)]
    pub state: ReviewerState,
    /// How long it was waited for after the push, in seconds.
    #[serde(default)]
    pub waited_secs: u64,
}

impl ReviewerOnHead {
    /// Whether it reviewed the head.
    pub fn reviewed(&self) -> bool {
        matches!(self.state, ReviewerState::Reviewed { .. })
    }

    /// Its head as reports abbreviate a commit (7 characters).
    fn short_head(&self) -> String {
        self.head.chars().take(7).collect()
    }

    /// What a report says of it: [`Self::statement`], or that it reviewed
    /// the head (`codex[bot] reviewed 1a2b3c4`).
    pub fn describe(&self) -> String {
        self.statement()
            .unwrap_or_else(|| format!("{} reviewed {}", self.login, self.short_head()))
    }

    /// The sentence a report says of it, when it did not review:
    /// `coderabbitai[bot] did not review 1a2b3c4: rate limited, next review
    /// in 32 min`. `None` when it reviewed.
    pub fn statement(&self) -> Option<String> {
        let settle_timeout = Duration::from_secs(self.waited_secs);
        let short = self.short_head();
        let who = &self.login;
        match &self.state {
            ReviewerState::Reviewed { .. } => None,
            ReviewerState::Pending { .. } => {
                Some(format!("{who} has not finished reviewing {short} yet"))
            }
            ReviewerState::Declined { notice } => {
                let mut s = format!("{who} did not review {short}: {}", notice.reason.as_words());
                if let Some(wait) = notice.wait {
                    s.push_str(&format!(", next review in {}", minutes(wait)));
                }
                s.push_str(&format!(" (it said: \"{}\")", notice.quote));
                Some(s)
            }
            ReviewerState::NotSeen { started } => Some(format!(
                "{who} did not review {short} within {}{}",
                minutes(settle_timeout),
                if *started { " (it had started)" } else { "" }
            )),
        }
    }
}

/// `32 min`, `45 s`, `2 h 5 min`.
fn minutes(d: Duration) -> String {
    let secs = d.as_secs();
    match secs {
        0..=59 => format!("{secs} s"),
        60..=3599 => format!("{} min", secs.div_ceil(60)),
        _ => {
            let (h, m) = (secs / 3600, (secs % 3600) / 60);
            if m == 0 {
                format!("{h} h")
            } else {
                format!("{h} h {m} min")
            }
        }
    }
}
