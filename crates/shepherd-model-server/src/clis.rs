//! The real agent CLIs, at the versions pinned in this crate's
//! `clis/package.json` and `clis/package-lock.json`, installed for tests.
//!
//! [`installed_cli`] installs them on first use with npm into a cache
//! directory outside the clone, keyed by a hash of the lockfile:
//! `$SHEPHERD_TEST_CLIS_DIR`, else `$XDG_CACHE_HOME/shepherd-test-clis`,
//! else `~/.cache/shepherd-test-clis`, then `/<hash>/`. A lock directory
//! makes parallel tests (and test binaries) install once; a finished
//! install is marked, and a second run downloads nothing. Changing the
//! lockfile changes the hash: the new set is installed beside the old.
//!
//! A missing Node.js or npm, or a failed install, fails the test with what
//! to install: an end-to-end test never skips silently.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The pinned `package.json`.
pub const PACKAGE_JSON: &str = include_str!("../clis/package.json");

/// The pinned `package-lock.json`.
pub const PACKAGE_LOCK: &str = include_str!("../clis/package-lock.json");

/// Each CLI's executable name and its npm package.
pub const CLIS: [(&str, &str); 5] = [
    ("claude", "@anthropic-ai/claude-code"),
    ("codex", "@openai/codex"),
    ("gemini", "@google/gemini-cli"),
    ("opencode", "opencode-ai"),
    ("copilot", "@github/copilot"),
];

/// How long another process's install may hold the lock before it is
/// taken to have died.
const STALE_LOCK: Duration = Duration::from_secs(20 * 60);

/// Why the CLIs could not be installed.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// npm is not on `PATH`.
    #[error(
        "the end-to-end tests need Node.js (20 or later) and npm on PATH to install the pinned \
         agent CLIs: install them (Debian: `apt-get install nodejs npm`), then run the tests again"
    )]
    NoNpm,
    /// A CLI name not in [`CLIS`].
    #[error("no pinned CLI named {0:?} (known: claude, codex, gemini, opencode, copilot)")]
    Unknown(String),
    /// No cache directory could be chosen.
    #[error("no cache directory: set SHEPHERD_TEST_CLIS_DIR, XDG_CACHE_HOME or HOME")]
    NoCache,
    /// A file operation failed.
    #[error("{what} {path}")]
    Io {
        /// What was done.
        what: &'static str,
        /// On which path.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// npm failed.
    #[error("npm could not install the pinned agent CLIs into {dir}: {output}")]
    Npm {
        /// Where.
        dir: PathBuf,
        /// The end of npm's output.
        output: String,
    },
    /// The package is installed but its executable is not there.
    #[error("{0} is not installed (no executable there)")]
    Missing(PathBuf),
}

fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> CliError {
    let path = path.to_owned();
    move |source| CliError::Io { what, path, source }
}

/// The 64-bit FNV-1a hash of `bytes`, as 16 hex digits: stable across
/// Rust versions and machines, which is all a cache key needs.
pub fn lock_hash() -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in PACKAGE_LOCK.as_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// The pinned version of `package` (`"@openai/codex"`), from `package.json`.
pub fn pinned_version(package: &str) -> Option<String> {
    let manifest: serde_json::Value = serde_json::from_str(PACKAGE_JSON).ok()?;
    manifest
        .get("dependencies")?
        .get(package)?
        .as_str()
        .map(str::to_owned)
}

/// The pinned version of the CLI `name` (`"claude"`).
pub fn pinned_cli_version(name: &str) -> Option<String> {
    let (_, package) = CLIS.iter().find(|(n, _)| *n == name)?;
    pinned_version(package)
}

/// Where the pinned set is (or will be) installed.
pub fn install_dir() -> Result<PathBuf, CliError> {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let root = env("SHEPHERD_TEST_CLIS_DIR")
        .or_else(|| env("XDG_CACHE_HOME").map(|d| d.join("shepherd-test-clis")))
        .or_else(|| env("HOME").map(|d| d.join(".cache").join("shepherd-test-clis")))
        .ok_or(CliError::NoCache)?;
    Ok(root.join(lock_hash()))
}

/// The executable of the pinned CLI `name` (`claude`, `codex`, `gemini`,
/// `opencode`, `copilot`), installing the set first if needed.
///
/// # Panics
///
/// When it cannot be installed, with the reason and what to install: this
/// is test support, and a test that needs a real CLI fails without one.
pub fn installed_cli(name: &str) -> PathBuf {
    match try_installed_cli(name) {
        Ok(path) => path,
        Err(e) => panic!("{e}"),
    }
}

/// [`installed_cli`], as a `Result`.
pub fn try_installed_cli(name: &str) -> Result<PathBuf, CliError> {
    if !CLIS.iter().any(|(n, _)| *n == name) {
        return Err(CliError::Unknown(name.to_owned()));
    }
    let dir = install()?;
    let bin = dir.join("node_modules").join(".bin").join(name);
    if bin.exists() {
        Ok(bin)
    } else {
        Err(CliError::Missing(bin))
    }
}

/// Installs the pinned set once per process (and once per machine, through
/// the marker and the lock); returns its directory.
fn install() -> Result<PathBuf, CliError> {
    static DONE: OnceLock<PathBuf> = OnceLock::new();
    static INSTALLING: Mutex<()> = Mutex::new(());
    if let Some(dir) = DONE.get() {
        return Ok(dir.clone());
    }
    let _one_thread = INSTALLING.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(dir) = DONE.get() {
        return Ok(dir.clone());
    }
    let dir = install_dir()?;
    install_into(&dir)?;
    Ok(DONE.get_or_init(|| dir).clone())
}

fn marker(dir: &Path) -> PathBuf {
    dir.join(".shepherd-installed")
}

fn install_into(dir: &Path) -> Result<(), CliError> {
    if marker(dir).exists() {
        return Ok(());
    }
    let parent = dir.parent().unwrap_or(dir);
    std::fs::create_dir_all(parent).map_err(io("creating", parent))?;
    let lock = dir.with_extension("lock");
    let started = Instant::now();
    // mkdir is atomic: whoever creates the lock directory installs.
    loop {
        match std::fs::create_dir(&lock) {
            Ok(()) => break,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                if marker(dir).exists() {
                    return Ok(());
                }
                let age = std::fs::metadata(&lock)
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| t.elapsed().ok());
                if age.is_some_and(|a| a > STALE_LOCK) || started.elapsed() > STALE_LOCK {
                    tracing::warn!(lock = %lock.display(), "taking over a stale install lock");
                    let _ = std::fs::remove_dir(&lock);
                    continue;
                }
                std::thread::sleep(Duration::from_millis(500));
            }
            Err(e) => return Err(io("creating", &lock)(e)),
        }
    }
    let result = npm_install(dir);
    let _ = std::fs::remove_dir(&lock);
    result
}

fn npm_install(dir: &Path) -> Result<(), CliError> {
    if marker(dir).exists() {
        return Ok(());
    }
    match Command::new("npm").arg("--version").output() {
        Ok(out) if out.status.success() => {}
        _ => return Err(CliError::NoNpm),
    }
    let staging = dir.with_extension(format!("tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(&staging).map_err(io("creating", &staging))?;
    for (name, text) in [
        ("package.json", PACKAGE_JSON),
        ("package-lock.json", PACKAGE_LOCK),
    ] {
        let path = staging.join(name);
        std::fs::write(&path, text).map_err(io("writing", &path))?;
    }
    eprintln!(
        "shepherd-model-server: installing the pinned agent CLIs into {} (once)",
        dir.display()
    );
    // `npm ci` refuses a lockfile that lacks optional platform packages the
    // registry does not have; `npm install` then installs from the same
    // lockfile without changing the pinned versions.
    let mut last = String::new();
    for args in [
        &["ci", "--no-audit", "--no-fund", "--loglevel=error"][..],
        &[
            "install",
            "--no-audit",
            "--no-fund",
            "--no-save",
            "--loglevel=error",
        ][..],
    ] {
        let out = Command::new("npm")
            .args(args)
            .current_dir(&staging)
            .env("DISABLE_AUTOUPDATER", "1")
            .output()
            .map_err(|_| CliError::NoNpm)?;
        if out.status.success() {
            last.clear();
            break;
        }
        last = crate::tail(&String::from_utf8_lossy(&out.stderr), 1500);
    }
    if !last.is_empty() {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(CliError::Npm {
            dir: dir.to_owned(),
            output: last,
        });
    }
    let _ = std::fs::remove_dir_all(dir);
    std::fs::rename(&staging, dir).map_err(io("moving the install to", dir))?;
    let mark = marker(dir);
    std::fs::write(&mark, lock_hash()).map_err(io("writing", &mark))?;
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;

    #[test]
    fn every_cli_is_pinned_to_an_exact_version() {
        for (name, package) in CLIS {
            let v = pinned_cli_version(name).unwrap();
            assert!(
                v.chars().all(|c| c.is_ascii_digit() || c == '.'),
                "{package} is pinned to {v:?}, not an exact version"
            );
            assert!(
                PACKAGE_LOCK.contains(&format!("\"node_modules/{package}\"")),
                "{package}"
            );
        }
        assert_eq!(lock_hash().len(), 16);
    }
}
