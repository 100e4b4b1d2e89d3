//! The scenario the conformance tests run against: one PR with five
//! two-comment threads, three conversation comments, a label and a
//! required check.

use serde_json::Value;
use shepherd_emulator::{
    CheckSpec, EmulatedForge, Emulator, IssueCommentSpec, RunningEmulator, Scenario,
    ThreadCommentSpec, ThreadSpec,
};

pub use crate::widgets::{ALICE, READER};

/// The scenario, for GitHub (`owner` `acme`) or GitLab (`acme/tools`): the
/// widgets repository (`tests/support/widgets.rs`), its README changed too.
pub fn scenario(forge: EmulatedForge) -> Scenario {
    let owner = match forge {
        EmulatedForge::GitHub => "acme",
        EmulatedForge::GitLab => "acme/tools",
    };
    let mut s = crate::widgets::widgets(owner, "# widgets, more\n");
    s.pull_request.labels = vec!["enhancement".into()];
    s.forge = forge;
    for t in 0..5u32 {
        s.threads.push(ThreadSpec::new(
            "src/lib.rs",
            t + 3,
            vec![
                ThreadCommentSpec::new("bob", format!("thread {t} comment 0")),
                ThreadCommentSpec::new("review-bot", format!("thread {t} comment 1")),
            ],
        ));
    }
    for c in 0..3 {
        s.comments
            .push(IssueCommentSpec::new("bob", format!("top-level {c}")));
    }
    let mut tests = CheckSpec::new("tests", "true");
    tests.required = true;
    // On GitLab, a commit status too (the commit statuses API has one).
    tests.status_context = forge == EmulatedForge::GitLab;
    // A failing check gives `rerun-failed-jobs` something to re-run.
    s.checks = vec![tests, CheckSpec::new("lint", "exit 1")];
    s
}

pub async fn start(forge: EmulatedForge) -> RunningEmulator {
    let emu = Emulator::start(scenario(forge), "127.0.0.1:0".parse().unwrap())
        .await
        .expect("emulator starts");
    settle(emu).await
}

/// The GitHub scenario, reached through a front at `public_url`.
pub async fn start_behind(public_url: &str) -> RunningEmulator {
    let emu = Emulator::start_behind(
        scenario(EmulatedForge::GitHub),
        "127.0.0.1:0".parse().unwrap(),
        public_url,
    )
    .await
    .expect("emulator starts");
    settle(emu).await
}

async fn settle(emu: RunningEmulator) -> RunningEmulator {
    assert!(
        emu.wait_idle(std::time::Duration::from_secs(60)).await,
        "CI settles"
    );
    emu
}

/// The text at `key` (a JSON pointer) of each item of `list`.
pub fn names(list: &Value, key: &str) -> Vec<String> {
    list.as_array()
        .unwrap_or_else(|| panic!("not a list: {list}"))
        .iter()
        .map(|item| {
            item.pointer(key)
                .and_then(Value::as_str)
                .unwrap_or_else(|| panic!("no {key} in {item}"))
                .to_owned()
        })
        .collect()
}
