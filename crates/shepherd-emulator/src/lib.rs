//! A local stand-in for GitHub, for tests, demos and trying Shepherd offline.
//!
//! [`Emulator::start`] takes a [`Scenario`] (users and tokens, a repository,
//! a pull request with review threads, comments and reviews, and the file
//! trees of its base and head) and serves:
//!
//! - GitHub's GraphQL API (a subset of GitHub's schema, with GitHub's names,
//!   node ids, `first`/`last` limits and cursor pagination) at `/graphql` and
//!   `/api/graphql`;
//! - GitHub's REST API (`/user`, `/repos/{owner}/{repo}`,
//!   `/repos/{owner}/{repo}/pulls/{number}`) at `/…` and `/api/v3/…`;
//! - the repository over git smart HTTP at `/{owner}/{repo}.git`, through the
//!   real `git http-backend`; a push to the PR's head updates the PR;
//! - `GET /_emulator/state`, the whole state as JSON.
//!
//! Requests are counted per GraphQL operation and per REST route so tests can
//! assert how many calls a client made. See the crate's README for the
//! scenario format.

#![warn(missing_docs)]

mod auth;
mod control;
mod git;
mod git_http;
mod graphql;
mod ids;
mod push;
mod rest;
mod scenario;
mod server;
mod state;

pub use git::GitError;
pub use scenario::{
    FileSpec, FileTree, IssueCommentSpec, Permission, PullRequestSpec, PullRequestStatus,
    RepositorySpec, ReviewSpec, ReviewStateSpec, Scenario, ScenarioError, Side, ThreadCommentSpec,
    ThreadSpec, UserKind, UserSpec,
};
pub use server::{Emulator, EmulatorError, EmulatorUser, RunningEmulator};

/// The emulator's GraphQL schema in SDL: a subset of GitHub's.
pub fn graphql_sdl() -> String {
    graphql::sdl()
}
