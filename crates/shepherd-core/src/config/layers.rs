//! Layers (repository file, user file, environment, flags), their merging
//! over the defaults, and the checks between keys after merging.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use toml::{Table, Value};

use super::error::ConfigError;
use super::keys::{check_table, key_doc, Kind};
use super::names::{AgentRole, ApproveMode, CommandSpec, OnExhaust, Provider};
use super::paths::REPO_CONFIG_PATHS;
use super::sections::{Config, DEFAULT_CONFIG_TOML};
use crate::gate::GateConfig;

/// Where a layer comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The repository's config file, by path.
    Repo(String),
    /// The user's config file, by path.
    User(String),
    /// `SHEPHERD_*` environment variables.
    Env,
    /// Command-line flags.
    Flags,
    /// The pull request head's config file, by repository path: untrusted,
    /// see `HeadConfig`.
    PrHead(String),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Repo(path) | Source::User(path) => f.write_str(path),
            Source::Env => f.write_str("the environment"),
            Source::Flags => f.write_str("command-line flags"),
            Source::PrHead(path) => write!(f, "{path} on the pull request's head"),
        }
    }
}

/// What a layer holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LayerContent {
    /// The text of a TOML file.
    Toml(String),
    /// Environment variables of [`ENV_VARS`] that are set, as (name, value).
    Env(Vec<(String, String)>),
    /// Flag values.
    Flags(Overrides),
}

/// One layer of configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigLayer {
    /// Where it comes from (named in errors).
    pub source: Source,
    /// What it says.
    pub content: LayerContent,
}

impl ConfigLayer {
    /// The repository's config file.
    pub fn repo(path: impl Into<String>, text: impl Into<String>) -> Self {
        ConfigLayer {
            source: Source::Repo(path.into()),
            content: LayerContent::Toml(text.into()),
        }
    }

    /// The user's config file.
    pub fn user(path: impl Into<String>, text: impl Into<String>) -> Self {
        ConfigLayer {
            source: Source::User(path.into()),
            content: LayerContent::Toml(text.into()),
        }
    }

    /// The environment: `lookup` is asked for each variable of [`ENV_VARS`]
    /// (pass `|k| std::env::var(k).ok()`). An empty value counts as unset.
    pub fn env(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let vars = ENV_VARS
            .iter()
            .filter_map(|v| {
                lookup(v.name)
                    .filter(|value| !value.is_empty())
                    .map(|value| (v.name.to_string(), value))
            })
            .collect();
        ConfigLayer {
            source: Source::Env,
            content: LayerContent::Env(vars),
        }
    }

    /// Command-line flags.
    pub fn flags(overrides: Overrides) -> Self {
        ConfigLayer {
            source: Source::Flags,
            content: LayerContent::Flags(overrides),
        }
    }
}

/// The settings command-line flags can override; `None` leaves a key alone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overrides {
    /// `agent.provider`.
    pub agent_provider: Option<Provider>,
    /// `agent.model`.
    pub agent_model: Option<String>,
    /// `agent.timeout_secs`.
    pub agent_timeout_secs: Option<u64>,
    /// `loop.max_rounds`.
    pub max_rounds: Option<u32>,
    /// `loop.on_exhaust`.
    pub on_exhaust: Option<OnExhaust>,
    /// `approve.mode`.
    pub approve: Option<ApproveMode>,
    /// `approve.resolve_wontfix`.
    pub resolve_wontfix: Option<bool>,
    /// `approve.reply_needs_human`.
    pub reply_needs_human: Option<bool>,
    /// `cluster.enabled`.
    pub cluster_enabled: Option<bool>,
    /// `verify.command`.
    pub verify_command: Option<CommandSpec>,
    /// `ci.timeout_secs`.
    pub ci_timeout_secs: Option<u64>,
    /// `review.enabled`.
    pub review_enabled: Option<bool>,
}

impl Overrides {
    /// The overrides as (key, value) pairs.
    pub(super) fn entries(&self) -> Vec<(&'static str, Value)> {
        let mut out = Vec::new();
        let s = |v: &str| Value::String(v.to_string());
        let int = |v: u64| Value::Integer(i64::try_from(v).unwrap_or(i64::MAX));
        if let Some(v) = self.agent_provider {
            out.push(("agent.provider", s(v.as_str())));
        }
        if let Some(v) = &self.agent_model {
            out.push(("agent.model", s(v)));
        }
        if let Some(v) = self.agent_timeout_secs {
            out.push(("agent.timeout_secs", int(v)));
        }
        if let Some(v) = self.max_rounds {
            out.push(("loop.max_rounds", int(u64::from(v))));
        }
        if let Some(v) = self.on_exhaust {
            out.push(("loop.on_exhaust", s(v.as_str())));
        }
        if let Some(v) = self.approve {
            out.push(("approve.mode", s(v.as_str())));
        }
        if let Some(v) = self.resolve_wontfix {
            out.push(("approve.resolve_wontfix", Value::Boolean(v)));
        }
        if let Some(v) = self.reply_needs_human {
            out.push(("approve.reply_needs_human", Value::Boolean(v)));
        }
        if let Some(v) = self.cluster_enabled {
            out.push(("cluster.enabled", Value::Boolean(v)));
        }
        if let Some(v) = &self.verify_command {
            out.push(("verify.command", command_value(v)));
        }
        if let Some(v) = self.ci_timeout_secs {
            out.push(("ci.timeout_secs", int(v)));
        }
        if let Some(v) = self.review_enabled {
            out.push(("review.enabled", Value::Boolean(v)));
        }
        out
    }
}

pub(super) fn command_value(c: &CommandSpec) -> Value {
    match c {
        CommandSpec::Shell(line) => Value::String(line.clone()),
        CommandSpec::Argv(argv) => Value::Array(argv.iter().cloned().map(Value::String).collect()),
    }
}

/// One environment variable Shepherd reads as configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnvVar {
    /// The variable (`SHEPHERD_MAX_ROUNDS`).
    pub name: &'static str,
    /// The key it sets (`loop.max_rounds`).
    pub key: &'static str,
}

/// The environment variables read by [`ConfigLayer::env`]. Booleans accept
/// `true/false`, `1/0`, `yes/no`, `on/off`; a command is a shell line.
pub const ENV_VARS: &[EnvVar] = &[
    EnvVar {
        name: "SHEPHERD_AGENT",
        key: "agent.provider",
    },
    EnvVar {
        name: "SHEPHERD_MODEL",
        key: "agent.model",
    },
    EnvVar {
        name: "SHEPHERD_AGENT_TIMEOUT",
        key: "agent.timeout_secs",
    },
    EnvVar {
        name: "SHEPHERD_MAX_ROUNDS",
        key: "loop.max_rounds",
    },
    EnvVar {
        name: "SHEPHERD_ON_EXHAUST",
        key: "loop.on_exhaust",
    },
    EnvVar {
        name: "SHEPHERD_APPROVE",
        key: "approve.mode",
    },
    EnvVar {
        name: "SHEPHERD_RESOLVE_WONTFIX",
        key: "approve.resolve_wontfix",
    },
    EnvVar {
        name: "SHEPHERD_CLUSTER",
        key: "cluster.enabled",
    },
    EnvVar {
        name: "SHEPHERD_VERIFY",
        key: "verify.command",
    },
    EnvVar {
        name: "SHEPHERD_CI_TIMEOUT",
        key: "ci.timeout_secs",
    },
    EnvVar {
        name: "SHEPHERD_REVIEW",
        key: "review.enabled",
    },
];

/// The environment variable that names the user config file instead of the
/// default location ([`user_config_path`]).
pub const CONFIG_PATH_ENV: &str = "SHEPHERD_CONFIG";

/// Which repository config file to read, given which exist (paths relative
/// to the repository root, as in [`REPO_CONFIG_PATHS`]). Both existing is an
/// error: one would silently be ignored.
pub fn repo_config_path(
    exists: impl Fn(&str) -> bool,
) -> Result<Option<&'static str>, ConfigError> {
    let found: Vec<&'static str> = REPO_CONFIG_PATHS
        .iter()
        .copied()
        .filter(|p| exists(p))
        .collect();
    match found.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(*one)),
        _ => Err(ConfigError::AmbiguousRepoConfig),
    }
}

/// Where the user's config file is: `$SHEPHERD_CONFIG`, else
/// `$XDG_CONFIG_HOME/shepherd/config.toml` (when absolute), else
/// `$HOME/.config/shepherd/config.toml`; `None` without a home.
pub fn user_config_path(lookup: impl Fn(&str) -> Option<String>) -> Option<String> {
    let var = |k: &str| lookup(k).filter(|v| !v.is_empty());
    if let Some(path) = var(CONFIG_PATH_ENV) {
        return Some(path);
    }
    if let Some(xdg) = var("XDG_CONFIG_HOME").filter(|x| x.starts_with('/')) {
        return Some(format!(
            "{}/shepherd/config.toml",
            xdg.trim_end_matches('/')
        ));
    }
    var("HOME").map(|home| {
        format!(
            "{}/.config/shepherd/config.toml",
            home.trim_end_matches('/')
        )
    })
}

/// For each key set by the layers, where the value in effect came from
/// (a path, `environment variable SHEPHERD_…`, or `command-line flags`).
pub type Origins = BTreeMap<String, String>;

impl Config {
    /// Applies the layers in order (later ones override earlier ones key by
    /// key) over the defaults, and validates the result.
    pub fn layered(layers: &[ConfigLayer]) -> Result<Config, ConfigError> {
        Self::layered_with_origins(layers).map(|(config, _)| config)
    }

    /// [`Config::layered`], also telling where each set key came from (for
    /// `shepherd doctor`).
    pub fn layered_with_origins(layers: &[ConfigLayer]) -> Result<(Config, Origins), ConfigError> {
        let mut merged = Table::new();
        let mut origins = Origins::new();
        for layer in layers {
            for (origin, table) in layer_tables(layer)? {
                check_table(&table, &mut Vec::new(), &origin)?;
                merge(&mut merged, table, &mut Vec::new(), &origin, &mut origins);
            }
        }
        let config: Config = Value::Table(merged)
            .try_into()
            .map_err(|e: toml::de::Error| {
                // The key table checked every value already; this is a mismatch
                // between the table and the types, reported rather than hidden.
                ConfigError::InvalidValue {
                    key: "(configuration)".to_string(),
                    origin: "the merged configuration".to_string(),
                    reason: e.message().to_string(),
                }
            })?;
        config.validate(&origins)?;
        Ok((config, origins))
    }

    /// The embedded default configuration, with its comments.
    pub fn default_toml() -> &'static str {
        DEFAULT_CONFIG_TOML
    }

    /// The configuration as TOML (keys without a value are left out).
    pub fn to_toml(&self) -> String {
        match toml::to_string_pretty(self) {
            Ok(text) => text,
            // Unreachable: every field is a string, integer, boolean, array
            // or table, all of which TOML can write (tested on a config that
            // sets every key).
            Err(e) => format!("# the configuration could not be written as TOML: {e}\n"),
        }
    }

    /// What the honesty gate reads.
    pub fn gate_config(&self) -> GateConfig {
        GateConfig {
            resolve_wontfix: self.approve.resolve_wontfix,
            resolve_human_threads: self.resolve.human_threads,
        }
    }

    /// Checks between keys, after merging.
    fn validate(&self, origins: &Origins) -> Result<(), ConfigError> {
        let origin_of = |key: &str| {
            origins
                .get(key)
                .cloned()
                .unwrap_or_else(|| "the defaults".to_string())
        };
        let command = Provider::Command.as_str();
        if self.agent.provider == Provider::Command && self.agent.command.is_none() {
            return Err(ConfigError::Missing {
                key: "agent.command".to_string(),
                because_key: "agent.provider".to_string(),
                because_value: format!("\"{command}\""),
                origin: origin_of("agent.provider"),
            });
        }
        for role in AgentRole::ALL {
            let settings = self.agent.for_role(role);
            if settings.provider == Provider::Command && settings.command.is_none() {
                let because_key = format!("agent.roles.{role}.provider");
                return Err(ConfigError::Missing {
                    key: format!("agent.roles.{role}.command"),
                    because_value: format!("\"{command}\""),
                    origin: origin_of(&because_key),
                    because_key,
                });
            }
        }
        // A host is one forge: named in a later forge's list after an
        // earlier one's, the later list is wrong.
        let mut seen: Vec<(&str, BTreeSet<String>)> = Vec::new();
        for kind in crate::ForgeKind::ALL {
            let key = kind.spec().hosts_key;
            let hosts = self.forge.hosts_of(kind);
            for (other_key, other) in &seen {
                if let Some(host) = hosts
                    .iter()
                    .find(|h| other.contains(&h.to_ascii_lowercase()))
                {
                    return Err(ConfigError::InvalidValue {
                        key: key.to_string(),
                        origin: origin_of(key),
                        reason: format!("`{host}` is also in `{other_key}`; a host is one forge"),
                    });
                }
            }
            seen.push((key, hosts.iter().map(|h| h.to_ascii_lowercase()).collect()));
        }
        Ok(())
    }
}

/// `text` as a TOML table; a syntax error names `origin`.
pub(super) fn parse_table(text: &str, origin: &str) -> Result<Table, ConfigError> {
    text.parse()
        .map_err(|e: toml::de::Error| ConfigError::Syntax {
            origin: origin.to_owned(),
            message: e.to_string(),
        })
}

/// The tables a layer contributes, each with the origin its errors name.
pub(super) fn layer_tables(layer: &ConfigLayer) -> Result<Vec<(String, Table)>, ConfigError> {
    let origin = layer.source.to_string();
    match &layer.content {
        LayerContent::Toml(text) => {
            let table = parse_table(text, &origin)?;
            Ok(vec![(origin, table)])
        }
        LayerContent::Env(vars) => vars
            .iter()
            .map(|(name, raw)| {
                let origin = format!("environment variable {name}");
                let Some(var) = ENV_VARS.iter().find(|v| v.name == name) else {
                    return Err(ConfigError::UnknownKey {
                        key: name.clone(),
                        origin,
                        suggestion: None,
                    });
                };
                let value = env_value(var.key, raw, &origin)?;
                Ok((origin, nested(var.key, value)))
            })
            .collect(),
        LayerContent::Flags(overrides) => {
            let mut table = Table::new();
            for (key, value) in overrides.entries() {
                merge(
                    &mut table,
                    nested(key, value),
                    &mut Vec::new(),
                    &origin,
                    &mut Origins::new(),
                );
            }
            Ok(vec![(origin, table)])
        }
    }
}

/// A table holding `value` at the dotted `key`.
pub(super) fn nested(key: &str, value: Value) -> Table {
    let mut value = value;
    for segment in key.rsplit('.') {
        let mut t = Table::new();
        t.insert(segment.to_string(), value);
        value = Value::Table(t);
    }
    match value {
        Value::Table(t) => t,
        // `rsplit` yields at least one segment, so `value` is a table here.
        _ => Table::new(),
    }
}

/// Parses an environment variable's text as the type of its key.
pub(super) fn env_value(key: &str, raw: &str, origin: &str) -> Result<Value, ConfigError> {
    let invalid = |reason: String| ConfigError::InvalidValue {
        key: key.to_string(),
        origin: origin.to_string(),
        reason,
    };
    let Some(doc) = key_doc(&key.split('.').collect::<Vec<_>>()) else {
        return Err(ConfigError::UnknownKey {
            key: key.to_string(),
            origin: origin.to_string(),
            suggestion: None,
        });
    };
    let raw = raw.trim();
    Ok(match doc.kind {
        Kind::Bool => match raw.to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" | "on" => Value::Boolean(true),
            "false" | "0" | "no" | "off" => Value::Boolean(false),
            _ => {
                return Err(invalid(format!(
                    "`{raw}` is not a boolean (true/false, 1/0, yes/no, on/off)"
                )))
            }
        },
        Kind::Int { .. } => Value::Integer(
            raw.parse()
                .map_err(|_| invalid(format!("`{raw}` is not an integer")))?,
        ),
        Kind::Str | Kind::Enum(_) | Kind::Command => Value::String(raw.to_string()),
        Kind::LoginMap => {
            return Err(invalid(
                "a table of logins is set in a config file, not in the environment".to_string(),
            ))
        }
        Kind::StrList => Value::Array(
            raw.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| Value::String(s.to_string()))
                .collect(),
        ),
    })
}

pub(super) fn merge(
    into: &mut Table,
    from: Table,
    path: &mut Vec<String>,
    origin: &str,
    origins: &mut Origins,
) {
    for (name, value) in from {
        path.push(name.clone());
        match value {
            Value::Table(src) => {
                let slot = into
                    .entry(name)
                    .or_insert_with(|| Value::Table(Table::new()));
                if !slot.is_table() {
                    *slot = Value::Table(Table::new());
                }
                if let Value::Table(dst) = slot {
                    merge(dst, src, path, origin, origins);
                }
            }
            other => {
                origins.insert(path.join("."), origin.to_string());
                into.insert(name, other);
            }
        }
        path.pop();
    }
}
