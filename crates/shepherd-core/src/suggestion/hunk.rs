//! Reading a diff hunk: the lines the reviewer saw.

use super::fence::parse_count;

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
