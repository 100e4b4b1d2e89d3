//! `shepherd doctor`: installed and configured agent CLIs, git, token, config.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use crate::common::{text, Shepherd};

const SECRET: &str = "ghp_DoctorMustNeverPrintThis0000000000";

/// A checkout with `config` as its `shepherd.toml`, and a directory of fake
/// agent CLIs (`clis`) put first on `PATH`.
fn setup(sh: &Shepherd, config: &str, clis: &[&str]) -> (std::path::PathBuf, String) {
    let repo = sh.cwd().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(sh, &repo, &["init", "--quiet"]);
    std::fs::write(repo.join("shepherd.toml"), config).unwrap();
    let bin = sh.cwd().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for cli in clis {
        let path = bin.join(cli);
        std::fs::write(&path, "#!/bin/sh\necho fake\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    (repo, path)
}

/// `git ARGS` in `repo`, with the sealed HOME and no system config.
fn git(sh: &Shepherd, repo: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(args)
        .current_dir(repo)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", sh.cwd())
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

/// `shepherd ARGS` in the checkout `repo`, with `path` (the fake CLIs
/// first) as PATH.
fn in_checkout(sh: &Shepherd, repo: &Path, path: &str, args: &[&str]) -> Command {
    let mut cmd = sh.command();
    cmd.args(args).current_dir(repo).env("PATH", path);
    cmd
}

/// The entry of `doctor --json`'s `agents` for `provider`.
fn agent_in(json: &serde_json::Value, provider: &str) -> serde_json::Value {
    json["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["provider"] == provider)
        .cloned()
        .unwrap()
}

#[test]
fn doctor_lists_installed_and_configured_agent_clis() {
    let sh = Shepherd::new();
    let config = "[agent]\nprovider = \"claude\"\nmodel = \"sonnet\"\n\n[agent.roles.review]\nprovider = \"codex\"\n";
    let (repo, path) = setup(&sh, config, &["claude"]);
    let out = in_checkout(&sh, &repo, &path, &["doctor", "--json"])
        .env("GITHUB_TOKEN", SECRET)
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "codex is configured but missing\n{stdout}"
    );
    assert!(!stdout.contains(SECRET) && !text(&out.stderr).contains(SECRET));
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let agent = |name: &str| agent_in(&json, name);
    assert!(agent("claude")["installed"]
        .as_str()
        .unwrap()
        .ends_with("bin/claude"));
    assert!(agent("codex")["installed"].is_null());
    let role = |name: &str| {
        json["roles"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["role"] == name)
            .cloned()
            .unwrap()
    };
    assert_eq!(role("triage")["provider"], "claude");
    assert_eq!(role("triage")["model"], "sonnet");
    assert_eq!(role("triage")["available"], true);
    assert_eq!(role("review")["provider"], "codex");
    assert_eq!(role("review")["available"], false);
    assert_eq!(json["token"]["ok"], true);
    assert!(json["token"]["detail"]
        .as_str()
        .unwrap()
        .contains("$GITHUB_TOKEN"));
    assert_eq!(json["ok"], false);
}

#[test]
fn doctor_is_ready_with_the_builtin_agent_and_a_token() {
    let sh = Shepherd::new();
    let (repo, path) = setup(&sh, "[loop]\nmax_rounds = 3\n", &[]);
    let out = in_checkout(&sh, &repo, &path, &["doctor"])
        .env("GITHUB_TOKEN", SECRET)
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("Ready."), "{stdout}");
    assert!(stdout.contains("triage            builtin"), "{stdout}");
    assert!(!stdout.contains(SECRET));
}

#[test]
fn doctor_reports_a_bad_config_and_a_missing_token() {
    let sh = Shepherd::new();
    let (repo, path) = setup(&sh, "[loop]\nmax_round = 3\n", &[]);
    let out = in_checkout(&sh, &repo, &path, &["doctor"])
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("FAIL config"), "{stdout}");
    assert!(stdout.contains("max_round"), "names the key: {stdout}");
    assert!(stdout.contains("FAIL token"), "{stdout}");
}

/// An invalid protected-path glob is refused by every command before any
/// network or agent call, naming the key and the file (it used to pass
/// `doctor` and fail a run after its triage had been paid for).
#[test]
fn an_invalid_protected_glob_is_refused_naming_the_key_and_the_file() {
    let sh = Shepherd::new();
    let (repo, path) = setup(&sh, "[paths]\nprotected = [\"src/[abc\"]\n", &[]);
    let file = repo.join("shepherd.toml").display().to_string();
    let out = in_checkout(&sh, &repo, &path, &["doctor", "--json"])
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let detail = json["config"]["detail"].as_str().unwrap_or_default();
    assert_eq!(json["config"]["ok"], false, "{stdout}");
    assert!(
        detail.contains("paths.protected[0]")
            && detail.contains(&file)
            && detail.contains("src/[abc"),
        "{detail}"
    );

    // In the user's config, `threads` (which needs the network) refuses it
    // before connecting: exit 2, and the key and file named.
    let user = sh.cwd().join("user.toml");
    std::fs::write(&user, "[paths]\nprotected = [\"a/{b\"]\n").unwrap();
    let out = sh
        .command()
        .args([
            "threads",
            "1",
            "--repo",
            "o/r",
            "--api-url",
            "http://127.0.0.1:9",
        ])
        .env("SHEPHERD_CONFIG", &user)
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("paths.protected[0]") && stderr.contains("user.toml"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("127.0.0.1:9"),
        "refused before any request: {stderr}"
    );
}

/// `shepherd doctor | head` and `shepherd status | head -1`: a reader that
/// goes away is a normal end (exit 0), never a panic with a backtrace.
#[test]
fn a_closed_stdout_is_a_normal_exit() {
    let sh = Shepherd::new();
    let (repo, path) = setup(&sh, "", &[]);
    let state = sh.cwd().join("state");
    for args in [
        vec!["doctor"],
        vec!["status", "--state-dir", state.to_str().unwrap()],
        vec!["--help"],
    ] {
        let mut child = sh
            .command()
            .args(&args)
            .current_dir(&repo)
            .env("PATH", &path)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Close the read end before the command writes a byte.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = text(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(
            matches!(out.status.code(), Some(0) | Some(1)),
            "{args:?}: {:?} {stderr}",
            out.status
        );
    }
}

/// With the real CLIs (the pinned set the end-to-end tests run) on `PATH`,
/// doctor reads each one's version and finds it supported; a CLI printing
/// another version is shown as untested, one printing none as unknown.
#[test]
fn doctor_shows_each_real_clis_version_against_the_supported_range() {
    let sh = Shepherd::new();
    let (repo, path) = setup(&sh, "", &["opencode"]);
    let real = shepherd_model_server::clis::installed_cli("claude");
    let real_bin = real.parent().unwrap();
    // The fake `opencode` (first on PATH) prints no version; a fake `codex`
    // of another series comes first too.
    let bin = sh.cwd().join("bin");
    let codex = bin.join("codex");
    std::fs::write(&codex, "#!/bin/sh\necho 'codex-cli 0.99.1'\n").unwrap();
    std::fs::set_permissions(&codex, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{path}:{}", real_bin.display());
    let out = in_checkout(&sh, &repo, &path, &["doctor", "--json"])
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let agent = |name: &str| agent_in(&json, name);
    for name in ["claude", "gemini", "copilot"] {
        let a = agent(name);
        assert_eq!(a["fit"], "supported", "{a}");
        assert_eq!(
            a["version"].as_str(),
            shepherd_model_server::clis::pinned_cli_version(name).as_deref(),
            "{a}"
        );
    }
    assert_eq!(agent("codex")["fit"], "untested", "{stdout}");
    assert_eq!(agent("codex")["version"], "0.99.1", "{stdout}");
    assert_eq!(agent("opencode")["fit"], "unknown", "{stdout}");

    let out = in_checkout(&sh, &repo, &path, &["doctor"])
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("2.1.332, supported (2.1.x)"),
        "claude's line: {stdout}"
    );
    assert!(
        stdout.contains("0.99.1, untested: Shepherd is tested with 0.171.0"),
        "{stdout}"
    );
}

/// `doctor --probe` with the real `claude` (the pinned release) pointed at
/// the scripted model server: one triage call, answered, timed and counted;
/// then the same against a server answering 401, which fails doctor and
/// names the cause. The forge token reaches neither.
#[test]
fn doctor_probe_makes_one_real_call_and_names_a_failure() {
    use serde_json::json;
    use shepherd_model_server::{Exchange, Failure, Match, ModelServer, Script, Step};

    let sh = Shepherd::new();
    let (repo, path) = setup(&sh, "[agent]\nprovider = \"claude\"\n", &[]);
    let real = shepherd_model_server::clis::installed_cli("claude");
    let path = format!("{path}:{}", real.parent().unwrap().display());
    let answer = json!({"items": [{"id": "PROBE_1", "decision": "already-addressed", "theme": null,
        "reasoning": "A probe; nothing to change.", "reply_hint": "Nothing to change.",
        "pr_changed_evidence": false}]});
    let doctor = |server: &ModelServer| {
        sh.command()
            .args(["doctor", "--probe", "--probe-timeout", "90", "--json"])
            .current_dir(&repo)
            .env("PATH", &path)
            .env("HOME", sh.cwd())
            .env("GITHUB_TOKEN", SECRET)
            .env("ANTHROPIC_BASE_URL", server.url())
            .env("ANTHROPIC_API_KEY", "sk-probe-key")
            .output()
            .unwrap()
    };

    let server = ModelServer::start(Script::new(vec![Exchange::new(
        "triage",
        Match::Contains("You are the triage agent".into()),
        vec![Step::Structured(answer)],
    )
    .usage(200, 40)]))
    .unwrap();
    let out = doctor(&server);
    let stdout = text(&out.stdout);
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let probes = json["probes"].as_array().unwrap();
    assert_eq!(
        probes.len(),
        1,
        "every role uses claude: one probe\n{stdout}"
    );
    let p = &probes[0];
    assert_eq!(p["provider"], "claude");
    assert_eq!(p["answered"], true, "{stdout}\n{}", text(&out.stderr));
    assert_eq!(p["roles"].as_array().unwrap().len(), 7, "{p}");
    assert!(p["elapsed_ms"].as_u64().unwrap() > 0, "{p}");
    assert!(p["usage"]["input_tokens"].as_u64().unwrap() >= 200, "{p}");
    assert!(!server.requests_of("triage").is_empty());
    for r in server.requests() {
        assert!(!r.contains(SECRET), "forge token sent to the model: {r:?}");
    }

    let failing = ModelServer::start(Script::new(vec![Exchange::new(
        "all",
        Match::Any,
        vec![Step::Fail(Failure::unauthorized())],
    )]))
    .unwrap();
    let out = doctor(&failing);
    assert_eq!(out.status.code(), Some(1), "a failed probe fails doctor");
    let json: serde_json::Value = serde_json::from_str(&text(&out.stdout)).unwrap();
    let p = &json["probes"][0];
    assert_eq!(p["answered"], false, "{p}");
    let error = p["error"].as_str().unwrap();
    assert!(
        error.contains("401 Unauthorized") && error.contains("ANTHROPIC_API_KEY"),
        "{error}"
    );
}

/// Without a model-calling provider there is nothing to probe, and doctor
/// says so instead of pretending a call was made.
#[test]
fn doctor_probe_with_the_builtin_provider_calls_nothing() {
    let sh = Shepherd::new();
    let (repo, path) = setup(&sh, "", &[]);
    let out = in_checkout(&sh, &repo, &path, &["doctor", "--probe"])
        .env("GITHUB_TOKEN", SECRET)
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("nothing to probe: every role uses the builtin provider"),
        "{stdout}"
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}");
}

/// Issue 13 point 8: the forge of an unknown host comes from `[forge]
/// gitlab_hosts` or `--forge`, the token is the forge's, an unknown forge
/// is not ok, the config files read are listed in order, an uncommitted
/// repository config is warned about, and a `SHEPHERD_CONFIG` naming no
/// file is an error.
#[test]
fn doctor_tells_the_forge_lists_the_config_files_and_warns() {
    let sh = Shepherd::new();
    let (repo, path) = setup(&sh, "[loop]\nmax_rounds = 3\n", &[]);
    let git = |args: &[&str]| git(&sh, &repo, args);
    git(&[
        "remote",
        "add",
        "origin",
        "git@git.corp.example:team/app.git",
    ]);
    let doctor = |extra: &[&str], env: &[(&str, &str)]| {
        let mut cmd = sh.command();
        cmd.arg("doctor")
            .args(extra)
            .current_dir(&repo)
            .env("PATH", &path)
            .env("GITLAB_TOKEN", SECRET);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        (out.status.code(), text(&out.stdout), text(&out.stderr))
    };

    // An unknown host: not ok, and the token cannot be told.
    let (code, out, _) = doctor(&[], &[]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("FAIL repository"), "{out}");
    assert!(out.contains("unknown forge"), "{out}");
    assert!(!out.contains("GH_TOKEN\n"), "{out}");

    // --forge gitlab: GITLAB_TOKEN is the token looked for and found.
    let (code, out, _) = doctor(&["--forge", "gitlab"], &[]);
    assert!(out.contains("ok   repository  origin is"), "{out}");
    assert!(out.contains("ok   token       a gitlab token"), "{out}");
    assert!(out.contains("$GITLAB_TOKEN"), "{out}");
    assert!(!out.contains(SECRET), "{out}");
    // The repository's shepherd.toml is untracked: a warning.
    assert!(
        out.contains("WARN shepherd.toml has changes git has not committed"),
        "{out}"
    );
    assert_eq!(code, Some(0), "a warning does not fail: {out}");

    // [forge] gitlab_hosts in the user's file says the same, and the files
    // read are listed, in order.
    let user = sh.cwd().join("user.toml");
    std::fs::write(&user, "[forge]\ngitlab_hosts = [\"git.corp.example\"]\n").unwrap();
    let user = user.display().to_string();
    let (code, out, _) = doctor(&["--json"], &[("SHEPHERD_CONFIG", &user)]);
    assert_eq!(code, Some(0), "{out}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(
        json["repository"]["detail"]
            .as_str()
            .unwrap()
            .ends_with("on gitlab"),
        "{json:#}"
    );
    let files: Vec<(String, String)> = json["config_files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["layer"].as_str().unwrap().to_owned(),
                f["path"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(files[0].0, "repository", "{files:?}");
    assert!(files[0].1.ends_with("repo/shepherd.toml"), "{files:?}");
    assert_eq!(files[1], ("user".to_owned(), user.clone()), "{files:?}");
    assert_eq!(files[2].0, "environment", "{files:?}");

    // Committed: no warning.
    git(&["add", "shepherd.toml"]);
    git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-qm",
        "config",
    ]);
    let (_, out, _) = doctor(&["--forge", "gitlab"], &[]);
    assert!(!out.contains("WARN"), "{out}");

    // SHEPHERD_CONFIG naming no file: an error, for doctor and the rest.
    let missing = sh.cwd().join("nope.toml").display().to_string();
    let (_, out, _) = doctor(&["--forge", "gitlab"], &[("SHEPHERD_CONFIG", &missing)]);
    assert!(out.contains("FAIL config"), "{out}");
    assert!(out.contains("nope.toml, which does not exist"), "{out}");
    let out = sh.run(
        &["threads", "1", "--repo", "o/r"],
        &[("SHEPHERD_CONFIG", &missing)],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("which does not exist"),
        "{}",
        text(&out.stderr)
    );
}
