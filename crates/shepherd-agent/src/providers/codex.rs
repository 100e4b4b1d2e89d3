//! OpenAI Codex CLI: `codex exec`, non-interactive (checked against 0.171.0).
//!
//! The prompt goes on stdin (`-` as the prompt argument). The answer schema
//! is written to a file for `--output-schema` (in the strict subset, see
//! [`crate::providers::strict`]); the final message is written by Codex to
//! the `--output-last-message` file. `--json` turns stdout into JSON Lines
//! events, whose `turn.completed` events carry the token usage. Read-only
//! roles run in the `read-only` sandbox, writing roles in `workspace-write`.
//!
//! codex does not read `OPENAI_BASE_URL`: when it is set, Shepherd gives
//! codex a `CODEX_HOME` of its own in the run directory whose `config.toml`
//! declares a model provider at that URL (keyed by `OPENAI_API_KEY`,
//! Responses API), and never touches the user's `~/.codex`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::agent::AgentError;
use crate::exec::{LineSignal, OutputStream};
use crate::providers::invocation::{
    sum_u64, CliFailure, ConfiguredEndpoint, Invocation, Parsed, Request,
};
use crate::providers::spec::{CliSpec, EnvNames};
use crate::providers::strict::strict_schema;
use crate::providers::versions::Support;

/// The model provider id Shepherd declares in its own `CODEX_HOME`.
pub(crate) const PROVIDER_ID: &str = "shepherd";

/// `s` as a TOML basic string.
fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The `config.toml` of Shepherd's `CODEX_HOME`: one model provider at
/// `base_url` (Responses API, key from `OPENAI_API_KEY`), no update check,
/// no analytics.
pub(crate) fn config_toml(base_url: &str) -> String {
    format!(
        "# Written by Shepherd for its codex calls; the user's ~/.codex is not used.\n\
         model_provider = {id}\n\
         check_for_update_on_startup = false\n\
         \n\
         [analytics]\n\
         enabled = false\n\
         \n\
         [model_providers.{PROVIDER_ID}]\n\
         name = {name}\n\
         base_url = {url}\n\
         env_key = \"OPENAI_API_KEY\"\n\
         wire_api = \"responses\"\n",
        id = toml_string(PROVIDER_ID),
        name = toml_string("OPENAI_BASE_URL (set by Shepherd)"),
        url = toml_string(base_url.trim_end_matches('/')),
    )
}

/// The endpoint the user's codex `config.toml` at `path` selects: the
/// `[model_providers.ID]` table (its `base_url` and `env_key`) that the
/// top-level `model_provider = "ID"` names, as codex's configuration
/// reference describes them (developers.openai.com/codex/config-advanced,
/// "model_providers"). `None` when the file is absent or unreadable, selects
/// no provider, or selects one it does not declare with a `base_url` (a
/// built-in such as `openai`, whose endpoint is codex's default).
pub(crate) fn configured_endpoint(path: &Path) -> Option<ConfiguredEndpoint> {
    let text = std::fs::read_to_string(path).ok()?;
    let config: toml::Table = match text.parse() {
        Ok(config) => config,
        Err(err) => {
            tracing::debug!(%err, path = %path.display(), "cannot read codex's config.toml");
            return None;
        }
    };
    let id = config.get("model_provider")?.as_str()?;
    let provider = config
        .get("model_providers")?
        .as_table()?
        .get(id)?
        .as_table()?;
    let url = provider.get("base_url")?.as_str()?;
    Some(ConfiguredEndpoint {
        url: url.trim_end_matches('/').to_owned(),
        source: format!("model provider `{id}` of {}", path.display()),
        key_variable: provider
            .get("env_key")
            .and_then(toml::Value::as_str)
            .map(str::to_owned),
    })
}

/// Writes Shepherd's `CODEX_HOME` for `base_url` under `dir`; returns it.
pub(crate) fn prepare_home(dir: &Path, base_url: &str) -> Result<PathBuf, AgentError> {
    let home = dir.join("codex-home");
    std::fs::create_dir_all(&home).map_err(|e| AgentError::io("creating", &home, e))?;
    let config = home.join("config.toml");
    std::fs::write(&config, config_toml(base_url))
        .map_err(|e| AgentError::io("writing", &config, e))?;
    Ok(home)
}

pub(crate) fn invocation(req: &Request<'_>) -> Result<Invocation, AgentError> {
    let scratch = tempfile::Builder::new()
        .prefix("shepherd-codex-")
        .tempdir()
        .map_err(|e| AgentError::io("creating", &std::env::temp_dir(), e))?;
    let schema_file = scratch.path().join("answer-schema.json");
    let answer_file = scratch.path().join("last-message.json");
    std::fs::write(&schema_file, strict_schema(req.schema).to_string())
        .map_err(|e| AgentError::io("writing", &schema_file, e))?;
    let sandbox = if req.role.writes() {
        "workspace-write"
    } else {
        "read-only"
    };
    let mut args: Vec<String> = vec![
        "exec".into(),
        "--json".into(),
        "--sandbox".into(),
        sandbox.into(),
        "--skip-git-repo-check".into(),
        "-C".into(),
        req.worktree.display().to_string(),
        "--output-schema".into(),
        schema_file.display().to_string(),
        "--output-last-message".into(),
        answer_file.display().to_string(),
    ];
    if let Some(model) = req.model {
        args.extend(["--model".to_owned(), model.to_owned()]);
    }
    args.extend(req.extra_args.iter().cloned());
    // Read the prompt from stdin.
    args.push("-".into());
    let mut invocation = Invocation::new(args, req.prompt.as_bytes().to_vec());
    invocation.scratch = Some(scratch);
    invocation.answer_file = Some(answer_file);
    Ok(invocation)
}

fn message(v: &Value) -> String {
    let m = v
        .get("error")
        .and_then(|e| e.get("message"))
        .or_else(|| v.get("message"))
        .and_then(Value::as_str)
        .unwrap_or("no message");
    crate::driver::tail(m, 300)
}

fn event_kind(v: &Value) -> Option<&str> {
    v.get("type").and_then(Value::as_str)
}

/// The HTTP status in one of codex's error messages (`unexpected status
/// 401 Unauthorized: ...`).
fn status_in(message: &str) -> Option<u16> {
    let rest = &message[message.find("status")? + "status".len()..];
    let rest = rest.trim_start_matches([':', ' ']);
    rest.get(..3)?.parse().ok()
}

/// What a `--json` event line says: items and turns are progress; an
/// `error` event "Reconnecting... n/m (...)" is a retry, and with a 401 or
/// 403 a call that cannot succeed.
pub(crate) fn classify(stream: OutputStream, line: &str) -> LineSignal {
    if stream == OutputStream::Stderr {
        return LineSignal::Neutral;
    }
    let Ok(v) = serde_json::from_str::<Value>(line) else {
        return LineSignal::Neutral;
    };
    match event_kind(&v) {
        Some("error") => {
            let m = v.get("message").and_then(Value::as_str).unwrap_or("");
            match status_in(m) {
                Some(401 | 403) => LineSignal::Fatal(crate::driver::tail(m, 300)),
                _ if m.starts_with("Reconnecting") => LineSignal::Retry,
                _ => LineSignal::Neutral,
            }
        }
        Some("item.completed") | Some("item.started") => {
            let item = v
                .get("item")
                .and_then(|i| i.get("type"))
                .and_then(Value::as_str);
            if item == Some("error") {
                LineSignal::Neutral
            } else {
                LineSignal::Progress
            }
        }
        Some("turn.completed") => LineSignal::Progress,
        _ => LineSignal::Neutral,
    }
}

/// codex's own error: the failed turn's message, else the last `error`
/// event (a final one over a "Reconnecting..."), else its stderr.
pub(crate) fn own_error(stdout: &str, stderr: &str) -> Option<CliFailure> {
    let events: Vec<Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
        .collect();
    let failed = events
        .iter()
        .rev()
        .find(|e| event_kind(e) == Some("turn.failed"))
        .map(message);
    let errors: Vec<String> = events
        .iter()
        .filter(|e| event_kind(e) == Some("error"))
        .map(message)
        .collect();
    let last_error = errors
        .iter()
        .rev()
        .find(|m| !m.starts_with("Reconnecting"))
        .or(errors.last())
        .cloned();
    let message = failed.or(last_error).or_else(|| {
        // Its stderr, without the start-up warnings it always prints.
        let kept: Vec<&str> = stderr
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with("WARNING: proceeding"))
            .collect();
        (!kept.is_empty()).then(|| crate::driver::tail(&kept.join("\n"), 300))
    })?;
    Some(CliFailure {
        status: status_in(&message),
        message,
    })
}

pub(crate) fn parse(stdout: &str, last_message: Option<&str>) -> Result<Parsed, String> {
    let events: Vec<Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
        .collect();
    let kind = |v: &Value| v.get("type").and_then(Value::as_str).map(str::to_owned);
    if let Some(failed) = events
        .iter()
        .find(|e| kind(e).as_deref() == Some("turn.failed"))
    {
        return Err(format!("codex reported a failed turn: {}", message(failed)));
    }
    let turns: Vec<&Value> = events
        .iter()
        .filter(|e| kind(e).as_deref() == Some("turn.completed"))
        .filter_map(|e| e.get("usage"))
        .collect();
    let last_agent_message = events
        .iter()
        .rev()
        .filter(|e| kind(e).as_deref() == Some("item.completed"))
        .filter_map(|e| e.get("item"))
        .find(|item| {
            matches!(
                item.get("type").and_then(Value::as_str),
                Some("agent_message" | "assistant_message")
            )
        })
        .and_then(|item| item.get("text"))
        .and_then(Value::as_str);
    let text = match last_message.map(str::trim).filter(|m| !m.is_empty()) {
        Some(m) => m.to_owned(),
        None => match last_agent_message {
            Some(m) => crate::providers::extract::json_object(m),
            None => {
                return Err(
                    match events
                        .iter()
                        .rev()
                        .find(|e| kind(e).as_deref() == Some("error"))
                    {
                        Some(e) => format!("codex reported an error: {}", message(e)),
                        None => "codex gave no final message".to_owned(),
                    },
                )
            }
        },
    };
    Ok(Parsed {
        text,
        input_tokens: sum_u64(turns.iter().map(|u| u.get("input_tokens"))),
        output_tokens: sum_u64(turns.iter().map(|u| u.get("output_tokens"))),
        cost_usd: None,
    })
}

/// OpenAI Codex CLI, described ([`CliSpec`]).
pub(crate) struct Spec;

impl CliSpec for Spec {
    fn name(&self) -> &'static str {
        "codex"
    }

    fn support(&self) -> Support {
        Support {
            package: "@openai/codex",
            tested: (0, 171, 0),
        }
    }

    fn env_names(&self, _is_set: &dyn Fn(&str) -> bool) -> EnvNames {
        (
            vec!["CODEX_HOME", "OPENAI_BASE_URL"],
            vec!["OPENAI_API_KEY"],
        )
    }

    // Shepherd's CODEX_HOME turns update checks and analytics off.

    fn classifier(&self) -> Option<fn(OutputStream, &str) -> LineSignal> {
        Some(classify)
    }

    fn own_error(&self, stdout: &str, stderr: &str) -> Option<CliFailure> {
        own_error(stdout, stderr)
    }

    fn key_variable(&self) -> Option<&'static str> {
        Some("OPENAI_API_KEY")
    }

    fn base_url_variable(&self) -> Option<(&'static str, &'static str)> {
        Some(("OPENAI_BASE_URL", "https://api.openai.com/v1"))
    }

    fn configured_endpoint(
        &self,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Option<ConfiguredEndpoint> {
        let home = env("CODEX_HOME")
            .map(PathBuf::from)
            .or_else(|| env("HOME").map(|h| Path::new(&h).join(".codex")))?;
        configured_endpoint(&home.join("config.toml"))
    }

    fn invocation(&self, request: &Request<'_>) -> Result<Invocation, AgentError> {
        invocation(request)
    }

    fn parse(&self, stdout: &str, answer_file: Option<&str>) -> Result<Parsed, String> {
        parse(stdout, answer_file)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;
    use crate::task::Role;
    use serde_json::json;

    #[test]
    fn the_users_config_names_the_endpoint_codex_calls() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        assert_eq!(configured_endpoint(&path), None, "no file");
        std::fs::write(
            &path,
            "model_provider = \"proxy\"\n[model_providers.proxy]\nname = \"p\"\n\
             base_url = \"https://proxy.example/v1/\"\nenv_key = \"PROXY_KEY\"\n",
        )
        .unwrap();
        assert_eq!(
            configured_endpoint(&path),
            Some(ConfiguredEndpoint {
                url: "https://proxy.example/v1".into(),
                source: format!("model provider `proxy` of {}", path.display()),
                key_variable: Some("PROXY_KEY".into()),
            })
        );
        // A built-in provider, none selected, or not TOML: codex's default.
        for text in [
            "model_provider = \"openai\"\n",
            "model = \"o3\"\n",
            "model_provider = [",
        ] {
            std::fs::write(&path, text).unwrap();
            assert_eq!(configured_endpoint(&path), None, "{text}");
        }
    }

    fn invoke(role: Role) -> Invocation {
        let schema =
            json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "x"}}});
        invocation(&Request {
            role,
            worktree: std::path::Path::new("/wt"),
            prompt: "PROMPT",
            schema: &schema,
            model: None,
            extra_args: &[],
        })
        .unwrap()
    }

    #[test]
    fn sandbox_follows_the_role_and_the_schema_is_strict() {
        let read = invoke(Role::Review);
        let a = &read.args;
        assert_eq!(a[0], "exec");
        let sandbox = a.iter().position(|x| x == "--sandbox").unwrap();
        assert_eq!(a[sandbox + 1], "read-only");
        assert_eq!(a.last().unwrap(), "-");
        assert_eq!(read.stdin, b"PROMPT");
        let schema_path = &a[a.iter().position(|x| x == "--output-schema").unwrap() + 1];
        let written: Value =
            serde_json::from_str(&std::fs::read_to_string(schema_path).unwrap()).unwrap();
        assert_eq!(written["properties"]["a"], json!({"type": "string"}));
        let write = invoke(Role::Fix);
        let sandbox = write.args.iter().position(|x| x == "--sandbox").unwrap();
        assert_eq!(write.args[sandbox + 1], "workspace-write");
        assert!(!write
            .args
            .iter()
            .any(|x| x.contains("danger") || x.contains("full-auto")));
    }

    #[test]
    fn reads_the_last_message_and_sums_turn_usage() {
        let events = [
            json!({"type": "thread.started", "thread_id": "t"}),
            json!({"type": "turn.completed", "usage": {"input_tokens": 100, "cached_input_tokens": 80, "output_tokens": 5}}),
            json!({"type": "item.completed", "item": {"type": "agent_message", "text": "{\"from\":\"events\"}"}}),
            json!({"type": "turn.completed", "usage": {"input_tokens": 20, "output_tokens": 3}}),
        ]
        .map(|e| e.to_string())
        .join("\n");
        let p = parse(&events, Some("{\"from\":\"file\"}\n")).unwrap();
        assert_eq!(p.text, "{\"from\":\"file\"}");
        assert_eq!((p.input_tokens, p.output_tokens), (Some(120), Some(8)));
        assert_eq!(parse(&events, None).unwrap().text, "{\"from\":\"events\"}");
        let failed =
            json!({"type": "turn.failed", "error": {"message": "usage limit"}}).to_string();
        assert!(parse(&failed, Some("{}"))
            .unwrap_err()
            .contains("usage limit"));
        assert!(parse("", None).is_err());
    }

    #[test]
    fn reconnects_are_retries_a_401_is_fatal_and_the_turn_error_is_reported() {
        let reconnect = |status: &str| {
            json!({"type": "error", "message": format!("Reconnecting... 1/5 (unexpected status {status}: x, url: http://h/v1/responses)")})
                .to_string()
        };
        assert_eq!(
            classify(OutputStream::Stdout, &reconnect("429 Too Many Requests")),
            LineSignal::Retry
        );
        assert!(matches!(
            classify(OutputStream::Stdout, &reconnect("401 Unauthorized")),
            LineSignal::Fatal(_)
        ));
        let item =
            json!({"type": "item.completed", "item": {"type": "command_execution"}}).to_string();
        assert_eq!(classify(OutputStream::Stdout, &item), LineSignal::Progress);
        let warning = json!({"type": "item.completed", "item": {"type": "error", "message": "Model metadata"}}).to_string();
        assert_eq!(
            classify(OutputStream::Stdout, &warning),
            LineSignal::Neutral
        );

        let failed = json!({"type": "turn.failed", "error": {"message": "unexpected status 401 Unauthorized: bad key"}});
        let out = format!("{}\n{failed}", reconnect("401 Unauthorized"));
        let own = own_error(&out, "WARNING: proceeding, even though ...").unwrap();
        assert_eq!(own.status, Some(401));
        assert!(own.message.contains("bad key"), "{}", own.message);
        assert!(own_error("", "WARNING: proceeding, even though ...").is_none());
        assert_eq!(
            status_in("exceeded retry limit, last status: 429 Too Many Requests"),
            Some(429)
        );
    }

    #[test]
    fn shepherds_codex_home_declares_the_base_url() {
        let dir = tempfile::tempdir().unwrap();
        let home = prepare_home(dir.path(), "http://127.0.0.1:9/v1/").unwrap();
        let config = std::fs::read_to_string(home.join("config.toml")).unwrap();
        assert!(config.contains("model_provider = \"shepherd\""), "{config}");
        assert!(config.contains("[model_providers.shepherd]"), "{config}");
        assert!(
            config.contains("base_url = \"http://127.0.0.1:9/v1\""),
            "{config}"
        );
        assert!(config.contains("env_key = \"OPENAI_API_KEY\""), "{config}");
        assert_eq!(toml_string("a\"b\\c"), r#""a\"b\\c""#);
    }
}
