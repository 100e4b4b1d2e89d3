//! Where a repository's configuration file may be: below both the layers
//! (which look there) and the errors (which name both when both exist).

/// Where a repository's configuration may live, relative to its root, in the
/// order [`repo_config_path`](super::repo_config_path) looks.
pub const REPO_CONFIG_PATHS: [&str; 2] = ["shepherd.toml", ".shepherd/config.toml"];
