//! The Anthropic Messages API (`POST /v1/messages`), as Claude Code uses it:
//! streamed (`"stream": true`, server-sent events `message_start`,
//! `content_block_start`/`_delta`/`_stop`, `message_delta`, `message_stop`)
//! or as one JSON message.
//!
//! Tool calls are named as Claude Code names its tools: `Read`
//! (`file_path`), `Edit` (`file_path`, `old_string`, `new_string`), `Write`
//! (`file_path`, `content`), `Bash` (`command`). A structured final answer
//! is a call of `StructuredOutput`, the tool Claude Code adds for
//! `--json-schema`, whose input becomes the result's `structured_output`.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

use crate::script::{as_text, structured, Conversation, Reply, Step, ToolCall, ToolNames};
use crate::sse;

/// The tool Claude Code adds for `--json-schema`.
pub const STRUCTURED_OUTPUT_TOOL: &str = "StructuredOutput";

/// What a Messages request says: its user text (tool results excluded),
/// the number of `tool_result` blocks, the working directory Claude Code
/// states in its system prompt ("Primary working directory: ...").
pub(crate) fn conversation(body: &Value) -> Conversation {
    let mut conv = Conversation::of_request(body);
    let messages = body.get("messages").and_then(Value::as_array);
    for message in messages.into_iter().flatten() {
        let role = message.get("role").and_then(Value::as_str);
        match message.get("content") {
            Some(Value::String(s)) if role == Some("user") => conv.push_user_text(s),
            Some(Value::Array(blocks)) => {
                for block in blocks {
                    match block.get("type").and_then(Value::as_str) {
                        Some("tool_result") => conv.tool_results += 1,
                        Some("text") if role == Some("user") => {
                            if let Some(t) = block.get("text").and_then(Value::as_str) {
                                conv.push_user_text(t);
                            }
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    conv.cwd = find_after(&body.to_string(), "Primary working directory: ");
    conv
}

/// The rest of the line after `marker` in `haystack` (JSON-escaped text:
/// a line ends at `\n`, written `\\n`).
pub(crate) fn find_after(haystack: &str, marker: &str) -> Option<String> {
    let start = haystack.find(marker)? + marker.len();
    let rest = &haystack[start..];
    let end = rest
        .find("\\n")
        .or_else(|| rest.find('"'))
        .unwrap_or(rest.len());
    let value = rest[..end].trim();
    (!value.is_empty()).then(|| value.to_owned())
}

/// Claude Code's names of its tools.
const CLAUDE_TOOLS: ToolNames = ToolNames {
    read: "Read",
    edit: "Edit",
    write: "Write",
    shell: "Bash",
    path: "file_path",
    old: "old_string",
    new: "new_string",
    content: "content",
    edit_extra: None,
    shell_extra: Some(("description", "Run a scripted command")),
};

/// Claude Code's name and input for a tool call.
pub fn tool(call: &ToolCall, conv: &Conversation) -> (String, Value) {
    call.named(&CLAUDE_TOOLS, conv)
}

enum Block {
    Text(String),
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
}

fn blocks(reply: &Reply, conv: &Conversation) -> (Vec<Block>, &'static str) {
    let (step, id) = match reply {
        Reply::Done { .. } => return (vec![Block::Text("Done.".into())], "end_turn"),
        Reply::Step { step, id, .. } => (step, id),
    };
    let tool_use = |name: String, input: Value| Block::ToolUse {
        id: format!("toolu_{id}"),
        name,
        input,
    };
    match step {
        Step::Tool(call) => {
            let (name, input) = tool(call, conv);
            (vec![tool_use(name, input)], "tool_use")
        }
        Step::Text(text) => (vec![Block::Text(text.clone())], "end_turn"),
        Step::Structured(_) | Step::Dynamic(_) => match structured(step, conv) {
            Some(v) if v.is_object() => (
                vec![tool_use(STRUCTURED_OUTPUT_TOOL.to_owned(), v)],
                "tool_use",
            ),
            Some(v) => (vec![Block::Text(as_text(&v))], "end_turn"),
            None => (vec![Block::Text(String::new())], "end_turn"),
        },
        // Failures are answered before the API module is asked.
        Step::Fail(_) => (vec![Block::Text(String::new())], "end_turn"),
    }
}

/// The answer to a Messages request.
pub(crate) fn respond(reply: &Reply, conv: &Conversation) -> Response {
    let (usage, id) = match reply {
        Reply::Step { usage, id, .. } | Reply::Done { usage, id } => (*usage, id.clone()),
    };
    let (blocks, stop_reason) = blocks(reply, conv);
    let model = conv.model.clone().unwrap_or_else(|| "scripted".into());
    if !conv.stream {
        let content: Vec<Value> = blocks
            .iter()
            .map(|b| match b {
                Block::Text(t) => json!({"type": "text", "text": t}),
                Block::ToolUse { id, name, input } => {
                    json!({"type": "tool_use", "id": id, "name": name, "input": input})
                }
            })
            .collect();
        return axum::Json(json!({
            "id": format!("msg_{id}"), "type": "message", "role": "assistant",
            "model": model, "content": content,
            "stop_reason": stop_reason, "stop_sequence": null,
            "usage": {"input_tokens": usage.input, "output_tokens": usage.output},
        }))
        .into_response();
    }
    let mut events: Vec<(Option<&str>, Value)> = vec![(
        Some("message_start"),
        json!({"type": "message_start", "message": {
            "id": format!("msg_{id}"), "type": "message", "role": "assistant",
            "model": model, "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": usage.input, "output_tokens": 1}}}),
    )];
    for (index, block) in blocks.iter().enumerate() {
        let (start, delta) = match block {
            Block::Text(t) => (
                json!({"type": "text", "text": ""}),
                json!({"type": "text_delta", "text": t}),
            ),
            Block::ToolUse { id, name, input } => (
                json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
                json!({"type": "input_json_delta", "partial_json": input.to_string()}),
            ),
        };
        events.push((
            Some("content_block_start"),
            json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        events.push((
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": index, "delta": delta}),
        ));
        events.push((
            Some("content_block_stop"),
            json!({"type": "content_block_stop", "index": index}),
        ));
    }
    events.push((
        Some("message_delta"),
        json!({"type": "message_delta",
               "delta": {"stop_reason": stop_reason, "stop_sequence": null},
               "usage": {"output_tokens": usage.output}}),
    ));
    events.push((Some("message_stop"), json!({"type": "message_stop"})));
    sse::events(&events)
}

/// The Messages API's error body.
pub(crate) fn error_body(status: StatusCode, message: &str) -> Value {
    let kind = match status.as_u16() {
        400 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        _ => "api_error",
    };
    json!({"type": "error", "error": {"type": kind, "message": message}})
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;

    #[test]
    fn reads_user_text_tool_results_and_the_working_directory() {
        let body = json!({
            "model": "claude-x", "stream": true,
            "system": [{"type": "text", "text": "Env\n - Primary working directory: /tmp/wt\n - Platform: linux"}],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "You are the triage agent"}]},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "secret file"}]},
            ]
        });
        let conv = conversation(&body);
        assert_eq!(conv.user_text, "You are the triage agent");
        assert_eq!(conv.tool_results, 1);
        assert_eq!(conv.cwd.as_deref(), Some("/tmp/wt"));
        assert!(conv.stream);
        let (name, input) = tool(
            &ToolCall::Read {
                path: "a.rs".into(),
            },
            &conv,
        );
        assert_eq!(
            (name.as_str(), input),
            ("Read", json!({"file_path": "/tmp/wt/a.rs"}))
        );
    }
}
