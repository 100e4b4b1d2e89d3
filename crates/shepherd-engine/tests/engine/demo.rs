//! The demo pull request (`demo/authkit`, PR or MR 42) as the engine's and
//! the dashboard's tests name it and read it back: shared by these tests
//! and, through `#[path]`, by `shepherd-serve`'s.

use serde_json::Value;
use shepherd_core::target::{ForgeSource, Mode, RepoSource, Target};
use shepherd_core::{ForgeKind, RepoRef};
use shepherd_emulator::RunningEmulator;

/// The demo's pull request (merge request) number.
pub const PR: u64 = 42;

/// The demo's repository on `forge`.
pub fn repo_on(forge: ForgeKind) -> RepoRef {
    RepoRef {
        host: forge.spec().default_host.into(),
        owner: "demo".into(),
        name: "authkit".into(),
    }
}

/// The demo's PR (MR) on `forge`, in full mode, named by flags.
pub fn target_on(forge: ForgeKind) -> Target {
    Target {
        forge,
        forge_source: ForgeSource::Flag,
        repo: repo_on(forge),
        repo_source: RepoSource::Flag,
        number: PR,
        mode: Mode::Full,
        anchor: None,
    }
}

/// The demo PR in `emu`'s state.
pub fn pr_state(emu: &RunningEmulator) -> Value {
    let state = emu.state_json();
    state["pull_requests"]
        .as_array()
        .and_then(|prs| prs.iter().find(|p| p["number"] == PR))
        .cloned()
        .expect("the PR is in the state")
}

/// The demo PR's threads in `emu`'s state.
pub fn threads_state(emu: &RunningEmulator) -> Vec<Value> {
    pr_state(emu)["threads"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}
