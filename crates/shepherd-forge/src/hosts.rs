//! The public hosts of each forge: below the endpoints (which build URLs for
//! them) and the token discovery (which looks for their credentials).

/// Whether `host` is github.com (as opposed to an Enterprise Server host).
pub fn is_github_dot_com(host: &str) -> bool {
    let host = host.trim().to_ascii_lowercase();
    host == "github.com" || host == "www.github.com"
}

/// Whether `host` is gitlab.com (as opposed to a self-managed host).
pub fn is_gitlab_dot_com(host: &str) -> bool {
    let host = host.trim().to_ascii_lowercase();
    host == "gitlab.com" || host == "www.gitlab.com"
}
