//! A small reader of unified diffs (`git diff` output), enough for the
//! builtin provider to tell whether a fix is exactly a set of suggestion
//! blocks applied as written.

/// One hunk of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hunk {
    /// The file, repository-relative, as it is after the change (before it,
    /// for a deleted file).
    pub path: String,
    /// The first old line the hunk shows (1-based). For a hunk that only
    /// inserts (`-N,0`), the line after which it inserts.
    pub old_start: u32,
    /// The hunk's lines on the old side (context and removed), in order.
    pub old: Vec<String>,
    /// The hunk's lines on the new side (context and added), in order.
    pub new: Vec<String>,
}

impl Hunk {
    /// Whether old lines `start..=end` all lie inside this hunk.
    pub fn covers(&self, start: u32, end: u32) -> bool {
        let len = u32::try_from(self.old.len()).unwrap_or(u32::MAX);
        !self.old.is_empty() && start >= self.old_start && end < self.old_start.saturating_add(len)
    }
}

/// Why a diff could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unreadable diff at line {line}: {reason}")]
pub(crate) struct DiffError {
    /// 1-based line of the diff.
    pub line: usize,
    /// What is wrong.
    pub reason: &'static str,
}

fn strip_prefix_path(raw: &str, prefix: &str) -> Option<String> {
    let raw = raw.split('\t').next().unwrap_or(raw).trim_end();
    if raw == "/dev/null" {
        return None;
    }
    let raw = raw
        .strip_prefix('"')
        .and_then(|r| r.strip_suffix('"'))
        .unwrap_or(raw);
    Some(raw.strip_prefix(prefix).unwrap_or(raw).to_owned())
}

/// `@@ -a[,b] +c[,d] @@ ...` → (a, b, d).
fn parse_header(line: &str) -> Option<(u32, u32, u32)> {
    let rest = line.strip_prefix("@@ -")?;
    let (old, rest) = rest.split_once(" +")?;
    let (new, _) = rest.split_once(" @@")?;
    let range = |r: &str| -> Option<(u32, u32)> {
        match r.split_once(',') {
            Some((s, n)) => Some((s.parse().ok()?, n.parse().ok()?)),
            None => Some((r.parse().ok()?, 1)),
        }
    };
    let (old_start, old_len) = range(old)?;
    let (_, new_len) = range(new)?;
    Some((old_start, old_len, new_len))
}

/// Every hunk of `diff`, in order. Lines outside hunks (headers, `index`,
/// mode lines, binary notes) are skipped; a hunk whose line counts do not
/// match its header is an error.
pub(crate) fn parse(diff: &str) -> Result<Vec<Hunk>, DiffError> {
    let mut hunks = Vec::new();
    let (mut old_path, mut new_path): (Option<String>, Option<String>) = (None, None);
    let lines: Vec<&str> = diff.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if line.starts_with("diff --git ") {
            (old_path, new_path) = (None, None);
        } else if let Some(p) = line.strip_prefix("--- ") {
            old_path = strip_prefix_path(p, "a/");
        } else if let Some(p) = line.strip_prefix("+++ ") {
            new_path = strip_prefix_path(p, "b/");
        } else if line.starts_with("@@ ") {
            let (old_start, old_len, new_len) = parse_header(line).ok_or(DiffError {
                line: i + 1,
                reason: "malformed hunk header",
            })?;
            let path = new_path
                .clone()
                .or_else(|| old_path.clone())
                .ok_or(DiffError {
                    line: i + 1,
                    reason: "hunk without a file header",
                })?;
            let mut hunk = Hunk {
                path,
                old_start,
                old: Vec::new(),
                new: Vec::new(),
            };
            let (mut old_left, mut new_left) = (old_len, new_len);
            i += 1;
            while i < lines.len() && (old_left > 0 || new_left > 0) {
                let l = lines[i];
                let (kind, text) = l.split_at(l.len().min(1));
                let text = text.strip_suffix('\r').unwrap_or(text);
                match kind {
                    " " | "" if old_left > 0 && new_left > 0 => {
                        hunk.old.push(text.to_owned());
                        hunk.new.push(text.to_owned());
                        old_left -= 1;
                        new_left -= 1;
                    }
                    "-" if old_left > 0 => {
                        hunk.old.push(text.to_owned());
                        old_left -= 1;
                    }
                    "+" if new_left > 0 => {
                        hunk.new.push(text.to_owned());
                        new_left -= 1;
                    }
                    "\\" => {}
                    _ => {
                        return Err(DiffError {
                            line: i + 1,
                            reason: "hunk shorter than its header says",
                        })
                    }
                }
                i += 1;
            }
            if old_left > 0 || new_left > 0 {
                return Err(DiffError {
                    line: i,
                    reason: "diff ends inside a hunk",
                });
            }
            hunks.push(hunk);
            continue;
        }
        i += 1;
    }
    Ok(hunks)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;

    const DIFF: &str = "diff --git a/src/a.rs b/src/a.rs
index 1111111..2222222 100644
--- a/src/a.rs
+++ b/src/a.rs
@@ -1,4 +1,5 @@
 l1
-l2
-l3
+two
+and
+three
 l4
\\ No newline at end of file
@@ -9,0 +11,1 @@ fn x()
+added
diff --git a/old.rs b/old.rs
deleted file mode 100644
--- a/old.rs
+++ /dev/null
@@ -1 +0,0 @@
-gone
";

    #[test]
    fn reads_hunks_with_both_sides() {
        let hunks = parse(DIFF).unwrap();
        assert_eq!(hunks.len(), 3);
        assert_eq!(hunks[0].path, "src/a.rs");
        assert_eq!(hunks[0].old_start, 1);
        assert_eq!(hunks[0].old, ["l1", "l2", "l3", "l4"]);
        assert_eq!(hunks[0].new, ["l1", "two", "and", "three", "l4"]);
        assert!(hunks[0].covers(2, 3));
        assert!(!hunks[0].covers(4, 5));
        assert_eq!((hunks[1].old_start, hunks[1].old.len()), (9, 0));
        assert_eq!(hunks[1].new, ["added"]);
        assert!(!hunks[1].covers(9, 9));
        assert_eq!(hunks[2].path, "old.rs");
        assert_eq!(hunks[2].new, Vec::<String>::new());
    }

    #[test]
    fn truncated_hunks_are_errors() {
        let err = parse("--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n-b\n").unwrap_err();
        assert_eq!(err.reason, "diff ends inside a hunk");
        let err = parse("@@ -1 +1 @@\n-a\n+b\n").unwrap_err();
        assert_eq!(err.reason, "hunk without a file header");
        assert!(parse("").unwrap().is_empty());
    }
}
