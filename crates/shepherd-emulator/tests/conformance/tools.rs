//! The real clients and descriptions the conformance tests use, from
//! `shepherd-test-tools`: installed by the tests themselves into a cache
//! outside the clone (a second run fetches nothing), or checked on the
//! machine.
//!
//! - A Python virtual environment with PyGithub and python-gitlab
//!   (`clients/requirements.txt`, every package pinned).
//! - GitHub's OpenAPI description, `@octokit/openapi` (pinned with its
//!   lockfile in `shepherd-test-tools/github/`).
//! - Debian's `gh` CLI, a system package installed by name
//!   (`cargo xtask test` does it), checked to be 2.20 or later within 2.x.
//!
//! A missing python3 (or its `venv` module), npm or gh fails the test with
//! what to install: nothing is skipped silently.

use std::path::PathBuf;

use shepherd_test_tools::system::require;
use shepherd_test_tools::{github, python, system};

const REQUIREMENTS: &str = include_str!("clients/requirements.txt");

/// The virtual environment's `python`, with the pinned clients installed.
pub fn python() -> PathBuf {
    require(python::venv("python-clients", REQUIREMENTS, &[])).join("python")
}

/// `generated/` of the pinned `@octokit/openapi`.
pub fn openapi_dir() -> PathBuf {
    require(github::openapi_dir())
}

/// The `gh` CLI on PATH, of a version the test works with; anything else
/// fails the test naming the package.
pub fn gh() -> PathBuf {
    let found = require(system::gh());
    eprintln!("gh: {} ({})", found.path.display(), found.version);
    found.path
}
