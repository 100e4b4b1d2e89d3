//! Suggestion blocks: finding them in comment bodies and applying them to files.
//!
//! A reviewer's ```` ```suggestion ```` block proposes the exact text that should
//! replace the lines a review comment is anchored to. Shepherd applies these
//! deterministically, before any agent runs (SPEC section 3, step 7), with
//! GitHub's semantics:
//!
//! - A block is a CommonMark fenced code block (three or more backticks or
//!   tildes, indented by at most three spaces) whose info string is exactly
//!   `suggestion`. Its content lines are the replacement, verbatim (the fence's
//!   own indentation is removed from them, as CommonMark does). An empty block
//!   deletes the lines.
//! - Fences inside other fences are content, not blocks: a ```` ```suggestion ````
//!   line inside a ```` ```` ```` or `~~~` block is ignored. A block that is
//!   never closed is ignored too: where it ends is a guess Shepherd does not make.
//! - GitLab's ```` ```suggestion:-N+M ```` form (N lines above, M lines below the
//!   commented line) is parsed into [`Suggestion::Relative`]. GitHub renders that
//!   info string as an ordinary code block, so the GitHub path
//!   ([`SuggestionEdit::from_thread`]) ignores it. GitLab's semantics are
//!   described below.
//! - The replaced range is the comment's `startLine..=line` on the right side.
//!   The edit is refused, never forced, when the file's current lines in that
//!   range differ from the lines the reviewer saw (the *anchor*, reconstructed
//!   from the comment's `diffHunk` by [`anchored_lines_from_diff_hunk`]), when
//!   the range is out of bounds, reversed, or on the left side.
//! - Several blocks in one thread: GitHub commits one suggestion at a time and
//!   all blocks of a thread target the same range, so two different
//!   replacements for the same lines are a choice Shepherd does not make. A
//!   thread whose (non-Shepherd) comments hold more than one *distinct*
//!   suggestion is refused as [`SuggestionError::Ambiguous`]; identical repeats
//!   count once.
//! - The file keeps its line endings: untouched lines byte for byte; a new line
//!   takes the ending of the old line at the same position of the range, else
//!   the file's style (the first line ending in the file, LF when there is
//!   none). A file without a trailing newline still has none afterwards, and a
//!   file with one keeps it. (So in a file without one, an empty replacement
//!   last line leaves the previous line's ending as the file's last bytes.)
//!
//!
//! GitLab ([`SuggestionEdit::from_gitlab_thread`], [`SuggestionEdit::from_thread_with`]):
//!
//! - The range is relative to the commented line, the last line of the
//!   thread's range: ```` ```suggestion:-N+M ```` replaces `line-N..=line+M`
//!   ([`Suggestion::effective_range`]), and the plain ```` ```suggestion ````
//!   is GitLab's `-0+0`, the commented line alone (even on a multi-line
//!   thread: GitLab writes `-N+0` there itself).
//! - GitLab notes carry no diff hunk. A thread that is not outdated has its
//!   commented lines unchanged at the head (the forge traced them there), so
//!   the anchor is the head file's current lines of the effective range:
//!   the edit is refused when those lines change before it is applied (an
//!   earlier fix moved or changed them), as on GitHub. Outdated threads are
//!   refused. Without the file at hand the anchor is *pending*
//!   ([`SuggestionEdit::anchor_pending`]) until [`SuggestionEdit::pinned`]
//!   reads it; a pending edit is never applied.
//! - Several distinct blocks, file threads and left-side threads are
//!   refused as on GitHub.
//!
//! Comment bodies are untrusted; nothing here interprets them beyond the fence
//! syntax, and errors name paths and line numbers, never comment text.

mod apply;
mod edit;
mod error;
mod fence;
mod hunk;
mod model;
#[cfg(test)]
mod tests;

pub use apply::apply_suggestion;
pub use edit::SuggestionEdit;
pub use error::SuggestionError;
pub use fence::extract_suggestions;
pub use hunk::anchored_lines_from_diff_hunk;
pub use model::{Suggestion, SuggestionSite};
