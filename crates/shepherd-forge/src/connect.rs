//! From a parsed target to a connected forge: the one factory that knows
//! which client serves which [`ForgeKind`], how its endpoints come from an
//! `--api-url` or the host, where its token comes from, and where its git
//! URL is.
//!
//! A new forge is added here in [`connect`]'s `match` (the compiler asks
//! for it) and in [`shepherd_core::forges`]; nothing in the CLI changes.

use std::sync::Arc;

use shepherd_core::target::Target;
use shepherd_core::{ForgeKind, RepoRef};

use crate::error::ForgeError;
use crate::forge::Forge;
use crate::github::{GitHubClient, GitHubEndpoints};
use crate::gitlab::{GitLabClient, GitLabEndpoints};
use crate::token::Token;
use crate::transport::ClientConfig;

/// Why [`connect`] could not build a client, by whose fault.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The `--api-url`, the host or the configured CA file cannot be used:
    /// the user's input is wrong.
    #[error(transparent)]
    Input(ForgeError),
    /// No token, or the client could not be built otherwise.
    #[error(transparent)]
    Failure(ForgeError),
}

impl ConnectError {
    /// A client error: a bad CA file is the configuration's fault.
    fn client(err: ForgeError) -> Self {
        if matches!(err, ForgeError::CaFile { .. }) {
            ConnectError::Input(err)
        } else {
            ConnectError::Failure(err)
        }
    }
}

/// Connect to the forge of `target`: endpoints from `api_url` (an explicit
/// API base, the emulator's or an Enterprise host's) or the host, the token
/// discovered ([`Token::discover_for`]), HTTP options from `config`.
///
/// Token discovery may run `gh auth token` or `glab`, so call this before
/// entering async code.
pub fn connect(
    target: &Target,
    api_url: Option<&str>,
    config: ClientConfig,
) -> Result<Arc<dyn Forge>, ConnectError> {
    client_for(
        target.forge,
        target.repo.clone(),
        target.number,
        api_url,
        config,
        || Token::discover_for(target.forge, &target.repo.host),
    )
}

/// The client of `forge` for change request `number` of `repo`, with the
/// token `token` gives (asked for once the endpoints are known to be
/// valid). A GitLab client is bound to the merge request (resolving needs
/// its iid, and merged-results pipelines are found through it).
pub fn client_for(
    forge: ForgeKind,
    repo: RepoRef,
    number: u64,
    api_url: Option<&str>,
    config: ClientConfig,
    token: impl FnOnce() -> Result<Token, ForgeError>,
) -> Result<Arc<dyn Forge>, ConnectError> {
    let host = repo.host.clone();
    let token = || token().map_err(ConnectError::Failure);
    match forge {
        ForgeKind::GitHub => {
            let endpoints = match api_url {
                Some(url) => GitHubEndpoints::from_api_url(url),
                None => GitHubEndpoints::for_host(&host),
            }
            .map_err(ConnectError::Input)?;
            let client = GitHubClient::with_config(repo, endpoints, token()?, config)
                .map_err(ConnectError::client)?;
            Ok(Arc::new(client))
        }
        ForgeKind::GitLab => {
            let endpoints = match api_url {
                Some(url) => GitLabEndpoints::from_api_url(url),
                None => GitLabEndpoints::for_host(&host),
            }
            .map_err(ConnectError::Input)?;
            let client = GitLabClient::with_config(repo, endpoints, token()?, config)
                .map_err(ConnectError::client)?
                .with_merge_request(number);
            Ok(Arc::new(client))
        }
    }
}

/// The forge an explicit `--api-url` implies: the one whose API path
/// (`/api/v4`) it ends in, else GitHub (a github.com-style base, such as
/// the emulator's).
pub fn forge_of_api_url(url: &str) -> ForgeKind {
    ForgeKind::of_api_path(url).unwrap_or(ForgeKind::GitHub)
}

/// The git URL of `repo`: beside `api_url` when given (the emulator, an
/// Enterprise host), else `https://HOST/OWNER/NAME.git`. `None` when
/// `api_url` is not an `http(s)` URL without user info.
pub fn git_url(repo: &RepoRef, api_url: Option<&str>) -> Option<String> {
    let Some(api) = api_url else {
        return Some(format!(
            "https://{}/{}/{}.git",
            repo.host, repo.owner, repo.name
        ));
    };
    let url = url_base(api)?;
    Some(format!("{url}/{}/{}.git", repo.owner, repo.name))
}

/// `scheme://host[:port]` of an API URL, with a forge's API path
/// (`/api/v3`, `/api/v4`) dropped and a path prefix before it kept (a forge
/// under a sub-path).
fn url_base(api: &str) -> Option<String> {
    let api = api.trim().trim_end_matches('/');
    let (scheme, rest) = api.split_once("://")?;
    if !matches!(scheme, "http" | "https") || rest.contains('@') {
        return None;
    }
    let rest = ForgeKind::ALL
        .iter()
        .find_map(|k| rest.strip_suffix(k.spec().api_path))
        .unwrap_or(rest);
    Some(format!("{scheme}://{rest}"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;

    #[test]
    fn git_urls_sit_beside_the_api() {
        assert_eq!(
            url_base("http://127.0.0.1:8080").unwrap(),
            "http://127.0.0.1:8080"
        );
        assert_eq!(
            url_base("https://ghe.corp/api/v3/").unwrap(),
            "https://ghe.corp"
        );
        assert_eq!(
            url_base("https://gl.corp/api/v4").unwrap(),
            "https://gl.corp"
        );
        assert!(url_base("ftp://x").is_none());
        assert!(url_base("https://user:pw@x").is_none());
        let repo = RepoRef {
            host: "gl.corp".into(),
            owner: "g/sub".into(),
            name: "p".into(),
        };
        assert_eq!(git_url(&repo, None).unwrap(), "https://gl.corp/g/sub/p.git");
        assert_eq!(
            git_url(&repo, Some("https://gl.corp/x/api/v4")).unwrap(),
            "https://gl.corp/x/g/sub/p.git"
        );
    }

    #[test]
    fn the_api_path_names_the_forge() {
        assert_eq!(
            forge_of_api_url("https://gl.corp/api/v4/"),
            ForgeKind::GitLab
        );
        assert_eq!(
            forge_of_api_url("https://ghe.corp/api/v3"),
            ForgeKind::GitHub
        );
        assert_eq!(forge_of_api_url("http://127.0.0.1:9"), ForgeKind::GitHub);
    }
}
