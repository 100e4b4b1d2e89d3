//! The real `git` binary, run in a sealed environment, by concern: the
//! environment and its errors (`env.rs`), the repository and its refs
//! (`repository.rs`), diffs and what GitHub derives from them (`diff.rs`),
//! comparisons and history (`compare.rs`).

mod compare;
mod diff;
mod env;
mod repository;

pub(crate) use compare::{
    commit_detail, compare, log, merge_base, CommitDetail, CommitInfo, FileChange,
};
#[cfg(test)]
pub(crate) use diff::parse_diff;
pub(crate) use diff::{
    added_lines, change_counts, diff, diff_hunk, diff_position, diff_text, patch_text, remap_range,
    AddedLine, Hunk,
};
pub use env::GitError;
pub(crate) use env::{pull_ref, GitEnv};
pub(crate) use repository::{
    all_refs, branches, checkout, commit_files, create_repository, resolve_commit, restore_refs,
    rev_list, show_file, CreatedRepository, NewCommit, RepositoryPlan, BASE_EPOCH,
};
