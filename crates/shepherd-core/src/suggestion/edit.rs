//! A review thread's suggestion, ready to apply: GitHub's and GitLab's edits.

use serde::{Deserialize, Serialize};

use crate::forges::SuggestionSyntax;
use crate::marker::Marker;
use crate::model::{DiffSide, ForgeKind, ReviewThread, SubjectType};

use super::apply::{apply_suggestion, file_lines, Lines};
use super::error::SuggestionError;
use super::fence::extract_suggestions;
use super::hunk::anchored_lines_from_diff_hunk;
use super::model::{Suggestion, SuggestionSite};

/// A suggestion of a review thread, ready to apply: GitHub's "commit
/// suggestion", or GitLab's "apply suggestion".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SuggestionEdit {
    /// The comment the suggestion was taken from.
    pub comment_id: String,
    /// Where it applies (the thread's current range; a relative suggestion
    /// replaces [`Suggestion::effective_range`] of it).
    pub site: SuggestionSite,
    /// The lines the replaced range must still hold: on GitHub the lines the
    /// reviewer saw, from the comment's diff hunk; on GitLab the head file's
    /// lines of the effective range. Empty while [`Self::anchor_pending`].
    pub anchor: Vec<String>,
    /// The suggestion ([`Suggestion::Range`] on GitHub, [`Suggestion::Relative`]
    /// on GitLab).
    pub suggestion: Suggestion,
    /// GitLab: the anchor is still to be read from the file at the head the
    /// forge traced the thread to ([`Self::pinned`]); such an edit is never
    /// applied.
    #[serde(default, skip_serializing_if = "is_false")]
    pub anchor_pending: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl SuggestionEdit {
    /// The suggestion of `thread`, with its site and anchor.
    ///
    /// Looks at every comment of the thread except Shepherd's own replies (the
    /// `viewer`'s comments carrying a [`Marker`]: a marker anyone else pasted
    /// does not hide a comment's suggestion), and only at plain
    /// ```` ```suggestion ```` blocks.
    /// Refused for file threads, left-side threads, outdated threads (GitHub
    /// refuses those too), threads with no or several distinct suggestions, and
    /// when the diff hunk does not show the range as written
    /// (`originalStartLine..originalLine`).
    pub fn from_thread(thread: &ReviewThread, viewer: &str) -> Result<Self, SuggestionError> {
        let path = || thread.path.clone();
        if thread.subject_type == SubjectType::File {
            return Err(SuggestionError::NotOnLines { path: path() });
        }
        let end = match thread.line {
            Some(line) if !thread.is_outdated => line,
            _ => return Err(SuggestionError::Outdated { path: path() }),
        };
        let start = thread.start_line.unwrap_or(end);
        if thread.diff_side == DiffSide::Left {
            return Err(SuggestionError::LeftSide {
                path: path(),
                start_line: start,
                end_line: end,
            });
        }
        if start == 0 || start > end {
            return Err(SuggestionError::InvalidRange {
                path: path(),
                start_line: start,
                end_line: end,
            });
        }

        let mut distinct: Vec<(&crate::model::Comment, Suggestion)> = Vec::new();
        for comment in thread
            .comments
            .iter()
            .filter(|c| Marker::find_own(&c.body, c.author.as_ref(), viewer).is_none())
        {
            for suggestion in extract_suggestions(&comment.body) {
                if suggestion.is_range() && !distinct.iter().any(|(_, s)| *s == suggestion) {
                    distinct.push((comment, suggestion));
                }
            }
        }
        let (comment, suggestion) = only_one(distinct, &path)?;

        let orig_end = thread.original_line.unwrap_or(end);
        let orig_start = thread
            .original_start_line
            .or_else(|| orig_end.checked_sub(end - start))
            .unwrap_or(0);
        let unavailable = || SuggestionError::AnchorUnavailable {
            path: path(),
            start_line: orig_start,
            end_line: orig_end,
        };
        if orig_start > orig_end || orig_end - orig_start != end - start {
            return Err(unavailable());
        }
        let hunk = comment
            .diff_hunk
            .as_deref()
            .or_else(|| thread.root().and_then(|root| root.diff_hunk.as_deref()))
            .ok_or_else(unavailable)?;
        let anchor =
            anchored_lines_from_diff_hunk(hunk, orig_start, orig_end).ok_or_else(unavailable)?;
        Ok(SuggestionEdit {
            comment_id: comment.id.clone(),
            site: SuggestionSite {
                path: path(),
                side: DiffSide::Right,
                start_line: start,
                end_line: end,
            },
            anchor,
            suggestion,
            anchor_pending: false,
        })
    }

    /// The suggestion of `thread` with `forge`'s semantics:
    /// [`Self::from_thread`] on GitHub (`head_file` is not needed), and
    /// [`Self::from_gitlab_thread`] on GitLab, where `head_file` is the
    /// content of the thread's file at the head the forge traced the
    /// thread to (`None`: the anchor is pending).
    pub fn from_thread_with(
        thread: &ReviewThread,
        forge: ForgeKind,
        viewer: &str,
        head_file: Option<&str>,
    ) -> Result<Self, SuggestionError> {
        match forge.spec().suggestion {
            SuggestionSyntax::Fenced => Self::from_thread(thread, viewer),
            SuggestionSyntax::RelativeRange => Self::from_gitlab_thread(thread, viewer, head_file),
        }
    }

    /// The suggestion of a GitLab thread (see the module docs): relative to
    /// the commented line (`thread.line`), anchored on `head_file`'s lines
    /// of the effective range, pending without it. Refused for file threads,
    /// left-side and outdated threads, threads with no or several distinct
    /// suggestions, and ranges outside the file. Shepherd's own replies (the
    /// `viewer`'s comments with a marker) are skipped.
    pub fn from_gitlab_thread(
        thread: &ReviewThread,
        viewer: &str,
        head_file: Option<&str>,
    ) -> Result<Self, SuggestionError> {
        if thread.subject_type == SubjectType::File {
            return Err(SuggestionError::NotOnLines {
                path: thread.path.clone(),
            });
        }
        let end = match thread.line {
            Some(line) if !thread.is_outdated => line,
            _ => {
                return Err(SuggestionError::Outdated {
                    path: thread.path.clone(),
                })
            }
        };
        let comments = thread
            .comments
            .iter()
            .filter(|c| Marker::find_own(&c.body, c.author.as_ref(), viewer).is_none())
            .map(|c| (c.id.as_str(), c.body.as_str()));
        Self::gitlab(
            &thread.path,
            thread.diff_side,
            thread.start_line.unwrap_or(end),
            end,
            comments,
            head_file,
        )
    }

    /// GitLab's suggestion of a thread given by its parts: the file, side
    /// and current range `start_line..=end_line` of a thread that is not
    /// outdated, and its comments as `(id, body)` (Shepherd's replies, with
    /// a marker, are left out by the caller: only it knows who wrote them).
    /// `head_file` as in [`Self::from_gitlab_thread`].
    pub fn gitlab<'a>(
        path: &str,
        side: DiffSide,
        start_line: u32,
        end_line: u32,
        comments: impl IntoIterator<Item = (&'a str, &'a str)>,
        head_file: Option<&str>,
    ) -> Result<Self, SuggestionError> {
        let path = || path.to_owned();
        if side == DiffSide::Left {
            return Err(SuggestionError::LeftSide {
                path: path(),
                start_line,
                end_line,
            });
        }
        if start_line == 0 || start_line > end_line {
            return Err(SuggestionError::InvalidRange {
                path: path(),
                start_line,
                end_line,
            });
        }
        let mut distinct: Vec<(&str, Suggestion)> = Vec::new();
        for (id, body) in comments {
            for suggestion in extract_suggestions(body) {
                // GitLab's plain block is its `-0+0`.
                let suggestion = match suggestion {
                    Suggestion::Range { lines } => Suggestion::Relative {
                        above: 0,
                        below: 0,
                        lines,
                    },
                    relative => relative,
                };
                if !distinct.iter().any(|(_, s)| *s == suggestion) {
                    distinct.push((id, suggestion));
                }
            }
        }
        let (comment_id, suggestion) = only_one(distinct, &path)?;
        let edit = SuggestionEdit {
            comment_id: comment_id.to_owned(),
            site: SuggestionSite {
                path: path(),
                side: DiffSide::Right,
                start_line,
                end_line,
            },
            anchor: Vec::new(),
            suggestion,
            anchor_pending: true,
        };
        // A range starting above line 1 is refused whether or not the file
        // is at hand.
        edit.effective_range()?;
        match head_file {
            Some(file) => edit.pinned(file),
            None => Ok(edit),
        }
    }

    /// The 1-based inclusive range the edit replaces; refused as
    /// [`SuggestionError::InvalidRange`] when a relative range starts above
    /// line 1.
    pub fn effective_range(&self) -> Result<(u32, u32), SuggestionError> {
        let (start, end) = (self.site.start_line, self.site.end_line);
        self.suggestion
            .effective_range(start, end)
            .ok_or_else(|| match &self.suggestion {
                Suggestion::Relative { above, below, .. } => SuggestionError::InvalidRange {
                    path: self.site.path.clone(),
                    start_line: end.saturating_sub(*above),
                    end_line: end.saturating_add(*below),
                },
                Suggestion::Range { .. } => SuggestionError::InvalidRange {
                    path: self.site.path.clone(),
                    start_line: start,
                    end_line: end,
                },
            })
    }

    /// The edit with its pending anchor read from `head_file` (the file at
    /// the head the thread's lines refer to): its lines of the effective
    /// range. An edit whose anchor is known already is returned as it is.
    pub fn pinned(&self, head_file: &str) -> Result<Self, SuggestionError> {
        if !self.anchor_pending {
            return Ok(self.clone());
        }
        let (start, end) = self.effective_range()?;
        let anchor =
            file_lines(head_file, start, end).ok_or_else(|| SuggestionError::OutOfBounds {
                path: self.site.path.clone(),
                start_line: start,
                end_line: end,
                file_lines: Lines::parse(head_file).lines.len(),
            })?;
        Ok(SuggestionEdit {
            anchor,
            anchor_pending: false,
            ..self.clone()
        })
    }

    /// Apply the suggestion to `file`, the current content of `site.path`.
    /// Refused while the anchor is pending.
    pub fn apply(&self, file: &str) -> Result<String, SuggestionError> {
        if self.anchor_pending {
            let (start_line, end_line) = self.effective_range()?;
            return Err(SuggestionError::AnchorPending {
                path: self.site.path.clone(),
                start_line,
                end_line,
            });
        }
        apply_suggestion(file, &self.site, &self.anchor, &self.suggestion)
    }
}

/// The one distinct suggestion of a thread: none, or more than one, is refused.
fn only_one<T>(mut distinct: Vec<T>, path: &impl Fn() -> String) -> Result<T, SuggestionError> {
    match distinct.len() {
        0 => Err(SuggestionError::NoSuggestion { path: path() }),
        1 => Ok(distinct.remove(0)),
        count => Err(SuggestionError::Ambiguous {
            path: path(),
            count,
        }),
    }
}
