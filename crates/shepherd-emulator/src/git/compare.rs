//! Comparisons and history: GitLab's `compare` (files with renames, each
//! with its hunks), merge bases, commit listings and one commit's details.

use std::path::Path;

use super::env::{GitEnv, GitError};
use super::repository::resolve_commit;

/// A commit's metadata, for GitHub's commit object.
#[derive(Debug, Clone)]
pub(crate) struct CommitDetail {
    pub(crate) sha: String,
    pub(crate) tree: String,
    pub(crate) parents: Vec<String>,
    pub(crate) author_name: String,
    pub(crate) author_email: String,
    pub(crate) authored_date: String,
    pub(crate) committer_name: String,
    pub(crate) committer_email: String,
    pub(crate) committed_date: String,
    pub(crate) message: String,
}

/// The commit `sha` (any revision), if the repository has it.
pub(crate) fn commit_detail(git: &GitEnv, git_dir: &Path, revision: &str) -> Option<CommitDetail> {
    let sha = resolve_commit(git, git_dir, revision)?;
    let out = git
        .run(
            git_dir,
            &[
                "show",
                "-s",
                "--format=%H%x1f%T%x1f%P%x1f%an%x1f%ae%x1f%aI%x1f%cn%x1f%ce%x1f%cI%x1f%B",
                &sha,
            ],
        )
        .ok()?;
    let mut f = out.split('\x1f');
    Some(CommitDetail {
        sha: f.next()?.trim().to_owned(),
        tree: f.next()?.to_owned(),
        parents: f.next()?.split_whitespace().map(str::to_owned).collect(),
        author_name: f.next()?.to_owned(),
        author_email: f.next()?.to_owned(),
        authored_date: f.next()?.to_owned(),
        committer_name: f.next()?.to_owned(),
        committer_email: f.next()?.to_owned(),
        committed_date: f.next()?.to_owned(),
        message: f.next()?.trim_end().to_owned(),
    })
}

/// One file of a comparison (GitLab's `diffs[]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileChange {
    pub(crate) old_path: String,
    pub(crate) new_path: String,
    pub(crate) a_mode: String,
    pub(crate) b_mode: String,
    pub(crate) new_file: bool,
    pub(crate) renamed_file: bool,
    pub(crate) deleted_file: bool,
    /// The file's hunks, from the first `@@` line (no `diff --git` header);
    /// empty for a binary file or a mode change.
    pub(crate) diff: String,
}

/// A commit of a comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CommitInfo {
    pub(crate) sha: String,
    pub(crate) title: String,
    pub(crate) message: String,
    pub(crate) author_name: String,
    pub(crate) author_email: String,
    pub(crate) authored_date: String,
    pub(crate) committed_date: String,
}

/// The merge base of two commits.
pub(crate) fn merge_base(
    git: &GitEnv,
    git_dir: &Path,
    a: &str,
    b: &str,
) -> Result<String, GitError> {
    git.run(git_dir, &["merge-base", a, b])
}

/// The files changed from `from` to `to`, with renames detected, each with
/// its hunks: the raw listing (`-z`, names as they are) gives the paths and
/// flags, the patch (in the same order) the hunks.
pub(crate) fn compare(
    git: &GitEnv,
    git_dir: &Path,
    from: &str,
    to: &str,
) -> Result<Vec<FileChange>, GitError> {
    let base = [
        "-c",
        "core.quotePath=false",
        "diff",
        "--no-color",
        "--no-ext-diff",
        "-M",
    ];
    let mut raw_args = base.to_vec();
    raw_args.extend(["--raw", "-z", "--abbrev=40", from, to]);
    let raw = git.run_raw(git_dir, &raw_args)?;
    let mut patch_args = base.to_vec();
    patch_args.extend(["-U3", from, to]);
    let patch = git.run_raw(git_dir, &patch_args)?;
    let mut changes = parse_raw(&raw).ok_or_else(|| GitError::BadOutput {
        what: "diff --raw".into(),
        output: String::from_utf8_lossy(&raw).chars().take(200).collect(),
    })?;
    let chunks = split_patch(&String::from_utf8_lossy(&patch));
    if chunks.len() == changes.len() {
        for (change, chunk) in changes.iter_mut().zip(chunks) {
            change.diff = chunk;
        }
    }
    Ok(changes)
}

/// `--raw -z` output: `:oldmode newmode oldsha newsha status\0path\0`
/// (two paths for a rename or copy).
fn parse_raw(raw: &[u8]) -> Option<Vec<FileChange>> {
    let mut fields = raw.split(|b| *b == 0).filter(|f| !f.is_empty());
    let mut out = Vec::new();
    while let Some(meta) = fields.next() {
        let meta = std::str::from_utf8(meta).ok()?;
        let mut parts = meta.strip_prefix(':')?.split(' ');
        let a_mode = parts.next()?.to_owned();
        let b_mode = parts.next()?.to_owned();
        let (_, _) = (parts.next()?, parts.next()?);
        let status = parts.next()?;
        let path = |f: &[u8]| String::from_utf8_lossy(f).into_owned();
        let first = path(fields.next()?);
        let kind = status.chars().next()?;
        let second = if matches!(kind, 'R' | 'C') {
            Some(path(fields.next()?))
        } else {
            None
        };
        out.push(FileChange {
            new_path: second.clone().unwrap_or_else(|| first.clone()),
            old_path: first,
            a_mode,
            b_mode,
            new_file: kind == 'A',
            renamed_file: kind == 'R',
            deleted_file: kind == 'D',
            diff: String::new(),
        });
    }
    Some(out)
}

/// Splits a patch into its files, keeping each file's text from its first
/// `@@` line on (a line of content always starts with ` `, `+` or `-`, so
/// `diff --git ` at the start of a line is a header).
fn split_patch(patch: &str) -> Vec<String> {
    let mut chunks: Vec<String> = Vec::new();
    let mut in_hunks = false;
    for line in patch.split_inclusive('\n') {
        if line.starts_with("diff --git ") {
            chunks.push(String::new());
            in_hunks = false;
            continue;
        }
        let Some(chunk) = chunks.last_mut() else {
            continue;
        };
        if line.starts_with("@@") {
            in_hunks = true;
        }
        if in_hunks {
            chunk.push_str(line);
        }
    }
    chunks
}

/// The commits of `from..to`, oldest first.
pub(crate) fn log(
    git: &GitEnv,
    git_dir: &Path,
    from: &str,
    to: &str,
) -> Result<Vec<CommitInfo>, GitError> {
    let range = format!("{from}..{to}");
    let out = git.run_raw(
        git_dir,
        &[
            "log",
            "--reverse",
            "--format=%H%x1f%s%x1f%an%x1f%ae%x1f%aI%x1f%cI%x1f%B%x1e",
            &range,
        ],
    )?;
    let text = String::from_utf8_lossy(&out);
    Ok(text
        .split('\x1e')
        .filter_map(|record| {
            let mut f = record.trim_start_matches('\n').split('\x1f');
            Some(CommitInfo {
                sha: f.next().filter(|s| s.len() == 40)?.to_owned(),
                title: f.next()?.to_owned(),
                author_name: f.next()?.to_owned(),
                author_email: f.next()?.to_owned(),
                authored_date: f.next()?.to_owned(),
                committed_date: f.next()?.to_owned(),
                message: f.next()?.to_owned(),
            })
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_listings_and_patches_split_per_file() {
        let raw = b":100644 100644 aaaa bbbb M\0src/a b.rs\0:000000 100644 0000 cccc A\0new.txt\0:100644 100644 dddd dddd R100\0old/x\0new/x\0:100644 000000 eeee 0000 D\0gone\0";
        let changes = parse_raw(raw).unwrap();
        assert_eq!(changes.len(), 4);
        assert_eq!(changes[0].old_path, "src/a b.rs");
        assert!(!changes[0].new_file);
        assert!(changes[1].new_file);
        assert_eq!(
            (changes[2].old_path.as_str(), changes[2].new_path.as_str()),
            ("old/x", "new/x")
        );
        assert!(changes[2].renamed_file);
        assert!(changes[3].deleted_file);
        let patch = "diff --git a/a b/a\nindex 1..2 100644\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+y\ndiff --git a/b b/b\nold mode 100644\nnew mode 100755\n";
        let chunks = split_patch(patch);
        assert_eq!(chunks, ["@@ -1 +1 @@\n-x\n+y\n", ""]);
    }
}
