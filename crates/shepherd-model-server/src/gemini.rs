//! The Gemini API (`POST /v1beta/models/MODEL:generateContent` and
//! `:streamGenerateContent?alt=sse`), as Gemini CLI uses it.
//!
//! Checked against Gemini CLI 0.61.0 (`x-goog-api-key`, streamed with
//! `alt=sse`: one `data:` event carrying the whole candidate is read like a
//! stream). Tool calls are named as Gemini CLI names its tools: `read_file`
//! `file_path`, `replace` `file_path`/`old_string`/`new_string`/
//! `instruction`, `write_file` `file_path`/`content`, `run_shell_command`
//! `command`. The working directory is the first of the "Workspace
//! Directories" its session context lists. Without `--model`, Gemini CLI
//! first asks a flash model (non-streamed `:generateContent`) to route the
//! request: pass a model, or script that request with a `Match` of its own.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

use crate::script::{as_text, structured, Conversation, Reply, Step, ToolCall, ToolNames};
use crate::sse;

/// What a generateContent request says: the text of its `user` contents,
/// the number of `functionResponse` parts; streamed when the path is
/// `:streamGenerateContent`.
pub(crate) fn conversation(body: &Value, path: &str) -> Conversation {
    let mut conv = Conversation {
        model: path
            .rsplit('/')
            .next()
            .and_then(|m| m.split(':').next())
            .map(str::to_owned),
        stream: path.ends_with(":streamGenerateContent"),
        ..Conversation::default()
    };
    let contents = body.get("contents").and_then(Value::as_array);
    for content in contents.into_iter().flatten() {
        let user = content.get("role").and_then(Value::as_str) == Some("user");
        let parts = content.get("parts").and_then(Value::as_array);
        for part in parts.into_iter().flatten() {
            if part.get("functionResponse").is_some() {
                conv.tool_results += 1;
            } else if let (true, Some(t)) = (user, part.get("text").and_then(Value::as_str)) {
                if conv.cwd.is_none() {
                    conv.cwd = workspace_dir(t);
                }
                conv.push_user_text(t);
            }
        }
    }
    conv.tools = body
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| t.get("functionDeclarations").and_then(Value::as_array))
        .flatten()
        .filter_map(|f| f.get("name").and_then(Value::as_str))
        .map(str::to_owned)
        .collect();
    conv
}

/// The first directory under "Workspace Directories" in Gemini CLI's
/// session context.
fn workspace_dir(text: &str) -> Option<String> {
    let start = text.find("Workspace Directories:")?;
    text[start..]
        .lines()
        .skip(1)
        .map(str::trim)
        .find_map(|l| l.strip_prefix("- "))
        .map(|d| d.trim().to_owned())
        .filter(|d| d.starts_with('/'))
}

/// Gemini CLI's names of its tools.
const GEMINI_TOOLS: ToolNames = ToolNames {
    read: "read_file",
    edit: "replace",
    write: "write_file",
    shell: "run_shell_command",
    path: "file_path",
    old: "old_string",
    new: "new_string",
    content: "content",
    edit_extra: Some(("instruction", "Apply the scripted edit.")),
    shell_extra: None,
};

/// Gemini CLI's name and arguments for a tool call.
pub fn tool(call: &ToolCall, conv: &Conversation) -> (String, Value) {
    call.named(&GEMINI_TOOLS, conv)
}

/// The answer to a generateContent request.
pub(crate) fn respond(reply: &Reply, conv: &Conversation) -> Response {
    let usage = match reply {
        Reply::Step { usage, .. } | Reply::Done { usage, .. } => *usage,
    };
    let part = match reply {
        Reply::Done { .. } => json!({"text": "Done."}),
        Reply::Step { step, .. } => match step {
            Step::Tool(call) => {
                let (name, args) = tool(call, conv);
                json!({"functionCall": {"name": name, "args": args}})
            }
            Step::Text(t) => json!({"text": t}),
            Step::Structured(_) | Step::Dynamic(_) => {
                json!({"text": structured(step, conv).map(|v| as_text(&v)).unwrap_or_default()})
            }
            Step::Fail(_) => json!({"text": ""}),
        },
    };
    let body = json!({
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": usage.input, "candidatesTokenCount": usage.output,
                          "totalTokenCount": usage.input + usage.output},
        "modelVersion": conv.model.clone().unwrap_or_else(|| "scripted".into()),
    });
    if conv.stream {
        sse::events(&[(None, body)])
    } else {
        axum::Json(body).into_response()
    }
}

/// Google's error body.
pub(crate) fn error_body(status: StatusCode, message: &str) -> Value {
    let name = match status.as_u16() {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        429 => "RESOURCE_EXHAUSTED",
        503 => "UNAVAILABLE",
        _ => "INTERNAL",
    };
    json!({"error": {"code": status.as_u16(), "message": message, "status": name}})
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;

    #[test]
    fn reads_prompt_steps_tools_and_workspace() {
        let body = json!({
            "contents": [
                {"role": "user", "parts": [
                    {"text": "<session_context>\n- **Workspace Directories:**\n  - /wt/g\n- **Directory Structure:**\n</session_context>"},
                    {"text": "You are the triage agent"}]},
                {"role": "model", "parts": [{"functionCall": {"name": "read_file", "args": {}}}]},
                {"role": "user", "parts": [{"functionResponse": {"name": "read_file", "response": {}}}]}
            ],
            "tools": [{"functionDeclarations": [{"name": "read_file"}, {"name": "glob"}]}]
        });
        let conv = conversation(&body, "/v1beta/models/gemini-2.5-pro:streamGenerateContent");
        assert!(conv.stream);
        assert_eq!(conv.model.as_deref(), Some("gemini-2.5-pro"));
        assert_eq!(conv.tool_results, 1);
        assert!(conv.user_text.contains("You are the triage agent"));
        assert_eq!(conv.cwd.as_deref(), Some("/wt/g"));
        assert_eq!(conv.tools, ["read_file", "glob"]);
        let (name, args) = tool(
            &ToolCall::Read {
                path: "src/a.rs".into(),
            },
            &conv,
        );
        assert_eq!(
            (name.as_str(), &args),
            ("read_file", &json!({"file_path": "/wt/g/src/a.rs"}))
        );
    }
}
