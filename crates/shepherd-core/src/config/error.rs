//! What can be wrong with a configuration, and the helpers that word it.

use super::paths::REPO_CONFIG_PATHS;

/// What can be wrong with a configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A file is not valid TOML.
    #[error("invalid TOML in {origin}: {message}")]
    Syntax {
        /// Where the text came from (a path).
        origin: String,
        /// The parser's message, with line and column.
        message: String,
    },
    /// A key Shepherd does not know.
    #[error("unknown key `{key}` in {origin}{hint}", hint = did_you_mean(.suggestion))]
    UnknownKey {
        /// The dotted key (`loop.max_round`).
        key: String,
        /// Where it was set.
        origin: String,
        /// A known key with a close name, if there is one.
        suggestion: Option<String>,
    },
    /// A value of the wrong TOML type.
    #[error("wrong type for `{key}` in {origin}: expected {expected}, found {found}")]
    WrongType {
        /// The dotted key; an array element is written `key[i]`.
        key: String,
        /// Where it was set.
        origin: String,
        /// What the key takes (`an integer`).
        expected: &'static str,
        /// The TOML type found (`string`).
        found: &'static str,
    },
    /// A value of the right type that is not allowed.
    #[error("invalid value for `{key}` in {origin}: {reason}")]
    InvalidValue {
        /// The dotted key; an array element is written `key[i]`.
        key: String,
        /// Where it was set.
        origin: String,
        /// Why it is refused.
        reason: String,
    },
    /// A key another key's value makes necessary is not set.
    #[error("`{key}` is required because `{because_key}` is {because_value} (set in {origin})")]
    Missing {
        /// The key that must be set.
        key: String,
        /// The key whose value requires it.
        because_key: String,
        /// That value, as written in TOML.
        because_value: String,
        /// Where `because_key` was set.
        origin: String,
    },
    /// Both repository config files exist.
    #[error("both {} and {} exist in the repository; keep one", REPO_CONFIG_PATHS[0], REPO_CONFIG_PATHS[1])]
    AmbiguousRepoConfig,
}

pub(super) fn did_you_mean(suggestion: &Option<String>) -> String {
    match suggestion {
        Some(s) => format!("; did you mean `{s}`?"),
        None => String::new(),
    }
}

/// A value that is not one of a fixed set of names (`Provider`,
/// `OnExhaust`, `ApproveMode`, `AgentRole` from strings).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{value}` is not one of {expected}")]
pub struct ParseNameError {
    /// What was given.
    pub value: String,
    /// The accepted names, written out.
    pub expected: String,
}

pub(super) fn parse_name<T: Copy>(
    value: &str,
    all: &[T],
    name: impl Fn(T) -> &'static str,
) -> Result<T, ParseNameError> {
    all.iter()
        .copied()
        .find(|v| name(*v) == value)
        .ok_or_else(|| ParseNameError {
            value: value.to_string(),
            expected: quoted_list(all.iter().map(|v| name(*v))),
        })
}

pub(super) fn quoted_list<'a>(names: impl Iterator<Item = &'a str>) -> String {
    names
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
