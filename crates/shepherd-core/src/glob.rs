//! Globs over repository paths: the one implementation (globset) behind
//! `[paths] protected` (config validation and the engine's commit guard)
//! and the emulator's reviewer-bot rules.
//!
//! Paths and patterns are split on `/`, with empty and `.` segments
//! dropped (`./docs//*.md` is `docs/*.md`). `*` and `?` stay within a
//! segment (`?` is one byte), `**` spans any number of segments (none included), `[abc]` and
//! `{a,b}` are classes and alternatives. An invalid pattern is an error that
//! names it, so a configuration with one is refused before anything runs.

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};

/// A pattern that does not compile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid glob `{pattern}`: {reason}")]
pub struct GlobError {
    /// The pattern as written.
    pub pattern: String,
    /// What is wrong with it.
    pub reason: String,
}

/// A compiled set of path globs.
#[derive(Debug, Clone)]
pub struct PathGlobs {
    patterns: Vec<String>,
    set: GlobSet,
}

fn normalize(path: &str) -> String {
    path.split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect::<Vec<_>>()
        .join("/")
}

fn compile(pattern: &str) -> Result<Glob, GlobError> {
    let error = |reason: String| GlobError {
        pattern: pattern.to_owned(),
        reason,
    };
    if pattern.trim().is_empty() {
        return Err(error("it is empty".to_owned()));
    }
    GlobBuilder::new(&normalize(pattern))
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map_err(|e| error(e.kind().to_string()))
}

/// Check one pattern (for configuration validation).
pub fn check(pattern: &str) -> Result<(), GlobError> {
    compile(pattern).map(|_| ())
}

impl PathGlobs {
    /// Compile `patterns`; the first invalid one is the error.
    pub fn new<S: AsRef<str>>(patterns: &[S]) -> Result<Self, GlobError> {
        let mut builder = GlobSetBuilder::new();
        let mut kept = Vec::with_capacity(patterns.len());
        for pattern in patterns {
            builder.add(compile(pattern.as_ref())?);
            kept.push(pattern.as_ref().to_owned());
        }
        let set = builder.build().map_err(|e| GlobError {
            pattern: kept.join(", "),
            reason: e.kind().to_string(),
        })?;
        Ok(PathGlobs {
            patterns: kept,
            set,
        })
    }

    /// No patterns at all.
    pub fn empty() -> Self {
        PathGlobs {
            patterns: Vec::new(),
            set: GlobSet::empty(),
        }
    }

    /// The patterns, as given.
    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }

    /// The first pattern that matches the whole of `path`.
    pub fn matching_exactly(&self, path: &str) -> Option<&str> {
        let path = normalize(path);
        self.set
            .matches(path.as_str())
            .into_iter()
            .next()
            .map(|i| self.patterns[i].as_str())
    }

    /// The first pattern that covers `path`: it matches the path, or one of
    /// its parent directories (`secrets` covers `secrets/prod/key.pem`), or
    /// what is directly inside it when `path` is a directory
    /// (`.github/workflows/**` covers `.github/workflows`).
    pub fn covering(&self, path: &str) -> Option<&str> {
        let path = normalize(path);
        let mut prefix = String::with_capacity(path.len());
        for segment in path.split('/') {
            if !prefix.is_empty() {
                prefix.push('/');
            }
            prefix.push_str(segment);
            if let Some(hit) = self.set.matches(prefix.as_str()).into_iter().next() {
                return Some(self.patterns[hit].as_str());
            }
        }
        let probe = format!("{path}/x");
        self.set
            .matches(probe.as_str())
            .into_iter()
            .next()
            .map(|i| self.patterns[i].as_str())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;

    #[test]
    fn whole_path_matches() {
        let cases = [
            (".github/workflows/**", ".github/workflows/ci.yml", true),
            (".github/workflows/**", ".github/workflows/sub/x.yml", true),
            (".github/workflows/**", ".github/dependabot.yml", false),
            ("*.lock", "Cargo.lock", true),
            ("*.lock", "sub/Cargo.lock", false),
            ("**/*.lock", "sub/Cargo.lock", true),
            ("**/*.lock", "Cargo.lock", true),
            ("src/*.rs", "src/main.rs", true),
            ("src/*.rs", "src/a/main.rs", false),
            ("src/**/*.sh", "src/login.sh", true),
            ("src/**/*.sh", "src/auth/login.sh", true),
            ("src/**", "src/auth/login.sh", true),
            ("a?c", "abc", true),
            // globset's `?` is one byte, not one character: `a*c` for `aéc`.
            ("a?c", "aéc", false),
            ("a*c", "aéc", true),
            ("a?c", "ac", false),
            ("a?c", "a/c", false),
            ("./docs//*.md", "docs/x.md", true),
            ("secrets", "secrets", true),
            ("secrets", "secrets/x", false),
            ("src/[ab].rs", "src/a.rs", true),
            ("src/{a,b}.rs", "src/b.rs", true),
        ];
        for (pattern, path, expected) in cases {
            let globs = PathGlobs::new(&[pattern]).unwrap();
            assert_eq!(
                globs.matching_exactly(path).is_some(),
                expected,
                "{pattern} ~ {path}"
            );
        }
    }

    #[test]
    fn a_pattern_covers_what_is_below_a_matched_directory() {
        let globs = PathGlobs::new(&["secrets", ".github/workflows/**"]).unwrap();
        assert_eq!(globs.covering("secrets/prod/key.pem"), Some("secrets"));
        assert_eq!(
            globs.covering(".github/workflows"),
            Some(".github/workflows/**")
        );
        assert_eq!(
            globs.covering(".github/workflows/ci.yml"),
            Some(".github/workflows/**")
        );
        assert_eq!(globs.covering(".github"), None);
        assert_eq!(globs.covering("src/secrets.rs"), None);
        assert_eq!(globs.covering(".github/CODEOWNERS"), None);
        assert_eq!(PathGlobs::empty().covering("secrets"), None);
    }

    #[test]
    fn an_invalid_pattern_is_an_error_naming_it() {
        for bad in ["src/[abc", "a/{b", ""] {
            let err = PathGlobs::new(&["ok/**", bad]).unwrap_err();
            assert_eq!(err.pattern, bad);
            assert!(check(bad).is_err(), "{bad}");
        }
        assert!(check("src/**/*.rs").is_ok());
    }
}
