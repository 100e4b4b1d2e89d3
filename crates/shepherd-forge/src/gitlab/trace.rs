//! Line tracing through a unified diff: where a line of one commit is in a
//! later one, or that it was changed. Pure; the GitLab client uses it to tell
//! whether a diff note's lines still exist on the merge request's head.

/// What a line of a hunk is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Context,
    Removed,
    Added,
}

/// One hunk: where it starts on each side (the first line it covers, even
/// when a side is empty), and its lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hunk {
    old_start: u32,
    new_start: u32,
    lines: Vec<Kind>,
}

/// The hunks of a file's unified diff (`@@ -a,b +c,d @@` headers and their
/// lines; the `---`/`+++` header lines before the first hunk and
/// `\ No newline at end of file` are skipped). `None` when the text is not a
/// diff Shepherd can follow.
pub(crate) fn parse_hunks(diff: &str) -> Option<Vec<Hunk>> {
    let mut hunks: Vec<Hunk> = Vec::new();
    for line in diff.lines() {
        if line.starts_with("@@") {
            hunks.push(parse_header(line)?);
            continue;
        }
        let Some(hunk) = hunks.last_mut() else {
            // `diff --git`, `index`, `---`, `+++`: the file's header.
            continue;
        };
        let kind = match line.as_bytes().first() {
            Some(b' ') | None => Kind::Context,
            Some(b'-') => Kind::Removed,
            Some(b'+') => Kind::Added,
            Some(b'\\') => continue,
            Some(_) => return None,
        };
        hunk.lines.push(kind);
    }
    Some(hunks)
}

/// `@@ -a,b +c,d @@ …`: a side of length 0 starts after its line `a`/`c`.
fn parse_header(header: &str) -> Option<Hunk> {
    let rest = header.strip_prefix("@@ -")?;
    let (old, rest) = rest.split_once(" +")?;
    let (new, _) = rest.split_once(' ').unwrap_or((rest, ""));
    let side = |range: &str| -> Option<u32> {
        let (start, len) = match range.split_once(',') {
            Some((start, len)) => (start.parse::<u32>().ok()?, len.parse::<u32>().ok()?),
            None => (range.parse::<u32>().ok()?, 1),
        };
        Some(if len == 0 {
            start.checked_add(1)?
        } else {
            start
        })
    };
    Some(Hunk {
        old_start: side(old)?,
        new_start: side(new.trim_end_matches("@@").trim())?,
        lines: Vec::new(),
    })
}

/// Where line `line` of the old file is in the new one; `None` when the diff
/// removed (or changed) it.
pub(crate) fn map_line(hunks: &[Hunk], line: u32) -> Option<u32> {
    let mut delta: i64 = 0;
    for hunk in hunks {
        if line < hunk.old_start {
            break;
        }
        let (mut old, mut new) = (hunk.old_start, hunk.new_start);
        for kind in &hunk.lines {
            match kind {
                Kind::Context => {
                    if old == line {
                        return Some(new);
                    }
                    old += 1;
                    new += 1;
                }
                Kind::Removed => {
                    if old == line {
                        return None;
                    }
                    old += 1;
                }
                Kind::Added => new += 1,
            }
        }
        delta = i64::from(new) - i64::from(old);
    }
    u32::try_from(i64::from(line) + delta)
        .ok()
        .filter(|n| *n > 0)
}

/// Where the range `start..=end` of the old file is in the new one: every
/// line kept, none inserted between them. `None` when any line of the range
/// was changed, or lines were added inside it.
pub(crate) fn map_range(hunks: &[Hunk], start: u32, end: u32) -> Option<(u32, u32)> {
    if start > end {
        return None;
    }
    let new_start = map_line(hunks, start)?;
    let new_end = map_line(hunks, end)?;
    if new_end.checked_sub(new_start)? != end - start {
        return None;
    }
    for line in start + 1..end {
        map_line(hunks, line)?;
    }
    Some((new_start, new_end))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;

    /// Old file: lines 1..=10. The new file inserts two lines after 2,
    /// changes line 5, and removes line 9.
    const DIFF: &str = "\
--- a/src/lib.rs
+++ b/src/lib.rs
@@ -1,6 +1,8 @@
 one
 two
+two and a half
+two and three quarters
 three
 four
-five
+FIVE
 six
@@ -8,3 +10,2 @@ fn context() {
 eight
-nine
 ten
\\ No newline at end of file
";

    #[test]
    fn lines_are_followed_through_the_hunks() {
        let hunks = parse_hunks(DIFF).unwrap();
        assert_eq!(hunks.len(), 2);
        let got: Vec<Option<u32>> = (1..=10).map(|l| map_line(&hunks, l)).collect();
        assert_eq!(
            got,
            [
                Some(1),
                Some(2),
                Some(5),
                Some(6),
                None,
                Some(8),
                Some(9),
                Some(10),
                None,
                Some(11)
            ]
        );
        assert_eq!(map_line(&hunks, 40), Some(41), "after every hunk: shifted");
    }

    #[test]
    fn ranges_must_be_intact() {
        let hunks = parse_hunks(DIFF).unwrap();
        assert_eq!(map_range(&hunks, 3, 4), Some((5, 6)));
        assert_eq!(map_range(&hunks, 4, 6), None, "line 5 changed");
        assert_eq!(map_range(&hunks, 2, 3), None, "lines inserted inside");
        assert_eq!(map_range(&hunks, 6, 6), Some((8, 8)));
        assert_eq!(map_range(&hunks, 7, 6), None);
    }

    #[test]
    fn empty_sides_start_after_their_line() {
        // Two lines inserted after line 3 of the old file.
        let hunks = parse_hunks("@@ -3,0 +4,2 @@\n+a\n+b\n").unwrap();
        assert_eq!(map_line(&hunks, 3), Some(3));
        assert_eq!(map_line(&hunks, 4), Some(6));
        // Lines 2 and 3 deleted.
        let hunks = parse_hunks("@@ -2,2 +1,0 @@\n-x\n-y\n").unwrap();
        assert_eq!(map_line(&hunks, 1), Some(1));
        assert_eq!(map_line(&hunks, 2), None);
        assert_eq!(map_line(&hunks, 4), Some(2));
        // A file created from nothing.
        let hunks = parse_hunks("@@ -0,0 +1,3 @@\n+a\n+b\n+c\n").unwrap();
        assert_eq!(hunks[0].old_start, 1);
    }

    #[test]
    fn garbage_is_not_a_diff() {
        assert!(parse_hunks("@@ -1 +1 @@\n?what\n").is_none());
        assert!(parse_hunks("@@ nonsense @@\n").is_none());
        assert_eq!(parse_hunks("").unwrap(), Vec::new());
    }
}
