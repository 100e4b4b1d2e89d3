//! Issue 13, "the first hour": what a new user sees, from the demo to a real PR.

use crate::common::{assert_honest_end_state, shepherd_replies, Demo, Shepherd};

/// Point 2: with the builtin agent, the items it cannot judge are reported
/// to the user (progress, report), not answered on the forge with
/// boilerplate; `--reply-needs-human` posts the drafted reply.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn items_shepherd_cannot_judge_are_reported_not_answered() {
    let Demo { emu, api, sh } = Demo::start().await;
    let (code, out, err) = sh.run_pr(&api, "auto", &[]);
    // The loop is done, but 4 items wait for a person: `handed-off`, exit 5
    // (a CI job is not green while the PR is not clear).
    assert_eq!(code, crate::common::HANDED_OFF, "{out}\n{err}");
    assert!(
        err.contains("Run handed-off: the loop is done, but 4 item(s) wait for a person"),
        "{err}"
    );
    assert!(
        err.contains("4 needing your decision reported to you, not answered on the forge"),
        "{err}"
    );
    assert!(out.contains("## Needs your decision (4)"), "{out}");
    // Point 11: each item with its link and the reply posted.
    assert!(out.contains("  - link: `http://127.0.0.1:"), "{out}");
    // The report file keeps its Markdown.
    let run = sh.latest_run(&api);
    let dir = sh.state_dir().join("runs").join(&run);
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(md.contains("Status: **handed-off**"), "{md}");
    assert!(out.contains("Status: handed-off"), "{out}");
    assert!(out.contains("  - reply: \""), "{out}");
    // Forge-neutral words for a top-level comment (GitLab has no "PR").
    assert!(out.contains("(conversation)"), "{out}");
    assert!(!out.contains("PR conversation"), "{out}");
    assert!(
        !emu.state_json()
            .to_string()
            .contains("needs a maintainer's decision"),
        "no boilerplate on the forge"
    );
    // The six fixes are answered, nothing else.
    assert_honest_end_state(&emu, 42, 6);

    let Demo { emu, api, sh } = Demo::start().await;
    let (code, out, err) = sh.run_pr(&api, "auto", &["--reply-needs-human"]);
    assert_eq!(code, crate::common::HANDED_OFF, "{out}\n{err}");
    assert!(!out.contains("## Needs your decision"), "{out}");
    assert_eq!(shepherd_replies(&emu, 42).len(), 10);
}

/// Point 4: `status` shows what the approver judges (path, excerpt,
/// proposed reply), in text and JSON; an unknown `--thread` is named;
/// `approve` and `reject` speak JSON; after approving, `status` no longer
/// says decisions await approval.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approving_is_not_blind() {
    let Demo { emu, api, sh } = Demo::start().await;
    let (code, out, err) = sh.run_pr(&api, "prompt", &[]);
    assert_eq!(code, 3, "{out}\n{err}");
    let run = sh.latest_run(&api);

    let (code, out, err) = sh.run_at(&api, &["status", &run, "--json"]);
    assert_eq!(code, 0, "{err}");
    let status: serde_json::Value = serde_json::from_str(&out).unwrap();
    let pending = status["pending_approvals"].as_array().unwrap();
    assert_eq!(pending.len(), 4, "{status:#}");
    let on_a_file = pending
        .iter()
        .find(|p| p["path"].is_string())
        .expect("a pending item on a file");
    assert!(on_a_file["line"].is_u64(), "{on_a_file:#}");
    for p in pending {
        assert!(
            !p["excerpt"].as_str().unwrap_or("").is_empty(),
            "an excerpt: {p:#}"
        );
        assert!(
            !p["proposed_reply"].as_str().unwrap_or("").is_empty(),
            "a proposed reply: {p:#}"
        );
    }
    let (code, text_out, _) = sh.run_at(&api, &["status", &run]);
    assert_eq!(code, 0);
    let path = on_a_file["path"].as_str().unwrap();
    assert!(
        text_out.contains(&format!("{path}:{}", on_a_file["line"])),
        "{text_out}"
    );
    assert!(
        text_out.contains(&format!(
            "says:  {}",
            on_a_file["excerpt"].as_str().unwrap()
        )),
        "{text_out}"
    );
    assert!(text_out.contains("reply: "), "{text_out}");

    // An unknown id is named, as bad usage.
    let (code, _, err) = sh.run_at(&api, &["approve", &run, "--thread", "NOPE"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("item NOPE is not part of round 1"), "{err}");
    assert!(!err.contains("cannot be resumed"), "{err}");

    let (code, out, err) = sh.run_at(&api, &["approve", &run, "--json"]);
    assert_eq!(code, 0, "{err}");
    let approved: serde_json::Value = serde_json::from_str(&out).expect("approve --json");
    assert_eq!(approved["approved"], 4, "{approved:#}");
    assert_eq!(approved["run_id"], run.as_str());

    let (_, out, _) = sh.run_at(&api, &["status", &run, "--json"]);
    let status: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(status["pending_approvals"].as_array().unwrap().len(), 0);
    let reason = status["run"]["reason"].as_str().unwrap_or("");
    assert!(!reason.contains("await approval"), "{reason}");
    assert!(reason.contains("approved"), "{reason}");
    let (_, out, _) = sh.run_at(&api, &["status", &run]);
    assert!(!out.contains("await approval"), "{out}");

    // reject --json (on the approved, still paused run: abandoned).
    let (code, out, err) = sh.run_at(&api, &["reject", &run, "--json"]);
    assert_eq!(code, 0, "{err}");
    let rejected: serde_json::Value = serde_json::from_str(&out).expect("reject --json");
    assert_eq!(rejected["status"], "failed", "{rejected:#}");
    assert!(shepherd_replies(&emu, 42).is_empty(), "nothing posted");
}

/// `git` in `dir`, sealed from the user's config.
fn git(dir: &std::path::Path, args: &[&str]) {
    let status = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stdin(std::process::Stdio::null())
        .status()
        .expect("git runs");
    assert!(status.success(), "git {args:?}");
}

/// Asserts `shepherd threads` succeeded and listed the demo's PR.
#[track_caller]
fn assert_lists_the_demo_pr(out: &std::process::Output) {
    let stdout = crate::common::text(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        crate::common::text(&out.stderr)
    );
    assert!(stdout.contains("demo/authkit#42"), "{stdout}");
}

/// Point 1: an `http://` PR URL or remote is contacted over HTTP (no
/// `--api-url`); an unknown host with an http remote needs only `--forge`;
/// a forge that cannot be reached is named with the endpoint tried.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_urls_are_honoured_and_the_endpoint_is_named() {
    let Demo { emu, api: base, sh } = Demo::start().await;
    let token = [("GITHUB_TOKEN", crate::common::DEV_TOKEN)];

    // A PR URL on http://.
    let url = format!("{base}/demo/authkit/pull/42");
    let out = tokio::task::block_in_place(|| sh.run(&["threads", &url], &token));
    assert_lists_the_demo_pr(&out);

    // A clone whose origin is http://HOST:PORT/…: the host is unknown, so
    // the forge must be named, and nothing else.
    let clone = sh.home.path().join("authkit");
    std::fs::create_dir(&clone).unwrap();
    git(&clone, &["init", "-q"]);
    git(
        &clone,
        &["remote", "add", "origin", &emu.git_url("demo", "authkit")],
    );
    let in_clone = |args: &[&str]| {
        let mut cmd = sh.command();
        cmd.args(args).current_dir(&clone);
        for (k, v) in token {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    };
    let out = tokio::task::block_in_place(|| in_clone(&["threads", "42"]));
    let stderr = crate::common::text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("127.0.0.1"), "{stderr}");
    let out = tokio::task::block_in_place(|| in_clone(&["threads", "42", "--forge", "github"]));
    assert_lists_the_demo_pr(&out);

    // Nothing listens there: the error names the endpoint tried.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{closed}/o/r/pull/1");
    let out = tokio::task::block_in_place(|| sh.run(&["threads", &url], &token));
    let stderr = crate::common::text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "the forge API tried: http://127.0.0.1:{closed}/api/v3"
        )),
        "{stderr}"
    );
    assert!(!stderr.contains("InvalidContentType"), "{stderr}");
}

/// The acceptance of issues 13 and 28: after the README's install step,
/// its end-to-end lines run as written (RUN replaced by the run's id), each
/// by a shell, in a clone of the demo PR's repository on the emulator with
/// the token and the emulator's API URL in the environment (what `shepherd
/// emulator` tells to export), each with the exit code its comment says.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_end_to_end_commands_work_against_the_emulator() {
    let readme = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"),
    )
    .unwrap();
    let block = readme
        .split("<!-- first-hour:begin -->")
        .nth(1)
        .and_then(|rest| rest.split("<!-- first-hour:end -->").next())
        .expect("the README's end-to-end block");
    let lines: Vec<&str> = block
        .lines()
        .filter(|l| l.starts_with("shepherd "))
        .collect();
    assert!(lines.len() >= 6, "{block}");

    let Demo { emu, api, sh } = Demo::start().await;
    let path = sh.install();
    let clone_url = emu.git_url("demo", "authkit").replacen(
        "://",
        &format!("://x-access-token:{}@", crate::common::DEV_TOKEN),
        1,
    );
    let out = sh
        .shell(&path, &format!("git clone -q {clone_url} authkit"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", crate::common::text(&out.stderr));
    let clone = sh.home.path().join("authkit");
    let config = sh.home.path().join("shepherd-config.toml");
    std::fs::write(&config, crate::common::RUN_CONFIG).unwrap();
    let mut run_id = String::new();
    for line in lines {
        let line = line.replace(" RUN", &format!(" {run_id}"));
        let command = line.split_whitespace().nth(1).unwrap_or("").to_owned();
        let out = tokio::task::block_in_place(|| {
            sh.shell(&path, &line)
                .current_dir(&clone)
                .env("GITHUB_TOKEN", crate::common::DEV_TOKEN)
                .env("SHEPHERD_API_URL", &api)
                .env("SHEPHERD_STATE_DIR", sh.state_dir())
                .env("SHEPHERD_CONFIG", &config)
                .output()
                .unwrap()
        });
        let (stdout, stderr) = (
            crate::common::text(&out.stdout),
            crate::common::text(&out.stderr),
        );
        let expected = match command.as_str() {
            "run" => 3,
            // The builtin agent leaves items for a person: handed off.
            "resume" => crate::common::HANDED_OFF,
            _ => 0,
        };
        assert_eq!(
            out.status.code(),
            Some(expected),
            "{line}\n{stdout}\n{stderr}"
        );
        if command == "run" {
            run_id = sh.latest_run(&api);
        }
        if command == "resume" {
            // Rendered for the terminal (point 9): no Markdown markers.
            assert!(stdout.contains("Status: handed-off"), "{stdout}");
            assert!(
                !stdout.contains("\\_") && !stdout.contains("\\#"),
                "{stdout}"
            );
        }
    }
    assert!(!run_id.is_empty(), "the block runs `shepherd run`");
    assert_honest_end_state(&emu, 42, 6);
}

/// The `ci.json` of each round of the newest run, in round order.
fn ci_artifacts(sh: &Shepherd, api: &str) -> Vec<serde_json::Value> {
    let run = sh.latest_run(api);
    let rounds = sh.state_dir().join("runs").join(run).join("rounds");
    (1..)
        .map(|n| rounds.join(n.to_string()).join("ci.json"))
        .take_while(|p| p.exists())
        .map(|p| serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap())
        .collect()
}

/// Points 5 and 11: with the default 15 s poll interval, a quick check is
/// seen after the first short poll (2 s), not after the interval (the polls
/// `ci.json` records); non-secret forge variables (URLs) are kept from the
/// verify command without a warning, and a token warns once. The report's
/// rounds table says where each round ended, and its stage times.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quick_check_is_seen_soon_and_the_report_times_the_stages() {
    let Demo { emu: _emu, api, sh } = Demo::start().await;
    let config = sh.home.path().join("slow-poll.toml");
    std::fs::write(
        &config,
        "[trust]\nusers = [\"review-bot\"]\n[ci]\npoll_interval_secs = 15\ntimeout_secs = 120\n",
    )
    .unwrap();
    let out = tokio::task::block_in_place(|| {
        let mut cmd = sh.run_pr_cmd(&api, "auto", &[]);
        cmd.env("SHEPHERD_CONFIG", &config)
            .env("GITHUB_SERVER_URL", "https://github.example")
            .env("GITHUB_API_URL", "https://github.example/api/v3");
        cmd.output().unwrap()
    });
    let (stdout, stderr) = crate::common::exited(&out, crate::common::HANDED_OFF);

    let cis = ci_artifacts(&sh, &api);
    assert_eq!(cis.len(), 2, "two rounds waited for CI");
    for ci in &cis {
        assert_eq!(ci["verdict"]["status"], "PASS", "{ci:#}");
        let offsets: Vec<u64> = ci["poll_offsets_ms"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        assert_eq!(
            offsets.len() as u64,
            ci["polls"].as_u64().unwrap(),
            "{ci:#}"
        );
        // The first poll after the push comes after 2 s, not 15 s; the
        // check (about a second) is seen before one interval has passed.
        assert!(offsets[0] < 15_000, "{ci:#}");
        assert!(*offsets.last().unwrap() < 15_000, "{ci:#}");
    }

    for quiet in ["GITHUB_SERVER_URL", "GITHUB_API_URL"] {
        assert!(!stderr.contains(quiet), "{stderr}");
    }
    // Issue 28.6: a warning reads as a note, not as a raw log line.
    assert!(!stderr.contains(" WARN "), "{stderr}");
    assert!(!stderr.contains("shepherd_agent::"), "{stderr}");
    assert!(
        stderr
            .matches("warning: not passing a forge credential to an agent (variable: GITHUB_TOKEN)")
            .count()
            + stderr
                .matches("warning: not passing a token-like variable to an agent (variable: GITHUB_TOKEN)")
                .count()
            == 1,
        "a token warns once per run: {stderr}"
    );

    // Point 11: where each round ended, and its stage times.
    assert!(
        stdout.contains("| 1 | converge, then next round |"),
        "{stdout}"
    );
    assert!(
        stdout.contains("| 2 | converge, then converged |"),
        "{stdout}"
    );
    let times = stdout
        .lines()
        .find(|l| l.starts_with("- Round 1: pr-state "))
        .unwrap_or_else(|| panic!("round 1's stage times: {stdout}"));
    for stage in ["worktree ", "fix ", "ci ", "converge "] {
        assert!(times.contains(stage), "{times}");
    }
    assert!(times.contains("; total "), "{times}");
    let report: serde_json::Value = {
        let (_, out, _) = sh.run_at(&api, &["report", &sh.latest_run(&api), "--json"]);
        serde_json::from_str(&out).unwrap()
    };
    let round = &report["rounds"][0];
    assert_eq!(round["ended"], "next round", "{round:#}");
    assert!(
        round["stage_times"].as_array().unwrap().len() >= 10,
        "{round:#}"
    );
}

/// Point 7: a repository file the run reads from the forge (the base
/// branch's, the PR head's) that is not a valid configuration exits 2, as
/// the user's own file does, and the error names the copy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_repository_config_exits_2_and_names_its_copy() {
    use shepherd_emulator::{FileSpec, Scenario};
    for (tree, text, says) in [
        (
            "base",
            "[cluster]\nmin_volum = 7\n",
            "unknown key `cluster.min_volum` in shepherd.toml (base branch main at ",
        ),
        (
            "head",
            "[cluster\nmin_volume = 7\n",
            "invalid TOML in shepherd.toml on the pull request's head",
        ),
    ] {
        let mut scenario = Scenario::demo().unwrap();
        let files = if tree == "base" {
            &mut scenario.base
        } else {
            &mut scenario.head
        };
        files.insert("shepherd.toml".into(), FileSpec::text(text));
        let Demo { emu: _emu, api, sh } = Demo::with(scenario).await;
        let (code, out, err) = sh.run_pr(&api, "auto", &[]);
        assert_eq!(code, 2, "{tree}: {out}\n{err}");
        assert!(err.contains(says), "{tree}: {err}");
    }
}

/// Kills a child (a server) when the test ends, however it ends.
struct Serving(std::process::Child);

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `shepherd emulator` (the installed one, on `path`) and its banner, up to
/// its last line.
fn serve_emulator(sh: &Shepherd, path: &std::ffi::OsStr, args: &str) -> (Serving, String) {
    use std::io::BufRead;
    let mut child = sh
        .shell(path, &format!("exec shepherd emulator {args}"))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let serving = Serving(child);
    let mut banner = String::new();
    for line in std::io::BufReader::new(stdout).lines() {
        let line = line.unwrap();
        banner.push_str(&line);
        banner.push('\n');
        if line.starts_with("Press Ctrl-C") {
            break;
        }
    }
    (serving, banner)
}

/// Issue 10.10 and 28.4-5: `shepherd emulator` serves the embedded demo
/// without `--scenario`, and its banner's commands run as printed, in a
/// shell, from another directory: the clone works (no `could not read
/// Username`), `doctor` in it is ready and names the environment it read,
/// `threads` lists the PR and `run` works it (paused for approval: exit
/// 3); the command without a clone works after the export. On GitLab too.
#[test]
fn the_emulator_banner_commands_work_as_printed() {
    for (forge, args, pr) in [
        ("github", "", "demo/authkit#42"),
        ("gitlab", "--forge gitlab", "demo/authkit!42"),
    ] {
        let sh = Shepherd::new();
        let path = sh.install();
        let (_serving, banner) = serve_emulator(&sh, &path, args);
        assert!(banner.contains("serving demo/authkit"), "{banner}");
        // The indented block: clone, export, doctor, threads, run.
        let block: Vec<&str> = banner
            .lines()
            .skip_while(|l| !l.starts_with("  git clone "))
            .take_while(|l| l.starts_with("  "))
            .map(str::trim)
            .collect();
        assert_eq!(block.len(), 5, "{banner}");
        assert!(block[1].starts_with("export "), "{banner}");
        assert_eq!(block[4], "shepherd run 42", "{banner}");
        let without_clone = banner
            .lines()
            .find_map(|l| l.strip_prefix("Without a clone (after the export): "))
            .expect("the command without a clone");
        let script = format!(
            "{}\necho \"run exit: $?\"\n{without_clone}\n",
            block.join("\n")
        );
        let out = sh.shell(&path, &script).output().unwrap();
        let (stdout, stderr) = (
            crate::common::text(&out.stdout),
            crate::common::text(&out.stderr),
        );
        let all = format!("{forge}: {script}\n{stdout}\n{stderr}");
        assert!(out.status.success(), "{all}");
        assert!(sh.home.path().join("authkit/.git").is_dir(), "{all}");
        assert!(!stderr.contains("could not read Username"), "{all}");
        // doctor: ready, the forge told by SHEPHERD_API_URL, and the
        // variables it read named.
        assert!(stdout.contains("\nReady.\n"), "{all}");
        assert!(!stdout.contains("FAIL"), "{all}");
        assert!(
            stdout.contains(&format!("on {forge} (SHEPHERD_API_URL: http://127.0.0.1:")),
            "{all}"
        );
        assert!(
            stdout.contains(
                "environment SHEPHERD_API_URL (the forge API, as --api-url), \
                 SHEPHERD_STATE_DIR (the state directory, as --state-dir)"
            ),
            "{all}"
        );
        assert!(!stdout.contains("no SHEPHERD_* variable set"), "{all}");
        // threads (twice: in the clone, and without one) and run.
        assert!(stdout.matches(pr).count() >= 2, "{all}");
        assert!(stdout.contains("run exit: 3\n"), "{all}");
        assert!(stdout.contains("Continue with: shepherd resume "), "{all}");
    }
}

/// Point 10: `shepherd demo` keeps its runs out of the user's `shepherd
/// status` list (its own `demo/` state dir), leaves no clone cache for its
/// port behind, and ends with a command that works outside a checkout.
#[test]
fn demo_runs_keep_to_their_own_state_and_leave_no_clone_behind() {
    let sh = Shepherd::new();
    let state = sh.home.path().join("state");
    let env = [("SHEPHERD_STATE_DIR", state.to_str().unwrap())];
    let out = sh.run(&["demo"], &env);
    let stderr = crate::common::text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let last = stderr
        .lines()
        .find_map(|l| l.strip_prefix("Explore the demo yourself: "))
        .expect("the explore hint");
    assert_eq!(last, "shepherd emulator", "{stderr}");
    assert!(stderr.contains(&format!("--state-dir {}", state.join("demo").display())));

    let out = sh.run(&["status", "--json"], &env);
    assert_eq!(out.status.code(), Some(0));
    let runs: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(runs.as_array().map(Vec::len), Some(0), "{runs:#}");
    let demo_state = state.join("demo");
    assert_eq!(
        std::fs::read_dir(demo_state.join("runs")).unwrap().count(),
        1
    );
    let cached: Vec<_> = std::fs::read_dir(demo_state.join("cache"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(cached.is_empty(), "{cached:?}");
}

/// Point 7: with the builtin provider a failing verify command is not said
/// to have had "one repair attempt": the builtin provider makes none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_repair_attempt_is_claimed_when_none_was_made() {
    use shepherd_emulator::{FileSpec, Scenario};
    let mut scenario = Scenario::demo().unwrap();
    scenario.head.insert(
        "verify.sh".into(),
        FileSpec {
            contents: b"#!/bin/sh\necho broken\nexit 1\n".to_vec(),
            executable: true,
        },
    );
    let Demo { emu: _emu, api, sh } = Demo::with(scenario).await;
    let (code, out, err) = sh.run_pr(&api, "auto", &[]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        err.contains("the builtin provider makes no repair attempt"),
        "{err}"
    );
    assert!(!err.contains("after one repair attempt"), "{err}");
    assert!(!out.contains("after one repair attempt"), "{out}");
}

/// Point 7: a GitLab run speaks of merge requests and conversations, never
/// of "PR conversation" or "PR comment".
#[test]
fn gitlab_runs_use_gitlab_nouns() {
    let sh = Shepherd::new();
    let (out, stdout, stderr, _) = sh.demo(&["--forge", "gitlab"]);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.starts_with("# Shepherd report: merge request "),
        "{stdout}"
    );
    assert!(stdout.contains("(conversation)"), "{stdout}");
    for text in [&stdout, &stderr] {
        assert!(!text.contains("PR conversation"), "{text}");
        assert!(!text.contains("PR comment"), "{text}");
    }
}

/// Issue 28.3: `shepherd demo --approve prompt` without a terminal pauses,
/// keeps its emulator serving, and the commands it prints approve and
/// resume the run as printed (in a shell, from the user's directory, with
/// the default state directory): the run ends handed off.
#[test]
fn a_paused_demo_says_commands_that_resume_it() {
    use std::io::BufRead;
    let sh = Shepherd::new();
    let path = sh.install();
    let mut child = sh
        .shell(&path, "exec shepherd demo --approve prompt")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let _serving = Serving(child);
    let mut said = String::new();
    let mut block = Vec::new();
    let mut lines = std::io::BufReader::new(stderr).lines();
    for line in lines.by_ref() {
        let line = line.unwrap();
        said.push_str(&line);
        said.push('\n');
        if line.starts_with("  export ") || line.starts_with("  shepherd ") {
            block.push(line.trim().to_owned());
        }
        if line.starts_with("  shepherd resume ") {
            break;
        }
    }
    // Keep reading what the demo says next (a closed pipe would end it).
    std::thread::spawn(move || lines.for_each(drop));
    assert!(
        said.contains("The run is paused for your approval"),
        "{said}"
    );
    assert_eq!(block.len(), 4, "{said}");
    let out = sh.shell(&path, &block.join("\n")).output().unwrap();
    let (stdout, stderr) = (
        crate::common::text(&out.stdout),
        crate::common::text(&out.stderr),
    );
    assert_eq!(
        out.status.code(),
        Some(crate::common::HANDED_OFF),
        "{said}\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains("Status: handed-off"), "{stdout}");
    assert!(!stderr.contains("no token for"), "{stderr}");
    assert!(!stderr.contains("error: no run"), "{stderr}");
}
