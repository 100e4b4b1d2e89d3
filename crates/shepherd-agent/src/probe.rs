//! One real call to a configured provider, for `shepherd doctor --probe`:
//! did it answer, with a valid answer, and how long did it take?
//!
//! The probe is a triage of one synthetic review thread on a throwaway
//! directory, through the same provider code a run uses (sealed environment,
//! schema, validation, timeouts). Triage is a read-only role, and the
//! directory holds nothing but one file, so a probe changes nothing of the
//! user's.

use std::path::Path;
use std::time::{Duration, Instant};

use serde::Serialize;
use shepherd_core::config::AgentSettings;
use shepherd_core::model::{
    Author, AuthorKind, Comment, DiffSide, ForgeKind, ReviewThread, SubjectType,
};

use crate::agent::AgentContext;
use crate::factory::agent_for;
use crate::prompts::Prompts;
use crate::task::{PrContext, TaskItem, TriageTask};
use crate::usage::Usage;

/// The file the probe's thread is on.
const PROBE_FILE: &str = "README.md";

/// What one probe found.
#[derive(Debug, Clone, Serialize)]
pub struct Probe {
    /// The provider probed (`claude`, `command`, ...).
    pub provider: String,
    /// The model asked for, or `None` for the provider's default.
    pub model: Option<String>,
    /// Whether the provider gave a valid answer.
    pub answered: bool,
    /// Wall time of the call, retries included.
    #[serde(rename = "elapsed_ms", serialize_with = "millis")]
    pub elapsed: Duration,
    /// Why it did not answer: the provider's own error, as a run would
    /// report it.
    pub error: Option<String>,
    /// What the call consumed, where the provider reports it.
    pub usage: Usage,
}

fn millis<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Probe the provider of `settings` with one triage call, giving it at most
/// `timeout` (or the role's own timeout when that is shorter). `dir` must be
/// an empty directory the probe may write into; transcripts go to
/// `dir/transcripts`.
pub async fn probe(settings: &AgentSettings, timeout: Duration, dir: &Path) -> Probe {
    let mut settings = settings.clone();
    settings.timeout = settings.timeout.min(timeout);
    if let Some(idle) = settings.idle_timeout {
        settings.idle_timeout = Some(idle.min(timeout));
    }
    let mut result = Probe {
        provider: settings.provider.as_str().to_owned(),
        model: settings.model.clone(),
        answered: false,
        elapsed: Duration::ZERO,
        error: None,
        usage: Usage::default(),
    };
    let worktree = dir.join("worktree");
    let transcripts = dir.join("transcripts");
    let prepared = std::fs::create_dir_all(&worktree)
        .and_then(|()| std::fs::create_dir_all(&transcripts))
        .and_then(|()| {
            std::fs::write(
                worktree.join(PROBE_FILE),
                "# Probe\n\nA file for `shepherd doctor --probe` to read.\n",
            )
        });
    if let Err(err) = prepared {
        result.error = Some(format!("cannot prepare {}: {err}", dir.display()));
        return result;
    }
    let agent = match agent_for(&settings, Prompts::builtin()) {
        Ok(agent) => agent,
        Err(err) => {
            result.error = Some(err.to_string());
            return result;
        }
    };
    let task = TriageTask {
        pr: probe_pr(),
        worktree,
        items: vec![TaskItem::from_thread(&probe_thread(), "shepherd")],
    };
    let ctx = AgentContext::new(&transcripts, "probe");
    let started = Instant::now();
    let answer = agent.triage(&task, &ctx).await;
    result.elapsed = started.elapsed();
    result.usage = ctx.usage.total();
    match answer {
        Ok(_) => result.answered = true,
        Err(err) => result.error = Some(err.to_string()),
    }
    result
}

fn probe_pr() -> PrContext {
    PrContext {
        forge: ForgeKind::GitHub,
        number: 1,
        title: "Probe from shepherd doctor".into(),
        url: "https://example.invalid/probe/pull/1".into(),
        head_sha: "0000000000000000000000000000000000000000".into(),
        base_ref: "main".into(),
    }
}

fn probe_thread() -> ReviewThread {
    ReviewThread {
        id: "PROBE_1".into(),
        is_resolved: false,
        is_outdated: false,
        path: PROBE_FILE.into(),
        line: Some(1),
        start_line: None,
        original_line: Some(1),
        original_start_line: None,
        diff_side: DiffSide::Right,
        subject_type: SubjectType::Line,
        viewer_can_reply: true,
        viewer_can_resolve: true,
        comments: vec![Comment {
            id: "PROBE_C1".into(),
            database_id: None,
            author: Some(Author {
                login: "probe".into(),
                kind: AuthorKind::User,
            }),
            body: "This is a connectivity probe, not a real review comment: \
                   nothing needs changing. Answer with the decision that fits."
                .into(),
            url: String::new(),
            created_at: "2026-01-01T00:00:00Z".into(),
            diff_hunk: Some("@@ -0,0 +1,3 @@\n+# Probe".into()),
            review_state: None,
            review_submitted_at: None,
        }],
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;
    use shepherd_core::config::{AgentConfig, AgentRole, CommandSpec, Provider};

    fn settings(provider: Provider, command: Option<&str>) -> AgentSettings {
        let config = AgentConfig {
            provider,
            command: command.map(|c| CommandSpec::Shell(c.into())),
            ..AgentConfig::default()
        };
        config.for_role(AgentRole::Triage)
    }

    #[tokio::test]
    async fn the_builtin_answers_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let p = probe(
            &settings(Provider::Builtin, None),
            Duration::from_secs(5),
            dir.path(),
        )
        .await;
        assert!(p.answered, "{p:?}");
        assert_eq!(p.provider, "builtin");
        assert!(p.error.is_none());
    }

    #[tokio::test]
    async fn a_command_that_fails_is_reported_with_its_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = probe(
            &settings(
                Provider::Command,
                Some("sh -c 'echo no key for the model >&2; exit 3'"),
            ),
            Duration::from_secs(20),
            dir.path(),
        )
        .await;
        assert!(!p.answered);
        let error = p.error.unwrap();
        assert!(error.contains("no key for the model"), "{error}");
    }

    #[tokio::test]
    async fn a_hanging_provider_is_stopped_by_the_probe_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let p = probe(
            &settings(Provider::Command, Some("sleep 60")),
            Duration::from_secs(1),
            dir.path(),
        )
        .await;
        assert!(!p.answered);
        assert!(p.elapsed < Duration::from_secs(30), "{:?}", p.elapsed);
        assert!(p.error.unwrap().contains("timed out"));
    }
}
