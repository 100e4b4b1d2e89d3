//! Applying a suggestion to a file, its line endings kept.

use crate::model::DiffSide;

use super::error::SuggestionError;
use super::model::{Suggestion, SuggestionSite};

/// A file split into lines, each with its ending.
pub(super) struct Lines<'a> {
    pub(super) lines: Vec<(&'a str, &'a str)>,
}

impl<'a> Lines<'a> {
    pub(super) fn parse(file: &'a str) -> Self {
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
    pub(super) fn style(&self) -> &'a str {
        self.lines
            .iter()
            .map(|(_, ending)| *ending)
            .find(|ending| !ending.is_empty())
            .unwrap_or("\n")
    }

    pub(super) fn has_trailing_newline(&self) -> bool {
        self.lines
            .last()
            .is_some_and(|(_, ending)| !ending.is_empty())
    }
}

/// Replace the lines `site` names with `suggestion`, refusing when the file's
/// current lines differ from `anchor` (the lines the reviewer saw, as given by
/// [`anchored_lines_from_diff_hunk`](crate::suggestion::anchored_lines_from_diff_hunk); a trailing `\r` on an anchor line is
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

/// The lines `start..=end` (1-based) of `file`, without their endings.
pub(super) fn file_lines(file: &str, start: u32, end: u32) -> Option<Vec<String>> {
    let lines = Lines::parse(file);
    let first = usize::try_from(start).ok()?.checked_sub(1)?;
    let last = usize::try_from(end).ok()?.checked_sub(1)?;
    let range = lines.lines.get(first..=last)?;
    Some(range.iter().map(|(line, _)| (*line).to_owned()).collect())
}
