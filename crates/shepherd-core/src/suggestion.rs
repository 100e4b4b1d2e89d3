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

use serde::{Deserialize, Serialize};

use crate::forges::SuggestionSyntax;
use crate::marker::Marker;
use crate::model::{DiffSide, ForgeKind, ReviewThread, SubjectType};

/// One suggestion block of a comment.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "form", rename_all = "kebab-case")]
pub enum Suggestion {
    /// ```` ```suggestion ````: replaces the comment's whole range (GitHub, and
    /// GitLab's form without offsets).
    Range {
        /// The replacement lines, without line endings. Empty: delete the range.
        lines: Vec<String>,
    },
    /// ```` ```suggestion:-N+M ```` (GitLab): replaces from `above` lines above
    /// to `below` lines below the commented line.
    Relative {
        /// Lines above the commented line that are replaced too (the `N` of `-N`).
        above: u32,
        /// Lines below the commented line that are replaced too (the `M` of `+M`).
        below: u32,
        /// The replacement lines, without line endings. Empty: delete the range.
        lines: Vec<String>,
    },
}

impl Suggestion {
    /// The replacement lines, without line endings.
    pub fn lines(&self) -> &[String] {
        match self {
            Suggestion::Range { lines } | Suggestion::Relative { lines, .. } => lines,
        }
    }

    /// Whether the suggestion deletes its range (an empty block).
    pub fn is_deletion(&self) -> bool {
        self.lines().is_empty()
    }

    /// Whether this is the plain ```` ```suggestion ```` form, the only one GitHub knows.
    pub fn is_range(&self) -> bool {
        matches!(self, Suggestion::Range { .. })
    }

    /// The 1-based inclusive range this suggestion replaces for a comment on
    /// `start_line..=end_line`. `None` when a relative range would start before
    /// line 1 or overflow.
    pub fn effective_range(&self, start_line: u32, end_line: u32) -> Option<(u32, u32)> {
        match self {
            Suggestion::Range { .. } => Some((start_line, end_line)),
            Suggestion::Relative { above, below, .. } => {
                let start = end_line.checked_sub(*above).filter(|s| *s >= 1)?;
                let end = end_line.checked_add(*below)?;
                Some((start, end))
            }
        }
    }
}

/// Where a suggestion applies: a file and a line range on one side of the diff.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SuggestionSite {
    /// The file path, relative to the repository root.
    pub path: String,
    /// The side of the diff; only the right side (the PR head) can be edited.
    pub side: DiffSide,
    /// First line of the comment's range (1-based; `line` for a one-line comment).
    pub start_line: u32,
    /// Last line of the comment's range (1-based, inclusive): the comment's `line`.
    pub end_line: u32,
}

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

/// Every suggestion block of `body`, in order (see the module docs for the syntax).
pub fn extract_suggestions(body: &str) -> Vec<Suggestion> {
    enum State {
        Outside,
        Fence {
            fence: Fence,
            /// `Some` when the fence is a suggestion block.
            kind: Option<Kind>,
            content: Vec<String>,
        },
    }

    let mut found = Vec::new();
    let mut state = State::Outside;
    for line in body.lines() {
        state = match state {
            State::Outside => match parse_opening(line) {
                Some((fence, info)) => State::Fence {
                    fence,
                    kind: parse_info(info),
                    content: Vec::new(),
                },
                None => State::Outside,
            },
            State::Fence {
                fence,
                kind,
                mut content,
            } => {
                if fence.is_closed_by(line) {
                    if let Some(kind) = kind {
                        found.push(kind.into_suggestion(content));
                    }
                    State::Outside
                } else {
                    if kind.is_some() {
                        content.push(strip_indent(line, fence.indent).to_owned());
                    }
                    State::Fence {
                        fence,
                        kind,
                        content,
                    }
                }
            }
        };
    }
    // An unclosed fence runs to the end in CommonMark; a suggestion whose end is
    // uncertain is not applied, so it is dropped here.
    found
}

/// An opening code fence.
struct Fence {
    /// `` ` `` or `~`.
    ch: u8,
    /// How many fence characters opened it.
    len: usize,
    /// Spaces before the fence, removed from content lines.
    indent: usize,
}

impl Fence {
    fn is_closed_by(&self, line: &str) -> bool {
        let Some((_, rest)) = split_indent(line) else {
            return false;
        };
        let run = rest.bytes().take_while(|b| *b == self.ch).count();
        run >= self.len && rest[run..].bytes().all(|b| b == b' ' || b == b'\t')
    }
}

/// A suggestion fence's info string, parsed.
#[derive(Clone, Copy)]
enum Kind {
    Range,
    Relative { above: u32, below: u32 },
}

impl Kind {
    fn into_suggestion(self, lines: Vec<String>) -> Suggestion {
        match self {
            Kind::Range => Suggestion::Range { lines },
            Kind::Relative { above, below } => Suggestion::Relative {
                above,
                below,
                lines,
            },
        }
    }
}

/// Up to three leading spaces, and the rest of the line. `None` for four or
/// more (an indented code block, not a fence) or a leading tab.
fn split_indent(line: &str) -> Option<(usize, &str)> {
    let indent = line.bytes().take_while(|b| *b == b' ').count();
    if indent > 3 || line[indent..].starts_with('\t') {
        return None;
    }
    Some((indent, &line[indent..]))
}

fn parse_opening(line: &str) -> Option<(Fence, &str)> {
    let (indent, rest) = split_indent(line)?;
    let ch = *rest.as_bytes().first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let len = rest.bytes().take_while(|b| *b == ch).count();
    if len < 3 {
        return None;
    }
    let info = &rest[len..];
    // CommonMark: a backtick fence's info string may not contain a backtick
    // (that line is inline code, not a fence).
    if ch == b'`' && info.contains('`') {
        return None;
    }
    Some((Fence { ch, len, indent }, info.trim_matches([' ', '\t'])))
}

fn parse_info(info: &str) -> Option<Kind> {
    if info == "suggestion" {
        return Some(Kind::Range);
    }
    let offsets = info.strip_prefix("suggestion:-")?;
    let (above, below) = offsets.split_once('+')?;
    Some(Kind::Relative {
        above: parse_count(above)?,
        below: parse_count(below)?,
    })
}

fn parse_count(digits: &str) -> Option<u32> {
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

fn strip_indent(line: &str, indent: usize) -> &str {
    let spaces = line.bytes().take(indent).take_while(|b| *b == b' ').count();
    &line[spaces..]
}

/// The right-side lines `start_line..=end_line` (1-based) of a unified diff hunk.
///
/// `diff_hunk` is a review comment's `diffHunk`: a `@@ -a,b +c,d @@` header
/// followed by ` ` (context), `+` (added) and `-` (removed) lines, ending at the
/// comment's `line`. Context and added lines are numbered from `c`; removed
/// lines and `\ No newline at end of file` are skipped; one trailing `\r` (a CRLF
/// file) is dropped from each line. `None` when the hunk is malformed or does not
/// show every line of the range.
pub fn anchored_lines_from_diff_hunk(
    diff_hunk: &str,
    start_line: u32,
    end_line: u32,
) -> Option<Vec<String>> {
    if start_line == 0 || start_line > end_line {
        return None;
    }
    let wanted = usize::try_from(end_line - start_line).ok()? + 1;
    let mut next: Option<u32> = None;
    let mut out = Vec::new();
    for raw in diff_hunk.lines() {
        if raw.starts_with("@@") {
            next = Some(parse_hunk_header_right_start(raw)?);
            continue;
        }
        // Lines before the first header carry no numbers: the hunk is malformed.
        let number = next?;
        let (content, right) = match raw.as_bytes().first() {
            Some(b' ') | Some(b'+') => (&raw[1..], true),
            // Some producers drop the space of an empty context line.
            None => ("", true),
            Some(b'-') | Some(b'\\') => ("", false),
            Some(_) => return None,
        };
        if right {
            if (start_line..=end_line).contains(&number) {
                out.push(content.to_owned());
            }
            next = Some(number.checked_add(1)?);
        }
    }
    (out.len() == wanted).then_some(out)
}

/// The `c` of `@@ -a,b +c,d @@`.
fn parse_hunk_header_right_start(header: &str) -> Option<u32> {
    let rest = header.strip_prefix("@@ -")?;
    let (_, right) = rest.split_once(" +")?;
    let digits: &str = &right[..right.bytes().take_while(u8::is_ascii_digit).count()];
    parse_count(digits)
}

/// A file split into lines, each with its ending.
struct Lines<'a> {
    lines: Vec<(&'a str, &'a str)>,
}

impl<'a> Lines<'a> {
    fn parse(file: &'a str) -> Self {
        let mut lines = Vec::new();
        let mut rest = file;
        while !rest.is_empty() {
            match rest.find('\n') {
                Some(i) => {
                    let (line, ending) = if i > 0 && rest.as_bytes()[i - 1] == b'\r' {
                        (&rest[..i - 1], &rest[i - 1..=i])
                    } else {
                        (&rest[..i], &rest[i..=i])
                    };
                    lines.push((line, ending));
                    rest = &rest[i + 1..];
                }
                None => {
                    lines.push((rest, ""));
                    rest = "";
                }
            }
        }
        Lines { lines }
    }

    /// The file's line ending: its first one, LF when it has none.
    fn style(&self) -> &'a str {
        self.lines
            .iter()
            .map(|(_, ending)| *ending)
            .find(|ending| !ending.is_empty())
            .unwrap_or("\n")
    }

    fn has_trailing_newline(&self) -> bool {
        self.lines
            .last()
            .is_some_and(|(_, ending)| !ending.is_empty())
    }
}

/// Replace the lines `site` names with `suggestion`, refusing when the file's
/// current lines differ from `anchor` (the lines the reviewer saw, as given by
/// [`anchored_lines_from_diff_hunk`]; a trailing `\r` on an anchor line is
/// ignored).
///
/// For [`Suggestion::Relative`] the range is [`Suggestion::effective_range`] of
/// the site, and `anchor` must hold the lines of that range.
pub fn apply_suggestion(
    file: &str,
    site: &SuggestionSite,
    anchor: &[String],
    suggestion: &Suggestion,
) -> Result<String, SuggestionError> {
    let path = || site.path.clone();
    if site.side == DiffSide::Left {
        return Err(SuggestionError::LeftSide {
            path: path(),
            start_line: site.start_line,
            end_line: site.end_line,
        });
    }
    if site.start_line == 0 || site.start_line > site.end_line {
        return Err(SuggestionError::InvalidRange {
            path: path(),
            start_line: site.start_line,
            end_line: site.end_line,
        });
    }
    let lines = Lines::parse(file);
    let out_of_bounds = |start_line, end_line| SuggestionError::OutOfBounds {
        path: path(),
        start_line,
        end_line,
        file_lines: lines.lines.len(),
    };
    let (start, end) = suggestion
        .effective_range(site.start_line, site.end_line)
        .ok_or_else(|| out_of_bounds(0, site.end_line))?;
    // u32 always fits in usize on the targets Shepherd builds for (>= 32 bits).
    let (first, last) = (start as usize - 1, end as usize - 1);
    if last >= lines.lines.len() {
        return Err(out_of_bounds(start, end));
    }
    let current = &lines.lines[first..=last];
    if anchor.len() != current.len() {
        return Err(SuggestionError::AnchorLength {
            path: path(),
            start_line: start,
            end_line: end,
            anchor_lines: anchor.len(),
            range_lines: current.len(),
        });
    }
    if let Some(offset) = current
        .iter()
        .zip(anchor)
        .position(|((line, _), seen)| *line != seen.strip_suffix('\r').unwrap_or(seen))
    {
        return Err(SuggestionError::Mismatch {
            path: path(),
            start_line: start,
            end_line: end,
            // offset < range length, itself <= u32::MAX.
            line: start + offset as u32,
        });
    }

    let style = lines.style();
    let mut spliced: Vec<(&str, &str)> = Vec::with_capacity(lines.lines.len());
    spliced.extend_from_slice(&lines.lines[..first]);
    for (k, new) in suggestion.lines().iter().enumerate() {
        let ending = match current.get(k) {
            Some((_, ending)) if !ending.is_empty() => *ending,
            _ => style,
        };
        spliced.push((new.as_str(), ending));
    }
    spliced.extend_from_slice(&lines.lines[last + 1..]);
    // Keep the file's trailing newline, or its absence.
    let trailing = lines.has_trailing_newline();
    if let Some((_, ending)) = spliced.last_mut() {
        if !trailing {
            *ending = "";
        } else if ending.is_empty() {
            *ending = style;
        }
    }

    let mut result = String::with_capacity(file.len());
    for (line, ending) in spliced {
        result.push_str(line);
        result.push_str(ending);
    }
    Ok(result)
}

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

/// The lines `start..=end` (1-based) of `file`, without their endings.
fn file_lines(file: &str, start: u32, end: u32) -> Option<Vec<String>> {
    let lines = Lines::parse(file);
    let first = usize::try_from(start).ok()?.checked_sub(1)?;
    let last = usize::try_from(end).ok()?.checked_sub(1)?;
    let range = lines.lines.get(first..=last)?;
    Some(range.iter().map(|(line, _)| (*line).to_owned()).collect())
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
        let (comment, suggestion) = match distinct.len() {
            0 => return Err(SuggestionError::NoSuggestion { path: path() }),
            1 => distinct.remove(0),
            count => {
                return Err(SuggestionError::Ambiguous {
                    path: path(),
                    count,
                })
            }
        };

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
        let (comment_id, suggestion) = match distinct.len() {
            0 => return Err(SuggestionError::NoSuggestion { path: path() }),
            1 => distinct.remove(0),
            count => {
                return Err(SuggestionError::Ambiguous {
                    path: path(),
                    count,
                })
            }
        };
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

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;
    use crate::model::{Author, AuthorKind, Comment};
    use proptest::prelude::*;

    fn range(lines: &[&str]) -> Suggestion {
        Suggestion::Range {
            lines: lines.iter().map(|l| (*l).to_owned()).collect(),
        }
    }

    fn site(start_line: u32, end_line: u32) -> SuggestionSite {
        SuggestionSite {
            path: "src/lib.rs".to_owned(),
            side: DiffSide::Right,
            start_line,
            end_line,
        }
    }

    fn strings(lines: &[&str]) -> Vec<String> {
        lines.iter().map(|l| (*l).to_owned()).collect()
    }

    // ---- extraction -------------------------------------------------------

    #[test]
    fn extraction_table() {
        let cases: &[(&str, &str, Vec<Suggestion>)] = &[
            ("single line", "Try:\n```suggestion\nlet x = 1;\n```\n", vec![range(&["let x = 1;"])]),
            ("multi-line", "```suggestion\na\n  b\n\tc  \n```", vec![range(&["a", "  b", "\tc  "])]),
            ("empty block deletes", "```suggestion\n```", vec![range(&[])]),
            ("blank line kept", "```suggestion\n\n```", vec![range(&[""])]),
            ("crlf body", "x\r\n```suggestion\r\nfoo\r\nbar\r\n```\r\n", vec![range(&["foo", "bar"])]),
            ("four backticks hold a fence", "````suggestion\n```rust\nx\n```\n````", vec![range(&["```rust", "x", "```"])]),
            ("tilde fence", "~~~suggestion\ny\n~~~", vec![range(&["y"])]),
            ("longer closing fence", "```suggestion\ny\n`````", vec![range(&["y"])]),
            ("closing fence with trailing spaces", "```suggestion\ny\n```  \t", vec![range(&["y"])]),
            ("tilde does not close backticks", "```suggestion\n~~~\n```", vec![range(&["~~~"])]),
            ("shorter fence does not close", "````suggestion\n```\n````", vec![range(&["```"])]),
            ("info string with spaces around", "```  suggestion \nz\n```", vec![range(&["z"])]),
            ("indented fence strips its indent", "  ```suggestion\n    a\n b\nc\n  ```", vec![range(&["  a", "b", "c"])]),
            ("two blocks", "```suggestion\na\n```\ntext\n```suggestion\nb\n```", vec![range(&["a"]), range(&["b"])]),
            ("inside a backtick fence", "````md\n```suggestion\nx\n```\n````", vec![]),
            ("inside a tilde fence", "~~~\n```suggestion\nx\n```\n~~~", vec![]),
            ("after a nested fence", "````md\n```suggestion\nx\n```\n````\n```suggestion\nreal\n```", vec![range(&["real"])]),
            ("other language", "```rust\nx\n```", vec![]),
            ("not exactly suggestion", "```suggestions\nx\n```\n```Suggestion\nx\n```\n```suggestion rust\nx\n```", vec![]),
            ("indented code block is not a fence", "    ```suggestion\n    x\n    ```", vec![]),
            ("quoted suggestion is not a block", "> ```suggestion\n> x\n> ```", vec![]),
            ("unclosed block ignored", "```suggestion\nx\ny", vec![]),
            ("inline backticks are not a fence", "```suggestion```\nx\n```", vec![]),
            ("two backticks are not a fence", "``suggestion\nx\n``", vec![]),
            ("gitlab form", "```suggestion:-2+1\na\nb\n```", vec![Suggestion::Relative { above: 2, below: 1, lines: strings(&["a", "b"]) }]),
            ("gitlab zero offsets", "```suggestion:-0+0\n```", vec![Suggestion::Relative { above: 0, below: 0, lines: vec![] }]),
            ("gitlab malformed", "```suggestion:-a+1\nx\n```\n```suggestion:+1-2\nx\n```\n```suggestion:-1\nx\n```\n```suggestion:-+\nx\n```", vec![]),
            ("gitlab overflow", "```suggestion:-99999999999+0\nx\n```", vec![]),
        ];
        for (name, body, want) in cases {
            assert_eq!(&extract_suggestions(body), want, "{name}");
        }
    }

    // ---- diff hunks ------------------------------------------------------

    const HUNK: &str = "@@ -10,6 +10,7 @@ fn main() {\n context10\n-removed\n+added11\n+added12\n context13\n\\ No newline at end of file";

    #[test]
    fn hunk_lines_of_a_range() {
        assert_eq!(
            anchored_lines_from_diff_hunk(HUNK, 11, 13),
            Some(strings(&["added11", "added12", "context13"]))
        );
        assert_eq!(
            anchored_lines_from_diff_hunk(HUNK, 10, 10),
            Some(strings(&["context10"]))
        );
        assert_eq!(
            anchored_lines_from_diff_hunk(HUNK, 12, 12),
            Some(strings(&["added12"]))
        );
    }

    #[test]
    fn hunk_refuses_what_it_does_not_show() {
        assert_eq!(
            anchored_lines_from_diff_hunk(HUNK, 13, 14),
            None,
            "beyond the hunk"
        );
        assert_eq!(
            anchored_lines_from_diff_hunk(HUNK, 9, 10),
            None,
            "before the hunk"
        );
        assert_eq!(
            anchored_lines_from_diff_hunk(HUNK, 12, 11),
            None,
            "reversed"
        );
        assert_eq!(anchored_lines_from_diff_hunk(HUNK, 0, 1), None, "line 0");
        assert_eq!(
            anchored_lines_from_diff_hunk(" context\n+x", 1, 1),
            None,
            "no header"
        );
        assert_eq!(
            anchored_lines_from_diff_hunk("@@ -1 +x @@\n+a", 1, 1),
            None,
            "bad header"
        );
        assert_eq!(
            anchored_lines_from_diff_hunk("@@ -1 +1 @@\n*a", 1, 1),
            None,
            "bad line"
        );
    }

    #[test]
    fn hunk_header_without_counts_and_crlf_lines() {
        let hunk = "@@ -1 +1 @@\n-old\r\n+new\r\n";
        assert_eq!(
            anchored_lines_from_diff_hunk(hunk, 1, 1),
            Some(strings(&["new"]))
        );
        let two = "@@ -1,2 +1,2 @@\n a\n\n b";
        assert_eq!(
            anchored_lines_from_diff_hunk(two, 1, 3),
            Some(strings(&["a", "", "b"]))
        );
    }

    // ---- applying --------------------------------------------------------

    #[test]
    fn apply_table() {
        struct Case {
            name: &'static str,
            file: &'static str,
            start: u32,
            end: u32,
            anchor: &'static [&'static str],
            suggestion: Suggestion,
            want: &'static str,
        }
        let cases = [
            Case {
                name: "single line",
                file: "a\nb\nc\n",
                start: 2,
                end: 2,
                anchor: &["b"],
                suggestion: range(&["B"]),
                want: "a\nB\nc\n",
            },
            Case {
                name: "multi-line",
                file: "a\nb\nc\nd\n",
                start: 2,
                end: 3,
                anchor: &["b", "c"],
                suggestion: range(&["X"]),
                want: "a\nX\nd\n",
            },
            Case {
                name: "deletion",
                file: "a\nb\nc\n",
                start: 2,
                end: 2,
                anchor: &["b"],
                suggestion: range(&[]),
                want: "a\nc\n",
            },
            Case {
                name: "insert more lines",
                file: "a\nb\nc\n",
                start: 2,
                end: 2,
                anchor: &["b"],
                suggestion: range(&["b1", "b2", "b3"]),
                want: "a\nb1\nb2\nb3\nc\n",
            },
            Case {
                name: "first line",
                file: "a\nb\n",
                start: 1,
                end: 1,
                anchor: &["a"],
                suggestion: range(&["A"]),
                want: "A\nb\n",
            },
            Case {
                name: "whole file",
                file: "a\nb\n",
                start: 1,
                end: 2,
                anchor: &["a", "b"],
                suggestion: range(&["z"]),
                want: "z\n",
            },
            Case {
                name: "delete whole file",
                file: "a\nb\n",
                start: 1,
                end: 2,
                anchor: &["a", "b"],
                suggestion: range(&[]),
                want: "",
            },
            Case {
                name: "crlf kept",
                file: "a\r\nb\r\nc\r\n",
                start: 2,
                end: 2,
                anchor: &["b"],
                suggestion: range(&["x", "y"]),
                want: "a\r\nx\r\ny\r\nc\r\n",
            },
            Case {
                name: "crlf anchor from a crlf hunk",
                file: "a\r\nb\r\n",
                start: 1,
                end: 1,
                anchor: &["a\r"],
                suggestion: range(&["A"]),
                want: "A\r\nb\r\n",
            },
            Case {
                name: "mixed endings keep local ones",
                file: "a\nb\r\nc\n",
                start: 2,
                end: 2,
                anchor: &["b"],
                suggestion: range(&["x", "y"]),
                want: "a\nx\r\ny\nc\n",
            },
            Case {
                name: "no trailing newline, last line",
                file: "a\nb",
                start: 2,
                end: 2,
                anchor: &["b"],
                suggestion: range(&["x", "y"]),
                want: "a\nx\ny",
            },
            Case {
                name: "no trailing newline, middle",
                file: "a\nb\nc",
                start: 1,
                end: 1,
                anchor: &["a"],
                suggestion: range(&["x"]),
                want: "x\nb\nc",
            },
            Case {
                name: "no trailing newline, delete last",
                file: "a\nb",
                start: 2,
                end: 2,
                anchor: &["b"],
                suggestion: range(&[]),
                want: "a",
            },
            Case {
                name: "crlf, no trailing newline, insert",
                file: "a\r\nb",
                start: 2,
                end: 2,
                anchor: &["b"],
                suggestion: range(&["x", "y"]),
                want: "a\r\nx\r\ny",
            },
            Case {
                name: "trailing newline kept after deleting last",
                file: "a\nb\n",
                start: 2,
                end: 2,
                anchor: &["b"],
                suggestion: range(&[]),
                want: "a\n",
            },
            Case {
                name: "single line file without newline",
                file: "a",
                start: 1,
                end: 1,
                anchor: &["a"],
                suggestion: range(&["b", "c"]),
                want: "b\nc",
            },
            Case {
                name: "blank replacement line",
                file: "a\nb\n",
                start: 1,
                end: 1,
                anchor: &["a"],
                suggestion: range(&[""]),
                want: "\nb\n",
            },
            Case {
                name: "gitlab relative",
                file: "1\n2\n3\n4\n5\n",
                start: 3,
                end: 3,
                anchor: &["2", "3", "4"],
                suggestion: Suggestion::Relative {
                    above: 1,
                    below: 1,
                    lines: strings(&["x"]),
                },
                want: "1\nx\n5\n",
            },
            Case {
                name: "gitlab relative zero",
                file: "1\n2\n",
                start: 2,
                end: 2,
                anchor: &["2"],
                suggestion: Suggestion::Relative {
                    above: 0,
                    below: 0,
                    lines: strings(&[]),
                },
                want: "1\n",
            },
        ];
        for c in cases {
            let anchor = strings(c.anchor);
            let got = apply_suggestion(c.file, &site(c.start, c.end), &anchor, &c.suggestion);
            assert_eq!(got.as_deref(), Ok(c.want), "{}", c.name);
        }
    }

    #[test]
    fn apply_refusals() {
        let file = "a\nb\nc\n";
        let err = |s: &SuggestionSite, anchor: &[&str], sugg: &Suggestion| {
            apply_suggestion(file, s, &strings(anchor), sugg).unwrap_err()
        };
        let path = "src/lib.rs".to_owned();
        assert_eq!(
            err(&site(2, 2), &["B"], &range(&["x"])),
            SuggestionError::Mismatch {
                path: path.clone(),
                start_line: 2,
                end_line: 2,
                line: 2
            }
        );
        assert_eq!(
            err(&site(1, 3), &["a", "b", "C"], &range(&["x"])),
            SuggestionError::Mismatch {
                path: path.clone(),
                start_line: 1,
                end_line: 3,
                line: 3
            }
        );
        assert_eq!(
            err(&site(1, 2), &["a"], &range(&["x"])),
            SuggestionError::AnchorLength {
                path: path.clone(),
                start_line: 1,
                end_line: 2,
                anchor_lines: 1,
                range_lines: 2
            }
        );
        assert_eq!(
            err(&site(3, 4), &["c", ""], &range(&["x"])),
            SuggestionError::OutOfBounds {
                path: path.clone(),
                start_line: 3,
                end_line: 4,
                file_lines: 3
            }
        );
        assert_eq!(
            err(&site(3, 2), &[], &range(&["x"])),
            SuggestionError::InvalidRange {
                path: path.clone(),
                start_line: 3,
                end_line: 2
            }
        );
        assert_eq!(
            err(&site(0, 1), &["a"], &range(&["x"])),
            SuggestionError::InvalidRange {
                path: path.clone(),
                start_line: 0,
                end_line: 1
            }
        );
        let mut left = site(1, 1);
        left.side = DiffSide::Left;
        assert_eq!(
            err(&left, &["a"], &range(&["x"])),
            SuggestionError::LeftSide {
                path: path.clone(),
                start_line: 1,
                end_line: 1
            }
        );
        let above = Suggestion::Relative {
            above: 2,
            below: 0,
            lines: vec![],
        };
        assert_eq!(
            err(&site(1, 1), &["a"], &above),
            SuggestionError::OutOfBounds {
                path: path.clone(),
                start_line: 0,
                end_line: 1,
                file_lines: 3
            }
        );
        let below = Suggestion::Relative {
            above: 0,
            below: 1,
            lines: vec![],
        };
        assert_eq!(
            err(&site(3, 3), &["c", ""], &below),
            SuggestionError::OutOfBounds {
                path: path.clone(),
                start_line: 3,
                end_line: 4,
                file_lines: 3
            }
        );
        // Whitespace counts: a reindented line is a change.
        assert!(matches!(
            err(&site(2, 2), &[" b"], &range(&["x"])),
            SuggestionError::Mismatch { .. }
        ));
        // An empty file has no lines to anchor to.
        assert!(matches!(
            apply_suggestion("", &site(1, 1), &strings(&[""]), &range(&["x"])),
            Err(SuggestionError::OutOfBounds { file_lines: 0, .. })
        ));
    }

    #[test]
    fn errors_name_path_and_lines() {
        let e = SuggestionError::Mismatch {
            path: "src/a.rs".into(),
            start_line: 3,
            end_line: 5,
            line: 4,
        };
        assert_eq!(
            e.to_string(),
            "src/a.rs:3-5: line 4 no longer matches what the reviewer saw"
        );
        let e = SuggestionError::Ambiguous {
            path: "src/a.rs".into(),
            count: 2,
        };
        assert!(e
            .to_string()
            .starts_with("src/a.rs: thread has 2 different suggestion blocks"));
    }

    // ---- threads ---------------------------------------------------------

    /// The account Shepherd runs as.
    const VIEWER: &str = "shep";

    fn comment(id: &str, body: &str, hunk: Option<&str>) -> Comment {
        comment_by("rev", id, body, hunk)
    }

    fn comment_by(login: &str, id: &str, body: &str, hunk: Option<&str>) -> Comment {
        Comment {
            id: id.to_owned(),
            database_id: Some(1),
            author: Some(Author {
                login: login.into(),
                kind: AuthorKind::User,
            }),
            body: body.to_owned(),
            url: String::new(),
            created_at: "2024-01-01T00:00:00Z".into(),
            diff_hunk: hunk.map(Into::into),
            review_state: None,
            review_submitted_at: None,
        }
    }

    const THREAD_HUNK: &str =
        "@@ -1,3 +1,4 @@\n fn f() {\n-    old();\n+    let a = 1;\n+    let b = 2;";

    fn thread(comments: Vec<Comment>) -> ReviewThread {
        crate::testing::thread("PRRT_1")
            .path("src/f.rs")
            .current(Some(12), Some(13))
            .original(Some(2), Some(3))
            .comments(comments)
            .build()
    }

    #[test]
    fn thread_edit_uses_original_lines_as_anchor_and_current_lines_as_site() {
        let t = thread(vec![comment(
            "C1",
            "```suggestion\n    let (a, b) = (1, 2);\n```",
            Some(THREAD_HUNK),
        )]);
        let edit = SuggestionEdit::from_thread(&t, VIEWER).unwrap();
        assert_eq!(edit.comment_id, "C1");
        assert_eq!(
            edit.site,
            SuggestionSite {
                path: "src/f.rs".into(),
                side: DiffSide::Right,
                start_line: 12,
                end_line: 13
            }
        );
        assert_eq!(edit.anchor, strings(&["    let a = 1;", "    let b = 2;"]));
        let mut file: String = (1..=11).map(|i| format!("l{i}\n")).collect();
        file.push_str("    let a = 1;\n    let b = 2;\n}\n");
        let out = edit.apply(&file).unwrap();
        assert!(out.ends_with("l11\n    let (a, b) = (1, 2);\n}\n"), "{out}");
        // Someone changed the lines meanwhile: refused.
        let changed = file.replace("let b = 2", "let b = 3");
        assert!(matches!(
            edit.apply(&changed),
            Err(SuggestionError::Mismatch { line: 13, .. })
        ));
    }

    #[test]
    fn thread_refusals() {
        let ok = || {
            thread(vec![comment(
                "C1",
                "```suggestion\nx\n```",
                Some(THREAD_HUNK),
            )])
        };
        let kind = |t: &ReviewThread| SuggestionEdit::from_thread(t, VIEWER).unwrap_err();

        let mut t = ok();
        t.is_outdated = true;
        assert!(matches!(kind(&t), SuggestionError::Outdated { .. }));
        let mut t = ok();
        t.line = None;
        assert!(matches!(kind(&t), SuggestionError::Outdated { .. }));
        let mut t = ok();
        t.diff_side = DiffSide::Left;
        assert!(matches!(kind(&t), SuggestionError::LeftSide { .. }));
        let mut t = ok();
        t.subject_type = SubjectType::File;
        assert!(matches!(kind(&t), SuggestionError::NotOnLines { .. }));
        let mut t = ok();
        t.start_line = Some(14);
        assert!(matches!(kind(&t), SuggestionError::InvalidRange { .. }));
        let mut t = ok();
        t.comments[0].diff_hunk = None;
        assert!(matches!(
            kind(&t),
            SuggestionError::AnchorUnavailable { .. }
        ));
        let mut t = ok();
        t.original_start_line = Some(1); // 3 original lines for 2 current ones
        assert!(matches!(
            kind(&t),
            SuggestionError::AnchorUnavailable { .. }
        ));
        let mut t = ok();
        t.comments[0].body = "no block here".into();
        assert!(matches!(kind(&t), SuggestionError::NoSuggestion { .. }));
        // GitLab's relative form is not a GitHub suggestion.
        let mut t = ok();
        t.comments[0].body = "```suggestion:-1+0\nx\n```".into();
        assert!(matches!(kind(&t), SuggestionError::NoSuggestion { .. }));
        // Two different blocks in one comment, or across comments: ambiguous.
        let mut t = ok();
        t.comments[0].body = "```suggestion\nx\n```\n```suggestion\ny\n```".into();
        assert_eq!(
            kind(&t),
            SuggestionError::Ambiguous {
                path: "src/f.rs".into(),
                count: 2
            }
        );
        let mut t = ok();
        t.comments.push(comment(
            "C2",
            "or\n```suggestion\ny\n```",
            Some(THREAD_HUNK),
        ));
        assert_eq!(
            kind(&t),
            SuggestionError::Ambiguous {
                path: "src/f.rs".into(),
                count: 2
            }
        );
    }

    #[test]
    fn thread_repeats_and_own_replies_do_not_make_ambiguity() {
        let mut t = thread(vec![comment(
            "C1",
            "```suggestion\nx\n```",
            Some(THREAD_HUNK),
        )]);
        t.comments.push(comment(
            "C2",
            "same again\n```suggestion\nx\n```",
            Some(THREAD_HUNK),
        ));
        let own = Marker::new("PRRT_1", 1, false).append_to("Quoting:\n```suggestion\nother\n```");
        t.comments
            .push(comment_by(VIEWER, "C3", &own, Some(THREAD_HUNK)));
        let edit = SuggestionEdit::from_thread(&t, VIEWER).unwrap();
        assert_eq!(edit.comment_id, "C1");
        assert_eq!(edit.suggestion, range(&["x"]));
        // The same comment by anyone else is an ordinary comment: a marker
        // pasted in it does not hide its suggestion.
        t.comments.pop();
        t.comments.push(comment("C3", &own, Some(THREAD_HUNK)));
        assert_eq!(
            SuggestionEdit::from_thread(&t, VIEWER),
            Err(SuggestionError::Ambiguous {
                path: "src/f.rs".into(),
                count: 2
            })
        );
    }

    #[test]
    fn one_line_thread_without_start_line() {
        let mut t = thread(vec![comment("C1", "```suggestion\n```", Some(THREAD_HUNK))]);
        t.start_line = None;
        t.original_start_line = None;
        let edit = SuggestionEdit::from_thread(&t, VIEWER).unwrap();
        assert_eq!((edit.site.start_line, edit.site.end_line), (13, 13));
        assert_eq!(edit.anchor, strings(&["    let b = 2;"]));
        assert!(edit.suggestion.is_deletion());
    }

    // ---- GitLab ------------------------------------------------------------

    /// `l1` … `l12`, one per line.
    fn twelve() -> String {
        (1..=12).map(|i| format!("l{i}\n")).collect()
    }

    /// A GitLab thread (no diff hunk) on `src/f.rs`, lines `start..=line`.
    fn gitlab_thread(start: Option<u32>, line: u32, bodies: &[&str]) -> ReviewThread {
        crate::testing::thread("0123456789abcdef0123456789abcdef01234567")
            .path("src/f.rs")
            .range(start, line)
            .comments(
                bodies
                    .iter()
                    .enumerate()
                    .map(|(i, body)| comment(&format!("{}", 100 + i), body, None)),
            )
            .build()
    }

    #[test]
    fn gitlab_ranges_are_relative_to_the_commented_line() {
        // (case, start_line, line, body, replaced range, file afterwards: the
        // lines of l1..l12 kept, with the new text where the range was)
        type Case = (
            &'static str,
            Option<u32>,
            u32,
            &'static str,
            (u32, u32),
            &'static str,
        );
        let cases: &[Case] = &[
            (
                "single line -0+0",
                None,
                10,
                "```suggestion:-0+0\nX\n```",
                (10, 10),
                "l9 X l11",
            ),
            (
                "plain block is -0+0",
                None,
                10,
                "```suggestion\nX\n```",
                (10, 10),
                "l9 X l11",
            ),
            (
                "plain block on a multi-line thread: the commented line",
                Some(8),
                10,
                "```suggestion\nX\n```",
                (10, 10),
                "l9 X l11",
            ),
            (
                "multi-line -2+0",
                Some(8),
                10,
                "```suggestion:-2+0\nX\nY\n```",
                (8, 10),
                "l7 X Y l11",
            ),
            (
                "-2+0 on a one-line thread",
                None,
                10,
                "```suggestion:-2+0\nX\n```",
                (8, 10),
                "l7 X l11",
            ),
            (
                "lines below +1",
                None,
                10,
                "```suggestion:-0+1\nX\n```",
                (10, 11),
                "l9 X l12",
            ),
            (
                "above and below -1+2",
                None,
                10,
                "```suggestion:-1+2\nX\n```",
                (9, 12),
                "l8 X",
            ),
            (
                "deletion",
                None,
                10,
                "```suggestion:-0+0\n```",
                (10, 10),
                "l9 l11",
            ),
            (
                "first line",
                None,
                1,
                "```suggestion:-0+0\nX\n```",
                (1, 1),
                "X l2",
            ),
        ];
        for (name, start, line, body, range, around) in cases {
            let t = gitlab_thread(*start, *line, &[body]);
            let edit = SuggestionEdit::from_gitlab_thread(&t, VIEWER, Some(&twelve()))
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(edit.effective_range().unwrap(), *range, "{name}");
            assert_eq!(edit.comment_id, "100", "{name}");
            assert!(!edit.anchor_pending, "{name}");
            let want: Vec<String> = (range.0..=range.1).map(|i| format!("l{i}")).collect();
            assert_eq!(edit.anchor, want, "{name}: the head's lines of the range");
            let out = edit.apply(&twelve()).unwrap();
            let words = out.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(words.contains(around), "{name}: {words}");
            let kept = 12 - (range.1 - range.0 + 1) as usize;
            let added = edit.suggestion.lines().len();
            assert_eq!(out.lines().count(), kept + added, "{name}: {out}");
            // The same through the forge-dispatching constructor.
            let same =
                SuggestionEdit::from_thread_with(&t, ForgeKind::GitLab, VIEWER, Some(&twelve()));
            assert_eq!(same, Ok(edit), "{name}");
        }
    }

    #[test]
    fn gitlab_refusals() {
        let file = twelve();
        let edit = |t: &ReviewThread| SuggestionEdit::from_gitlab_thread(t, VIEWER, Some(&file));
        let block = "```suggestion:-1+0\nX\n```";
        type Case = (&'static str, ReviewThread, fn(&SuggestionError) -> bool);
        let cases: Vec<Case> = vec![
            (
                "outdated",
                {
                    let mut t = gitlab_thread(None, 10, &[block]);
                    t.is_outdated = true;
                    t
                },
                |e| matches!(e, SuggestionError::Outdated { .. }),
            ),
            (
                "no line on the head",
                {
                    let mut t = gitlab_thread(None, 10, &[block]);
                    t.line = None;
                    t
                },
                |e| matches!(e, SuggestionError::Outdated { .. }),
            ),
            (
                "left side",
                {
                    let mut t = gitlab_thread(None, 10, &[block]);
                    t.diff_side = DiffSide::Left;
                    t
                },
                |e| matches!(e, SuggestionError::LeftSide { .. }),
            ),
            (
                "file thread",
                {
                    let mut t = gitlab_thread(None, 10, &[block]);
                    t.subject_type = SubjectType::File;
                    t
                },
                |e| matches!(e, SuggestionError::NotOnLines { .. }),
            ),
            (
                "reversed range",
                gitlab_thread(Some(11), 10, &[block]),
                |e| matches!(e, SuggestionError::InvalidRange { .. }),
            ),
            (
                "no block",
                gitlab_thread(None, 10, &["Please rename this."]),
                |e| matches!(e, SuggestionError::NoSuggestion { .. }),
            ),
            (
                "two different blocks",
                gitlab_thread(None, 10, &[block, "```suggestion:-0+0\nY\n```"]),
                |e| matches!(e, SuggestionError::Ambiguous { count: 2, .. }),
            ),
            (
                "above line 1",
                gitlab_thread(None, 2, &["```suggestion:-2+0\nX\n```"]),
                |e| {
                    matches!(
                        e,
                        SuggestionError::InvalidRange {
                            start_line: 0,
                            end_line: 2,
                            ..
                        }
                    )
                },
            ),
            (
                "below the end of the file",
                gitlab_thread(None, 10, &["```suggestion:-0+3\nX\n```"]),
                |e| {
                    matches!(
                        e,
                        SuggestionError::OutOfBounds {
                            start_line: 10,
                            end_line: 13,
                            file_lines: 12,
                            ..
                        }
                    )
                },
            ),
        ];
        for (name, t, want) in cases {
            let err = edit(&t).expect_err(name);
            assert!(want(&err), "{name}: {err:?}");
        }
        // A repeat, and Shepherd's own reply quoting another block, are not
        // a second suggestion.
        let own = Marker::new("d", 1, false).append_to("```suggestion:-0+0\nZ\n```");
        let mut t = gitlab_thread(None, 10, &[block, block, &own]);
        let pasted = t.clone();
        if let Some(c) = t.comments.last_mut() {
            c.author = comment_by(VIEWER, "x", "", None).author;
        }
        assert_eq!(edit(&t).unwrap().suggestion.lines(), ["X"]);
        // Pasted by someone else, the marker hides nothing.
        assert!(matches!(
            edit(&pasted),
            Err(SuggestionError::Ambiguous { count: 2, .. })
        ));
    }

    #[test]
    fn gitlab_lines_that_changed_after_the_head_are_refused() {
        let t = gitlab_thread(Some(8), 10, &["```suggestion:-2+0\nX\n```"]);
        let edit = SuggestionEdit::from_gitlab_thread(&t, VIEWER, Some(&twelve())).unwrap();
        // Someone changed a line of the range.
        let changed = twelve().replace("l9\n", "l9 changed\n");
        assert_eq!(
            edit.apply(&changed),
            Err(SuggestionError::Mismatch {
                path: "src/f.rs".into(),
                start_line: 8,
                end_line: 10,
                line: 9
            })
        );
        // An earlier fix added a line above: the range moved.
        let shifted = format!("l0\n{}", twelve());
        assert!(matches!(
            edit.apply(&shifted),
            Err(SuggestionError::Mismatch { line: 8, .. })
        ));
        // The head itself applies.
        assert!(edit.apply(&twelve()).is_ok());
    }

    #[test]
    fn gitlab_anchor_pending_until_pinned() {
        let t = gitlab_thread(None, 10, &["```suggestion:-1+0\nX\n```"]);
        let pending = SuggestionEdit::from_gitlab_thread(&t, VIEWER, None).unwrap();
        assert!(pending.anchor_pending && pending.anchor.is_empty());
        assert_eq!(
            pending.apply(&twelve()),
            Err(SuggestionError::AnchorPending {
                path: "src/f.rs".into(),
                start_line: 9,
                end_line: 10
            })
        );
        let json = serde_json::to_value(&pending).unwrap();
        assert_eq!(json["anchor_pending"], true);
        let pinned = pending.pinned(&twelve()).unwrap();
        assert_eq!(pinned.anchor, strings(&["l9", "l10"]));
        assert!(!serde_json::to_value(&pinned)
            .unwrap()
            .as_object()
            .unwrap()
            .contains_key("anchor_pending"));
        assert_eq!(pinned.pinned("other\n").unwrap(), pinned, "pinned once");
        assert!(pinned.apply(&twelve()).unwrap().contains("l8\nX\nl11\n"));
        // A file too short for the range is refused when pinned.
        assert!(matches!(
            pending.pinned("l1\n"),
            Err(SuggestionError::OutOfBounds { file_lines: 1, .. })
        ));
    }

    #[test]
    fn each_forge_reads_its_own_syntax() {
        // GitHub ignores GitLab's form and needs its diff hunk.
        let gitlab_form = thread(vec![comment(
            "C1",
            "```suggestion:-1+0\nx\n```",
            Some(THREAD_HUNK),
        )]);
        assert!(matches!(
            SuggestionEdit::from_thread_with(&gitlab_form, ForgeKind::GitHub, VIEWER, Some("f")),
            Err(SuggestionError::NoSuggestion { .. })
        ));
        // The same plain block: GitHub replaces the thread's range, GitLab
        // the commented line.
        let plain = thread(vec![comment(
            "C1",
            "```suggestion\nx\n```",
            Some(THREAD_HUNK),
        )]);
        let github =
            SuggestionEdit::from_thread_with(&plain, ForgeKind::GitHub, VIEWER, None).unwrap();
        assert_eq!(github.effective_range().unwrap(), (12, 13));
        let file: String = (1..=13).map(|i| format!("l{i}\n")).collect();
        let gitlab =
            SuggestionEdit::from_thread_with(&plain, ForgeKind::GitLab, VIEWER, Some(&file))
                .unwrap();
        assert_eq!(gitlab.effective_range().unwrap(), (13, 13));
        assert_eq!(gitlab.anchor, strings(&["l13"]));
    }

    // ---- properties ------------------------------------------------------

    fn file_strategy() -> impl Strategy<Value = (Vec<String>, bool, bool)> {
        (
            prop::collection::vec("[a-z \t{}();]{0,8}", 1..12),
            any::<bool>(), // crlf
            any::<bool>(), // trailing newline
        )
            // Without a trailing newline, a last empty line is no line at all.
            .prop_map(|(lines, crlf, trailing)| {
                let trailing = trailing || lines.last().is_some_and(String::is_empty);
                (lines, crlf, trailing)
            })
    }

    fn render(lines: &[String], crlf: bool, trailing: bool) -> String {
        let eol = if crlf { "\r\n" } else { "\n" };
        let mut s = lines.join(eol);
        if trailing {
            s.push_str(eol);
        }
        s
    }

    proptest! {
        #[test]
        fn applying_the_current_lines_is_the_identity(
            (lines, crlf, trailing) in file_strategy(),
            a in any::<prop::sample::Index>(),
            b in any::<prop::sample::Index>(),
        ) {
            let file = render(&lines, crlf, trailing);
            let (i, j) = (a.index(lines.len()), b.index(lines.len()));
            let (first, last) = (i.min(j), i.max(j));
            let current = lines[first..=last].to_vec();
            let s = site(first as u32 + 1, last as u32 + 1);
            let out = apply_suggestion(&file, &s, &current, &Suggestion::Range { lines: current.clone() });
            prop_assert_eq!(out, Ok(file));
        }

        #[test]
        fn line_count_after_is_before_minus_range_plus_suggestion(
            (lines, crlf, trailing) in file_strategy(),
            a in any::<prop::sample::Index>(),
            b in any::<prop::sample::Index>(),
            new in prop::collection::vec("[a-z ]{0,6}", 0..6),
        ) {
            let file = render(&lines, crlf, trailing);
            let (i, j) = (a.index(lines.len()), b.index(lines.len()));
            let (first, last) = (i.min(j), i.max(j));
            let current = lines[first..=last].to_vec();
            let s = site(first as u32 + 1, last as u32 + 1);
            let out = apply_suggestion(&file, &s, &current, &Suggestion::Range { lines: new.clone() }).unwrap();
            let after = Lines::parse(&out);
            let mut want = lines[..first].to_vec();
            want.extend(new.iter().cloned());
            want.extend(lines[last + 1..].iter().cloned());
            // Without a trailing newline, an empty last line is no line at all
            // ("a" + "\n" + ""): the one case where the count drops by one.
            let absorbed = !trailing && want.last().is_some_and(String::is_empty);
            prop_assert_eq!(
                after.lines.len() + usize::from(absorbed),
                lines.len() - current.len() + new.len()
            );
            if absorbed {
                want.pop();
            }
            prop_assert_eq!(after.lines.iter().map(|(l, _)| l.to_string()).collect::<Vec<_>>(), want.clone());
            if !want.is_empty() {
                prop_assert_eq!(after.has_trailing_newline(), trailing || absorbed);
                // A one-line file without a newline has no style: LF then.
                let eol = if crlf && (lines.len() > 1 || trailing) { "\r\n" } else { "\n" };
                prop_assert!(after.lines.iter().all(|(_, e)| e.is_empty() || *e == eol));
            }
        }

        #[test]
        fn a_changed_line_is_refused(
            (lines, crlf, trailing) in file_strategy(),
            a in any::<prop::sample::Index>(),
        ) {
            let file = render(&lines, crlf, trailing);
            let i = a.index(lines.len());
            let seen = vec![format!("{}~", lines[i])];
            let s = site(i as u32 + 1, i as u32 + 1);
            let out = apply_suggestion(&file, &s, &seen, &range(&["x"]));
            let is_mismatch = matches!(out, Err(SuggestionError::Mismatch { .. }));
            prop_assert!(is_mismatch);
        }

        #[test]
        fn extraction_never_panics(body in "(```|~~~|suggestion|:-1\\+2|\n|\r| |x|`){0,40}") {
            let _ = extract_suggestions(&body);
        }

        #[test]
        fn a_rendered_block_round_trips(
            new in prop::collection::vec("[a-z ~]{0,6}", 0..6),
            crlf in any::<bool>(),
        ) {
            let eol = if crlf { "\r\n" } else { "\n" };
            let mut body = format!("Please:{eol}```suggestion{eol}");
            for l in &new {
                body.push_str(l);
                body.push_str(eol);
            }
            body.push_str("```");
            prop_assert_eq!(extract_suggestions(&body), vec![Suggestion::Range { lines: new }]);
        }
    }
}
