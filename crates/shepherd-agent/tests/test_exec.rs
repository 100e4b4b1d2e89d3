//! The process runner on its own.

use std::time::{Duration, Instant};

use shepherd_agent::exec::{run, EnvPolicy, ProcessSpec, Termination, TimeoutKind};

use crate::common::*;

fn spec(script: &str) -> ProcessSpec {
    ProcessSpec {
        program: "sh".into(),
        args: vec!["-c".into(), script.into()],
        cwd: std::env::temp_dir(),
        env: EnvPolicy::default(),
        stdin: b"hello".to_vec(),
        total_timeout: Duration::from_secs(20),
        idle_timeout: Duration::from_secs(20),
        kill_grace: Duration::from_millis(300),
        transcript: None,
    }
}

#[tokio::test]
async fn stdin_is_piped_and_outputs_are_captured() {
    let sb = Sandbox::new();
    let mut s = spec("cat; echo; echo oops >&2; pwd; exit 4");
    s.cwd = sb.worktree();
    let out = run(&s).await.unwrap();
    match out.termination {
        Termination::Exited(status) => assert_eq!(status.code(), Some(4)),
        other => panic!("{other:?}"),
    }
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        stdout,
        format!(
            "hello\n{}\n",
            sb.worktree().canonicalize().unwrap().display()
        )
    );
    assert_eq!(out.stderr, b"oops\n");
}

#[tokio::test]
async fn a_group_ignoring_sigterm_is_killed_after_the_grace() {
    let sb = Sandbox::new();
    let pid = sb.scratch("pid");
    let mut s = spec(&format!(
        "trap '' TERM; echo $$ > {}; while :; do sleep 0.1; done",
        pid.display()
    ));
    s.total_timeout = Duration::from_millis(500);
    let start = Instant::now();
    let out = run(&s).await.unwrap();
    assert_eq!(out.termination, Termination::TimedOut(TimeoutKind::Total));
    assert_within(start, Duration::from_secs(4));
    assert!(dies(read_pid(&pid)));
}

#[tokio::test]
async fn a_transcript_is_written_even_on_timeout() {
    let sb = Sandbox::new();
    let path = sb.transcripts().join("nested/x.json");
    let mut s = spec("echo partial; sleep 20");
    s.idle_timeout = Duration::from_millis(300);
    s.transcript = Some(path.clone());
    let out = run(&s).await.unwrap();
    assert_eq!(out.termination, Termination::TimedOut(TimeoutKind::Idle));
    let t = read_json(&path);
    assert_eq!(t["stdout"], "partial\n");
    assert_eq!(t["stdin"], "hello");
    assert_eq!(t["timed_out"], "idle");
    assert_eq!(t["exit"], serde_json::Value::Null);
    assert!(t["env"]
        .as_array()
        .unwrap()
        .iter()
        .all(|n| n != "GITHUB_TOKEN"));
}

#[tokio::test]
async fn a_missing_program_is_a_spawn_error() {
    let mut s = spec("");
    s.program = "/nonexistent/agent".into();
    let err = run(&s).await.unwrap_err();
    assert_eq!(err.to_string(), "could not start /nonexistent/agent");
}

#[tokio::test]
async fn a_child_that_leaves_its_group_does_not_hang_the_run() {
    // setsid puts the grandchild in a new session: it escapes the group kill
    // but must not make Shepherd wait for its pipes.
    if std::process::Command::new("setsid")
        .arg("--version")
        .output()
        .is_err()
    {
        return;
    }
    let sb = Sandbox::new();
    let pid = sb.scratch("pid");
    let s = spec(&format!(
        "setsid sh -c 'echo $$ > {}; sleep 5' & sleep 0.2; echo done",
        pid.display()
    ));
    let start = Instant::now();
    let out = run(&s).await.unwrap();
    assert!(matches!(out.termination, Termination::Exited(st) if st.success()));
    assert_within(start, Duration::from_secs(4));
    assert_eq!(out.stdout, b"done\n");
    // Clean up the escaped process.
    let p = read_pid(&pid);
    let _ = std::process::Command::new("kill")
        .arg(p.to_string())
        .status();
}

fn watch(no_progress: Duration) -> shepherd_agent::exec::Watch {
    use shepherd_agent::exec::{LineSignal, Watch};
    Watch {
        classify: std::sync::Arc::new(|_, line: &str| match line {
            "retry" => LineSignal::Retry,
            "work" => LineSignal::Progress,
            "denied" => LineSignal::Fatal("denied".into()),
            _ => LineSignal::Neutral,
        }),
        no_progress,
    }
}

#[tokio::test]
async fn retries_without_progress_are_stopped_before_the_idle_timeout() {
    // Retries every 100 ms forever: never idle, never progressing.
    let mut forever = spec("echo work; while true; do echo retry; sleep 0.1; done");
    forever.idle_timeout = Duration::from_secs(30);
    let started = std::time::Instant::now();
    let out = shepherd_agent::exec::run_watched(&forever, Some(&watch(Duration::from_millis(700))))
        .await
        .unwrap();
    assert_eq!(
        out.termination,
        Termination::TimedOut(TimeoutKind::NoProgress)
    );
    assert_within(started, Duration::from_secs(5));
    // Progress between the retries keeps it alive until it exits.
    let progressing = spec("for i in 1 2 3 4 5 6; do echo retry; sleep 0.2; echo work; done");
    let out =
        shepherd_agent::exec::run_watched(&progressing, Some(&watch(Duration::from_millis(700))))
            .await
            .unwrap();
    assert!(
        matches!(out.termination, Termination::Exited(s) if s.success()),
        "{:?}",
        out.termination
    );
}

#[tokio::test]
async fn a_fatal_line_stops_the_process_at_once() {
    let denied = spec("echo denied; sleep 20");
    let started = std::time::Instant::now();
    let out = shepherd_agent::exec::run_watched(&denied, Some(&watch(Duration::from_secs(60))))
        .await
        .unwrap();
    assert_eq!(out.stopped.as_deref(), Some("denied"));
    assert_within(started, Duration::from_secs(10));
}
