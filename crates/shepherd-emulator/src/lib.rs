//! A local stand-in for GitHub and GitLab, for tests, demos and trying
//! Shepherd offline.
//!
//! It serves four clients: Shepherd itself (its forge layer's GraphQL
//! queries, REST calls and git pushes), GitHub's `gh` CLI, PyGithub and
//! python-gitlab; the conformance tests drive the last three, and plain
//! `git`, against it.
//!
//! [`Emulator::start`] takes a [`Scenario`] (users and tokens, a repository,
//! a pull request with review threads, comments and reviews, the file trees
//! of its base and head, CI checks, reviewer bots and faults) and serves,
//! for a GitHub scenario (the default):
//!
//! - GitHub's GraphQL API (a subset of GitHub's schema, with GitHub's names,
//!   node ids, `first`/`last` limits and cursor pagination, and the
//!   `resolveReviewThread`, `unresolveReviewThread` and
//!   `addPullRequestReviewThreadReply` mutations) at `/graphql` and
//!   `/api/graphql`;
//! - GitHub's REST API (pull requests, review comments and replies,
//!   reviews, issue comments, labels, check runs, statuses, required
//!   checks, workflow runs and job logs) at `/…` and `/api/v3/…`, with `Link`
//!   pagination and `ETag`s;
//! - the repository over git smart HTTP at `/{owner}/{repo}.git`, through the
//!   real `git http-backend`; a push to the PR's head updates the PR, outdates
//!   or moves threads, runs CI (real processes) and wakes the reviewer bots;
//! - the control API under `/_emulator/` (state, reset, act as a user,
//!   faults, waiting for idle, request counts).
//!
//! For a scenario with `forge = "gitlab"` ([`EmulatedForge::GitLab`]) it
//! serves GitLab's REST API v4 instead (merge requests with their changes,
//! versions, commits and approvals, discussions and notes, draft notes,
//! comparisons, pipelines, jobs and their traces) at `/api/v4/…`,
//! with git at `/{group/…}/{project}.git`, over the same state: the same
//! pushes, CI, bots, faults and control API.
//!
//! See the crate's README for the scenario format and every endpoint.

#![warn(missing_docs)]

mod auth;
mod automation;
mod bench;
mod bot_rules;
mod bots;
mod ci;
mod ci_state;
mod ci_writes;
mod comment_deletes;
mod control;
mod demo;
mod faults;
mod git;
mod git_http;
mod gitlab;
mod graphql;
mod hunk;
mod ids;
mod job_log;
mod lifecycle;
mod pr_derived;
mod push;
mod rest;
mod scenario;
mod server;
mod shared;
mod state;
mod tasks;

pub use automation::{
    path_shape, BotProfile, BotSpec, CheckSpec, CiSpec, EndpointAccess, FaultEffect, FaultSpec,
};
pub use control::{Act, ActError, ActOutcome, ActThread, ActThreadRef};
pub use git::GitError;
pub use rest::route_table as rest_route_table;
pub use scenario::{
    EmulatedForge, FileSpec, FileTree, IssueCommentSpec, Permission, PullRequestSpec,
    PullRequestStatus, RepositorySpec, ReviewSpec, ReviewStateSpec, Scenario, ScenarioError, Side,
    ThreadCommentSpec, ThreadSpec, UserKind, UserSpec, Visibility,
};
pub use server::{Emulator, EmulatorError, EmulatorUser, RunningEmulator};

/// The emulator's GraphQL schema in SDL: a subset of GitHub's.
pub fn graphql_sdl() -> String {
    graphql::sdl()
}
