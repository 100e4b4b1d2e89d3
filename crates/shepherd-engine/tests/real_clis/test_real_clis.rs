//! The demo, converged by the real agent CLIs (the versions pinned in
//! `crates/shepherd-model-server/clis/`) for every role, each CLI talking to
//! the scripted model server on loopback.
//!
//! The scripted model ([`demo_model`]) plays a competent agent: it reads
//! the prompt Shepherd rendered (item ids, files, suggestion blocks), calls
//! the CLI's tools (read a file, write a file, run `git`) in the task's
//! worktree, and answers in the role's schema. Triage makes every
//! suggestion a code change; the fixers apply the suggestions (the four
//! `src/auth` threads as one cluster); validation finds every fix
//! addressed; the pre-push review reports the added `TODO` as a HIGH
//! finding with a reproduction, which `apply-review` fixes. So every role
//! runs, through the CLI's own tool loop.
//!
//! A provider of another CLI adds a test by giving [`the_demo_converges_with`]
//! a [`DemoCli`]: how its CLI is pointed at the server, its key and
//! variables, and how its file tools rewrite a file.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::{json, Value};
use shepherd_agent::CliProvider;
use shepherd_engine::RunOutcome;
use shepherd_model_server::{Conversation, Exchange, Match, ModelServer, Script, Step, ToolCall};

use crate::common::*;
use crate::real_demo::{
    assert_demo, files_text, run_demo, FileEdits, RealCli, FORGE_TOKENS, INPUT_TOKENS,
    OUTPUT_TOKENS,
};

/// The CLI's own model key: it must reach the model server, and only it.
const MODEL_KEY: &str = "sk-e2e-model-key-5678";

/// One item of a rendered prompt (`### Item n of m: id "..."`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptItem {
    pub id: String,
    pub path: Option<String>,
    /// A suggestion block: the file, the lines it replaces, its text.
    pub suggestion: Option<(String, usize, usize, String)>,
    /// Whether the comment asks for a CHANGELOG.md line (the demo's
    /// top-level comment).
    pub wants_changelog: bool,
}

/// The line the scripted fixer adds to the changelog.
const CHANGELOG_LINE: &str = "- `login`, `session_open` and `session_user` helpers.\n";

/// The file an item's fix edits, and the edit.
fn item_edit(item: &PromptItem) -> Option<(String, Edit)> {
    match (&item.suggestion, item.wants_changelog) {
        (Some((path, start, end, text)), _) => {
            Some((path.clone(), Edit::Replace(*start, *end, text.clone())))
        }
        (None, true) => Some(("CHANGELOG.md".to_owned(), Edit::Append(CHANGELOG_LINE))),
        (None, false) => None,
    }
}

/// An edit of one file.
#[derive(Debug, Clone)]
enum Edit {
    /// Lines `start..=end` replaced (a suggestion block).
    Replace(usize, usize, String),
    /// A line added at the end.
    Append(&'static str),
}

impl Edit {
    fn apply(&self, file: &str) -> String {
        match self {
            Edit::Replace(start, end, text) => apply_suggestion(file, *start, *end, text),
            Edit::Append(line) => format!("{file}{line}"),
        }
    }
}

/// The sections of `text` that start with `header` (`### Item `).
fn sections<'a>(text: &'a str, header: &str) -> Vec<&'a str> {
    let mut starts: Vec<usize> = text.match_indices(header).map(|(i, _)| i).collect();
    starts.push(text.len());
    starts.windows(2).map(|w| &text[w[0]..w[1]]).collect()
}

/// The JSON string at the start of `s`.
fn quoted_prefix(s: &str) -> Option<String> {
    let mut de = serde_json::Deserializer::from_str(s).into_iter::<String>();
    de.next()?.ok()
}

fn after<'a>(section: &'a str, marker: &str) -> Option<&'a str> {
    section.find(marker).map(|i| &section[i + marker.len()..])
}

/// The items of a rendered task prompt.
pub fn prompt_items(prompt: &str) -> Vec<PromptItem> {
    sections(prompt, "### Item ")
        .into_iter()
        .filter_map(|section| {
            let id = quoted_prefix(after(section, ": id ")?)?;
            let path = after(section, "\n- file: ").and_then(quoted_prefix);
            let suggestion =
                after(section, "- suggestion block: yes, replacing lines ").and_then(|rest| {
                    let (range, rest) = rest.split_once(" of ")?;
                    let (start, end) = range.split_once('-')?;
                    let file = quoted_prefix(rest)?;
                    // GitHub's fence is `suggestion`, GitLab's may say which
                    // lines it covers (`suggestion:-0+1`): the lines come
                    // from the prompt's range either way.
                    let body = after(section, "```suggestion")?;
                    let body = &body[body.find('\n')? + 1..];
                    let body = &body[..body.find("```")?];
                    Some((
                        file,
                        start.parse().ok()?,
                        end.parse().ok()?,
                        body.to_owned(),
                    ))
                });
            Some(PromptItem {
                id,
                path,
                suggestion,
                wants_changelog: section.contains("CHANGELOG.md"),
            })
        })
        .collect()
}

/// The finding ids and files of an apply-review prompt.
fn prompt_findings(prompt: &str) -> Vec<(String, Option<String>)> {
    sections(prompt, "### Finding ")
        .into_iter()
        .filter_map(|s| {
            let id = quoted_prefix(after(s, ": id ")?)?;
            Some((id, after(s, "\n- file: ").and_then(quoted_prefix)))
        })
        .collect()
}

/// `path` in the worktree the CLI said it works in.
fn worktree_file(conv: &Conversation, path: &str) -> PathBuf {
    Path::new(&conv.resolve(path)).to_owned()
}

/// The file with lines `start..=end` replaced by `text` (GitHub's
/// suggestion semantics).
fn apply_suggestion(file: &str, start: usize, end: usize, text: &str) -> String {
    let lines: Vec<&str> = file.split_inclusive('\n').collect();
    let mut out: String = lines[..start - 1].concat();
    out.push_str(text);
    out.push_str(&lines[end.min(lines.len())..].concat());
    out
}

/// `path` rewritten to `content` with the CLI's own file tool: a whole-file
/// write, or (Copilot CLI, whose `create` refuses a file that exists) an
/// edit replacing the whole text.
fn rewrite(conv: &Conversation, edits: FileEdits, path: &str, content: String) -> Option<Step> {
    Some(Step::Tool(match edits {
        FileEdits::Write => ToolCall::Write {
            path: path.to_owned(),
            content,
        },
        FileEdits::Edit => ToolCall::Edit {
            path: path.to_owned(),
            old: std::fs::read_to_string(worktree_file(conv, path)).ok()?,
            new: content,
        },
    }))
}

/// Read then write each file to fix: steps `2k` and `2k+1` of a fixer.
fn fixer_step(conv: &Conversation, items: &[PromptItem], edits_by: FileEdits) -> Option<Step> {
    let edits: Vec<(String, Edit)> = items.iter().filter_map(item_edit).collect();
    let step = conv.tool_results;
    let (path, edit) = edits.get(step / 2)?;
    if step % 2 == 0 {
        return Some(Step::Tool(ToolCall::Read { path: path.clone() }));
    }
    let current = std::fs::read_to_string(worktree_file(conv, path)).ok()?;
    rewrite(conv, edits_by, path, edit.apply(&current))
}

fn fix_answer(items: &[PromptItem], cluster: bool) -> Value {
    let outcomes: Vec<Value> = items
        .iter()
        .map(|i| {
            let files: Vec<String> = item_edit(i).map(|(p, _)| p).into_iter().collect();
            let (summary, reply) = if i.suggestion.is_some() {
                ("Applied the suggested change.", "Applied your suggestion.")
            } else {
                ("Added the CHANGELOG.md line.", "Added a CHANGELOG.md line for the new helpers.")
            };
            json!({"id": i.id, "status": "fixed", "summary": summary, "reply": reply, "files": files})
        })
        .collect();
    let assessment = cluster.then(
        || json!({"verdict": "systemic", "why": "Every one ignores a failing command's status."}),
    );
    json!({"outcomes": outcomes, "cluster_assessment": assessment})
}

/// The scripted model of the demo, one exchange per role (see the module
/// docs), editing files with `edits`; every answer reports
/// [`INPUT_TOKENS`] and [`OUTPUT_TOKENS`].
pub fn demo_model(edits: FileEdits) -> Vec<Exchange> {
    let triage = Exchange::planned(
        "triage",
        Match::Contains("You are the triage agent".into()),
        |conv| {
            let items = prompt_items(&conv.user_text);
            match conv.tool_results {
                // First what a prompt injection would ask for: a commit in
                // the worktree this role may only read.
                0 => Some(Step::Tool(ToolCall::Shell {
                    command: crate::real_demo::SNEAKY_COMMIT.to_owned(),
                })),
                1 => Some(Step::Tool(ToolCall::Read {
                    path: items.iter().find_map(|i| i.path.clone())?,
                })),
                2 => {
                    let decisions: Vec<Value> = items
                        .iter()
                        .map(|i| {
                            let code = i.suggestion.is_some() || i.wants_changelog;
                            json!({"id": i.id,
                                   "decision": if code { "code-change" } else { "needs-human" },
                                   "theme": if code { json!("error-handling") } else { Value::Null },
                                   "reasoning": format!("Read {}.", i.path.as_deref().unwrap_or("the PR")),
                                   "reply_hint": if code { "Apply the suggestion." } else { "A maintainer decides." },
                                   "pr_changed_evidence": false})
                        })
                        .collect();
                    Some(Step::Structured(json!({"items": decisions})))
                }
                _ => None,
            }
        },
    );
    let fix = |label: &str, needle: &str, cluster: bool| {
        Exchange::planned(label, Match::Contains(needle.into()), move |conv| {
            let items = prompt_items(&conv.user_text);
            let files = items.iter().filter_map(item_edit).count();
            if conv.tool_results < 2 * files {
                return fixer_step(conv, &items, edits);
            }
            (conv.tool_results == 2 * files).then(|| Step::Structured(fix_answer(&items, cluster)))
        })
    };
    let validation = Exchange::planned(
        "fix-validation",
        Match::Contains("You are the fix validation agent".into()),
        |conv| match conv.tool_results {
            0 => Some(Step::Tool(ToolCall::Shell {
                command: "git status --short".into(),
            })),
            1 => {
                let items: Vec<Value> = prompt_items(&conv.user_text)
                    .iter()
                    .map(|i| {
                        json!({"id": i.id, "verdict": "addressed",
                                    "reasons": ["The diff applies the suggestion."]})
                    })
                    .collect();
                Some(Step::Structured(json!({"items": items})))
            }
            _ => None,
        },
    );
    let review = Exchange::planned(
        "review",
        Match::Contains("You are the pre-push review agent".into()),
        |conv| match conv.tool_results {
            0 => Some(Step::Tool(ToolCall::Shell {
                command: "git log --oneline -5".into(),
            })),
            1 => {
                let todo = conv
                    .user_text
                    .lines()
                    .any(|l| l.starts_with('+') && l.contains("TODO"));
                let findings = if todo {
                    json!([{"id": "F1", "severity": "HIGH", "confidence": 90,
                            "title": "A TODO is pushed into src/auth/token.sh",
                            "path": "src/auth/token.sh", "line": 6,
                            "explanation": "The suggestion added a TODO comment; the project tracks those in issues.",
                            "reproduction": "! grep -n TODO src/auth/token.sh"}])
                } else {
                    json!([])
                };
                Some(Step::Structured(
                    json!({"findings": findings, "summary": "Reviewed the commits to push."}),
                ))
            }
            _ => None,
        },
    );
    let apply_review = Exchange::planned(
        "apply-review",
        Match::Contains("A pre-push review of Shepherd's own commits".into()),
        move |conv| {
            let findings = prompt_findings(&conv.user_text);
            let path = findings.iter().find_map(|(_, p)| p.clone())?;
            match conv.tool_results {
                0 => Some(Step::Tool(ToolCall::Read { path })),
                1 => {
                    let current = std::fs::read_to_string(worktree_file(conv, &path)).ok()?;
                    let kept: String = current
                        .split_inclusive('\n')
                        .filter(|l| !l.contains("TODO"))
                        .collect();
                    rewrite(conv, edits, &path, kept)
                }
                2 => {
                    let outcomes: Vec<Value> = findings
                        .iter()
                        .map(|(id, p)| json!({"id": id, "status": "fixed",
                                              "summary": "Removed the TODO.", "files": p.iter().collect::<Vec<_>>()}))
                        .collect();
                    Some(Step::Structured(json!({"outcomes": outcomes})))
                }
                _ => None,
            }
        },
    );
    [
        triage,
        fix("cluster-fix", "You are the cluster fix agent", true),
        fix(
            "fix",
            "Triage decided that the review item below needs a code change",
            false,
        ),
        validation,
        review,
        apply_review,
    ]
    .into_iter()
    .map(|e| e.usage(INPUT_TOKENS, OUTPUT_TOKENS))
    .collect()
}

/// The real `claude`, pointed at `server` by its own variables.
pub fn claude(server: &ModelServer) -> RealCli {
    let mut cli = RealCli::new(CliProvider::Claude);
    cli.env = vec![
        ("ANTHROPIC_BASE_URL".into(), server.url()),
        ("ANTHROPIC_API_KEY".into(), MODEL_KEY.into()),
    ];
    cli
}

/// The real `codex`, pointed at `server` by `OPENAI_BASE_URL` (which
/// Shepherd turns into a model provider of a `CODEX_HOME` of its own).
pub fn codex(server: &ModelServer) -> RealCli {
    let mut cli = RealCli::new(CliProvider::Codex);
    cli.env = vec![
        ("OPENAI_BASE_URL".into(), format!("{}/v1", server.url())),
        ("OPENAI_API_KEY".into(), MODEL_KEY.into()),
    ];
    cli
}

/// How one provider's CLI is set up for the demo.
pub struct DemoCli {
    /// The CLI, pointed at the scripted server.
    pub cli: fn(&ModelServer) -> RealCli,
    /// The value of its model key, which must reach the server.
    pub key: &'static str,
    /// The variables of its own that must be passed (key, base URL).
    pub own_vars: &'static [&'static str],
    /// How its file tools rewrite a file.
    pub edits: FileEdits,
}

/// The demo converges with the real CLI of `demo` for every role (triage,
/// cluster fix, single-item fix, fix validation, pre-push review and
/// apply-review), each through the CLI's own tool loop; usage is read from
/// the CLI's output; its key and endpoint reached it, no forge token did.
pub async fn the_demo_converges_with(demo_cli: DemoCli) -> (Setup, ModelServer, RunOutcome) {
    let server =
        ModelServer::start(Script::new(demo_model(demo_cli.edits))).expect("model server starts");
    let cli = (demo_cli.cli)(&server);
    let provider = cli.provider;
    let setup = setup(demo()).await;
    let started = Instant::now();
    let outcome = run_demo(&setup, &cli).await;
    let wall = started.elapsed();
    // Converged, no forge token anywhere, the key and variables passed, the
    // read-only role's commit not pushed, tokens read per role.
    assert_demo(
        &setup,
        &server,
        &outcome,
        demo_cli.key,
        demo_cli.own_vars,
        5,
    );
    let report = &outcome.report;

    // Every role ran on the real CLI, through its tool loop.
    let requests = server.requests();
    for role in [
        "triage",
        "cluster-fix",
        "fix",
        "fix-validation",
        "review",
        "apply-review",
    ] {
        let steps: Vec<usize> = server.requests_of(role).iter().map(|r| r.step).collect();
        assert!(
            steps.iter().any(|s| *s > 0),
            "{role} made no tool call: {steps:?}"
        );
    }
    eprintln!(
        "{provider}: the demo converged in {wall:?}: {} rounds, {} agent calls, {} model requests",
        report.rounds.len(),
        report.agent.calls,
        requests.len()
    );

    // The changelog request went to the single-item fixer, which fixed it.
    let results = read_json(&outcome.run_dir.join("rounds/1/results.json"));
    let by_agent = results
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["kind"] == "issue-comment" && r["fix_kind"] == "agent")
        .filter(|r| r["result"]["outcome"] == "fixed")
        .count();
    assert_eq!(by_agent, 1, "{results:#}");
    // The review's finding was applied before the push: no TODO pushed.
    let review = read(&outcome.run_dir.join("rounds/1/pre-push-review.md"));
    assert!(review.contains("F1"), "{review}");
    let head = setup.emu.head_sha(PR).expect("the PR has a head");
    let token_sh = std::process::Command::new("git")
        .args(["show", &format!("{head}:src/auth/token.sh")])
        .current_dir(setup.emu.repository_path())
        .output()
        .expect("git show");
    assert!(
        !String::from_utf8_lossy(&token_sh.stdout).contains("TODO"),
        "apply-review's fix was not pushed"
    );

    // Usage as the CLI reported it: tokens for every role, cost for claude.
    // (builtin too: Shepherd applies isolated suggestion blocks itself.)
    assert_eq!(report.agent.providers, ["builtin", provider.name()]);
    for role in &report.agent.roles {
        assert!(role.input_tokens.is_some_and(|t| t > 0), "{role:?}");
        assert!(role.output_tokens.is_some_and(|t| t > 0), "{role:?}");
        if provider == CliProvider::Claude {
            assert!(role.cost_usd.is_some_and(|c| c > 0.0), "{role:?}");
        }
    }
    assert_eq!(report.agent.roles.len(), 6, "{:?}", report.agent.roles);
    for (path, text) in files_text(cli.home.path()) {
        for (_, token) in FORGE_TOKENS {
            assert!(!text.contains(token), "a forge token in {}", path.display());
        }
    }
    (setup, server, outcome)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_converges_with_the_real_claude() {
    the_demo_converges_with(DemoCli {
        cli: claude,
        key: MODEL_KEY,
        own_vars: &["ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"],
        edits: FileEdits::Write,
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_converges_with_the_real_codex() {
    the_demo_converges_with(DemoCli {
        cli: codex,
        key: MODEL_KEY,
        own_vars: &["OPENAI_API_KEY", "OPENAI_BASE_URL"],
        edits: FileEdits::Write,
    })
    .await;
}

#[test]
fn prompt_items_are_read_from_the_rendered_prompt() {
    let prompt = "## Items\n\n### Item 1 of 2: id \"PRRT_1\"\n\n- kind: review thread\n\
        - file: \"src/a.sh\", lines 5-6\n- suggestion block: yes, replacing lines 5-6 of \"src/a.sh\"\n\n\
        <untrusted-comment id=\"1\">\nDo it:\n\n```suggestion\n    x || return 1\n```\n</untrusted-comment>\n\
        ### Item 2 of 2: id \"IC_2\"\n\n- kind: top-level comment\n- suggestion block: none\n";
    let items = prompt_items(prompt);
    assert_eq!(items.len(), 2, "{items:?}");
    assert_eq!(items[0].id, "PRRT_1");
    assert_eq!(items[0].path.as_deref(), Some("src/a.sh"));
    assert_eq!(
        items[0].suggestion,
        Some(("src/a.sh".into(), 5, 6, "    x || return 1\n".into()))
    );
    assert_eq!(
        (items[1].id.as_str(), items[1].suggestion.is_none()),
        ("IC_2", true)
    );
    assert!(!items[0].wants_changelog && !items[1].wants_changelog);
    assert_eq!(apply_suggestion("a\nb\nc\nd\n", 2, 3, "X\n"), "a\nX\nd\n");
    assert_eq!(apply_suggestion("a\nb\n", 2, 2, ""), "a\n");
}
