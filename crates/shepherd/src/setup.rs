//! From flags, configuration and the current directory to a parsed target,
//! its configuration layers, a connected forge (through
//! [`shepherd_forge::connect`], which knows the forges) and git access.
//!
//! The forge comes from the target's URL, else `--forge` (or an `--api-url`
//! ending in `/api/v4`), else the `origin` remote's host: `github.com`,
//! `gitlab.com`, or a host the configuration names in `[forge]
//! github_hosts`/`gitlab_hosts` (the user's file, and the current checkout's
//! `shepherd.toml` or `.shepherd/config.toml`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, LazyLock};

use anyhow::anyhow;
use clap::builder::PossibleValue;
use clap::Args;
use shepherd_core::config::{repo_config_path, Config, ConfigLayer, ForgeConfig, Overrides};
use shepherd_core::target::{parse_remote_url, parse_target, RemoteInfo, Target, TargetContext};
use shepherd_core::ForgeKind;
use shepherd_engine::{Git, HttpCredentials, RepoConfigSource, StateDir};
use shepherd_forge::{ClientConfig, ConnectError, Forge, GitHubEndpoints, GitLabEndpoints, Token};

use crate::error::{CliError, CliResult};

/// Flags that say which forge and repository a target lives on.
#[derive(Debug, Clone, Args)]
pub(crate) struct ForgeArgs {
    /// The forge, when neither the URL nor the remote tells it
    #[arg(long, value_enum)]
    pub forge: Option<ForgeFlag>,

    /// The repository (`owner/name`, or a URL to name the host too), instead of the `origin` remote
    #[arg(long, value_name = "REPO")]
    pub repo: Option<String>,

    /// The API base URL: `https://HOST/api/v3` for GitHub Enterprise, or the emulator's URL;
    /// implies `--forge github` unless it ends in `/api/v4` (GitLab)
    #[arg(long, value_name = "URL", env = "SHEPHERD_API_URL")]
    pub api_url: Option<String>,
}

/// `--forge` values: every forge of the registry, by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ForgeFlag(pub ForgeKind);

impl clap::ValueEnum for ForgeFlag {
    fn value_variants<'a>() -> &'a [Self] {
        static ALL: LazyLock<Vec<ForgeFlag>> =
            LazyLock::new(|| ForgeKind::ALL.into_iter().map(ForgeFlag).collect());
        &ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.0.spec().name))
    }
}

impl From<ForgeFlag> for ForgeKind {
    fn from(flag: ForgeFlag) -> Self {
        flag.0
    }
}

/// The configuration layers a command starts from: the user's file, the
/// environment, the flags, validated (a bad key is a usage error before
/// anything starts). A run is given these; the repository's own file is
/// read by the engine from the run's worktree.
pub(crate) fn config_layers(overrides: Overrides) -> CliResult<Vec<ConfigLayer>> {
    let env = |k: &str| std::env::var(k).ok();
    let mut layers = Vec::new();
    if let Some(path) = shepherd_core::config::user_config_path(env) {
        let named = env(shepherd_core::config::CONFIG_PATH_ENV).is_some_and(|v| !v.is_empty());
        match std::fs::read_to_string(&path) {
            Ok(text) => layers.push(ConfigLayer::user(path, text)),
            // A file SHEPHERD_CONFIG names must exist: a typo there would
            // otherwise run with none of its settings.
            Err(err) if err.kind() == std::io::ErrorKind::NotFound && named => {
                return Err(CliError::usage(anyhow!(
                    "{} names the user config {path}, which does not exist",
                    shepherd_core::config::CONFIG_PATH_ENV
                )))
            }
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
            Err(err) => {
                return Err(CliError::usage(anyhow!(
                    "cannot read the user config {path}: {err}"
                )))
            }
        }
    }
    layers.push(ConfigLayer::env(env));
    layers.push(ConfigLayer::flags(overrides));
    Config::layered(&layers).map_err(CliError::usage)?;
    Ok(layers)
}

/// Where a run's trusted repository config file comes from (SPEC section
/// 10): the user's own checkout of the target's repository (its working
/// file, as the user sees it), unless this is CI (`CI` set): there the
/// checkout is the pull request's code, so the file is read from the PR's
/// base branch, as it is without a checkout of the repository. Returns the
/// checkout's file as a layer, when it is used and exists.
pub(crate) fn trusted_repo_config(
    target: &Target,
) -> CliResult<(Option<ConfigLayer>, RepoConfigSource)> {
    let in_ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    if in_ci {
        return Ok((None, RepoConfigSource::BaseBranch));
    }
    let Some(root) = current_checkout() else {
        return Ok((None, RepoConfigSource::BaseBranch));
    };
    let same_repo = origin_remote(&root).is_some_and(|remote| {
        let host = |h: &str| h.split(':').next().unwrap_or(h).to_ascii_lowercase();
        host(&remote.repo.host) == host(&target.repo.host)
            && remote.repo.owner.eq_ignore_ascii_case(&target.repo.owner)
            && remote.repo.name.eq_ignore_ascii_case(&target.repo.name)
    });
    if !same_repo {
        return Ok((None, RepoConfigSource::BaseBranch));
    }
    let found = repo_config_path(|p| root.join(p).is_file()).map_err(CliError::usage)?;
    let layer = match found {
        Some(rel) => {
            let path = root.join(rel);
            let text = std::fs::read_to_string(&path)
                .map_err(|e| CliError::usage(anyhow!("cannot read {}: {e}", path.display())))?;
            Some(ConfigLayer::repo(path.display().to_string(), text))
        }
        None => None,
    };
    Ok((layer, RepoConfigSource::Checkout))
}

/// The root of the git checkout the current directory is in, if any: where
/// a run reads the repository's prompt overrides (`.shepherd/prompts/`),
/// never from the PR's own head.
pub(crate) fn current_checkout() -> Option<PathBuf> {
    checkout_root(&std::env::current_dir().ok()?)
}

/// The root of the git checkout `dir` is in, if any.
fn checkout_root(dir: &Path) -> Option<PathBuf> {
    git_output(dir, &["rev-parse", "--show-toplevel"])
        .map(|root| PathBuf::from(root.trim_end_matches(['\n', '\r'])))
}

/// What `git -C dir args` prints, when it runs and succeeds (its errors
/// are not shown: the callers read a failure as "none").
fn git_output(dir: &Path, args: &[&str]) -> Option<String> {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    String::from_utf8(output.stdout).ok()
}

/// `[forge]` of the configuration: the repository file of the checkout
/// `dir` is in (if any) under `layers`.
fn forge_config(layers: &[ConfigLayer], dir: &Path) -> CliResult<ForgeConfig> {
    Ok(checkout_config(layers, dir)?.forge)
}

/// The configuration as a run in `dir` would see it: the repository file of
/// the checkout `dir` is in (if any) under `layers`.
pub(crate) fn checkout_config(layers: &[ConfigLayer], dir: &Path) -> CliResult<Config> {
    let mut all = Vec::new();
    if let Some(root) = checkout_root(dir) {
        let found = repo_config_path(|p| root.join(p).is_file()).map_err(CliError::usage)?;
        if let Some(rel) = found {
            let path = root.join(rel);
            let text = std::fs::read_to_string(&path)
                .map_err(|e| CliError::usage(anyhow!("cannot read {}: {e}", path.display())))?;
            all.push(ConfigLayer::repo(path.display().to_string(), text));
        }
    }
    all.extend(layers.iter().cloned());
    Config::layered(&all).map_err(CliError::usage)
}

/// Read the `origin` remote of `dir`, if `dir` is in a git repository that has one.
/// (`shepherd doctor` shows it.)
///
/// A missing `git`, a directory outside a repository, or a remote we cannot
/// parse all mean "no remote": the target or the flags must then say where
/// the PR lives, and `parse_target` says so if they do not.
pub(crate) fn origin_remote(dir: &Path) -> Option<RemoteInfo> {
    let url = git_output(dir, &["remote", "get-url", "origin"])?;
    match parse_remote_url(url.trim()) {
        Ok(remote) => Some(remote),
        Err(err) => {
            tracing::debug!(%err, "ignoring an origin remote that does not name a forge repository");
            None
        }
    }
}

/// The forge an explicit `--api-url` implies
/// ([`shepherd_forge::forge_of_api_url`]).
fn forge_of_api_url(args: &ForgeArgs) -> Option<ForgeKind> {
    args.api_url
        .as_deref()
        .map(shepherd_forge::forge_of_api_url)
}

/// Parse `input` into a target, using the flags, the configuration
/// `layers` (from [`config_layers`]) with the current checkout's file, and
/// the current directory's remote.
pub(crate) fn resolve_target_with(
    input: &str,
    args: &ForgeArgs,
    layers: &[ConfigLayer],
) -> CliResult<Target> {
    let cwd = std::env::current_dir().map_err(|e| CliError::failure(anyhow!(e)))?;
    resolve_target_in(input, args, layers, &cwd)
}

/// [`resolve_target_with`] from the directory `dir`.
fn resolve_target_in(
    input: &str,
    args: &ForgeArgs,
    layers: &[ConfigLayer],
    dir: &Path,
) -> CliResult<Target> {
    let hosts = forge_config(layers, dir)?;
    let ctx = TargetContext {
        forge: args
            .forge
            .map(ForgeKind::from)
            .or_else(|| forge_of_api_url(args)),
        repo: args.repo.clone(),
        remote: origin_remote(dir),
        gitlab_hosts: hosts.gitlab_hosts,
        github_hosts: hosts.github_hosts,
        api_host: args.api_url.as_deref().and_then(api_host),
    };
    parse_target(input, &ctx).map_err(|err| {
        let hint = if ctx.remote.is_none() && ctx.repo.is_none() {
            Some("run inside a clone of the repository, or pass --repo OWNER/NAME or a full URL")
        } else {
            None
        };
        let mut err = CliError::usage(err);
        if let Some(hint) = hint {
            err = err.with_hint(hint);
        }
        err
    })
}

/// The forge host an API URL serves: `host[:port]`, with GitHub's API host
/// `api.github.com` read as `github.com`. `None` for a URL without a host
/// (the API client refuses it with its own error).
fn api_host(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url.trim()).ok()?;
    let host = parsed.host_str()?.to_ascii_lowercase();
    if host == "api.github.com" {
        return Some("github.com".to_owned());
    }
    Some(match parsed.port() {
        Some(port) => format!("{host}:{port}"),
        None => host,
    })
}

/// Whether `url` is a plain-HTTP URL (`http://…`).
fn is_http(url: &str) -> bool {
    url.trim()
        .get(..7)
        .is_some_and(|s| s.eq_ignore_ascii_case("http://"))
}

/// The `origin` remote's URL of the checkout `dir` is in, as git has it.
fn origin_url(dir: &Path) -> Option<String> {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["remote", "get-url", "origin"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

/// The flags with the API URL the target's own URL implies: a PR URL, a
/// `--repo` URL or an `origin` remote on `http://HOST[:PORT]` (a
/// self-hosted instance, the emulator) is talked to over plain HTTP, at
/// `http://HOST[:PORT]/api/v3` (GitHub Enterprise style) or `/api/v4`
/// (GitLab), never over HTTPS. An explicit `--api-url` always wins;
/// github.com and gitlab.com are always HTTPS.
pub(crate) fn with_target_scheme(input: &str, target: &Target, args: &ForgeArgs) -> ForgeArgs {
    let mut args = args.clone();
    if args.api_url.is_some() {
        return args;
    }
    let host = target.repo.host.to_ascii_lowercase();
    if matches!(host.as_str(), "github.com" | "gitlab.com") {
        return args;
    }
    let from_remote = || {
        let cwd = std::env::current_dir().ok()?;
        let url = origin_url(&cwd)?;
        let remote = parse_remote_url(&url).ok()?;
        (remote.repo.host.eq_ignore_ascii_case(&host) && is_http(&url)).then_some(())
    };
    let http = match target.repo_source {
        shepherd_core::target::RepoSource::Url => is_http(input),
        shepherd_core::target::RepoSource::Flag => args.repo.as_deref().is_some_and(is_http),
        _ => from_remote().is_some(),
    };
    if http {
        let suffix = match target.forge {
            ForgeKind::GitHub => "api/v3",
            ForgeKind::GitLab => "api/v4",
        };
        args.api_url = Some(format!("http://{}/{suffix}", target.repo.host));
    }
    args
}

/// The forge API endpoint a command talks to, and where that came from:
/// what an error about reaching the forge names.
pub(crate) fn endpoint_hint(target: &Target, args: &ForgeArgs) -> String {
    let host = &target.repo.host;
    let (url, why) = match (&args.api_url, target.forge) {
        (Some(url), _) => (
            url.clone(),
            "from --api-url, SHEPHERD_API_URL or the target's http:// URL",
        ),
        (None, ForgeKind::GitHub) => (
            GitHubEndpoints::for_host(host)
                .map(|e| e.rest.to_string())
                .unwrap_or_else(|_| host.clone()),
            "from the host; pass --api-url for another",
        ),
        (None, ForgeKind::GitLab) => (
            GitLabEndpoints::for_host(host)
                .map(|e| e.api.to_string())
                .unwrap_or_else(|_| host.clone()),
            "from the host; pass --api-url for another",
        ),
    };
    format!("the forge API tried: {url} ({why})")
}

/// `[forge]` as a command in the current directory sees it: `layers`
/// (from [`config_layers`]) under the current checkout's file, if any.
pub(crate) fn current_forge_config(layers: &[ConfigLayer]) -> CliResult<ForgeConfig> {
    let cwd = std::env::current_dir().map_err(|e| CliError::failure(anyhow!(e)))?;
    forge_config(layers, &cwd)
}

/// The HTTP options of the forge clients: the defaults, with `[forge]
/// ca_file`.
fn client_config(forge: &ForgeConfig) -> ClientConfig {
    ClientConfig {
        ca_file: forge.ca_file.as_ref().map(PathBuf::from),
        ..ClientConfig::default()
    }
}

/// Connect to the forge of `target` ([`shepherd_forge::connect`]):
/// endpoints from `--api-url` or the host, token discovered, TLS roots with
/// `[forge] ca_file`. A bad `--api-url` or CA file is a usage error naming
/// it, before any request.
///
/// Token discovery may run `gh auth token` or `glab`, so call this before entering async code.
pub(crate) fn connect(
    target: &Target,
    args: &ForgeArgs,
    forge: &ForgeConfig,
) -> CliResult<Arc<dyn Forge>> {
    shepherd_forge::connect(target, args.api_url.as_deref(), client_config(forge)).map_err(|err| {
        match err {
            ConnectError::Input(err) => CliError::usage(err),
            ConnectError::Failure(err) => CliError::failure(err),
        }
    })
}

/// The git URL of the target's repository ([`shepherd_forge::git_url`]):
/// beside `--api-url` when given, else `https://HOST/OWNER/NAME.git`.
pub(crate) fn git_url(target: &Target, api_url: Option<&str>) -> CliResult<String> {
    shepherd_forge::git_url(&target.repo, api_url).ok_or_else(|| {
        CliError::usage(anyhow!("invalid --api-url {}", api_url.unwrap_or_default()))
    })
}

/// Git access with the forge's token as HTTPS credentials (never shown,
/// never given to agents).
pub(crate) fn git_with_credentials(target: &Target) -> CliResult<Git> {
    let token = Token::discover_for(target.forge, &target.repo.host).map_err(CliError::failure)?;
    Ok(Git::new().with_credentials(HttpCredentials::for_forge(target.forge, token.expose())))
}

/// The state directory: `--state-dir`, `SHEPHERD_STATE_DIR`, XDG, HOME.
pub(crate) fn state_dir(flag: Option<PathBuf>) -> CliResult<StateDir> {
    StateDir::resolve(flag, |k| std::env::var(k).ok()).map_err(CliError::usage)
}

/// A tokio runtime for one command.
pub(crate) fn runtime() -> CliResult<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::failure(anyhow!("cannot start the async runtime: {e}")))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;

    /// A git checkout whose `origin` is `remote`, with `files`.
    fn checkout(remote: &str, files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for args in [vec!["init", "-q"], vec!["remote", "add", "origin", remote]] {
            let status = Command::new("git")
                .arg("-C")
                .arg(dir.path())
                .args(&args)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .stdin(Stdio::null())
                .status()
                .unwrap();
            assert!(status.success(), "git {args:?}");
        }
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    fn args(forge: Option<ForgeFlag>) -> ForgeArgs {
        ForgeArgs {
            forge,
            repo: None,
            api_url: None,
        }
    }

    const REMOTE: &str = "git@git.corp.example:platform/tools/greeter.git";

    #[test]
    fn a_remote_on_a_configured_gitlab_host_picks_gitlab() {
        // The checkout's own shepherd.toml names the host.
        let repo = checkout(
            REMOTE,
            &[(
                "shepherd.toml",
                "[forge]\ngitlab_hosts = [\"git.corp.example\"]\n",
            )],
        );
        let target = resolve_target_in("MR !17", &args(None), &[], repo.path()).unwrap();
        assert_eq!(target.forge, ForgeKind::GitLab);
        assert_eq!(target.repo.host, "git.corp.example");
        assert_eq!(target.repo.full_name(), "platform/tools/greeter");
        assert_eq!(target.number, 17);
        // From a subdirectory too.
        std::fs::create_dir(repo.path().join("src")).unwrap();
        let inner = resolve_target_in("!17", &args(None), &[], &repo.path().join("src")).unwrap();
        assert_eq!(inner.forge, ForgeKind::GitLab);

        // The user's file (a layer) names it.
        let repo = checkout(REMOTE, &[]);
        let user = ConfigLayer::user(
            "user.toml",
            "[forge]\ngitlab_hosts = [\"git.corp.example\"]\n",
        );
        let target = resolve_target_in("17", &args(None), &[user], repo.path()).unwrap();
        assert_eq!(target.forge, ForgeKind::GitLab);
        // ... or as GitHub Enterprise (no nested groups there).
        let repo = checkout("git@git.corp.example:platform/greeter.git", &[]);
        let user = ConfigLayer::user(
            "user.toml",
            "[forge]\ngithub_hosts = [\"git.corp.example\"]\n",
        );
        let target = resolve_target_in("17", &args(None), &[user], repo.path()).unwrap();
        assert_eq!(target.forge, ForgeKind::GitHub);
    }

    #[test]
    fn a_repository_named_without_a_host_is_on_the_api_urls_host() {
        let dir = tempfile::tempdir().unwrap();
        let with_api = |api: &str, repo: &str| ForgeArgs {
            forge: None,
            repo: Some(repo.to_owned()),
            api_url: Some(api.to_owned()),
        };
        let cases = [
            (
                "http://127.0.0.1:8088/api/v3",
                "demo/authkit",
                ForgeKind::GitHub,
                "127.0.0.1:8088",
            ),
            (
                "https://ghe.corp/api/v3",
                "acme/app",
                ForgeKind::GitHub,
                "ghe.corp",
            ),
            (
                "https://api.github.com",
                "acme/app",
                ForgeKind::GitHub,
                "github.com",
            ),
            (
                "https://git.corp:8443/api/v4",
                "grp/sub/app",
                ForgeKind::GitLab,
                "git.corp:8443",
            ),
        ];
        for (api, repo, forge, host) in cases {
            let target = resolve_target_in("42", &with_api(api, repo), &[], dir.path()).unwrap();
            assert_eq!(
                (target.forge, target.repo.host.as_str()),
                (forge, host),
                "{api}"
            );
        }
        // A host the repository names itself wins.
        let target = resolve_target_in(
            "42",
            &with_api("https://ghe.corp/api/v3", "https://github.com/acme/app"),
            &[],
            dir.path(),
        )
        .unwrap();
        assert_eq!(target.repo.host, "github.com");
        // Without --api-url, github.com as before.
        let target = resolve_target_in(
            "42",
            &ForgeArgs {
                forge: Some(ForgeFlag(ForgeKind::GitHub)),
                repo: Some("acme/app".into()),
                api_url: None,
            },
            &[],
            dir.path(),
        )
        .unwrap();
        assert_eq!(target.repo.host, "github.com");
    }

    #[test]
    fn an_unknown_host_needs_the_flag_or_the_config() {
        let repo = checkout(REMOTE, &[]);
        let err = resolve_target_in("17", &args(None), &[], repo.path()).unwrap_err();
        assert!(err.to_string().contains("git.corp.example"), "{err}");
        let target = resolve_target_in(
            "17",
            &args(Some(ForgeFlag(ForgeKind::GitLab))),
            &[],
            repo.path(),
        )
        .unwrap();
        assert_eq!(target.forge, ForgeKind::GitLab);
        // gitlab.com needs nothing.
        let repo = checkout("https://gitlab.com/acme/tools/greeter.git", &[]);
        let target = resolve_target_in("!3", &args(None), &[], repo.path()).unwrap();
        assert_eq!(target.forge, ForgeKind::GitLab);
    }

    #[test]
    fn a_bad_repository_config_is_a_usage_error_naming_it() {
        let repo = checkout(REMOTE, &[("shepherd.toml", "[forge]\ngitlab_host = []\n")]);
        let err = resolve_target_in("17", &args(None), &[], repo.path()).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("gitlab_host") && text.contains("shepherd.toml"),
            "{text}"
        );
    }
}
