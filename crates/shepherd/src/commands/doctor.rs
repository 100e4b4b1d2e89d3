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

/// Where `token` came from, as a person names it (`$GITHUB_TOKEN`), never
/// the token.
pub(crate) fn token_source(token: &Token) -> String {
    match token.source() {
        TokenSource::Env(name) => format!("${name}"),
        TokenSource::GhCli => "`gh auth token`".to_owned(),
        TokenSource::GlabCli => "`glab`".to_owned(),
        _ => "the caller".to_owned(),
    }
}

use crate::commands::doctor_probe::{print_probes, probe_roles, RoleProbe};
use crate::error::{CliError, CliResult};
use crate::exit_codes;
use crate::setup::{checkout_config, config_layers, origin_remote, ForgeFlag};
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
    /// The forge, when the `origin` remote's host does not tell it (and no
    /// `[forge]` hosts entry does)
    #[arg(long, value_enum)]
    forge: Option<ForgeFlag>,
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
    /// The configuration files a run here reads, lowest precedence first.
    config_files: Vec<ConfigFile>,
    /// What deserves a look but does not stop a run.
    warnings: Vec<String>,
    agents: Vec<AgentCli>,
    roles: Vec<RoleUse>,
    /// `--probe`'s calls; absent without `--probe`.
    #[serde(skip_serializing_if = "Option::is_none")]
    probes: Option<Vec<RoleProbe>>,
}

/// One configuration source a run reads.
#[derive(Debug, Serialize)]
struct ConfigFile {
    /// `repository`, `user` or `environment`.
    layer: &'static str,
    /// The file, or the variables for the environment.
    path: String,
    /// Whether it exists (and is read).
    found: bool,
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
    let (config_files, warnings) = config_files();
    // The forge as a run here would tell it: --forge, the well-known
    // hosts, then `[forge]` hosts of the configuration.
    let configured = |host: &str| {
        let forge = &settings.as_ref()?.forge;
        let listed = |hosts: &[String]| hosts.iter().any(|h| h.eq_ignore_ascii_case(host));
        if listed(&forge.gitlab_hosts) {
            Some(ForgeKind::GitLab)
        } else if listed(&forge.github_hosts) {
            Some(ForgeKind::GitHub)
        } else {
            None
        }
    };
    // --forge, else what SHEPHERD_API_URL implies (as for `run`).
    let api_url = std::env::var("SHEPHERD_API_URL")
        .ok()
        .filter(|u| !u.is_empty());
    let flag = match (args.forge, &api_url) {
        (Some(f), _) => Some((ForgeKind::from(f), " (--forge)".to_owned())),
        (None, Some(url)) => Some((
            shepherd_forge::forge_of_api_url(url),
            format!(" (SHEPHERD_API_URL: {url})"),
        )),
        (None, None) => None,
    };
    let (forge, host, told_by) = match &remote {
        Some(r) => match &flag {
            Some((f, by)) => (Some(*f), r.repo.host.clone(), by.clone()),
            None => (
                r.forge.or_else(|| configured(&r.repo.host)),
                r.repo.host.clone(),
                String::new(),
            ),
        },
        None => {
            let (forge, by) = flag.unwrap_or((ForgeKind::GitHub, String::new()));
            (Some(forge), forge.spec().default_host.to_owned(), by)
        }
    };
    let repository = match (&remote, forge) {
        (Some(r), Some(f)) => Check {
            ok: true,
            detail: format!("origin is {} on {}{told_by}", r.repo, f.as_str()),
        },
        (Some(r), None) => Check {
            ok: false,
            detail: format!(
                "origin is {} on an unknown forge: pass --forge, or name {} in [forge] \
                 github_hosts or gitlab_hosts",
                r.repo, r.repo.host
            ),
        },
        (None, _) => Check {
            ok: true,
            detail: "no origin remote here: pass a PR URL or --repo to `shepherd run`".into(),
        },
    };
    let token = match forge {
        Some(forge) => token_check(forge, &host),
        None => Check {
            ok: false,
            detail: format!(
                "which token depends on the forge of {host}, which is unknown (GitHub: \
                 GITHUB_TOKEN or GH_TOKEN; GitLab: GITLAB_TOKEN)"
            ),
        },
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
        config_files,
        warnings,
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

/// The configuration sources a run in `cwd` reads, lowest precedence
/// first (the checkout's repository file, the user's file, the
/// environment), and warnings about them: a repository file with changes
/// git has not committed is read as it is on disk here, while a run in CI
/// (or of another clone) reads the committed copy on the base branch.
fn config_files() -> (Vec<ConfigFile>, Vec<String>) {
    let env = |k: &str| std::env::var(k).ok();
    let mut files = Vec::new();
    let mut warnings = Vec::new();
    if let Some(root) = crate::setup::current_checkout() {
        let found = shepherd_core::config::repo_config_path(|p| root.join(p).is_file())
            .ok()
            .flatten();
        match found {
            Some(rel) => {
                files.push(ConfigFile {
                    layer: "repository",
                    path: root.join(rel).display().to_string(),
                    found: true,
                });
                if uncommitted(&root, rel) {
                    warnings.push(format!(
                        "{rel} has changes git has not committed: a run here reads it as it is \
                         on disk, but a run in CI (or of another clone) reads the committed copy \
                         on the base branch; commit and push it"
                    ));
                }
            }
            None => files.push(ConfigFile {
                layer: "repository",
                path: root.join("shepherd.toml").display().to_string(),
                found: false,
            }),
        }
    }
    if let Some(path) = shepherd_core::config::user_config_path(env) {
        files.push(ConfigFile {
            layer: "user",
            found: Path::new(&path).is_file(),
            path,
        });
    }
    let (read, unread) = shepherd_env(std::env::vars());
    warnings.extend(unread.iter().map(|name| {
        format!("{name} is set, but Shepherd reads no variable of that name (a typo?)")
    }));
    files.push(ConfigFile {
        layer: "environment",
        found: !read.is_empty(),
        path: if read.is_empty() {
            "no SHEPHERD_* variable set".to_owned()
        } else {
            read.join(", ")
        },
    });
    (files, warnings)
}

/// The variables Shepherd reads besides the configuration's
/// ([`shepherd_core::config::ENV_VARS`]), with what each one sets.
const CLI_ENV_VARS: &[(&str, &str)] = &[
    ("SHEPHERD_API_URL", "the forge API, as --api-url"),
    ("SHEPHERD_STATE_DIR", "the state directory, as --state-dir"),
    ("SHEPHERD_CONFIG", "the user's file above"),
    ("SHEPHERD_LOG", "the log filter"),
    ("SHEPHERD_MR_IID", "the merge request of a CI run"),
];

/// The `SHEPHERD_*` variables of `vars` (non-empty), in name order: those
/// Shepherd reads, each as `NAME (what it sets)`, and those it does not.
fn shepherd_env(vars: impl Iterator<Item = (String, String)>) -> (Vec<String>, Vec<String>) {
    let mut set: Vec<String> = vars
        .filter(|(name, value)| name.starts_with("SHEPHERD_") && !value.is_empty())
        .map(|(name, _)| name)
        .collect();
    set.sort();
    let mut read = Vec::new();
    let mut unread = Vec::new();
    for name in set {
        let config = shepherd_core::config::ENV_VARS
            .iter()
            .find(|v| v.name == name)
            .map(|v| v.key);
        let cli = CLI_ENV_VARS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, what)| *what);
        match config.or(cli) {
            Some(what) => read.push(format!("{name} ({what})")),
            None => unread.push(name),
        }
    }
    (read, unread)
}

/// Whether `rel` in the checkout `root` differs from what git committed
/// (modified, staged or untracked).
fn uncommitted(root: &Path, rel: &str) -> bool {
    Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["status", "--porcelain", "--untracked-files=all", "--", rel])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .is_ok_and(|o| o.status.success() && !o.stdout.is_empty())
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
    match Token::discover_for(forge, host) {
        Ok(token) => Check {
            ok: true,
            detail: format!("a {forge} token for {host}, from {}", token_source(&token)),
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
    outln!("     config files, in the order read (later ones win):");
    for f in &report.config_files {
        outln!(
            "       {:<11} {}{}",
            f.layer,
            f.path,
            if f.found || f.layer == "environment" {
                ""
            } else {
                " (not found)"
            }
        );
    }
    for w in &report.warnings {
        outln!("WARN {w}");
    }
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

#[cfg(test)]
mod env_tests {
    use super::shepherd_env;

    #[test]
    fn every_shepherd_variable_is_named_with_what_it_sets_or_as_unread() {
        let vars = [
            ("SHEPHERD_STATE_DIR", "/tmp/s"),
            ("SHEPHERD_APROVE", "auto"),
            ("SHEPHERD_APPROVE", "auto"),
            ("SHEPHERD_API_URL", "http://127.0.0.1:1"),
            ("SHEPHERD_LOG", ""),
            ("GITHUB_TOKEN", "x"),
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned()));
        let (read, unread) = shepherd_env(vars.into_iter());
        assert_eq!(
            read,
            [
                "SHEPHERD_API_URL (the forge API, as --api-url)",
                "SHEPHERD_APPROVE (approve.mode)",
                "SHEPHERD_STATE_DIR (the state directory, as --state-dir)",
            ]
        );
        assert_eq!(unread, ["SHEPHERD_APROVE"]);
    }
}
