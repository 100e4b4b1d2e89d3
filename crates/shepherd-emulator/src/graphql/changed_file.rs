//! `PullRequest.files`: the pull request's diff, file by file, as
//! `PullRequestChangedFile`s (the same counts as REST's `pulls/N/files`).

use async_graphql::{Enum, SimpleObject};

use super::connection::{connection, paginate, Page, PageArgs, PageInfo};
use super::view::PrView;

/// The possible types of patch statuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
pub(crate) enum PatchStatus {
    /// The file was added. Git status 'A'.
    Added,
    /// The file's type was changed. Git status 'T'.
    Changed,
    /// The file was copied. Git status 'C'.
    Copied,
    /// The file was deleted. Git status 'D'.
    Deleted,
    /// The file's contents were changed. Git status 'M'.
    Modified,
    /// The file was renamed. Git status 'R'.
    Renamed,
}

/// A file changed in a pull request.
#[derive(Debug, Clone, SimpleObject)]
pub(crate) struct PullRequestChangedFile {
    /// The number of additions to the file.
    pub(crate) additions: i32,
    /// How the file was changed in this PullRequest
    change_type: PatchStatus,
    /// The number of deletions to the file.
    pub(crate) deletions: i32,
    /// The path of the file.
    path: String,
}

connection!(
    PullRequestChangedFileConnection,
    PullRequestChangedFileEdge,
    PullRequestChangedFile,
    "The connection type for PullRequestChangedFile."
);

/// The files of the pull request's diff, in path order.
pub(crate) fn files(view: &PrView) -> Vec<PullRequestChangedFile> {
    view.pr
        .diff
        .iter()
        .map(|(path, hunks)| {
            let (added, removed, new_file, deleted) = crate::git::change_counts(hunks);
            let change_type = if new_file {
                PatchStatus::Added
            } else if deleted {
                PatchStatus::Deleted
            } else {
                PatchStatus::Modified
            };
            PullRequestChangedFile {
                additions: i32::try_from(added).unwrap_or(i32::MAX),
                change_type,
                deletions: i32::try_from(removed).unwrap_or(i32::MAX),
                path: path.clone(),
            }
        })
        .collect()
}

/// A page of [`files`].
pub(crate) fn files_connection(
    view: &PrView,
    args: &PageArgs,
) -> async_graphql::Result<PullRequestChangedFileConnection> {
    let items = files(view)
        .into_iter()
        .enumerate()
        .map(|(i, file)| (i as u64 + 1, file))
        .collect();
    paginate("files", items, args).map(Into::into)
}
