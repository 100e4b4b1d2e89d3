//! `PullRequest` and what hangs off it: review threads, review comments,
//! reviews and issue comments, with GitHub's names and nullability: the
//! resolvers a file an object, their enums, and the JSON fast path.

mod common;
mod enums;
mod fast_path;
mod issue_comment;
mod pull;
mod review;
mod review_comment;
mod thread;

pub(crate) use enums::PullRequestState;
