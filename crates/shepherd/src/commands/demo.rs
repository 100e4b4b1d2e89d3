//! `shepherd demo`: the whole loop, offline, on the built-in emulator.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use anyhow::anyhow;
use clap::Args;
use shepherd_core::config::{ApproveMode, ConfigLayer, Overrides};
use shepherd_core::target::{ForgeSource, Mode, RepoSource, Target};
use shepherd_core::{ForgeKind, RepoRef};
use shepherd_emulator::{EmulatedForge, Emulator, RunningEmulator, Scenario, UserKind};
use shepherd_engine::{Engine, Git, HttpCredentials, RepoConfigSource, RunSpec, StateDir};
use shepherd_forge::{ClientConfig, Forge, Token};

use crate::error::{CliError, CliResult};
use crate::setup::{config_layers, runtime, ForgeFlag};
use crate::ui::shell_word;

use crate::runs::{engine_error, engine_options, print_outcome, CommonRunArgs};
use crate::setup::state_dir;

/// Run the whole loop offline on the built-in emulator's demo pull request
///
/// Starts the local forge emulator (GitHub, or GitLab with `--forge gitlab`)
/// with the embedded demo scenario (a small shell project whose pull request
/// or merge request drew review threads, a bot and a required check), and
/// shepherds it as its author with the configured agent (default: builtin)
/// and `--approve auto` unless told otherwise. Nothing leaves this machine;
/// nothing of yours is cloned.
#[derive(Debug, Args)]
pub(crate) struct DemoArgs {
    #[command(flatten)]
    common: CommonRunArgs,

    /// The forge the emulator plays
    #[arg(long, value_enum, default_value = "github")]
    forge: ForgeFlag,

    /// Keep the emulator serving after the run, until Ctrl-C, to look at it
    #[arg(long)]
    serve: bool,
}

/// What the demo says and builds for one forge.
struct DemoForge {
    kind: ForgeKind,
}

impl DemoForge {
    fn display_name(&self) -> &'static str {
        self.kind.spec().display_name
    }

    fn emulated(&self) -> EmulatedForge {
        match self.kind {
            ForgeKind::GitHub => EmulatedForge::GitHub,
            ForgeKind::GitLab => EmulatedForge::GitLab,
        }
    }

    fn api_url(&self, emu: &RunningEmulator) -> String {
        match self.kind {
            ForgeKind::GitHub => emu.api_url(),
            ForgeKind::GitLab => emu.gitlab_api_url(),
        }
    }

    /// The client of the demo's PR (MR) `number` for `token`.
    fn client(
        &self,
        emu: &RunningEmulator,
        repo: RepoRef,
        number: u64,
        token: &str,
    ) -> CliResult<Arc<dyn Forge>> {
        let api = self.api_url(emu);
        let token = Token::new(token);
        shepherd_forge::client_for(
            self.kind,
            repo,
            number,
            Some(&api),
            ClientConfig::default(),
            || Ok(token),
        )
        .map_err(CliError::failure)
    }

    fn credentials(&self, token: String) -> HttpCredentials {
        HttpCredentials::for_forge(self.kind, token)
    }

    /// How the forge writes the demo's PR: `#42`, `!42`.
    fn reference(&self, owner: &str, name: &str, number: u64) -> String {
        let spec = self.kind.spec();
        format!(
            "{} {owner}/{name}{}{number}",
            spec.request_noun, spec.number_sigil
        )
    }

    /// The variable the forge's token is read from first.
    fn token_var(&self) -> &'static str {
        self.kind
            .spec()
            .token_vars
            .first()
            .copied()
            .unwrap_or("GITHUB_TOKEN")
    }

    /// The command that serves the same demo to explore by hand: the
    /// embedded scenario, so it works outside a source checkout.
    fn explore_hint(&self) -> &'static str {
        match self.kind {
            ForgeKind::GitHub => "shepherd emulator",
            ForgeKind::GitLab => "shepherd emulator --forge gitlab",
        }
    }
}

pub(crate) fn cmd_demo(args: DemoArgs) -> CliResult<u8> {
    let forge = DemoForge {
        kind: args.forge.into(),
    };
    let scenario =
        Scenario::demo_for(forge.emulated()).map_err(|e| CliError::failure(anyhow!(e)))?;
    // Demo runs keep to their own state directory (`demo/` in the state
    // directory), out of the real runs' `shepherd status` list.
    let state = StateDir::at(
        state_dir(args.common.state_dir.clone())?
            .root()
            .join("demo"),
    );
    let mut layers = config_layers(Overrides {
        approve: Some(args.common.approve.unwrap_or(ApproveMode::Auto)),
        reply_needs_human: args.common.reply_needs_human.then_some(true),
        ..Overrides::default()
    })?;
    // The demo's bots are trusted, and its CI is polled every second: put
    // before the flags, after the user's file and environment.
    let bots: Vec<String> = scenario
        .users
        .iter()
        .filter(|u| u.kind == UserKind::Bot)
        .map(|u| format!("{:?}", u.login))
        .collect();
    let demo_layer = ConfigLayer::user(
        "the demo's settings",
        format!(
            "[trust]\nusers = [{}]\n[ci]\npoll_interval_secs = 1\ntimeout_secs = 300\nappear_timeout_secs = 60\n",
            bots.join(", ")
        ),
    );
    let flags = layers.pop();
    layers.push(demo_layer);
    layers.extend(flags);

    let author = scenario.pull_request.author.clone();
    let token = scenario
        .user(&author)
        .map(|u| u.token.clone())
        .ok_or_else(|| CliError::failure(anyhow!("the demo's PR author has no account")))?;
    let (owner, name, number) = (
        scenario.repository.owner.clone(),
        scenario.repository.name.clone(),
        scenario.pull_request.number,
    );
    let json = args.common.json;
    let serve = args.serve;
    runtime()?.block_on(async move {
        let bind = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
        let emu = Emulator::start(scenario, bind)
            .await
            .map_err(CliError::failure)?;
        eprintln!(
            "Started the {} emulator at {} with the demo's {}.",
            forge.display_name(),
            forge.api_url(&emu),
            forge.reference(&owner, &name, number)
        );
        // The scenario's own CI runs at start; let it finish.
        emu.wait_idle(Duration::from_secs(60)).await;
        let repo = RepoRef {
            host: format!("127.0.0.1:{}", emu.addr().port()),
            owner: owner.clone(),
            name: name.clone(),
        };
        let client = forge.client(&emu, repo.clone(), number, &token)?;
        let target = Target {
            forge: forge.kind,
            forge_source: ForgeSource::Flag,
            repo,
            repo_source: RepoSource::Flag,
            number,
            mode: Mode::Full,
            anchor: None,
        };
        let spec = RunSpec {
            target,
            git_url: emu.git_url(&owner, &name),
            api_url: Some(forge.api_url(&emu)),
            layers,
            repo_config: RepoConfigSource::BaseBranch,
        };
        let git = Git::new().with_credentials(forge.credentials(token.clone()));
        let demo_token = token;
        let engine = Engine::new(client, state.clone(), git, engine_options());
        let outcome = engine.start(spec).await.map_err(engine_error)?;

        let state_file = outcome.run_dir.join("emulator-state.json");
        let dump = serde_json::to_string_pretty(&emu.state_json()).unwrap_or_default();
        if let Err(err) = std::fs::write(&state_file, dump) {
            eprintln!("note: cannot save the emulator's state: {err}");
        }
        // Each demo's emulator listens on a new port, so its clone cache
        // (keyed by host and port) is never used again: remove it.
        remove_cache_clone(&outcome.run_dir);
        let code = print_outcome(&outcome, json)?;
        // The demo is a showing, not a CI gate: a loop that is done with
        // items left for a person (the builtin agent judges only suggestion
        // blocks) is the demo working; the final line and the report say
        // `handed-off` and what waits.
        let code = if outcome.status == shepherd_engine::RunStatus::HandedOff {
            crate::exit_codes::SUCCESS
        } else {
            code
        };
        let dir = state.root().display();
        eprintln!();
        eprintln!(
            "The emulator's final state (threads, replies, commits, CI): {}",
            state_file.display()
        );
        eprintln!(
            "The run's artifacts, stage by stage: {}",
            outcome.run_dir.display()
        );
        eprintln!(
            "Report again: shepherd report {} --state-dir {dir}",
            outcome.run_id
        );
        eprintln!("Explore the demo yourself: {}", forge.explore_hint());
        if outcome.status == shepherd_engine::RunStatus::Paused {
            // A paused demo can be resumed only while its emulator serves
            // (the run's API is on its port): keep serving, and say the
            // commands that continue it from another terminal.
            eprintln!(
                "\nThe run is paused for your approval. This demo's emulator keeps serving \
                 until Ctrl-C,\nso it can be approved and resumed from another terminal:\n\
                 \n  export {}={} SHEPHERD_STATE_DIR={}\n\
                 \x20 shepherd status {run}\n\
                 \x20 shepherd approve {run}\n\
                 \x20 shepherd resume {run}\n",
                forge.token_var(),
                shell_word(&demo_token),
                shell_word(&state.root().display().to_string()),
                run = outcome.run_id,
            );
        }
        if serve || outcome.status == shepherd_engine::RunStatus::Paused {
            eprintln!("\n{}", emu.banner());
            eprintln!(
                "Serving until Ctrl-C (state: {}/_emulator/state).",
                emu.api_url()
            );
            let _ = tokio::signal::ctrl_c().await;
        }
        emu.shutdown().await.map_err(CliError::failure)?;
        Ok(code)
    })
}

/// Remove the clone cache of the run in `run_dir` (`cache_dir` in its
/// `run.json`), and its host's directory: a demo's host is
/// `127.0.0.1:PORT`, a port no later demo uses.
fn remove_cache_clone(run_dir: &std::path::Path) {
    let cache = std::fs::read_to_string(run_dir.join("run.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .and_then(|run| run["cache_dir"].as_str().map(std::path::PathBuf::from));
    let Some(cache) = cache else { return };
    // `cache/<host>/<owner>/<name>.git`: the host's directory goes.
    let host_dir = cache.parent().and_then(std::path::Path::parent);
    for dir in [Some(cache.as_path()), host_dir].into_iter().flatten() {
        if dir.exists() {
            if let Err(err) = std::fs::remove_dir_all(dir) {
                tracing::debug!(%err, dir = %dir.display(), "cannot remove the demo's clone cache");
            }
        }
    }
}
