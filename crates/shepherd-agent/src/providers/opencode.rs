//! opencode: `opencode run`, non-interactive.
//!
//! The prompt goes on stdin (the CLI appends stdin to its message).
//! `--format json` prints JSON Lines events: `text` events carry the
//! answer's text, `step_finish` events the tokens and cost of each step,
//! `error` events failures. Read-only roles use the built-in `plan` agent
//! (`--agent plan`, which may not edit files); writing roles the default
//! agent, whose permissions come from the user's opencode configuration.
//! `--dangerously-skip-permissions` is never used.

use serde_json::Value;

use crate::providers::cli::{sum_u64, Invocation, Parsed, Request};
use crate::providers::extract;

pub(crate) fn invocation(req: &Request<'_>) -> Invocation {
    let mut args: Vec<String> = vec!["run".into(), "--format".into(), "json".into()];
    if let Some(model) = req.model {
        args.extend(["--model".to_owned(), model.to_owned()]);
    }
    if !req.role.writes() {
        args.extend(["--agent".to_owned(), "plan".to_owned()]);
    }
    args.extend(req.extra_args.iter().cloned());
    Invocation::new(args, req.prompt.as_bytes().to_vec())
}

pub(crate) fn parse(stdout: &str) -> Result<Parsed, String> {
    let events: Vec<Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
        .collect();
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
            let error = of_type("error").next_back().map(|e| {
                let err = e.get("error").unwrap_or(e);
                err.get("data")
                    .and_then(|d| d.get("message"))
                    .or_else(|| err.get("message"))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .unwrap_or_else(|| err.to_string())
            });
            return Err(match error {
                Some(m) => format!(
                    "opencode reported an error: {}",
                    crate::driver::tail(&m, 300)
                ),
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

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;
    use crate::task::Role;
    use serde_json::json;

    #[test]
    fn read_only_roles_use_the_plan_agent() {
        let req = |role| Request {
            role,
            worktree: std::path::Path::new("/wt"),
            prompt: "PROMPT",
            schema: &Value::Null,
            model: Some("anthropic/claude-sonnet-4-5"),
            extra_args: &[],
        };
        let read = invocation(&req(Role::Triage));
        assert_eq!(
            read.args,
            [
                "run",
                "--format",
                "json",
                "--model",
                "anthropic/claude-sonnet-4-5",
                "--agent",
                "plan"
            ]
        );
        assert_eq!(read.stdin, b"PROMPT");
        let write = invocation(&req(Role::Fix));
        assert!(!write
            .args
            .iter()
            .any(|a| a == "--agent" || a.contains("dangerously")));
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
