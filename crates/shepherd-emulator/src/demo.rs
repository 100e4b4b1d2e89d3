//! The demo scenario, embedded: `examples/scenarios/demo` compiled into
//! the library so `shepherd demo` needs no files. A test checks that the
//! embedded copy and the directory are identical.

use crate::scenario::{EmulatedForge, FileSpec, Scenario, ScenarioError};

/// Which tree a file belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tree {
    Base,
    Head,
}

struct DemoFile {
    tree: Tree,
    path: &'static str,
    contents: &'static str,
    executable: bool,
}

const SCENARIO_TOML: &str = include_str!("../../../examples/scenarios/demo/scenario.toml");

/// Every file of `base/` and `head/`; keep in step with the directory (the
/// test `embedded_demo_matches_the_directory` fails otherwise).
const FILES: &[DemoFile] = &[
    DemoFile {
        tree: Tree::Base,
        path: "CHANGELOG.md",
        contents: include_str!("../../../examples/scenarios/demo/base/CHANGELOG.md"),
        executable: false,
    },
    DemoFile {
        tree: Tree::Base,
        path: "README.md",
        contents: include_str!("../../../examples/scenarios/demo/base/README.md"),
        executable: false,
    },
    DemoFile {
        tree: Tree::Base,
        path: "src/util/strings.sh",
        contents: include_str!("../../../examples/scenarios/demo/base/src/util/strings.sh"),
        executable: false,
    },
    DemoFile {
        tree: Tree::Base,
        path: "tests/run.sh",
        contents: include_str!("../../../examples/scenarios/demo/base/tests/run.sh"),
        executable: false,
    },
    DemoFile {
        tree: Tree::Base,
        path: "verify.sh",
        contents: include_str!("../../../examples/scenarios/demo/base/verify.sh"),
        executable: true,
    },
    DemoFile {
        tree: Tree::Head,
        path: "CHANGELOG.md",
        contents: include_str!("../../../examples/scenarios/demo/head/CHANGELOG.md"),
        executable: false,
    },
    DemoFile {
        tree: Tree::Head,
        path: "README.md",
        contents: include_str!("../../../examples/scenarios/demo/head/README.md"),
        executable: false,
    },
    DemoFile {
        tree: Tree::Head,
        path: "src/auth/login.sh",
        contents: include_str!("../../../examples/scenarios/demo/head/src/auth/login.sh"),
        executable: false,
    },
    DemoFile {
        tree: Tree::Head,
        path: "src/auth/password.sh",
        contents: include_str!("../../../examples/scenarios/demo/head/src/auth/password.sh"),
        executable: false,
    },
    DemoFile {
        tree: Tree::Head,
        path: "src/auth/session.sh",
        contents: include_str!("../../../examples/scenarios/demo/head/src/auth/session.sh"),
        executable: false,
    },
    DemoFile {
        tree: Tree::Head,
        path: "src/auth/token.sh",
        contents: include_str!("../../../examples/scenarios/demo/head/src/auth/token.sh"),
        executable: false,
    },
    DemoFile {
        tree: Tree::Head,
        path: "src/util/strings.sh",
        contents: include_str!("../../../examples/scenarios/demo/head/src/util/strings.sh"),
        executable: false,
    },
    DemoFile {
        tree: Tree::Head,
        path: "tests/run.sh",
        contents: include_str!("../../../examples/scenarios/demo/head/tests/run.sh"),
        executable: false,
    },
    DemoFile {
        tree: Tree::Head,
        path: "verify.sh",
        contents: include_str!("../../../examples/scenarios/demo/head/verify.sh"),
        executable: true,
    },
];

impl Scenario {
    /// The demo scenario (`examples/scenarios/demo`), embedded in the binary:
    /// PR #42 of `demo/authkit`, a small shell project whose tests CI runs,
    /// with a cluster of error-handling threads in `src/auth/`, a naming
    /// thread, a question, an invalid comment, a top-level request, one
    /// required check and a bot that flags added `TODO` lines.
    pub fn demo() -> Result<Scenario, ScenarioError> {
        let mut scenario = Scenario::from_toml(SCENARIO_TOML)?;
        for file in FILES {
            let tree = match file.tree {
                Tree::Base => &mut scenario.base,
                Tree::Head => &mut scenario.head,
            };
            tree.insert(
                file.path.to_owned(),
                FileSpec {
                    contents: file.contents.as_bytes().to_vec(),
                    executable: file.executable,
                },
            );
        }
        scenario.validate()?;
        Ok(scenario)
    }

    /// The demo scenario served as `forge`: [`Scenario::demo`] for GitHub,
    /// [`Scenario::demo_gitlab`] for GitLab.
    pub fn demo_for(forge: EmulatedForge) -> Result<Scenario, ScenarioError> {
        match forge {
            EmulatedForge::GitHub => Scenario::demo(),
            EmulatedForge::GitLab => Scenario::demo_gitlab(),
        }
    }

    /// The demo as a GitLab merge request (`demo/authkit!42`): the same
    /// files, threads, comments, CI and bot, with GitLab's suggestion
    /// syntax ([`Scenario::into_gitlab`]).
    pub fn demo_gitlab() -> Result<Scenario, ScenarioError> {
        Scenario::demo()?.into_gitlab()
    }

    /// The same scenario with every bot answering `delay` after a push
    /// (`[[bots]] delay_ms`). `Scenario::demo()?.with_bot_delay(8 s)` is
    /// the demo whose review bot comments 8 s after a push while CI takes
    /// 0.5 s: a bot slower than CI (issue 27).
    pub fn with_bot_delay(mut self, delay: std::time::Duration) -> Scenario {
        let millis = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
        for bot in &mut self.bots {
            bot.delay_ms = millis;
        }
        self
    }
}
