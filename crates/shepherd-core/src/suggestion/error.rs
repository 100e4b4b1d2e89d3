//! Why a suggestion was not applied.

/// Why a suggestion was not applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SuggestionError {
    /// The range starts after it ends, or at line 0.
    #[error("{path}:{start_line}-{end_line}: invalid line range")]
    InvalidRange {
        /// The file.
        path: String,
        /// First line asked for.
        start_line: u32,
        /// Last line asked for.
        end_line: u32,
    },
    /// The range does not lie within the file.
    #[error(
        "{path}:{start_line}-{end_line}: range out of bounds, the file has {file_lines} lines"
    )]
    OutOfBounds {
        /// The file.
        path: String,
        /// First line of the range (0 when a relative range starts above line 1).
        start_line: u32,
        /// Last line of the range.
        end_line: u32,
        /// How many lines the file has.
        file_lines: usize,
    },
    /// The comment is on the left (base) side, which a commit cannot change.
    #[error("{path}:{start_line}-{end_line}: comment is on the left side of the diff")]
    LeftSide {
        /// The file.
        path: String,
        /// First line of the range.
        start_line: u32,
        /// Last line of the range.
        end_line: u32,
    },
    /// The anchor does not have as many lines as the range.
    #[error(
        "{path}:{start_line}-{end_line}: the reviewer saw {anchor_lines} lines, the range has {range_lines}"
    )]
    AnchorLength {
        /// The file.
        path: String,
        /// First line of the range.
        start_line: u32,
        /// Last line of the range.
        end_line: u32,
        /// Lines in the anchor.
        anchor_lines: usize,
        /// Lines in the range.
        range_lines: usize,
    },
    /// The file's lines changed since the reviewer wrote the suggestion.
    #[error("{path}:{start_line}-{end_line}: line {line} no longer matches what the reviewer saw")]
    Mismatch {
        /// The file.
        path: String,
        /// First line of the range.
        start_line: u32,
        /// Last line of the range.
        end_line: u32,
        /// The first line (1-based, in the file) that differs.
        line: u32,
    },
    /// The thread is about a whole file, not lines.
    #[error("{path}: thread is on the file, not on lines")]
    NotOnLines {
        /// The file.
        path: String,
    },
    /// The thread is outdated or no longer has a line on the current diff.
    #[error("{path}: thread is outdated, its suggestion cannot be applied")]
    Outdated {
        /// The file.
        path: String,
    },
    /// No suggestion block in the thread.
    #[error("{path}: thread has no suggestion block")]
    NoSuggestion {
        /// The file.
        path: String,
    },
    /// Several different suggestion blocks in one thread.
    #[error(
        "{path}: thread has {count} different suggestion blocks for the same lines; \
         github applies one at a time, refusing to choose"
    )]
    Ambiguous {
        /// The file.
        path: String,
        /// How many distinct suggestions.
        count: usize,
    },
    /// A GitLab suggestion whose anchor (the head file's lines) was not read yet.
    #[error(
        "{path}:{start_line}-{end_line}: the lines the suggestion replaces were not read from the head"
    )]
    AnchorPending {
        /// The file.
        path: String,
        /// First line the suggestion replaces.
        start_line: u32,
        /// Last line the suggestion replaces.
        end_line: u32,
    },
    /// The lines the reviewer saw cannot be reconstructed from the diff hunk.
    #[error(
        "{path}:{start_line}-{end_line}: the diff hunk does not show the lines the reviewer saw"
    )]
    AnchorUnavailable {
        /// The file.
        path: String,
        /// First line of the range, as written.
        start_line: u32,
        /// Last line of the range, as written.
        end_line: u32,
    },
}
