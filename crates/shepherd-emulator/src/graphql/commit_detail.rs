//! A commit's message, dates and authors (`Commit.messageHeadline`,
//! `messageBody`, `authoredDate`, `committedDate`, `authors`), read from
//! the repository with git once per commit object, and `GitActor`.

use async_graphql::{Context, Object, Result, SimpleObject};

use super::actor::User;
use super::connection::{connection, paginate, Page, PageArgs, PageInfo};
use super::errors::not_found;
use super::objects::Commit;
use super::scalars::DateTime;
use super::view::RequestContext;
use crate::git::{self, CommitDetail};

/// The commit's details, read from git the first time a field asks.
pub(crate) async fn load(ctx: &Context<'_>, commit: &Commit) -> Result<CommitDetail> {
    let rc = ctx.data::<RequestContext>()?;
    let detail = commit
        .detail
        .get_or_init(|| async {
            let git_env = rc.shared.git.clone();
            let git_dir = rc.shared.read().repository.git_dir.clone();
            let sha = commit.sha.clone();
            tokio::task::spawn_blocking(move || git::commit_detail(&git_env, &git_dir, &sha))
                .await
                .ok()
                .flatten()
        })
        .await;
    detail
        .clone()
        .ok_or_else(|| not_found(format!("Could not load the commit {}", commit.sha)))
}

/// The first line of the message, as GitHub's `messageHeadline`.
pub(crate) fn headline(detail: &CommitDetail) -> String {
    detail.message.lines().next().unwrap_or_default().to_owned()
}

/// The message after its first line and the blank lines below it.
pub(crate) fn body(detail: &CommitDetail) -> String {
    match detail.message.split_once('\n') {
        Some((_, rest)) => rest.trim_start_matches('\n').to_owned(),
        None => String::new(),
    }
}

/// git's strict ISO 8601 date (`2024-01-01T00:00:00+00:00`) as GitHub
/// writes a UTC `DateTime` (`2024-01-01T00:00:00Z`).
pub(crate) fn date(iso: &str) -> DateTime {
    DateTime(match iso.strip_suffix("+00:00") {
        Some(utc) => format!("{utc}Z"),
        None => iso.to_owned(),
    })
}

/// Represents an actor in a Git commit (ie. an author or committer).
#[derive(Clone)]
pub(crate) struct GitActor {
    name: String,
    email: String,
}

#[Object]
impl GitActor {
    /// The name in the Git commit.
    async fn name(&self) -> Option<String> {
        Some(self.name.clone())
    }

    /// The email in the Git commit.
    async fn email(&self) -> Option<String> {
        Some(self.email.clone())
    }

    /// The GitHub user corresponding to the email field: `null`, as the
    /// emulator's commits carry git identities only (REST's commit
    /// `author` is `null` too).
    async fn user(&self) -> Option<User> {
        None
    }
}

connection!(
    GitActorConnection,
    GitActorEdge,
    GitActor,
    "The connection type for GitActor."
);

/// The commit's authors: its git author.
pub(crate) fn authors(detail: &CommitDetail, args: &PageArgs) -> Result<GitActorConnection> {
    let author = GitActor {
        name: detail.author_name.clone(),
        email: detail.author_email.clone(),
    };
    paginate("authors", vec![(1, author)], args).map(Into::into)
}
