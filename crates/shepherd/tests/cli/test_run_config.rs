//! Which repository config file `shepherd run` trusts: the user's own
//! checkout of the repository (its working file, committed or not), except
//! in CI (`CI` set), where the checkout is the PR's code and the base
//! branch's file is read instead. The PR head's file may only tighten.

use std::path::Path;
use std::process::Command;

use crate::common::{Demo, Shepherd};

/// A checkout of the emulator's repository (no clone needed: a repository
/// whose `origin` is the emulator) with `config` as its `shepherd.toml`.
fn checkout(dir: &Path, git_url: &str, config: &str) {
    std::fs::create_dir_all(dir).unwrap();
    for args in [
        vec!["init", "--quiet"],
        vec!["remote", "add", "origin", git_url],
    ] {
        let ok = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(&args)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    }
    std::fs::write(dir.join("shepherd.toml"), config).unwrap();
}

/// Run PR 42 from `dir`; the run's `config.toml` and `config.json`.
fn run_in(sh: &Shepherd, api_url: &str, dir: &Path, env: &[(&str, &str)]) -> (String, String) {
    let mut cmd = sh.run_cmd(api_url, &["run", "42", "--approve", "auto"]);
    cmd.current_dir(dir);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    crate::common::exited(&out, crate::common::HANDED_OFF);
    let run = sh.latest_run(api_url);
    let dir = sh.state_dir().join("runs").join(run);
    (
        std::fs::read_to_string(dir.join("config.toml")).unwrap(),
        std::fs::read_to_string(dir.join("rounds/1/config.json")).unwrap(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_trusts_the_users_checkout_but_not_in_ci() {
    let Demo { emu, api, sh } = Demo::start().await;
    let dir = sh.home.path().join("authkit");
    // Uncommitted, as a user's local edit would be: the run still sees it.
    checkout(
        &dir,
        &emu.git_url("demo", "authkit"),
        "[cluster]\nmin_volume = 7\n",
    );
    let (config, sources) = tokio::task::spawn_blocking(move || run_in(&sh, &api, &dir, &[]))
        .await
        .unwrap();
    assert!(config.contains("min_volume = 7"), "{config}");
    assert!(sources.contains("authkit/shepherd.toml"), "{sources}");

    // In CI the checkout is the PR's code: its file is not trusted, the
    // base branch's is (the demo's base has none).
    let Demo {
        emu: emu2,
        api: api2,
        sh: sh2,
    } = Demo::start().await;
    let dir2 = sh2.home.path().join("authkit");
    checkout(
        &dir2,
        &emu2.git_url("demo", "authkit"),
        "[cluster]\nmin_volume = 7\n",
    );
    let (config, sources) =
        tokio::task::spawn_blocking(move || run_in(&sh2, &api2, &dir2, &[("CI", "true")]))
            .await
            .unwrap();
    assert!(!config.contains("min_volume = 7"), "{config}");
    assert!(!sources.contains("authkit/shepherd.toml"), "{sources}");
}
