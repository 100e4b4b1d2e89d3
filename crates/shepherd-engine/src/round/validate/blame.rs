//! Blaming a verify failure: the repository files its output names, and
//! whether the round touched them.

use std::collections::BTreeSet;
use std::path::Path;

use serde::Serialize;

/// Repository files named in a command's output: tokens that, once stripped
/// of `:line:col`, quotes and the worktree's own prefix, are files under
/// `root`. Conservative: anything that is not an existing file is ignored.
pub(crate) fn files_named_in(output: &str, root: &Path) -> BTreeSet<String> {
    let prefix = format!("{}/", root.display());
    let mut found = BTreeSet::new();
    let separators = |c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '"' | '\'' | '`' | '(' | ')' | '[' | ']' | '<' | '>' | ',' | ';' | '=' | '|'
            )
    };
    for raw in output.split(separators) {
        let mut token = raw.strip_prefix("file://").unwrap_or(raw);
        if let Some(rest) = token.strip_prefix(prefix.as_str()) {
            token = rest;
        }
        let token = token.split(':').next().unwrap_or("");
        let token = token.trim_start_matches("./").trim_end_matches('.');
        if token.is_empty()
            || token.starts_with('/')
            || token.split('/').any(|p| p == ".." || p == ".git")
            || !(token.contains('/') || token.contains('.'))
        {
            continue;
        }
        if root.join(token).is_file() {
            found.insert(token.to_owned());
        }
    }
    found
}

/// Whom a verify failure is blamed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum FailureClass {
    /// The output names a file the round touched.
    Touched,
    /// The output names files, none of which the round touched.
    PreExisting,
    /// The output names no file: treated as the round's.
    Unsure,
}

pub(crate) fn classify_failure(named: &BTreeSet<String>, touched: &[String]) -> FailureClass {
    if named.iter().any(|f| touched.contains(f)) {
        FailureClass::Touched
    } else if named.is_empty() {
        FailureClass::Unsure
    } else {
        FailureClass::PreExisting
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;

    #[test]
    fn failures_are_blamed_on_the_files_they_name() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/a.rs"), "").unwrap();
        std::fs::write(root.join("src/b.rs"), "").unwrap();
        std::fs::write(root.join("README.md"), "").unwrap();
        let output = format!(
            "error[E0308]: mismatched types\n --> src/a.rs:12:5\nFAIL {}/src/b.rs (1 test)\n\
             see README.md. not/a/file.rs and words.\n",
            root.display()
        );
        let named = files_named_in(&output, root);
        assert_eq!(
            named.iter().map(String::as_str).collect::<Vec<_>>(),
            ["README.md", "src/a.rs", "src/b.rs"]
        );
        let touched = vec!["src/a.rs".to_owned()];
        assert_eq!(classify_failure(&named, &touched), FailureClass::Touched);
        let other = vec!["src/c.rs".to_owned()];
        assert_eq!(classify_failure(&named, &other), FailureClass::PreExisting);
        assert_eq!(
            classify_failure(&files_named_in("1 test failed", root), &touched),
            FailureClass::Unsure
        );
        assert!(files_named_in("../../etc/passwd /etc/passwd .git/config", root).is_empty());
    }
}
