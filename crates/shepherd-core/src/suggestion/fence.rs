//! The fence parser: every ```` ```suggestion ```` block of a comment body.

use super::model::Suggestion;

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
    pub(super) ch: u8,
    /// How many fence characters opened it.
    pub(super) len: usize,
    /// Spaces before the fence, removed from content lines.
    pub(super) indent: usize,
}

impl Fence {
    pub(super) fn is_closed_by(&self, line: &str) -> bool {
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
    pub(super) fn into_suggestion(self, lines: Vec<String>) -> Suggestion {
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

pub(super) fn parse_count(digits: &str) -> Option<u32> {
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

fn strip_indent(line: &str, indent: usize) -> &str {
    let spaces = line.bytes().take(indent).take_while(|b| *b == b' ').count();
    &line[spaces..]
}
