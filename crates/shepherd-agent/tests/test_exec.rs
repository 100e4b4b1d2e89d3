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
    assert!(
        start.elapsed() < Duration::from_secs(4),
        "{:?}",
        start.elapsed()
    );
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
    assert!(
        start.elapsed() < Duration::from_secs(4),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(out.stdout, b"done\n");
    // Clean up the escaped process.
    let p = read_pid(&pid);
    let _ = std::process::Command::new("kill")
        .arg(p.to_string())
        .status();
}
