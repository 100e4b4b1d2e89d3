//! The real `claude` and `codex` (the versions pinned in
//! `crates/shepherd-model-server/clis/`) against the scripted model server:
//! one call each, and the failures a user must be able to act on (a 401, a
//! 429, retries without progress, a hanging model, an invalid answer).
//! The whole loop with every role is in the engine's `test_real_clis.rs`.

use std::ffi::OsString;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use shepherd_agent::exec::TimeoutKind;
use shepherd_agent::{Agent, AgentContext, AgentError, CliAgent, CliConfig, CliProvider, Prompts};
use shepherd_model_server::{Exchange, Failure, Match, Step, ToolCall};

use crate::common::*;

/// The real CLI of these tests ([`RealCli`]).
struct Real(RealCli);

impl Real {
    fn new(provider: CliProvider, exchanges: Vec<Exchange>) -> Self {
        Real(RealCli::new(provider, exchanges))
    }

    /// Shepherd's environment as the agent is built from it: the forge
    /// tokens set, and the CLI pointed at the model server.
    fn parent_env(&self) -> Vec<(OsString, OsString)> {
        let url = self.0.server.url();
        let mut env: Vec<(&str, String)> = vec![
            ("PATH", std::env::var("PATH").unwrap_or_default()),
            ("HOME", self.0.home.path().display().to_string()),
            ("GITHUB_TOKEN", FORGE_TOKEN.into()),
            ("GH_TOKEN", FORGE_TOKEN.into()),
            ("GITLAB_TOKEN", FORGE_TOKEN.into()),
        ];
        match self.0.provider {
            CliProvider::Claude => env.extend([
                ("ANTHROPIC_BASE_URL", url),
                ("ANTHROPIC_API_KEY", MODEL_KEY.into()),
            ]),
            CliProvider::Codex => env.extend([
                ("OPENAI_BASE_URL", format!("{url}/v1")),
                ("OPENAI_API_KEY", MODEL_KEY.into()),
            ]),
            other => panic!("no real-CLI setup for {other} here"),
        }
        env.into_iter().map(|(k, v)| (k.into(), v.into())).collect()
    }

    fn agent(&self, tweak: impl FnOnce(&mut CliConfig)) -> CliAgent {
        let mut config = real_cli_config(self.0.provider, self.parent_env());
        tweak(&mut config);
        CliAgent::new(config, Prompts::builtin()).unwrap()
    }

    fn ctx(&self) -> AgentContext {
        AgentContext::new(self.0.sb.transcripts(), "triage")
    }

    /// The model requests (not `count_tokens` and the like).
    fn model_requests(&self) -> Vec<shepherd_model_server::RecordedRequest> {
        self.0
            .server
            .requests()
            .into_iter()
            .filter(|r| r.exchange.is_some() || r.reply == "unmatched")
            .collect()
    }

    /// Every request carried the CLI's key and no forge token; no transcript
    /// names or holds a forge token.
    fn assert_key_passed_and_no_forge_token(&self) {
        self.0.assert_no_forge_token();
        for r in self.model_requests() {
            let key = r
                .header("x-api-key")
                .map(str::to_owned)
                .or_else(|| r.header("authorization").map(|a| a.replace("Bearer ", "")));
            assert_eq!(key.as_deref(), Some(MODEL_KEY), "{} {}", r.method, r.path);
        }
        for entry in std::fs::read_dir(self.0.sb.transcripts()).unwrap() {
            let path = entry.unwrap().path();
            if path.is_file() {
                let text = std::fs::read_to_string(&path).unwrap();
                let t: Value = serde_json::from_str(&text).unwrap();
                let env: Vec<&str> = t["env"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_str().unwrap())
                    .collect();
                assert!(
                    !env.iter().any(|n| n.contains("GITHUB")
                        || n.starts_with("GH_")
                        || n.contains("GITLAB")),
                    "{env:?}"
                );
                let (key, url) = match self.0.provider {
                    CliProvider::Claude => ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
                    _ => ("OPENAI_API_KEY", "OPENAI_BASE_URL"),
                };
                assert!(env.contains(&key) && env.contains(&url), "{env:?}");
            }
        }
    }
}

fn triage_answer() -> Value {
    needs_human_answer("Read src/a.rs: a person should decide.")
}

/// Triage: read a file, then answer.
fn reading_triage(answer: Value) -> Exchange {
    Exchange::new(
        "triage",
        Match::Contains("You are the triage agent".into()),
        vec![
            Step::Tool(ToolCall::Read {
                path: "src/a.rs".into(),
            }),
            Step::Structured(answer),
        ],
    )
}

async fn one_call_with_a_tool_reads_usage_and_passes_only_the_model_key(provider: CliProvider) {
    let real = Real::new(
        provider,
        vec![reading_triage(triage_answer()).usage(120, 30)],
    );
    let ctx = real.ctx();
    let started = Instant::now();
    let answer = real
        .agent(|_| {})
        .triage(&triage_task(&real.0.sb.worktree()), &ctx)
        .await
        .unwrap();
    eprintln!("{provider}: one triage call in {:?}", started.elapsed());
    assert_eq!(answer.items.len(), 2);
    // The tool ran: the second request carries its result.
    let steps: Vec<usize> = real
        .0
        .server
        .requests_of("triage")
        .iter()
        .map(|r| r.step)
        .collect();
    assert!(steps.contains(&0) && steps.contains(&1), "{steps:?}");
    let usage = ctx.usage.total();
    let requests = real.0.server.requests_of("triage").len() as u64;
    assert_eq!(usage.input_tokens, Some(120 * requests), "{usage:?}");
    assert_eq!(usage.output_tokens, Some(30 * requests), "{usage:?}");
    if provider == CliProvider::Claude {
        assert!(usage.cost_usd.is_some_and(|c| c > 0.0), "{usage:?}");
    }
    real.assert_key_passed_and_no_forge_token();
}

#[tokio::test]
async fn claude_one_call_with_a_tool_reads_usage_and_passes_only_the_model_key() {
    one_call_with_a_tool_reads_usage_and_passes_only_the_model_key(CliProvider::Claude).await;
}

#[tokio::test]
async fn codex_one_call_with_a_tool_reads_usage_and_passes_only_the_model_key() {
    one_call_with_a_tool_reads_usage_and_passes_only_the_model_key(CliProvider::Codex).await;
}

async fn a_401_names_the_provider_the_endpoint_and_the_key(provider: CliProvider) {
    let real = Real::new(
        provider,
        vec![Exchange::new(
            "all",
            Match::Any,
            vec![Step::Fail(Failure::unauthorized())],
        )],
    );
    let started = Instant::now();
    let err = real
        .agent(|_| {})
        .triage(&triage_task(&real.0.sb.worktree()), &real.ctx())
        .await
        .unwrap_err();
    let message = err.to_string();
    eprintln!("{provider} 401: {message}");
    let (name, key) = match provider {
        CliProvider::Claude => ("claude", "ANTHROPIC_API_KEY"),
        _ => ("codex", "OPENAI_API_KEY"),
    };
    let expected = format!("{name}: 401 Unauthorized from {}", real.0.server.url());
    assert!(message.starts_with(&expected), "{message}");
    assert!(message.contains(&format!("check {key}")), "{message}");
    assert!(matches!(err, AgentError::Cli { .. }), "{err:?}");
    // Stopped at the first 401, not after the CLI's own ten retries.
    assert_within(started, Duration::from_secs(30));
    // An error that is not the answer's fault is not retried by Shepherd.
    assert_eq!(
        real.model_requests()
            .iter()
            .filter(|r| r.step == 0)
            .count()
            .min(1),
        1
    );
    real.assert_key_passed_and_no_forge_token();
}

#[tokio::test]
async fn claude_a_401_names_the_provider_the_endpoint_and_the_key() {
    a_401_names_the_provider_the_endpoint_and_the_key(CliProvider::Claude).await;
}

#[tokio::test]
async fn codex_a_401_names_the_provider_the_endpoint_and_the_key() {
    a_401_names_the_provider_the_endpoint_and_the_key(CliProvider::Codex).await;
}

/// Issue 28.14: without `OPENAI_BASE_URL`, codex calls the model provider
/// of the user's own `~/.codex/config.toml`; a 401 there names that
/// endpoint (and the key variable the provider reads), not codex's default.
#[tokio::test]
async fn codex_a_401_names_the_endpoint_of_the_users_config() {
    let real = Real::new(
        CliProvider::Codex,
        vec![Exchange::new(
            "all",
            Match::Any,
            vec![Step::Fail(Failure::unauthorized())],
        )],
    );
    let url = format!("{}/v1", real.0.server.url());
    let codex_home = real.0.home.path().join(".codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    let config = codex_home.join("config.toml");
    std::fs::write(
        &config,
        format!(
            "model_provider = \"myproxy\"\n\
             check_for_update_on_startup = false\n\
             [model_providers.myproxy]\n\
             name = \"my proxy\"\n\
             base_url = \"{url}\"\n\
             env_key = \"OPENAI_API_KEY\"\n\
             wire_api = \"responses\"\n"
        ),
    )
    .unwrap();
    let err = real
        .agent(|c| {
            let env = c.env.parent.as_mut().unwrap();
            env.retain(|(k, _)| k != "OPENAI_BASE_URL");
        })
        .triage(&triage_task(&real.0.sb.worktree()), &real.ctx())
        .await
        .unwrap_err();
    let message = err.to_string();
    let expected = format!(
        "codex: 401 Unauthorized from {url} (model provider `myproxy` of {}): check OPENAI_API_KEY",
        config.display()
    );
    assert!(message.starts_with(&expected), "{message}");
    assert!(!message.contains("api.openai.com"), "{message}");
    // The call did reach the endpoint named.
    assert!(!real.model_requests().is_empty(), "{message}");
}

/// The model's first answer fails with `failure`; the CLI retries the
/// request on its own and goes on to the structured answer. `shown` is how
/// the server records the failed answer.
async fn a_failed_first_answer_is_retried_by_the_cli(
    provider: CliProvider,
    failure: Failure,
    shown: &str,
) {
    let real = Real::new(
        provider,
        vec![reading_triage(triage_answer()).failing_first(1, failure)],
    );
    let answer = real
        .agent(|_| {})
        .triage(&triage_task(&real.0.sb.worktree()), &real.ctx())
        .await
        .unwrap();
    assert_eq!(answer.items.len(), 2);
    let replies: Vec<String> = real
        .0
        .server
        .requests_of("triage")
        .into_iter()
        .map(|r| r.reply)
        .collect();
    assert_eq!(
        replies.first().map(String::as_str),
        Some(shown),
        "{replies:?}"
    );
    assert!(replies.iter().any(|r| r == "structured"), "{replies:?}");
}

async fn a_429_is_retried_by_the_cli(provider: CliProvider) {
    a_failed_first_answer_is_retried_by_the_cli(provider, Failure::rate_limited(1), "fail:429")
        .await;
}

#[tokio::test]
async fn claude_a_429_is_retried_by_the_cli() {
    a_429_is_retried_by_the_cli(CliProvider::Claude).await;
}

#[tokio::test]
async fn codex_a_429_is_retried_by_the_cli() {
    a_429_is_retried_by_the_cli(CliProvider::Codex).await;
}

async fn retries_without_progress_are_stopped(provider: CliProvider) {
    let real = Real::new(
        provider,
        vec![Exchange::new(
            "all",
            Match::Any,
            vec![Step::Fail(Failure::rate_limited(1))],
        )],
    );
    let started = Instant::now();
    let err = real
        .agent(|c| c.no_progress_timeout = Duration::from_secs(3))
        .triage(&triage_task(&real.0.sb.worktree()), &real.ctx())
        .await
        .unwrap_err();
    let elapsed = started.elapsed();
    let message = err.to_string();
    eprintln!("{provider} after {elapsed:?}: {message}");
    assert!(message.contains("without progress"), "{message}");
    assert!(message.contains("429"), "{message}");
    assert!(elapsed < Duration::from_secs(40), "{elapsed:?}");
    // The CLI said it was retrying (that is what started the clock).
    let retrying = match provider {
        CliProvider::Claude => "API retry",
        _ => "Reconnecting",
    };
    assert!(message.contains(retrying), "{message}");
    assert!(!real.model_requests().is_empty());
}

#[tokio::test]
async fn claude_retries_without_progress_are_stopped() {
    retries_without_progress_are_stopped(CliProvider::Claude).await;
}

#[tokio::test]
async fn codex_retries_without_progress_are_stopped() {
    retries_without_progress_are_stopped(CliProvider::Codex).await;
}

async fn a_hanging_model_times_out(provider: CliProvider) {
    let real = Real::new(
        provider,
        vec![Exchange::new(
            "all",
            Match::Any,
            vec![Step::Fail(Failure::Hang)],
        )],
    );
    let started = Instant::now();
    let err = real
        .agent(|c| c.idle_timeout = Duration::from_secs(4))
        .triage(&triage_task(&real.0.sb.worktree()), &real.ctx())
        .await
        .unwrap_err();
    assert_timeout(&err, TimeoutKind::Idle);
    assert_within(started, Duration::from_secs(30));
    assert_eq!(real.model_requests()[0].reply, "hang");
}

#[tokio::test]
async fn claude_a_hanging_model_times_out() {
    a_hanging_model_times_out(CliProvider::Claude).await;
}

#[tokio::test]
async fn codex_a_hanging_model_times_out() {
    a_hanging_model_times_out(CliProvider::Codex).await;
}

async fn an_invalid_answer_is_asked_for_once_more_then_fails_closed(provider: CliProvider) {
    // Ids that are not the task's: valid JSON, refused by Shepherd.
    let wrong = json!({"items": [{"id": "T9", "decision": "wontfix", "theme": null,
        "reasoning": "x", "reply_hint": "x", "pr_changed_evidence": false}]});
    let real = Real::new(provider, vec![reading_triage(wrong)]);
    let err = real
        .agent(|_| {})
        .triage(&triage_task(&real.0.sb.worktree()), &real.ctx())
        .await
        .unwrap_err();
    match &err {
        AgentError::InvalidAnswer { attempts, .. } => assert_eq!(*attempts, 2),
        other => panic!("{other:?}"),
    }
    let conversations: Vec<_> = real
        .0
        .server
        .requests_of("triage")
        .into_iter()
        .filter(|r| r.step == 0)
        .collect();
    assert!(conversations.len() >= 2, "{conversations:?}");
    assert!(
        conversations
            .iter()
            .any(|r| r.body.contains("Your previous answer was refused")),
        "the retry shows the errors"
    );
}

#[tokio::test]
async fn claude_an_invalid_answer_is_asked_for_once_more_then_fails_closed() {
    an_invalid_answer_is_asked_for_once_more_then_fails_closed(CliProvider::Claude).await;
}

#[tokio::test]
async fn codex_an_invalid_answer_is_asked_for_once_more_then_fails_closed() {
    an_invalid_answer_is_asked_for_once_more_then_fails_closed(CliProvider::Codex).await;
}

async fn a_broken_model_response_is_retried_by_the_cli(provider: CliProvider) {
    // A 200 whose event stream is not JSON, then good answers: both CLIs
    // retry the request and go on.
    a_failed_first_answer_is_retried_by_the_cli(provider, Failure::Malformed, "malformed").await;
}

#[tokio::test]
async fn claude_a_broken_model_response_is_retried_by_the_cli() {
    a_broken_model_response_is_retried_by_the_cli(CliProvider::Claude).await;
}

#[tokio::test]
async fn codex_a_broken_model_response_is_retried_by_the_cli() {
    a_broken_model_response_is_retried_by_the_cli(CliProvider::Codex).await;
}
