//! The code around an item's place: the file a review thread is on, read
//! from the repository the run's worktree belongs to (`run.json`'s
//! `cache_dir`) at the PR head the round saw (`rounds/N/pr-state.json`'s
//! `pr.head_sha`), so it is there for a finished run whose worktree is gone
//! and does not move when a later fix commit does.
//!
//! One `git cat-file --batch` per page reads every file the page shows.
//! Paths and file contents are the PR's (untrusted): a path is only ever
//! looked up as `COMMIT:PATH` in git's object database (never opened on the
//! file system), and the pages escape the text.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;

/// Files larger than this are not shown.
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// One file at one commit, as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileAt {
    /// The commit it was read at.
    pub commit: String,
    /// Its lines, without line endings.
    pub lines: Vec<String>,
}

impl FileAt {
    /// Line `n` (1-based), when the file has it.
    pub fn line(&self, n: u32) -> Option<&str> {
        let i = usize::try_from(n).ok()?.checked_sub(1)?;
        self.lines.get(i).map(String::as_str)
    }
}

/// What the page can show of an item's code.
#[derive(Debug, Clone)]
pub enum Code {
    /// Nothing to show: a top-level item or a thread on a whole file.
    NoPlace,
    /// The file the thread is on.
    File(Arc<FileAt>),
    /// The thread has a place, but its lines cannot be shown: why.
    Unavailable(String),
}

/// Whether `sha` is a full commit id (SHA-1 or SHA-256, lowercase hex).
pub fn is_commit_id(sha: &str) -> bool {
    matches!(sha.len(), 40 | 64)
        && sha
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Whether `path` can be looked up as `COMMIT:PATH`: relative, no `.` or
/// `..` component (git reads `COMMIT:./x` and `COMMIT:../x` relative to its
/// working directory, gitrevisions(7)), and nothing that would end the
/// request line of `cat-file --batch`.
pub fn is_tree_path(path: &str) -> bool {
    !path.is_empty()
        && !path.starts_with('/')
        && !path.contains(['\n', '\r', '\0'])
        && path
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != "..")
}

/// The text of each `(commit, path)` of `wanted` in the repository at
/// `git_dir`, or why it cannot be shown. Every entry of `wanted` is
/// answered.
pub fn read_files(
    git_dir: &Path,
    wanted: &[(String, String)],
) -> BTreeMap<(String, String), Result<Arc<FileAt>, String>> {
    let mut out = BTreeMap::new();
    let unique: BTreeSet<&(String, String)> = wanted.iter().collect();
    let (asked, refused): (Vec<_>, Vec<_>) = unique
        .into_iter()
        .partition(|(commit, path)| is_commit_id(commit) && is_tree_path(path));
    for w in refused {
        out.insert(w.clone(), Err("not a path in the repository".to_owned()));
    }
    if asked.is_empty() {
        return out;
    }
    match cat_file_batch(git_dir, &asked) {
        Ok(answers) => {
            for (w, answer) in asked.into_iter().zip(answers) {
                out.insert(w.clone(), answer.map(Arc::new));
            }
        }
        Err(why) => {
            for w in asked {
                out.insert(w.clone(), Err(why.clone()));
            }
        }
    }
    out
}

/// `git --git-dir GIT_DIR cat-file --batch` with one `COMMIT:PATH` line
/// per request; the answers in order. Its output is, per request, either
/// `<oid> <type> <size>` then the object's bytes and a newline, or
/// `<request> missing` (git-cat-file(1), BATCH OUTPUT).
fn cat_file_batch(
    git_dir: &Path,
    asked: &[&(String, String)],
) -> Result<Vec<Result<FileAt, String>>, String> {
    if !git_dir.is_dir() {
        return Err("the repository the run cloned is gone".to_owned());
    }
    let mut cmd = Command::new("git");
    // The environment's GIT_DIR, GIT_OBJECT_DIRECTORY, ... must not pick
    // another repository; nor may the system's configuration apply.
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("GIT_") {
            cmd.env_remove(key);
        }
    }
    let mut child = cmd
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .arg("--git-dir")
        .arg(git_dir)
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("git does not start: {e}"))?;
    let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        let _ = child.kill();
        let _ = child.wait();
        return Err("git's pipes did not open".to_owned());
    };
    let requests: String = asked
        .iter()
        .map(|(commit, path)| format!("{commit}:{path}\n"))
        .collect();
    // Written from another thread: git answers while it reads, and both
    // pipes are bounded.
    let answers = std::thread::scope(|scope| {
        scope.spawn(move || {
            let _ = stdin.write_all(requests.as_bytes());
        });
        let mut reader = BufReader::new(stdout);
        asked
            .iter()
            .map(|(commit, _)| read_answer(&mut reader, commit))
            .collect::<Result<Vec<_>, String>>()
    });
    let _ = child.wait();
    answers
}

/// One answer of `cat-file --batch`: a text file, or why not; `Err` of the
/// outer result when the output is not what git writes.
fn read_answer(reader: &mut impl BufRead, commit: &str) -> Result<Result<FileAt, String>, String> {
    let mut header = String::new();
    reader
        .read_line(&mut header)
        .map_err(|e| format!("reading git's answer: {e}"))?;
    let fields: Vec<&str> = header.split_whitespace().collect();
    let bytes = match fields.as_slice() {
        // Git stopped before answering (not a repository, say).
        [] => return Err("git could not read the repository".to_owned()),
        [_, kind, size] => {
            let size: u64 = size
                .parse()
                .map_err(|_| format!("git answered {header:?}"))?;
            // The object's bytes and the newline after them: kept for a
            // text file, skipped (never held) for anything else.
            let mut object = reader.take(size + 1);
            let skip = if *kind != "blob" {
                Some(format!("a {kind}, not a file"))
            } else if size > MAX_FILE_BYTES {
                Some(format!(
                    "the file is larger than {} KiB",
                    MAX_FILE_BYTES / 1024
                ))
            } else {
                None
            };
            if let Some(why) = skip {
                std::io::copy(&mut object, &mut std::io::sink())
                    .map_err(|e| format!("reading git's answer: {e}"))?;
                return Ok(Err(why));
            }
            let mut bytes = Vec::new();
            object
                .read_to_end(&mut bytes)
                .map_err(|e| format!("reading git's answer: {e}"))?;
            bytes.pop();
            bytes
        }
        [_, "missing"] | [_, "ambiguous"] => {
            return Ok(Err(format!(
                "the file is not in the repository at {}",
                short(commit)
            )))
        }
        _ => return Err(format!("git answered {header:?}")),
    };
    // Git's own test for a binary file: a NUL in the first 8,000 bytes
    // (`buffer_is_binary`, xdiff-interface.c).
    if bytes.iter().take(8000).any(|b| *b == 0) {
        return Ok(Err("a binary file".to_owned()));
    }
    let text = String::from_utf8_lossy(&bytes);
    Ok(Ok(FileAt {
        commit: commit.to_owned(),
        lines: text.lines().map(str::to_owned).collect(),
    }))
}

/// A commit id's first 10 characters.
pub fn short(commit: &str) -> &str {
    commit.get(..10).unwrap_or(commit)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)] // a panic is how a test fails
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .current_dir(dir)
            .envs([("GIT_AUTHOR_NAME", "T"), ("GIT_COMMITTER_NAME", "T")])
            .envs([("EMAIL", "t@example.invalid")])
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "git {args:?}: {stderr}");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// A real repository: `a.sh` (text with markup), `bin` (a NUL), `big`
    /// (over [`MAX_FILE_BYTES`]), a directory; then `a.sh` changed in a
    /// second commit.
    fn repo() -> (tempfile::TempDir, String, String) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git(root, &["init", "-q", "-b", "main"]);
        std::fs::write(root.join("a.sh"), "one\r\n<script>two</script>\nthree").unwrap();
        std::fs::write(root.join("bin"), b"x\0y").unwrap();
        let big = "a line of text\n".repeat((MAX_FILE_BYTES / 15 + 1) as usize);
        std::fs::write(root.join("big"), big).unwrap();
        std::fs::create_dir(root.join("d")).unwrap();
        std::fs::write(root.join("d/f"), "f\n").unwrap();
        git(root, &["add", "."]);
        git(root, &["commit", "-q", "-m", "one"]);
        let first = git(root, &["rev-parse", "HEAD"]);
        std::fs::write(root.join("a.sh"), "changed\n").unwrap();
        git(root, &["commit", "-q", "-am", "two"]);
        let second = git(root, &["rev-parse", "HEAD"]);
        (dir, first, second)
    }

    #[test]
    fn files_are_read_at_their_commit_in_one_batch() {
        let (dir, first, second) = repo();
        let git_dir = dir.path().join(".git");
        let w = |c: &str, p: &str| (c.to_owned(), p.to_owned());
        let wanted = vec![
            w(&first, "a.sh"),
            w(&second, "a.sh"),
            w(&first, "bin"),
            w(&first, "d"),
            w(&first, "nope.sh"),
            w(&first, "../a.sh"),
            w(&first, "./a.sh"),
            w(&first, "/etc/passwd"),
            w(&first, "a.sh\nHEAD:bin"),
            w("HEAD", "a.sh"),
            w(&first, "d/f"),
            w(&first, "big"),
        ];
        let got = read_files(&git_dir, &wanted);
        assert_eq!(got.len(), wanted.len());
        let file = got[&w(&first, "a.sh")].as_ref().unwrap();
        assert_eq!(file.lines, ["one", "<script>two</script>", "three"]);
        assert_eq!(file.commit, first);
        assert_eq!(file.line(2), Some("<script>two</script>"));
        assert_eq!(file.line(0), None);
        assert_eq!(file.line(4), None);
        assert_eq!(
            got[&w(&second, "a.sh")].as_ref().unwrap().lines,
            ["changed"]
        );
        assert_eq!(got[&w(&first, "d/f")].as_ref().unwrap().lines, ["f"]);
        assert_eq!(
            got[&w(&first, "bin")].as_ref().unwrap_err(),
            "a binary file"
        );
        // Skipped, and the answers after it still read right ("bin", "d").
        assert_eq!(
            got[&w(&first, "big")].as_ref().unwrap_err(),
            "the file is larger than 1024 KiB"
        );
        assert_eq!(
            got[&w(&first, "d")].as_ref().unwrap_err(),
            "a tree, not a file"
        );
        assert!(got[&w(&first, "nope.sh")]
            .as_ref()
            .unwrap_err()
            .starts_with("the file is not in the repository at "));
        for bad in ["../a.sh", "./a.sh", "/etc/passwd", "a.sh\nHEAD:bin"] {
            assert_eq!(
                got[&w(&first, bad)].as_ref().unwrap_err(),
                "not a path in the repository",
                "{bad:?}"
            );
        }
        assert!(got[&w("HEAD", "a.sh")].is_err(), "only full commit ids");
    }

    #[test]
    fn a_missing_repository_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let wanted = vec![("a".repeat(40), "a.sh".to_owned())];
        let got = read_files(&dir.path().join("gone"), &wanted);
        assert_eq!(
            got[&wanted[0]].as_ref().unwrap_err(),
            "the repository the run cloned is gone"
        );
        // A directory that is not a repository.
        let got = read_files(dir.path(), &wanted);
        assert_eq!(
            got[&wanted[0]].as_ref().unwrap_err(),
            "git could not read the repository"
        );
    }
}
