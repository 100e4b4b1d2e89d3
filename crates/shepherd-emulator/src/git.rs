//! The real `git` binary, run in a sealed environment: building the scenario's
//! bare repository, reading refs, and diffs for `diffHunk`.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

use crate::scenario::{EmulatedForge, FileTree};

/// Errors from running `git`.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// `git` could not be started.
    #[error("cannot run git {what}")]
    Spawn {
        /// Which git command.
        what: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// `git` exited with a failure.
    #[error("git {what} failed ({status}): {stderr}")]
    Failed {
        /// Which git command.
        what: String,
        /// Its exit status.
        status: ExitStatus,
        /// What it printed on stderr.
        stderr: String,
    },
    /// `git` printed something unexpected.
    #[error("git {what} printed unexpected output: {output}")]
    BadOutput {
        /// Which git command.
        what: String,
        /// The output.
        output: String,
    },
    /// A file or directory for git could not be created.
    #[error("cannot create {}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

/// Fixed identity and clock for commits the emulator makes, so SHAs are
/// deterministic.
const COMMITTER: &str = "Shepherd Emulator <emulator@shepherd.invalid>";
/// 2024-01-01T00:00:00Z: the base commit's date; the head commit is an hour later.
pub(crate) const BASE_EPOCH: i64 = 1_704_067_200;

/// Builds sealed `git` commands: cleared environment, a private HOME, no
/// system or global config, no prompts.
#[derive(Debug, Clone)]
pub(crate) struct GitEnv {
    home: PathBuf,
    path: Option<OsString>,
}

impl GitEnv {
    /// Uses `home` (an empty temporary directory) as HOME.
    pub(crate) fn new(home: PathBuf) -> Self {
        GitEnv {
            home,
            path: std::env::var_os("PATH"),
        }
    }

    fn sealed_vars(&self) -> Vec<(&'static str, OsString)> {
        let mut vars = vec![
            ("HOME", self.home.clone().into_os_string()),
            ("GIT_CONFIG_NOSYSTEM", "1".into()),
            (
                "GIT_CONFIG_GLOBAL",
                self.home.join(".gitconfig").into_os_string(),
            ),
            ("GIT_TERMINAL_PROMPT", "0".into()),
            ("LC_ALL", "C".into()),
        ];
        if let Some(path) = &self.path {
            vars.push(("PATH", path.clone()));
        }
        vars
    }

    /// A `git` command with the sealed environment and stdin closed.
    pub(crate) fn command(&self) -> Command {
        let mut cmd = Command::new("git");
        cmd.env_clear()
            .envs(self.sealed_vars())
            .stdin(Stdio::null());
        cmd
    }

    /// The same, for tokio (used for the `http-backend` CGI).
    pub(crate) fn tokio_command(&self) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new("git");
        cmd.env_clear()
            .envs(self.sealed_vars())
            .stdin(Stdio::null());
        cmd
    }

    /// Runs `git --git-dir=DIR ARGS…` and returns its trimmed stdout.
    pub(crate) fn run(&self, git_dir: &Path, args: &[&str]) -> Result<String, GitError> {
        let mut cmd = self.command();
        cmd.arg("--git-dir").arg(git_dir).args(args);
        output_of(cmd, &args.join(" "), None)
    }

    /// The same with extra environment variables and optional stdin.
    fn run_with(
        &self,
        git_dir: &Path,
        args: &[&str],
        envs: &[(&str, &std::ffi::OsStr)],
        stdin: Option<&[u8]>,
    ) -> Result<String, GitError> {
        let mut cmd = self.command();
        cmd.arg("--git-dir").arg(git_dir).args(args);
        for (name, value) in envs {
            cmd.env(name, value);
        }
        output_of(cmd, &args.join(" "), stdin)
    }
}

fn output_of(mut cmd: Command, what: &str, stdin: Option<&[u8]>) -> Result<String, GitError> {
    tracing::debug!(cmd = ?cmd, "running git");
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    if stdin.is_some() {
        cmd.stdin(Stdio::piped());
    }
    let spawn_err = |source| GitError::Spawn {
        what: what.to_owned(),
        source,
    };
    let mut child = cmd.spawn().map_err(spawn_err)?;
    if let (Some(input), Some(mut pipe)) = (stdin, child.stdin.take()) {
        // fast-import reads all of stdin before it prints anything, so writing
        // first and reading afterwards cannot deadlock.
        pipe.write_all(input).map_err(spawn_err)?;
    }
    let output = child.wait_with_output().map_err(spawn_err)?;
    if !output.status.success() {
        return Err(GitError::Failed {
            what: what.to_owned(),
            status: output.status,
            stderr: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        });
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

/// The ref the forge keeps a pull request's head at: GitHub's
/// `refs/pull/N/head`, GitLab's `refs/merge-requests/N/head`.
pub(crate) fn pull_ref(forge: EmulatedForge, number: u64) -> String {
    match forge {
        EmulatedForge::GitHub => format!("refs/pull/{number}/head"),
        EmulatedForge::GitLab => format!("refs/merge-requests/{number}/head"),
    }
}

/// What [`create_repository`] made.
#[derive(Debug, Clone)]
pub(crate) struct CreatedRepository {
    /// The bare repository.
    pub(crate) git_dir: PathBuf,
    /// The base commit.
    pub(crate) base_sha: String,
    /// The head commit (child of the base).
    pub(crate) head_sha: String,
}

/// Everything [`create_repository`] needs.
pub(crate) struct RepositoryPlan<'a> {
    pub(crate) git_dir: PathBuf,
    /// Which forge's ref names the pull request's head gets.
    pub(crate) forge: EmulatedForge,
    pub(crate) default_branch: &'a str,
    pub(crate) base_branch: &'a str,
    pub(crate) head_branch: &'a str,
    pub(crate) pr_number: u64,
    pub(crate) head_author: &'a str,
    pub(crate) head_message: &'a str,
    pub(crate) base: &'a FileTree,
    pub(crate) head: &'a FileTree,
}

/// Creates a bare repository holding the base commit on the base branch and
/// the head commit, its child, on the head branch (and `refs/pull/N/head`, GitLab's `refs/merge-requests/N/head`).
pub(crate) fn create_repository(
    git: &GitEnv,
    plan: &RepositoryPlan<'_>,
) -> Result<CreatedRepository, GitError> {
    let git_dir = &plan.git_dir;
    if let Some(parent) = git_dir.parent() {
        std::fs::create_dir_all(parent).map_err(|source| GitError::Io {
            path: parent.to_owned(),
            source,
        })?;
    }
    let mut init = git.command();
    init.args(["init", "--quiet", "--bare", "--initial-branch"])
        .arg(plan.default_branch)
        .arg(git_dir);
    output_of(init, "init", None)?;

    let head_identity = format!("{0} <{0}@users.noreply.shepherd.invalid>", plan.head_author);
    let mut stream = Vec::new();
    fast_import_commit(
        &mut stream,
        &FastImportCommit {
            branch: plan.base_branch,
            mark: 1,
            parent_mark: None,
            author: COMMITTER,
            epoch: BASE_EPOCH,
            message: "Initial commit",
            files: plan.base,
        },
    );
    fast_import_commit(
        &mut stream,
        &FastImportCommit {
            branch: plan.head_branch,
            mark: 2,
            parent_mark: Some(1),
            author: &head_identity,
            epoch: BASE_EPOCH + 3600,
            message: plan.head_message,
            files: plan.head,
        },
    );
    let mut import = git.command();
    import
        .arg("--git-dir")
        .arg(git_dir)
        .args(["fast-import", "--quiet", "--date-format=raw"]);
    output_of(import, "fast-import", Some(&stream))?;

    let base_sha = rev_parse(git, git_dir, &format!("refs/heads/{}", plan.base_branch))?;
    let head_sha = rev_parse(git, git_dir, &format!("refs/heads/{}", plan.head_branch))?;
    if plan.default_branch != plan.base_branch && plan.default_branch != plan.head_branch {
        let default_ref = format!("refs/heads/{}", plan.default_branch);
        git.run(git_dir, &["update-ref", &default_ref, &base_sha])?;
    }
    let pull_ref = pull_ref(plan.forge, plan.pr_number);
    git.run(git_dir, &["update-ref", &pull_ref, &head_sha])?;
    Ok(CreatedRepository {
        git_dir: git_dir.clone(),
        base_sha,
        head_sha,
    })
}

struct FastImportCommit<'a> {
    branch: &'a str,
    mark: u32,
    parent_mark: Option<u32>,
    author: &'a str,
    epoch: i64,
    message: &'a str,
    files: &'a FileTree,
}

/// Appends one commit to a `git fast-import` stream; the tree is replaced
/// whole (`deleteall`), so the commit holds exactly `files`.
fn fast_import_commit(out: &mut Vec<u8>, commit: &FastImportCommit<'_>) {
    let FastImportCommit {
        branch,
        mark,
        parent_mark,
        author,
        epoch,
        message,
        files,
    } = commit;
    out.extend_from_slice(format!("commit refs/heads/{branch}\nmark :{mark}\n").as_bytes());
    out.extend_from_slice(format!("author {author} {epoch} +0000\n").as_bytes());
    out.extend_from_slice(format!("committer {COMMITTER} {epoch} +0000\n").as_bytes());
    data_block(out, format!("{message}\n").as_bytes());
    if let Some(parent) = parent_mark {
        out.extend_from_slice(format!("from :{parent}\n").as_bytes());
    }
    out.extend_from_slice(b"deleteall\n");
    for (path, file) in files.iter() {
        let mode = if file.executable { "100755" } else { "100644" };
        // Paths were validated: no newline, no leading quote, so no quoting needed.
        out.extend_from_slice(format!("M {mode} inline {path}\n").as_bytes());
        data_block(out, &file.contents);
    }
    out.push(b'\n');
}

fn data_block(out: &mut Vec<u8>, data: &[u8]) {
    out.extend_from_slice(format!("data {}\n", data.len()).as_bytes());
    out.extend_from_slice(data);
    out.push(b'\n');
}

/// The commit a ref points to.
pub(crate) fn rev_parse(git: &GitEnv, git_dir: &Path, reference: &str) -> Result<String, GitError> {
    let sha = git.run(git_dir, &["rev-parse", "--verify", "--quiet", reference])?;
    if sha.len() == 40 && sha.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(sha)
    } else {
        Err(GitError::BadOutput {
            what: format!("rev-parse {reference}"),
            output: sha,
        })
    }
}

/// Every branch and the commit it points to.
pub(crate) fn branches(git: &GitEnv, git_dir: &Path) -> Result<BTreeMap<String, String>, GitError> {
    let out = git.run(
        git_dir,
        &[
            "for-each-ref",
            "--format=%(refname:strip=2) %(objectname)",
            "refs/heads/",
        ],
    )?;
    Ok(out
        .lines()
        .filter_map(|line| line.rsplit_once(' '))
        .map(|(name, sha)| (name.to_owned(), sha.to_owned()))
        .collect())
}

/// The unified diff between two commits, parsed per file.
pub(crate) fn diff(
    git: &GitEnv,
    git_dir: &Path,
    from: &str,
    to: &str,
) -> Result<BTreeMap<String, Vec<Hunk>>, GitError> {
    let out = git.run(
        git_dir,
        &[
            "-c",
            "core.quotePath=false",
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--no-renames",
            "-U3",
            from,
            to,
        ],
    )?;
    Ok(parse_diff(&out))
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

/// The commit a revision names (a SHA, a branch, `refs/…`), if any.
pub(crate) fn resolve_commit(git: &GitEnv, git_dir: &Path, revision: &str) -> Option<String> {
    if revision.starts_with('-') || revision.contains("..") {
        return None;
    }
    let spec = format!("{revision}^{{commit}}");
    rev_parse(git, git_dir, &spec).ok()
}

/// The commits in `from..to`, oldest first.
pub(crate) fn rev_list(
    git: &GitEnv,
    git_dir: &Path,
    from: &str,
    to: &str,
) -> Result<Vec<String>, GitError> {
    let range = format!("{from}..{to}");
    let out = git.run(git_dir, &["rev-list", "--reverse", &range])?;
    Ok(out.lines().map(str::to_owned).collect())
}

/// Every ref and the object it points to.
pub(crate) fn all_refs(git: &GitEnv, git_dir: &Path) -> Result<BTreeMap<String, String>, GitError> {
    let out = git.run(
        git_dir,
        &["for-each-ref", "--format=%(refname) %(objectname)"],
    )?;
    Ok(out
        .lines()
        .filter_map(|line| line.rsplit_once(' '))
        .map(|(name, sha)| (name.to_owned(), sha.to_owned()))
        .collect())
}

/// Makes the repository's refs exactly `refs` (deleting the others).
pub(crate) fn restore_refs(
    git: &GitEnv,
    git_dir: &Path,
    refs: &BTreeMap<String, String>,
) -> Result<(), GitError> {
    let current = all_refs(git, git_dir)?;
    let mut script = String::new();
    for name in current.keys().filter(|name| !refs.contains_key(*name)) {
        script.push_str(&format!("delete {name}\n"));
    }
    for (name, sha) in refs {
        script.push_str(&format!("update {name} {sha}\n"));
    }
    git.run_with(
        git_dir,
        &["update-ref", "--stdin"],
        &[],
        Some(script.as_bytes()),
    )?;
    Ok(())
}

/// The contents of `path` at `commit`, if the file exists there.
pub(crate) fn show_file(git: &GitEnv, git_dir: &Path, commit: &str, path: &str) -> Option<Vec<u8>> {
    let mut cmd = git.command();
    cmd.arg("--git-dir")
        .arg(git_dir)
        .args(["cat-file", "blob"])
        .arg(format!("{commit}:{path}"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let output = cmd.output().ok()?;
    output.status.success().then_some(output.stdout)
}

/// Writes the tree of `commit` into `dest` (which must exist), without
/// touching the repository's own index: `index` is a scratch file.
pub(crate) fn checkout(
    git: &GitEnv,
    git_dir: &Path,
    commit: &str,
    dest: &Path,
    index: &Path,
) -> Result<(), GitError> {
    let envs = [
        ("GIT_INDEX_FILE", index.as_os_str()),
        ("GIT_WORK_TREE", dest.as_os_str()),
    ];
    git.run_with(git_dir, &["read-tree", commit], &envs, None)?;
    git.run_with(
        git_dir,
        &["checkout-index", "--all", "--force"],
        &envs,
        None,
    )?;
    Ok(())
}

/// A commit the emulator makes on behalf of a user.
pub(crate) struct NewCommit<'a> {
    pub(crate) parent: &'a str,
    /// Path to new contents; `None` deletes the file.
    pub(crate) changes: &'a BTreeMap<String, Option<Vec<u8>>>,
    pub(crate) author_login: &'a str,
    pub(crate) message: &'a str,
    pub(crate) epoch: i64,
    /// A scratch file for the index.
    pub(crate) index: &'a Path,
}

/// Makes a commit on top of `parent` with git plumbing (no work tree) and
/// returns its SHA. Modes of existing files are kept; new files are 100644.
pub(crate) fn commit_files(
    git: &GitEnv,
    git_dir: &Path,
    commit: &NewCommit<'_>,
) -> Result<String, GitError> {
    let index_env = [("GIT_INDEX_FILE", commit.index.as_os_str())];
    git.run_with(git_dir, &["read-tree", commit.parent], &index_env, None)?;
    // `--index-info` lines (`MODE SHA\tPATH`, mode 0 removes), so no work
    // tree is needed. Paths were validated: no newline, no leading quote.
    let mut info = String::new();
    for (path, contents) in commit.changes {
        match contents {
            Some(bytes) => {
                let blob =
                    git.run_with(git_dir, &["hash-object", "-w", "--stdin"], &[], Some(bytes))?;
                let listing = git.run(git_dir, &["ls-tree", commit.parent, "--", path])?;
                let mode = if listing.starts_with("100755") {
                    "100755"
                } else {
                    "100644"
                };
                info.push_str(&format!("{mode} {blob}\t{path}\n"));
            }
            None => info.push_str(&format!("0 {}\t{path}\n", "0".repeat(40))),
        }
    }
    git.run_with(
        git_dir,
        &["update-index", "--index-info"],
        &index_env,
        Some(info.as_bytes()),
    )?;
    let tree = git.run_with(git_dir, &["write-tree"], &index_env, None)?;
    let name = std::ffi::OsString::from(commit.author_login);
    let email = std::ffi::OsString::from(format!(
        "{}@users.noreply.shepherd.invalid",
        commit.author_login
    ));
    let date = std::ffi::OsString::from(format!("{} +0000", commit.epoch));
    let envs = [
        ("GIT_AUTHOR_NAME", name.as_os_str()),
        ("GIT_AUTHOR_EMAIL", email.as_os_str()),
        ("GIT_AUTHOR_DATE", date.as_os_str()),
        ("GIT_COMMITTER_NAME", name.as_os_str()),
        ("GIT_COMMITTER_EMAIL", email.as_os_str()),
        ("GIT_COMMITTER_DATE", date.as_os_str()),
    ];
    let message = format!("{}\n", commit.message);
    let sha = git.run_with(
        git_dir,
        &["commit-tree", &tree, "-p", commit.parent, "-F", "-"],
        &envs,
        Some(message.as_bytes()),
    )?;
    if sha.len() == 40 && sha.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(sha)
    } else {
        Err(GitError::BadOutput {
            what: "commit-tree".into(),
            output: sha,
        })
    }
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

impl GitEnv {
    /// Runs `git --git-dir=DIR ARGS…` and returns its stdout untouched.
    fn run_raw(&self, git_dir: &Path, args: &[&str]) -> Result<Vec<u8>, GitError> {
        let mut cmd = self.command();
        cmd.arg("--git-dir")
            .arg(git_dir)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        tracing::debug!(cmd = ?cmd, "running git");
        let what = args.join(" ");
        let output = cmd.output().map_err(|source| GitError::Spawn {
            what: what.clone(),
            source,
        })?;
        if !output.status.success() {
            return Err(GitError::Failed {
                what,
                status: output.status,
                stderr: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
            });
        }
        Ok(output.stdout)
    }
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
    fn fast_import_stream_replaces_the_whole_tree() {
        let mut files = FileTree::new();
        files.insert("a.txt".into(), crate::scenario::FileSpec::text("hi"));
        let mut out = Vec::new();
        fast_import_commit(
            &mut out,
            &FastImportCommit {
                branch: "main",
                mark: 1,
                parent_mark: None,
                author: COMMITTER,
                epoch: 0,
                message: "m",
                files: &files,
            },
        );
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("deleteall\nM 100644 inline a.txt\ndata 2\nhi\n"),
            "{text}"
        );
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
