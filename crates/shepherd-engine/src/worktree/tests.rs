//! Worktree tests with the real git binary in temp dirs.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use super::*;

/// A hermetic git: empty HOME, no system config, a fixed identity.
fn test_git(home: &Path) -> Git {
    Git::new()
        .with_env("HOME", home)
        .with_env("XDG_CONFIG_HOME", home.join(".config"))
        .with_identity("Shepherd Test", "shepherd@example.invalid")
}

struct Fixture {
    tmp: tempfile::TempDir,
    git: Git,
    remote: PathBuf,
    user: PathBuf,
}

impl Fixture {
    /// A bare remote with `main` and `feature`, and a user's clone on `main`
    /// with a dirty tracked file, a staged file and an untracked file.
    fn new() -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let git = test_git(&home);
        let remote = tmp.path().join("remote.git");
        let seed = tmp.path().join("seed");
        git.run(
            tmp.path(),
            &["init", "--quiet", "--bare", "-b", "main", "remote.git"],
            None,
        )
        .unwrap();
        git.run(tmp.path(), &["init", "--quiet", "-b", "main", "seed"], None)
            .unwrap();
        write(&seed, "README.md", "hello\n");
        write(&seed, "src/lib.rs", "fn a() {}\n");
        git.run(&seed, &["add", "."], None).unwrap();
        git.run(&seed, &["commit", "--quiet", "-m", "initial"], None)
            .unwrap();
        git.run(&seed, &["checkout", "--quiet", "-b", "feature"], None)
            .unwrap();
        write(&seed, "src/lib.rs", "fn a() {}\nfn b() {}\n");
        git.run(&seed, &["commit", "--quiet", "-am", "feature work"], None)
            .unwrap();
        git.run(
            &seed,
            &[
                "push",
                "--quiet",
                remote.to_str().unwrap(),
                "main",
                "feature",
            ],
            None,
        )
        .unwrap();
        git.run(
            tmp.path(),
            &["clone", "--quiet", remote.to_str().unwrap(), "user"],
            None,
        )
        .unwrap();
        let user = tmp.path().join("user");
        write(&user, "README.md", "hello\nlocal edit, not committed\n");
        write(&user, "staged.txt", "staged\n");
        git.run(&user, &["add", "staged.txt"], None).unwrap();
        write(&user, "untracked.txt", "mine\n");
        Fixture {
            tmp,
            git,
            remote,
            user,
        }
    }

    fn wt_dir(&self, name: &str) -> PathBuf {
        self.tmp
            .path()
            .join("state/runs")
            .join(name)
            .join("worktree")
    }

    fn remote_sha(&self, branch: &str) -> String {
        self.git
            .stdout(
                &self.remote,
                &["rev-parse", &format!("refs/heads/{branch}")],
            )
            .unwrap()
    }

    /// Someone else pushes a commit to `feature`.
    fn push_from_elsewhere(&self, file: &str) -> String {
        let other = self.tmp.path().join(format!("other-{file}"));
        self.git
            .run(
                self.tmp.path(),
                &[
                    "clone",
                    "--quiet",
                    "-b",
                    "feature",
                    self.remote.to_str().unwrap(),
                    other.to_str().unwrap(),
                ],
                None,
            )
            .unwrap();
        write(&other, file, "theirs\n");
        self.git.run(&other, &["add", file], None).unwrap();
        self.git
            .run(&other, &["commit", "--quiet", "-m", "their commit"], None)
            .unwrap();
        self.git
            .run(&other, &["push", "--quiet", "origin", "feature"], None)
            .unwrap();
        self.git.stdout(&other, &["rev-parse", "HEAD"]).unwrap()
    }

    /// HEAD, branch, status and index of the user's checkout.
    fn user_state(&self) -> (Vec<u8>, String, String, String, String) {
        // The index first: `status` could refresh it.
        let index = std::fs::read(self.user.join(".git/index")).unwrap();
        let status = self
            .git
            .run(
                &self.user,
                &[
                    "--no-optional-locks",
                    "status",
                    "--porcelain=v1",
                    "--untracked-files=all",
                ],
                None,
            )
            .unwrap();
        (
            index,
            String::from_utf8(status.stdout).unwrap(),
            self.git.stdout(&self.user, &["rev-parse", "HEAD"]).unwrap(),
            self.git
                .stdout(&self.user, &["symbolic-ref", "HEAD"])
                .unwrap(),
            std::fs::read_to_string(self.user.join("README.md")).unwrap(),
        )
    }
}

fn write(dir: &Path, file: &str, content: &str) {
    let path = dir.join(file);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

fn show_files(git: &Git, dir: &Path, rev: &str) -> Vec<String> {
    git.stdout(dir, &["show", "--name-only", "--format=", rev])
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn create_commit_push_fast_forward() {
    let fx = Fixture::new();
    let wt = Worktree::create(&fx.git, &fx.user, &fx.wt_dir("r1"), "origin", "feature").unwrap();
    assert_eq!(wt.head_sha().unwrap().as_str(), fx.remote_sha("feature"));
    assert_eq!(
        std::fs::read_to_string(wt.path().join("src/lib.rs")).unwrap(),
        "fn a() {}\nfn b() {}\n"
    );
    // Detached: no branch.
    assert!(fx
        .git
        .run(wt.path(), &["symbolic-ref", "-q", "HEAD"], None)
        .is_err());

    let base = wt.head_sha().unwrap();
    write(wt.path(), "src/new.rs", "fn c() {}\n");
    write(
        wt.path(),
        "README.md",
        "edited by an agent, not to be committed\n",
    );
    let sha = wt
        .commit_files("Add c", &["src/new.rs"], &ProtectedPaths::default())
        .unwrap();
    assert_eq!(show_files(&fx.git, wt.path(), sha.as_str()), ["src/new.rs"]);
    assert_eq!(
        wt.changed_files(base.as_str(), sha.as_str()).unwrap(),
        ["src/new.rs"]
    );
    // The other change is still there, uncommitted.
    let status = fx
        .git
        .stdout(wt.path(), &["status", "--porcelain"])
        .unwrap();
    assert_eq!(status, "M README.md");

    assert_eq!(
        wt.push("feature").unwrap(),
        PushOutcome::Pushed { sha: sha.clone() }
    );
    assert_eq!(fx.remote_sha("feature"), sha.as_str());
    assert_eq!(
        fx.remote_sha("main"),
        fx.git.stdout(&fx.user, &["rev-parse", "HEAD"]).unwrap()
    );
    wt.remove().unwrap();
}

#[test]
fn push_after_someone_else_pushed_is_rejected_then_sync_picks_it_up() {
    let fx = Fixture::new();
    let wt = Worktree::create(&fx.git, &fx.user, &fx.wt_dir("r1"), "origin", "feature").unwrap();
    let theirs = fx.push_from_elsewhere("theirs.txt");

    write(wt.path(), "ours.txt", "ours\n");
    let ours = wt
        .commit_files("Ours", &["ours.txt"], &ProtectedPaths::default())
        .unwrap();
    match wt.push("feature").unwrap() {
        PushOutcome::Rejected { stderr } => assert!(stderr.contains("rejected"), "{stderr}"),
        other => panic!("expected Rejected, got {other:?}"),
    }
    // Not forced: their commit is still the remote head.
    assert_eq!(fx.remote_sha("feature"), theirs);

    write(wt.path(), "scratch.txt", "left by an agent\n");
    let sync = wt.sync_to_remote_head("feature").unwrap();
    assert!(sync.moved);
    assert_eq!(sync.old_sha, ours);
    assert_eq!(sync.new_sha.as_str(), theirs);
    assert_eq!(sync.abandoned, [ours]);
    assert_eq!(sync.discarded, ["scratch.txt"]);
    assert_eq!(wt.head_sha().unwrap().as_str(), theirs);
    assert!(wt.path().join("theirs.txt").exists());
    assert!(!wt.path().join("scratch.txt").exists());

    // Re-running on top of their commit fast-forwards.
    write(wt.path(), "ours.txt", "ours\n");
    let again = wt
        .commit_files("Ours again", &["ours.txt"], &ProtectedPaths::default())
        .unwrap();
    assert_eq!(
        wt.push("feature").unwrap(),
        PushOutcome::Pushed { sha: again.clone() }
    );
    assert_eq!(fx.remote_sha("feature"), again.as_str());

    // Nothing moved: a no-op sync.
    let sync = wt.sync_to_remote_head("feature").unwrap();
    assert!(!sync.moved && sync.abandoned.is_empty() && sync.discarded.is_empty());
}

#[test]
fn protected_paths_are_refused_and_nothing_is_committed() {
    let fx = Fixture::new();
    let wt = Worktree::create(&fx.git, &fx.user, &fx.wt_dir("r1"), "origin", "feature").unwrap();
    let head = wt.head_sha().unwrap();
    write(wt.path(), ".github/workflows/ci.yml", "on: push\n");
    write(wt.path(), "src/ok.rs", "\n");
    let protected = ProtectedPaths::default();

    let err = wt
        .commit_files(
            "Sneaky",
            &["src/ok.rs", ".github/workflows/ci.yml"],
            &protected,
        )
        .unwrap_err();
    assert!(
        matches!(&err, WorktreeError::ProtectedPath { path, .. } if path == ".github/workflows/ci.yml"),
        "{err:?}"
    );
    assert!(
        err.to_string().contains(".github/workflows/ci.yml"),
        "{err}"
    );

    // A directory pathspec cannot smuggle it in either.
    let err = wt
        .commit_files("Sneaky", &[".github"], &protected)
        .unwrap_err();
    assert!(
        matches!(&err, WorktreeError::ProtectedPath { path, .. } if path == ".github/workflows/ci.yml"),
        "{err:?}"
    );
    // Custom globs.
    let custom = ProtectedPaths::new(&["src/*.rs"]).unwrap();
    let err = wt.commit_files("x", &["./src/ok.rs"], &custom).unwrap_err();
    assert!(
        matches!(&err, WorktreeError::ProtectedPath { path, .. } if path == "src/ok.rs"),
        "{err:?}"
    );

    assert_eq!(wt.head_sha().unwrap(), head);
    let staged = fx
        .git
        .stdout(wt.path(), &["diff", "--cached", "--name-only"])
        .unwrap();
    assert_eq!(staged, "", "nothing left staged");
    wt.remove().unwrap();
}

#[test]
fn empty_change_and_bad_inputs_are_errors() {
    let fx = Fixture::new();
    let wt = Worktree::create(&fx.git, &fx.user, &fx.wt_dir("r1"), "origin", "feature").unwrap();
    let p = ProtectedPaths::default();
    assert!(matches!(
        wt.commit_files("No change", &["src/lib.rs"], &p),
        Err(WorktreeError::NothingToCommit)
    ));
    assert!(matches!(
        wt.commit_files::<&str>("No files", &[], &p),
        Err(WorktreeError::NothingToCommit)
    ));
    write(wt.path(), "src/lib.rs", "changed\n");
    assert!(matches!(
        wt.commit_files("  ", &["src/lib.rs"], &p),
        Err(WorktreeError::EmptyMessage)
    ));
    assert!(matches!(
        wt.commit_files("x", &["../outside"], &p),
        Err(WorktreeError::InvalidPath { .. })
    ));
    for bad in ["--force", "+feature", "a:b", "a..b", ""] {
        assert!(
            matches!(wt.push(bad), Err(WorktreeError::InvalidBranch { .. })),
            "{bad:?} accepted"
        );
    }
    assert!(matches!(
        wt.changed_files("--output=/tmp/x", "HEAD"),
        Err(WorktreeError::InvalidRevision { .. })
    ));
    // A deletion is a change too.
    std::fs::remove_file(wt.path().join("README.md")).unwrap();
    let sha = wt
        .commit_files("Remove readme", &["README.md"], &p)
        .unwrap();
    assert_eq!(show_files(&fx.git, wt.path(), sha.as_str()), ["README.md"]);
    assert!(wt.path().join("src/lib.rs").exists());
    wt.remove().unwrap();
}

#[test]
fn users_checkout_is_never_touched() {
    let fx = Fixture::new();
    let before = fx.user_state();
    let config_before = std::fs::read_to_string(fx.user.join(".git/config")).unwrap();
    let status = &before.1;
    assert!(
        status.contains(" M README.md\n")
            && status.contains("A  staged.txt\n")
            && status.contains("?? untracked.txt\n"),
        "{status}"
    );

    let wt = Worktree::create(&fx.git, &fx.user, &fx.wt_dir("r1"), "origin", "feature").unwrap();
    write(wt.path(), "x.txt", "x\n");
    wt.commit_files("x", &["x.txt"], &ProtectedPaths::default())
        .unwrap();
    wt.push("feature").unwrap();
    fx.push_from_elsewhere("y.txt");
    wt.sync_to_remote_head("feature").unwrap();
    wt.remove().unwrap();

    assert_eq!(fx.user_state(), before);
    assert!(
        !fx.user.join(".git/FETCH_HEAD").exists(),
        "user's FETCH_HEAD written"
    );
    assert_eq!(
        std::fs::read_to_string(fx.user.join(".git/config")).unwrap(),
        config_before
    );
}

#[test]
fn remove_cleans_up_and_keep_keeps() {
    let fx = Fixture::new();
    let dir = fx.wt_dir("r1");
    let wt = Worktree::create(&fx.git, &fx.user, &dir, "origin", "feature").unwrap();
    write(wt.path(), "dirty.txt", "uncommitted\n");
    let refs = || {
        fx.git
            .stdout(&fx.user, &["for-each-ref", "refs/shepherd/"])
            .unwrap()
    };
    assert!(!refs().is_empty());
    wt.remove().unwrap();
    assert!(!dir.exists());
    let list = fx
        .git
        .stdout(&fx.user, &["worktree", "list", "--porcelain"])
        .unwrap();
    assert!(!list.contains(dir.to_str().unwrap()), "{list}");
    assert_eq!(refs(), "");

    let kept_dir = fx.wt_dir("r2");
    let wt = Worktree::create(
        &fx.git,
        &fx.user,
        &kept_dir,
        fx.remote.to_str().unwrap(),
        "feature",
    )
    .unwrap();
    assert_eq!(wt.keep(), kept_dir);
    assert!(kept_dir.join("src/lib.rs").exists());
}

#[test]
fn two_worktrees_of_one_repo_are_independent() {
    let fx = Fixture::new();
    let a = Worktree::create(&fx.git, &fx.user, &fx.wt_dir("a"), "origin", "feature").unwrap();
    let b = Worktree::create(&fx.git, &fx.user, &fx.wt_dir("b"), "origin", "main").unwrap();
    assert_eq!(a.head_sha().unwrap().as_str(), fx.remote_sha("feature"));
    assert_eq!(b.head_sha().unwrap().as_str(), fx.remote_sha("main"));
    a.remove().unwrap();
    assert_eq!(b.head_sha().unwrap().as_str(), fx.remote_sha("main"));
    b.remove().unwrap();
}

/// A one-shot HTTP server on loopback that records request heads and answers 403.
fn forbidding_server() -> (String, mpsc::Receiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        // Bounded: git makes one request here; a few spare for retries.
        for stream in listener.incoming().take(4) {
            let Ok(mut stream) = stream else { break };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut head = String::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                head.push_str(&line);
            }
            let _ = tx.send(head);
            let _ = stream.write_all(
                b"HTTP/1.1 403 Forbidden\r\nContent-Length: 9\r\nConnection: close\r\n\r\nforbidden",
            );
        }
    });
    (format!("http://127.0.0.1:{port}/acme/widgets.git"), rx)
}

#[test]
fn token_is_sent_as_header_but_never_stored_or_shown() {
    let fx = Fixture::new();
    let token = "ghs_TopSecretToken123";
    let git = fx
        .git
        .clone()
        .with_credentials(HttpCredentials::github(token));
    let basic = "eC1hY2Nlc3MtdG9rZW46Z2hzX1RvcFNlY3JldFRva2VuMTIz";
    let (url, requests) = forbidding_server();
    // The URL also carries userinfo: that must be redacted too.
    let url_with_userinfo = url.replace("http://", "http://someone:urlpassword@");

    for remote in [url.as_str(), url_with_userinfo.as_str()] {
        let err =
            Worktree::create(&git, &fx.user, &fx.wt_dir("r1"), remote, "feature").unwrap_err();
        let shown = format!("{err} {err:?}");
        for secret in [token, basic, "urlpassword"] {
            assert!(!shown.contains(secret), "{secret} leaked: {shown}");
        }
        assert!(shown.contains("403") || shown.contains("fetch"), "{shown}");
    }
    // A configured remote name resolves to its URL, and gets the header too.
    fx.git
        .run(&fx.user, &["remote", "add", "forge", &url], None)
        .unwrap();
    let err = Worktree::create(&git, &fx.user, &fx.wt_dir("r1"), "forge", "feature").unwrap_err();
    assert!(!format!("{err} {err:?}").contains(token));
    for _ in 0..3 {
        let head = requests
            .recv_timeout(std::time::Duration::from_secs(10))
            .unwrap();
        assert!(
            head.lines()
                .any(|l| l.eq_ignore_ascii_case(&format!("authorization: basic {basic}"))),
            "no auth header in {head}"
        );
    }
    let config = std::fs::read_to_string(fx.user.join(".git/config")).unwrap();
    assert!(
        !config.contains(token) && !config.contains(basic),
        "{config}"
    );

    // And a successful flow with credentials (local remote: unused) leaves no trace either.
    let wt = Worktree::create(&git, &fx.user, &fx.wt_dir("r2"), "origin", "feature").unwrap();
    write(wt.path(), "z.txt", "z\n");
    wt.commit_files("z", &["z.txt"], &ProtectedPaths::default())
        .unwrap();
    wt.push("feature").unwrap();
    let config = std::fs::read_to_string(fx.user.join(".git/config")).unwrap();
    assert!(!config.contains(token) && !config.contains(basic));
    assert!(!format!("{wt:?}").contains(token));
    assert!(!format!("{wt:?}").contains(basic));
    wt.remove().unwrap();
}
