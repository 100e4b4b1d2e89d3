//! The real Gemini CLI, opencode and Copilot CLI (the versions pinned in
//! `crates/shepherd-model-server/clis/`) against the scripted model server,
//! one triage call each: the failures a user must be able to act on (a
//! 401, a 429 the CLI retries, a hanging model, a malformed answer). Every
//! role of a whole run through each is in the engine's `test_real_more.rs`.

use std::ffi::OsString;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use shepherd_agent::exec::TimeoutKind;
use shepherd_agent::{Agent, AgentContext, AgentError, CliAgent, CliConfig, CliProvider, Prompts};
use shepherd_model_server::{Exchange, Failure, Match, Step};

use crate::common::*;

/// The real CLI of these tests (see [`RealCli`]), its HOME configured.
struct Real(RealCli);

impl Real {
    fn new(provider: CliProvider, exchanges: Vec<Exchange>) -> Self {
        let real = Real(RealCli::new(provider, exchanges));
        let home = real.0.home.path();
        match provider {
            CliProvider::Gemini => {
                std::fs::create_dir_all(home.join(".gemini")).unwrap();
                std::fs::write(
                    home.join(".gemini/settings.json"),
                    r#"{"security": {"auth": {"selectedType": "gemini-api-key"}}}"#,
                )
                .unwrap();
            }
            CliProvider::Opencode => {
                std::fs::create_dir_all(home.join(".config/opencode")).unwrap();
                let config = json!({"provider": {"scripted": {
                    "npm": "@ai-sdk/openai-compatible",
                    "options": {"baseURL": format!("{}/v1", real.0.server.url()),
                                "apiKey": "{env:SCRIPTED_API_KEY}"},
                    "models": {"m": {"name": "m"}}}}});
                std::fs::write(
                    home.join(".config/opencode/opencode.json"),
                    config.to_string(),
                )
                .unwrap();
            }
            _ => {}
        }
        real
    }

    fn parent_env(&self) -> Vec<(OsString, OsString)> {
        let url = self.0.server.url();
        let mut env: Vec<(&str, String)> = vec![
            ("PATH", std::env::var("PATH").unwrap_or_default()),
            ("HOME", self.0.home.path().display().to_string()),
            // Gemini CLI writes its error reports there.
            ("TMPDIR", self.0.home.path().display().to_string()),
            ("GITHUB_TOKEN", FORGE_TOKEN.into()),
            ("GH_TOKEN", FORGE_TOKEN.into()),
        ];
        match self.0.provider {
            CliProvider::Gemini => env.extend([
                ("GOOGLE_GEMINI_BASE_URL", url),
                ("GEMINI_API_KEY", MODEL_KEY.into()),
            ]),
            CliProvider::Opencode => env.push(("SCRIPTED_API_KEY", MODEL_KEY.into())),
            CliProvider::Copilot => env.extend([
                ("COPILOT_PROVIDER_BASE_URL", format!("{url}/v1")),
                ("COPILOT_PROVIDER_API_KEY", MODEL_KEY.into()),
                ("COPILOT_OFFLINE", "true".into()),
            ]),
            other => panic!("{other} is in test_real_clis.rs"),
        }
        env.into_iter().map(|(k, v)| (k.into(), v.into())).collect()
    }

    fn agent(&self, tweak: impl FnOnce(&mut CliConfig)) -> CliAgent {
        let mut config = real_cli_config(self.0.provider, self.parent_env());
        config.model = Some(
            match self.0.provider {
                CliProvider::Gemini => "gemini-2.5-pro",
                CliProvider::Opencode => "scripted/m",
                _ => "gpt-4.1",
            }
            .into(),
        );
        if self.0.provider == CliProvider::Opencode {
            config.env.credentials = vec!["SCRIPTED_API_KEY".into()];
        }
        tweak(&mut config);
        CliAgent::new(config, Prompts::builtin()).unwrap()
    }

    async fn triage(&self, tweak: impl FnOnce(&mut CliConfig)) -> Result<usize, AgentError> {
        let ctx = AgentContext::new(self.0.sb.transcripts(), "triage");
        let answer = self
            .agent(tweak)
            .triage(&triage_task(&self.0.sb.worktree()), &ctx)
            .await?;
        Ok(answer.items.len())
    }

    fn replies(&self) -> Vec<String> {
        self.0
            .server
            .requests()
            .into_iter()
            .filter(|r| r.exchange.is_some())
            .map(|r| r.reply)
            .collect()
    }

    /// The CLI's key reached the server; the forge token reached nothing.
    fn assert_key_and_no_forge_token(&self) {
        for r in self.0.assert_no_forge_token() {
            assert!(r.contains(MODEL_KEY), "no key: {} {}", r.method, r.path);
        }
        for entry in std::fs::read_dir(self.0.sb.transcripts()).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            assert!(!text.contains("\"GITHUB_TOKEN\""));
        }
    }
}

fn triage_answer() -> Value {
    needs_human_answer("A person should decide.")
}

fn all(step: Step) -> Vec<Exchange> {
    vec![Exchange::new("all", Match::Any, vec![step])]
}

/// A 401: the message names the provider, the status and the CLI's own
/// error, soon (no endless retries).
async fn a_401_names_the_provider_and_the_status(provider: CliProvider) {
    let real = Real::new(provider, all(Step::Fail(Failure::unauthorized())));
    let started = Instant::now();
    let err = real.triage(|_| {}).await.unwrap_err();
    let message = err.to_string();
    eprintln!("{provider} 401 after {:?}: {message}", started.elapsed());
    assert!(matches!(err, AgentError::Cli { .. }), "{err:?}");
    assert!(
        message.starts_with(&format!("{provider}: 401 Unauthorized")),
        "{message}"
    );
    // The CLI's own words: the server's message, or its own account of it.
    let said = message.split_once(" said: ").map_or("", |(_, m)| m);
    assert!(
        said.contains("invalid api key") || said.contains("401"),
        "the CLI's own words: {message}"
    );
    assert_within(started, Duration::from_secs(60));
    real.assert_key_and_no_forge_token();
}

/// A 429 once, then the answer: the CLI retries by itself.
async fn a_429_is_retried_by_the_cli(provider: CliProvider) {
    let real = Real::new(
        provider,
        vec![Exchange::new(
            "triage",
            Match::Contains("You are the triage agent".into()),
            vec![Step::Structured(triage_answer())],
        )
        .failing_first(1, Failure::rate_limited(1))],
    );
    assert_eq!(real.triage(|_| {}).await.unwrap(), 2);
    let replies = real.replies();
    assert_eq!(
        replies.first().map(String::as_str),
        Some("fail:429"),
        "{replies:?}"
    );
    assert!(replies.iter().any(|r| r == "structured"), "{replies:?}");
    real.assert_key_and_no_forge_token();
}

/// A model that never answers: the idle timeout kills the CLI's group
/// (long enough for the CLI to send its request first: opencode sets up its
/// database in a fresh HOME silently, for 20 s on a busy machine).
async fn a_hanging_model_times_out(provider: CliProvider) {
    let real = Real::new(provider, all(Step::Fail(Failure::Hang)));
    let started = Instant::now();
    let err = real
        .triage(|c| {
            c.idle_timeout = Duration::from_secs(match provider {
                CliProvider::Opencode => 45,
                _ => 15,
            })
        })
        .await
        .unwrap_err();
    assert_timeout(&err, TimeoutKind::Idle);
    assert_within(started, Duration::from_secs(90));
    let requests: Vec<String> = real
        .0
        .server
        .requests()
        .iter()
        .map(|r| format!("{} {} {}", r.method, r.path, r.reply))
        .collect();
    assert_eq!(
        real.replies().first().map(String::as_str),
        Some("hang"),
        "{requests:?}"
    );
}

/// A 200 whose body is broken: a failure that says so, not a hang nor an
/// answer.
async fn a_malformed_answer_fails_the_call(provider: CliProvider) {
    let real = Real::new(provider, all(Step::Fail(Failure::Malformed)));
    let started = Instant::now();
    let err = real
        .triage(|c| c.total_timeout = Duration::from_secs(60))
        .await
        .unwrap_err();
    eprintln!("{provider} malformed after {:?}: {err}", started.elapsed());
    assert!(
        matches!(
            err,
            AgentError::Cli { .. } | AgentError::InvalidAnswer { .. }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains(provider.name()), "{err}");
    assert!(real.replies().iter().all(|r| r == "malformed"));
}

macro_rules! per_provider {
    ($test:ident: $($provider:ident),+) => {
        mod $test {
            use super::*;
            $(
                #[tokio::test]
                #[allow(non_snake_case)]
                async fn $provider() {
                    super::$test(CliProvider::$provider).await;
                }
            )+
        }
    };
}

per_provider!(a_401_names_the_provider_and_the_status: Gemini, Opencode, Copilot);
per_provider!(a_429_is_retried_by_the_cli: Gemini, Opencode, Copilot);
per_provider!(a_hanging_model_times_out: Gemini, Opencode, Copilot);
per_provider!(a_malformed_answer_fails_the_call: Gemini, Opencode, Copilot);

/// Issue 28.15: a provider that keeps answering 429 is stopped within the
/// idle timeout (the no-progress timeout, at most the idle timeout, counted
/// from the first refused attempt), not after the Gemini CLI's own ten
/// attempts (about 300 s), and the error says it was rate limited.
#[tokio::test]
async fn gemini_a_rate_limited_provider_is_stopped_within_the_idle_timeout() {
    let real = Real::new(
        CliProvider::Gemini,
        all(Step::Fail(Failure::rate_limited(1))),
    );
    let idle = Duration::from_secs(30);
    let started = Instant::now();
    let err = real
        .triage(|c| {
            c.idle_timeout = idle;
            // As the factory sets it: at most the idle timeout.
            c.no_progress_timeout = idle;
            c.total_timeout = Duration::from_secs(200);
        })
        .await
        .unwrap_err();
    let took = started.elapsed();
    let message = err.to_string();
    assert!(took < idle + Duration::from_secs(20), "{took:?}: {message}");
    assert!(
        message.starts_with(&format!(
            "gemini: 429 Too Many Requests from {}: rate limited; gemini said: ",
            real.0.server.url()
        )),
        "{message}"
    );
    assert!(
        message.contains("stopped after 30s of retries without progress"),
        "{message}"
    );
    // The CLI did retry (more than one attempt) before it was stopped.
    assert!(real.replies().len() >= 2, "{:?}", real.replies());
}
