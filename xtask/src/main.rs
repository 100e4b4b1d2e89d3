//! The project's own tasks, run as `cargo xtask TASK` (the alias is in
//! `.cargo/config.toml`).
//!
//! - `cargo xtask test [ARGS…]`: the README's test command. Checks every
//!   program the tests take from the machine, installs the missing Debian
//!   packages by name in one `apt-get install` (as root; otherwise it says
//!   the command), prints the versions found, and stops listing **every**
//!   missing prerequisite at once; then runs
//!   `cargo test --workspace --locked --no-fail-fast ARGS…`, so one run
//!   reports every failing test binary, not only the first.
//! - `cargo xtask preflight [--no-install]`: the check alone.
//!
//! Packages from registries that keep every version (npm, PyPI) are not
//! installed here: the tests install them on first use, pinned with their
//! lockfiles, into a cache outside the clone (`shepherd-test-tools`).

use std::process::{Command, ExitCode};
use std::time::Instant;

use shepherd_test_tools::system::{self, Prerequisite};
use shepherd_test_tools::ToolError;

const USAGE: &str = "usage: cargo xtask test [CARGO TEST ARGS...]
       cargo xtask preflight [--no-install]

test       check and install what the tests need, then run
           `cargo test --workspace --locked --no-fail-fast` with ARGS
preflight  only check (and, unless --no-install, install) the prerequisites";

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let task = args.next();
    let rest: Vec<String> = args.collect();
    match task.as_deref() {
        Some("test") => {
            if !preflight(true) {
                return ExitCode::FAILURE;
            }
            test(&rest)
        }
        Some("preflight") => {
            let install = !rest.iter().any(|a| a == "--no-install");
            if preflight(install) {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}

/// Checks every prerequisite (installing the missing Debian packages when
/// `install` and root), prints what was found; true when all are there.
fn preflight(install: bool) -> bool {
    let started = Instant::now();
    println!("== prerequisites of the tests");
    let mut results = check_all();
    let packages: Vec<&str> = results
        .iter()
        .filter(|(_, r)| r.is_err())
        .flat_map(|(p, _)| p.debian.unwrap_or_default().iter().copied())
        .collect();
    let mut hint = None;
    if install && !packages.is_empty() {
        match apt_install(&packages) {
            Ok(()) => results = check_all(),
            Err(why) => hint = Some(why),
        }
    }
    let mut ok = true;
    for (p, result) in &results {
        match result {
            Ok(found) => {
                let debian: Vec<String> = p
                    .debian
                    .unwrap_or_default()
                    .iter()
                    .filter_map(|pkg| system::debian_version(pkg).map(|v| format!("{pkg} {v}")))
                    .collect();
                let debian = if debian.is_empty() {
                    String::new()
                } else {
                    format!(" (Debian: {})", debian.join(", "))
                };
                println!("ok      {}: {}{debian}", p.name, found.version);
            }
            Err(ToolError::Missing { found, install, .. }) => {
                ok = false;
                println!("MISSING {}: {found}", p.name);
                println!("        needed by {}; to install: {install}", p.used_by);
            }
            Err(e) => {
                ok = false;
                println!("MISSING {}: {e}", p.name);
                println!("        needed by {}", p.used_by);
            }
        }
    }
    if let Some(hint) = hint {
        println!("{hint}");
    }
    println!(
        "== prerequisites {} in {:.1}s",
        if ok {
            "ready"
        } else {
            "MISSING (all listed above)"
        },
        started.elapsed().as_secs_f64()
    );
    ok
}

fn check_all() -> Vec<(Prerequisite, Result<system::Found, ToolError>)> {
    system::PREREQUISITES
        .iter()
        .map(|p| (*p, (p.check)()))
        .collect()
}

/// `apt-get install` of `packages` by name (never `name=version`: Debian
/// drops a version at its next security update), refreshing the index
/// once when the first try fails.
fn apt_install(packages: &[&str]) -> Result<(), String> {
    let command = format!(
        "apt-get install -y --no-install-recommends {}",
        packages.join(" ")
    );
    if system::which("apt-get").is_none() {
        return Err(format!(
            "no apt-get here: install by hand what is missing ({})",
            packages.join(", ")
        ));
    }
    if !is_root() {
        return Err(format!(
            "not root, so nothing was installed: run `sudo {command}`"
        ));
    }
    println!("== installing Debian's {} ({command})", packages.join(", "));
    let install = || {
        Command::new("apt-get")
            .args(["install", "-y", "--no-install-recommends"])
            .args(packages)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .is_ok_and(|s| s.success())
    };
    if install() {
        return Ok(());
    }
    println!("== apt-get update, then again");
    let updated = Command::new("apt-get")
        .arg("update")
        .status()
        .is_ok_and(|s| s.success());
    if updated && install() {
        Ok(())
    } else {
        Err(format!("`{command}` failed (its output is above)"))
    }
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// `cargo test --workspace --locked --no-fail-fast ARGS…` (no `--workspace`
/// when ARGS name packages).
fn test(args: &[String]) -> ExitCode {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command.args(["test", "--locked", "--no-fail-fast"]);
    let names_packages = args
        .iter()
        .take_while(|a| *a != "--")
        .any(|a| a == "-p" || a.starts_with("--package") || a == "--workspace");
    if !names_packages {
        command.arg("--workspace");
    }
    command.args(args);
    println!("== {}", shown(&command));
    let started = Instant::now();
    let status = command.status();
    println!("== tests ended in {:.0}s", started.elapsed().as_secs_f64());
    match status {
        Ok(s) if s.success() => ExitCode::SUCCESS,
        Ok(s) => ExitCode::from(u8::try_from(s.code().unwrap_or(1)).unwrap_or(1)),
        Err(e) => {
            eprintln!("cannot run cargo: {e}");
            ExitCode::FAILURE
        }
    }
}

fn shown(command: &Command) -> String {
    std::iter::once(command.get_program())
        .chain(command.get_args())
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}
