//! The approval prompt on a terminal, driven through a real pseudo-terminal
//! (`script` from util-linux gives the binary a TTY on stdin and stderr).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::common::{text, Shepherd};

/// Runs `shepherd demo --approve prompt` on a pseudo-terminal, typing `keys`;
/// returns the exit code, everything the terminal showed, and the state dir.
fn demo_on_a_tty(sh: &Shepherd, keys: &str) -> (Option<i32>, String, std::path::PathBuf) {
    let state = sh.cwd().join("state");
    let cmdline = format!(
        "{} demo --approve prompt --state-dir {}",
        env!("CARGO_BIN_EXE_shepherd"),
        state.display()
    );
    let mut child = Command::new("script")
        .args(["-qec", &cmdline, "/dev/null"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", sh.cwd())
        .env("NO_COLOR", "1")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .current_dir(sh.cwd())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("`script` (util-linux) runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(keys.as_bytes())
        .expect("typing");
    let out = child.wait_with_output().expect("the demo finishes");
    (
        out.status.code(),
        format!("{}{}", text(&out.stdout), text(&out.stderr)),
        // Demo runs keep to their own `demo/` state dir.
        state.join("demo"),
    )
}

fn emulator_state(state: &Path) -> String {
    let runs = state.join("runs");
    let run = std::fs::read_dir(&runs)
        .expect("a run directory")
        .next()
        .expect("one run")
        .expect("readable")
        .path();
    std::fs::read_to_string(run.join("emulator-state.json")).expect("the demo saved the state")
}

#[test]
fn approve_all_on_a_terminal_converges() {
    let sh = Shepherd::new();
    let (code, screen, _) = demo_on_a_tty(&sh, "a\n");
    assert!(
        screen.contains("[a]pprove all, [c]hange a decision, [e]dit a reply"),
        "{screen}"
    );
    assert!(screen.contains("(needs approval)"), "{screen}");
    assert_eq!(code, Some(0), "{screen}");
    assert!(screen.contains("converged"), "{screen}");
    // A wait (the verify command) is a spinner with the time waited,
    // cleared when the stage's line comes, not a plain line.
    assert!(
        screen.contains("1/waiting      0s verify: sh verify.sh"),
        "{screen}"
    );
    assert!(screen.contains("\x1b[2K"), "{screen}");
    assert!(!screen.contains("  - 1/waiting"), "{screen}");
}

#[test]
fn rejecting_on_a_terminal_posts_nothing_and_fails_the_run() {
    let sh = Shepherd::new();
    let (code, screen, state) = demo_on_a_tty(&sh, "r\n");
    assert_eq!(code, Some(1), "{screen}");
    assert!(screen.contains("nothing was posted"), "{screen}");
    let dump = emulator_state(&state);
    assert!(!dump.contains("shepherd:reply"), "no reply may be posted");
}

#[test]
fn an_edited_reply_on_a_terminal_is_the_reply_posted() {
    let sh = Shepherd::new();
    // Item 9 is the reviewer's top-level request, a needs-human decision.
    let (code, screen, state) = demo_on_a_tty(&sh, "e\n9\nThanks, noted for a follow-up PR.\na\n");
    assert_eq!(code, Some(0), "{screen}");
    assert!(
        screen.contains("reply: Thanks, noted for a follow-up PR."),
        "{screen}"
    );
    let dump = emulator_state(&state);
    assert!(
        dump.contains("Thanks, noted for a follow-up PR."),
        "the edited reply is posted"
    );
}
