//! What the repository itself must never do, checked over every file git
//! tracks: pin a Debian package to an exact version (Debian drops a
//! version at its next security update, and the pin then breaks every
//! fresh machine), or read a path outside the clone (a user's clone has
//! nothing beside it).

#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is how a test fails

use std::path::{Path, PathBuf};
use std::process::Command;

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every tracked text file but lockfiles and this test, with its text.
fn tracked_files() -> Vec<(String, String)> {
    let root = repository();
    let out = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(&root)
        .output()
        .expect("git ls-files");
    assert!(out.status.success(), "git ls-files failed");
    let names = String::from_utf8(out.stdout).unwrap();
    let files: Vec<(String, String)> = names
        .split('\0')
        .filter(|n| !n.is_empty())
        .filter(|n| !n.ends_with("package-lock.json") && !n.ends_with("Cargo.lock"))
        .filter(|n| !n.ends_with("shepherd-test-tools/tests/repository.rs"))
        .filter_map(|n| {
            let text = std::fs::read_to_string(root.join(n)).ok()?;
            Some((n.to_owned(), text))
        })
        .collect();
    assert!(files.len() > 100, "only {} files read", files.len());
    files
}

/// A Debian version pin: `name=version` with a Debian revision (`-N`), or
/// a Debian version string anywhere (a `+debNuM`/`~debNuM` security
/// suffix, `+dfsgN-N`), which catches a pin kept in a variable.
fn debian_pin() -> regex::Regex {
    regex::Regex::new(concat!(
        r"\b[a-z0-9][a-z0-9.+-]*=[0-9][0-9A-Za-z.+~:]*-[0-9]",
        r"|[0-9][0-9A-Za-z.+:]*(-[0-9A-Za-z.+]*)?([+~]deb[0-9]+u[0-9]+|\+dfsg[0-9]*-[0-9])",
    ))
    .unwrap()
}

#[test]
fn the_pin_pattern_finds_debian_pins_and_nothing_else() {
    let pin = debian_pin();
    for line in [
        "apt-get install chromium=148.0.7778.167-1~deb12u1",
        "\"rsync=3.2.7-1+deb12u5\"",
        "apt-get install gh=2.23.0+dfsg1-1",
        "libpopt0=1.19+dfsg-1",
        "CHROMIUM_DEB=148.0.7778.167-1~deb12u1",
        "GH_DEB: &str = \"2.23.0+dfsg1-1\";",
    ] {
        assert!(pin.is_match(line), "{line}");
    }
    for line in [
        "check-jsonschema==0.39.0",
        "PyGithub==2.10.0",
        "apt-get install chromium chromium-driver",
        "let x=1;",
        "RUSTDOCFLAGS=\"-D warnings\"",
        "SHEPHERD_TEST_CLIS_DIR=/tmp/x",
    ] {
        assert!(!pin.is_match(line), "{line}");
    }
}

#[test]
fn no_file_pins_a_debian_package_to_a_version() {
    let pin = debian_pin();
    let found: Vec<String> = tracked_files()
        .iter()
        .flat_map(|(name, text)| {
            text.lines()
                .enumerate()
                .filter(|(_, line)| pin.is_match(line))
                .map(move |(n, line)| format!("{name}:{}: {}", n + 1, line.trim()))
        })
        .collect();
    assert!(
        found.is_empty(),
        "Debian packages are installed by name, never pinned:\n{}",
        found.join("\n")
    );
}

#[test]
fn nothing_reads_a_path_beside_the_clone() {
    let found: Vec<String> = tracked_files()
        .iter()
        .filter(|(name, _)| !name.ends_with(".md"))
        .flat_map(|(name, text)| {
            text.lines()
                .enumerate()
                .filter(|(_, line)| line.contains("../shared") || line.contains("shared/github"))
                .map(move |(n, line)| format!("{name}:{}: {}", n + 1, line.trim()))
        })
        .collect();
    assert!(
        found.is_empty(),
        "a clone has nothing beside it; take the file from a pinned package:\n{}",
        found.join("\n")
    );
}
