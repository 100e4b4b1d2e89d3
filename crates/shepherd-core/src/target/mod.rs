//! Which pull request (GitHub) or merge request (GitLab) a run works on.
//!
//! The target is parsed deterministically from what the user typed (SPEC
//! section 2), never guessed by an agent, so every round of a run uses the
//! same number. Accepted forms, alone or inside free text:
//!
//! - a number: `42`;
//! - a GitHub-style reference: `#42`, `PR #42`, `PR 42`, `PR#42`, `pr42`,
//!   `pull request #42`, `owner/repo#42`;
//! - a GitLab-style reference: `!42`, `MR !42`, `MR 42`, `mr42`,
//!   `merge request !42`, `group/sub/project!42`;
//! - a GitHub pull request URL on any host (`…/owner/repo/pull/42`, with or
//!   without `/files`, `/commits`, `/checks`, a query, `#discussion_rN`,
//!   `#rN`, `#issuecomment-N`, `#pullrequestreview-N`);
//! - a GitLab merge request URL (`…/group/sub/project/-/merge_requests/42`, the
//!   legacy `…/project/merge_requests/42`, with `/diffs`, `#note_N`).
//!
//! References with a sigil, a keyword or a URL are *explicit*; a bare number
//! counts only when the text holds no explicit reference, so "resolve PR 42
//! in 3 rounds" names 42. The same number repeated is fine ("PR 42 (#42)").
//! Issues (`issue #5`, `…/issues/5`) are never targets: they are set aside,
//! and rejected when nothing else is left.
//!
//! The forge comes from the URL, else `--forge`, else a host configured as
//! GitHub or GitLab, else the `origin` remote's well-known host, else the kind
//! of the reference (`!42` is GitLab's), else the host name (`gitlab.corp`).
//! The repository comes from the URL, else `owner/repo#N`, else `--repo`, else
//! the remote. Every contradiction between these sources is a [`TargetError`]
//! whose message quotes the input; the CLI maps it to exit code 2.
//!
//! URLs may carry credentials (`https://user:token@host/…`): they are never
//! echoed. Every URL quoted in an error has its user info replaced by `***`.

mod error;
mod found;
mod host;
mod model;
mod parse;
mod quote;
mod remote;
mod scan;
#[cfg(test)]
mod tests;
mod urls;

pub use error::TargetError;
pub use model::*;
pub use parse::parse_target;
pub use quote::redact_userinfo;
pub use remote::parse_remote_url;
