//! Running an agent process safely: the one command factory every provider uses.
//!
//! - **Environment:** cleared, then rebuilt from an allow-list ([`BASE_ENV`]
//!   plus configured names and values). A variable whose name looks like it
//!   holds a credential ([`is_token_like`]) is not passed, even when
//!   configured, unless a provider names it as one of its own model
//!   credentials ([`EnvPolicy::credentials`]); a forge credential
//!   ([`is_forge_credential`]) is never passed, whatever the configuration:
//!   the forge token must not reach an agent.
//! - **Process group:** the agent leads its own group; on timeout (total, or
//!   idle: no output for a while), on cancellation (the future is dropped,
//!   e.g. on Ctrl-C) and after it exits (stragglers it left behind), the whole
//!   group is killed.
//! - **Transcript:** stdin, stdout, stderr, exit status and duration are
//!   written as JSON to the given path, whatever the outcome.
//! - **Watching the output** ([`run_watched`], [`Watch`]): a provider may
//!   read its CLI's output line by line while it runs. A line that says the
//!   CLI is retrying (a 429, a reconnect) starts the no-progress clock: when
//!   no progress line follows within [`Watch::no_progress`], the group is
//!   killed ([`TimeoutKind::NoProgress`]), long before the total timeout. A
//!   line that says the call cannot succeed (a 401) stops it at once
//!   ([`ProcessOutput::stopped`]).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use serde::Serialize;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;

/// Variables always passed through when set.
pub const BASE_ENV: [&str; 6] = ["PATH", "HOME", "LANG", "TERM", "TMPDIR", "USER"];

/// Keep at most this much stdout; more is an error (an answer is not that big).
pub const MAX_STDOUT: usize = 16 << 20;

/// Keep at most this much stderr in memory and in the transcript.
pub const MAX_STDERR: usize = 1 << 20;

/// Whether a variable name looks like it holds a credential.
///
/// Case-insensitive. Matches `*TOKEN*`, `*SECRET*`, `*PASSWORD*`, `*PASSWD*`,
/// `*CREDENTIAL*`, `*API_KEY*`, `*APIKEY*`, `*PRIVATE_KEY*`, `*_KEY`, `*_PAT`,
/// `*JWT*`, and every forge variable ([`is_forge_credential`]).
pub fn is_token_like(name: &str) -> bool {
    looks_secret(name) || is_forge_credential(name)
}

/// Whether a variable name looks like it holds a secret (the name patterns
/// of [`is_token_like`], and the forges' credential variables), as opposed
/// to a forge variable that only configures (`GITHUB_SERVER_URL`, `GH_HOST`).
/// Dropping one of these is worth a warning; dropping the others is not.
pub fn looks_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    const INFIXES: [&str; 8] = [
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "CREDENTIAL",
        "API_KEY",
        "APIKEY",
        "JWT",
    ];
    INFIXES.iter().any(|s| upper.contains(s))
        || upper.contains("PRIVATE_KEY")
        || upper.ends_with("_KEY")
        || upper.ends_with("_PAT")
        || shepherd_core::forges::is_forge_credential_name(name)
}

/// Tell the user once per process that `name` is kept from agents and
/// commands, when it looks like a secret; a dropped non-secret forge
/// variable (a URL, a host) is only logged at debug level.
fn note_dropped(name: &str, why: &str) {
    static WARNED: std::sync::Mutex<std::collections::BTreeSet<String>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    if !looks_secret(name) {
        tracing::debug!(variable = name, "not passing {why} to an agent");
        return;
    }
    let first = WARNED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(name.to_owned());
    if first {
        tracing::warn!(variable = name, "not passing {why} to an agent");
    }
}

/// Whether a variable name holds (or configures) forge credentials: the
/// rule derived from the forge registry
/// ([`shepherd_core::forges::is_forge_variable`]): every variable with a
/// forge's prefix (`GH_*`, `GITHUB_*`, `GITLAB_*`, `GL_*`, `GLAB_*`), any
/// name mentioning a forge (`COPILOT_GITHUB_TOKEN`), and every forge token
/// or credential variable (`CI_JOB_TOKEN`), which the configuration also
/// refuses in `agent.env`. Case-insensitive. A forge described in the
/// registry is sealed out here without further edits.
///
/// Such a variable never reaches an agent, not even as a provider's own
/// credential: GitHub Copilot uses its stored login instead.
pub fn is_forge_credential(name: &str) -> bool {
    shepherd_core::forges::is_forge_variable(name)
}

/// Which variables an agent gets.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct EnvPolicy {
    /// Extra names passed through from the parent environment when set;
    /// token-like names among them are dropped.
    pub pass: Vec<String>,
    /// Model credentials passed through from the parent environment when
    /// set, although their names look like tokens (`ANTHROPIC_API_KEY`).
    /// Each provider names exactly its own; forge credentials
    /// ([`is_forge_credential`]) are dropped even here.
    pub credentials: Vec<String>,
    /// Fixed values, set after the pass-through ones (and overriding them);
    /// token-like names among them are dropped. `Debug` shows their names only.
    pub set: Vec<(String, String)>,
    /// The parent environment the pass-through values come from; `None` is
    /// Shepherd's own. (Tests use a synthetic one.) `Debug` shows names only.
    pub parent: Option<Vec<(OsString, OsString)>>,
}

impl std::fmt::Debug for EnvPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnvPolicy")
            .field("pass", &self.pass)
            .field("credentials", &self.credentials)
            .field("set", &self.set.iter().map(|(k, _)| k).collect::<Vec<_>>())
            .field(
                "parent",
                &self
                    .parent
                    .as_ref()
                    .map(|p| p.iter().map(|(k, _)| k).collect::<Vec<_>>()),
            )
            .finish()
    }
}

impl EnvPolicy {
    /// The environment of an agent, from `parent`: [`BASE_ENV`] and `pass`
    /// names that are set, minus token-like ones; `credentials` names that
    /// are set, minus forge credentials; then `set`, minus token-like names.
    /// Sorted by name.
    pub fn build(
        &self,
        parent: impl IntoIterator<Item = (OsString, OsString)>,
    ) -> Vec<(OsString, OsString)> {
        let wanted: Vec<&str> = BASE_ENV
            .iter()
            .copied()
            .chain(self.pass.iter().map(String::as_str))
            .collect();
        let drop = note_dropped;
        let mut env: std::collections::BTreeMap<OsString, OsString> =
            std::collections::BTreeMap::new();
        for (name, value) in parent {
            let Some(n) = name.to_str() else { continue };
            if self.credentials.iter().any(|c| c == n) {
                if is_forge_credential(n) {
                    drop(n, "a forge credential");
                } else {
                    env.insert(name, value);
                }
            } else if wanted.contains(&n) {
                if is_token_like(n) {
                    drop(n, "a token-like variable");
                } else {
                    env.insert(name, value);
                }
            }
        }
        for (name, value) in &self.set {
            if is_token_like(name) {
                drop(name, "a token-like variable");
            } else {
                env.insert(name.into(), value.into());
            }
        }
        env.into_iter().collect()
    }

    /// [`Self::build`] from [`Self::parent`], else Shepherd's own environment.
    pub fn resolve(&self) -> Vec<(OsString, OsString)> {
        match &self.parent {
            Some(parent) => self.build(parent.iter().cloned()),
            None => self.build(std::env::vars_os()),
        }
    }
}

/// One agent process to run.
#[derive(Debug, Clone)]
pub struct ProcessSpec {
    /// The executable (a path, or a name looked up on the agent's `PATH`).
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// The working directory (the worktree).
    pub cwd: PathBuf,
    /// Which variables it gets.
    pub env: EnvPolicy,
    /// Written to its stdin, which is then closed.
    pub stdin: Vec<u8>,
    /// The longest it may run.
    pub total_timeout: Duration,
    /// The longest it may go without writing to stdout or stderr.
    pub idle_timeout: Duration,
    /// After SIGTERM to the group on timeout, how long before SIGKILL.
    pub kill_grace: Duration,
    /// Where the transcript goes; `None` keeps none.
    pub transcript: Option<PathBuf>,
}

/// Which limit was reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TimeoutKind {
    /// The total timeout.
    Total,
    /// The idle timeout (no output).
    Idle,
    /// Retrying without progress for [`Watch::no_progress`].
    NoProgress,
}

impl std::fmt::Display for TimeoutKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TimeoutKind::Total => "total",
            TimeoutKind::Idle => "idle",
            TimeoutKind::NoProgress => "no progress",
        })
    }
}

/// How the process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Termination {
    /// It exited by itself (possibly killed by a signal it did not get from us).
    Exited(ExitStatus),
    /// A timeout was reached and its group was killed.
    TimedOut(TimeoutKind),
}

/// What a process did.
#[derive(Debug, Clone)]
pub struct ProcessOutput {
    /// How it ended.
    pub termination: Termination,
    /// Its stdout (at most [`MAX_STDOUT`]).
    pub stdout: Vec<u8>,
    /// Its stderr (at most [`MAX_STDERR`]; the rest is dropped).
    pub stderr: Vec<u8>,
    /// Whether stdout went beyond [`MAX_STDOUT`] (the rest was dropped).
    pub stdout_truncated: bool,
    /// How long it ran.
    pub duration: Duration,
    /// Why it was stopped by its [`Watch`] ([`LineSignal::Fatal`]), if it was.
    pub stopped: Option<String>,
}

/// Which output a line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputStream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// What one line of a CLI's output says about its progress.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineSignal {
    /// Work is being done (a model answer, a tool call): the no-progress
    /// clock stops.
    Progress,
    /// The CLI is retrying or reconnecting: the no-progress clock runs (from
    /// the last progress) unless it already does.
    Retry,
    /// The call cannot succeed (bad credentials): stop it now, for this reason.
    Fatal(String),
    /// Says nothing either way.
    Neutral,
}

/// Classifies one line of output.
pub type Classifier = Arc<dyn Fn(OutputStream, &str) -> LineSignal + Send + Sync>;

/// A provider's reading of its CLI's output while it runs (see the module docs).
#[derive(Clone)]
pub struct Watch {
    /// Classifies each complete line (without its newline).
    pub classify: Classifier,
    /// How long retries may go on without a progress line.
    pub no_progress: Duration,
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watch")
            .field("no_progress", &self.no_progress)
            .finish_non_exhaustive()
    }
}

/// Splits output into lines for a [`Watch`].
#[derive(Default)]
struct Lines {
    pending: Vec<u8>,
}

/// A line longer than this is classified by its start only.
const MAX_WATCHED_LINE: usize = 64 << 10;

impl Lines {
    /// The complete lines in `pending` + `bytes`.
    fn feed(&mut self, bytes: &[u8]) -> Vec<String> {
        self.pending.extend_from_slice(bytes);
        let mut lines = Vec::new();
        while let Some(end) = self.pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=end).collect();
            let line = &line[..line.len() - 1];
            let line = &line[..line.len().min(MAX_WATCHED_LINE)];
            lines.push(String::from_utf8_lossy(line).trim_end().to_owned());
        }
        if self.pending.len() > MAX_WATCHED_LINE {
            self.pending.truncate(MAX_WATCHED_LINE);
        }
        lines
    }
}

/// The no-progress clock and a fatal stop, driven by a [`Watch`].
struct Progress<'a> {
    watch: Option<&'a Watch>,
    /// Set while retries go on without progress: when they must stop.
    deadline: Option<tokio::time::Instant>,
    last_progress: tokio::time::Instant,
    fatal: Option<String>,
    out: Lines,
    err: Lines,
}

impl Progress<'_> {
    fn feed(&mut self, stream: OutputStream, bytes: &[u8]) {
        let Some(watch) = self.watch else { return };
        let lines = match stream {
            OutputStream::Stdout => self.out.feed(bytes),
            OutputStream::Stderr => self.err.feed(bytes),
        };
        for line in lines {
            match (watch.classify)(stream, &line) {
                LineSignal::Progress => {
                    self.last_progress = tokio::time::Instant::now();
                    self.deadline = None;
                }
                LineSignal::Retry => {
                    if self.deadline.is_none() {
                        self.deadline = Some(self.last_progress + watch.no_progress);
                    }
                }
                LineSignal::Fatal(reason) => {
                    if self.fatal.is_none() {
                        self.fatal = Some(reason);
                    }
                }
                LineSignal::Neutral => {}
            }
        }
    }
}

/// Why a process could not be run.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// It could not be started.
    #[error("could not start {program}")]
    Spawn {
        /// The program.
        program: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// Waiting for it or reading its output failed.
    #[error("waiting for {program}")]
    Wait {
        /// The program.
        program: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The transcript could not be written.
    #[error("writing transcript {path}")]
    Transcript {
        /// The transcript's path.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

/// After the agent exits, how long its output pipes may stay open (held by a
/// process that left its group) before Shepherd stops reading them.
pub const DRAIN_AFTER_EXIT: Duration = Duration::from_secs(2);

/// The command for `spec` with environment `env`: the one place agent
/// processes are built.
fn command(spec: &ProcessSpec, env: &[(OsString, OsString)]) -> Command {
    let mut cmd = Command::new(&spec.program);
    cmd.args(&spec.args)
        .current_dir(&spec.cwd)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    cmd
}

/// Kills a process group when dropped, unless disarmed.
struct GroupGuard {
    pgid: Option<Pid>,
}

impl GroupGuard {
    fn kill(&self, signal: Signal) {
        if let Some(pgid) = self.pgid {
            // ESRCH (the group is gone) is the expected case after a clean exit.
            let _ = killpg(pgid, signal);
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill(Signal::SIGKILL);
    }
}

/// Spawn `cmd`, trying again a few times while the executable is "busy"
/// (ETXTBSY): a script written just before, by this process or another, can
/// be briefly held open for writing by a child forked meanwhile (the
/// descriptor lives in the child until its own exec), and the kernel then
/// refuses to run it. Any other error is returned at once.
async fn spawn(cmd: &mut tokio::process::Command) -> std::io::Result<tokio::process::Child> {
    const ETXTBSY: i32 = nix::errno::Errno::ETXTBSY as i32;
    let mut delay = Duration::from_millis(10);
    for _ in 0..6 {
        match cmd.spawn() {
            Err(err) if err.raw_os_error() == Some(ETXTBSY) => {
                tracing::debug!(?delay, "agent executable busy; trying again");
                tokio::time::sleep(delay).await;
                delay *= 2;
            }
            other => return other,
        }
    }
    cmd.spawn()
}

/// Runs `spec` to completion (see the module docs) and writes its transcript.
pub async fn run(spec: &ProcessSpec) -> Result<ProcessOutput, ExecError> {
    run_watched(spec, None).await
}

/// [`run`], with `watch` reading the output while it runs (see the module docs).
pub async fn run_watched(
    spec: &ProcessSpec,
    watch: Option<&Watch>,
) -> Result<ProcessOutput, ExecError> {
    let program = spec.program.display().to_string();
    let env = spec.env.resolve();
    let mut cmd = command(spec, &env);
    tracing::debug!(
        program = %program,
        args = ?spec.args,
        cwd = %spec.cwd.display(),
        env = ?env.iter().map(|(k, _)| k).collect::<Vec<_>>(),
        "spawning agent"
    );
    let started = Instant::now();
    let mut child = spawn(&mut cmd).await.map_err(|source| ExecError::Spawn {
        program: program.clone(),
        source,
    })?;
    // With process_group(0) the child's pid is its group's id.
    let guard = GroupGuard {
        pgid: child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .map(Pid::from_raw),
    };

    let writer = child.stdin.take().map(|mut stdin| {
        let input = spec.stdin.clone();
        tokio::spawn(async move {
            // A child that does not read its stdin closes the pipe: not an error here.
            let _ = stdin.write_all(&input).await;
            let _ = stdin.shutdown().await;
        })
    });
    let (Some(mut out), Some(mut err)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(ExecError::Wait {
            program,
            source: std::io::Error::other("stdout or stderr was not piped"),
        });
    };

    let mut deadline = tokio::time::Instant::now() + spec.total_timeout;
    let mut last_output = tokio::time::Instant::now();
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let mut stdout_truncated = false;
    let (mut out_open, mut err_open) = (true, true);
    let mut status: Option<ExitStatus> = None;
    let mut timed_out = None;
    let (mut obuf, mut ebuf) = (vec![0u8; 8192], vec![0u8; 8192]);
    let mut progress = Progress {
        watch,
        deadline: None,
        last_progress: tokio::time::Instant::now(),
        fatal: None,
        out: Lines::default(),
        err: Lines::default(),
    };
    // Far enough never to fire: no retries seen.
    let never = tokio::time::Instant::now() + spec.total_timeout + Duration::from_secs(3600);

    while status.is_none() || out_open || err_open {
        tokio::select! {
            n = out.read(&mut obuf), if out_open => match n {
                Ok(0) | Err(_) => out_open = false,
                Ok(n) => {
                    last_output = tokio::time::Instant::now();
                    let room = MAX_STDOUT.saturating_sub(stdout.len());
                    stdout_truncated |= n > room;
                    stdout.extend_from_slice(&obuf[..n.min(room)]);
                    progress.feed(OutputStream::Stdout, &obuf[..n]);
                    if progress.fatal.is_some() && status.is_none() {
                        break;
                    }
                }
            },
            n = err.read(&mut ebuf), if err_open => match n {
                Ok(0) | Err(_) => err_open = false,
                Ok(n) => {
                    last_output = tokio::time::Instant::now();
                    let room = MAX_STDERR.saturating_sub(stderr.len());
                    stderr.extend_from_slice(&ebuf[..n.min(room)]);
                    progress.feed(OutputStream::Stderr, &ebuf[..n]);
                    if progress.fatal.is_some() && status.is_none() {
                        break;
                    }
                }
            },
            s = child.wait(), if status.is_none() => {
                let s = s.map_err(|source| ExecError::Wait { program: program.clone(), source })?;
                status = Some(s);
                // Whatever it left behind goes too; then the pipes reach EOF.
                guard.kill(Signal::SIGKILL);
                deadline = deadline.min(tokio::time::Instant::now() + DRAIN_AFTER_EXIT);
            },
            _ = tokio::time::sleep_until(deadline) => {
                timed_out = Some(TimeoutKind::Total);
                break;
            },
            _ = tokio::time::sleep_until(last_output + spec.idle_timeout) => {
                timed_out = Some(TimeoutKind::Idle);
                break;
            },
            _ = tokio::time::sleep_until(progress.deadline.unwrap_or(never)), if status.is_none() => {
                timed_out = Some(TimeoutKind::NoProgress);
                break;
            },
        }
    }
    let stopped = progress.fatal.take().filter(|_| status.is_none());
    if let Some(reason) = &stopped {
        tracing::warn!(program = %program, %reason, "agent cannot succeed; killing its process group");
        guard.kill(Signal::SIGTERM);
        if tokio::time::timeout(spec.kill_grace, child.wait())
            .await
            .is_err()
        {
            guard.kill(Signal::SIGKILL);
        }
        status = child.wait().await.ok();
    }

    if status.is_some() && timed_out.is_some() {
        // It exited; something outside its group still holds the pipes.
        tracing::warn!(program = %program, "agent exited but its output stayed open; not waiting for it");
        timed_out = None;
    }
    if let Some(kind) = timed_out {
        tracing::warn!(program = %program, %kind, "agent timed out; killing its process group");
        if status.is_none() {
            guard.kill(Signal::SIGTERM);
            if tokio::time::timeout(spec.kill_grace, child.wait())
                .await
                .is_err()
            {
                guard.kill(Signal::SIGKILL);
                let _ = child.wait().await;
            }
        }
        guard.kill(Signal::SIGKILL);
    }
    if let Some(writer) = writer {
        writer.abort();
    }
    drop(guard);

    let output = ProcessOutput {
        termination: match (status, timed_out) {
            (Some(status), _) => Termination::Exited(status),
            (None, Some(kind)) => Termination::TimedOut(kind),
            // The loop only ends without a timeout once the status is known.
            (None, None) => Termination::TimedOut(TimeoutKind::Total),
        },
        stdout,
        stderr,
        stdout_truncated,
        duration: started.elapsed(),
        stopped,
    };
    if let Some(path) = &spec.transcript {
        write_transcript(path, spec, &env, &output)?;
    }
    Ok(output)
}

/// A saved transcript.
#[derive(Serialize)]
struct Transcript<'a> {
    version: u32,
    program: &'a str,
    args: &'a [String],
    cwd: &'a Path,
    /// Names only: values are not recorded.
    env: Vec<String>,
    stdin: std::borrow::Cow<'a, str>,
    stdout: std::borrow::Cow<'a, str>,
    stdout_truncated: bool,
    stderr: std::borrow::Cow<'a, str>,
    exit: Option<ExitRecord>,
    timed_out: Option<TimeoutKind>,
    /// Why its watch stopped it (a fatal error line), if it did.
    stopped: Option<&'a str>,
    duration_ms: u128,
}

#[derive(Serialize)]
struct ExitRecord {
    code: Option<i32>,
    signal: Option<i32>,
    success: bool,
}

fn write_transcript(
    path: &Path,
    spec: &ProcessSpec,
    env: &[(OsString, OsString)],
    output: &ProcessOutput,
) -> Result<(), ExecError> {
    use std::os::unix::process::ExitStatusExt;
    let program = spec.program.display().to_string();
    let transcript = Transcript {
        version: 1,
        program: &program,
        args: &spec.args,
        cwd: &spec.cwd,
        env: env
            .iter()
            .map(|(name, _)| name.to_string_lossy().into_owned())
            .collect(),
        stdin: String::from_utf8_lossy(&spec.stdin),
        stdout: String::from_utf8_lossy(&output.stdout),
        stdout_truncated: output.stdout_truncated,
        stderr: String::from_utf8_lossy(&output.stderr),
        exit: match output.termination {
            Termination::Exited(status) => Some(ExitRecord {
                code: status.code(),
                signal: status.signal(),
                success: status.success(),
            }),
            Termination::TimedOut(_) => None,
        },
        timed_out: match output.termination {
            Termination::TimedOut(kind) => Some(kind),
            Termination::Exited(_) => None,
        },
        stopped: output.stopped.as_deref(),
        duration_ms: output.duration.as_millis(),
    };
    let err = |source| ExecError::Transcript {
        path: path.to_owned(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(err)?;
    }
    let json = serde_json::to_vec_pretty(&transcript).map_err(|e| err(std::io::Error::other(e)))?;
    std::fs::write(path, json).map_err(err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_like_names() {
        for name in [
            "GITHUB_TOKEN",
            "GH_TOKEN",
            "GH_HOST",
            "GITHUB_ACTIONS",
            "GITLAB_URL",
            "gitlab_token",
            "SHEPHERD_TOKEN",
            "MY_SECRET_THING",
            "DB_PASSWORD",
            "ANTHROPIC_API_KEY",
            "SSH_KEY",
            "aws_secret_access_key",
            "NPM_AUTH_TOKEN",
            "CI_JOB_JWT_V2",
            "GITEA_PAT",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "Token",
        ] {
            assert!(is_token_like(name), "{name}");
        }
        // The base environment every agent gets, and a few look-alikes.
        let plain = ["KEYBOARD", "MONKEY", "EDITOR", "CARGO_HOME"];
        for name in BASE_ENV.into_iter().chain(plain) {
            assert!(!is_token_like(name), "{name}");
        }
    }

    #[test]
    fn only_secret_looking_names_are_worth_a_warning() {
        // Kept from agents, but configuration, not secrets: no warning.
        for name in [
            "GITHUB_SERVER_URL",
            "GITHUB_API_URL",
            "GITHUB_GRAPHQL_URL",
            "GH_HOST",
            "GITHUB_ACTIONS",
            "GITHUB_REPOSITORY",
            "GITLAB_URL",
            "CI_SERVER_URL",
        ] {
            assert!(!looks_secret(name), "{name}");
        }
        for name in [
            "GITHUB_TOKEN",
            "GH_TOKEN",
            "GITLAB_TOKEN",
            "CI_JOB_TOKEN",
            "COPILOT_GITHUB_TOKEN",
            "ANTHROPIC_API_KEY",
            "DB_PASSWORD",
        ] {
            assert!(looks_secret(name), "{name}");
            assert!(is_token_like(name), "{name}");
        }
    }

    fn parent() -> Vec<(OsString, OsString)> {
        [
            ("PATH", "/bin"),
            ("HOME", "/home/u"),
            ("GITHUB_TOKEN", "ghp_secret"),
            ("EDITOR", "vi"),
            ("RUST_LOG", "debug"),
            ("MY_API_KEY", "k"),
        ]
        .into_iter()
        .map(|(k, v)| (k.into(), v.into()))
        .collect()
    }

    fn names(env: &[(OsString, OsString)]) -> Vec<&str> {
        env.iter().map(|(k, _)| k.to_str().unwrap_or("?")).collect()
    }

    #[test]
    fn debug_shows_names_not_values() {
        let policy = EnvPolicy {
            pass: vec!["A".into()],
            credentials: vec!["K".into()],
            set: vec![("B".into(), "hunter2".into())],
            parent: Some(vec![("C".into(), "hunter3".into())]),
        };
        let shown = format!("{policy:?}");
        assert_eq!(
            shown,
            r#"EnvPolicy { pass: ["A"], credentials: ["K"], set: ["B"], parent: Some(["C"]) }"#
        );
    }

    #[test]
    fn forge_credentials() {
        for name in [
            "GITHUB_TOKEN",
            "GH_TOKEN",
            "GITLAB_TOKEN",
            "GL_TOKEN",
            "GLAB_TOKEN",
            "GH_ENTERPRISE_TOKEN",
            "GITHUB_ENTERPRISE_TOKEN",
            "COPILOT_GITHUB_TOKEN",
            "CI_JOB_TOKEN",
            "gh_host",
            "MY_GITHUB_PAT",
        ] {
            assert!(is_forge_credential(name), "{name}");
        }
        for name in [
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "GEMINI_API_KEY",
            "AWS_SECRET_ACCESS_KEY",
            "PATH",
        ] {
            assert!(!is_forge_credential(name), "{name}");
        }
    }

    #[test]
    fn every_forge_token_variable_is_sealed_from_agents() {
        use shepherd_core::ForgeKind;
        for kind in ForgeKind::ALL {
            let vars: Vec<&str> = kind.credential_vars().collect();
            assert!(!vars.is_empty(), "{kind}");
            let parent: Vec<(OsString, OsString)> = vars
                .iter()
                .map(|v| ((*v).into(), "forge-secret".into()))
                .chain([("PATH".into(), "/bin".into())])
                .collect();
            // Named as pass-through, credentials and fixed values: none gets in.
            let named: Vec<String> = vars.iter().map(|v| (*v).to_owned()).collect();
            let policy = EnvPolicy {
                pass: named.clone(),
                credentials: named.clone(),
                set: named.iter().map(|n| (n.clone(), "x".into())).collect(),
                parent: Some(parent),
            };
            let env = policy.resolve();
            assert_eq!(names(&env), ["PATH"], "{kind}");
            for var in vars {
                assert!(
                    is_forge_credential(var) && is_token_like(var),
                    "{kind}: {var}"
                );
            }
        }
    }

    #[test]
    fn credentials_pass_but_forge_credentials_never_do() {
        let parent: Vec<(OsString, OsString)> = [
            ("PATH", "/bin"),
            ("ANTHROPIC_API_KEY", "sk-ant"),
            ("OPENAI_API_KEY", "sk-openai"),
            ("GITHUB_TOKEN", "ghp_1"),
            ("COPILOT_GITHUB_TOKEN", "ghp_2"),
            ("GH_ENTERPRISE_TOKEN", "ghp_3"),
            ("GL_TOKEN", "glpat"),
        ]
        .into_iter()
        .map(|(k, v)| (k.into(), v.into()))
        .collect();
        let policy = EnvPolicy {
            credentials: vec![
                "ANTHROPIC_API_KEY".into(),
                "GITHUB_TOKEN".into(),
                "COPILOT_GITHUB_TOKEN".into(),
                "GH_ENTERPRISE_TOKEN".into(),
                "GL_TOKEN".into(),
                "UNSET_API_KEY".into(),
            ],
            set: vec![("OPENAI_API_KEY".into(), "sk-set".into())],
            parent: Some(parent),
            ..EnvPolicy::default()
        };
        let env = policy.resolve();
        assert_eq!(names(&env), ["ANTHROPIC_API_KEY", "PATH"]);
        assert!(!env
            .iter()
            .any(|(_, v)| v.to_string_lossy().starts_with("ghp")));
        assert!(!env.iter().any(|(_, v)| v == "sk-openai" || v == "sk-set"));
    }

    #[test]
    fn env_is_the_allow_list_only() {
        let env = EnvPolicy::default().build(parent());
        assert_eq!(names(&env), ["HOME", "PATH"]);
    }

    #[test]
    fn configured_token_like_names_are_still_dropped() {
        let policy = EnvPolicy {
            credentials: Vec::new(),
            parent: None,
            pass: vec![
                "RUST_LOG".into(),
                "GITHUB_TOKEN".into(),
                "MY_API_KEY".into(),
            ],
            set: vec![
                ("GH_TOKEN".into(), "x".into()),
                ("FAKE_MODE".into(), "1".into()),
                ("PATH".into(), "/opt/bin".into()),
            ],
        };
        let env = policy.build(parent());
        assert_eq!(names(&env), ["FAKE_MODE", "HOME", "PATH", "RUST_LOG"]);
        assert!(env.iter().any(|(k, v)| k == "PATH" && v == "/opt/bin"));
        assert!(!env.iter().any(|(_, v)| v == "ghp_secret"));
    }
}
