//! Protected paths: files Shepherd never commits (default `.github/workflows/**`).

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};

use super::error::WorktreeError;

/// The protected paths when the configuration names none.
pub const DEFAULT_PROTECTED: &[&str] = &[".github/workflows/**"];

/// A compiled set of protected-path globs, matched against repository-relative
/// paths with `/` separators. `*` does not cross `/`; `**` does.
#[derive(Debug, Clone)]
pub struct ProtectedPaths {
    patterns: Vec<String>,
    set: GlobSet,
}

impl ProtectedPaths {
    /// Compile `patterns`; an invalid glob is an error naming it.
    pub fn new<S: AsRef<str>>(patterns: &[S]) -> Result<Self, WorktreeError> {
        let mut builder = GlobSetBuilder::new();
        let mut kept = Vec::with_capacity(patterns.len());
        for pattern in patterns {
            let pattern = pattern.as_ref();
            builder.add(compile(pattern)?);
            kept.push(pattern.to_string());
        }
        let set = builder.build().map_err(|source| WorktreeError::Glob {
            pattern: kept.join(", "),
            source,
        })?;
        Ok(ProtectedPaths {
            patterns: kept,
            set,
        })
    }

    /// No protected paths at all.
    pub fn none() -> Self {
        ProtectedPaths {
            patterns: Vec::new(),
            set: GlobSet::empty(),
        }
    }

    /// The patterns, as given.
    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }

    /// The first pattern `path` matches, if any. A path also counts as
    /// protected when everything directly inside it would be
    /// (`.github/workflows` itself for `.github/workflows/**`).
    pub fn matching(&self, path: &str) -> Option<&str> {
        let path = path.trim_end_matches('/');
        let hit = self.set.matches(path).into_iter().next().or_else(|| {
            // A directory: does anything inside it match?
            let probe = format!("{path}/x");
            self.set.matches(probe.as_str()).into_iter().next()
        });
        hit.map(|i| self.patterns[i].as_str())
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
        let mut builder = GlobSetBuilder::new();
        for pattern in DEFAULT_PROTECTED {
            if let Ok(glob) = compile(pattern) {
                builder.add(glob);
            }
        }
        ProtectedPaths {
            patterns: DEFAULT_PROTECTED.iter().map(|p| p.to_string()).collect(),
            // The default patterns are constants tested below to compile.
            set: builder.build().unwrap_or_else(|_| GlobSet::empty()),
        }
    }
}

fn compile(pattern: &str) -> Result<Glob, WorktreeError> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map_err(|source| WorktreeError::Glob {
            pattern: pattern.to_string(),
            source,
        })
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
        // A parent directory is not itself matched; `commit_files` checks the
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
