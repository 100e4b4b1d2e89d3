//! What the browser test needs, installed by the test itself, pinned, and
//! cached outside the clone so a second run fetches nothing:
//!
//! - Debian's `chromium` at [`CHROMIUM_VERSION`], by `apt-get install`
//!   when `/usr/bin/chromium` is absent (apt keeps the `.deb` in its own
//!   archive cache, outside the clone);
//! - `playwright-core` at the version of `tests/browser/package.json` and
//!   its lockfile, by `npm ci` into `$SHEPHERD_TEST_BROWSER_DIR`, else
//!   `$XDG_CACHE_HOME/shepherd-test-browser`, else
//!   `~/.cache/shepherd-test-browser`, then `/<lockfile hash>/` (the
//!   pattern of `shepherd-model-server`'s agent CLIs).
//!
//! Either missing and not installable fails the test, naming what to
//! install: never a silent skip.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The executable the test drives.
pub const CHROMIUM: &str = "/usr/bin/chromium";

/// The Debian package version the test pins (bookworm's, at the time of
/// writing: `apt-cache policy chromium`).
pub const CHROMIUM_VERSION: &str = "148.0.7778.167-1~deb12u1";

const PACKAGE_JSON: &str = include_str!("../browser/package.json");
const PACKAGE_LOCK: &str = include_str!("../browser/package-lock.json");

/// The driver script.
pub fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser/approve.js")
}

fn output(cmd: &mut Command) -> Result<String, String> {
    match cmd.output() {
        Ok(o) if o.status.success() => Ok(String::from_utf8_lossy(&o.stdout).into_owned()),
        Ok(o) => Err(format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )),
        Err(e) => Err(e.to_string()),
    }
}

/// `/usr/bin/chromium`, installing Debian's package first if needed.
///
/// # Panics
///
/// When it is absent and cannot be installed.
pub fn chromium() -> PathBuf {
    let exe = PathBuf::from(CHROMIUM);
    if !exe.exists() {
        let package = format!("chromium={CHROMIUM_VERSION}");
        eprintln!("shepherd-serve tests: installing Debian's {package} (once)");
        let install = || {
            output(
                Command::new("apt-get")
                    .args(["install", "-y", "--no-install-recommends", &package])
                    .env("DEBIAN_FRONTEND", "noninteractive"),
            )
        };
        let result = install().or_else(|_| {
            // An index older than the pinned version: refresh it once.
            let _ = output(Command::new("apt-get").arg("update"));
            install()
        });
        if let Err(e) = result {
            let policy = output(Command::new("apt-cache").args(["policy", "chromium"]))
                .unwrap_or_else(|e| e);
            panic!(
                "the browser test needs Debian's chromium ({package}) at {CHROMIUM}, and \
                 `apt-get install -y {package}` failed (run it as root, or install it): \
                 {e}\napt-cache policy chromium:\n{policy}"
            );
        }
    }
    let version = output(Command::new(&exe).arg("--version")).unwrap_or_else(|e| {
        panic!("{CHROMIUM} --version failed: {e}");
    });
    let upstream = CHROMIUM_VERSION
        .split('-')
        .next()
        .unwrap_or(CHROMIUM_VERSION);
    if !version.contains(upstream) {
        eprintln!(
            "shepherd-serve tests: {CHROMIUM} is {}, not the pinned {upstream}",
            version.trim()
        );
    }
    exe
}

fn lock_hash() -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in PACKAGE_LOCK.as_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

fn cache_dir() -> PathBuf {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let root = env("SHEPHERD_TEST_BROWSER_DIR")
        .or_else(|| env("XDG_CACHE_HOME").map(|d| d.join("shepherd-test-browser")))
        .or_else(|| env("HOME").map(|d| d.join(".cache").join("shepherd-test-browser")))
        .expect("a cache directory: set SHEPHERD_TEST_BROWSER_DIR, XDG_CACHE_HOME or HOME");
    root.join(lock_hash())
}

/// The `node_modules` holding the pinned `playwright-core`, installed once.
///
/// # Panics
///
/// Without npm, or when npm fails.
pub fn node_modules() -> PathBuf {
    let dir = cache_dir();
    let marker = dir.join(".shepherd-installed");
    if marker.exists() {
        return dir.join("node_modules");
    }
    let parent = dir.parent().expect("the cache directory has a parent");
    std::fs::create_dir_all(parent).unwrap();
    // mkdir is atomic: whoever creates the lock directory installs.
    let lock = dir.with_extension("lock");
    let started = Instant::now();
    while std::fs::create_dir(&lock).is_err() {
        if marker.exists() {
            return dir.join("node_modules");
        }
        if started.elapsed() > Duration::from_secs(600) {
            let _ = std::fs::remove_dir(&lock);
        }
        std::thread::sleep(Duration::from_millis(300));
    }
    let installed = (|| -> Result<(), String> {
        if marker.exists() {
            return Ok(());
        }
        output(Command::new("npm").arg("--version")).map_err(|_| {
            "the browser test needs Node.js (20 or later) and npm on PATH to install \
             playwright-core: install them (Debian: `apt-get install nodejs npm`)"
                .to_owned()
        })?;
        let staging = dir.with_extension(format!("tmp-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&staging);
        std::fs::create_dir_all(&staging).map_err(|e| e.to_string())?;
        std::fs::write(staging.join("package.json"), PACKAGE_JSON).map_err(|e| e.to_string())?;
        std::fs::write(staging.join("package-lock.json"), PACKAGE_LOCK)
            .map_err(|e| e.to_string())?;
        eprintln!(
            "shepherd-serve tests: installing playwright-core into {} (once)",
            dir.display()
        );
        output(
            Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
                .current_dir(&staging),
        )
        .map_err(|e| format!("npm ci of playwright-core failed: {e}"))?;
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::rename(&staging, &dir).map_err(|e| e.to_string())?;
        std::fs::write(&marker, lock_hash()).map_err(|e| e.to_string())
    })();
    let _ = std::fs::remove_dir(&lock);
    if let Err(e) = installed {
        panic!("{e}");
    }
    dir.join("node_modules")
}
