//! A scripted agent for tests, spoken to through the `command` provider.
//!
//! Usage: `fake-agent --script FILE` (or `FAKE_AGENT_SCRIPT=FILE`). It reads
//! one `CommandRequest` from stdin, picks the steps for the request's role
//! and attempt from the script, and runs them in order. The script is JSON:
//!
//! ```json
//! {
//!   "triage": { "attempts": [ [ {"stdout": "garbage"} ], [ {"triage": {"default": {"decision": "needs-human"}}} ] ] },
//!   "fix": { "attempts": [ [ {"fix": {"edits": [{"path": "src/a.rs", "content": "..."}]}} ] ] }
//! }
//! ```
//!
//! Attempt `n` runs `attempts[n-1]`, or the last entry when there are fewer.
//! Steps (each an object with one key):
//!
//! - `{"stdout": TEXT}`, `{"stderr": TEXT}`: print TEXT as is.
//! - `{"answer": JSON}`: print JSON on stdout; `{"answer_file": JSON}`: write
//!   it to `$SHEPHERD_ANSWER_FILE`.
//! - `{"triage": {...}}`: answer the triage task: `default` and per-id `items`
//!   entries (`decision`, `theme`, `reasoning`, `reply_hint`,
//!   `pr_changed_evidence`), then `drop` ids, add `extra` ids, repeat
//!   `duplicate` ids.
//! - `{"fix": {...}}`: apply `edits` (`{"path", "content"}` replaces a file,
//!   `{"path", "append"}` appends) in the working directory, then answer with
//!   `default` and per-id `items` entries (`status`, `summary`, `reply`,
//!   `files`), an `assessment` (default: coincidental for a cluster task,
//!   null otherwise), `drop`, `extra`.
//! - `{"sleep_ms": N}`; `{"tick": {"count": N, "interval_ms": M}}` prints a dot
//!   to stderr every M ms.
//! - `{"print_env": "stdout"|"stderr"}` prints `NAME=VALUE` lines;
//!   `{"write_env": PATH}` writes the environment as a JSON object.
//! - `{"save_request": PATH}` writes the request as received;
//!   `{"write_pid": PATH}` writes this process's id.
//! - `{"spawn": {"program", "args", "pid_file"}}` starts a child that keeps
//!   the output pipes and is not waited for (it would outlive this process);
//!   `{"run": {"program", "args"}}` runs a command in the working directory
//!   and waits for it (its output to stderr; a failure fails the agent): what
//!   a prompt-injected agent's `git commit -qam ...` looks like.
//! - `{"exit": CODE}`.
//! - `{"fix_validation": {...}}`: answer a fix-validation task with `default`
//!   and per-id `items` entries (`verdict`, `reasons`), then `drop`, `extra`.
//! - `{"review": {"findings": [...], "summary": TEXT}}`: answer a review;
//!   each finding needs an `id`, the other fields default (`LOW`, 50, no
//!   path, no reproduction).
//! - `{"apply_review": {...}}`: apply `edits` like `fix`, then answer with
//!   `default` and per-finding-id `items` entries (`status`, `summary`,
//!   `files`), then `drop`, `extra`.
//!
//! # CLI mode
//!
//! Run under the name of an agent CLI (`claude`, `codex`, `copilot`,
//! `gemini`, `opencode`: a symlink to this binary on the agent's `PATH`), it
//! plays that CLI instead. It reads the script named by `FAKE_CLI_SCRIPT`:
//!
//! ```json
//! {
//!   "require": ["-p"], "require_pairs": [["--output-format", "json"]],
//!   "forbid": ["--yolo"], "forbid_containing": ["dangerously"],
//!   "record_dir": "/tmp/x", "answers": [ {"items": []} ],
//!   "style": "structured", "usage": {"input": 10, "output": 5, "cost": 0.5},
//!   "edits": [], "stderr": "", "exit": 0
//! }
//! ```
//!
//! It fails (exit 64, the reason on stderr) when an argument in `require`
//! is missing, a `require_pairs` flag is not followed by its value, or an
//! argument is in `forbid` or contains a `forbid_containing` text. It
//! records each call (`argv`, `env`, `stdin`, `cwd`) as
//! `record_dir/call-N.json`, applies `edits`, and answers call N with
//! `answers[N-1]` (or the last one) in that CLI's own output format: a JSON
//! string is printed as raw text instead of an answer object. `style`
//! (claude only) is `structured` (the answer in `structured_output`, when
//! `--json-schema` was given) or `text` (in `result`, in a code fence).

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};
use shepherd_agent::{ApplyReviewTask, CommandRequest, FixTask, FixValidationTask, TriageTask};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RoleScript {
    attempts: Vec<Vec<Step>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
enum Step {
    Stdout(String),
    Stderr(String),
    Answer(Value),
    AnswerFile(Value),
    Triage(TriageScript),
    Fix(FixScript),
    FixValidation(ItemsScript),
    Review(ReviewScript),
    ApplyReview(FixScript),
    SleepMs(u64),
    Tick {
        count: u32,
        interval_ms: u64,
    },
    PrintEnv(String),
    WriteEnv(PathBuf),
    SaveRequest(PathBuf),
    WritePid(PathBuf),
    Spawn {
        program: String,
        #[serde(default)]
        args: Vec<String>,
        pid_file: Option<PathBuf>,
    },
    Run {
        program: String,
        #[serde(default)]
        args: Vec<String>,
    },
    Exit(u8),
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct TriageScript {
    #[serde(default)]
    default: Map,
    #[serde(default)]
    items: BTreeMap<String, Map>,
    #[serde(default)]
    drop: Vec<String>,
    #[serde(default)]
    extra: Vec<String>,
    #[serde(default)]
    duplicate: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Edit {
    path: PathBuf,
    content: Option<String>,
    append: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FixScript {
    #[serde(default)]
    edits: Vec<Edit>,
    #[serde(default)]
    default: Map,
    #[serde(default)]
    items: BTreeMap<String, Map>,
    /// `null` in the script means "no assessment"; absent means the default.
    #[serde(default, deserialize_with = "some")]
    assessment: Option<Value>,
    #[serde(default)]
    drop: Vec<String>,
    #[serde(default)]
    extra: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ItemsScript {
    #[serde(default)]
    default: Map,
    #[serde(default)]
    items: BTreeMap<String, Map>,
    #[serde(default)]
    drop: Vec<String>,
    #[serde(default)]
    extra: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReviewScript {
    #[serde(default)]
    findings: Vec<Map>,
    summary: Option<String>,
}

fn some<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

type Map = serde_json::Map<String, Value>;

fn main() -> ExitCode {
    match run() {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("fake-agent: {e}");
            ExitCode::from(70)
        }
    }
}

fn run() -> Result<u8, String> {
    let argv0 = std::env::args().next().unwrap_or_default();
    let name = std::path::Path::new(&argv0)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if CLIS.contains(&name.as_str()) {
        return cli_main(&name);
    }
    let mut args = std::env::args().skip(1);
    let script_path = match (args.next().as_deref(), args.next()) {
        (Some("--script"), Some(path)) => PathBuf::from(path),
        _ => std::env::var_os("FAKE_AGENT_SCRIPT")
            .map(PathBuf::from)
            .ok_or("usage: fake-agent --script FILE")?,
    };
    let script_text = std::fs::read_to_string(&script_path)
        .map_err(|e| format!("reading {}: {e}", script_path.display()))?;
    let mut script: BTreeMap<String, RoleScript> =
        serde_json::from_str(&script_text).map_err(|e| format!("script: {e}"))?;

    let mut raw = String::new();
    std::io::stdin()
        .read_to_string(&mut raw)
        .map_err(|e| format!("stdin: {e}"))?;
    let request: CommandRequest =
        serde_json::from_str(&raw).map_err(|e| format!("request: {e}"))?;

    let role = request.role.as_str();
    let mut role_script = script
        .remove(role)
        .ok_or_else(|| format!("no script for role {role}"))?;
    let index = usize::try_from(request.attempt.max(1) - 1)
        .map_err(|e| e.to_string())?
        .min(role_script.attempts.len().saturating_sub(1));
    if role_script.attempts.is_empty() {
        return Err(format!("no attempts for role {role}"));
    }
    let steps = role_script.attempts.swap_remove(index);

    for step in steps {
        match step {
            Step::Stdout(text) => out(&text)?,
            Step::Stderr(text) => {
                eprint!("{text}");
            }
            Step::Answer(value) => out(&format!("{value}\n"))?,
            Step::AnswerFile(value) => {
                let path =
                    std::env::var_os("SHEPHERD_ANSWER_FILE").ok_or("no SHEPHERD_ANSWER_FILE")?;
                std::fs::write(path, value.to_string()).map_err(|e| e.to_string())?;
            }
            Step::Triage(t) => {
                let task: TriageTask = serde_json::from_value(request.task.clone())
                    .map_err(|e| format!("task: {e}"))?;
                out(&format!("{}\n", triage_answer(&task, &t)))?;
            }
            Step::Fix(f) => {
                let task: FixTask = serde_json::from_value(request.task.clone())
                    .map_err(|e| format!("task: {e}"))?;
                apply_edits(&f.edits)?;
                out(&format!("{}\n", fix_answer(&task, &f)))?;
            }
            Step::FixValidation(v) => {
                let task: FixValidationTask = serde_json::from_value(request.task.clone())
                    .map_err(|e| format!("task: {e}"))?;
                out(&format!("{}\n", fix_validation_answer(&task, &v)))?;
            }
            Step::Review(r) => out(&format!("{}\n", review_answer(&r)))?,
            Step::ApplyReview(f) => {
                let task: ApplyReviewTask = serde_json::from_value(request.task.clone())
                    .map_err(|e| format!("task: {e}"))?;
                apply_edits(&f.edits)?;
                out(&format!("{}\n", apply_review_answer(&task, &f)))?;
            }
            Step::SleepMs(ms) => std::thread::sleep(Duration::from_millis(ms)),
            Step::Tick { count, interval_ms } => {
                for _ in 0..count {
                    eprint!(".");
                    std::thread::sleep(Duration::from_millis(interval_ms));
                }
            }
            Step::PrintEnv(stream) => {
                let lines: String = std::env::vars_os()
                    .map(|(k, v)| format!("{}={}\n", k.to_string_lossy(), v.to_string_lossy()))
                    .collect();
                if stream == "stderr" {
                    eprint!("{lines}");
                } else {
                    out(&lines)?;
                }
            }
            Step::WriteEnv(path) => {
                let env: BTreeMap<String, String> = std::env::vars_os()
                    .map(|(k, v)| {
                        (
                            k.to_string_lossy().into_owned(),
                            v.to_string_lossy().into_owned(),
                        )
                    })
                    .collect();
                let json = serde_json::to_string(&env).map_err(|e| e.to_string())?;
                std::fs::write(path, json).map_err(|e| e.to_string())?;
            }
            Step::SaveRequest(path) => std::fs::write(path, &raw).map_err(|e| e.to_string())?,
            Step::WritePid(path) => {
                std::fs::write(path, std::process::id().to_string()).map_err(|e| e.to_string())?
            }
            Step::Spawn {
                program,
                args,
                pid_file,
            } => {
                let child = std::process::Command::new(&program)
                    .args(&args)
                    .spawn()
                    .map_err(|e| format!("spawn {program}: {e}"))?;
                if let Some(path) = pid_file {
                    std::fs::write(path, child.id().to_string()).map_err(|e| e.to_string())?;
                }
                // Deliberately not waited for: dropping a Child neither kills nor reaps it.
                drop(child);
            }
            Step::Run { program, args } => {
                // Its output goes to stderr: stdout carries the answer.
                let out = std::process::Command::new(&program)
                    .args(&args)
                    .stdin(std::process::Stdio::null())
                    .output()
                    .map_err(|e| format!("run {program}: {e}"))?;
                let mut stderr = std::io::stderr();
                let _ = stderr.write_all(&out.stdout);
                let _ = stderr.write_all(&out.stderr);
                if !out.status.success() {
                    return Err(format!("{program} {args:?} failed: {}", out.status));
                }
            }
            Step::Exit(code) => return Ok(code),
        }
    }
    Ok(0)
}

fn out(text: &str) -> Result<(), String> {
    let mut stdout = std::io::stdout();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|e| format!("stdout: {e}"))
}

fn merged(default: &Map, specific: Option<&Map>) -> Map {
    let mut m = default.clone();
    if let Some(s) = specific {
        m.extend(s.clone());
    }
    m
}

fn with_ids(
    entries: Vec<(String, Value)>,
    drop: &[String],
    extra: &[String],
    duplicate: &[String],
    make: impl Fn(&str) -> Value,
) -> Vec<Value> {
    let mut out: Vec<Value> = entries
        .iter()
        .filter(|(id, _)| !drop.contains(id))
        .map(|(_, v)| v.clone())
        .collect();
    for id in extra {
        out.push(make(id));
    }
    for id in duplicate {
        if let Some((_, v)) = entries.iter().find(|(e, _)| e == id) {
            out.push(v.clone());
        }
    }
    out
}

fn triage_answer(task: &TriageTask, t: &TriageScript) -> Value {
    let make = |id: &str| {
        let m = merged(&t.default, t.items.get(id));
        let get = |k: &str, d: Value| m.get(k).cloned().unwrap_or(d);
        json!({
            "id": id,
            "decision": get("decision", json!("needs-human")),
            "theme": get("theme", Value::Null),
            "reasoning": get("reasoning", json!("scripted reasoning")),
            "reply_hint": get("reply_hint", json!("scripted reply")),
            "pr_changed_evidence": get("pr_changed_evidence", json!(false)),
        })
    };
    let entries = task
        .items
        .iter()
        .map(|i| (i.id.clone(), make(&i.id)))
        .collect();
    json!({ "items": with_ids(entries, &t.drop, &t.extra, &t.duplicate, make) })
}

fn apply_edits(edits: &[Edit]) -> Result<(), String> {
    for edit in edits {
        if let Some(dir) = edit.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        }
        if let Some(content) = &edit.content {
            std::fs::write(&edit.path, content).map_err(|e| e.to_string())?;
        }
        if let Some(more) = &edit.append {
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .open(&edit.path)
                .map_err(|e| e.to_string())?;
            f.write_all(more.as_bytes()).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

fn fix_answer(task: &FixTask, f: &FixScript) -> Value {
    let make = |id: &str| {
        let m = merged(&f.default, f.items.get(id));
        let get = |k: &str, d: Value| m.get(k).cloned().unwrap_or(d);
        let status = get("status", json!("fixed"));
        let path = task
            .items
            .iter()
            .find(|i| i.id == id)
            .and_then(|i| i.path.clone());
        let files = if status == json!("blocked") {
            json!([])
        } else {
            json!(path.into_iter().collect::<Vec<_>>())
        };
        json!({
            "id": id,
            "status": status,
            "summary": get("summary", json!("scripted summary")),
            "reply": get("reply", json!("scripted reply")),
            "files": get("files", files),
        })
    };
    let entries = task
        .items
        .iter()
        .map(|i| (i.id.clone(), make(&i.id)))
        .collect();
    let assessment = match &f.assessment {
        Some(v) => v.clone(),
        None if task.cluster.is_some() => json!({"verdict": "coincidental", "why": "scripted"}),
        None => Value::Null,
    };
    json!({
        "outcomes": with_ids(entries, &f.drop, &f.extra, &[], make),
        "cluster_assessment": assessment,
    })
}

fn fix_validation_answer(task: &FixValidationTask, v: &ItemsScript) -> Value {
    let make = |id: &str| {
        let m = merged(&v.default, v.items.get(id));
        let get = |k: &str, d: Value| m.get(k).cloned().unwrap_or(d);
        json!({
            "id": id,
            "verdict": get("verdict", json!("addressed")),
            "reasons": get("reasons", json!(["scripted reason"])),
        })
    };
    let entries = task
        .items
        .iter()
        .map(|i| (i.id.clone(), make(&i.id)))
        .collect();
    json!({ "items": with_ids(entries, &v.drop, &v.extra, &[], make) })
}

fn review_answer(r: &ReviewScript) -> Value {
    let findings: Vec<Value> = r
        .findings
        .iter()
        .map(|f| {
            let get = |k: &str, d: Value| f.get(k).cloned().unwrap_or(d);
            json!({
                "id": get("id", json!("F1")),
                "severity": get("severity", json!("LOW")),
                "confidence": get("confidence", json!(50)),
                "title": get("title", json!("scripted finding")),
                "path": get("path", Value::Null),
                "line": get("line", Value::Null),
                "explanation": get("explanation", json!("scripted explanation")),
                "reproduction": get("reproduction", Value::Null),
            })
        })
        .collect();
    json!({
        "findings": findings,
        "summary": r.summary.clone().unwrap_or_else(|| "scripted review".to_owned()),
    })
}

fn apply_review_answer(task: &ApplyReviewTask, f: &FixScript) -> Value {
    let make = |id: &str| {
        let m = merged(&f.default, f.items.get(id));
        let get = |k: &str, d: Value| m.get(k).cloned().unwrap_or(d);
        let path = task
            .findings
            .iter()
            .find(|h| h.finding.id == id)
            .and_then(|h| h.finding.path.clone());
        json!({
            "id": id,
            "status": get("status", json!("fixed")),
            "summary": get("summary", json!("scripted summary")),
            "files": get("files", json!(path.into_iter().collect::<Vec<_>>())),
        })
    };
    let entries = task
        .findings
        .iter()
        .map(|h| (h.finding.id.clone(), make(&h.finding.id)))
        .collect();
    json!({ "outcomes": with_ids(entries, &f.drop, &f.extra, &[], make) })
}

// ---------------------------------------------------------------------------
// CLI mode

const CLIS: [&str; 5] = ["claude", "codex", "copilot", "gemini", "opencode"];

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct CliScript {
    #[serde(default)]
    require: Vec<String>,
    #[serde(default)]
    require_pairs: Vec<(String, String)>,
    #[serde(default)]
    forbid: Vec<String>,
    #[serde(default)]
    forbid_containing: Vec<String>,
    record_dir: Option<PathBuf>,
    #[serde(default)]
    answers: Vec<Value>,
    style: Option<String>,
    #[serde(default)]
    usage: CliUsage,
    #[serde(default)]
    edits: Vec<Edit>,
    #[serde(default)]
    stderr: String,
    #[serde(default)]
    exit: u8,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct CliUsage {
    #[serde(default)]
    input: u64,
    #[serde(default)]
    output: u64,
    #[serde(default)]
    cost: f64,
}

/// Exit code of a failed argument check.
const BAD_ARGS: u8 = 64;

fn value_after<'a>(args: &'a [String], flag: &str) -> Option<&'a str> {
    let i = args.iter().position(|a| a == flag)?;
    args.get(i + 1).map(String::as_str)
}

fn check_args(args: &[String], script: &CliScript) -> Result<(), String> {
    for r in &script.require {
        if !args.contains(r) {
            return Err(format!("missing required argument {r}"));
        }
    }
    for (flag, value) in &script.require_pairs {
        match value_after(args, flag) {
            Some(v) if v == value => {}
            Some(v) => return Err(format!("{flag} is {v}, expected {value}")),
            None => return Err(format!("missing required argument {flag} {value}")),
        }
    }
    for a in args {
        if script.forbid.contains(a) {
            return Err(format!("forbidden argument {a}"));
        }
        if let Some(f) = script
            .forbid_containing
            .iter()
            .find(|f| a.contains(f.as_str()))
        {
            return Err(format!("forbidden argument containing {f}: {a}"));
        }
    }
    Ok(())
}

/// The n-th call of this script (1-based), counted in a file beside it.
fn next_call(script_path: &std::path::Path) -> Result<usize, String> {
    let counter = PathBuf::from(format!("{}.calls", script_path.display()));
    let n = std::fs::read_to_string(&counter)
        .ok()
        .and_then(|s| s.trim().parse::<usize>().ok())
        .unwrap_or(0)
        + 1;
    std::fs::write(&counter, n.to_string()).map_err(|e| e.to_string())?;
    Ok(n)
}

fn cli_main(name: &str) -> Result<u8, String> {
    let script_path = std::env::var_os("FAKE_CLI_SCRIPT")
        .map(PathBuf::from)
        .ok_or("FAKE_CLI_SCRIPT is not set")?;
    let script: CliScript = serde_json::from_str(
        &std::fs::read_to_string(&script_path)
            .map_err(|e| format!("reading {}: {e}", script_path.display()))?,
    )
    .map_err(|e| format!("script: {e}"))?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut stdin = String::new();
    std::io::stdin()
        .read_to_string(&mut stdin)
        .map_err(|e| format!("stdin: {e}"))?;
    let call = next_call(&script_path)?;
    if let Some(dir) = &script.record_dir {
        let env: BTreeMap<String, String> = std::env::vars_os()
            .map(|(k, v)| {
                (
                    k.to_string_lossy().into_owned(),
                    v.to_string_lossy().into_owned(),
                )
            })
            .collect();
        let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
        let record = json!({"argv": args, "env": env, "stdin": stdin, "cwd": cwd});
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        std::fs::write(dir.join(format!("call-{call}.json")), record.to_string())
            .map_err(|e| e.to_string())?;
    }
    if let Err(why) = check_args(&args, &script) {
        eprintln!("fake {name}: {why}");
        return Ok(BAD_ARGS);
    }
    apply_edits(&script.edits)?;
    eprint!("{}", script.stderr);
    let answer = script
        .answers
        .get(call.min(script.answers.len()).saturating_sub(1))
        .cloned()
        .unwrap_or(Value::Null);
    // A string is raw text (a broken answer); anything else is the answer.
    let text = match &answer {
        Value::String(raw) => raw.clone(),
        other => other.to_string(),
    };
    let u = &script.usage;
    match name {
        "claude" => {
            if stdin.trim().is_empty() {
                return Err("claude -p got no prompt on stdin".to_owned());
            }
            let structured = script.style.as_deref() != Some("text")
                && args.iter().any(|a| a == "--json-schema")
                && answer.is_object();
            let mut result = json!({
                "type": "result", "subtype": "success", "is_error": false,
                "duration_ms": 1200, "num_turns": 2, "session_id": "fake-session",
                "total_cost_usd": u.cost,
                "usage": {"input_tokens": u.input, "cache_read_input_tokens": 0, "output_tokens": u.output},
                "permission_denials": [],
            });
            if structured {
                result["result"] = json!("Done.");
                result["structured_output"] = answer.clone();
            } else {
                result["result"] = json!(format!("Here is my answer:\n```json\n{text}\n```"));
            }
            out(&format!("{result}\n"))?;
        }
        "codex" => {
            let schema = value_after(&args, "--output-schema").ok_or("no --output-schema")?;
            let schema: Value = serde_json::from_str(
                &std::fs::read_to_string(schema).map_err(|e| format!("schema: {e}"))?,
            )
            .map_err(|e| format!("schema: {e}"))?;
            if schema.get("additionalProperties") != Some(&json!(false)) {
                return Err("the output schema is not strict".to_owned());
            }
            let last = value_after(&args, "--output-last-message").ok_or("no -o")?;
            std::fs::write(last, &text).map_err(|e| e.to_string())?;
            if args.iter().any(|a| a == "--json") {
                for event in [
                    json!({"type": "thread.started", "thread_id": "fake"}),
                    json!({"type": "turn.started"}),
                    json!({"type": "item.completed", "item": {"id": "item_0", "type": "agent_message", "text": text}}),
                    json!({"type": "turn.completed", "usage": {"input_tokens": u.input, "cached_input_tokens": 0, "output_tokens": u.output}}),
                ] {
                    out(&format!("{event}\n"))?;
                }
            } else {
                out(&format!("{text}\n"))?;
            }
        }
        "gemini" => {
            let stats = json!({"models": {"fake-gemini": {"api": {"totalRequests": 1},
                "tokens": {"prompt": u.input, "candidates": u.output, "total": u.input + u.output}}}});
            let body = json!({"response": format!("```json\n{text}\n```"), "stats": stats});
            out(&format!("{body}\n"))?;
        }
        "copilot" => {
            if stdin.trim().is_empty() && !args.iter().any(|a| a == "-p") {
                return Err("copilot got no prompt on stdin nor -p".to_owned());
            }
            if let Some(file) = value_after(&args, "--usage-output-file") {
                let usage = json!({"modelMetrics": {"fake-copilot": {"requests": {"count": 1},
                    "usage": {"inputTokens": u.input, "outputTokens": u.output,
                              "cacheReadTokens": 0, "cacheWriteTokens": 0}}}});
                std::fs::write(file, usage.to_string()).map_err(|e| e.to_string())?;
            }
            if value_after(&args, "--output-format") == Some("json") {
                for event in [
                    json!({"type": "user.message", "data": {"content": "(the prompt)"}}),
                    json!({"type": "assistant.message", "data": {"content": "I read the code and checked it."}}),
                    json!({"type": "assistant.message", "data": {"content": text}}),
                    json!({"type": "result", "exitCode": 0}),
                ] {
                    out(&format!("{event}\n"))?;
                }
            } else {
                out(&format!("I read the code and checked it.\n\n{text}\n"))?;
            }
        }
        "opencode" => {
            let step = |cost: f64, input: u64, output: u64| {
                json!({"type": "step_finish", "sessionID": "ses_fake", "part": {"type": "step-finish",
                    "reason": "stop", "cost": cost, "tokens": {"input": input, "output": output,
                    "reasoning": 0, "cache": {"read": 0, "write": 0}}}})
            };
            for event in [
                json!({"type": "step_start", "sessionID": "ses_fake", "part": {"type": "step-start"}}),
                json!({"type": "text", "sessionID": "ses_fake", "part": {"type": "text", "text": "Looking at the code."}}),
                step(0.0, 0, 0),
                json!({"type": "text", "sessionID": "ses_fake", "part": {"type": "text", "text": text}}),
                step(u.cost, u.input, u.output),
            ] {
                out(&format!("{event}\n"))?;
            }
        }
        other => return Err(format!("no CLI mode for {other}")),
    }
    Ok(script.exit)
}
