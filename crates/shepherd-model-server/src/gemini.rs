//! The Gemini API (`POST /v1beta/models/MODEL:generateContent` and
//! `:streamGenerateContent?alt=sse`), as Gemini CLI uses it.
//!
//! TODO(agents-more): tool names follow Gemini CLI's built-in tools
//! (`read_file` `absolute_path`, `replace` `file_path`/`old_string`/
//! `new_string`, `write_file` `file_path`/`content`, `run_shell_command`
//! `command`); check them against the pinned version. Gemini CLI also
//! calls `:countTokens` and may ask a flash model to route or summarize:
//! script those with `Match`es of their own.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

use crate::script::{Conversation, Reply, Step, ToolCall};
use crate::{as_text, sse, structured};

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
                if !conv.user_text.is_empty() {
                    conv.user_text.push('\n');
                }
                conv.user_text.push_str(t);
            }
        }
    }
    conv
}

/// Gemini CLI's name and arguments for a tool call.
pub fn tool(call: &ToolCall, conv: &Conversation) -> (String, Value) {
    match call {
        ToolCall::Read { path } => (
            "read_file".into(),
            json!({"absolute_path": conv.resolve(path)}),
        ),
        ToolCall::Edit { path, old, new } => (
            "replace".into(),
            json!({"file_path": conv.resolve(path), "old_string": old, "new_string": new}),
        ),
        ToolCall::Write { path, content } => (
            "write_file".into(),
            json!({"file_path": conv.resolve(path), "content": content}),
        ),
        ToolCall::Shell { command } => ("run_shell_command".into(), json!({"command": command})),
        ToolCall::Raw { name, input } => (name.clone(), input.clone()),
    }
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
