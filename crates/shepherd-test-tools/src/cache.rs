//! The cache the tests install into: `$SHEPHERD_TEST_TOOLS_DIR`, else
//! `$XDG_CACHE_HOME/shepherd-test-tools`, else
//! `~/.cache/shepherd-test-tools`, outside the clone.
//!
//! Each install is a directory named by what it holds and a hash of its
//! pinned files, so changing a pin installs the new set beside the old.
//! A finished install is marked; a lock directory (`mkdir` is atomic)
//! makes parallel tests and test binaries install once, and a lock whose
//! holder died is taken over after [`STALE_LOCK`].

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::ToolError;

/// How long another process's install may hold the lock before it is taken
/// to have died.
pub const STALE_LOCK: Duration = Duration::from_secs(15 * 60);

/// The marker of a finished install, inside its directory.
const MARKER: &str = ".installed";

/// One install at a time within this process (threads of one test binary).
static INSTALLING: Mutex<()> = Mutex::new(());

/// The cache's root directory.
///
/// # Errors
///
/// [`ToolError::NoCache`] when none of the variables is set.
pub fn root() -> Result<PathBuf, ToolError> {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    env("SHEPHERD_TEST_TOOLS_DIR")
        .or_else(|| env("XDG_CACHE_HOME").map(|d| d.join("shepherd-test-tools")))
        .or_else(|| env("HOME").map(|d| d.join(".cache").join("shepherd-test-tools")))
        .ok_or(ToolError::NoCache)
}

/// The 64-bit FNV-1a hash of `parts` (each followed by a NUL), as 16 hex
/// digits: stable across Rust releases and machines, which is all a cache
/// key needs (std's hasher may change between releases).
pub fn key(parts: &[&str]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for byte in part.bytes().chain([0u8]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{hash:016x}")
}

/// `name` under the cache root, installed once by `install(dir)`.
///
/// The install runs in place (a Python virtual environment is not
/// relocatable), into an emptied directory; only a successful one is marked.
///
/// # Errors
///
/// What `install` returned, or a file operation's failure.
pub fn install_once(
    name: &str,
    install: impl FnOnce(&Path) -> Result<(), ToolError>,
) -> Result<PathBuf, ToolError> {
    let dir = root()?.join(name);
    let done = dir.join(MARKER);
    if done.exists() {
        return Ok(dir);
    }
    let _one_thread = INSTALLING.lock().unwrap_or_else(|e| e.into_inner());
    let parent = dir.parent().unwrap_or(&dir).to_owned();
    std::fs::create_dir_all(&parent).map_err(ToolError::io("creating", &parent))?;
    let lock = dir.with_extension("lock");
    let started = Instant::now();
    loop {
        if done.exists() {
            return Ok(dir);
        }
        match std::fs::create_dir(&lock) {
            Ok(()) => break,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let stale = std::fs::metadata(&lock)
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| t.elapsed().ok())
                    .is_some_and(|age| age > STALE_LOCK);
                if stale || started.elapsed() > STALE_LOCK {
                    let _ = std::fs::remove_dir(&lock);
                    continue;
                }
                std::thread::sleep(Duration::from_millis(300));
            }
            Err(e) => return Err(ToolError::io("creating", &lock)(e)),
        }
    }
    let result = if done.exists() {
        Ok(())
    } else {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)
            .map_err(ToolError::io("creating", &dir))
            .and_then(|()| install(&dir))
            .and_then(|()| std::fs::write(&done, "ok\n").map_err(ToolError::io("writing", &done)))
    };
    let _ = std::fs::remove_dir(&lock);
    result.map(|()| dir)
}

/// Runs `command` for `what`; `install` says what installs its program
/// when it cannot be started.
///
/// # Errors
///
/// [`ToolError::Spawn`] or [`ToolError::Failed`] with the end of its output.
pub fn run(command: &mut Command, what: &str, install: &str) -> Result<(), ToolError> {
    let out = command.output().map_err(|source| ToolError::Spawn {
        what: what.to_owned(),
        program: command.get_program().to_string_lossy().into_owned(),
        install: install.to_owned(),
        source,
    })?;
    if out.status.success() {
        return Ok(());
    }
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Err(ToolError::Failed {
        what: what.to_owned(),
        status: out.status,
        output: tail(&text, 3000),
    })
}

/// The last `max` characters of `text`.
pub(crate) fn tail(text: &str, max: usize) -> String {
    let skip = text.chars().count().saturating_sub(max);
    text.chars().skip(skip).collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;

    #[test]
    fn the_key_depends_on_every_part_and_on_where_parts_split() {
        assert_eq!(key(&["a"]), key(&["a"]));
        assert_ne!(key(&["a"]), key(&["b"]));
        assert_ne!(key(&["ab", "c"]), key(&["a", "bc"]));
        assert_eq!(key(&[]).len(), 16);
    }

    #[test]
    fn a_failed_install_is_not_marked_and_the_next_call_installs_again() {
        let cache = tempfile_dir();
        std::env::set_var("SHEPHERD_TEST_TOOLS_DIR", &cache);
        let failed = install_once("thing", |_| {
            Err(ToolError::NoCache) // any error
        });
        assert!(failed.is_err());
        assert!(!cache.join("thing").join(MARKER).exists());
        let mut calls = 0;
        let dir = install_once("thing", |dir| {
            calls += 1;
            std::fs::write(dir.join("file"), "x").map_err(ToolError::io("writing", dir))
        })
        .unwrap();
        assert_eq!(calls, 1);
        assert!(dir.join("file").exists());
        // Installed: not run again.
        let again = install_once("thing", |_| panic!("installed twice")).unwrap();
        assert_eq!(again, dir);
        assert!(!cache.join("thing.lock").exists(), "the lock is released");
        std::fs::remove_dir_all(&cache).unwrap();
    }

    #[test]
    fn tail_keeps_the_end() {
        assert_eq!(tail("abcdef", 3), "def");
        assert_eq!(tail("ab", 3), "ab");
    }

    fn tempfile_dir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "shepherd-test-tools-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }
}
