//! A fake GitHub Actions runner for the repository's composite action
//! (`action.yml`) and a fake GitLab shell runner for the CI template: they
//! read the real files (with `yaml-rust2`), and run their shell steps with
//! bash, in order, the way the runners do (inputs as `${{ inputs.* }}` in
//! the steps' `env:`, `$GITHUB_OUTPUT` per step, `$GITHUB_STEP_SUMMARY`,
//! `if:` conditions). Steps that use another action (`uses:`) are not run;
//! their evaluated `with:` is recorded so a test can check it.
//!
//! The expression language is a deliberately small subset: `${{ X }}` with
//! X a context path (`inputs.*`, `github.*`, `runner.*`, `steps.*.outputs.*`),
//! and `if:` made of `always()`, `X == 'v'`, `X != 'v'` joined by `&&`.
//! Anything else fails the test, so the action cannot grow an expression
//! this runner would silently misread.

#![allow(dead_code)] // each test binary uses part of it

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use yaml_rust2::{Yaml, YamlLoader};

pub fn load_yaml(path: &Path) -> Yaml {
    let text = std::fs::read_to_string(path).expect("read the YAML file");
    let mut docs = YamlLoader::load_from_str(&text).expect("valid YAML");
    assert_eq!(docs.len(), 1, "{} holds one document", path.display());
    docs.remove(0)
}

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository root")
}

/// What one step did.
#[derive(Debug)]
pub struct StepRecord {
    pub id: String,
    pub name: String,
    /// Ran (its `if:` held).
    pub ran: bool,
    /// `uses:` of a step that uses another action.
    pub uses: Option<String>,
    /// Its evaluated `with:`.
    pub with: BTreeMap<String, String>,
    pub exit: Option<i32>,
    pub log: String,
}

/// The result of running the action once.
#[derive(Debug)]
pub struct ActionRun {
    pub steps: Vec<StepRecord>,
    /// The action's outputs (`outputs.*.value`, evaluated).
    pub outputs: BTreeMap<String, String>,
    /// Everything the steps appended to `$GITHUB_STEP_SUMMARY`.
    pub summary: String,
    /// Whether a step failed (the job's status).
    pub failed: bool,
}

impl ActionRun {
    pub fn log(&self) -> String {
        self.steps
            .iter()
            .map(|s| {
                format!(
                    "--- {} (ran {}, exit {:?})\n{}",
                    s.name, s.ran, s.exit, s.log
                )
            })
            .collect()
    }
    pub fn step(&self, id_or_name: &str) -> &StepRecord {
        self.steps
            .iter()
            .find(|s| s.id == id_or_name || s.name == id_or_name)
            .unwrap_or_else(|| panic!("no step {id_or_name}"))
    }
}

/// A runner's job environment: a fresh temp tree (`RUNNER_TEMP`, the tool
/// cache, the workspace), the `github` context, the inputs.
pub struct FakeRunner {
    pub root: tempfile::TempDir,
    pub inputs: BTreeMap<String, String>,
    pub github: BTreeMap<String, String>,
    /// Extra environment of the job (`GITHUB_SERVER_URL`, …).
    pub env: BTreeMap<String, String>,
}

impl FakeRunner {
    /// A fresh runner whose event is `event` (written to `GITHUB_EVENT_PATH`).
    pub fn new(event: &serde_json::Value, event_name: &str) -> Self {
        let root = tempfile::tempdir().expect("runner dir");
        for d in ["temp", "tool-cache", "workspace", "home"] {
            std::fs::create_dir_all(root.path().join(d)).expect("runner dirs");
        }
        let event_path = root.path().join("event.json");
        std::fs::write(&event_path, event.to_string()).expect("write the event");
        let mut github = BTreeMap::new();
        for (k, v) in [
            ("token", "ghs_the_default_github_token"),
            ("action_ref", "v1"),
            ("action_repository", "shepherd/shepherd"),
            ("run_id", "1234"),
            ("run_attempt", "1"),
            ("event_name", event_name),
        ] {
            github.insert(k.to_owned(), v.to_owned());
        }
        let mut env = BTreeMap::new();
        env.insert(
            "GITHUB_EVENT_PATH".to_owned(),
            event_path.display().to_string(),
        );
        env.insert("GITHUB_EVENT_NAME".to_owned(), event_name.to_owned());
        FakeRunner {
            root,
            inputs: BTreeMap::new(),
            github,
            env,
        }
    }

    pub fn input(mut self, name: &str, value: &str) -> Self {
        self.inputs.insert(name.to_owned(), value.to_owned());
        self
    }

    pub fn env(mut self, name: &str, value: &str) -> Self {
        self.env.insert(name.to_owned(), value.to_owned());
        self
    }

    fn dir(&self, name: &str) -> PathBuf {
        self.root.path().join(name)
    }

    /// Run the repository's `action.yml`.
    pub fn run_action(&self) -> ActionRun {
        let root = repo_root();
        let action = load_yaml(&root.join("action.yml"));
        assert_eq!(
            action["runs"]["using"].as_str(),
            Some("composite"),
            "a composite action"
        );
        // Inputs: given, else the default (itself an expression).
        let mut ctx = Context {
            inputs: BTreeMap::new(),
            github: self.github.clone(),
            runner: BTreeMap::from([
                ("os".to_owned(), "Linux".to_owned()),
                ("arch".to_owned(), "X64".to_owned()),
                ("temp".to_owned(), self.dir("temp").display().to_string()),
            ]),
            steps: BTreeMap::new(),
        };
        let declared = action["inputs"].as_hash().expect("inputs");
        for (name, spec) in declared {
            let name = name.as_str().expect("input name").to_owned();
            let value = match self.inputs.get(&name) {
                Some(v) => v.clone(),
                None => ctx.substitute(&scalar(&spec["default"])),
            };
            ctx.inputs.insert(name, value);
        }
        for name in self.inputs.keys() {
            assert!(
                ctx.inputs.contains_key(name),
                "the action has no input {name}"
            );
        }
        let summary_path = self.dir("temp").join("step-summary.md");
        std::fs::write(&summary_path, "").expect("summary file");
        let mut failed = false;
        let mut records = Vec::new();
        for (i, step) in action["runs"]["steps"]
            .as_vec()
            .expect("steps")
            .iter()
            .enumerate()
        {
            let id = step["id"].as_str().map_or(format!("__{i}"), str::to_owned);
            let name = step["name"].as_str().unwrap_or("").to_owned();
            let condition = step["if"].as_str().unwrap_or("success()");
            let ran = ctx.condition(condition, failed);
            let mut record = StepRecord {
                id: id.clone(),
                name,
                ran,
                uses: step["uses"].as_str().map(str::to_owned),
                with: BTreeMap::new(),
                exit: None,
                log: String::new(),
            };
            if !ran {
                records.push(record);
                continue;
            }
            if let Some(with) = step["with"].as_hash() {
                for (k, v) in with {
                    record.with.insert(scalar(k), ctx.substitute(&scalar(v)));
                }
            }
            if record.uses.is_some() {
                records.push(record);
                continue;
            }
            let script = step["run"].as_str().expect("a run step");
            assert_eq!(
                step["shell"].as_str(),
                Some("bash"),
                "composite steps say their shell"
            );
            let output_path = self.dir("temp").join(format!("output-{i}"));
            std::fs::write(&output_path, "").expect("output file");
            let script_path = self.dir("temp").join(format!("step-{i}.sh"));
            std::fs::write(&script_path, script).expect("script file");
            let mut cmd = Command::new("bash");
            // GitHub's `shell: bash`.
            cmd.args(["--noprofile", "--norc", "-eo", "pipefail"])
                .arg(&script_path)
                .env_clear()
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .env("HOME", self.dir("home"))
                .env("CI", "true")
                .env("GITHUB_ACTIONS", "true")
                .env("RUNNER_TEMP", self.dir("temp"))
                .env("RUNNER_TOOL_CACHE", self.dir("tool-cache"))
                .env("GITHUB_WORKSPACE", self.dir("workspace"))
                .env("GITHUB_ACTION_PATH", &root)
                .env("GITHUB_OUTPUT", &output_path)
                .env("GITHUB_STEP_SUMMARY", &summary_path)
                .current_dir(self.dir("workspace"))
                .stdin(Stdio::null());
            for (k, v) in &self.env {
                cmd.env(k, v);
            }
            if let Some(env) = step["env"].as_hash() {
                for (k, v) in env {
                    cmd.env(scalar(k), ctx.substitute(&scalar(v)));
                }
            }
            let out = cmd.output().expect("bash runs");
            record.exit = out.status.code();
            record.log = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            if !out.status.success() {
                failed = true;
            }
            let text = std::fs::read_to_string(&output_path).expect("read outputs");
            ctx.steps.insert(id, parse_outputs(&text));
            records.push(record);
        }
        let mut outputs = BTreeMap::new();
        if let Some(declared) = action["outputs"].as_hash() {
            for (k, v) in declared {
                outputs.insert(scalar(k), ctx.substitute(&scalar(&v["value"])));
            }
        }
        ActionRun {
            steps: records,
            outputs,
            summary: std::fs::read_to_string(&summary_path).expect("summary"),
            failed,
        }
    }
}

pub fn scalar(y: &Yaml) -> String {
    match y {
        Yaml::String(s) | Yaml::Real(s) => s.clone(),
        Yaml::Integer(i) => i.to_string(),
        Yaml::Boolean(b) => b.to_string(),
        Yaml::Null | Yaml::BadValue => String::new(),
        other => panic!("not a scalar: {other:?}"),
    }
}

/// `$GITHUB_OUTPUT`'s format: `k=v`, or `k<<DELIM` … `DELIM`.
pub fn parse_outputs(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if let Some((k, delim)) = line.split_once("<<") {
            let mut value = Vec::new();
            for l in lines.by_ref() {
                if l == delim {
                    break;
                }
                value.push(l);
            }
            out.insert(k.to_owned(), value.join("\n"));
        } else if let Some((k, v)) = line.split_once('=') {
            out.insert(k.to_owned(), v.to_owned());
        }
    }
    out
}

struct Context {
    inputs: BTreeMap<String, String>,
    github: BTreeMap<String, String>,
    runner: BTreeMap<String, String>,
    steps: BTreeMap<String, BTreeMap<String, String>>,
}

impl Context {
    fn lookup(&self, path: &str) -> String {
        let parts: Vec<&str> = path.trim().split('.').collect();
        let get = |m: &BTreeMap<String, String>, k: &str| m.get(k).cloned().unwrap_or_default();
        match parts.as_slice() {
            ["inputs", name] => {
                assert!(self.inputs.contains_key(*name), "no input {name}");
                get(&self.inputs, name)
            }
            ["github", name] => get(&self.github, name),
            ["runner", name] => get(&self.runner, name),
            ["steps", id, "outputs", name] => self
                .steps
                .get(*id)
                .map(|o| get(o, name))
                .unwrap_or_default(),
            _ => panic!("the fake runner does not understand the expression `{path}`"),
        }
    }

    /// Replace each `${{ X }}` in `text`.
    fn substitute(&self, text: &str) -> String {
        let mut out = String::new();
        let mut rest = text;
        while let Some(start) = rest.find("${{") {
            out.push_str(&rest[..start]);
            let end = rest[start..].find("}}").expect("a closed expression") + start;
            out.push_str(&self.lookup(&rest[start + 3..end]));
            rest = &rest[end + 2..];
        }
        out.push_str(rest);
        out
    }

    fn condition(&self, text: &str, failed: bool) -> bool {
        let text = text.trim();
        let text = text
            .strip_prefix("${{")
            .and_then(|t| t.strip_suffix("}}"))
            .unwrap_or(text);
        let mut always = false;
        let mut holds = true;
        for term in text.split("&&").map(str::trim) {
            let literal = |s: &str| -> String {
                let s = s.trim();
                s.strip_prefix('\'')
                    .and_then(|s| s.strip_suffix('\''))
                    .unwrap_or_else(|| panic!("not a string literal: {s}"))
                    .to_owned()
            };
            if term == "always()" {
                always = true;
            } else if term == "success()" {
            } else if let Some((l, r)) = term.split_once("!=") {
                holds &= self.lookup(l) != literal(r);
            } else if let Some((l, r)) = term.split_once("==") {
                holds &= self.lookup(l) == literal(r);
            } else {
                panic!("the fake runner does not understand the condition `{term}`");
            }
        }
        holds && (always || !failed)
    }
}

/// One run of a GitLab CI job's `before_script`, `script` and
/// `after_script` under a shell runner: each section in one bash with
/// `set -eo pipefail`, the job's `variables:` under the given CI variables.
pub struct GitLabJobRun {
    pub exit: i32,
    pub after_exit: Option<i32>,
    pub log: String,
}

pub fn gitlab_job(
    template: &Yaml,
    job: &str,
    project_dir: &Path,
    ci_vars: &BTreeMap<String, String>,
) -> GitLabJobRun {
    let spec = &template[job];
    assert!(!spec.is_badvalue(), "no job {job} in the template");
    // `extends:` of one hidden job, merged under the job's own keys.
    let base = spec["extends"].as_str().map(|b| &template[b]);
    let key = |k: &str| -> &Yaml {
        if !spec[k].is_badvalue() {
            &spec[k]
        } else {
            base.map_or(&spec[k], |b| &b[k])
        }
    };
    let mut vars: BTreeMap<String, String> = BTreeMap::new();
    for source in [
        &template["variables"],
        &base.map_or(Yaml::BadValue, |b| b["variables"].clone()),
        &spec["variables"],
    ] {
        if let Some(h) = source.as_hash() {
            for (k, v) in h {
                // `{value, description}` form too.
                let value = if v.as_hash().is_some() {
                    scalar(&v["value"])
                } else {
                    scalar(v)
                };
                vars.insert(scalar(k), value);
            }
        }
    }
    // CI/CD variables set in the project (and predefined ones) win.
    for (k, v) in ci_vars {
        vars.insert(k.clone(), v.clone());
    }
    let lines = |y: &Yaml| -> String {
        y.as_vec()
            .map(|v| v.iter().map(scalar).collect::<Vec<_>>().join("\n"))
            .unwrap_or_default()
    };
    let run = |script: String| -> (i32, String) {
        let mut cmd = Command::new("bash");
        cmd.args(["--noprofile", "--norc", "-c"])
            .arg(format!("set -eo pipefail\n{script}"))
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", project_dir.join(".home"))
            .env("CI", "true")
            .env("GITLAB_CI", "true")
            .env("CI_PROJECT_DIR", project_dir)
            .current_dir(project_dir)
            .stdin(Stdio::null());
        for (k, v) in &vars {
            cmd.env(k, v);
        }
        let out = cmd.output().expect("bash runs");
        (
            out.status.code().unwrap_or(-1),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        )
    };
    std::fs::create_dir_all(project_dir.join(".home")).expect("home");
    let main = format!("{}\n{}", lines(key("before_script")), lines(key("script")));
    let (exit, mut log) = run(main);
    let after = lines(key("after_script"));
    let after_exit = if after.trim().is_empty() {
        None
    } else {
        let (code, text) = run(after);
        log.push_str(&text);
        Some(code)
    };
    GitLabJobRun {
        exit,
        after_exit,
        log,
    }
}
