//! GitHub Copilot CLI: `copilot -p PROMPT`, programmatic mode.
//!
//! The prompt is an argument (the CLI is not documented to read it from
//! stdin), so it is limited to [`MAX_PROMPT_BYTES`]. `-s` prints only the
//! agent's answer, parsed from the text. Tools are allowed and denied per
//! role with `--allow-tool`/`--deny-tool`; `--allow-all-tools` is never
//! used. Copilot authenticates with its stored login under `HOME`: no token
//! variable is passed (they are forge credentials). It reports no usage.

use crate::agent::AgentError;
use crate::providers::cli::{Invocation, Parsed, Request};
use crate::providers::extract;

/// The longest prompt passed as one argument (Linux refuses a single
/// argument over 128 KiB).
pub const MAX_PROMPT_BYTES: usize = 120_000;

/// Allowed to every role: read-only git commands (reading files is allowed
/// by default).
pub(crate) const ALLOWED: &str = "shell(git diff),shell(git log),shell(git show),shell(git status)";

/// Denied to every role: git state changes and fetching URLs.
pub(crate) const DENIED: &str = "shell(git push),shell(git commit),shell(git reset),\
shell(git checkout),shell(git switch),shell(git rebase),shell(git merge),shell(git stash),\
shell(git tag),shell(git remote),url";

pub(crate) fn invocation(req: &Request<'_>) -> Result<Invocation, AgentError> {
    if req.prompt.len() > MAX_PROMPT_BYTES {
        return Err(AgentError::InvalidTask {
            role: req.role,
            reason: format!(
                "the prompt ({} bytes) is too long for copilot's command line (at most {MAX_PROMPT_BYTES})",
                req.prompt.len()
            ),
        });
    }
    let mut args: Vec<String> = vec![
        "-p".into(),
        req.prompt.to_owned(),
        "-s".into(),
        "--no-ask-user".into(),
    ];
    if let Some(model) = req.model {
        args.extend(["--model".to_owned(), model.to_owned()]);
    }
    args.extend(req.extra_args.iter().cloned());
    let (allowed, denied) = if req.role.writes() {
        (format!("write,{ALLOWED}"), DENIED.to_owned())
    } else {
        (ALLOWED.to_owned(), format!("write,{DENIED}"))
    };
    args.extend([
        "--allow-tool".to_owned(),
        allowed,
        "--deny-tool".to_owned(),
        denied,
    ]);
    Ok(Invocation::new(args, Vec::new()))
}

pub(crate) fn parse(stdout: &str) -> Result<Parsed, String> {
    if stdout.trim().is_empty() {
        return Err("copilot printed no answer".to_owned());
    }
    Ok(Parsed {
        text: extract::json_object(stdout),
        ..Parsed::default()
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;
    use crate::task::Role;

    fn args(role: Role, prompt: &str) -> Result<Vec<String>, AgentError> {
        invocation(&Request {
            role,
            worktree: std::path::Path::new("/wt"),
            prompt,
            schema: &serde_json::json!({}),
            model: Some("gpt-5"),
            extra_args: &[],
        })
        .map(|i| i.args)
    }

    #[test]
    fn tools_follow_the_role() {
        let read = args(Role::Triage, "P").unwrap();
        assert_eq!(&read[..4], ["-p", "P", "-s", "--no-ask-user"]);
        let denied = &read[read.iter().position(|a| a == "--deny-tool").unwrap() + 1];
        assert!(denied.starts_with("write,") && denied.contains("shell(git push)"));
        let fix = args(Role::Fix, "P").unwrap();
        let allowed = &fix[fix.iter().position(|a| a == "--allow-tool").unwrap() + 1];
        assert!(allowed.starts_with("write,"));
        let denied = &fix[fix.iter().position(|a| a == "--deny-tool").unwrap() + 1];
        assert!(!denied.contains("write") && denied.contains("shell(git push)"));
        for a in [&read, &fix] {
            assert!(!a
                .iter()
                .any(|x| x.starts_with("--allow-all") || x == "--yolo"));
        }
    }

    #[test]
    fn long_prompts_are_refused() {
        let long = "x".repeat(MAX_PROMPT_BYTES + 1);
        assert!(matches!(
            args(Role::Triage, &long),
            Err(AgentError::InvalidTask { .. })
        ));
    }

    #[test]
    fn the_answer_is_found_in_the_text() {
        let p = parse("I looked at the code.\n\n{\"items\":[]}\n").unwrap();
        assert_eq!(p.text, "{\"items\":[]}");
        assert_eq!(p.input_tokens, None);
        assert!(parse("  \n").is_err());
    }
}
