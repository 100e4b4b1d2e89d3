//! Finding the verify command: `[verify] command`, else a discovered
//! `verify.sh`, `.shepherd/verify`, or the project's obvious test command.

use std::path::Path;

use serde::Serialize;
use shepherd_core::config::{CommandSpec, Config};

/// A verify command and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct VerifyCommand {
    pub(crate) argv: Vec<String>,
    pub(crate) source: String,
}

impl VerifyCommand {
    pub(super) fn shown(&self) -> String {
        self.argv.join(" ")
    }
}

/// Find the verify command of the repository at `root`.
pub(crate) fn discover(config: &Config, root: &Path) -> Option<VerifyCommand> {
    if let Some(spec) = &config.verify.command {
        let argv = match spec {
            CommandSpec::Shell(line) => vec!["sh".to_owned(), "-c".to_owned(), line.clone()],
            CommandSpec::Argv(argv) => argv.clone(),
        };
        return Some(VerifyCommand {
            argv,
            source: "[verify] command".to_owned(),
        });
    }
    let found = |argv: &[&str], source: &str| VerifyCommand {
        argv: argv.iter().map(|s| (*s).to_owned()).collect(),
        source: source.to_owned(),
    };
    if root.join("verify.sh").is_file() {
        return Some(found(&["sh", "verify.sh"], "verify.sh"));
    }
    let dot = root.join(".shepherd/verify");
    if dot.is_file() {
        return Some(if is_executable(&dot) {
            found(&["./.shepherd/verify"], ".shepherd/verify")
        } else {
            found(&["sh", ".shepherd/verify"], ".shepherd/verify")
        });
    }
    if root.join("Cargo.toml").is_file() {
        return Some(found(&["cargo", "test"], "Cargo.toml"));
    }
    if let Ok(text) = std::fs::read_to_string(root.join("package.json")) {
        let has_test = serde_json::from_str::<serde_json::Value>(&text)
            .ok()
            .is_some_and(|v| v["scripts"]["test"].is_string());
        if has_test {
            return Some(found(&["npm", "test"], "package.json"));
        }
    }
    if let Some(source) = python_tests(root) {
        return Some(found(&["pytest"], source));
    }
    if root.join("go.mod").is_file() {
        return Some(found(&["go", "test", "./..."], "go.mod"));
    }
    if let Ok(text) = std::fs::read_to_string(root.join("Makefile")) {
        let has_test = text.lines().any(|l| {
            l.strip_prefix("test")
                .is_some_and(|rest| rest.trim_start().starts_with(':') && !rest.starts_with(":="))
        });
        if has_test {
            return Some(found(&["make", "test"], "Makefile"));
        }
    }
    for script in ["test.sh", "tests/run.sh", "run-tests.sh"] {
        if root.join(script).is_file() {
            return Some(found(&["sh", script], script));
        }
    }
    None
}

/// Why the project's tests look like pytest's: the file that says so.
fn python_tests(root: &Path) -> Option<&'static str> {
    if root.join("pytest.ini").is_file() || root.join("conftest.py").is_file() {
        return Some("pytest.ini");
    }
    let says = |file: &str, section: &str| {
        std::fs::read_to_string(root.join(file)).is_ok_and(|t| t.contains(section))
    };
    if says("pyproject.toml", "[tool.pytest") {
        return Some("pyproject.toml");
    }
    if says("setup.cfg", "[tool:pytest]") || says("tox.ini", "[pytest]") {
        return Some("setup.cfg");
    }
    let python_project = [
        "pyproject.toml",
        "setup.py",
        "setup.cfg",
        "requirements.txt",
    ]
    .iter()
    .any(|f| root.join(f).is_file());
    let test_files = std::fs::read_dir(root.join("tests")).is_ok_and(|entries| {
        entries.filter_map(|e| e.ok()).any(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.ends_with(".py") && (name.starts_with("test_") || name.ends_with("_test.py"))
        })
    });
    (python_project && test_files).then_some("tests/")
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;

    #[test]
    fn discovery_order() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let config = Config::default();
        assert_eq!(discover(&config, root), None);
        std::fs::write(root.join("test.sh"), "true").unwrap();
        assert_eq!(discover(&config, root).unwrap().source, "test.sh");
        std::fs::write(root.join("Makefile"), "all:\nTESTS := x\ntest :\n\ttrue\n").unwrap();
        assert_eq!(discover(&config, root).unwrap().argv, ["make", "test"]);
        std::fs::write(root.join("go.mod"), "module x\n").unwrap();
        assert_eq!(
            discover(&config, root).unwrap().argv,
            ["go", "test", "./..."]
        );
        std::fs::write(root.join("pyproject.toml"), "[project]\nname = \"x\"\n").unwrap();
        assert_eq!(
            discover(&config, root).unwrap().argv,
            ["go", "test", "./..."]
        );
        std::fs::create_dir_all(root.join("tests")).unwrap();
        std::fs::write(root.join("tests/test_x.py"), "def test_x(): pass\n").unwrap();
        assert_eq!(discover(&config, root).unwrap().argv, ["pytest"]);
        std::fs::write(root.join("package.json"), r#"{"scripts": {"build": "x"}}"#).unwrap();
        assert_eq!(discover(&config, root).unwrap().argv, ["pytest"]);
        std::fs::write(
            root.join("package.json"),
            r#"{"scripts": {"test": "jest"}}"#,
        )
        .unwrap();
        assert_eq!(discover(&config, root).unwrap().argv, ["npm", "test"]);
        std::fs::write(root.join("Cargo.toml"), "").unwrap();
        assert_eq!(discover(&config, root).unwrap().argv, ["cargo", "test"]);
        std::fs::create_dir_all(root.join(".shepherd")).unwrap();
        std::fs::write(root.join(".shepherd/verify"), "true").unwrap();
        assert_eq!(
            discover(&config, root).unwrap().argv,
            ["sh", ".shepherd/verify"]
        );
        std::fs::write(root.join("verify.sh"), "true").unwrap();
        assert_eq!(discover(&config, root).unwrap().argv, ["sh", "verify.sh"]);
        let mut config = Config::default();
        config.verify.command = Some(CommandSpec::Shell("make check".into()));
        let cmd = discover(&config, root).unwrap();
        assert_eq!(cmd.argv, ["sh", "-c", "make check"]);
        assert_eq!(cmd.source, "[verify] command");
    }

    #[test]
    fn a_makefile_without_a_test_target_is_not_a_test_command() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("Makefile"), "tests:\n\ttrue\ntest_x := 1\n").unwrap();
        assert_eq!(discover(&Config::default(), dir.path()), None);
    }
}
