//! `shepherd doctor`: is this machine ready to run Shepherd here?

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use clap::Args;
use serde::Serialize;
use shepherd_agent::{parse_version, CliProvider, Fit};
use shepherd_core::config::{AgentRole, Config, Overrides, Provider};
use shepherd_core::ForgeKind;
use shepherd_forge::{Token, TokenSource};

use crate::commands::doctor_probe::{print_probes, probe_roles, RoleProbe};
use crate::error::{CliError, CliResult};
use crate::exit_codes;
use crate::forge_setup::{checkout_config, config_layers, origin_remote};
use crate::ui::outln;

/// Check git, the forge token, the agent CLIs and the configuration
///
/// Lists which agent CLIs are installed and which the configuration uses for
/// each role. Prints no secret: a token is shown by where it came from.
/// Exits 1 when something a run needs is missing, or a probe fails.
#[derive(Debug, Args)]
pub(crate) struct DoctorArgs {
    /// Print JSON instead of text
    #[arg(long)]
    json: bool,
    /// Also make one real triage call to each provider the configuration
    /// uses (this costs one model call each), and say whether it answered
    /// and how long it took
    #[arg(long)]
    probe: bool,
    /// How long each probe may take, in seconds
    #[arg(long, value_name = "SECS", default_value_t = 120, requires = "probe")]
    probe_timeout: u64,
}

/// The oldest git Shepherd works with (`fetch --no-write-fetch-head`).
const MIN_GIT: (u32, u32) = (2, 29);

#[derive(Debug, Serialize)]
struct Report {
    ok: bool,
    git: Check,
    repository: Check,
    token: Check,
    config: Check,
    agents: Vec<AgentCli>,
    roles: Vec<RoleUse>,
    /// `--probe`'s calls; absent without `--probe`.
    #[serde(skip_serializing_if = "Option::is_none")]
    probes: Option<Vec<RoleProbe>>,
}

#[derive(Debug, Serialize)]
struct Check {
    ok: bool,
    detail: String,
}

#[derive(Debug, Serialize)]
struct AgentCli {
    provider: &'static str,
    /// The npm package it is installed from.
    package: &'static str,
    installed: Option<PathBuf>,
    /// What `CLI --version` printed, as `major.minor.patch`; `None` when it
    /// is not installed or printed no version.
    version: Option<String>,
    /// The release the end-to-end tests prove, and the range supported.
    tested: String,
    supported: String,
    /// `supported`, `untested`, or `unknown` (no version read).
    fit: &'static str,
}

/// How long `CLI --version` may take.
const VERSION_TIMEOUT: Duration = Duration::from_secs(10);

/// The installed CLI's version, against the range Shepherd supports.
fn agent_cli(cli: CliProvider) -> AgentCli {
    let installed = on_path(cli.program());
    let support = cli.support();
    let version = installed
        .as_deref()
        .and_then(version_of)
        .and_then(|text| parse_version(&text));
    let (a, b, c) = support.tested;
    AgentCli {
        provider: cli.name(),
        package: support.package,
        version: version.map(|(a, b, c)| format!("{a}.{b}.{c}")),
        tested: format!("{a}.{b}.{c}"),
        supported: support.range(),
        fit: match (&installed, version.map(|v| support.fit(v))) {
            (None, _) => "not-installed",
            (Some(_), None) => "unknown",
            (Some(_), Some(Fit::Supported)) => "supported",
            (Some(_), Some(Fit::Untested)) => "untested",
        },
        installed,
    }
}

/// What `program --version` prints on stdout, within [`VERSION_TIMEOUT`]
/// (a CLI that hangs is killed and reads as no version).
fn version_of(program: &Path) -> Option<String> {
    let mut child = Command::new(program)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if started.elapsed() < VERSION_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(20));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
    let mut text = String::new();
    child.stdout.take()?.read_to_string(&mut text).ok()?;
    Some(text)
}

#[derive(Debug, Serialize)]
struct RoleUse {
    role: String,
    provider: String,
    model: Option<String>,
    /// Whether what the role needs is there (the CLI on `PATH`, the command's
    /// program); `builtin` always is.
    available: bool,
}

pub(crate) fn cmd_doctor(args: DoctorArgs) -> CliResult<u8> {
    let cwd = std::env::current_dir().map_err(|e| CliError::failure(anyhow::anyhow!(e)))?;
    let git = git_check();
    let remote = origin_remote(&cwd);
    let repository = match &remote {
        Some(r) => Check {
            ok: true,
            detail: format!(
                "origin is {} on {}",
                r.repo,
                r.forge
                    .map_or("an unknown forge (set [forge] hosts or --forge)", |f| {
                        f.as_str()
                    })
            ),
        },
        None => Check {
            ok: true,
            detail: "no origin remote here: pass a PR URL or --repo to `shepherd run`".into(),
        },
    };
    let (forge, host) = match &remote {
        Some(r) => (r.forge.unwrap_or(ForgeKind::GitHub), r.repo.host.clone()),
        None => (ForgeKind::GitHub, "github.com".to_owned()),
    };
    let token = token_check(forge, &host);
    let (config, settings) = match config_layers(Overrides::default())
        .and_then(|layers| checkout_config(&layers, &cwd))
    {
        Ok(cfg) => (
            Check {
                ok: true,
                detail: "valid".into(),
            },
            Some(cfg),
        ),
        Err(err) => (
            Check {
                ok: false,
                detail: err.to_string(),
            },
            None,
        ),
    };
    let agents: Vec<AgentCli> = CliProvider::ALL.into_iter().map(agent_cli).collect();
    let roles = settings.as_ref().map(roles_of).unwrap_or_default();
    let probes = match (&settings, args.probe) {
        (Some(cfg), true) => Some(probe_roles(cfg, Duration::from_secs(args.probe_timeout))?),
        _ => None,
    };
    let ok = git.ok
        && token.ok
        && config.ok
        && roles.iter().all(|r| r.available)
        && probes.iter().flatten().all(|p| p.probe.answered);
    let report = Report {
        ok,
        git,
        repository,
        token,
        config,
        agents,
        roles,
        probes,
    };
    if args.json {
        let text = serde_json::to_string_pretty(&report)
            .map_err(|e| CliError::failure(anyhow::anyhow!(e)))?;
        outln!("{text}");
    } else {
        print_text(&report);
    }
    Ok(if ok {
        exit_codes::SUCCESS
    } else {
        exit_codes::FAILURE
    })
}

fn git_check() -> Check {
    let output = Command::new("git")
        .arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output();
    let text = match output {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_owned(),
        _ => {
            return Check {
                ok: false,
                detail: "git is not installed (or not on PATH)".into(),
            }
        }
    };
    let version = text
        .split_whitespace()
        .nth(2)
        .map(|v| {
            v.split('.')
                .filter_map(|n| n.parse::<u32>().ok())
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    match version.as_slice() {
        [major, minor, ..] if (*major, *minor) >= MIN_GIT => Check {
            ok: true,
            detail: text,
        },
        _ => Check {
            ok: false,
            detail: format!(
                "{text}: Shepherd needs git {}.{} or newer",
                MIN_GIT.0, MIN_GIT.1
            ),
        },
    }
}

fn token_check(forge: ForgeKind, host: &str) -> Check {
    let found = match forge {
        ForgeKind::GitHub => Token::discover(host),
        ForgeKind::GitLab => Token::discover_gitlab(host),
    };
    match found {
        Ok(token) => Check {
            ok: true,
            detail: format!(
                "a {forge} token for {host}, from {}",
                match token.source() {
                    TokenSource::Env(name) => format!("${name}"),
                    TokenSource::GhCli => "`gh auth token`".to_owned(),
                    TokenSource::GlabCli => "`glab`".to_owned(),
                    _ => "the caller".to_owned(),
                }
            ),
        },
        Err(err) => Check {
            ok: false,
            detail: err.to_string(),
        },
    }
}

fn roles_of(config: &Config) -> Vec<RoleUse> {
    AgentRole::ALL
        .into_iter()
        .map(|role| {
            let s = config.agent.for_role(role);
            let available = match s.provider {
                Provider::Builtin => true,
                Provider::Command => s
                    .command
                    .as_ref()
                    .and_then(|c| c.to_argv().into_iter().next())
                    .is_some_and(|program| program_exists(&program)),
                other => CliProvider::from_provider(other)
                    .is_some_and(|cli| on_path(cli.program()).is_some()),
            };
            RoleUse {
                role: role.as_str().to_owned(),
                provider: s.provider.as_str().to_owned(),
                model: s.model.clone(),
                available,
            }
        })
        .collect()
}

/// `program` as a path, or found on `PATH`.
fn program_exists(program: &str) -> bool {
    if program.contains('/') {
        return is_executable(Path::new(program));
    }
    on_path(program).is_some()
}

/// Where `program` is on `PATH`, if it is.
fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn print_text(report: &Report) {
    let mark = |ok: bool| if ok { "ok  " } else { "FAIL" };
    outln!("{} git         {}", mark(report.git.ok), report.git.detail);
    outln!(
        "{} repository  {}",
        mark(report.repository.ok),
        report.repository.detail
    );
    outln!(
        "{} token       {}",
        mark(report.token.ok),
        report.token.detail
    );
    outln!(
        "{} config      {}",
        mark(report.config.ok),
        report.config.detail
    );
    outln!();
    outln!("Agent CLIs:");
    for agent in &report.agents {
        match &agent.installed {
            Some(path) => {
                let fit = match (agent.fit, &agent.version) {
                    ("supported", Some(v)) => format!("{v}, supported ({})", agent.supported),
                    (_, Some(v)) => format!(
                        "{v}, untested: Shepherd is tested with {} ({} supported)",
                        agent.tested, agent.supported
                    ),
                    _ => format!(
                        "version unknown (`{} --version` printed none); tested with {}",
                        agent.provider, agent.tested
                    ),
                };
                outln!(
                    "  {:<9} installed at {} ({fit})",
                    agent.provider,
                    path.display()
                );
            }
            None => outln!(
                "  {:<9} not installed (tested with {} {})",
                agent.provider,
                agent.package,
                agent.tested
            ),
        }
    }
    if !report.roles.is_empty() {
        outln!();
        outln!("Configured roles:");
        for role in &report.roles {
            outln!(
                "  {:<17} {}{}{}",
                role.role,
                role.provider,
                role.model
                    .as_deref()
                    .map(|m| format!(" ({m})"))
                    .unwrap_or_default(),
                if role.available {
                    ""
                } else {
                    "  <- not installed"
                }
            );
        }
    }
    if let Some(probes) = &report.probes {
        print_probes(probes);
    }
    outln!();
    outln!(
        "{}",
        if report.ok {
            "Ready."
        } else {
            "Not ready: see FAIL and \"not installed\" above."
        }
    );
}
