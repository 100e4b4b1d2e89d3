//! GitHub Copilot CLI: `copilot -s`, programmatic mode.
//!
//! The prompt goes on stdin (without `-p`, the CLI reads it there; as an
//! argument, Linux would refuse a prompt over 128 KiB). `--output-format
//! json` prints JSON Lines events: the last `assistant.message` carries the
//! answer's text, a `result` event the exit code. `--usage-output-file`
//! makes the CLI write its usage (tokens per model) to a file, read after
//! it exits. Tools are allowed and denied per role with
//! `--allow-tool`/`--deny-tool`; `--allow-all-tools` is never used. The
//! built-in MCP servers (GitHub's, which act with the user's login) are
//! disabled, and so is auto-update. Copilot authenticates with its stored
//! login under `HOME`, or with a model provider of your own (BYOK:
//! `COPILOT_PROVIDER_BASE_URL`, `COPILOT_PROVIDER_API_KEY`, ...); no GitHub
//! token variable is passed (they are forge credentials).

use serde_json::Value;

use crate::agent::AgentError;
use crate::exec::{LineSignal, OutputStream};
use crate::providers::extract;
use crate::providers::invocation::{sum_u64, CliFailure, Invocation, Parsed, Request};
use crate::providers::spec::{CliSpec, EnvNames};
use crate::providers::versions::Support;

/// Allowed to every role: read-only git commands (reading files is allowed
/// by default).
pub(crate) const ALLOWED: &str = "shell(git diff),shell(git log),shell(git show),shell(git status)";

/// Denied to every role: git state changes and fetching URLs.
pub(crate) const DENIED: &str = "shell(git push),shell(git commit),shell(git reset),\
shell(git checkout),shell(git switch),shell(git rebase),shell(git merge),shell(git stash),\
shell(git tag),shell(git remote),url";

pub(crate) fn invocation(req: &Request<'_>) -> Result<Invocation, AgentError> {
    let scratch = tempfile::Builder::new()
        .prefix("shepherd-copilot-")
        .tempdir()
        .map_err(|e| AgentError::io("creating", &std::env::temp_dir(), e))?;
    let usage_file = scratch.path().join("usage.json");
    let mut args: Vec<String> = vec![
        "-s".into(),
        "--no-ask-user".into(),
        "--output-format".into(),
        "json".into(),
        "--usage-output-file".into(),
        usage_file.display().to_string(),
        "--no-auto-update".into(),
        "--disable-builtin-mcps".into(),
    ];
    if let Some(model) = req.model {
        args.extend(["--model".to_owned(), model.to_owned()]);
    }
    args.extend(req.extra_args.iter().cloned());
    let (allowed, denied) = if req.role.writes() {
        (format!("write,{ALLOWED}"), DENIED.to_owned())
    } else {
        (ALLOWED.to_owned(), format!("write,{DENIED}"))
    };
    args.extend([
        "--allow-tool".to_owned(),
        allowed,
        "--deny-tool".to_owned(),
        denied,
    ]);
    let mut invocation = Invocation::new(args, req.prompt.as_bytes().to_vec());
    invocation.scratch = Some(scratch);
    invocation.answer_file = Some(usage_file);
    Ok(invocation)
}

fn events(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
        .filter(|e| e.get("type").is_some_and(Value::is_string))
        .collect()
}

fn of_type<'a>(events: &'a [Value], kind: &'a str) -> impl DoubleEndedIterator<Item = &'a Value> {
    events
        .iter()
        .filter(move |e| e.get("type").and_then(Value::as_str) == Some(kind))
}

/// How Copilot CLI's JSON Lines read while it runs: a turn, a message or a
/// finished tool is progress; a failed model call is a retry, or, for a
/// 401 or 403, a call that cannot succeed.
pub(crate) fn classify(stream: OutputStream, line: &str) -> LineSignal {
    if stream == OutputStream::Stderr {
        return LineSignal::Neutral;
    }
    let Ok(event) = serde_json::from_str::<Value>(line) else {
        return LineSignal::Neutral;
    };
    match event.get("type").and_then(Value::as_str) {
        Some(
            "assistant.message"
            | "assistant.turn_start"
            | "assistant.turn_end"
            | "tool.execution_complete"
            | "result",
        ) => LineSignal::Progress,
        Some("model.call_failure") => {
            let data = event.get("data");
            match data
                .and_then(|d| d.get("statusCode"))
                .and_then(Value::as_u64)
            {
                Some(code @ (401 | 403)) => LineSignal::Fatal(format!(
                    "{code} ({})",
                    data.and_then(|d| d.get("errorMessage"))
                        .and_then(Value::as_str)
                        .unwrap_or("the model provider refused the key")
                )),
                _ => LineSignal::Retry,
            }
        }
        _ => LineSignal::Neutral,
    }
}

/// The CLI's own error: the message of the last failed model call or
/// `session.error` event on stdout, else the last line of stderr that says
/// `error`.
pub(crate) fn error_message(stdout: &str, stderr: &str) -> Option<String> {
    let events = events(stdout);
    let from_events = events.iter().rev().find_map(|e| {
        let kind = e.get("type").and_then(Value::as_str)?;
        if !kind.ends_with("error") && !kind.ends_with("failure") {
            return None;
        }
        let data = e.get("data")?;
        let message = data
            .get("message")
            .or_else(|| data.get("errorMessage"))
            .or_else(|| data.get("error").and_then(|x| x.get("message")))
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_else(|| data.to_string());
        // A message that is the API's JSON error body: its own message.
        let api = serde_json::from_str::<Value>(&message).ok();
        let inner = api
            .as_ref()
            .and_then(|v| v.get("error").or(Some(v)))
            .and_then(|v| v.get("message"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        Some(inner.unwrap_or(message))
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

/// Copilot CLI's own error after a failed call ([`error_message`]), with the
/// HTTP status it names.
pub(crate) fn own_error(stdout: &str, stderr: &str) -> Option<CliFailure> {
    error_message(stdout, stderr).map(|m| CliFailure::from_message(m, stdout, stderr))
}

/// The answer (the last assistant message with text) and the usage, from
/// the JSON Lines on stdout and the usage file. Plain text on stdout (an
/// older CLI, or `--output-format text` in `extra_args`) is read as the
/// answer.
pub(crate) fn parse(stdout: &str, usage_file: Option<&str>) -> Result<Parsed, String> {
    let events = events(stdout);
    let text = if events.is_empty() {
        if stdout.trim().is_empty() {
            return Err("copilot printed no answer".to_owned());
        }
        extract::json_object(stdout)
    } else {
        let message = of_type(&events, "assistant.message")
            .filter_map(|e| e.get("data")?.get("content")?.as_str())
            .rfind(|t| !t.trim().is_empty());
        match message {
            Some(m) => extract::json_object(m),
            None => {
                return Err(match error_message(stdout, "") {
                    Some(m) => format!("copilot reported an error: {m}"),
                    None => "copilot printed no assistant message".to_owned(),
                })
            }
        }
    };
    let usage: Option<Value> = usage_file.and_then(|u| serde_json::from_str(u).ok());
    let models: Vec<&Value> = usage
        .as_ref()
        .and_then(|u| u.get("modelMetrics"))
        .and_then(Value::as_object)
        .map(|m| m.values().filter_map(|model| model.get("usage")).collect())
        .unwrap_or_default();
    Ok(Parsed {
        text,
        input_tokens: sum_u64(models.iter().flat_map(|u| {
            [
                u.get("inputTokens"),
                u.get("cacheReadTokens"),
                u.get("cacheWriteTokens"),
            ]
        })),
        output_tokens: sum_u64(models.iter().map(|u| u.get("outputTokens"))),
        cost_usd: None,
    })
}

/// GitHub Copilot CLI, described ([`CliSpec`]).
pub(crate) struct Spec;

impl CliSpec for Spec {
    fn name(&self) -> &'static str {
        "copilot"
    }

    fn support(&self) -> Support {
        Support {
            package: "@github/copilot",
            tested: (1, 0, 102),
        }
    }

    // Copilot authenticates with its stored login under HOME (its GitHub
    // token variables are forge credentials and never passed), or, with a
    // model provider of your own (BYOK, `COPILOT_PROVIDER_BASE_URL`), with
    // that provider's key.
    fn env_names(&self, is_set: &dyn Fn(&str) -> bool) -> EnvNames {
        let mut pass = vec!["COPILOT_HOME", "COPILOT_MODEL", "COPILOT_OFFLINE"];
        let mut credentials = Vec::new();
        if is_set("COPILOT_PROVIDER_BASE_URL") {
            pass.extend([
                "COPILOT_PROVIDER_BASE_URL",
                "COPILOT_PROVIDER_TYPE",
                "COPILOT_PROVIDER_WIRE_API",
                "COPILOT_PROVIDER_TRANSPORT",
                "COPILOT_PROVIDER_MODEL_ID",
                "COPILOT_PROVIDER_WIRE_MODEL",
                "COPILOT_PROVIDER_AZURE_API_VERSION",
            ]);
            credentials.extend([
                "COPILOT_PROVIDER_API_KEY",
                "COPILOT_PROVIDER_BEARER_TOKEN",
                "COPILOT_PROVIDER_API_KEY_COMMAND",
                "COPILOT_PROVIDER_HEADERS",
                // Limits, not secrets, but named like tokens.
                "COPILOT_PROVIDER_MAX_PROMPT_TOKENS",
                "COPILOT_PROVIDER_MAX_OUTPUT_TOKENS",
            ]);
        }
        (pass, credentials)
    }

    fn fixed_env(&self) -> &'static [(&'static str, &'static str)] {
        &[("COPILOT_AUTO_UPDATE", "false")]
    }

    fn classifier(&self) -> Option<fn(OutputStream, &str) -> LineSignal> {
        Some(classify)
    }

    fn own_error(&self, stdout: &str, stderr: &str) -> Option<CliFailure> {
        own_error(stdout, stderr)
    }

    fn key_variable(&self) -> Option<&'static str> {
        Some("COPILOT_PROVIDER_API_KEY (or the stored login)")
    }

    fn base_url_variable(&self) -> Option<(&'static str, &'static str)> {
        Some(("COPILOT_PROVIDER_BASE_URL", "GitHub Copilot's own endpoint"))
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

    fn invoke(role: Role, prompt: &str) -> Invocation {
        invocation(&Request {
            role,
            worktree: std::path::Path::new("/wt"),
            prompt,
            schema: &serde_json::json!({}),
            model: Some("gpt-5"),
            extra_args: &[],
        })
        .unwrap()
    }

    #[test]
    fn tools_follow_the_role() {
        let read = invoke(Role::Triage, "P").args;
        assert_eq!(
            &read[..4],
            ["-s", "--no-ask-user", "--output-format", "json"]
        );
        assert!(read.iter().any(|a| a == "--disable-builtin-mcps"));
        let denied = &read[read.iter().position(|a| a == "--deny-tool").unwrap() + 1];
        assert!(denied.starts_with("write,") && denied.contains("shell(git push)"));
        let fix = invoke(Role::Fix, "P").args;
        let allowed = &fix[fix.iter().position(|a| a == "--allow-tool").unwrap() + 1];
        assert!(allowed.starts_with("write,"));
        let denied = &fix[fix.iter().position(|a| a == "--deny-tool").unwrap() + 1];
        assert!(!denied.contains("write") && denied.contains("shell(git push)"));
        for a in [&read, &fix] {
            assert!(!a
                .iter()
                .any(|x| x.starts_with("--allow-all") || x == "--yolo" || x == "-p"));
        }
    }

    #[test]
    fn long_prompts_go_on_stdin() {
        let long = "x".repeat(200_000);
        let i = invoke(Role::Triage, &long);
        assert_eq!(i.stdin.len(), 200_000);
        assert!(i.args.iter().all(|a| a.len() < 1000));
        let usage = i.answer_file.unwrap();
        let flag = i
            .args
            .iter()
            .position(|a| a == "--usage-output-file")
            .unwrap();
        assert_eq!(i.args[flag + 1], usage.display().to_string());
    }

    #[test]
    fn reads_the_last_message_and_the_usage_file() {
        let out = [
            json!({"type": "user.message", "data": {"content": "P"}}),
            json!({"type": "assistant.message", "data": {"content": "", "toolRequests": [{"name": "bash"}]}}),
            json!({"type": "assistant.message", "data": {"content": "Done:\n{\"items\":[]}"}}),
            json!({"type": "result", "exitCode": 0}),
        ]
        .map(|e| e.to_string())
        .join("\n");
        let usage = json!({"modelMetrics": {
            "gpt-5": {"usage": {"inputTokens": 200, "outputTokens": 14, "cacheReadTokens": 50, "cacheWriteTokens": 0}},
            "gpt-5-mini": {"usage": {"inputTokens": 10, "outputTokens": 1}}
        }});
        let p = parse(&out, Some(&usage.to_string())).unwrap();
        assert_eq!(p.text, "{\"items\":[]}");
        assert_eq!((p.input_tokens, p.output_tokens), (Some(260), Some(15)));
        let p = parse(&out, None).unwrap();
        assert_eq!(p.input_tokens, None);
        // Plain text output.
        let p = parse("I looked at the code.\n\n{\"items\":[]}\n", None).unwrap();
        assert_eq!(p.text, "{\"items\":[]}");
        assert!(parse("  \n", None).is_err());
    }

    #[test]
    fn a_failed_model_call_is_the_error() {
        let out = [
            json!({"type": "model.call_failure", "data": {"statusCode": 401, "errorMessage": "401 Unauthorized: bad key"}}),
            json!({"type": "session.error", "data": {"errorType": "authentication", "message": "Authentication failed (401)"}}),
        ]
        .map(|e| e.to_string())
        .join("\n");
        assert_eq!(
            error_message(&out, "").as_deref(),
            Some("Authentication failed (401)")
        );
        assert!(parse(&out, None)
            .unwrap_err()
            .contains("Authentication failed"));
        assert_eq!(
            error_message("", "x\nError: no model\n").as_deref(),
            Some("Error: no model")
        );
        let body = json!({"type": "model.call_failure", "data": {"statusCode": 401,
            "errorMessage": "{\"code\":\"invalid_api_key\",\"message\":\"bad key\"}"}});
        assert_eq!(
            error_message(&body.to_string(), "").as_deref(),
            Some("bad key")
        );
    }

    #[test]
    fn failed_model_calls_are_retries_and_a_401_is_fatal() {
        let line = |v: serde_json::Value| v.to_string();
        assert_eq!(
            classify(
                OutputStream::Stdout,
                &line(json!({"type": "assistant.message", "data": {}}))
            ),
            LineSignal::Progress
        );
        assert_eq!(
            classify(
                OutputStream::Stdout,
                &line(json!({"type": "model.call_failure", "data": {"statusCode": 429}}))
            ),
            LineSignal::Retry
        );
        assert!(matches!(
            classify(
                OutputStream::Stdout,
                &line(json!({"type": "model.call_failure", "data": {"statusCode": 401}}))
            ),
            LineSignal::Fatal(m) if m.starts_with("401")
        ));
        assert_eq!(
            classify(OutputStream::Stderr, "assistant.message"),
            LineSignal::Neutral
        );
        assert_eq!(
            classify(OutputStream::Stdout, "not json"),
            LineSignal::Neutral
        );
    }
}
