//! The key table: every key's type, check and documentation; checking each
//! layer against it, with suggestions for unknown keys.

use std::collections::BTreeSet;

use super::error::{did_you_mean, quoted_list, ConfigError};
use super::names::{APPROVE_MODE_NAMES, ON_EXHAUST_NAMES, PROVIDER_NAMES, ROLE_NAMES};
use toml::{Table, Value};

/// The type of a key.
#[derive(Debug, Clone, Copy)]
pub(super) enum Kind {
    Bool,
    Int {
        min: i64,
        max: i64,
    },
    Str,
    Enum(&'static [&'static str]),
    StrList,
    /// A table of strings keyed by login.
    LoginMap,
    Command,
}

impl Kind {
    pub(super) fn expected(self) -> &'static str {
        match self {
            Kind::Bool => "a boolean",
            Kind::Int { .. } => "an integer",
            Kind::Str | Kind::Enum(_) => "a string",
            Kind::StrList => "an array of strings",
            Kind::LoginMap => "a table of strings",
            Kind::Command => "a string or an array of strings",
        }
    }

    pub(super) fn describe(self) -> String {
        match self {
            Kind::Bool => "boolean".to_string(),
            Kind::Int { min, .. } => format!("integer ≥ {min}"),
            Kind::Str => "string".to_string(),
            Kind::Enum(names) => format!("one of {}", quoted_list(names.iter().copied())),
            Kind::StrList => "array of strings".to_string(),
            Kind::LoginMap => "table of login = string".to_string(),
            Kind::Command => "string or array of strings".to_string(),
        }
    }
}

/// An extra check of a string value: `Err` holds the reason it is refused.
pub(super) type StrCheck = fn(&str) -> Result<(), String>;

/// One key: its dotted name (`<role>` stands for each role), type, an extra
/// check of each string, and its description.
pub(super) struct KeyDoc {
    pub(super) key: &'static str,
    pub(super) kind: Kind,
    pub(super) check: Option<StrCheck>,
    pub(super) doc: &'static str,
}

pub(super) const ROLE: &str = "<role>";
pub(super) const U32: i64 = u32::MAX as i64;
pub(super) const SECS: i64 = i64::MAX;

pub(super) const fn key(key: &'static str, kind: Kind, doc: &'static str) -> KeyDoc {
    KeyDoc {
        key,
        kind,
        check: None,
        doc,
    }
}

pub(super) const fn checked(
    key: &'static str,
    kind: Kind,
    check: StrCheck,
    doc: &'static str,
) -> KeyDoc {
    KeyDoc {
        key,
        kind,
        check: Some(check),
        doc,
    }
}

/// Every key. The README's table is rendered from this
/// ([`reference_markdown`]); tests keep it equal to the types and to
/// `default-config.toml`.
pub(super) static KEYS: &[KeyDoc] = &[
    key(
        "agent.provider",
        Kind::Enum(PROVIDER_NAMES),
        "Which agent runs every role unless a role overrides it. `builtin` needs no model: it applies \
         suggestion blocks and marks everything else needs-human.",
    ),
    checked("agent.model", Kind::Str, non_empty, "Model passed to the provider; unset uses the provider's own default."),
    key(
        "agent.timeout_secs",
        Kind::Int { min: 1, max: SECS },
        "Total seconds an agent call may take before its process group is killed.",
    ),
    key(
        "agent.idle_timeout_secs",
        Kind::Int { min: 0, max: SECS },
        "Seconds without output after which an agent call is killed; 0 disables.",
    ),
    key("agent.extra_args", Kind::StrList, "Extra arguments appended to the provider's command line."),
    checked(
        "agent.command",
        Kind::Command,
        non_empty,
        "The executable for `provider = \"command\"`: a string run by `sh -c`, or an array run directly. \
         It gets the task as JSON on stdin and answers JSON on stdout.",
    ),
    checked(
        "agent.env",
        Kind::StrList,
        env_name,
        "Extra environment variables passed to agents, beyond the built-in allow-list. Forge credentials \
         (`GITHUB_TOKEN`, `GH_TOKEN`, `GITLAB_TOKEN`, …) are refused.",
    ),
    key(
        "agent.roles.<role>.provider",
        Kind::Enum(PROVIDER_NAMES),
        "The provider of one role (`triage`, `fix`, `cluster-fix`, `fix-validation`, `review`, \
         `apply-review`, `report-narrative`); unset inherits `agent.provider`.",
    ),
    checked(
        "agent.roles.<role>.model",
        Kind::Str,
        non_empty,
        "The role's model; unset inherits `agent.model` when the role keeps the provider of `[agent]`.",
    ),
    key(
        "agent.roles.<role>.timeout_secs",
        Kind::Int { min: 1, max: SECS },
        "The role's total timeout; unset inherits `agent.timeout_secs`.",
    ),
    key(
        "agent.roles.<role>.idle_timeout_secs",
        Kind::Int { min: 0, max: SECS },
        "The role's idle timeout (0 disables); unset inherits `agent.idle_timeout_secs`.",
    ),
    key(
        "agent.roles.<role>.extra_args",
        Kind::StrList,
        "The role's extra arguments; unset inherits `agent.extra_args` when the role keeps the provider of `[agent]`.",
    ),
    checked(
        "agent.roles.<role>.command",
        Kind::Command,
        non_empty,
        "The role's command for provider `command`; unset inherits `agent.command` when the role keeps the \
         provider of `[agent]`.",
    ),
    key("loop.max_rounds", Kind::Int { min: 1, max: U32 }, "Most rounds a run makes."),
    key(
        "loop.on_exhaust",
        Kind::Enum(ON_EXHAUST_NAMES),
        "What reaching `max_rounds` without convergence does: `approval` pauses for a human, `fail` fails \
         the run. Neither reports success.",
    ),
    key(
        "loop.succeed_when_handed_off",
        Kind::Bool,
        "Whether a run that ends `handed-off` (the loop is done, but items wait for a person) exits 0; \
         by default it exits 5, so a CI job is not green while the PR is not clear.",
    ),
    key(
        "approve.mode",
        Kind::Enum(APPROVE_MODE_NAMES),
        "How reply-only decisions are approved: `prompt` asks on a terminal and pauses the run otherwise; \
         `auto` approves without a pause (CI); `label` approves only what a maintainer approved on the \
         forge (the `shepherd-approved` label or a `/shepherd approve` comment, covering feedback \
         published before it), and pauses otherwise (stateless CI).",
    ),
    key("approve.resolve_wontfix", Kind::Bool, "Whether approved wontfix decisions resolve their threads."),
    key(
        "approve.reply_needs_human",
        Kind::Bool,
        "Whether an item Shepherd could not judge (needs-human) gets the drafted reply on the forge; \
         false reports it to you only. A reply a person wrote at approval is always posted.",
    ),
    key(
        "resolve.human_threads",
        Kind::Bool,
        "Whether threads opened by a person may be resolved; false leaves them for the person.",
    ),
    key("cluster.enabled", Kind::Bool, "Whether related feedback is clustered and fixed at its root."),
    key(
        "cluster.min_volume",
        Kind::Int { min: 2, max: U32 },
        "New items in a round that open the cluster gate (a cluster has at least two items).",
    ),
    key(
        "cluster.escalate_after",
        Kind::Int { min: 0, max: U32 },
        "Consecutive fix rounds of new feedback on one area before it is escalated to a human; 0 disables \
         escalation.",
    ),
    checked(
        "verify.command",
        Kind::Command,
        non_empty,
        "The command that checks a fix: a string run by `sh -c`, or an array run directly. Unset: \
         `verify.sh`, `.shepherd/verify`, or the project's obvious test command.",
    ),
    key("verify.timeout_secs", Kind::Int { min: 1, max: SECS }, "Seconds the verify command may take."),
    key(
        "ci.timeout_secs",
        Kind::Int { min: 1, max: SECS },
        "Seconds to wait for the checks of a pushed head before the verdict is `UNKNOWN`.",
    ),
    key("ci.poll_interval_secs", Kind::Int { min: 1, max: SECS }, "The longest wait, in seconds, between two looks at the checks (the first looks come sooner: after 2, 4, 8 s)."),
    key(
        "ci.appear_timeout_secs",
        Kind::Int { min: 0, max: SECS },
        "Seconds to wait for checks to appear on a new head (within `ci.timeout_secs`).",
    ),
    key("ci.rerun_failed", Kind::Bool, "Whether failed jobs are re-run, at most once per head commit."),
    key(
        "ci.repair_attempts",
        Kind::Int { min: 0, max: U32 },
        "Fixes tried per failing check that Shepherd's own push broke, per run, before it is handed to a \
         person; 0 never tries. A pull request's file can only lower it.",
    ),
    key(
        "ci.repair_pre_existing",
        Kind::Bool,
        "Whether checks that already failed before Shepherd's push are repaired too (otherwise reported and \
         left alone). A pull request's file can only turn it off.",
    ),
    key("trust.collaborators", Kind::Bool, "Whether comments of the repository's collaborators are acted on."),
    checked(
        "trust.bots",
        Kind::StrList,
        login,
        "Bot logins whose comments are acted on (only accounts the forge marks as bots).",
    ),
    checked("trust.users", Kind::StrList, login, "Further logins whose comments are acted on, people or bots."),
    checked(
        "paths.protected",
        Kind::StrList,
        glob_pattern,
        "Paths Shepherd never commits changes to: globs over repository paths (`*`, `?`, `**`); a match on a \
         directory covers what is below it.",
    ),
    checked("forge.github_hosts", Kind::StrList, host, "Hosts that are GitHub Enterprise Server instances."),
    checked("forge.gitlab_hosts", Kind::StrList, host, "Hosts that are self-managed GitLab instances."),
    checked(
        "forge.ca_file",
        Kind::Str,
        absolute_path,
        "A PEM file of CA certificates (one or more) trusted for the forge's API besides the system's \
         store and `SSL_CERT_FILE`/`SSL_CERT_DIR`: for a GitHub Enterprise Server or self-managed GitLab \
         with a private CA. An absolute path; never taken from a PR head's file.",
    ),
    key(
        "review.enabled",
        Kind::Bool,
        "Whether the pre-push review runs. It needs an agent other than builtin for the review role, \
         configured in `[agent.roles.review]`.",
    ),
    checked(
        "reviewers.wait_for",
        Kind::StrList,
        login,
        "Logins whose review of the pushed head is awaited. Unset: the bots of `[trust] bots` that put a \
         commit status or check run of their own on the head.",
    ),
    key(
        "reviewers.settle_timeout_secs",
        Kind::Int { min: 0, max: SECS },
        "How long to wait for each after a push, in seconds.",
    ),
    key(
        "reviewers.request",
        Kind::Bool,
        "Whether review is re-requested from awaited reviewers that support it, once per head.",
    ),
    checked(
        "reviewers.trigger",
        Kind::LoginMap,
        non_empty,
        "Per login, the comment that asks that bot to review again, posted once per head when it has not \
         started.",
    ),
];

pub(super) fn glob_pattern(s: &str) -> Result<(), String> {
    non_empty(s)?;
    crate::glob::check(s).map_err(|e| e.to_string())
}

pub(super) fn non_empty(s: &str) -> Result<(), String> {
    if s.trim().is_empty() {
        Err("must not be empty".to_string())
    } else {
        Ok(())
    }
}

pub(super) fn login(s: &str) -> Result<(), String> {
    non_empty(s)?;
    if s.chars().any(char::is_whitespace) {
        return Err(format!("`{s}` is not a login (it has whitespace)"));
    }
    Ok(())
}

pub(super) fn host(s: &str) -> Result<(), String> {
    non_empty(s)?;
    if s.contains("://") || s.contains('/') || s.chars().any(char::is_whitespace) {
        return Err(format!(
            "`{s}` is not a host name; write it as `git.example.com` (a port is allowed)"
        ));
    }
    Ok(())
}

pub(super) fn absolute_path(s: &str) -> Result<(), String> {
    non_empty(s)?;
    if !std::path::Path::new(s).is_absolute() {
        return Err(format!("`{s}` is not an absolute path"));
    }
    Ok(())
}

pub(super) fn env_name(s: &str) -> Result<(), String> {
    let mut chars = s.chars();
    let valid = matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        return Err(format!("`{s}` is not an environment variable name"));
    }
    if is_forge_credential_name(s) {
        return Err(format!(
            "`{s}` holds forge credentials, which never reach an agent"
        ));
    }
    Ok(())
}

pub use crate::forges::is_forge_credential_name;

/// Whether a concrete key segment matches a table segment.
pub(super) fn segment_matches(pattern: &str, segment: &str) -> bool {
    pattern == segment || (pattern == ROLE && ROLE_NAMES.contains(&segment))
}

pub(super) fn key_doc(path: &[&str]) -> Option<&'static KeyDoc> {
    KEYS.iter().find(|d| {
        let pat: Vec<&str> = d.key.split('.').collect();
        pat.len() == path.len() && pat.iter().zip(path).all(|(p, s)| segment_matches(p, s))
    })
}

/// The names allowed directly under `path` (tables and keys).
pub(super) fn children(path: &[&str]) -> Vec<&'static str> {
    let mut out = BTreeSet::new();
    for d in KEYS {
        let pat: Vec<&'static str> = d.key.split('.').collect();
        if pat.len() > path.len() && pat.iter().zip(path).all(|(p, s)| segment_matches(p, s)) {
            match pat[path.len()] {
                ROLE => out.extend(ROLE_NAMES.iter().copied()),
                name => {
                    out.insert(name);
                }
            }
        }
    }
    out.into_iter().collect()
}

pub(super) fn check_table(
    table: &Table,
    path: &mut Vec<String>,
    origin: &str,
) -> Result<(), ConfigError> {
    for (name, value) in table {
        path.push(name.clone());
        let segments: Vec<&str> = path.iter().map(String::as_str).collect();
        let key = path.join(".");
        if let Some(doc) = key_doc(&segments) {
            check_leaf(doc, value, &key, origin)?;
        } else if !children(&segments).is_empty() {
            match value {
                Value::Table(t) => check_table(t, path, origin)?,
                other => {
                    return Err(ConfigError::WrongType {
                        key,
                        origin: origin.to_string(),
                        expected: "a table",
                        found: other.type_str(),
                    })
                }
            }
        } else {
            let suggestion = suggest(&segments);
            return Err(ConfigError::UnknownKey {
                key,
                origin: origin.to_string(),
                suggestion,
            });
        }
        path.pop();
    }
    Ok(())
}

/// A close sibling name, else the full key of a key of that name elsewhere,
/// preferring one that shares more of the path (`max_rounds` at the top level
/// suggests `loop.max_rounds`; `review.provider` suggests
/// `agent.roles.review.provider`).
pub(super) fn suggest(path: &[&str]) -> Option<String> {
    let (name, parent) = path.split_last()?;
    if let Some(close) = closest(name, children(parent).into_iter()) {
        return Some(close.to_string());
    }
    let mut best: Option<(usize, String)> = None;
    for key in KEYS.iter().flat_map(|d| expand_role(d.key)) {
        let segments: Vec<&str> = key.split('.').collect();
        if segments.last() != Some(name) {
            continue;
        }
        let shared = parent.iter().filter(|p| segments.contains(p)).count();
        if best.as_ref().is_none_or(|(score, _)| shared > *score) {
            best = Some((shared, key.clone()));
        }
    }
    best.map(|(_, key)| key)
}

/// A key with `<role>` replaced by each role name (the key itself otherwise).
pub(super) fn expand_role(key: &str) -> Vec<String> {
    if key.contains(ROLE) {
        ROLE_NAMES.iter().map(|r| key.replace(ROLE, r)).collect()
    } else {
        vec![key.to_string()]
    }
}

pub(super) fn closest<'a>(
    name: &str,
    candidates: impl Iterator<Item = &'a str>,
) -> Option<&'a str> {
    let name = name.to_ascii_lowercase();
    candidates
        .map(|c| (edit_distance(&name, c), c))
        .filter(|(d, c)| *d <= (c.chars().count().max(name.chars().count()) / 3).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Edit distance over characters, a swap of two neighbours counting as one
/// edit (optimal string alignment): `modle` is one edit from `model`.
pub(super) use strsim::osa_distance as edit_distance;

pub(super) fn check_leaf(
    doc: &KeyDoc,
    value: &Value,
    key: &str,
    origin: &str,
) -> Result<(), ConfigError> {
    let wrong = |key: String, expected: &'static str, found: &Value| ConfigError::WrongType {
        key,
        origin: origin.to_string(),
        expected,
        found: found.type_str(),
    };
    let invalid = |key: String, reason: String| ConfigError::InvalidValue {
        key,
        origin: origin.to_string(),
        reason,
    };
    let check_str = |key: String, s: &str| match doc.check {
        Some(check) => check(s).map_err(|reason| invalid(key, reason)),
        None => Ok(()),
    };
    let strings = |key: &str, items: &[Value]| -> Result<(), ConfigError> {
        for (i, item) in items.iter().enumerate() {
            let item_key = format!("{key}[{i}]");
            match item {
                Value::String(s) => check_str(item_key, s)?,
                other => return Err(wrong(item_key, "a string", other)),
            }
        }
        Ok(())
    };
    match (doc.kind, value) {
        (Kind::Bool, Value::Boolean(_)) => Ok(()),
        (Kind::Int { min, max }, Value::Integer(i)) => {
            if *i < min {
                Err(invalid(
                    key.to_string(),
                    format!("{i} (must be at least {min})"),
                ))
            } else if *i > max {
                Err(invalid(
                    key.to_string(),
                    format!("{i} (must be at most {max})"),
                ))
            } else {
                Ok(())
            }
        }
        (Kind::Str, Value::String(s)) => check_str(key.to_string(), s),
        (Kind::Enum(names), Value::String(s)) => {
            if names.contains(&s.as_str()) {
                Ok(())
            } else {
                let hint = did_you_mean(&closest(s, names.iter().copied()).map(str::to_string));
                Err(invalid(
                    key.to_string(),
                    format!(
                        "`{s}` is not one of {}{hint}",
                        quoted_list(names.iter().copied())
                    ),
                ))
            }
        }
        (Kind::StrList, Value::Array(items)) => strings(key, items),
        (Kind::LoginMap, Value::Table(entries)) => {
            for (who, text) in entries {
                let entry_key = format!("{key}.\"{who}\"");
                login(who).map_err(|reason| invalid(entry_key.clone(), reason))?;
                match text {
                    Value::String(s) => check_str(entry_key, s)?,
                    other => return Err(wrong(entry_key, "a string", other)),
                }
            }
            Ok(())
        }
        (Kind::Command, Value::String(s)) => check_str(key.to_string(), s),
        (Kind::Command, Value::Array(items)) => {
            if items.is_empty() {
                return Err(invalid(
                    key.to_string(),
                    "the array is empty; give the program first".to_string(),
                ));
            }
            strings(key, items)
        }
        (kind, other) => Err(wrong(key.to_string(), kind.expected(), other)),
    }
}
