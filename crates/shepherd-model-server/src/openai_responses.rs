//! The OpenAI Responses API (`POST /v1/responses`), streamed, as codex uses
//! it: events `response.created`, one `response.output_item.done` per
//! output item (a `message` with `output_text`, or a `function_call`), and
//! `response.completed` with the usage.
//!
//! codex has no file tools of its own for the default model family: every
//! [`ToolCall`] becomes a call of its `exec_command` tool (`cmd`): `cat` to
//! read, `printf` to write, and codex's `apply_patch` command to edit. A
//! structured final answer is the message text (codex asks for it with
//! `text.format` from `--output-schema`).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

use crate::script::{as_text, structured, Conversation, Reply, Step, ToolCall};
use crate::sse;

/// What a Responses request says: the text of its `user` messages, the
/// number of `*_call_output` items, codex's `<cwd>` in its environment
/// context.
pub(crate) fn conversation(body: &Value) -> Conversation {
    let mut conv = Conversation::of_request(body);
    let items = body.get("input").and_then(Value::as_array);
    for item in items.into_iter().flatten() {
        let kind = item
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("message");
        if kind.ends_with("_call_output") {
            conv.tool_results += 1;
            continue;
        }
        if kind != "message" || item.get("role").and_then(Value::as_str) != Some("user") {
            continue;
        }
        match item.get("content") {
            Some(Value::String(s)) => conv.push_user_text(s),
            Some(Value::Array(parts)) => {
                for part in parts {
                    if let Some(t) = part.get("text").and_then(Value::as_str) {
                        conv.push_user_text(t);
                    }
                }
            }
            _ => {}
        }
    }
    conv.cwd = between(&conv.user_text, "<cwd>", "</cwd>");
    conv
}

fn between(s: &str, open: &str, close: &str) -> Option<String> {
    let start = s.find(open)? + open.len();
    let len = s[start..].find(close)?;
    Some(s[start..start + len].trim().to_owned())
}

/// `s` quoted for a POSIX shell.
pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// codex's `exec_command` command line for a tool call.
pub fn command(call: &ToolCall, conv: &Conversation) -> Option<String> {
    Some(match call {
        ToolCall::Read { path } => format!("cat {}", shell_quote(&conv.resolve(path))),
        ToolCall::Write { path, content } => format!(
            "printf '%s' {} > {}",
            shell_quote(content),
            shell_quote(&conv.resolve(path))
        ),
        ToolCall::Edit { path, old, new } => {
            let mut patch = format!(
                "*** Begin Patch\n*** Update File: {}\n@@\n",
                conv.resolve(path)
            );
            for line in old.lines() {
                patch.push_str(&format!("-{line}\n"));
            }
            for line in new.lines() {
                patch.push_str(&format!("+{line}\n"));
            }
            patch.push_str("*** End Patch\n");
            format!("apply_patch <<'SHEPHERD_PATCH'\n{patch}SHEPHERD_PATCH")
        }
        ToolCall::Shell { command } => command.clone(),
        ToolCall::Raw { .. } => return None,
    })
}

/// The `function_call` item of a tool call.
fn function_call(call: &ToolCall, conv: &Conversation, id: &str) -> Value {
    let (name, arguments) = match call {
        ToolCall::Raw { name, input } => (name.clone(), input.clone()),
        other => (
            "exec_command".to_owned(),
            json!({"cmd": command(other, conv).unwrap_or_default()}),
        ),
    };
    json!({"type": "function_call", "id": format!("fc_{id}"), "call_id": format!("call_{id}"),
           "name": name, "arguments": arguments.to_string(), "status": "completed"})
}

fn message(text: &str, id: &str) -> Value {
    json!({"type": "message", "role": "assistant", "id": format!("msg_{id}"), "status": "completed",
           "content": [{"type": "output_text", "text": text, "annotations": []}]})
}

/// The answer to a Responses request.
pub(crate) fn respond(reply: &Reply, conv: &Conversation) -> Response {
    let (usage, id) = match reply {
        Reply::Step { usage, id, .. } | Reply::Done { usage, id } => (*usage, id.clone()),
    };
    let item = match reply {
        Reply::Done { .. } => message("Done.", &id),
        Reply::Step { step, .. } => match step {
            Step::Tool(call) => function_call(call, conv, &id),
            Step::Text(text) => message(text, &id),
            Step::Structured(_) | Step::Dynamic(_) => message(
                &structured(step, conv)
                    .map(|v| as_text(&v))
                    .unwrap_or_default(),
                &id,
            ),
            Step::Fail(_) => message("", &id),
        },
    };
    let response_id = format!("resp_{id}");
    let usage = json!({
        "input_tokens": usage.input, "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": usage.output, "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": usage.input + usage.output,
    });
    if !conv.stream {
        return axum::Json(
            json!({"id": response_id, "object": "response", "status": "completed",
                                 "output": [item], "usage": usage}),
        )
        .into_response();
    }
    sse::events(&[
        (
            Some("response.created"),
            json!({"type": "response.created", "response": {"id": response_id}}),
        ),
        (
            Some("response.output_item.done"),
            json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        ),
        (
            Some("response.completed"),
            json!({"type": "response.completed",
                   "response": {"id": response_id, "status": "completed", "usage": usage}}),
        ),
    ])
}

/// OpenAI's error body (Responses and Chat Completions).
pub(crate) fn error_body(status: StatusCode, message: &str) -> Value {
    let (kind, code) = match status.as_u16() {
        401 => ("invalid_request_error", "invalid_api_key"),
        429 => ("rate_limit_exceeded", "rate_limit_exceeded"),
        400..=499 => ("invalid_request_error", "invalid_request"),
        _ => ("server_error", "server_error"),
    };
    json!({"error": {"message": message, "type": kind, "code": code, "param": null}})
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;

    #[test]
    fn reads_user_text_outputs_and_cwd() {
        let body = json!({"model": "gpt-x", "stream": true, "input": [
            {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "sys"}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>\n  <cwd>/tmp/wt</cwd>\n</environment_context>"}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "You are the triage agent"}]},
            {"type": "function_call", "call_id": "c1", "name": "exec_command", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "x"},
        ]});
        let conv = conversation(&body);
        assert!(conv.user_text.contains("You are the triage agent"));
        assert!(!conv.user_text.contains("sys"));
        assert_eq!(conv.tool_results, 1);
        assert_eq!(conv.cwd.as_deref(), Some("/tmp/wt"));
        let write = ToolCall::Write {
            path: "a b.txt".into(),
            content: "it's\n".into(),
        };
        assert_eq!(
            command(&write, &conv).unwrap(),
            r"printf '%s' 'it'\''s
' > '/tmp/wt/a b.txt'"
        );
    }
}
