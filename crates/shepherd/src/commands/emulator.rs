//! `shepherd emulator`: the local forge emulator as a server.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;

use anyhow::anyhow;
use clap::Args;
use shepherd_core::ForgeKind;
use shepherd_emulator::{EmulatedForge, Emulator, Scenario, UserKind};

use crate::error::{CliError, CliResult};
use crate::exit_codes;
use crate::setup::{runtime, ForgeFlag};
use crate::ui::outln;

/// Serve the local forge emulator (GitHub or GitLab), with the demo or a scenario directory
///
/// The emulator listens on loopback only. Without `--scenario` it serves
/// the embedded demo (the one `shepherd demo` runs). It prints its API and
/// git URLs, the (fake) tokens of the scenario's users and the commands that
/// point Shepherd and git at it, then serves until Ctrl-C. The scenario's
/// `forge` says which API is served; `--forge gitlab` serves a GitHub
/// scenario as GitLab (its suggestion blocks in GitLab's syntax).
#[derive(Debug, Args)]
pub(crate) struct EmulatorArgs {
    /// The scenario directory (`scenario.toml`, `base/`, `head/`); default: the embedded demo
    #[arg(long, value_name = "DIR")]
    scenario: Option<PathBuf>,

    /// The forge to play, instead of the scenario's `forge`
    #[arg(long, value_enum)]
    forge: Option<ForgeFlag>,

    /// The loopback port to listen on (0: any free port)
    #[arg(long, default_value_t = 0)]
    port: u16,
}

/// `scenario` served as `forge`: a GitHub scenario becomes GitLab's; a
/// GitLab scenario cannot become GitHub's (its suggestions are written in
/// GitLab's syntax).
fn as_forge(scenario: Scenario, forge: Option<ForgeFlag>) -> CliResult<Scenario> {
    match (forge.map(ForgeKind::from), scenario.forge) {
        (None, _)
        | (Some(ForgeKind::GitHub), EmulatedForge::GitHub)
        | (Some(ForgeKind::GitLab), EmulatedForge::GitLab) => Ok(scenario),
        (Some(ForgeKind::GitLab), EmulatedForge::GitHub) => {
            scenario.into_gitlab().map_err(CliError::usage)
        }
        (Some(ForgeKind::GitHub), EmulatedForge::GitLab) => Err(CliError::usage(anyhow!(
            "the scenario is a GitLab scenario (`forge = \"gitlab\"`); it cannot be served as GitHub"
        ))),
    }
}

/// The lines that tell how to point Shepherd and git at the emulator
/// serving `scenario` at `base` (its root URL): a clone command that works
/// as printed (the author's fake token in the URL, git's form for the
/// forge), the variables that make `doctor`, `threads` and `run` work in
/// that clone (the token, the API URL, which also tells the forge of a
/// loopback host, and a state directory of its own), and the same commands
/// without a clone.
fn next_steps(scenario: &Scenario, base: &str) -> String {
    let repo = &scenario.repository;
    let pr = &scenario.pull_request;
    let (kind, api) = match scenario.forge {
        EmulatedForge::GitHub => (ForgeKind::GitHub, base.to_owned()),
        EmulatedForge::GitLab => (ForgeKind::GitLab, format!("{base}/api/v4")),
    };
    let spec = kind.spec();
    let token_var = spec.token_vars.first().copied().unwrap_or("GITHUB_TOKEN");
    let token = scenario
        .user(&pr.author)
        .map_or("TOKEN", |u| u.token.as_str());
    let forge_flag = match kind {
        ForgeKind::GitHub => "",
        ForgeKind::GitLab => " --forge gitlab",
    };
    let (owner, name, number) = (&repo.owner, &repo.name, pr.number);
    let clone_url = match base.split_once("://") {
        Some((scheme, rest)) => format!(
            "{scheme}://{}:{token}@{rest}/{owner}/{name}.git",
            spec.git_username
        ),
        None => format!("{base}/{owner}/{name}.git"),
    };
    let mut out = format!(
        "To shepherd {owner}/{name}{sigil}{number} as its author {author}, from another \
         terminal: clone it and\n\
         point Shepherd at the emulator (a state directory of its own keeps these runs apart):\n\
         \n  git clone {clone_url} && cd {name}\n\
         \x20 export {token_var}={token} SHEPHERD_API_URL={api} SHEPHERD_STATE_DIR=\"$(mktemp -d)\"\n\
         \x20 shepherd doctor\n\
         \x20 shepherd threads {number}\n\
         \x20 shepherd run {number}\n\
         \nWithout a clone (after the export): \
         shepherd threads {number} --repo {owner}/{name}{forge_flag} --api-url {api}\n",
        sigil = spec.number_sigil,
        author = pr.author,
    );
    let bots: Vec<&str> = scenario
        .users
        .iter()
        .filter(|u| u.kind == UserKind::Bot)
        .map(|u| u.login.as_str())
        .collect();
    if !bots.is_empty() {
        out.push_str(&format!(
            "Its bots are not trusted unless your config says so \
             (`shepherd demo` trusts them): [trust] users = [{}]\n",
            bots.iter()
                .map(|b| format!("{b:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    out
}

pub(crate) fn cmd_emulator(args: EmulatorArgs) -> CliResult<u8> {
    let scenario = match &args.scenario {
        Some(dir) => Scenario::load(dir).map_err(CliError::usage)?,
        None => Scenario::demo().map_err(|e| CliError::failure(anyhow!(e)))?,
    };
    let scenario = as_forge(scenario, args.forge)?;
    let steps = scenario.clone();
    let bind = SocketAddr::from((Ipv4Addr::LOCALHOST, args.port));
    runtime()?.block_on(async move {
        let emulator = Emulator::start(scenario, bind)
            .await
            .map_err(CliError::failure)?;
        outln!("{}", emulator.banner());
        outln!("{}", next_steps(&steps, &emulator.api_url()));
        outln!("Press Ctrl-C to stop.");
        tokio::signal::ctrl_c()
            .await
            .map_err(|e| CliError::failure(anyhow!("cannot wait for Ctrl-C: {e}")))?;
        emulator.shutdown().await.map_err(CliError::failure)?;
        Ok(exit_codes::SUCCESS)
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;

    #[test]
    fn the_flag_or_the_scenario_picks_the_forge() {
        let github = Scenario::demo().unwrap();
        let gitlab = Scenario::demo_gitlab().unwrap();
        assert_eq!(as_forge(github.clone(), None).unwrap(), github);
        assert_eq!(
            as_forge(github.clone(), Some(ForgeFlag(ForgeKind::GitHub))).unwrap(),
            github
        );
        assert_eq!(
            as_forge(github.clone(), Some(ForgeFlag(ForgeKind::GitLab))).unwrap(),
            gitlab
        );
        // A GitLab scenario needs no flag, and is not turned twice.
        assert_eq!(as_forge(gitlab.clone(), None).unwrap(), gitlab);
        assert_eq!(
            as_forge(gitlab.clone(), Some(ForgeFlag(ForgeKind::GitLab))).unwrap(),
            gitlab
        );
        let err = as_forge(gitlab, Some(ForgeFlag(ForgeKind::GitHub))).unwrap_err();
        assert!(err.to_string().contains("GitLab scenario"), "{err}");
    }

    #[test]
    fn the_next_steps_name_the_clone_the_exports_and_the_commands() {
        let base = "http://127.0.0.1:4000";
        let github = next_steps(&Scenario::demo().unwrap(), base);
        assert!(
            github.contains(
                "git clone http://x-access-token:emu_dev_token@127.0.0.1:4000/demo/authkit.git \
                 && cd authkit"
            ),
            "{github}"
        );
        assert!(
            github.contains(
                "export GITHUB_TOKEN=emu_dev_token SHEPHERD_API_URL=http://127.0.0.1:4000 \
                 SHEPHERD_STATE_DIR="
            ),
            "{github}"
        );
        assert!(github.contains("\n  shepherd run 42\n"), "{github}");
        assert!(
            github.contains(
                "shepherd threads 42 --repo demo/authkit --api-url http://127.0.0.1:4000\n"
            ),
            "{github}"
        );
        assert!(
            github.contains("[trust] users = [\"review-bot\"]"),
            "{github}"
        );
        let gitlab = next_steps(&Scenario::demo_gitlab().unwrap(), base);
        assert!(
            gitlab.contains("git clone http://oauth2:emu_dev_token@127.0.0.1:4000/"),
            "{gitlab}"
        );
        assert!(
            gitlab.contains(
                "export GITLAB_TOKEN=emu_dev_token SHEPHERD_API_URL=http://127.0.0.1:4000/api/v4 "
            ),
            "{gitlab}"
        );
        assert!(
            gitlab.contains("--forge gitlab --api-url http://127.0.0.1:4000/api/v4"),
            "{gitlab}"
        );
    }
}
