//! Gemini CLI: `gemini -p`, headless.
//!
//! The prompt goes on stdin; `-p` adds a one-line instruction after it (the
//! CLI appends `-p` to its stdin input). `--output-format json` prints one
//! object: `response` (the answer's text), `stats` (per-model token counts)
//! and `error` on failure (also on a non-zero exit). Read-only roles run in
//! the `default` approval mode (in headless mode, tools that need approval
//! are not offered: no edits, no shell); writing roles in `auto_edit` (file
//! edits approved, shell commands not). `--yolo` is never used. It reports
//! no cost.
//!
//! Shepherd's worktrees are new folders the CLI has never seen, and the CLI
//! refuses to run headless in an untrusted folder (exit 55): `--skip-trust`
//! trusts it for the call. A trusted folder's own `.gemini/` settings would
//! then apply, so every call also gets a system settings file of Shepherd's
//! ([`SYSTEM_SETTINGS`], through `GEMINI_CLI_SYSTEM_SETTINGS_PATH`; system
//! settings override the user's and the workspace's): no MCP servers,
//! extensions, skills, hooks or tool discovery commands, no shell tool, no
//! YOLO mode, no `.env` of the worktree, no telemetry, no auto-update.
//!
//! **The CLI may skip that file.** Gemini CLI 0.61 reads a system settings
//! file only when the file and every folder above it belong to root and no
//! group or other user may write them (`isFileAndDirectorySecureSync` in
//! its settings loader; it prints `Security Warning: Skipping system
//! settings file …` otherwise). For a user other than root that never
//! holds, and under `/tmp` it holds for nobody. So the settings are a
//! second line only: the first is that a worktree carrying configuration
//! the trusted CLI would load from the PR's head is refused
//! ([`workspace_config`]): `.gemini/settings.json` (MCP servers, hooks,
//! tool discovery commands), `.gemini/.env` (read whatever the settings
//! say; also in a folder above), `.gemini/policies` (policy rules that
//! allow tools), `.gemini/skills`, `.gemini/agents`, `.gemini/extensions`
//! and `.agents/skills`. A skipped settings file is logged.

use std::path::Path;

use serde_json::{json, Value};

use crate::agent::AgentError;
use crate::exec::{LineSignal, OutputStream};
use crate::providers::extract;
use crate::providers::invocation::{sum_u64, CliFailure, Invocation, Parsed, Request};
use crate::providers::spec::{CliSpec, EnvNames};
use crate::providers::versions::Support;

/// The `-p` text, appended by the CLI to the prompt read from stdin.
pub(crate) const INSTRUCTION: &str =
    "Follow the instructions above and answer with the JSON object they describe, and nothing else.";

/// The variable naming the system settings file, which overrides user and
/// workspace settings.
pub(crate) const SYSTEM_SETTINGS_VAR: &str = "GEMINI_CLI_SYSTEM_SETTINGS_PATH";

/// Shepherd's system settings for every call (see the module docs).
pub(crate) fn system_settings() -> Value {
    json!({
        "admin": {
            "secureModeEnabled": true,
            "extensions": {"enabled": false},
            "mcp": {"enabled": false},
            "skills": {"enabled": false}
        },
        "hooksConfig": {"enabled": false},
        "security": {"disableYoloMode": true},
        "tools": {
            "exclude": ["run_shell_command"],
            "discoveryCommand": "",
            "callCommand": ""
        },
        "advanced": {"ignoreLocalEnv": true},
        "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
        "privacy": {"usageStatisticsEnabled": false},
        "telemetry": {"enabled": false}
    })
}

/// What the CLI loads from a trusted workspace folder (its `Storage`:
/// `getWorkspaceSettingsPath`, `getWorkspacePoliciesDir`,
/// `getProjectSkillsDir`, `getProjectAgentsDir`,
/// `getProjectAgentSkillsDir`), relative to the worktree.
const WORKSPACE_CONFIG: [&str; 6] = [
    ".gemini/settings.json",
    ".gemini/policies",
    ".gemini/skills",
    ".gemini/agents",
    ".gemini/extensions",
    ".agents/skills",
];

/// Configuration the trusted CLI would load from the worktree (the PR's
/// head, which anyone may have written): one of [`WORKSPACE_CONFIG`], or a
/// `.gemini/.env` in the worktree or a folder above it (the CLI looks for
/// one upward, whatever the settings say).
pub(crate) fn workspace_config(worktree: &Path) -> Option<std::path::PathBuf> {
    WORKSPACE_CONFIG
        .iter()
        .map(|rel| worktree.join(rel))
        .find(|p| p.exists())
        .or_else(|| {
            worktree
                .ancestors()
                .map(|dir| dir.join(".gemini").join(".env"))
                .find(|p| p.is_file())
        })
}

/// The CLI's line saying it skipped Shepherd's system settings file.
const SKIPPED_SETTINGS: &str = "Skipping system settings file";

/// Whether gemini's stderr says it did not apply Shepherd's system
/// settings (see the module docs); the run's log says so.
pub(crate) fn skipped_system_settings(stderr: &str) -> Option<&str> {
    stderr.lines().find(|l| l.contains(SKIPPED_SETTINGS))
}

pub(crate) fn invocation(req: &Request<'_>) -> Result<Invocation, AgentError> {
    if let Some(config) = workspace_config(req.worktree) {
        return Err(AgentError::InvalidTask {
            role: req.role,
            reason: format!(
                "{} exists: gemini would load it in the trusted worktree (settings, policies, \
                 skills or an .env can give the CLI tools, commands or another endpoint), and \
                 its own safety settings may be skipped; remove it or use another provider",
                config.display()
            ),
        });
    }
    let scratch = tempfile::Builder::new()
        .prefix("shepherd-gemini-")
        .tempdir()
        .map_err(|e| AgentError::io("creating", &std::env::temp_dir(), e))?;
    let settings = scratch.path().join("system-settings.json");
    std::fs::write(&settings, system_settings().to_string())
        .map_err(|e| AgentError::io("writing", &settings, e))?;
    let mode = if req.role.writes() {
        "auto_edit"
    } else {
        "default"
    };
    let mut args: Vec<String> = vec![
        "--output-format".into(),
        "json".into(),
        "--approval-mode".into(),
        mode.into(),
        "--skip-trust".into(),
    ];
    if let Some(model) = req.model {
        args.extend(["--model".to_owned(), model.to_owned()]);
    }
    args.extend(req.extra_args.iter().cloned());
    args.extend(["-p".to_owned(), INSTRUCTION.to_owned()]);
    let mut invocation = Invocation::new(args, req.prompt.as_bytes().to_vec());
    invocation.env = vec![(
        SYSTEM_SETTINGS_VAR.to_owned(),
        settings.display().to_string(),
    )];
    invocation.scratch = Some(scratch);
    Ok(invocation)
}

/// The `error` of the JSON object Gemini CLI prints: on stdout, or (after
/// a failed call) pretty-printed at the end of stderr.
fn error_object(text: &str) -> Option<Value> {
    let whole = serde_json::from_str::<Value>(text.trim()).ok();
    let at_end = || {
        text.rmatch_indices("\n{")
            .map(|(i, _)| i + 1)
            .chain(text.starts_with('{').then_some(0))
            .find_map(|i| serde_json::from_str::<Value>(text[i..].trim()).ok())
    };
    whole
        .or_else(at_end)?
        .get("error")
        .filter(|e| !e.is_null())
        .cloned()
}

/// The message of an error object; a message that is itself the API's
/// JSON error body is unwrapped to its own message.
fn message_of(error: &Value) -> String {
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_else(|| error.to_string());
    let api = serde_json::from_str::<Value>(&message).ok();
    match api.as_ref().and_then(|v| v.get("error")) {
        Some(inner) => {
            let text = inner.get("message").and_then(Value::as_str).unwrap_or("");
            match inner.get("code").and_then(Value::as_u64) {
                Some(code) => format!("{text} (HTTP {code})"),
                None => text.to_owned(),
            }
        }
        None => message,
    }
}

/// The CLI's own error: the JSON object it prints (on stdout, or at the
/// end of stderr after a failed call), else the last line of stderr that
/// says `Error`.
pub(crate) fn error_message(stdout: &str, stderr: &str) -> Option<String> {
    error_object(stdout)
        .or_else(|| error_object(stderr))
        .map(|e| message_of(&e))
        .or_else(|| {
            stderr
                .lines()
                .rev()
                .find(|l| l.contains("Error") || l.contains("error"))
                .map(str::to_owned)
        })
        .map(|m| crate::driver::tail(&m, 300))
}

/// Gemini CLI's own error after a failed call ([`error_message`]), with the
/// HTTP status it names.
pub(crate) fn own_error(stdout: &str, stderr: &str) -> Option<CliFailure> {
    error_message(stdout, stderr).map(|m| CliFailure::from_message(m, stdout, stderr))
}

pub(crate) fn parse(stdout: &str) -> Result<Parsed, String> {
    let v: Value = serde_json::from_str(stdout.trim())
        .ok()
        .filter(Value::is_object)
        .ok_or("gemini printed no JSON object")?;
    if v.get("error").is_some_and(|e| !e.is_null()) {
        let message = error_message(stdout, "").unwrap_or_default();
        return Err(format!("gemini reported an error: {message}"));
    }
    let response = v
        .get("response")
        .and_then(Value::as_str)
        .ok_or("gemini's output has no response text")?;
    let models: Vec<&Value> = v
        .get("stats")
        .and_then(|s| s.get("models"))
        .and_then(Value::as_object)
        .map(|m| m.values().filter_map(|model| model.get("tokens")).collect())
        .unwrap_or_default();
    Ok(Parsed {
        text: extract::json_object(response),
        input_tokens: sum_u64(models.iter().map(|t| t.get("prompt"))),
        output_tokens: sum_u64(
            models
                .iter()
                .flat_map(|t| [t.get("candidates"), t.get("thoughts")]),
        ),
        cost_usd: None,
    })
}

/// Gemini CLI's stderr while it runs. Its retry loop (`retryWithBackoff`,
/// gemini-cli's `packages/core/src/utils/retry.ts`) prints `Attempt N failed
/// with status S. Retrying with backoff...` before each new attempt of a
/// request (seen with 0.61.0 on a 429: ten attempts, 5 s and more apart). The
/// first failed attempt of a request means the requests before it were
/// answered: progress. Each later one means the request is still refused:
/// the no-progress clock runs from the first, so a provider that keeps
/// rate-limiting is stopped after the no-progress timeout (at most the idle
/// timeout) rather than after the CLI's own ten attempts. The CLI prints
/// nothing else while it works: no other line says anything.
pub(crate) fn classify(stream: OutputStream, line: &str) -> LineSignal {
    if stream != OutputStream::Stderr {
        return LineSignal::Neutral;
    }
    if let Some(line) = skipped_system_settings(line) {
        // Said, not fatal: the worktree was checked for configuration the
        // CLI would load instead (see the module docs).
        tracing::warn!(
            cli = %line,
            "gemini skipped Shepherd's system settings file (it reads one only under \
             root-owned folders nobody else can write); the worktree carries no Gemini \
             configuration, and the approval mode keeps a read-only role from writing"
        );
        return LineSignal::Neutral;
    }
    let attempt = line
        .strip_prefix("Attempt ")
        .and_then(|rest| rest.split_once(" failed with status "))
        .and_then(|(n, _)| n.parse::<u32>().ok());
    match attempt {
        Some(1) => LineSignal::Progress,
        Some(_) => LineSignal::Retry,
        None => LineSignal::Neutral,
    }
}

/// Gemini CLI, described ([`CliSpec`]).
pub(crate) struct Spec;

impl CliSpec for Spec {
    fn name(&self) -> &'static str {
        "gemini"
    }

    fn support(&self) -> Support {
        Support {
            package: "@google/gemini-cli",
            tested: (0, 61, 0),
        }
    }

    fn env_names(&self, is_set: &dyn Fn(&str) -> bool) -> EnvNames {
        let pass = vec![
            "GOOGLE_CLOUD_PROJECT",
            "GOOGLE_CLOUD_LOCATION",
            "GOOGLE_GENAI_USE_VERTEXAI",
            // A self-hosted or proxy endpoint (the Gemini API's, Vertex AI's).
            "GOOGLE_GEMINI_BASE_URL",
            "GOOGLE_VERTEX_BASE_URL",
            "GEMINI_CLI_HOME",
        ];
        let mut credentials = vec!["GEMINI_API_KEY", "GOOGLE_API_KEY"];
        if is_set("GOOGLE_GENAI_USE_VERTEXAI") {
            credentials.push("GOOGLE_APPLICATION_CREDENTIALS");
        }
        (pass, credentials)
    }

    // Shepherd's system settings file turns telemetry and updates off.
    // Gemini CLI prints its JSON object only at the end; its retries show
    // on stderr.

    fn classifier(&self) -> Option<fn(OutputStream, &str) -> LineSignal> {
        Some(classify)
    }

    fn own_error(&self, stdout: &str, stderr: &str) -> Option<CliFailure> {
        own_error(stdout, stderr)
    }

    fn key_variable(&self) -> Option<&'static str> {
        Some("GEMINI_API_KEY")
    }

    fn base_url_variable(&self) -> Option<(&'static str, &'static str)> {
        Some((
            "GOOGLE_GEMINI_BASE_URL",
            "https://generativelanguage.googleapis.com",
        ))
    }

    fn invocation(&self, request: &Request<'_>) -> Result<Invocation, AgentError> {
        invocation(request)
    }

    fn parse(&self, stdout: &str, _answer_file: Option<&str>) -> Result<Parsed, String> {
        parse(stdout)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;

    #[test]
    fn a_retried_attempt_is_no_progress_and_a_first_one_is_progress() {
        let line = |n: u32| {
            format!("Attempt {n} failed with status 429. Retrying with backoff... _ApiError: {{}}")
        };
        assert_eq!(
            classify(OutputStream::Stderr, &line(1)),
            LineSignal::Progress
        );
        assert_eq!(classify(OutputStream::Stderr, &line(2)), LineSignal::Retry);
        assert_eq!(classify(OutputStream::Stderr, &line(9)), LineSignal::Retry);
        assert_eq!(
            classify(OutputStream::Stdout, &line(2)),
            LineSignal::Neutral
        );
        for other in [
            "Attempt to read",
            "Ripgrep is not available.",
            "    at throwErrorIfNotOK",
        ] {
            assert_eq!(classify(OutputStream::Stderr, other), LineSignal::Neutral);
        }
    }

    use crate::task::Role;
    use serde_json::json;

    #[test]
    fn approval_mode_follows_the_role() {
        for (role, mode) in [(Role::Review, "default"), (Role::ApplyReview, "auto_edit")] {
            let i = invocation(&Request {
                role,
                worktree: std::path::Path::new("/wt"),
                prompt: "PROMPT",
                schema: &json!({}),
                model: Some("gemini-2.5-pro"),
                extra_args: &[],
            })
            .unwrap();
            let a = &i.args;
            assert_eq!(
                a[a.iter().position(|x| x == "--approval-mode").unwrap() + 1],
                mode
            );
            assert!(a.iter().any(|x| x == "--skip-trust"));
            assert_eq!(&a[a.len() - 2..], ["-p", INSTRUCTION]);
            assert_eq!(i.stdin, b"PROMPT");
            assert!(!a.iter().any(|x| x == "--yolo" || x == "yolo"));
            // The system settings file exists while the call runs.
            let (name, path) = &i.env[0];
            assert_eq!(name, SYSTEM_SETTINGS_VAR);
            let settings: Value =
                serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
            assert_eq!(settings["admin"]["mcp"]["enabled"], false);
            assert_eq!(settings["tools"]["exclude"][0], "run_shell_command");
            assert!(i
                .scratch
                .as_ref()
                .unwrap()
                .path()
                .join("system-settings.json")
                .is_file());
        }
    }

    #[test]
    fn a_worktree_env_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".gemini")).unwrap();
        let req = |wt| Request {
            role: Role::Triage,
            worktree: wt,
            prompt: "P",
            schema: &Value::Null,
            model: None,
            extra_args: &[],
        };
        assert!(invocation(&req(dir.path())).is_ok());
        std::fs::write(dir.path().join(".gemini/.env"), "GOOGLE_GEMINI_BASE_URL=x").unwrap();
        let err = invocation(&req(dir.path())).err().unwrap();
        assert!(err.to_string().contains(".gemini/.env"), "{err}");
    }

    /// What a PR's head could give the trusted CLI is refused, file or
    /// folder; what Gemini Code Assist's reviews read is not.
    #[test]
    fn workspace_configuration_is_refused() {
        fn req(wt: &Path) -> Request<'_> {
            Request {
                role: Role::Fix,
                worktree: wt,
                prompt: "P",
                schema: &Value::Null,
                model: None,
                extra_args: &[],
            }
        }
        for rel in WORKSPACE_CONFIG {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            if rel.ends_with(".json") {
                std::fs::write(&path, r#"{"tools":{"discoveryCommand":"sh evil.sh"}}"#).unwrap();
            } else {
                std::fs::create_dir(&path).unwrap();
            }
            let err = invocation(&req(dir.path())).err().expect(rel);
            assert!(err.to_string().contains(rel), "{rel}: {err}");
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".gemini")).unwrap();
        std::fs::write(dir.path().join(".gemini/styleguide.md"), "Be kind.").unwrap();
        std::fs::write(dir.path().join(".gemini/config.yaml"), "have_fun: false").unwrap();
        assert!(invocation(&req(dir.path())).is_ok());
    }

    #[test]
    fn a_skipped_settings_file_is_seen() {
        let stderr = "Security Warning: Skipping system settings file '/tmp/shepherd-gemini-x/system-settings.json': Parent directory '/tmp' is insecure: Directory '/tmp' is writable by group or others (mode: 41777).\nLoaded cached credentials.";
        assert!(skipped_system_settings(stderr)
            .is_some_and(|l| l.contains("Parent directory '/tmp' is insecure")));
        assert_eq!(skipped_system_settings("Loaded cached credentials."), None);
    }

    #[test]
    fn the_cli_error_is_found_on_stdout_or_stderr() {
        let out = json!({"session_id": "s", "error": {"type": "Error", "message": "API key not valid", "code": 1}});
        assert_eq!(
            error_message(&out.to_string(), "noise").as_deref(),
            Some("API key not valid")
        );
        assert_eq!(
            error_message("", "starting\nError when talking to Gemini API: 401\nbye").as_deref(),
            Some("Error when talking to Gemini API: 401")
        );
        assert_eq!(error_message("", "all fine"), None);
        // After a failed call: pretty-printed at the end of stderr, the
        // message being the API's own error body.
        let stderr = "Error when talking to Gemini API: _ApiError: boom\n    at x (y.js:1)\n{\n  \"session_id\": \"s\",\n  \"error\": {\n    \"type\": \"Error\",\n    \"message\": \"{\\\"error\\\":{\\\"code\\\":401,\\\"message\\\":\\\"invalid api key\\\",\\\"status\\\":\\\"UNAUTHENTICATED\\\"}}\",\n    \"code\": 1\n  }\n}\n";
        assert_eq!(
            error_message("", stderr).as_deref(),
            Some("invalid api key (HTTP 401)")
        );
    }

    #[test]
    fn reads_response_and_token_stats() {
        let out = json!({
            "response": "```json\n{\"items\":[]}\n```",
            "stats": {"models": {
                "gemini-2.5-pro": {"tokens": {"prompt": 100, "candidates": 10, "thoughts": 5}},
                "gemini-2.5-flash": {"tokens": {"prompt": 7, "candidates": 1}}
            }}
        });
        let p = parse(&out.to_string()).unwrap();
        assert_eq!(p.text, "{\"items\":[]}");
        assert_eq!((p.input_tokens, p.output_tokens), (Some(107), Some(16)));
        let err = json!({"response": null, "error": {"type": "ApiError", "message": "quota"}});
        assert!(parse(&err.to_string()).unwrap_err().contains("quota"));
        assert!(parse("Loaded cached credentials.").is_err());
    }
}
