//! Where GitHub's REST and GraphQL APIs live for a host.

use url::Url;

use crate::error::{ForgeError, Result};

/// Whether `host` is github.com (as opposed to an Enterprise Server host).
pub fn is_github_dot_com(host: &str) -> bool {
    let host = host.trim().to_ascii_lowercase();
    host == "github.com" || host == "www.github.com"
}

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
        let invalid = |reason: String| ForgeError::InvalidEndpoint {
            input: host.to_owned(),
            reason,
        };
        let host = host.trim();
        if host.is_empty() || host.contains(['/', '@', '?', '#', ' ']) {
            return Err(invalid(
                "expected a host name, optionally with a port".into(),
            ));
        }
        if is_github_dot_com(host) {
            return Ok(GitHubEndpoints {
                rest: parse("https://api.github.com")?,
                graphql: parse("https://api.github.com/graphql")?,
            });
        }
        let rest = Url::parse(&format!("https://{host}/api/v3"))
            .map_err(|err| invalid(err.to_string()))?;
        let graphql = Url::parse(&format!("https://{host}/api/graphql"))
            .map_err(|err| invalid(err.to_string()))?;
        Ok(GitHubEndpoints { rest, graphql })
    }

    /// The endpoints for an explicit `--api-url`. A URL whose path ends with
    /// `/api/v3` (Enterprise style) is the REST base and GraphQL is its sibling
    /// `/api/graphql`; any other URL is the REST base and GraphQL is
    /// `<url>/graphql` (github.com style: `http://127.0.0.1:PORT` against the
    /// emulator gives `http://127.0.0.1:PORT/graphql`).
    pub fn from_api_url(url: &str) -> Result<Self> {
        let invalid = |reason: String| ForgeError::InvalidEndpoint {
            input: url.to_owned(),
            reason,
        };
        let mut rest = Url::parse(url.trim()).map_err(|err| invalid(err.to_string()))?;
        if !matches!(rest.scheme(), "http" | "https") {
            return Err(invalid("the API URL must be http or https".into()));
        }
        if rest.cannot_be_a_base() || rest.host_str().is_none() {
            return Err(invalid("the API URL must have a host".into()));
        }
        if !rest.username().is_empty() || rest.password().is_some() {
            // Credentials belong in the token, and a URL is printed in messages.
            return Err(invalid("the API URL must not carry credentials".into()));
        }
        if rest.query().is_some() || rest.fragment().is_some() {
            return Err(invalid(
                "the API URL must not have a query or fragment".into(),
            ));
        }
        let path = rest.path().trim_end_matches('/').to_owned();
        rest.set_path(&path);
        let mut graphql = rest.clone();
        match path.strip_suffix("/api/v3") {
            Some(prefix) => graphql.set_path(&format!("{prefix}/api/graphql")),
            None => graphql.set_path(&format!("{path}/graphql")),
        }
        Ok(GitHubEndpoints { rest, graphql })
    }

    /// The REST URL of `path` (`/repos/o/r/pulls/1`), under the REST base.
    pub fn rest_url(&self, path: &str) -> Url {
        let mut url = self.rest.clone();
        let base = url.path().trim_end_matches('/');
        let path = format!("{base}/{}", path.trim_start_matches('/'));
        url.set_path(&path);
        url
    }

    /// The REST URL made of `segments` under the REST base, each one
    /// percent-encoded as a whole: a branch `feature/x` or a label `a b/c`
    /// stays one segment (`feature%2Fx`). An empty segment, `.` or `..`
    /// (which URLs treat as directory steps, even encoded) is refused.
    pub fn rest_url_segments(&self, segments: &[&str]) -> Result<Url> {
        let mut path = self.rest.path().trim_end_matches('/').to_owned();
        for segment in segments {
            if matches!(*segment, "" | "." | "..") {
                return Err(ForgeError::InvalidEndpoint {
                    input: format!("path segment `{segment}`"),
                    reason: "an empty, `.` or `..` segment cannot name a resource".into(),
                });
            }
            path.push('/');
            path.push_str(&encode_segment(segment));
        }
        let mut url = self.rest.clone();
        url.set_path(&path);
        Ok(url)
    }
}

/// Percent-encodes every byte but RFC 3986's unreserved ones.
fn encode_segment(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for byte in segment.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
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
