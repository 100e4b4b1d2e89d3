//! The server over HTTP: scripted steps, failures, and the recorder.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is how a test fails

use serde_json::{json, Value};
use shepherd_model_server::{Api, Exchange, Failure, Match, ModelServer, Script, Step, ToolCall};

fn messages(text: &str, tool_results: usize, stream: bool) -> Value {
    let mut msgs = vec![json!({"role": "user", "content": [{"type": "text", "text": text}]})];
    for i in 0..tool_results {
        msgs.push(json!({"role": "assistant", "content": [{"type": "tool_use", "id": format!("t{i}"), "name": "Read", "input": {}}]}));
        msgs.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("t{i}"), "content": "x"}]}));
    }
    json!({"model": "m", "stream": stream, "max_tokens": 10, "messages": msgs,
           "system": "Env\n - Primary working directory: /wt\n"})
}

/// The body of the answer to `request`, as text.
async fn answer_text(request: reqwest::RequestBuilder) -> String {
    request.send().await.unwrap().text().await.unwrap()
}

#[tokio::test]
async fn anthropic_steps_failures_and_records() {
    let server = ModelServer::start(Script::new(vec![
        Exchange::when_contains(
            "triage",
            "triage agent",
            vec![
                Step::Tool(ToolCall::Read {
                    path: "a.rs".into(),
                }),
                Step::Structured(json!({"items": []})),
            ],
        )
        .failing_first(1, Failure::rate_limited(2)),
        Exchange::new(
            "rest",
            Match::Any,
            vec![Step::Fail(Failure::unauthorized())],
        ),
    ]))
    .unwrap();
    let client = reqwest::Client::new();
    let post = |body: Value| {
        client
            .post(format!("{}/v1/messages?beta=true", server.url()))
            .header("x-api-key", "sk-test")
            .json(&body)
    };
    let limited = post(messages("the triage agent", 0, false))
        .send()
        .await
        .unwrap();
    assert_eq!(limited.status(), 429);
    assert_eq!(limited.headers()["retry-after"], "2");
    let first = answer_text(post(messages("the triage agent", 0, false))).await;
    let first: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(first["stop_reason"], "tool_use");
    assert_eq!(first["content"][0]["name"], "Read");
    assert_eq!(first["content"][0]["input"]["file_path"], "/wt/a.rs");
    let streamed = answer_text(post(messages("the triage agent", 1, true))).await;
    assert!(streamed.contains("event: message_start"), "{streamed}");
    assert!(
        streamed.contains("\"name\":\"StructuredOutput\""),
        "{streamed}"
    );
    assert!(streamed.contains(r#"{\"items\":[]}"#), "{streamed}");
    let other = post(messages("a fix agent", 0, false))
        .send()
        .await
        .unwrap();
    assert_eq!(other.status(), 401);
    let body: Value = other.json().await.unwrap();
    assert_eq!(body["error"]["type"], "authentication_error");

    let recorded = server.requests();
    assert_eq!(recorded.len(), 4);
    assert!(recorded.iter().all(|r| r.api == Some(Api::Anthropic)));
    assert_eq!(
        recorded
            .iter()
            .map(|r| r.reply.as_str())
            .collect::<Vec<_>>(),
        ["fail:429", "tool:read", "structured", "fail:401"]
    );
    assert_eq!(recorded[0].header("X-Api-Key"), Some("sk-test"));
    assert_eq!(server.requests_containing("sk-test").len(), 4);
    assert_eq!(server.requests_of("triage").len(), 3);
}

#[tokio::test]
async fn responses_stream_function_calls_then_the_answer() {
    let server = ModelServer::start(Script::new(vec![Exchange::new(
        "codex",
        Match::Any,
        vec![
            Step::Tool(ToolCall::Shell {
                command: "ls".into(),
            }),
            Step::Text("{\"ok\":true}".into()),
        ],
    )
    .usage(7, 3)]))
    .unwrap();
    let client = reqwest::Client::new();
    let body = |outputs: usize| {
        let mut input = vec![
            json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}),
        ];
        for _ in 0..outputs {
            input.push(json!({"type": "function_call_output", "call_id": "c", "output": "x"}));
        }
        json!({"model": "m", "stream": true, "input": input})
    };
    let url = format!("{}/v1/responses", server.url());
    let (client_ref, url_ref) = (&client, &url);
    let post = |outputs: usize| async move {
        answer_text(client_ref.post(url_ref).json(&body(outputs))).await
    };
    let first = post(0).await;
    assert!(first.contains("\"name\":\"exec_command\""), "{first}");
    assert!(first.contains(r#"{\"cmd\":\"ls\"}"#), "{first}");
    let second = post(1).await;
    assert!(
        second.contains("output_text") && second.contains(r#"{\"ok\":true}"#),
        "{second}"
    );
    assert!(second.contains("\"input_tokens\":7"), "{second}");
    let missing = client
        .get(format!("{}/v1/models", server.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    assert_eq!(server.requests().last().unwrap().reply, "not-found");
}

#[tokio::test]
async fn a_hanging_request_ends_with_the_server() {
    let server = ModelServer::start(Script::new(vec![Exchange::new(
        "hang",
        Match::Any,
        vec![Step::Fail(Failure::Hang)],
    )]))
    .unwrap();
    let url = format!("{}/v1/messages", server.url());
    let request = tokio::spawn(async move {
        reqwest::Client::new()
            .post(url)
            .json(&messages("x", 0, true))
            .send()
            .await
    });
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(!request.is_finished());
    assert_eq!(server.requests()[0].reply, "hang");
    drop(server);
    let result = tokio::time::timeout(std::time::Duration::from_secs(5), request)
        .await
        .expect("the hanging request ends when the server stops")
        .unwrap();
    assert!(result.is_err());
}
