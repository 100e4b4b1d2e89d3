//! Claude Code: `claude -p`, headless (checked against 2.1.332).
//!
//! The prompt goes on stdin; `--output-format stream-json --verbose` prints
//! one JSON event per line while it works (`system` `init`, `assistant`
//! and `user` turns, `system` `api_retry` while the API fails) and ends
//! with the result object (`result` text, `is_error`, `usage`,
//! `total_cost_usd`, and with `--json-schema` the `structured_output`,
//! which the model gives by calling Claude Code's `StructuredOutput` tool).
//! The events let Shepherd see retries without progress, and a 401, while
//! it runs ([`classify`]). Tools are limited per role with
//! `--allowedTools`/`--disallowedTools`, named as the pinned version names
//! them (`Read`, `Glob`, `Grep`, `Edit`, `Write`, `NotebookEdit`, `Bash`,
//! `WebFetch`, `WebSearch`; there is no `LS` or `MultiEdit`); in `-p` mode a
//! tool that is not allowed is denied rather than asked for.

use serde_json::Value;

use crate::agent::AgentError;
use crate::exec::{LineSignal, OutputStream};
use crate::providers::extract;
use crate::providers::invocation::{sum_u64, CliFailure, Invocation, Parsed, Request};
use crate::providers::spec::{CliSpec, EnvNames};
use crate::providers::versions::Support;

/// Read-only tools: reading files and read-only git commands.
pub(crate) const READ_TOOLS: &str = "Read,Grep,Glob,Bash(git diff:*),Bash(git log:*),\
Bash(git show:*),Bash(git status:*),Bash(git blame:*)";

/// Writing roles also edit files.
pub(crate) const WRITE_TOOLS: &str = "Read,Grep,Glob,Edit,Write,Bash(git diff:*),\
Bash(git log:*),Bash(git show:*),Bash(git status:*),Bash(git blame:*)";

/// Denied to every role: git state changes and the network.
pub(crate) const DENIED: &str = "Bash(git push:*),Bash(git commit:*),Bash(git reset:*),\
Bash(git checkout:*),Bash(git switch:*),Bash(git rebase:*),Bash(git merge:*),Bash(git stash:*),\
Bash(git tag:*),Bash(git remote:*),WebFetch,WebSearch";

/// Also denied to read-only roles.
pub(crate) const DENIED_READ_ONLY: &str = "Edit,Write,NotebookEdit";

/// The schema as `--json-schema` takes it: Claude Code compiles it without
/// the draft meta-schemas, so a `$schema` keyword is refused ("no schema
/// with key or ref https://json-schema.org/draft/2020-12/schema"): dropped.
pub(crate) fn cli_schema(schema: &Value) -> Value {
    let mut schema = schema.clone();
    if let Some(object) = schema.as_object_mut() {
        object.remove("$schema");
    }
    schema
}

pub(crate) fn invocation(req: &Request<'_>) -> Invocation {
    let writes = req.role.writes();
    let mut args: Vec<String> = ["-p", "--output-format", "stream-json", "--verbose"]
        .map(str::to_owned)
        .to_vec();
    if let Some(model) = req.model {
        args.extend(["--model".to_owned(), model.to_owned()]);
    }
    args.extend([
        "--permission-mode".to_owned(),
        if writes { "acceptEdits" } else { "default" }.to_owned(),
    ]);
    args.extend(req.extra_args.iter().cloned());
    let denied = if writes {
        DENIED.to_owned()
    } else {
        format!("{DENIED},{DENIED_READ_ONLY}")
    };
    // The tool lists take several values: they come last, after every other flag.
    args.extend([
        "--json-schema".to_owned(),
        cli_schema(req.schema).to_string(),
        "--allowedTools".to_owned(),
        if writes { WRITE_TOOLS } else { READ_TOOLS }.to_owned(),
        "--disallowedTools".to_owned(),
        denied,
    ]);
    Invocation::new(args, req.prompt.as_bytes().to_vec())
}

fn kind(v: &Value) -> (Option<&str>, Option<&str>) {
    (
        v.get("type").and_then(Value::as_str),
        v.get("subtype").and_then(Value::as_str),
    )
}

/// What a line of `stream-json` output says: a turn or the result is
/// progress; an `api_retry` is a retry, and with a 401 or 403 a call that
/// cannot succeed (Claude Code would retry it ten times).
pub(crate) fn classify(stream: OutputStream, line: &str) -> LineSignal {
    if stream == OutputStream::Stderr {
        return LineSignal::Neutral;
    }
    let Ok(v) = serde_json::from_str::<Value>(line) else {
        return LineSignal::Neutral;
    };
    match kind(&v) {
        (Some("assistant" | "user" | "result"), _) => LineSignal::Progress,
        (Some("system"), Some("api_retry")) => {
            let status = v.get("error_status").and_then(Value::as_u64);
            match status {
                Some(code @ (401 | 403)) => LineSignal::Fatal(format!(
                    "{code} ({})",
                    v.get("error").and_then(Value::as_str).unwrap_or("error")
                )),
                _ => LineSignal::Retry,
            }
        }
        _ => LineSignal::Neutral,
    }
}

fn events(stdout: &str) -> impl DoubleEndedIterator<Item = Value> + '_ {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
}

/// Claude Code's own error: the result's error text, else its last API
/// retry, else its stderr (a refused flag or schema).
pub(crate) fn own_error(stdout: &str, stderr: &str) -> Option<CliFailure> {
    let result = result_object(stdout);
    let api_status = |v: &Value| {
        v.get("api_error_status")
            .or_else(|| v.get("error_status"))
            .and_then(Value::as_u64)
            .and_then(|c| u16::try_from(c).ok())
    };
    if let Some(r) = result.filter(|r| r.get("is_error").and_then(Value::as_bool) == Some(true)) {
        let text = r
            .get("result")
            .and_then(Value::as_str)
            .or_else(|| r.get("subtype").and_then(Value::as_str))
            .unwrap_or("error");
        return Some(CliFailure {
            status: api_status(&r),
            message: crate::driver::tail(text, 300),
        });
    }
    if let Some(retry) = events(stdout)
        .rev()
        .find(|v| kind(v) == (Some("system"), Some("api_retry")))
    {
        return Some(CliFailure {
            status: api_status(&retry),
            message: format!(
                "{} (API retry {} of {})",
                retry
                    .get("error")
                    .and_then(Value::as_str)
                    .unwrap_or("error"),
                retry.get("attempt").and_then(Value::as_u64).unwrap_or(0),
                retry
                    .get("max_retries")
                    .and_then(Value::as_u64)
                    .unwrap_or(0),
            ),
        });
    }
    let stderr = crate::driver::tail(stderr, 300);
    (!stderr.is_empty()).then_some(CliFailure {
        status: None,
        message: stderr,
    })
}

/// The result object: the last line whose `type` is `result`, else the
/// whole output when it is one object (`--output-format json`).
fn result_object(stdout: &str) -> Option<Value> {
    events(stdout)
        .rev()
        .find(|v| kind(v).0 == Some("result"))
        .or_else(|| {
            serde_json::from_str::<Value>(stdout.trim())
                .ok()
                .filter(|v| v.is_object() && kind(v).0.is_none_or(|k| k == "result"))
        })
}

pub(crate) fn parse(stdout: &str) -> Result<Parsed, String> {
    let v = result_object(stdout).ok_or("claude printed no JSON result object")?;
    let result = v.get("result").and_then(Value::as_str);
    if v.get("is_error").and_then(Value::as_bool) == Some(true) {
        let subtype = v.get("subtype").and_then(Value::as_str).unwrap_or("error");
        return Err(format!(
            "claude reported an error ({subtype}): {}",
            crate::driver::tail(result.unwrap_or(""), 300)
        ));
    }
    let text = match v.get("structured_output").filter(|s| s.is_object()) {
        Some(structured) => structured.to_string(),
        None => extract::json_object(result.ok_or("claude's result object has no result text")?),
    };
    let usage = v.get("usage");
    let field = |name: &str| usage.and_then(|u| u.get(name));
    Ok(Parsed {
        text,
        input_tokens: sum_u64([
            field("input_tokens"),
            field("cache_creation_input_tokens"),
            field("cache_read_input_tokens"),
        ]),
        output_tokens: sum_u64([field("output_tokens")]),
        cost_usd: v
            .get("total_cost_usd")
            .or_else(|| v.get("cost_usd"))
            .and_then(Value::as_f64),
    })
}

/// Claude Code, described ([`CliSpec`]).
pub(crate) struct Spec;

impl CliSpec for Spec {
    fn name(&self) -> &'static str {
        "claude"
    }

    fn support(&self) -> Support {
        Support {
            package: "@anthropic-ai/claude-code",
            tested: (2, 1, 332),
        }
    }

    fn env_names(&self, is_set: &dyn Fn(&str) -> bool) -> EnvNames {
        let mut pass = vec!["ANTHROPIC_BASE_URL", "CLAUDE_CONFIG_DIR"];
        // A proxy's bearer token (LiteLLM and the like) is the model key too.
        let mut credentials = vec!["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"];
        // Cloud credentials only when Claude Code is told to use that cloud.
        if is_set("CLAUDE_CODE_USE_BEDROCK") {
            pass.extend(["CLAUDE_CODE_USE_BEDROCK", "AWS_REGION", "AWS_PROFILE"]);
            credentials.extend([
                "AWS_ACCESS_KEY_ID",
                "AWS_SECRET_ACCESS_KEY",
                "AWS_SESSION_TOKEN",
                "AWS_BEARER_TOKEN_BEDROCK",
            ]);
        }
        if is_set("CLAUDE_CODE_USE_VERTEX") {
            pass.extend([
                "CLAUDE_CODE_USE_VERTEX",
                "CLOUD_ML_REGION",
                "ANTHROPIC_VERTEX_PROJECT_ID",
            ]);
            credentials.push("GOOGLE_APPLICATION_CREDENTIALS");
        }
        (pass, credentials)
    }

    fn fixed_env(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("DISABLE_AUTOUPDATER", "1"),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
            ("DISABLE_TELEMETRY", "1"),
            ("DISABLE_ERROR_REPORTING", "1"),
        ]
    }

    fn classifier(&self) -> Option<fn(OutputStream, &str) -> LineSignal> {
        Some(classify)
    }

    fn own_error(&self, stdout: &str, stderr: &str) -> Option<CliFailure> {
        own_error(stdout, stderr)
    }

    fn key_variable(&self) -> Option<&'static str> {
        Some("ANTHROPIC_API_KEY")
    }

    fn base_url_variable(&self) -> Option<(&'static str, &'static str)> {
        Some(("ANTHROPIC_BASE_URL", "https://api.anthropic.com"))
    }

    fn invocation(&self, request: &Request<'_>) -> Result<Invocation, AgentError> {
        Ok(invocation(request))
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

    fn args(role: Role) -> Vec<String> {
        let schema = json!({"type": "object"});
        let extra = vec!["--verbose".to_owned()];
        invocation(&Request {
            role,
            worktree: std::path::Path::new("/wt"),
            prompt: "PROMPT",
            schema: &schema,
            model: Some("sonnet"),
            extra_args: &extra,
        })
        .args
    }

    fn after<'a>(args: &'a [String], flag: &str) -> &'a str {
        let i = args.iter().position(|a| a == flag).unwrap();
        &args[i + 1]
    }

    #[test]
    fn read_only_roles_cannot_edit() {
        for role in [Role::Triage, Role::FixValidation, Role::Review] {
            let a = args(role);
            assert_eq!(
                &a[..4],
                ["-p", "--output-format", "stream-json", "--verbose"]
            );
            assert_eq!(after(&a, "--permission-mode"), "default");
            assert!(!after(&a, "--allowedTools").contains("Edit"));
            assert!(after(&a, "--disallowedTools").contains("Write"));
            assert!(after(&a, "--disallowedTools").contains("Bash(git push:*)"));
            assert_eq!(after(&a, "--model"), "sonnet");
            assert_eq!(after(&a, "--json-schema"), r#"{"type":"object"}"#);
            assert!(!a
                .iter()
                .any(|x| x.contains("dangerously") || x == "bypassPermissions"));
        }
    }

    #[test]
    fn writing_roles_edit_but_never_push() {
        for role in [Role::Fix, Role::ClusterFix, Role::ApplyReview] {
            let a = args(role);
            assert_eq!(after(&a, "--permission-mode"), "acceptEdits");
            assert!(after(&a, "--allowedTools").contains("Edit"));
            let denied = after(&a, "--disallowedTools");
            assert!(denied.contains("Bash(git push:*)") && denied.contains("Bash(git commit:*)"));
            assert!(!denied.contains("Edit"));
            // Extra arguments come before the multi-valued tool lists.
            let extra = a.iter().position(|x| x == "--verbose").unwrap();
            assert!(extra < a.iter().position(|x| x == "--allowedTools").unwrap());
            assert_eq!(a.last().unwrap(), denied);
        }
    }

    #[test]
    fn reads_structured_output_usage_and_cost() {
        let out = json!({
            "type": "result", "subtype": "success", "is_error": false,
            "result": "Done.", "total_cost_usd": 0.25,
            "usage": {"input_tokens": 10, "cache_read_input_tokens": 100, "output_tokens": 7},
            "structured_output": {"items": []}
        });
        let p = parse(&format!("warning: something\n{out}\n")).unwrap();
        assert_eq!(p.text, r#"{"items":[]}"#);
        assert_eq!((p.input_tokens, p.output_tokens), (Some(110), Some(7)));
        assert_eq!(p.cost_usd, Some(0.25));
    }

    #[test]
    fn falls_back_to_the_result_text_and_reports_errors() {
        let out = json!({"type": "result", "is_error": false,
            "result": "Here:\n```json\n{\"items\": []}\n```"});
        let p = parse(&out.to_string()).unwrap();
        assert_eq!(p.text, r#"{"items": []}"#);
        assert_eq!((p.input_tokens, p.cost_usd), (None, None));
        let err = json!({"type": "result", "is_error": true, "subtype": "error_max_turns", "result": "out of turns"});
        let e = parse(&err.to_string()).unwrap_err();
        assert!(
            e.contains("error_max_turns") && e.contains("out of turns"),
            "{e}"
        );
        assert!(parse("Not logged in").is_err());
    }

    #[test]
    fn the_schema_loses_its_draft_and_the_tools_are_real_ones() {
        let schema =
            json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"});
        assert_eq!(cli_schema(&schema), json!({"type": "object"}));
        for list in [READ_TOOLS, WRITE_TOOLS, DENIED, DENIED_READ_ONLY] {
            for tool in list.split(',') {
                let name = tool.split('(').next().unwrap();
                assert!(
                    [
                        "Read",
                        "Grep",
                        "Glob",
                        "Edit",
                        "Write",
                        "NotebookEdit",
                        "Bash",
                        "WebFetch",
                        "WebSearch"
                    ]
                    .contains(&name),
                    "{tool} is not a tool of Claude Code 2.1"
                );
            }
        }
    }

    #[test]
    fn retries_are_not_progress_and_a_401_is_fatal() {
        let retry = |status: u16| {
            json!({"type": "system", "subtype": "api_retry", "attempt": 1, "max_retries": 10,
                   "error_status": status, "error": "authentication_failed"})
            .to_string()
        };
        assert_eq!(
            classify(OutputStream::Stdout, &retry(429)),
            LineSignal::Retry
        );
        assert!(matches!(
            classify(OutputStream::Stdout, &retry(401)),
            LineSignal::Fatal(_)
        ));
        let turn = json!({"type": "assistant", "message": {}}).to_string();
        assert_eq!(classify(OutputStream::Stdout, &turn), LineSignal::Progress);
        assert_eq!(
            classify(OutputStream::Stdout, "not json"),
            LineSignal::Neutral
        );
        assert_eq!(classify(OutputStream::Stderr, &turn), LineSignal::Neutral);

        let own = own_error(
            &format!(
                "{}\n{}",
                json!({"type": "system", "subtype": "init"}),
                retry(401)
            ),
            "",
        )
        .unwrap();
        assert_eq!(own.status, Some(401));
        assert!(
            own.message.contains("authentication_failed"),
            "{}",
            own.message
        );
        let failed = json!({"type": "result", "is_error": true, "api_error_status": 429,
                            "result": "API Error: rate limited"});
        let own = own_error(&failed.to_string(), "").unwrap();
        assert_eq!(
            (own.status, own.message.as_str()),
            (Some(429), "API Error: rate limited")
        );
        let own = own_error("", "Error: --json-schema is not a valid JSON Schema\n").unwrap();
        assert_eq!(own.status, None);
        assert!(own_error("", "").is_none());
    }
}
