//! Where GitHub's REST and GraphQL APIs live for a host.

use url::Url;

use crate::error::{ForgeError, Result};
pub use crate::hosts::is_github_dot_com;
use crate::url_path::{check_host, join_path, join_segments, parse_api_url};

/// The REST base URL and the GraphQL URL of one GitHub installation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitHubEndpoints {
    /// REST base (`https://api.github.com`, `https://HOST/api/v3`); paths such
    /// as `/repos/o/r` are appended to it.
    pub rest: Url,
    /// The GraphQL endpoint (`https://api.github.com/graphql`).
    pub graphql: Url,
}

impl GitHubEndpoints {
    /// The endpoints for a forge host: github.com gives `https://api.github.com`
    /// and `https://api.github.com/graphql`; any other host is taken for GitHub
    /// Enterprise Server: `https://HOST/api/v3` and `https://HOST/api/graphql`.
    /// A port in `host` (`ghe.corp:8443`) is kept.
    pub fn for_host(host: &str) -> Result<Self> {
        let host = check_host(host)?;
        if is_github_dot_com(host) {
            return Ok(GitHubEndpoints {
                rest: parse("https://api.github.com")?,
                graphql: parse("https://api.github.com/graphql")?,
            });
        }
        Ok(GitHubEndpoints {
            rest: parse(&format!("https://{host}/api/v3"))?,
            graphql: parse(&format!("https://{host}/api/graphql"))?,
        })
    }

    /// The endpoints for an explicit `--api-url`. A URL whose path ends with
    /// `/api/v3` (Enterprise style) is the REST base and GraphQL is its sibling
    /// `/api/graphql`; any other URL is the REST base and GraphQL is
    /// `<url>/graphql` (github.com style: `http://127.0.0.1:PORT` against the
    /// emulator gives `http://127.0.0.1:PORT/graphql`).
    pub fn from_api_url(url: &str) -> Result<Self> {
        let rest = parse_api_url(url)?;
        let path = rest.path().to_owned();
        let mut graphql = rest.clone();
        match path.strip_suffix("/api/v3") {
            Some(prefix) => graphql.set_path(&format!("{prefix}/api/graphql")),
            None => graphql.set_path(&format!("{}/graphql", path.trim_end_matches('/'))),
        }
        Ok(GitHubEndpoints { rest, graphql })
    }

    /// The REST URL of `path` (`/repos/o/r/pulls/1`), under the REST base.
    pub fn rest_url(&self, path: &str) -> Url {
        join_path(&self.rest, path)
    }

    /// The REST URL made of `segments` under the REST base, each one
    /// percent-encoded as a whole: a branch `feature/x` or a label `a b/c`
    /// stays one segment (`feature%2Fx`). An empty segment, `.` or `..`
    /// (which URLs treat as directory steps, even encoded) is refused.
    pub fn rest_url_segments(&self, segments: &[&str]) -> Result<Url> {
        join_segments(&self.rest, segments)
    }
}

fn parse(url: &str) -> Result<Url> {
    Url::parse(url).map_err(|err| ForgeError::InvalidEndpoint {
        input: url.to_owned(),
        reason: err.to_string(),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;

    #[test]
    fn github_dot_com() {
        let e = GitHubEndpoints::for_host("github.com").unwrap();
        assert_eq!(e.rest.as_str(), "https://api.github.com/");
        assert_eq!(e.graphql.as_str(), "https://api.github.com/graphql");
        assert_eq!(
            e.rest_url("/repos/o/r/pulls/1").as_str(),
            "https://api.github.com/repos/o/r/pulls/1"
        );
    }

    #[test]
    fn enterprise_host_keeps_its_port() {
        let e = GitHubEndpoints::for_host("ghe.corp:8443").unwrap();
        assert_eq!(e.rest.as_str(), "https://ghe.corp:8443/api/v3");
        assert_eq!(e.graphql.as_str(), "https://ghe.corp:8443/api/graphql");
        assert_eq!(
            e.rest_url("repos/o/r").as_str(),
            "https://ghe.corp:8443/api/v3/repos/o/r"
        );
    }

    #[test]
    fn segments_are_encoded_whole() {
        let e = GitHubEndpoints::from_api_url("http://127.0.0.1:4000/api/v3/").unwrap();
        assert_eq!(
            e.rest_url_segments(&["repos", "o", "r", "branches", "feature/x y", "protection"])
                .unwrap()
                .as_str(),
            "http://127.0.0.1:4000/api/v3/repos/o/r/branches/feature%2Fx%20y/protection"
        );
        let e = GitHubEndpoints::for_host("github.com").unwrap();
        assert_eq!(
            e.rest_url_segments(&["repos", "o", "r", "issues", "1", "labels", "a?b#c"])
                .unwrap()
                .as_str(),
            "https://api.github.com/repos/o/r/issues/1/labels/a%3Fb%23c"
        );
        assert_eq!(
            e.rest_url_segments(&["labels", "v1.2", "é", "..."])
                .unwrap()
                .as_str(),
            "https://api.github.com/labels/v1.2/%C3%A9/..."
        );
        for bad in ["", ".", ".."] {
            assert!(e.rest_url_segments(&["labels", bad]).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn bad_hosts_are_refused() {
        assert!(GitHubEndpoints::for_host("").is_err());
        assert!(GitHubEndpoints::for_host("evil.com/x").is_err());
        assert!(GitHubEndpoints::for_host("user@evil.com").is_err());
    }

    #[test]
    fn api_url_github_style() {
        let e = GitHubEndpoints::from_api_url("http://127.0.0.1:4000").unwrap();
        assert_eq!(e.rest.as_str(), "http://127.0.0.1:4000/");
        assert_eq!(e.graphql.as_str(), "http://127.0.0.1:4000/graphql");
        assert_eq!(
            e.rest_url("/repos/o/r").as_str(),
            "http://127.0.0.1:4000/repos/o/r"
        );
        let e = GitHubEndpoints::from_api_url("http://127.0.0.1:4000/gh/").unwrap();
        assert_eq!(e.graphql.as_str(), "http://127.0.0.1:4000/gh/graphql");
        assert_eq!(
            e.rest_url("/repos/o/r").as_str(),
            "http://127.0.0.1:4000/gh/repos/o/r"
        );
    }

    #[test]
    fn api_url_enterprise_style() {
        let e = GitHubEndpoints::from_api_url("http://127.0.0.1:4000/api/v3/").unwrap();
        assert_eq!(e.rest.as_str(), "http://127.0.0.1:4000/api/v3");
        assert_eq!(e.graphql.as_str(), "http://127.0.0.1:4000/api/graphql");
        assert_eq!(
            e.rest_url("/repos/o/r").as_str(),
            "http://127.0.0.1:4000/api/v3/repos/o/r"
        );
    }

    #[test]
    fn api_url_refuses_credentials_and_other_schemes() {
        assert!(GitHubEndpoints::from_api_url("http://tok@127.0.0.1:4000").is_err());
        assert!(GitHubEndpoints::from_api_url("ftp://127.0.0.1").is_err());
        assert!(GitHubEndpoints::from_api_url("not a url").is_err());
        assert!(GitHubEndpoints::from_api_url("http://h/?access_token=x").is_err());
    }
}
