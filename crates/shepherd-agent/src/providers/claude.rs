//! Claude Code: `claude -p`, headless.
//!
//! The prompt goes on stdin; `--output-format json` prints one result object
//! (`result` text, `is_error`, `usage`, `total_cost_usd`, and with
//! `--json-schema` the validated `structured_output`). Tools are limited per
//! role with `--allowedTools`/`--disallowedTools`; in `-p` mode a tool that
//! is not allowed is denied rather than asked for.

use serde_json::Value;

use crate::providers::cli::{sum_u64, Invocation, Parsed, Request};
use crate::providers::extract;

/// Read-only tools: reading files and read-only git commands.
pub(crate) const READ_TOOLS: &str = "Read,Grep,Glob,LS,Bash(git diff:*),Bash(git log:*),\
Bash(git show:*),Bash(git status:*),Bash(git blame:*)";

/// Writing roles also edit files.
pub(crate) const WRITE_TOOLS: &str = "Read,Grep,Glob,LS,Edit,MultiEdit,Write,Bash(git diff:*),\
Bash(git log:*),Bash(git show:*),Bash(git status:*),Bash(git blame:*)";

/// Denied to every role: git state changes and the network.
pub(crate) const DENIED: &str = "Bash(git push:*),Bash(git commit:*),Bash(git reset:*),\
Bash(git checkout:*),Bash(git switch:*),Bash(git rebase:*),Bash(git merge:*),Bash(git stash:*),\
Bash(git tag:*),Bash(git remote:*),WebFetch,WebSearch";

/// Also denied to read-only roles.
pub(crate) const DENIED_READ_ONLY: &str = "Edit,MultiEdit,Write,NotebookEdit";

pub(crate) fn invocation(req: &Request<'_>) -> Invocation {
    let writes = req.role.writes();
    let mut args: Vec<String> = ["-p", "--output-format", "json"]
        .map(str::to_owned)
        .to_vec();
    if let Some(model) = req.model {
        args.extend(["--model".to_owned(), model.to_owned()]);
    }
    args.extend([
        "--permission-mode".to_owned(),
        if writes { "acceptEdits" } else { "default" }.to_owned(),
    ]);
    args.extend(req.extra_args.iter().cloned());
    let denied = if writes {
        DENIED.to_owned()
    } else {
        format!("{DENIED},{DENIED_READ_ONLY}")
    };
    // The tool lists take several values: they come last, after every other flag.
    args.extend([
        "--json-schema".to_owned(),
        req.schema.to_string(),
        "--allowedTools".to_owned(),
        if writes { WRITE_TOOLS } else { READ_TOOLS }.to_owned(),
        "--disallowedTools".to_owned(),
        denied,
    ]);
    Invocation::new(args, req.prompt.as_bytes().to_vec())
}

/// The result object: the whole output, else its last line that is one
/// (anything printed before it is ignored).
fn result_object(stdout: &str) -> Option<Value> {
    let whole = serde_json::from_str::<Value>(stdout.trim()).ok();
    whole.filter(Value::is_object).or_else(|| {
        stdout
            .lines()
            .rev()
            .filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
            .find(|v| v.get("type").and_then(Value::as_str) == Some("result"))
    })
}

pub(crate) fn parse(stdout: &str) -> Result<Parsed, String> {
    let v = result_object(stdout).ok_or("claude printed no JSON result object")?;
    let result = v.get("result").and_then(Value::as_str);
    if v.get("is_error").and_then(Value::as_bool) == Some(true) {
        let subtype = v.get("subtype").and_then(Value::as_str).unwrap_or("error");
        return Err(format!(
            "claude reported an error ({subtype}): {}",
            crate::driver::tail(result.unwrap_or(""), 300)
        ));
    }
    let text = match v.get("structured_output").filter(|s| s.is_object()) {
        Some(structured) => structured.to_string(),
        None => extract::json_object(result.ok_or("claude's result object has no result text")?),
    };
    let usage = v.get("usage");
    let field = |name: &str| usage.and_then(|u| u.get(name));
    Ok(Parsed {
        text,
        input_tokens: sum_u64([
            field("input_tokens"),
            field("cache_creation_input_tokens"),
            field("cache_read_input_tokens"),
        ]),
        output_tokens: sum_u64([field("output_tokens")]),
        cost_usd: v
            .get("total_cost_usd")
            .or_else(|| v.get("cost_usd"))
            .and_then(Value::as_f64),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;
    use crate::task::Role;
    use serde_json::json;

    fn args(role: Role) -> Vec<String> {
        let schema = json!({"type": "object"});
        let extra = vec!["--verbose".to_owned()];
        invocation(&Request {
            role,
            worktree: std::path::Path::new("/wt"),
            prompt: "PROMPT",
            schema: &schema,
            model: Some("sonnet"),
            extra_args: &extra,
        })
        .args
    }

    fn after<'a>(args: &'a [String], flag: &str) -> &'a str {
        let i = args.iter().position(|a| a == flag).unwrap();
        &args[i + 1]
    }

    #[test]
    fn read_only_roles_cannot_edit() {
        for role in [Role::Triage, Role::FixValidation, Role::Review] {
            let a = args(role);
            assert_eq!(&a[..3], ["-p", "--output-format", "json"]);
            assert_eq!(after(&a, "--permission-mode"), "default");
            assert!(!after(&a, "--allowedTools").contains("Edit"));
            assert!(after(&a, "--disallowedTools").contains("Write"));
            assert!(after(&a, "--disallowedTools").contains("Bash(git push:*)"));
            assert_eq!(after(&a, "--model"), "sonnet");
            assert_eq!(after(&a, "--json-schema"), r#"{"type":"object"}"#);
            assert!(!a
                .iter()
                .any(|x| x.contains("dangerously") || x == "bypassPermissions"));
        }
    }

    #[test]
    fn writing_roles_edit_but_never_push() {
        for role in [Role::Fix, Role::ClusterFix, Role::ApplyReview] {
            let a = args(role);
            assert_eq!(after(&a, "--permission-mode"), "acceptEdits");
            assert!(after(&a, "--allowedTools").contains("Edit"));
            let denied = after(&a, "--disallowedTools");
            assert!(denied.contains("Bash(git push:*)") && denied.contains("Bash(git commit:*)"));
            assert!(!denied.contains("Edit"));
            // Extra arguments come before the multi-valued tool lists.
            let extra = a.iter().position(|x| x == "--verbose").unwrap();
            assert!(extra < a.iter().position(|x| x == "--allowedTools").unwrap());
            assert_eq!(a.last().unwrap(), denied);
        }
    }

    #[test]
    fn reads_structured_output_usage_and_cost() {
        let out = json!({
            "type": "result", "subtype": "success", "is_error": false,
            "result": "Done.", "total_cost_usd": 0.25,
            "usage": {"input_tokens": 10, "cache_read_input_tokens": 100, "output_tokens": 7},
            "structured_output": {"items": []}
        });
        let p = parse(&format!("warning: something\n{out}\n")).unwrap();
        assert_eq!(p.text, r#"{"items":[]}"#);
        assert_eq!((p.input_tokens, p.output_tokens), (Some(110), Some(7)));
        assert_eq!(p.cost_usd, Some(0.25));
    }

    #[test]
    fn falls_back_to_the_result_text_and_reports_errors() {
        let out = json!({"type": "result", "is_error": false,
            "result": "Here:\n```json\n{\"items\": []}\n```"});
        let p = parse(&out.to_string()).unwrap();
        assert_eq!(p.text, r#"{"items": []}"#);
        assert_eq!((p.input_tokens, p.cost_usd), (None, None));
        let err = json!({"type": "result", "is_error": true, "subtype": "error_max_turns", "result": "out of turns"});
        let e = parse(&err.to_string()).unwrap_err();
        assert!(
            e.contains("error_max_turns") && e.contains("out of turns"),
            "{e}"
        );
        assert!(parse("Not logged in").is_err());
    }
}
