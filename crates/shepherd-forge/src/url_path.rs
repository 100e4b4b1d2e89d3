//! URL building shared by both forges' endpoints: checking a host or an
//! explicit API URL, and joining paths or percent-encoded segments under a
//! base URL.

use url::Url;

use crate::error::{ForgeError, Result};

/// Checks that `host` is a bare host name, optionally with a port.
pub(crate) fn check_host(host: &str) -> Result<&str> {
    let host = host.trim();
    if host.is_empty() || host.contains(['/', '@', '?', '#', ' ']) {
        return Err(ForgeError::InvalidEndpoint {
            input: host.to_owned(),
            reason: "expected a host name, optionally with a port".into(),
        });
    }
    Ok(host)
}

/// Parses an explicit API URL: http or https, with a host, without
/// credentials, query or fragment; the trailing `/` of its path is dropped.
pub(crate) fn parse_api_url(url: &str) -> Result<Url> {
    let invalid = |reason: String| ForgeError::InvalidEndpoint {
        input: url.to_owned(),
        reason,
    };
    let mut parsed = Url::parse(url.trim()).map_err(|err| invalid(err.to_string()))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(invalid("the API URL must be http or https".into()));
    }
    if parsed.cannot_be_a_base() || parsed.host_str().is_none() {
        return Err(invalid("the API URL must have a host".into()));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        // Credentials belong in the token, and a URL is printed in messages.
        return Err(invalid("the API URL must not carry credentials".into()));
    }
    if parsed.query().is_some() || parsed.fragment().is_some() {
        return Err(invalid(
            "the API URL must not have a query or fragment".into(),
        ));
    }
    let path = parsed.path().trim_end_matches('/').to_owned();
    parsed.set_path(&path);
    Ok(parsed)
}

/// `path` (`/repos/o/r`) appended to the path of `base`.
pub(crate) fn join_path(base: &Url, path: &str) -> Url {
    let mut url = base.clone();
    let prefix = url.path().trim_end_matches('/');
    let path = format!("{prefix}/{}", path.trim_start_matches('/'));
    url.set_path(&path);
    url
}

/// `segments` appended to the path of `base`, each percent-encoded as a
/// whole: a branch `feature/x` or a project path `group/sub/project` stays
/// one segment (`feature%2Fx`). An empty segment, `.` or `..` (which URLs
/// treat as directory steps, even encoded) is refused.
pub(crate) fn join_segments(base: &Url, segments: &[&str]) -> Result<Url> {
    let mut path = base.path().trim_end_matches('/').to_owned();
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
    let mut url = base.clone();
    url.set_path(&path);
    Ok(url)
}

/// Percent-encodes every byte but RFC 3986's unreserved ones.
pub(crate) fn encode_segment(segment: &str) -> String {
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

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;

    #[test]
    fn segments_keep_slashes_encoded() {
        let base = Url::parse("http://127.0.0.1:4000/api/v4").unwrap();
        let url =
            join_segments(&base, &["projects", "group/sub/project", "merge_requests"]).unwrap();
        assert_eq!(
            url.as_str(),
            "http://127.0.0.1:4000/api/v4/projects/group%2Fsub%2Fproject/merge_requests"
        );
        assert_eq!(
            url.path(),
            "/api/v4/projects/group%2Fsub%2Fproject/merge_requests"
        );
        assert_eq!(encode_segment("a.b_c-d~é"), "a.b_c-d~%C3%A9");
    }

    #[test]
    fn hosts_and_api_urls_are_checked() {
        assert_eq!(
            check_host(" gitlab.corp:8443 ").unwrap(),
            "gitlab.corp:8443"
        );
        assert!(check_host("evil.com/x").is_err());
        assert!(parse_api_url("http://tok@h/api/v4").is_err());
        assert_eq!(
            parse_api_url("http://h:1/api/v4/").unwrap().as_str(),
            "http://h:1/api/v4"
        );
    }
}
