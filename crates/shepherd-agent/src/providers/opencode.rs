//! opencode: `opencode run`, non-interactive.
//!
//! The prompt goes on stdin (the CLI appends stdin to its message).
//! `--format json` prints JSON Lines events: `text` events carry the
//! answer's text, `step_finish` events the tokens and cost of each step,
//! `error` events failures (also on a non-zero exit).
//!
//! Every call gets a configuration file of Shepherd's (`OPENCODE_CONFIG`,
//! merged over the user's global configuration, which keeps the model
//! providers) defining two agents, and runs one of them with `--agent`:
//! [`READ_ONLY_AGENT`] for read-only roles (reading and searching files
//! only: no bash, edit, write, web or sub-agent tool is offered) and
//! [`EDIT_AGENT`] for writing roles (file edits, and only read-only git
//! commands in bash). Everything not allowed is denied, never asked.
//! `OPENCODE_DISABLE_PROJECT_CONFIG` keeps the worktree's own
//! `opencode.json` (the pull request's) out; the title-generation call is
//! disabled; auto-update, sharing and the models.dev fetch are off.
//! `--dangerously-skip-permissions` is never used.

use serde_json::{json, Value};

use crate::agent::AgentError;
use crate::providers::extract;
use crate::providers::invocation::{sum_u64, CliFailure, Invocation, Parsed, Request};
use crate::providers::spec::{CliSpec, EnvNames};
use crate::providers::versions::Support;

/// The agent of read-only roles, defined in Shepherd's configuration.
pub(crate) const READ_ONLY_AGENT: &str = "shepherd-read-only";

/// The agent of writing roles, defined in Shepherd's configuration.
pub(crate) const EDIT_AGENT: &str = "shepherd-edit";

/// Read-only git commands the edit agent may run.
const GIT_READS: [&str; 5] = [
    "git diff*",
    "git log*",
    "git show*",
    "git status*",
    "git blame*",
];

/// Shepherd's opencode configuration (see the module docs).
pub(crate) fn config() -> Value {
    let read = |extra: Value| {
        let mut permission = json!({
            "*": "deny",
            "read": "allow",
            "glob": "allow",
            "grep": "allow",
            "list": "allow",
        });
        if let (Some(p), Some(extra)) = (permission.as_object_mut(), extra.as_object()) {
            p.extend(extra.clone());
        }
        permission
    };
    let mut bash = serde_json::Map::new();
    bash.insert("*".into(), json!("deny"));
    for pattern in GIT_READS {
        bash.insert(pattern.into(), json!("allow"));
    }
    json!({
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": false,
        "share": "disabled",
        "agent": {
            READ_ONLY_AGENT: {
                "mode": "primary",
                "description": "Shepherd's read-only roles: read and search files, nothing else.",
                "permission": read(json!({})),
            },
            EDIT_AGENT: {
                "mode": "primary",
                "description": "Shepherd's writing roles: edit files; read-only git commands.",
                "permission": read(json!({"edit": "allow", "bash": bash})),
            },
            "title": {"disable": true},
        },
    })
}

/// Fixed variables of every call, besides `OPENCODE_CONFIG`.
const FIXED_ENV: [(&str, &str); 5] = [
    ("OPENCODE_DISABLE_PROJECT_CONFIG", "1"),
    ("OPENCODE_DISABLE_AUTOUPDATE", "1"),
    ("OPENCODE_DISABLE_MODELS_FETCH", "1"),
    ("OPENCODE_DISABLE_SHARE", "1"),
    ("OPENCODE_DISABLE_LSP_DOWNLOAD", "1"),
];

pub(crate) fn invocation(req: &Request<'_>) -> Result<Invocation, AgentError> {
    let scratch = tempfile::Builder::new()
        .prefix("shepherd-opencode-")
        .tempdir()
        .map_err(|e| AgentError::io("creating", &std::env::temp_dir(), e))?;
    let config_file = scratch.path().join("opencode.json");
    std::fs::write(&config_file, config().to_string())
        .map_err(|e| AgentError::io("writing", &config_file, e))?;
    let mut args: Vec<String> = vec!["run".into(), "--format".into(), "json".into()];
    if let Some(model) = req.model {
        args.extend(["--model".to_owned(), model.to_owned()]);
    }
    let agent = if req.role.writes() {
        EDIT_AGENT
    } else {
        READ_ONLY_AGENT
    };
    args.extend(["--agent".to_owned(), agent.to_owned()]);
    args.extend(req.extra_args.iter().cloned());
    let mut invocation = Invocation::new(args, req.prompt.as_bytes().to_vec());
    invocation.env = FIXED_ENV
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .chain([(
            "OPENCODE_CONFIG".to_owned(),
            config_file.display().to_string(),
        )])
        .collect();
    invocation.scratch = Some(scratch);
    Ok(invocation)
}

fn events(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
        .collect()
}

/// The CLI's own error: the message of the last `error` event on stdout
/// (with the HTTP status when it names one), else the last line of stderr
/// that says `error`.
pub(crate) fn error_message(stdout: &str, stderr: &str) -> Option<String> {
    let events = events(stdout);
    let from_events = events
        .iter()
        .rev()
        .find(|e| e.get("type").and_then(Value::as_str) == Some("error"))
        .map(|e| {
            let err = e.get("error").unwrap_or(e);
            let data = err.get("data");
            let message = data
                .and_then(|d| d.get("message"))
                .or_else(|| err.get("message"))
                .and_then(Value::as_str)
                .map(str::to_owned)
                .unwrap_or_else(|| err.to_string());
            match data
                .and_then(|d| d.get("statusCode"))
                .and_then(Value::as_u64)
            {
                Some(status) if !message.contains(&status.to_string()) => {
                    format!("{message} (HTTP {status})")
                }
                _ => message,
            }
        });
    from_events
        .or_else(|| {
            stderr
                .lines()
                .rev()
                .find(|l| l.to_ascii_lowercase().contains("error"))
                .map(str::to_owned)
        })
        .map(|m| crate::driver::tail(&m, 300))
}

/// opencode's own error after a failed call ([`error_message`]), with the
/// HTTP status it names.
pub(crate) fn own_error(stdout: &str, stderr: &str) -> Option<CliFailure> {
    error_message(stdout, stderr).map(|m| CliFailure::from_message(m, stdout, stderr))
}

pub(crate) fn parse(stdout: &str) -> Result<Parsed, String> {
    let events = events(stdout);
    let of_type = |t: &'static str| {
        events
            .iter()
            .filter(move |e| e.get("type").and_then(Value::as_str) == Some(t))
    };
    let texts: Vec<&str> = of_type("text")
        .filter_map(|e| e.get("part")?.get("text")?.as_str())
        .collect();
    let steps: Vec<&Value> = of_type("step_finish")
        .filter_map(|e| e.get("part"))
        .collect();
    let tokens = |path: &[&str]| {
        sum_u64(
            steps
                .iter()
                .map(|p| path.iter().try_fold(*p, |v, key| v.get(*key))),
        )
    };
    let text = match texts.last() {
        Some(last) => {
            let answer = extract::json_object(last);
            if serde_json::from_str::<Value>(&answer).is_ok() {
                answer
            } else {
                extract::json_object(&texts.join("\n"))
            }
        }
        None => {
            return Err(match error_message(stdout, "") {
                Some(m) => format!("opencode reported an error: {m}"),
                None => "opencode printed no text".to_owned(),
            });
        }
    };
    let input = [
        tokens(&["tokens", "input"]),
        tokens(&["tokens", "cache", "read"]),
        tokens(&["tokens", "cache", "write"]),
    ];
    let output = [
        tokens(&["tokens", "output"]),
        tokens(&["tokens", "reasoning"]),
    ];
    let add = |parts: &[Option<u64>]| {
        parts
            .iter()
            .flatten()
            .fold(None, |acc: Option<u64>, n| Some(acc.unwrap_or(0) + n))
    };
    let cost = steps
        .iter()
        .filter_map(|p| p.get("cost").and_then(Value::as_f64))
        .fold(None, |acc: Option<f64>, c| Some(acc.unwrap_or(0.0) + c));
    Ok(Parsed {
        text,
        input_tokens: add(&input),
        output_tokens: add(&output),
        cost_usd: cost,
    })
}

/// opencode, described ([`CliSpec`]).
pub(crate) struct Spec;

impl CliSpec for Spec {
    fn name(&self) -> &'static str {
        "opencode"
    }

    fn support(&self) -> Support {
        Support {
            package: "opencode-ai",
            tested: (1, 18, 33),
        }
    }

    // opencode's keys depend on the model provider: the user names them in
    // `agent.env` (see CliConfig::from_settings).
    fn env_names(&self, _is_set: &dyn Fn(&str) -> bool) -> EnvNames {
        (Vec::new(), Vec::new())
    }

    // Its configuration and variables turn updates off (see the module
    // docs); its events say nothing about its retries: no classifier.

    fn own_error(&self, stdout: &str, stderr: &str) -> Option<CliFailure> {
        own_error(stdout, stderr)
    }

    // The key variable and the endpoint are in opencode's provider
    // configuration.
    fn key_variable(&self) -> Option<&'static str> {
        None
    }

    fn base_url_variable(&self) -> Option<(&'static str, &'static str)> {
        None
    }

    fn invocation(&self, request: &Request<'_>) -> Result<Invocation, AgentError> {
        invocation(request)
    }

    fn parse(&self, stdout: &str, _answer_file: Option<&str>) -> Result<Parsed, String> {
        parse(stdout)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;
    use crate::task::Role;
    use serde_json::json;

    #[test]
    fn roles_run_shepherds_agents() {
        let req = |role| Request {
            role,
            worktree: std::path::Path::new("/wt"),
            prompt: "PROMPT",
            schema: &Value::Null,
            model: Some("anthropic/claude-sonnet-4-5"),
            extra_args: &[],
        };
        let read = invocation(&req(Role::Triage)).unwrap();
        assert_eq!(
            read.args,
            [
                "run",
                "--format",
                "json",
                "--model",
                "anthropic/claude-sonnet-4-5",
                "--agent",
                READ_ONLY_AGENT
            ]
        );
        assert_eq!(read.stdin, b"PROMPT");
        let env: std::collections::BTreeMap<_, _> = read.env.iter().cloned().collect();
        assert_eq!(env["OPENCODE_DISABLE_PROJECT_CONFIG"], "1");
        let config: Value =
            serde_json::from_str(&std::fs::read_to_string(&env["OPENCODE_CONFIG"]).unwrap())
                .unwrap();
        assert_eq!(config, super::config());
        let write = invocation(&req(Role::Fix)).unwrap();
        assert!(write.args.windows(2).any(|w| w == ["--agent", EDIT_AGENT]));
        assert!(!write.args.iter().any(|a| a.contains("dangerously")));
    }

    #[test]
    fn the_read_only_agent_has_no_tool_that_changes_anything() {
        let config = config();
        let read = &config["agent"][READ_ONLY_AGENT]["permission"];
        assert_eq!(read["*"], "deny");
        for tool in ["bash", "edit", "write", "patch", "webfetch", "task"] {
            assert!(read.get(tool).is_none(), "{tool} is not allowed");
        }
        let edit = &config["agent"][EDIT_AGENT]["permission"];
        assert_eq!(edit["edit"], "allow");
        assert_eq!(edit["bash"]["*"], "deny");
        assert!(edit["bash"].get("git commit*").is_none());
        assert_eq!(edit["bash"]["git diff*"], "allow");
        assert_eq!(config["agent"]["title"]["disable"], true);
    }

    #[test]
    fn the_cli_error_names_the_status() {
        let error = json!({"type": "error", "error": {"name": "APIError", "data": {"message": "Unauthorized", "statusCode": 401}}});
        assert_eq!(
            error_message(&error.to_string(), "").as_deref(),
            Some("Unauthorized (HTTP 401)")
        );
        assert_eq!(
            error_message("", "ok\nError: boom"),
            Some("Error: boom".into())
        );
    }

    #[test]
    fn reads_text_and_sums_steps() {
        let events = [
            json!({"type": "step_start", "part": {"type": "step-start"}}),
            json!({"type": "text", "part": {"type": "text", "text": "Let me look."}}),
            json!({"type": "step_finish", "part": {"cost": 0.01, "tokens": {"input": 100, "output": 10, "reasoning": 2, "cache": {"read": 50, "write": 0}}}}),
            json!({"type": "text", "part": {"type": "text", "text": "{\"items\":[]}"}}),
            json!({"type": "step_finish", "part": {"cost": 0.02, "tokens": {"input": 20, "output": 5}}}),
        ]
        .map(|e| e.to_string())
        .join("\n");
        let p = parse(&events).unwrap();
        assert_eq!(p.text, "{\"items\":[]}");
        assert_eq!((p.input_tokens, p.output_tokens), (Some(170), Some(17)));
        assert!((p.cost_usd.unwrap() - 0.03).abs() < 1e-9);
        let error = json!({"type": "error", "error": {"name": "APIError", "data": {"message": "invalid model"}}});
        assert!(parse(&error.to_string())
            .unwrap_err()
            .contains("invalid model"));
        assert!(parse("").is_err());
    }
}
