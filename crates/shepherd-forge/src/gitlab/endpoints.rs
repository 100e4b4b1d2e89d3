//! Where GitLab's REST API lives for a host, and how a project is named in it.

use std::fmt;

use shepherd_core::model::RepoRef;
use url::Url;

use crate::error::{ForgeError, Result};
pub use crate::hosts::is_gitlab_dot_com;
use crate::url_path::{check_host, join_path, parse_api_url};

/// The REST base of one GitLab installation (`https://HOST/api/v4`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitLabEndpoints {
    /// The REST base; paths such as `/projects/5` are appended to it.
    pub api: Url,
}

impl GitLabEndpoints {
    /// The endpoints of a forge host, gitlab.com or self-managed alike:
    /// `https://HOST/api/v4`. A port in `host` (`gitlab.corp:8443`) is kept.
    pub fn for_host(host: &str) -> Result<Self> {
        let host = check_host(host)?;
        let api = format!("https://{host}/api/v4");
        let api = Url::parse(&api).map_err(|err| ForgeError::InvalidEndpoint {
            input: host.to_owned(),
            reason: err.to_string(),
        })?;
        Ok(GitLabEndpoints { api })
    }

    /// The endpoints of an explicit `--api-url`, taken as the REST base as
    /// given (normally ending in `/api/v4`, which is what makes the CLI pick
    /// GitLab); a trailing `/` is dropped.
    pub fn from_api_url(url: &str) -> Result<Self> {
        Ok(GitLabEndpoints {
            api: parse_api_url(url)?,
        })
    }

    /// The URL of `path` (`/user`) under the REST base.
    pub fn api_url(&self, path: &str) -> Url {
        join_path(&self.api, path)
    }

    /// GitLab's GraphQL endpoint: `/api/graphql` at the web root the REST
    /// base is under (`https://gitlab.corp/api/v4` gives
    /// `https://gitlab.corp/api/graphql`; GitLab's docs,
    /// <https://docs.gitlab.com/api/graphql/#graphql-api-endpoint>).
    pub fn graphql_url(&self) -> Url {
        let mut url = self.api.clone();
        let path = url.path().trim_end_matches('/');
        let root = path.strip_suffix("/api/v4").unwrap_or(path).to_owned();
        url.set_path(&format!("{root}/api/graphql"));
        url
    }

    /// The web root the API serves: the REST base without its `/api/v4`
    /// (`https://gitlab.corp/api/v4` gives `https://gitlab.corp`).
    pub fn web_base(&self) -> String {
        let mut web = self.api.clone();
        let path = web.path().trim_end_matches('/');
        let path = path.strip_suffix("/api/v4").unwrap_or(path).to_owned();
        web.set_path(&path);
        web.as_str().trim_end_matches('/').to_owned()
    }
}

/// How the API names a project: by its full path (nested groups included,
/// sent URL-encoded as one segment: `group%2Fsub%2Fproject`) or by its
/// numeric id.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ProjectId {
    /// The full path, `group/sub/project`.
    Path(String),
    /// The numeric id.
    Id(u64),
}

impl ProjectId {
    /// The full path of `repo` (`owner/name`, the owner holding every group).
    pub fn of(repo: &RepoRef) -> ProjectId {
        ProjectId::Path(repo.full_name())
    }

    /// The path segment before encoding (`group/sub/project`, `42`).
    pub(crate) fn segment(&self) -> String {
        match self {
            ProjectId::Path(path) => path.clone(),
            ProjectId::Id(id) => id.to_string(),
        }
    }
}

impl fmt::Display for ProjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProjectId::Path(path) => f.write_str(path),
            ProjectId::Id(id) => write!(f, "project {id}"),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;

    #[test]
    fn hosts_give_api_v4() {
        let e = GitLabEndpoints::for_host("gitlab.com").unwrap();
        assert_eq!(e.api.as_str(), "https://gitlab.com/api/v4");
        assert_eq!(
            e.api_url("/user").as_str(),
            "https://gitlab.com/api/v4/user"
        );
        assert_eq!(e.web_base(), "https://gitlab.com");
        assert_eq!(e.graphql_url().as_str(), "https://gitlab.com/api/graphql");
        let e = GitLabEndpoints::for_host("gitlab.corp:8443").unwrap();
        assert_eq!(e.api.as_str(), "https://gitlab.corp:8443/api/v4");
        assert!(GitLabEndpoints::for_host("evil.com/x").is_err());
        assert!(is_gitlab_dot_com("GitLab.com"));
        assert!(!is_gitlab_dot_com("gitlab.corp"));
    }

    #[test]
    fn an_api_url_is_the_base_as_given() {
        let e = GitLabEndpoints::from_api_url("http://127.0.0.1:4000/api/v4/").unwrap();
        assert_eq!(e.api.as_str(), "http://127.0.0.1:4000/api/v4");
        assert_eq!(e.web_base(), "http://127.0.0.1:4000");
        let e = GitLabEndpoints::from_api_url("https://h/gitlab/api/v4").unwrap();
        assert_eq!(e.web_base(), "https://h/gitlab");
        assert_eq!(e.graphql_url().as_str(), "https://h/gitlab/api/graphql");
        assert!(GitLabEndpoints::from_api_url("http://tok@h/api/v4").is_err());
        assert!(GitLabEndpoints::from_api_url("http://h/api/v4?private_token=x").is_err());
    }

    #[test]
    fn projects_by_path_or_id() {
        let repo = RepoRef {
            host: "gitlab.com".into(),
            owner: "group/sub".into(),
            name: "project".into(),
        };
        assert_eq!(ProjectId::of(&repo).segment(), "group/sub/project");
        assert_eq!(ProjectId::Id(42).segment(), "42");
        assert_eq!(ProjectId::Id(42).to_string(), "project 42");
    }
}
