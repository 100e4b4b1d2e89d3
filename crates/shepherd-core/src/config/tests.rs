//! Tests of the configuration: layering, validation, errors, the reference.
#![allow(clippy::unwrap_used)] // a panic is how a test fails

use super::*;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::Serialize;
use toml::{Table, Value};

use crate::gate::GateConfig;
use crate::model::{Author, AuthorKind};

const REPO: &str = "/repo/shepherd.toml";
const USER: &str = "/home/u/.config/shepherd/config.toml";

fn repo(text: &str) -> ConfigLayer {
    ConfigLayer::repo(REPO, text)
}

fn user(text: &str) -> ConfigLayer {
    ConfigLayer::user(USER, text)
}

fn env(vars: &[(&str, &str)]) -> ConfigLayer {
    let vars: BTreeMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    ConfigLayer::env(move |k| vars.get(k).cloned())
}

fn err(layers: &[ConfigLayer]) -> String {
    Config::layered(layers).unwrap_err().to_string()
}

/// Leaf keys of a table, dotted.
fn leaves(table: &Table, prefix: &str, out: &mut BTreeSet<String>) {
    for (k, v) in table {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        let segments: Vec<&str> = key.split('.').collect();
        match v {
            // A table-valued key (`reviewers.trigger`) is a leaf.
            Value::Table(t) if key_doc(&segments).is_none() => leaves(t, &key, out),
            _ => {
                out.insert(key);
            }
        }
    }
}

/// A configuration that sets every key, every role included.
fn full_config() -> Config {
    let mut c = Config::default();
    c.agent.provider = Provider::Claude;
    c.agent.model = Some("sonnet".into());
    c.agent.extra_args = vec!["--verbose".into()];
    c.agent.command = Some(CommandSpec::Argv(vec!["./agent".into(), "--json".into()]));
    c.agent.env = vec!["ANTHROPIC_API_KEY".into()];
    let o = RoleOverride {
        provider: Some(Provider::Codex),
        model: Some("gpt-5".into()),
        timeout_secs: Some(60),
        idle_timeout_secs: Some(0),
        extra_args: Some(vec!["-q".into()]),
        command: Some(CommandSpec::Shell("./review | tee log".into())),
    };
    let r = &mut c.agent.roles;
    for slot in [
        &mut r.triage,
        &mut r.fix,
        &mut r.cluster_fix,
        &mut r.fix_validation,
        &mut r.review,
        &mut r.apply_review,
        &mut r.report_narrative,
    ] {
        *slot = o.clone();
    }
    c.verify.command = Some(CommandSpec::Shell("cargo test".into()));
    c.trust.users = vec!["alice".into()];
    c.forge.github_hosts = vec!["ghe.corp".into()];
    c.forge.gitlab_hosts = vec!["gitlab.corp:8443".into()];
    c.forge.ca_file = Some("/etc/ssl/corp-ca.pem".into());
    c.reviewers.wait_for = Some(vec!["coderabbitai[bot]".into()]);
    c.reviewers
        .trigger
        .insert("coderabbitai[bot]".into(), "@coderabbitai review".into());
    c
}

// --- defaults -----------------------------------------------------------

#[test]
fn default_config_toml_equals_default() {
    let parsed: Config = toml::from_str(DEFAULT_CONFIG_TOML).unwrap();
    assert_eq!(parsed, Config::default());
    let layered = Config::layered(&[repo(DEFAULT_CONFIG_TOML)]).unwrap();
    assert_eq!(layered, Config::default());
    assert_eq!(Config::layered(&[]).unwrap(), Config::default());
}

#[test]
fn default_config_toml_has_no_unknown_keys() {
    let table: Table = DEFAULT_CONFIG_TOML.parse().unwrap();
    check_table(&table, &mut Vec::new(), "default-config.toml").unwrap();
}

#[test]
fn defaults_are_the_documented_ones() {
    let c = Config::default();
    assert_eq!(c.agent.provider, Provider::Builtin);
    assert_eq!(c.loop_.max_rounds, 8);
    assert_eq!(c.loop_.on_exhaust, OnExhaust::Approval);
    assert_eq!(c.approve.mode, ApproveMode::Prompt);
    assert!(!c.approve.resolve_wontfix);
    assert!(c.resolve.human_threads);
    assert!(c.cluster.enabled);
    assert_eq!(c.cluster.min_volume, 4);
    assert_eq!(c.cluster.escalate_after, 2);
    assert_eq!(c.verify.command, None);
    assert!(c.ci.rerun_failed);
    assert!(c.trust.collaborators);
    assert!(c.trust.bots.iter().any(|b| b == "coderabbitai"));
    assert!(c
        .trust
        .bots
        .iter()
        .any(|b| b == "copilot-pull-request-reviewer"));
    assert!(c.trust.bots.iter().any(|b| b == "github-actions"));
    assert_eq!(c.paths.protected, vec![".github/workflows/**".to_string()]);
    assert!(c.review.enabled);
    assert_eq!(
        c.gate_config(),
        GateConfig {
            resolve_wontfix: false,
            resolve_human_threads: true
        }
    );
}

// --- the key table ------------------------------------------------------

/// Keys written commented out in default-config.toml, by section
/// (`# [agent.roles.review]` headers count as sections).
fn commented_keys(text: &str) -> BTreeSet<String> {
    let mut section = String::new();
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let line = line.trim();
        let body = line.strip_prefix('#').map(str::trim).unwrap_or(line);
        if let Some(header) = body.strip_prefix('[').and_then(|b| b.strip_suffix(']')) {
            section = header.to_string();
        } else if line.starts_with('#') {
            if let Some((k, _)) = body.split_once(" = ") {
                if !k.contains(' ') {
                    out.insert(format!("{section}.{k}"));
                }
            }
        }
    }
    out
}

#[test]
fn key_table_and_default_config_list_the_same_keys() {
    let table: Table = DEFAULT_CONFIG_TOML.parse().unwrap();
    let mut set = BTreeSet::new();
    leaves(&table, "", &mut set);
    for key in &set {
        let segments: Vec<&str> = key.split('.').collect();
        assert!(
            key_doc(&segments).is_some(),
            "{key} of default-config.toml is not in the key table"
        );
    }
    let commented = commented_keys(DEFAULT_CONFIG_TOML);
    for d in KEYS {
        let present = expand_role(d.key)
            .iter()
            .any(|k| set.contains(k) || commented.contains(k));
        assert!(
            present,
            "{} of the key table is not in default-config.toml",
            d.key
        );
    }
    // Commented keys are real keys too.
    for key in &commented {
        let segments: Vec<&str> = key.split('.').collect();
        assert!(key_doc(&segments).is_some(), "commented {key} is not a key");
    }
}

#[test]
fn key_table_matches_the_types() {
    let Value::Table(table) = Value::try_from(full_config()).unwrap() else {
        panic!("not a table")
    };
    let mut set = BTreeSet::new();
    leaves(&table, "", &mut set);
    let documented: BTreeSet<String> = KEYS.iter().flat_map(|d| expand_role(d.key)).collect();
    assert_eq!(set, documented);
    // And the checks accept what the types produce.
    check_table(&table, &mut Vec::new(), "full").unwrap();
}

#[test]
fn enum_names_match_serde() {
    fn check<
        T: Serialize + Copy + fmt::Display + FromStr<Err = ParseNameError> + PartialEq + fmt::Debug,
    >(
        all: &[T],
        names: &[&str],
    ) {
        assert_eq!(all.len(), names.len());
        for (v, name) in all.iter().zip(names) {
            assert_eq!(
                Value::try_from(*v).unwrap(),
                Value::String(name.to_string())
            );
            assert_eq!(v.to_string(), *name);
            assert_eq!(name.parse::<T>().unwrap(), *v);
        }
    }
    check(&Provider::ALL, PROVIDER_NAMES);
    check(&OnExhaust::ALL, ON_EXHAUST_NAMES);
    check(&ApproveMode::ALL, APPROVE_MODE_NAMES);
    check(&AgentRole::ALL, ROLE_NAMES);
    assert_eq!(
        "claud".parse::<Provider>().unwrap_err().to_string(),
        "`claud` is not one of `builtin`, `claude`, `codex`, `copilot`, `gemini`, `opencode`, `command`"
    );
}

#[test]
fn reference_markdown_lists_every_key_and_variable() {
    let md = reference_markdown();
    for d in KEYS {
        assert!(
            md.contains(&format!("| `{}` |", d.key)),
            "{} missing",
            d.key
        );
    }
    for v in ENV_VARS {
        assert!(
            md.contains(&format!("| `{}` | `{}` |", v.name, v.key)),
            "{} missing",
            v.name
        );
    }
    assert!(md.contains("| `loop.max_rounds` | integer ≥ 1 | `8` | Most rounds a run makes. |"));
    assert!(md.contains("| `agent.model` | string | unset |"));
    assert!(md.contains("| `paths.protected` | array of strings | `[\".github/workflows/**\"]` |"));
    assert!(md.contains("| `loop.on_exhaust` | one of `approval`, `fail` | `\"approval\"` |"));
    // Every row has four cells: no description breaks the table.
    for line in md
        .lines()
        .filter(|l| l.starts_with("| `") && l.contains('.'))
    {
        let cells = line.replace("\\|", "").matches('|').count();
        assert!(cells == 5 || cells == 3, "bad row: {line}");
    }
}

#[test]
fn to_toml_round_trips() {
    for config in [Config::default(), full_config()] {
        let text = config.to_toml();
        assert!(!text.starts_with('#'), "{text}");
        assert_eq!(Config::layered(&[repo(&text)]).unwrap(), config, "{text}");
    }
    assert!(Config::default().to_toml().contains("max_rounds = 8"));
    assert!(!Config::default().to_toml().contains("roles"));
}

// --- layering -----------------------------------------------------------

#[test]
fn layering_overrides_key_by_key() {
    type Check = fn(&Config) -> bool;
    let cases: Vec<(&str, Vec<ConfigLayer>, Check)> = vec![
        (
            "user over repo",
            vec![
                repo("[loop]\nmax_rounds = 3"),
                user("[loop]\nmax_rounds = 5"),
            ],
            |c| c.loop_.max_rounds == 5,
        ),
        (
            "sibling keys of one table survive",
            vec![
                repo("[cluster]\nmin_volume = 6"),
                user("[cluster]\nenabled = false"),
            ],
            |c| c.cluster.min_volume == 6 && !c.cluster.enabled && c.cluster.escalate_after == 2,
        ),
        (
            "env over files",
            vec![
                repo("[loop]\nmax_rounds = 3"),
                user("[loop]\nmax_rounds = 5"),
                env(&[("SHEPHERD_MAX_ROUNDS", "2")]),
            ],
            |c| c.loop_.max_rounds == 2,
        ),
        (
            "flags over env",
            vec![
                env(&[("SHEPHERD_MAX_ROUNDS", "2"), ("SHEPHERD_APPROVE", "auto")]),
                ConfigLayer::flags(Overrides {
                    max_rounds: Some(1),
                    ..Overrides::default()
                }),
            ],
            |c| c.loop_.max_rounds == 1 && c.approve.mode == ApproveMode::Auto,
        ),
        (
            "arrays replace, not append",
            vec![
                repo("[trust]\nbots = [\"a\"]"),
                user("[trust]\nbots = [\"b\"]"),
            ],
            |c| c.trust.bots == vec!["b".to_string()],
        ),
        (
            "role tables merge",
            vec![
                repo("[agent.roles.review]\nmodel = \"o3\""),
                user("[agent.roles.review]\nprovider = \"codex\""),
            ],
            |c| {
                c.agent.roles.review.model.as_deref() == Some("o3")
                    && c.agent.roles.review.provider == Some(Provider::Codex)
            },
        ),
        (
            "string command replaced by array",
            vec![
                repo("[verify]\ncommand = \"make test\""),
                user("[verify]\ncommand = [\"cargo\", \"test\"]"),
            ],
            |c| c.verify.command == Some(CommandSpec::Argv(vec!["cargo".into(), "test".into()])),
        ),
        (
            "flag verify command",
            vec![
                repo("[verify]\ncommand = \"make test\""),
                ConfigLayer::flags(Overrides {
                    verify_command: Some(CommandSpec::Shell("just test".into())),
                    ..Overrides::default()
                }),
            ],
            |c| c.verify.command == Some(CommandSpec::Shell("just test".into())),
        ),
        (
            "provider command in repo, switched to claude by env, keeps the command",
            vec![
                repo("[agent]\nprovider = \"command\"\ncommand = \"./agent\""),
                env(&[("SHEPHERD_AGENT", "claude")]),
            ],
            |c| {
                c.agent.provider == Provider::Claude
                    && c.agent.command == Some(CommandSpec::Shell("./agent".into()))
            },
        ),
        (
            "command set in one file, provider in a later one",
            vec![
                repo("[agent]\ncommand = [\"./agent\"]"),
                env(&[("SHEPHERD_AGENT", "command")]),
            ],
            |c| c.agent.provider == Provider::Command,
        ),
        (
            "escalate_after 0 disables, and is allowed",
            vec![repo("[cluster]\nescalate_after = 0")],
            |c| c.cluster.escalate_after == 0,
        ),
    ];
    for (name, layers, check) in cases {
        let config = Config::layered(&layers).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(check(&config), "{name}: {config:#?}");
    }
}

#[test]
fn origins_name_the_layer_that_set_each_key() {
    let (_, origins) = Config::layered_with_origins(&[
        repo("[loop]\nmax_rounds = 3\non_exhaust = \"fail\""),
        user("[loop]\nmax_rounds = 5"),
        env(&[("SHEPHERD_APPROVE", "auto")]),
        ConfigLayer::flags(Overrides {
            cluster_enabled: Some(false),
            ..Overrides::default()
        }),
    ])
    .unwrap();
    let expected: Origins = [
        ("approve.mode", "environment variable SHEPHERD_APPROVE"),
        ("cluster.enabled", "command-line flags"),
        ("loop.max_rounds", USER),
        ("loop.on_exhaust", REPO),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    assert_eq!(origins, expected);
}

#[test]
fn every_override_sets_its_key() {
    let all = Overrides {
        agent_provider: Some(Provider::Gemini),
        agent_model: Some("m".into()),
        agent_timeout_secs: Some(7),
        max_rounds: Some(3),
        on_exhaust: Some(OnExhaust::Fail),
        approve: Some(ApproveMode::Auto),
        resolve_wontfix: Some(true),
        reply_needs_human: Some(true),
        cluster_enabled: Some(false),
        verify_command: Some(CommandSpec::Argv(vec!["make".into()])),
        ci_timeout_secs: Some(9),
        review_enabled: Some(false),
    };
    let c = Config::layered(&[ConfigLayer::flags(all)]).unwrap();
    assert_eq!(c.agent.provider, Provider::Gemini);
    assert_eq!(c.agent.model.as_deref(), Some("m"));
    assert_eq!(c.agent.timeout_secs, 7);
    assert_eq!(c.loop_.max_rounds, 3);
    assert_eq!(c.loop_.on_exhaust, OnExhaust::Fail);
    assert_eq!(c.approve.mode, ApproveMode::Auto);
    assert!(c.approve.resolve_wontfix);
    assert!(c.approve.reply_needs_human);
    assert!(!c.cluster.enabled);
    assert_eq!(
        c.verify.command,
        Some(CommandSpec::Argv(vec!["make".into()]))
    );
    assert_eq!(c.ci.timeout_secs, 9);
    assert!(!c.review.enabled);
    assert_eq!(
        Config::layered(&[ConfigLayer::flags(Overrides::default())]).unwrap(),
        Config::default()
    );
}

// --- environment --------------------------------------------------------

#[test]
fn env_mapping() {
    type Check = fn(&Config) -> bool;
    let cases: &[(&str, &str, Check)] = &[
        ("SHEPHERD_AGENT", "codex", |c| {
            c.agent.provider == Provider::Codex
        }),
        ("SHEPHERD_MODEL", "opus", |c| {
            c.agent.model.as_deref() == Some("opus")
        }),
        ("SHEPHERD_AGENT_TIMEOUT", "120", |c| {
            c.agent.timeout_secs == 120
        }),
        ("SHEPHERD_MAX_ROUNDS", " 12 ", |c| c.loop_.max_rounds == 12),
        ("SHEPHERD_ON_EXHAUST", "fail", |c| {
            c.loop_.on_exhaust == OnExhaust::Fail
        }),
        ("SHEPHERD_APPROVE", "auto", |c| {
            c.approve.mode == ApproveMode::Auto
        }),
        ("SHEPHERD_RESOLVE_WONTFIX", "yes", |c| {
            c.approve.resolve_wontfix
        }),
        ("SHEPHERD_CLUSTER", "0", |c| !c.cluster.enabled),
        ("SHEPHERD_CLUSTER", "OFF", |c| !c.cluster.enabled),
        ("SHEPHERD_VERIFY", "make check && make lint", |c| {
            c.verify.command == Some(CommandSpec::Shell("make check && make lint".into()))
        }),
        ("SHEPHERD_CI_TIMEOUT", "60", |c| c.ci.timeout_secs == 60),
        ("SHEPHERD_REVIEW", "false", |c| !c.review.enabled),
    ];
    for (var, value, check) in cases {
        let c = Config::layered(&[env(&[(var, value)])])
            .unwrap_or_else(|e| panic!("{var}={value}: {e}"));
        assert!(check(&c), "{var}={value}");
    }
    // Every variable is covered above, and maps to a plain key.
    for v in ENV_VARS {
        assert!(
            cases.iter().any(|(n, _, _)| *n == v.name),
            "{} untested",
            v.name
        );
        assert!(
            key_doc(&v.key.split('.').collect::<Vec<_>>()).is_some(),
            "{}",
            v.key
        );
        assert!(v.name.starts_with("SHEPHERD_"));
    }
    let names: BTreeSet<&str> = ENV_VARS.iter().map(|v| v.name).collect();
    assert_eq!(names.len(), ENV_VARS.len());
}

#[test]
fn env_asks_only_for_its_variables_and_ignores_empty_ones() {
    let asked = std::cell::RefCell::new(Vec::new());
    let layer = ConfigLayer::env(|k| {
        asked.borrow_mut().push(k.to_string());
        Some(String::new())
    });
    assert_eq!(layer.content, LayerContent::Env(Vec::new()));
    let expected: Vec<String> = ENV_VARS.iter().map(|v| v.name.to_string()).collect();
    assert_eq!(*asked.borrow(), expected);
}

// --- errors -------------------------------------------------------------

#[test]
fn error_messages() {
    let cases: &[(&str, &str)] = &[
        ("[loop]\nmax_round = 3", "unknown key `loop.max_round` in /repo/shepherd.toml; did you mean `max_rounds`?"),
        ("[loop]\nmax-rounds = 3", "unknown key `loop.max-rounds` in /repo/shepherd.toml; did you mean `max_rounds`?"),
        ("max_rounds = 3", "unknown key `max_rounds` in /repo/shepherd.toml; did you mean `loop.max_rounds`?"),
        ("[loops]\nmax_rounds = 3", "unknown key `loops` in /repo/shepherd.toml; did you mean `loop`?"),
        ("[frobnicate]\nx = 1", "unknown key `frobnicate` in /repo/shepherd.toml"),
        ("[agent.roles.reviewer]\nmodel = \"x\"", "unknown key `agent.roles.reviewer` in /repo/shepherd.toml; did you mean `review`?"),
        ("[agent.roles.review]\nmodle = \"x\"", "unknown key `agent.roles.review.modle` in /repo/shepherd.toml; did you mean `model`?"),
        ("[agent.roles.review]\nenv = []", "unknown key `agent.roles.review.env` in /repo/shepherd.toml; did you mean `agent.env`?"),
        ("[review]\nprovider = \"codex\"", "unknown key `review.provider` in /repo/shepherd.toml; did you mean `agent.roles.review.provider`?"),
        ("loop = 3", "wrong type for `loop` in /repo/shepherd.toml: expected a table, found integer"),
        ("[[loop]]\nmax_rounds = 3", "wrong type for `loop` in /repo/shepherd.toml: expected a table, found array"),
        ("[loop]\nmax_rounds = \"8\"", "wrong type for `loop.max_rounds` in /repo/shepherd.toml: expected an integer, found string"),
        ("[loop]\nmax_rounds = 8.0", "wrong type for `loop.max_rounds` in /repo/shepherd.toml: expected an integer, found float"),
        ("[cluster]\nenabled = \"yes\"", "wrong type for `cluster.enabled` in /repo/shepherd.toml: expected a boolean, found string"),
        ("[trust]\nbots = \"coderabbitai\"", "wrong type for `trust.bots` in /repo/shepherd.toml: expected an array of strings, found string"),
        ("[trust]\nbots = [\"a\", 3]", "wrong type for `trust.bots[1]` in /repo/shepherd.toml: expected a string, found integer"),
        ("[verify]\ncommand = 3", "wrong type for `verify.command` in /repo/shepherd.toml: expected a string or an array of strings, found integer"),
        ("[loop]\nmax_rounds = 0", "invalid value for `loop.max_rounds` in /repo/shepherd.toml: 0 (must be at least 1)"),
        ("[loop]\nmax_rounds = -3", "invalid value for `loop.max_rounds` in /repo/shepherd.toml: -3 (must be at least 1)"),
        ("[loop]\nmax_rounds = 5000000000", "invalid value for `loop.max_rounds` in /repo/shepherd.toml: 5000000000 (must be at most 4294967295)"),
        ("[cluster]\nmin_volume = 1", "invalid value for `cluster.min_volume` in /repo/shepherd.toml: 1 (must be at least 2)"),
        ("[ci]\npoll_interval_secs = 0", "invalid value for `ci.poll_interval_secs` in /repo/shepherd.toml: 0 (must be at least 1)"),
        ("[agent]\ntimeout_secs = 0", "invalid value for `agent.timeout_secs` in /repo/shepherd.toml: 0 (must be at least 1)"),
        ("[loop]\non_exhaust = \"pause\"", "invalid value for `loop.on_exhaust` in /repo/shepherd.toml: `pause` is not one of `approval`, `fail`"),
        ("[loop]\non_exhaust = \"aproval\"", "invalid value for `loop.on_exhaust` in /repo/shepherd.toml: `aproval` is not one of `approval`, `fail`; did you mean `approval`?"),
        ("[agent]\nprovider = \"claud\"", "invalid value for `agent.provider` in /repo/shepherd.toml: `claud` is not one of `builtin`, `claude`, `codex`, `copilot`, `gemini`, `opencode`, `command`; did you mean `claude`?"),
        ("[approve]\nmode = \"interactive\"", "invalid value for `approve.mode` in /repo/shepherd.toml: `interactive` is not one of `prompt`, `auto`, `label`"),
        ("[agent]\nenv = [\"GITHUB_TOKEN\"]", "invalid value for `agent.env[0]` in /repo/shepherd.toml: `GITHUB_TOKEN` holds forge credentials, which never reach an agent"),
        ("[agent]\nenv = [\"OK\", \"MY_GITLAB_PASSWORD\"]", "invalid value for `agent.env[1]` in /repo/shepherd.toml: `MY_GITLAB_PASSWORD` holds forge credentials, which never reach an agent"),
        ("[agent]\nenv = [\"1BAD\"]", "invalid value for `agent.env[0]` in /repo/shepherd.toml: `1BAD` is not an environment variable name"),
        ("[agent]\nmodel = \" \"", "invalid value for `agent.model` in /repo/shepherd.toml: must not be empty"),
        ("[verify]\ncommand = \"\"", "invalid value for `verify.command` in /repo/shepherd.toml: must not be empty"),
        ("[verify]\ncommand = []", "invalid value for `verify.command` in /repo/shepherd.toml: the array is empty; give the program first"),
        ("[verify]\ncommand = [\"\", \"x\"]", "invalid value for `verify.command[0]` in /repo/shepherd.toml: must not be empty"),
        ("[trust]\nusers = [\"bob smith\"]", "invalid value for `trust.users[0]` in /repo/shepherd.toml: `bob smith` is not a login (it has whitespace)"),
        ("[paths]\nprotected = [\"\"]", "invalid value for `paths.protected[0]` in /repo/shepherd.toml: must not be empty"),
        ("[paths]\nprotected = [\"ok/**\", \"src/[abc\"]", "invalid value for `paths.protected[1]` in /repo/shepherd.toml: invalid glob `src/[abc`: unclosed character class; missing ']'"),
        ("[forge]\nca_file = \"certs/ca.pem\"", "invalid value for `forge.ca_file` in /repo/shepherd.toml: `certs/ca.pem` is not an absolute path"),
        ("[forge]\ngithub_hosts = [\"https://ghe.corp\"]", "invalid value for `forge.github_hosts[0]` in /repo/shepherd.toml: `https://ghe.corp` is not a host name; write it as `git.example.com` (a port is allowed)"),
        ("[forge]\ngithub_hosts = [\"git.corp\"]\ngitlab_hosts = [\"GIT.corp\"]", "invalid value for `forge.gitlab_hosts` in /repo/shepherd.toml: `GIT.corp` is also in `forge.github_hosts`; a host is one forge"),
        ("[agent]\nprovider = \"command\"", "`agent.command` is required because `agent.provider` is \"command\" (set in /repo/shepherd.toml)"),
        ("[agent]\nprovider = \"claude\"\n[agent.roles.triage]\nprovider = \"command\"", "`agent.roles.triage.command` is required because `agent.roles.triage.provider` is \"command\" (set in /repo/shepherd.toml)"),
    ];
    for (text, expected) in cases {
        assert_eq!(err(&[repo(text)]), *expected, "for {text:?}");
    }
}

#[test]
fn errors_name_the_layer_that_caused_them() {
    assert_eq!(
        err(&[
            repo("[loop]\nmax_rounds = 3"),
            user("[loop]\nmax_rounds = 0")
        ]),
        format!("invalid value for `loop.max_rounds` in {USER}: 0 (must be at least 1)")
    );
    assert_eq!(
        err(&[
            repo("[agent]\nprovider = \"claude\""),
            user("[agent]\nprovider = \"command\"")
        ]),
        format!(
            "`agent.command` is required because `agent.provider` is \"command\" (set in {USER})"
        )
    );
    assert_eq!(
        err(&[env(&[("SHEPHERD_AGENT", "command")])]),
        "`agent.command` is required because `agent.provider` is \"command\" \
         (set in environment variable SHEPHERD_AGENT)"
    );
    // A role inheriting `command` from [agent] needs nothing more.
    Config::layered(&[repo(
        "[agent]\nprovider = \"command\"\ncommand = \"./a\"\n[agent.roles.fix]\ntimeout_secs = 5",
    )])
    .unwrap();
    // A role keeping `command` while [agent] moves away must name its own.
    assert_eq!(
        err(&[
            repo("[agent]\nprovider = \"claude\"\ncommand = \"./a\"\n[agent.roles.fix]\nprovider = \"command\""),
        ]),
        "`agent.roles.fix.command` is required because `agent.roles.fix.provider` is \"command\" \
         (set in /repo/shepherd.toml)"
    );
}

#[test]
fn env_and_flag_errors() {
    let cases: &[(&str, &str, &str)] = &[
        ("SHEPHERD_MAX_ROUNDS", "abc", "invalid value for `loop.max_rounds` in environment variable SHEPHERD_MAX_ROUNDS: `abc` is not an integer"),
        ("SHEPHERD_MAX_ROUNDS", "0", "invalid value for `loop.max_rounds` in environment variable SHEPHERD_MAX_ROUNDS: 0 (must be at least 1)"),
        ("SHEPHERD_APPROVE", "yes", "invalid value for `approve.mode` in environment variable SHEPHERD_APPROVE: `yes` is not one of `prompt`, `auto`, `label`"),
        ("SHEPHERD_AGENT", "Claude", "invalid value for `agent.provider` in environment variable SHEPHERD_AGENT: `Claude` is not one of `builtin`, `claude`, `codex`, `copilot`, `gemini`, `opencode`, `command`; did you mean `claude`?"),
        ("SHEPHERD_CLUSTER", "maybe", "invalid value for `cluster.enabled` in environment variable SHEPHERD_CLUSTER: `maybe` is not a boolean (true/false, 1/0, yes/no, on/off)"),
    ];
    for (var, value, expected) in cases {
        assert_eq!(err(&[env(&[(var, value)])]), *expected);
    }
    assert_eq!(
        err(&[ConfigLayer::flags(Overrides {
            max_rounds: Some(0),
            ..Overrides::default()
        })]),
        "invalid value for `loop.max_rounds` in command-line flags: 0 (must be at least 1)"
    );
    assert_eq!(
        err(&[ConfigLayer::flags(Overrides {
            agent_model: Some(String::new()),
            ..Overrides::default()
        })]),
        "invalid value for `agent.model` in command-line flags: must not be empty"
    );
}

#[test]
fn syntax_errors_name_the_file_and_line() {
    let e = Config::layered(&[repo("[loop]\nmax_rounds = 3\nmax_rounds = 4\n")]).unwrap_err();
    let ConfigError::Syntax { origin, message } = &e else {
        panic!("{e:?}")
    };
    assert_eq!(origin, REPO);
    assert!(message.contains("line 3"), "{message}");
    let text = e.to_string();
    assert!(
        text.starts_with("invalid TOML in /repo/shepherd.toml: "),
        "{text}"
    );
    let e = err(&[user("[loop\n")]);
    assert!(e.starts_with(&format!("invalid TOML in {USER}: ")), "{e}");
}

#[test]
fn first_bad_layer_stops_before_later_ones() {
    // The later layer would fix the value, but the broken file is still an error.
    assert!(Config::layered(&[
        repo("[loop]\nmax_rounds = 0"),
        user("[loop]\nmax_rounds = 3")
    ])
    .is_err());
}

// --- the realistic repository config ------------------------------------

const REALISTIC: &str = r#"
# shepherd.toml of a Rust service
[agent]
provider = "claude"
model = "sonnet"
timeout_secs = 2400
extra_args = ["--permission-mode", "acceptEdits"]
env = ["ANTHROPIC_API_KEY", "CARGO_HOME"]

[agent.roles.triage]
model = "haiku"
timeout_secs = 300

[agent.roles.review]
provider = "codex"
model = "gpt-5"
extra_args = ["--sandbox", "read-only"]

[agent.roles.report-narrative]
provider = "builtin"

[loop]
max_rounds = 5
on_exhaust = "fail"

[approve]
mode = "auto"
resolve_wontfix = true

[resolve]
human_threads = false

[cluster]
min_volume = 3
escalate_after = 3

[verify]
command = ["cargo", "test", "--workspace", "--locked"]
timeout_secs = 3600

[ci]
timeout_secs = 3600
poll_interval_secs = 30
appear_timeout_secs = 300
rerun_failed = false

[trust]
bots = ["coderabbitai", "copilot-pull-request-reviewer", "renovate"]
users = ["release-bot[bot]", "@Alice"]

[paths]
protected = [".github/workflows/**", "deploy/**", "*.lock"]

[forge]
github_hosts = ["github.corp.example:8443"]
ca_file = "/etc/ssl/certs/corp-ca.pem"
"#;

#[test]
fn realistic_repo_config_parses() {
    let c = Config::layered(&[repo(REALISTIC)]).unwrap();
    assert_eq!(c.agent.provider, Provider::Claude);
    assert_eq!(c.loop_.max_rounds, 5);
    assert_eq!(c.loop_.on_exhaust, OnExhaust::Fail);
    assert_eq!(c.approve.mode, ApproveMode::Auto);
    assert_eq!(
        c.gate_config(),
        GateConfig {
            resolve_wontfix: true,
            resolve_human_threads: false
        }
    );
    assert_eq!(c.cluster.min_volume, 3);
    assert_eq!(
        c.verify.command.as_ref().map(CommandSpec::to_argv),
        Some(vec![
            "cargo".into(),
            "test".into(),
            "--workspace".into(),
            "--locked".into()
        ])
    );
    assert_eq!(c.ci.poll_interval(), Duration::from_secs(30));
    assert!(!c.ci.rerun_failed);
    assert!(c.paths.is_protected("Cargo.lock"));
    assert!(c.paths.is_protected("deploy/prod/app.yaml"));
    assert_eq!(
        c.forge.github_hosts,
        vec!["github.corp.example:8443".to_string()]
    );
    assert_eq!(
        c.forge.ca_file.as_deref(),
        Some("/etc/ssl/certs/corp-ca.pem")
    );

    let triage = c.agent.for_role(AgentRole::Triage);
    assert_eq!(triage.provider, Provider::Claude);
    assert_eq!(triage.model.as_deref(), Some("haiku"));
    assert_eq!(triage.timeout, Duration::from_secs(300));
    assert_eq!(
        triage.extra_args,
        vec!["--permission-mode".to_string(), "acceptEdits".to_string()]
    );
    assert_eq!(
        triage.env,
        vec!["ANTHROPIC_API_KEY".to_string(), "CARGO_HOME".to_string()]
    );

    let review = c.agent.for_role(AgentRole::Review);
    assert_eq!(review.provider, Provider::Codex);
    assert_eq!(review.model.as_deref(), Some("gpt-5"));
    assert_eq!(review.timeout, Duration::from_secs(2400));
    assert_eq!(
        review.extra_args,
        vec!["--sandbox".to_string(), "read-only".to_string()]
    );

    let narrative = c.agent.for_role(AgentRole::ReportNarrative);
    assert_eq!(narrative.provider, Provider::Builtin);
    assert_eq!(
        narrative.model, None,
        "a claude model means nothing to builtin"
    );
    assert!(narrative.extra_args.is_empty());

    let fix = c.agent.for_role(AgentRole::Fix);
    assert_eq!(fix.model.as_deref(), Some("sonnet"));
    assert_eq!(fix.idle_timeout, Some(Duration::from_secs(600)));
}

// --- pieces -------------------------------------------------------------

#[test]
fn for_role_inherits_timeouts_always_and_the_rest_only_with_the_provider() {
    let c = Config::layered(&[repo(
        "[agent]\nprovider = \"command\"\ncommand = \"./a\"\nidle_timeout_secs = 0\nextra_args = [\"-x\"]\n\
         [agent.roles.fix]\nprovider = \"command\"\n\
         [agent.roles.review]\nprovider = \"gemini\"\nidle_timeout_secs = 30",
    )])
    .unwrap();
    let fix = c.agent.for_role(AgentRole::Fix);
    assert_eq!(fix.command, Some(CommandSpec::Shell("./a".into())));
    assert_eq!(fix.extra_args, vec!["-x".to_string()]);
    assert_eq!(fix.idle_timeout, None);
    let review = c.agent.for_role(AgentRole::Review);
    assert_eq!(review.command, None);
    assert!(review.extra_args.is_empty());
    assert_eq!(review.idle_timeout, Some(Duration::from_secs(30)));
    assert_eq!(review.timeout, Duration::from_secs(1800));
    assert_eq!(review.role, AgentRole::Review);
}

fn author(login: &str, kind: AuthorKind) -> Author {
    Author {
        login: login.into(),
        kind,
    }
}

#[test]
fn trust() {
    let t = TrustConfig {
        users: vec!["@Alice".into(), "release-bot[bot]".into()],
        ..TrustConfig::default()
    };
    let cases = [
        (Some(author("coderabbitai", AuthorKind::Bot)), false, true),
        (
            Some(author("coderabbitai[bot]", AuthorKind::Bot)),
            false,
            true,
        ),
        (Some(author("CodeRabbitAI", AuthorKind::Bot)), false, true),
        // A person who registered a bot's name is not that bot.
        (Some(author("coderabbitai", AuthorKind::User)), false, false),
        (Some(author("random-bot", AuthorKind::Bot)), false, false),
        (Some(author("random-bot", AuthorKind::Bot)), true, false),
        (Some(author("bob", AuthorKind::User)), true, true),
        (Some(author("bob", AuthorKind::User)), false, false),
        (Some(author("alice", AuthorKind::User)), false, true),
        (Some(author("release-bot", AuthorKind::Bot)), false, true),
        (Some(author("", AuthorKind::User)), true, false),
        (None, true, false),
    ];
    for (a, collaborator, expected) in cases {
        assert_eq!(
            t.trusts(a.as_ref(), collaborator),
            expected,
            "{a:?} collaborator={collaborator}"
        );
    }
    let strict = TrustConfig {
        collaborators: false,
        ..TrustConfig::default()
    };
    assert!(!strict.trusts(Some(&author("bob", AuthorKind::User)), true));
}

#[test]
fn only_people_outside_trust_users_need_the_forges_word() {
    let t = TrustConfig {
        users: vec!["alice".into()],
        ..TrustConfig::default()
    };
    assert!(t.needs_access(Some(&author("bob", AuthorKind::User))));
    assert!(!t.needs_access(Some(&author("Alice", AuthorKind::User))));
    assert!(!t.needs_access(Some(&author("coderabbitai", AuthorKind::Bot))));
    assert!(!t.needs_access(None));
    let strict = TrustConfig {
        collaborators: false,
        ..TrustConfig::default()
    };
    assert!(!strict.needs_access(Some(&author("bob", AuthorKind::User))));
    // The reason names the access the forge reported.
    let why = t
        .untrusted_because(
            Some(&author("mallory", AuthorKind::User)),
            false,
            Some("read"),
        )
        .unwrap();
    assert!(
        why.contains("@mallory") && why.contains("`read` access"),
        "{why}"
    );
    assert_eq!(
        t.untrusted_because(Some(&author("bob", AuthorKind::User)), true, Some("write")),
        None
    );
}

#[test]
fn protected_paths_cover_what_is_below_them() {
    // The glob semantics themselves are tested in `crate::glob`.
    let paths = PathsConfig {
        protected: vec!["secrets".into(), ".github/workflows/**".into()],
    };
    assert!(paths.is_protected("secrets/prod/key.pem"));
    assert!(paths.is_protected(".github/workflows/ci.yml"));
    assert!(!paths.is_protected("src/secrets.rs"));
    assert!(!paths.is_protected(".github/CODEOWNERS"));
}

#[test]
fn repo_and_user_config_paths() {
    assert_eq!(repo_config_path(|_| false).unwrap(), None);
    assert_eq!(
        repo_config_path(|p| p == "shepherd.toml").unwrap(),
        Some("shepherd.toml")
    );
    assert_eq!(
        repo_config_path(|p| p == ".shepherd/config.toml").unwrap(),
        Some(".shepherd/config.toml")
    );
    assert_eq!(
        repo_config_path(|_| true).unwrap_err().to_string(),
        "both shepherd.toml and .shepherd/config.toml exist in the repository; keep one"
    );

    let vars = |pairs: &'static [(&'static str, &'static str)]| {
        move |k: &str| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    };
    assert_eq!(
        user_config_path(vars(&[("SHEPHERD_CONFIG", "/x.toml"), ("HOME", "/h")])),
        Some("/x.toml".into())
    );
    assert_eq!(
        user_config_path(vars(&[("XDG_CONFIG_HOME", "/cfg/"), ("HOME", "/h")])),
        Some("/cfg/shepherd/config.toml".into())
    );
    assert_eq!(
        user_config_path(vars(&[("XDG_CONFIG_HOME", "relative"), ("HOME", "/h")])),
        Some("/h/.config/shepherd/config.toml".into())
    );
    assert_eq!(
        user_config_path(vars(&[("SHEPHERD_CONFIG", ""), ("HOME", "/h")])),
        Some("/h/.config/shepherd/config.toml".into())
    );
    assert_eq!(user_config_path(vars(&[])), None);
}

#[test]
fn forge_credential_names() {
    for name in [
        "GITHUB_TOKEN",
        "gh_token",
        "GITLAB_TOKEN",
        "CI_JOB_TOKEN",
        "GH_ENTERPRISE_TOKEN",
        "MY_GITHUB_PAT",
        "GITLAB_API_KEY",
    ] {
        assert!(is_forge_credential_name(name), "{name}");
    }
    for name in [
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "PATH",
        "GITHUB_REPOSITORY",
        "CARGO_HOME",
    ] {
        assert!(!is_forge_credential_name(name), "{name}");
    }
}

#[test]
fn edit_distance_and_closest() {
    assert_eq!(edit_distance("max_round", "max_rounds"), 1);
    assert_eq!(edit_distance("", "abc"), 3);
    assert_eq!(edit_distance("kitten", "sitting"), 3);
    assert_eq!(edit_distance("modle", "model"), 1);
    assert_eq!(edit_distance("abc", "abc"), 0);
    assert_eq!(
        closest("modle", ["model", "provider"].into_iter()),
        Some("model")
    );
    assert_eq!(closest("zzz", ["model", "provider"].into_iter()), None);
}

#[test]
fn command_spec() {
    assert_eq!(
        CommandSpec::Shell("a && b".into()).to_argv(),
        vec!["sh", "-c", "a && b"]
    );
    assert_eq!(
        CommandSpec::Argv(vec!["make".into(), "test".into()]).to_string(),
        "make test"
    );
    let parsed: VerifyConfig = toml::from_str("command = [\"a\", \"b\"]").unwrap();
    assert_eq!(
        parsed.command,
        Some(CommandSpec::Argv(vec!["a".into(), "b".into()]))
    );
    let e = toml::from_str::<VerifyConfig>("command = 3").unwrap_err();
    assert!(
        e.message().contains("a string or an array of strings"),
        "{e}"
    );
}

#[test]
fn ci_durations() {
    let ci = CiConfig {
        timeout_secs: 60,
        appear_timeout_secs: 600,
        ..CiConfig::default()
    };
    assert_eq!(ci.appear_timeout(), Duration::from_secs(60));
    assert_eq!(ci.timeout(), Duration::from_secs(60));
    assert_eq!(VerifyConfig::default().timeout(), Duration::from_secs(1800));
}

#[test]
fn every_forge_has_its_hosts_key() {
    for kind in crate::ForgeKind::ALL {
        let key = kind.spec().hosts_key;
        let (table, field) = key.split_once('.').unwrap();
        let text = format!("[{table}]\n{field} = [\"self-hosted.example\"]\n");
        let config = Config::layered(&[user(&text)]).unwrap();
        assert_eq!(
            config.forge.hosts_of(kind),
            ["self-hosted.example".to_owned()],
            "{key}"
        );
        for other in crate::ForgeKind::ALL.into_iter().filter(|o| *o != kind) {
            assert!(config.forge.hosts_of(other).is_empty(), "{key}");
        }
    }
}

#[test]
fn reviewers_trigger_is_a_table_of_logins() {
    let c = Config::layered(&[user(
        "[reviewers]\nwait_for = [\"coderabbitai[bot]\"]\n[reviewers.trigger]\n\"coderabbitai[bot]\" = \"@coderabbitai review\"\n",
    )])
    .unwrap();
    assert_eq!(
        c.reviewers.wait_for.as_deref(),
        Some(&["coderabbitai[bot]".to_owned()][..])
    );
    assert_eq!(
        c.reviewers.trigger_for("CodeRabbitAI"),
        Some("@coderabbitai review")
    );
    assert_eq!(c.reviewers.trigger_for("copilot"), None);
    assert_eq!(c.reviewers.settle_timeout().as_secs(), 600);
    assert_eq!(
        err(&[user("[reviewers.trigger]\n\"a bot\" = \"hi\"\n")]),
        format!("invalid value for `reviewers.trigger.\"a bot\"` in {USER}: `a bot` is not a login (it has whitespace)")
    );
    assert_eq!(
        err(&[user("[reviewers.trigger]\nbot = 3\n")]),
        format!("wrong type for `reviewers.trigger.\"bot\"` in {USER}: expected a string, found integer")
    );
    assert_eq!(
        err(&[user("[reviewers]\ntrigger = \"x\"\n")]),
        format!("wrong type for `reviewers.trigger` in {USER}: expected a table of strings, found string")
    );
}
