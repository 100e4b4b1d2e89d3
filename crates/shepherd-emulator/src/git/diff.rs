//! Unified diffs: `git diff` parsed into hunks, and what GitHub derives from
//! them (a comment's `diffHunk` and `position`, a file's patch and counts,
//! the added lines the bots read, where a line moves after a push).

use std::collections::BTreeMap;
use std::path::Path;

use super::env::{GitEnv, GitError};

/// The unified diff between two commits, parsed per file.
pub(crate) fn diff(
    git: &GitEnv,
    git_dir: &Path,
    from: &str,
    to: &str,
) -> Result<BTreeMap<String, Vec<Hunk>>, GitError> {
    // Three lines of context, git's default.
    Ok(parse_diff(&diff_text(git, git_dir, from, to)?))
}

/// One hunk of a unified diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hunk {
    header: String,
    /// First old line of the hunk (the line after which it inserts when
    /// `old_count` is 0).
    old_start: u32,
    old_count: u32,
    lines: Vec<HunkLine>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct HunkLine {
    text: String,
    old: Option<u32>,
    new: Option<u32>,
}

/// Parses `git diff` output into hunks keyed by the file's path (the new
/// path, or the old one for a deleted file).
pub(crate) fn parse_diff(diff: &str) -> BTreeMap<String, Vec<Hunk>> {
    let mut files: BTreeMap<String, Vec<Hunk>> = BTreeMap::new();
    let mut old_path: Option<String> = None;
    let mut path: Option<String> = None;
    let (mut old_no, mut new_no) = (0u32, 0u32);
    // Lines still expected in the current hunk, from its header: a removed
    // line reading "-- x" must not be taken for a "--- a/…" file header.
    let (mut old_left, mut new_left) = (0u32, 0u32);
    for line in diff.lines() {
        let in_hunk = old_left > 0 || new_left > 0;
        let hunk = path
            .as_ref()
            .and_then(|p| files.get_mut(p))
            .and_then(|hunks| hunks.last_mut());
        if in_hunk || line.starts_with('\\') {
            let Some(hunk) = hunk else { continue };
            let (old, new) = match line.as_bytes().first() {
                Some(b' ') => (Some(old_no), Some(new_no)),
                Some(b'-') => (Some(old_no), None),
                Some(b'+') => (None, Some(new_no)),
                // "\ No newline at end of file".
                _ => (None, None),
            };
            if old.is_some() {
                old_no += 1;
                old_left = old_left.saturating_sub(1);
            }
            if new.is_some() {
                new_no += 1;
                new_left = new_left.saturating_sub(1);
            }
            hunk.lines.push(HunkLine {
                text: line.to_owned(),
                old,
                new,
            });
        } else if line.starts_with("diff --git ") {
            old_path = None;
            path = None;
        } else if let Some(p) = line.strip_prefix("--- ") {
            old_path = p.strip_prefix("a/").map(str::to_owned);
        } else if let Some(p) = line.strip_prefix("+++ ") {
            path = p.strip_prefix("b/").map(str::to_owned).or(old_path.clone());
        } else if line.starts_with("@@ ") {
            let Some(current) = &path else { continue };
            let Some(header) = parse_hunk_header(line) else {
                continue;
            };
            (old_no, old_left, new_no, new_left) = header;
            files.entry(current.clone()).or_default().push(Hunk {
                header: line.to_owned(),
                old_start: old_no,
                old_count: old_left,
                lines: Vec::new(),
            });
        }
    }
    files
}

/// `@@ -a,b +c,d @@ …` to `(a, b, c, d)`; a missing count is 1.
fn parse_hunk_header(line: &str) -> Option<(u32, u32, u32, u32)> {
    let mut parts = line.split(' ').skip(1);
    let old = parts.next()?.strip_prefix('-')?;
    let new = parts.next()?.strip_prefix('+')?;
    let range = |range: &str| -> Option<(u32, u32)> {
        let mut it = range.split(',');
        let start = it.next()?.parse().ok()?;
        let count = match it.next() {
            Some(count) => count.parse().ok()?,
            None => 1,
        };
        Some((start, count))
    };
    let (old_start, old_count) = range(old)?;
    let (new_start, new_count) = range(new)?;
    Some((old_start, old_count, new_start, new_count))
}

/// GitHub's `diffHunk` for a comment at `line` on one side: the hunk header
/// and the hunk's lines up to and including the commented line. `None` when
/// the line is not in the diff.
pub(crate) fn diff_hunk(hunks: &[Hunk], line: u32, left_side: bool) -> Option<String> {
    for hunk in hunks {
        let position = hunk.lines.iter().position(|l| {
            if left_side {
                l.old == Some(line)
            } else {
                l.new == Some(line)
            }
        });
        if let Some(position) = position {
            let mut out = hunk.header.clone();
            for l in &hunk.lines[..=position] {
                out.push('\n');
                out.push_str(&l.text);
            }
            return Some(out);
        }
    }
    None
}

/// GitHub's `position` of `line` on one side of a file's diff: the line's
/// index below the file's first `@@` header (1 for the first line; later
/// hunk headers count as lines). `None` when the line is not in the diff.
pub(crate) fn diff_position(hunks: &[Hunk], line: u32, left_side: bool) -> Option<u32> {
    let mut position = 0u32;
    for (i, hunk) in hunks.iter().enumerate() {
        if i > 0 {
            position += 1;
        }
        for l in &hunk.lines {
            position += 1;
            let number = if left_side { l.old } else { l.new };
            if number == Some(line) {
                return Some(position);
            }
        }
    }
    None
}

/// A file's patch as GitHub's `pulls/N/files` shows it: its hunks, headers
/// included, without the file header.
pub(crate) fn patch_text(hunks: &[Hunk]) -> String {
    let mut out = Vec::new();
    for hunk in hunks {
        out.push(hunk.header.as_str());
        out.extend(hunk.lines.iter().map(|l| l.text.as_str()));
    }
    out.join("\n")
}

/// Lines added and removed by a file's hunks, and whether the file is new
/// (no old lines) or deleted (no new lines).
pub(crate) fn change_counts(hunks: &[Hunk]) -> (u32, u32, bool, bool) {
    let lines = hunks.iter().flat_map(|h| h.lines.iter());
    let (mut added, mut removed, mut old_seen, mut new_seen) = (0, 0, false, false);
    for l in lines {
        match (l.old, l.new) {
            (None, Some(_)) => added += 1,
            (Some(_), None) => removed += 1,
            _ => {}
        }
        old_seen |= l.old.is_some();
        new_seen |= l.new.is_some();
    }
    (added, removed, !old_seen, !new_seen)
}

/// The unified diff `from..to` as `git diff` prints it.
pub(crate) fn diff_text(
    git: &GitEnv,
    git_dir: &Path,
    from: &str,
    to: &str,
) -> Result<String, GitError> {
    let text = git.run(
        git_dir,
        &[
            "-c",
            "core.quotePath=false",
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--no-renames",
            from,
            to,
        ],
    )?;
    // `run` trims; a diff ends with a newline.
    Ok(if text.is_empty() { text } else { text + "\n" })
}

/// A line the diff adds on the new side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AddedLine {
    pub(crate) path: String,
    pub(crate) line: u32,
    /// The line's text, without the leading `+`.
    pub(crate) text: String,
}

/// Every added line of a parsed diff, by path then line.
pub(crate) fn added_lines(files: &BTreeMap<String, Vec<Hunk>>) -> Vec<AddedLine> {
    let mut out = Vec::new();
    for (path, hunks) in files {
        for hunk in hunks {
            for line in &hunk.lines {
                if let (None, Some(new)) = (line.old, line.new) {
                    out.push(AddedLine {
                        path: path.clone(),
                        line: new,
                        text: line.text.get(1..).unwrap_or_default().to_owned(),
                    });
                }
            }
        }
    }
    out
}

/// Where old line `line` is on the new side of a file's diff; `None` when
/// the diff removes it.
pub(crate) fn map_old_line(hunks: &[Hunk], line: u32) -> Option<u32> {
    let mut offset: i64 = 0;
    for hunk in hunks {
        if let Some(l) = hunk.lines.iter().find(|l| l.old == Some(line)) {
            return l.new;
        }
        let before = if hunk.old_count == 0 {
            // A pure insertion after `old_start`.
            hunk.old_start < line
        } else {
            hunk.old_start + hunk.old_count <= line
        };
        if !before {
            break;
        }
        let added = hunk
            .lines
            .iter()
            .filter(|l| l.old.is_none() && l.new.is_some());
        let removed = hunk
            .lines
            .iter()
            .filter(|l| l.old.is_some() && l.new.is_none());
        offset += added.count() as i64 - removed.count() as i64;
    }
    u32::try_from(i64::from(line) + offset).ok()
}

/// Where the old range `start..=end` is after a change to its file
/// (`None` for a file the diff does not touch: unchanged). The answer is
/// `Err(())` when a line of the range was changed or removed, or lines were
/// inserted inside it: the thread is outdated.
pub(crate) fn remap_range(hunks: Option<&[Hunk]>, start: u32, end: u32) -> Result<(u32, u32), ()> {
    let Some(hunks) = hunks else {
        return Ok((start, end));
    };
    let new_start = map_old_line(hunks, start).ok_or(())?;
    let new_end = map_old_line(hunks, end).ok_or(())?;
    for line in start..=end {
        map_old_line(hunks, line).ok_or(())?;
    }
    if new_end.checked_sub(new_start) != end.checked_sub(start) {
        return Err(());
    }
    Ok((new_start, new_end))
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIFF: &str = "diff --git a/src/lib.rs b/src/lib.rs
index 1111111..2222222 100644
--- a/src/lib.rs
+++ b/src/lib.rs
@@ -1,4 +1,5 @@
 fn a() {}
-fn b() {}
+fn b() -> u8 { 1 }
+fn c() {}
 fn d() {}
 fn e() {}
@@ -20,3 +21,3 @@ impl X {
 one
--- two
+deux
 three
diff --git a/old.txt b/old.txt
deleted file mode 100644
--- a/old.txt
+++ /dev/null
@@ -1,2 +0,0 @@
-x
-y
";

    #[test]
    fn parses_files_and_hunks() {
        let files = parse_diff(DIFF);
        assert_eq!(files.len(), 2);
        assert_eq!(files["src/lib.rs"].len(), 2);
        assert_eq!(files["old.txt"].len(), 1);
    }

    #[test]
    fn diff_hunk_stops_at_the_commented_line() {
        let files = parse_diff(DIFF);
        let hunk = diff_hunk(&files["src/lib.rs"], 3, false).unwrap();
        assert_eq!(
            hunk,
            "@@ -1,4 +1,5 @@\n fn a() {}\n-fn b() {}\n+fn b() -> u8 { 1 }\n+fn c() {}"
        );
        let second = diff_hunk(&files["src/lib.rs"], 22, false).unwrap();
        assert!(second.ends_with("+deux"), "{second}");
        let left = diff_hunk(&files["src/lib.rs"], 2, true).unwrap();
        assert!(left.ends_with("-fn b() {}"), "{left}");
        assert_eq!(diff_hunk(&files["src/lib.rs"], 100, false), None);
        assert!(diff_hunk(&files["old.txt"], 2, true)
            .unwrap()
            .ends_with("-y"));
    }

    #[test]
    fn lines_move_with_insertions_above_and_outdate_when_changed() {
        let files = parse_diff(DIFF);
        let hunks = &files["src/lib.rs"];
        // Old line 1 is unchanged context, old 2 replaced, 3..5 shifted by one.
        assert_eq!(map_old_line(hunks, 1), Some(1));
        assert_eq!(map_old_line(hunks, 2), None);
        assert_eq!(map_old_line(hunks, 3), Some(4));
        assert_eq!(map_old_line(hunks, 10), Some(11));
        assert_eq!(map_old_line(hunks, 21), None);
        assert_eq!(map_old_line(hunks, 30), Some(31));
        assert_eq!(remap_range(Some(hunks), 3, 4), Ok((4, 5)));
        assert_eq!(remap_range(Some(hunks), 1, 3), Err(()));
        assert_eq!(remap_range(None, 7, 9), Ok((7, 9)));
    }

    #[test]
    fn an_insertion_inside_a_range_outdates_it() {
        let diff = "diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1,4 +1,5 @@\n one\n two\n+new\n three\n four\n";
        let files = parse_diff(diff);
        let hunks = &files["a"];
        assert_eq!(remap_range(Some(hunks), 1, 2), Ok((1, 2)));
        assert_eq!(remap_range(Some(hunks), 3, 4), Ok((4, 5)));
        assert_eq!(remap_range(Some(hunks), 2, 3), Err(()));
        let added = added_lines(&files);
        assert_eq!(added.len(), 1);
        assert_eq!((added[0].line, added[0].text.as_str()), (3, "new"));
    }
}
