//! The OpenAI Chat Completions API (`POST /v1/chat/completions`), used by
//! opencode and Copilot CLI with an OpenAI-compatible provider: streamed
//! `chat.completion.chunk` events ending in `data: [DONE]`, or one
//! `chat.completion` object.
//!
//! TODO(agents-more): tool names follow opencode (`read` `filePath`,
//! `edit` `filePath`/`oldString`/`newString`, `write` `filePath`/`content`,
//! `bash` `command`); check them against the pinned opencode, and give
//! Copilot CLI its own names (a [`ToolCall::Raw`] works meanwhile). The
//! usage chunk is sent when `stream_options.include_usage` is asked for.

use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

use crate::script::{Conversation, Reply, Step, ToolCall};
use crate::{as_text, sse, structured};

/// What a Chat Completions request says: the text of its `user` messages,
/// the number of `tool` messages.
pub(crate) fn conversation(body: &Value) -> Conversation {
    let mut conv = Conversation {
        model: body.get("model").and_then(Value::as_str).map(str::to_owned),
        stream: body.get("stream").and_then(Value::as_bool) == Some(true),
        ..Conversation::default()
    };
    let messages = body.get("messages").and_then(Value::as_array);
    for message in messages.into_iter().flatten() {
        match message.get("role").and_then(Value::as_str) {
            Some("tool") => conv.tool_results += 1,
            Some("user") => {
                let text = match message.get("content") {
                    Some(Value::String(s)) => s.clone(),
                    Some(Value::Array(parts)) => parts
                        .iter()
                        .filter_map(|p| p.get("text").and_then(Value::as_str))
                        .collect::<Vec<_>>()
                        .join("\n"),
                    _ => String::new(),
                };
                if !conv.user_text.is_empty() {
                    conv.user_text.push('\n');
                }
                conv.user_text.push_str(&text);
            }
            _ => {}
        }
    }
    conv
}

/// opencode's name and arguments for a tool call.
pub fn tool(call: &ToolCall, conv: &Conversation) -> (String, Value) {
    match call {
        ToolCall::Read { path } => ("read".into(), json!({"filePath": conv.resolve(path)})),
        ToolCall::Edit { path, old, new } => (
            "edit".into(),
            json!({"filePath": conv.resolve(path), "oldString": old, "newString": new}),
        ),
        ToolCall::Write { path, content } => (
            "write".into(),
            json!({"filePath": conv.resolve(path), "content": content}),
        ),
        ToolCall::Shell { command } => (
            "bash".into(),
            json!({"command": command, "description": "Run a scripted command"}),
        ),
        ToolCall::Raw { name, input } => (name.clone(), input.clone()),
    }
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
    let chunk = |delta: Value, finish: Value, usage: Value| {
        json!({"id": format!("chatcmpl-{id}"), "object": "chat.completion.chunk", "created": 0,
               "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
               "usage": usage})
    };
    let mut delta = json!({"role": "assistant"});
    if let Some(t) = &text {
        delta["content"] = json!(t);
    }
    if let Some(calls) = tool_calls {
        delta["tool_calls"] = calls;
    }
    let mut body = String::new();
    for data in [
        chunk(delta, Value::Null, Value::Null),
        chunk(json!({}), json!(finish), usage),
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
}
