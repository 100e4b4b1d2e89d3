//! OpenAI Codex CLI: `codex exec`, non-interactive.
//!
//! The prompt goes on stdin (`-` as the prompt argument). The answer schema
//! is written to a file for `--output-schema` (in the strict subset, see
//! [`crate::providers::strict`]); the final message is written by Codex to
//! the `--output-last-message` file. `--json` turns stdout into JSON Lines
//! events, whose `turn.completed` events carry the token usage. Read-only
//! roles run in the `read-only` sandbox, writing roles in `workspace-write`.

use serde_json::Value;

use crate::agent::AgentError;
use crate::providers::cli::{sum_u64, Invocation, Parsed, Request};
use crate::providers::strict::strict_schema;

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

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;
    use crate::task::Role;
    use serde_json::json;

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
}
