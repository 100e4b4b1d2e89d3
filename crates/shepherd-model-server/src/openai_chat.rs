//! The OpenAI Chat Completions API (`POST /v1/chat/completions`), used by
//! opencode (an `@ai-sdk/openai-compatible` provider) and Copilot CLI (BYOK,
//! `COPILOT_PROVIDER_BASE_URL`): streamed `chat.completion.chunk` events
//! ending in `data: [DONE]`, or one `chat.completion` object. Both CLIs ask
//! for streaming with `stream_options.include_usage`; the usage goes in the
//! last chunk.
//!
//! Checked against opencode 1.18.33 and Copilot CLI 1.0.102. Tool calls are
//! named as the asking CLI names its tools, told apart by the tools the
//! request offers: Copilot's (`view` `path`, `edit` `path`/`old_str`/
//! `new_str`, `create` `path`/`file_text`, `bash` `command`/`description`)
//! when it offers `view`, else opencode's (`read` `filePath`, `edit`
//! `filePath`/`oldString`/`newString`, `write` `filePath`/`content`, `bash`
//! `command`). The working directory is read from the system prompt
//! (opencode's `Working directory: `, Copilot's `Current working directory: `).

use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

use crate::script::{as_text, structured, Conversation, Reply, Step, ToolCall, ToolNames};
use crate::sse;

/// The text of a message's `content` (a string, or text parts).
fn content_text(message: &Value) -> String {
    match message.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// What a Chat Completions request says: the text of its `user` messages,
/// the number of `tool` messages, the tools offered, the working directory
/// its system prompt states.
pub(crate) fn conversation(body: &Value) -> Conversation {
    let mut conv = Conversation::of_request(body);
    let messages = body.get("messages").and_then(Value::as_array);
    for message in messages.into_iter().flatten() {
        match message.get("role").and_then(Value::as_str) {
            Some("tool") => conv.tool_results += 1,
            Some("user") => {
                let text = content_text(message);
                conv.push_user_text(&text);
            }
            Some("system") if conv.cwd.is_none() => {
                let text = content_text(message);
                conv.cwd = ["Current working directory: ", "Working directory: "]
                    .iter()
                    .find_map(|marker| line_after(&text, marker));
            }
            _ => {}
        }
    }
    conv.tools = body
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| t.get("function")?.get("name")?.as_str())
        .map(str::to_owned)
        .collect();
    conv
}

/// The rest of the line after `marker` in plain text.
fn line_after(text: &str, marker: &str) -> Option<String> {
    let start = text.find(marker)? + marker.len();
    let line = text[start..].lines().next()?.trim();
    (!line.is_empty()).then(|| line.to_owned())
}

/// Whether the asking CLI is Copilot CLI (it offers `view`, opencode `read`).
fn is_copilot(conv: &Conversation) -> bool {
    conv.tools.iter().any(|t| t == "view")
}

/// Copilot CLI's names of its tools.
const COPILOT_TOOLS: ToolNames = ToolNames {
    read: "view",
    edit: "edit",
    write: "create",
    shell: "bash",
    path: "path",
    old: "old_str",
    new: "new_str",
    content: "file_text",
    edit_extra: None,
    shell_extra: Some(("description", "Run a scripted command")),
};

/// opencode's names of its tools.
const OPENCODE_TOOLS: ToolNames = ToolNames {
    read: "read",
    edit: "edit",
    write: "write",
    shell: "bash",
    path: "filePath",
    old: "oldString",
    new: "newString",
    content: "content",
    edit_extra: None,
    shell_extra: None,
};

/// The asking CLI's name and arguments for a tool call (opencode's, or
/// Copilot CLI's when the request offers its tools).
pub fn tool(call: &ToolCall, conv: &Conversation) -> (String, Value) {
    let names = if is_copilot(conv) {
        &COPILOT_TOOLS
    } else {
        &OPENCODE_TOOLS
    };
    call.named(names, conv)
}

/// The answer to a Chat Completions request.
pub(crate) fn respond(reply: &Reply, conv: &Conversation) -> Response {
    let (usage, id) = match reply {
        Reply::Step { usage, id, .. } | Reply::Done { usage, id } => (*usage, id.clone()),
    };
    let (text, call) = match reply {
        Reply::Done { .. } => (Some("Done.".to_owned()), None),
        Reply::Step { step, .. } => match step {
            Step::Tool(call) => (None, Some(tool(call, conv))),
            Step::Text(t) => (Some(t.clone()), None),
            Step::Structured(_) | Step::Dynamic(_) => {
                (structured(step, conv).map(|v| as_text(&v)), None)
            }
            Step::Fail(_) => (Some(String::new()), None),
        },
    };
    let finish = if call.is_some() { "tool_calls" } else { "stop" };
    let model = conv.model.clone().unwrap_or_else(|| "scripted".into());
    let usage = json!({"prompt_tokens": usage.input, "completion_tokens": usage.output,
                       "total_tokens": usage.input + usage.output});
    let tool_calls = call.as_ref().map(|(name, args)| {
        json!([{"index": 0, "id": format!("call_{id}"), "type": "function",
                "function": {"name": name, "arguments": args.to_string()}}])
    });
    if !conv.stream {
        let mut message = json!({"role": "assistant", "content": text});
        if let Some(calls) = &tool_calls {
            message["tool_calls"] = calls.clone();
        }
        return axum::Json(
            json!({"id": format!("chatcmpl-{id}"), "object": "chat.completion",
            "created": 0, "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage}),
        )
        .into_response();
    }
    // As OpenAI streams: the role, the content or tool calls, the finish
    // reason, then (asked for with `stream_options.include_usage`) a chunk
    // with no choices and the usage.
    let chunk = |delta: Value, finish: Value| {
        json!({"id": format!("chatcmpl-{id}"), "object": "chat.completion.chunk", "created": 0,
               "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let mut delta = json!({});
    if let Some(t) = &text {
        delta["content"] = json!(t);
    }
    if let Some(calls) = tool_calls {
        delta["tool_calls"] = calls;
    }
    let usage_chunk = json!({"id": format!("chatcmpl-{id}"), "object": "chat.completion.chunk",
                             "created": 0, "model": model, "choices": [], "usage": usage});
    let mut body = String::new();
    for data in [
        chunk(json!({"role": "assistant", "content": ""}), Value::Null),
        chunk(delta, Value::Null),
        chunk(json!({}), json!(finish)),
        usage_chunk,
    ] {
        body.push_str(&format!("data: {data}\n\n"));
    }
    body.push_str("data: [DONE]\n\n");
    sse::raw(body)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;

    #[test]
    fn counts_tool_messages() {
        let body = json!({"messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "You are the fix agent"},
            {"role": "assistant", "tool_calls": []},
            {"role": "tool", "tool_call_id": "c", "content": "x"},
        ]});
        let conv = conversation(&body);
        assert_eq!(conv.user_text, "You are the fix agent");
        assert_eq!(conv.tool_results, 1);
    }

    fn offering(tools: &[&str], system: &str) -> Conversation {
        let tools: Vec<Value> = tools
            .iter()
            .map(|t| json!({"type": "function", "function": {"name": t, "parameters": {}}}))
            .collect();
        conversation(
            &json!({"model": "m", "stream": true, "tools": tools, "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": [{"type": "text", "text": "P"}]},
            ]}),
        )
    }

    #[test]
    fn tools_are_named_as_the_asking_cli_names_them() {
        let opencode = offering(
            &["bash", "edit", "read", "write"],
            "Here is some useful information about the environment you are running in:\n<env>\n  Working directory: /wt/oc\n  Workspace root folder: /wt/oc\n",
        );
        assert_eq!(opencode.cwd.as_deref(), Some("/wt/oc"));
        let (name, args) = tool(
            &ToolCall::Write {
                path: "a.txt".into(),
                content: "x".into(),
            },
            &opencode,
        );
        assert_eq!(
            (name.as_str(), &args),
            (
                "write",
                &json!({"filePath": "/wt/oc/a.txt", "content": "x"})
            )
        );
        let copilot = offering(
            &["bash", "view", "create", "edit"],
            "* Current working directory: /wt/cp\n* Git repository root: /wt/cp\n",
        );
        assert_eq!(copilot.cwd.as_deref(), Some("/wt/cp"));
        let (name, args) = tool(
            &ToolCall::Edit {
                path: "a.txt".into(),
                old: "o".into(),
                new: "n".into(),
            },
            &copilot,
        );
        assert_eq!(
            (name.as_str(), &args),
            (
                "edit",
                &json!({"path": "/wt/cp/a.txt", "old_str": "o", "new_str": "n"})
            )
        );
        let (name, _) = tool(
            &ToolCall::Read {
                path: "/abs".into(),
            },
            &copilot,
        );
        assert_eq!(name, "view");
    }
}
