//! Protected paths: files Shepherd never commits (default `.github/workflows/**`).

use shepherd_core::glob::PathGlobs;

use super::error::WorktreeError;

/// The protected paths when the configuration names none.
pub const DEFAULT_PROTECTED: &[&str] = &[".github/workflows/**"];

/// A compiled set of protected-path globs, matched against repository-relative
/// paths with `/` separators: `*` does not cross `/`; `**` does; a pattern
/// that matches a directory covers what is below it (the configuration's
/// `paths.protected`, through [`shepherd_core::glob`], Shepherd's one glob
/// implementation).
#[derive(Debug, Clone)]
pub struct ProtectedPaths {
    globs: PathGlobs,
}

impl ProtectedPaths {
    /// Compile `patterns`; an invalid glob is an error naming it.
    pub fn new<S: AsRef<str>>(patterns: &[S]) -> Result<Self, WorktreeError> {
        Ok(ProtectedPaths {
            globs: PathGlobs::new(patterns)?,
        })
    }

    /// No protected paths at all.
    pub fn none() -> Self {
        ProtectedPaths {
            globs: PathGlobs::empty(),
        }
    }

    /// The patterns, as given.
    pub fn patterns(&self) -> &[String] {
        self.globs.patterns()
    }

    /// The first pattern that covers `path`, if any: it matches the path or
    /// a parent directory, or everything directly inside it
    /// (`.github/workflows` itself for `.github/workflows/**`).
    pub fn matching(&self, path: &str) -> Option<&str> {
        self.globs.covering(path)
    }

    /// `paths` split into the ones Shepherd may commit and the protected
    /// ones, each with the first pattern it matches (in the given order).
    pub fn partition<'a>(&self, paths: &'a [String]) -> (Vec<&'a String>, Vec<(&'a String, &str)>) {
        let mut allowed = Vec::new();
        let mut refused = Vec::new();
        for path in paths {
            match self.matching(path) {
                Some(pattern) => refused.push((path, pattern)),
                None => allowed.push(path),
            }
        }
        (allowed, refused)
    }
}

impl Default for ProtectedPaths {
    fn default() -> Self {
        // The default patterns are constants tested below to compile.
        ProtectedPaths::new(DEFAULT_PROTECTED).unwrap_or_else(|_| ProtectedPaths::none())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_protects_workflows_only() {
        let p = ProtectedPaths::default();
        assert_eq!(p.patterns(), [".github/workflows/**"]);
        assert_eq!(
            p.matching(".github/workflows/ci.yml"),
            Some(".github/workflows/**")
        );
        assert_eq!(
            p.matching(".github/workflows/sub/x.yaml"),
            Some(".github/workflows/**")
        );
        assert_eq!(
            p.matching(".github/workflows"),
            Some(".github/workflows/**")
        );
        // A parent directory is not itself covered; `commit_files` checks the
        // files a directory pathspec staged.
        assert_eq!(p.matching(".github"), None);
        assert_eq!(p.matching(".github/CODEOWNERS"), None);
        assert_eq!(p.matching("src/.github/workflows.rs"), None);
        assert_eq!(p.matching("src/main.rs"), None);
    }

    #[test]
    fn star_does_not_cross_directories() {
        let p = ProtectedPaths::new(&["secrets/*.key", "**/Cargo.lock"]).unwrap();
        assert_eq!(p.matching("secrets/a.key"), Some("secrets/*.key"));
        assert_eq!(p.matching("secrets/deep/a.key"), None);
        assert_eq!(p.matching("crates/x/Cargo.lock"), Some("**/Cargo.lock"));
        assert_eq!(p.matching("Cargo.lock"), Some("**/Cargo.lock"));
    }

    #[test]
    fn partition_keeps_the_order_and_names_the_pattern() {
        let p = ProtectedPaths::new(&["src/auth/login.sh", ".github/workflows/**"]).unwrap();
        let paths: Vec<String> = [
            "src/auth/session.sh",
            "src/auth/login.sh",
            ".github/workflows/ci.yml",
            "src/auth/token.sh",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        let (allowed, refused) = p.partition(&paths);
        assert_eq!(allowed, [&paths[0], &paths[3]]);
        assert_eq!(
            refused,
            [
                (&paths[1], "src/auth/login.sh"),
                (&paths[2], ".github/workflows/**")
            ]
        );
        let none = ProtectedPaths::none();
        let (allowed, refused) = none.partition(&paths);
        assert_eq!(allowed.len(), 4);
        assert!(refused.is_empty());
    }

    #[test]
    fn invalid_glob_names_the_pattern() {
        let err = ProtectedPaths::new(&["a/[b"]).unwrap_err();
        assert!(err.to_string().contains("a/[b"), "{err}");
        assert!(ProtectedPaths::none()
            .matching(".github/workflows/ci.yml")
            .is_none());
    }
}
