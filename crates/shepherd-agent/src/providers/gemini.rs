//! Gemini CLI: `gemini -p`, headless.
//!
//! The prompt goes on stdin; `-p` adds a one-line instruction after it (the
//! CLI appends `-p` to its stdin input). `--output-format json` prints one
//! object: `response` (the answer's text), `stats` (per-model token counts)
//! and `error` on failure. Read-only roles run in the `default` approval
//! mode (in headless mode, tools that need approval are not available);
//! writing roles in `auto_edit` (file edits approved, shell commands not).
//! `--yolo` is never used. It reports no cost.

use serde_json::Value;

use crate::providers::cli::{sum_u64, Invocation, Parsed, Request};
use crate::providers::extract;

/// The `-p` text, appended by the CLI to the prompt read from stdin.
pub(crate) const INSTRUCTION: &str =
    "Follow the instructions above and answer with the JSON object they describe, and nothing else.";

pub(crate) fn invocation(req: &Request<'_>) -> Invocation {
    let mode = if req.role.writes() {
        "auto_edit"
    } else {
        "default"
    };
    let mut args: Vec<String> = vec![
        "--output-format".into(),
        "json".into(),
        "--approval-mode".into(),
        mode.into(),
    ];
    if let Some(model) = req.model {
        args.extend(["--model".to_owned(), model.to_owned()]);
    }
    args.extend(req.extra_args.iter().cloned());
    args.extend(["-p".to_owned(), INSTRUCTION.to_owned()]);
    Invocation::new(args, req.prompt.as_bytes().to_vec())
}

pub(crate) fn parse(stdout: &str) -> Result<Parsed, String> {
    let v: Value = serde_json::from_str(stdout.trim())
        .ok()
        .filter(Value::is_object)
        .ok_or("gemini printed no JSON object")?;
    if let Some(error) = v.get("error").filter(|e| !e.is_null()) {
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_else(|| error.to_string());
        return Err(format!(
            "gemini reported an error: {}",
            crate::driver::tail(&message, 300)
        ));
    }
    let response = v
        .get("response")
        .and_then(Value::as_str)
        .ok_or("gemini's output has no response text")?;
    let models: Vec<&Value> = v
        .get("stats")
        .and_then(|s| s.get("models"))
        .and_then(Value::as_object)
        .map(|m| m.values().filter_map(|model| model.get("tokens")).collect())
        .unwrap_or_default();
    Ok(Parsed {
        text: extract::json_object(response),
        input_tokens: sum_u64(models.iter().map(|t| t.get("prompt"))),
        output_tokens: sum_u64(
            models
                .iter()
                .flat_map(|t| [t.get("candidates"), t.get("thoughts")]),
        ),
        cost_usd: None,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;
    use crate::task::Role;
    use serde_json::json;

    #[test]
    fn approval_mode_follows_the_role() {
        for (role, mode) in [(Role::Review, "default"), (Role::ApplyReview, "auto_edit")] {
            let i = invocation(&Request {
                role,
                worktree: std::path::Path::new("/wt"),
                prompt: "PROMPT",
                schema: &json!({}),
                model: Some("gemini-2.5-pro"),
                extra_args: &[],
            });
            let a = &i.args;
            assert_eq!(
                a[a.iter().position(|x| x == "--approval-mode").unwrap() + 1],
                mode
            );
            assert_eq!(&a[a.len() - 2..], ["-p", INSTRUCTION]);
            assert_eq!(i.stdin, b"PROMPT");
            assert!(!a.iter().any(|x| x == "--yolo" || x == "yolo"));
        }
    }

    #[test]
    fn reads_response_and_token_stats() {
        let out = json!({
            "response": "```json\n{\"items\":[]}\n```",
            "stats": {"models": {
                "gemini-2.5-pro": {"tokens": {"prompt": 100, "candidates": 10, "thoughts": 5}},
                "gemini-2.5-flash": {"tokens": {"prompt": 7, "candidates": 1}}
            }}
        });
        let p = parse(&out.to_string()).unwrap();
        assert_eq!(p.text, "{\"items\":[]}");
        assert_eq!((p.input_tokens, p.output_tokens), (Some(107), Some(16)));
        let err = json!({"response": null, "error": {"type": "ApiError", "message": "quota"}});
        assert!(parse(&err.to_string()).unwrap_err().contains("quota"));
        assert!(parse("Loaded cached credentials.").is_err());
    }
}
