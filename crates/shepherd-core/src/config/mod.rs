//! Configuration (SPEC section 10): the typed settings, the embedded default
//! configuration, the layering of repository file, user file, environment and
//! flags, and the reference table the README's configuration section is
//! rendered from.
//!
//! Nothing here reads files or the environment: callers pass the text of each
//! file and a lookup for environment variables.
//!
//! # Layers
//!
//! [`Config::layered`] applies [`ConfigLayer`]s in the order given, each
//! overriding the ones before it key by key: the repository's `shepherd.toml`
//! (or `.shepherd/config.toml`, see [`repo_config_path`]), then the user's
//! config ([`user_config_path`]), then the environment ([`ENV_VARS`]), then
//! flags ([`Overrides`]). Tables merge; any other value (arrays included)
//! replaces the earlier one whole. A key no layer sets has its default
//! ([`Config::default`], equal to [`DEFAULT_CONFIG_TOML`]). TOML has no null,
//! so a later layer cannot unset an optional key an earlier one set.
//!
//! # Errors
//!
//! Every layer is checked on its own against the key table before merging, so
//! an error names the key and where it came from: the file's path, the
//! environment variable, or the flags. Unknown keys suggest a close name
//! (``unknown key `loop.max_round` in /repo/shepherd.toml; did you mean
//! `max_rounds`?``). The first error found is returned.
//!
//! # Validation decisions
//!
//! - `loop.max_rounds` is at least 1.
//! - `cluster.min_volume` is at least 2: a cluster has two items, and a volume
//!   of 1 would open the gate on every round.
//! - `cluster.escalate_after = 0` disables escalation.
//! - `agent.idle_timeout_secs = 0` disables the idle timeout; every other
//!   timeout and `ci.poll_interval_secs` is at least 1.
//!   `ci.appear_timeout_secs = 0` means checks absent at the first look stay
//!   absent.
//! - A provider of `command` (in `[agent]` or a role) needs a command; a
//!   command set while another provider is chosen is ignored (a later layer
//!   may switch providers).
//! - A host may not be listed as both GitHub and GitLab; hosts are written
//!   without scheme or path.
//! - `agent.env` refuses names of forge credentials
//!   ([`is_forge_credential_name`]).
//! - Strings that name something (model, logins, globs, hosts, commands) may
//!   not be empty.

mod error;
mod head;
mod keys;
mod layers;
mod names;
mod paths;
mod reference;
mod sections;
#[cfg(test)]
mod tests;

pub use error::*;
pub use head::{HeadConfig, LayerRecord, SourceRecord};
pub use keys::*;
pub use layers::*;
pub use names::*;
pub use paths::REPO_CONFIG_PATHS;
pub use reference::*;
pub use sections::*;
