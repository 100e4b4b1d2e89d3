//! A git remote URL read into its host and repository.

use url::Url;

use crate::model::RepoRef;

use super::error::TargetError;
use super::found::repo_path_of;
use super::host::{normalize_host, well_known_forge};
use super::model::RemoteInfo;
use super::quote::{redact_userinfo, truncate};

/// Read a git remote URL (`https://host/owner/repo(.git)`, with or without
/// credentials; `git@host:owner/repo.git`; `ssh://git@host:port/owner/repo.git`;
/// nested GitLab groups) into its host and repository. Credentials are
/// dropped and never appear in errors.
pub fn parse_remote_url(url: &str) -> Result<RemoteInfo, TargetError> {
    let raw = url.trim();
    let invalid = |reason| TargetError::InvalidRemote {
        url: truncate(&redact_userinfo(raw)),
        reason,
    };
    if raw.is_empty() {
        return Err(invalid("the URL is empty"));
    }
    let (host, path) = if let Some(scheme_end) = raw.find("://") {
        let scheme = raw[..scheme_end].to_ascii_lowercase();
        let web = match scheme.as_str() {
            "http" | "https" => true,
            "ssh" | "git" | "git+ssh" | "ssh+git" => false,
            "file" => return Err(invalid("a local path is not a forge repository")),
            _ => return Err(invalid("unsupported URL scheme")),
        };
        let parsed = Url::parse(raw).map_err(|_| invalid("not a valid URL"))?;
        let host_name = match parsed.host_str() {
            Some(h) if !h.is_empty() => h.to_owned(),
            _ => return Err(invalid("the URL has no host")),
        };
        let host = match (web, parsed.port()) {
            (true, Some(port)) => format!("{host_name}:{port}"),
            _ => host_name,
        };
        (host, parsed.path().to_owned())
    } else {
        // scp-like syntax: [user@]host:path. A path before any ':' is local.
        let Some((left, path)) = raw.split_once(':') else {
            return Err(invalid("a local path is not a forge repository"));
        };
        let host = left.rsplit_once('@').map_or(left, |(_, h)| h);
        if host.is_empty()
            || host.contains('/')
            || host.contains('\\')
            || path.contains('\\')
            || path.starts_with("//")
        {
            return Err(invalid("neither a URL nor user@host:owner/repo"));
        }
        (host.to_owned(), path.to_owned())
    };
    let path = repo_path_of(&path)
        .ok_or_else(|| invalid("the path is not owner/repo (or group/subgroup/project)"))?;
    let host = normalize_host(&host);
    let forge = well_known_forge(&host);
    Ok(RemoteInfo {
        repo: RepoRef {
            host,
            owner: path.owner,
            name: path.name,
        },
        forge,
    })
}
