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
//!   the output pipes and is not waited for (it would outlive this process).
//! - `{"exit": CODE}`.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};
use shepherd_agent::{CommandRequest, FixTask, TriageTask};

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
