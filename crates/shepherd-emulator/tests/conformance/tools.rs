//! The real clients and schemas the conformance tests use, installed by the
//! tests themselves into a cache outside the clone, keyed by a hash of the
//! pinned files: `$SHEPHERD_TEST_TOOLS_DIR`, else
//! `$XDG_CACHE_HOME/shepherd-test-tools`, else
//! `~/.cache/shepherd-test-tools`. A finished install is marked, so a second
//! run fetches nothing; a lock directory makes parallel tests install once.
//!
//! - A Python virtual environment with PyGithub and python-gitlab
//!   (`clients/requirements.txt`, every package pinned).
//! - GitHub's OpenAPI description, `@octokit/openapi`
//!   (`clients/package.json` and `package-lock.json`, installed with `npm ci`).
//! - Debian's `gh` CLI is not installed here (it is a system package:
//!   `.ci/run` installs it, pinned); [`gh`] checks its version.
//!
//! A missing python3 (or its `venv` module), npm, or a failed install fails
//! the test with what to install: nothing is skipped silently.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

const REQUIREMENTS: &str = include_str!("clients/requirements.txt");
const PACKAGE_JSON: &str = include_str!("clients/package.json");
const PACKAGE_LOCK: &str = include_str!("clients/package-lock.json");

/// How long another process's install may hold the lock before it is taken
/// to have died.
const STALE_LOCK: Duration = Duration::from_secs(15 * 60);

/// One install at a time within this process (threads of one test binary).
static INSTALLING: Mutex<()> = Mutex::new(());

/// FNV-1a, 64 bits: a stable key for the pinned files (std's hasher may
/// change between Rust releases).
fn fnv1a(parts: &[&str]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for byte in part.bytes().chain([0u8]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{hash:016x}")
}

fn cache_root() -> PathBuf {
    if let Some(dir) = std::env::var_os("SHEPHERD_TEST_TOOLS_DIR") {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME") {
        return PathBuf::from(dir).join("shepherd-test-tools");
    }
    let home = std::env::var_os("HOME")
        .expect("no cache directory: set SHEPHERD_TEST_TOOLS_DIR, XDG_CACHE_HOME or HOME");
    PathBuf::from(home).join(".cache/shepherd-test-tools")
}

/// Runs `install` into `dir` once (across threads and processes), unless a
/// finished install is marked there.
fn install_once(dir: &Path, install: impl FnOnce(&Path) -> Result<(), String>) {
    let done = dir.join(".installed");
    if done.exists() {
        return;
    }
    let _guard = INSTALLING.lock().unwrap_or_else(|e| e.into_inner());
    std::fs::create_dir_all(dir.parent().expect("the cache dir has a parent"))
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    let lock = dir.with_extension("lock");
    let started = Instant::now();
    loop {
        if done.exists() {
            return;
        }
        match std::fs::create_dir(&lock) {
            Ok(()) => break,
            Err(_) => {
                let stale = std::fs::metadata(&lock)
                    .and_then(|m| m.modified())
                    .is_ok_and(|t| t.elapsed().unwrap_or_default() > STALE_LOCK);
                if stale || started.elapsed() > STALE_LOCK {
                    let _ = std::fs::remove_dir(&lock);
                }
                std::thread::sleep(Duration::from_millis(500));
            }
        }
    }
    let result = if done.exists() {
        Ok(())
    } else {
        let _ = std::fs::remove_dir_all(dir);
        install(dir)
    };
    let _ = std::fs::remove_dir(&lock);
    match result {
        Ok(()) => std::fs::write(&done, "ok\n").expect("mark the install finished"),
        Err(why) => panic!("{why}"),
    }
}

fn run(command: &mut Command, what: &str) -> Result<(), String> {
    let out = command
        .output()
        .map_err(|e| format!("{what}: cannot run {command:?}: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let text = String::from_utf8_lossy(&out.stderr);
    let tail: String = text
        .chars()
        .rev()
        .take(3000)
        .collect::<String>()
        .chars()
        .rev()
        .collect();
    Err(format!("{what} failed ({}): {tail}", out.status))
}

/// The virtual environment's `python`, with the pinned clients installed.
pub fn python() -> PathBuf {
    let dir = cache_root().join(format!("python-{}", fnv1a(&[REQUIREMENTS])));
    install_once(&dir, |dir| {
        let python3 = which("python3").ok_or(
            "the conformance tests need python3 on PATH, with its venv module, to install \
             PyGithub and python-gitlab: install it (Debian: `apt-get install python3 \
             python3-venv`), then run the tests again",
        )?;
        run(
            Command::new(&python3).args(["-m", "venv"]).arg(dir),
            "python3 -m venv (Debian: `apt-get install python3-venv`)",
        )?;
        let requirements = dir.join("requirements.txt");
        std::fs::write(&requirements, REQUIREMENTS).map_err(|e| e.to_string())?;
        run(
            Command::new(dir.join("bin/pip"))
                .args(["install", "--quiet", "--disable-pip-version-check", "-r"])
                .arg(&requirements),
            "pip install of the pinned PyGithub and python-gitlab",
        )
    });
    dir.join("bin/python")
}

/// `generated/` of the pinned `@octokit/openapi`.
pub fn openapi_dir() -> PathBuf {
    let dir = cache_root().join(format!("openapi-{}", fnv1a(&[PACKAGE_JSON, PACKAGE_LOCK])));
    install_once(&dir, |dir| {
        which("npm").ok_or(
            "the OpenAPI test needs npm on PATH to install the pinned @octokit/openapi: \
             install Node.js and npm (Debian: `apt-get install nodejs npm`), then run the \
             tests again",
        )?;
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        std::fs::write(dir.join("package.json"), PACKAGE_JSON).map_err(|e| e.to_string())?;
        std::fs::write(dir.join("package-lock.json"), PACKAGE_LOCK).map_err(|e| e.to_string())?;
        run(
            Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund", "--ignore-scripts"])
                .current_dir(dir),
            "npm ci of the pinned @octokit/openapi",
        )
    });
    dir.join("node_modules/@octokit/openapi/generated")
}

/// Debian's `gh` package, the version the `gh` test is written against
/// (`.ci/run` installs it when absent).
pub const GH_DEB: &str = "2.23.0+dfsg1-1";

/// The `gh` CLI on PATH, checked to be Debian's `gh` `GH_DEB`: anything
/// else fails the test naming the package.
pub fn gh() -> PathBuf {
    let install = format!(
        "the gh conformance test needs Debian's gh package, version {GH_DEB}: \
         `apt-get install gh={GH_DEB}` (.ci/run installs it when absent)"
    );
    let gh = which("gh").unwrap_or_else(|| panic!("gh is not on PATH; {install}"));
    let out = Command::new(&gh)
        .arg("--version")
        .env("GH_NO_UPDATE_NOTIFIER", "1")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}; {install}", gh.display()));
    let version = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && version.contains(&format!("Debian {GH_DEB}")),
        "{} --version says {version:?}; {install}",
        gh.display()
    );
    gh
}

fn which(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}
