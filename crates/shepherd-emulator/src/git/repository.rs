//! The repository itself: building the scenario's bare repository with
//! `git fast-import`, reading and restoring refs, reading files, checking a
//! commit out for CI and committing on behalf of a user.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use super::env::{output_of, pull_ref, GitEnv, GitError};
use crate::scenario::{EmulatedForge, FileTree};

/// Fixed identity and clock for commits the emulator makes, so SHAs are
/// deterministic.
const COMMITTER: &str = "Shepherd Emulator <emulator@shepherd.invalid>";

/// 2024-01-01T00:00:00Z: the base commit's date; the head commit is an hour later.
pub(crate) const BASE_EPOCH: i64 = 1_704_067_200;

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
    Ok(refs_under(git, git_dir, "refs/heads/")?
        .into_iter()
        .filter_map(|(name, sha)| Some((name.strip_prefix("refs/heads/")?.to_owned(), sha)))
        .collect())
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
    refs_under(git, git_dir, "refs/")
}

/// The refs under `prefix` (`refs/heads/`, `refs/`), by their full names,
/// and the object each points to.
fn refs_under(
    git: &GitEnv,
    git_dir: &Path,
    prefix: &str,
) -> Result<BTreeMap<String, String>, GitError> {
    let out = git.run(
        git_dir,
        &["for-each-ref", "--format=%(refname) %(objectname)", prefix],
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
