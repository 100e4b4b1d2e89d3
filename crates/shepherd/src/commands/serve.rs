//! `shepherd serve`: the local dashboard (the `shepherd-serve` crate), with
//! resuming done by this very binary's `shepherd resume`.

use std::fs::OpenOptions;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::anyhow;
use clap::Args;
use shepherd_core::ForgeKind;
use shepherd_engine::{RunStatus, StateDir};
use shepherd_forge::Token;
use shepherd_serve::{Resumer, ServeConfig, Server, RESUME_FAILURE_FILE};

use crate::commands::doctor::token_source;
use crate::error::{CliError, CliResult};
use crate::exit_codes;
use crate::setup::{runtime, state_dir};
use crate::ui::outln;

/// A local dashboard: runs, rounds, threads and approvals
///
/// Serves the state database and the run directories as web pages, read
/// live while runs progress. A paused run can be approved (a decision
/// changed, a reply edited), rejected and resumed from its page, through
/// the same code as `shepherd approve`, `reject` and `resume`. It listens
/// on loopback; the URL it prints carries a secret made at each start,
/// which every request needs.
#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// The port to listen on (0: any free port)
    #[arg(long, value_name = "P", default_value_t = 7717)]
    port: u16,

    /// The address to listen on; anything but loopback exposes the
    /// dashboard to the network, guarded only by its secret
    #[arg(long, value_name = "ADDR", default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    listen: IpAddr,

    /// Where the state database and run directories live (default
    /// `$XDG_STATE_HOME/shepherd`)
    #[arg(long, value_name = "DIR", env = "SHEPHERD_STATE_DIR")]
    state_dir: Option<PathBuf>,
}

/// Resumes a run by running `shepherd resume RUN --state-dir DIR` (this
/// binary), its output appended to `resume.log` in the run's directory.
struct ResumeCommand {
    exe: PathBuf,
    state: StateDir,
}

/// How long a resume is watched for a failure at its start: what fails
/// before the run gets going (no token for the run's host, the run locked
/// by another process, a bad configuration) fails within it.
const START_WATCH: Duration = Duration::from_secs(3);

/// Whether `status` is a resume that failed (exit 1 or 2), rather than a
/// run that ended paused, handed off or at its round limit.
fn failed(status: ExitStatus) -> bool {
    matches!(
        status.code(),
        Some(code) if code == i32::from(exit_codes::FAILURE) || code == i32::from(exit_codes::USAGE)
    ) || status.code().is_none()
}

/// What a failed resume said: its log from `from` on, from its `error:`
/// line (its last lines when it printed none), with how it ended.
fn failure_words(log: &Path, from: u64, status: ExitStatus) -> String {
    let text = std::fs::read(log)
        .ok()
        .and_then(|bytes| {
            let from = usize::try_from(from).ok()?;
            bytes
                .get(from..)
                .map(|b| String::from_utf8_lossy(b).into_owned())
        })
        .unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let said = match lines.iter().position(|l| l.starts_with("error: ")) {
        Some(at) => lines[at..].join("\n"),
        None => lines[lines.len().saturating_sub(5)..].join("\n"),
    };
    let how = match status.code() {
        Some(code) => format!("`shepherd resume` exited {code}"),
        None => "`shepherd resume` was killed".to_owned(),
    };
    format!(
        "{how} ({}):\n{said}\n(The dashboard's resume runs with the environment `shepherd serve` \
         was started with: set what is missing there and start it again, or run `shepherd \
         resume` in a terminal that has it.)",
        log.display()
    )
}

impl Resumer for ResumeCommand {
    fn resume(&self, run_id: &str) -> Result<(), String> {
        let dir = self.state.run_dir(run_id).map_err(|e| e.to_string())?;
        let log_path = dir.join("resume.log");
        let failure_path = dir.join(RESUME_FAILURE_FILE);
        if let Err(e) = std::fs::remove_file(&failure_path) {
            if e.kind() != std::io::ErrorKind::NotFound {
                return Err(format!("cannot remove {}: {e}", failure_path.display()));
            }
        }
        let log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .map_err(|e| format!("cannot open {}: {e}", log_path.display()))?;
        let from = log.metadata().map(|m| m.len()).unwrap_or(0);
        let err_log = log
            .try_clone()
            .map_err(|e| format!("cannot open {}: {e}", log_path.display()))?;
        let mut child = Command::new(&self.exe)
            .arg("resume")
            .arg(run_id)
            .arg("--state-dir")
            .arg(self.state.root())
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err_log)
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", self.exe.display()))?;
        // A failure at the start is this action's failure: said on the page.
        let started = Instant::now();
        while started.elapsed() < START_WATCH {
            match child.try_wait() {
                Ok(Some(status)) if failed(status) => {
                    return Err(failure_words(&log_path, from, status));
                }
                Ok(Some(_)) => return Ok(()),
                Ok(None) => std::thread::sleep(Duration::from_millis(50)),
                Err(e) => return Err(format!("cannot wait for shepherd resume: {e}")),
            }
        }
        let run = run_id.to_owned();
        // Reap it; its outcome is in the store (and its log), and a late
        // failure's words in the run's directory, for its page.
        std::thread::spawn(move || match child.wait() {
            Ok(status) if failed(status) => {
                let words = failure_words(&log_path, from, status);
                if let Err(e) = std::fs::write(&failure_path, words) {
                    tracing::warn!(%run, %e, "cannot record the resume's failure");
                }
            }
            Ok(status) => tracing::info!(%run, ?status, "shepherd resume ended"),
            Err(e) => tracing::warn!(%run, %e, "cannot wait for shepherd resume"),
        });
        Ok(())
    }
}

/// The forge hosts whose tokens a resume from the dashboard may need: each
/// forge's default host, then the hosts of the runs that can be resumed.
fn forge_hosts(state: &StateDir) -> Vec<(ForgeKind, String)> {
    let mut hosts: Vec<(ForgeKind, String)> = ForgeKind::ALL
        .into_iter()
        .map(|kind| (kind, kind.spec().default_host.to_owned()))
        .collect();
    let runs = shepherd_serve::view::runs(state, None, None).unwrap_or_else(|err| {
        tracing::debug!(%err, "cannot list the runs");
        Vec::new()
    });
    for row in runs {
        let resumable = matches!(row.status, RunStatus::Paused | RunStatus::Interrupted);
        if let (true, Some(file)) = (resumable, row.file) {
            let host = (file.target.forge, file.target.repo.host);
            if !hosts.contains(&host) {
                hosts.push(host);
            }
        }
    }
    hosts
}

/// What `serve` says at start: which forge tokens it has (by where each
/// comes from, never the token), since a resume from the dashboard runs
/// with this process's environment.
fn token_lines(hosts: &[(ForgeKind, String)]) -> Vec<String> {
    let mut lines = vec!["Forge tokens (a resume from the dashboard uses these):".to_owned()];
    for (kind, host) in hosts {
        let found = match Token::discover_for(*kind, host) {
            Ok(token) => format!("from {}", token_source(&token)),
            Err(err) => format!("none: {err}"),
        };
        lines.push(format!("  {host} ({}): {found}", kind.spec().display_name));
    }
    lines
}

pub(crate) fn cmd_serve(args: ServeArgs) -> CliResult<u8> {
    let state = state_dir(args.state_dir)?;
    let exe = std::env::current_exe()
        .map_err(|e| CliError::failure(anyhow!("cannot find the shepherd binary: {e}")))?;
    let approver = std::env::var("USER").unwrap_or_else(|_| "dashboard".to_owned());
    let config = ServeConfig {
        state: state.clone(),
        listen: SocketAddr::new(args.listen, args.port),
        resumer: Arc::new(ResumeCommand {
            exe,
            state: state.clone(),
        }),
        approver,
    };
    let hosts = forge_hosts(&state);
    runtime()?.block_on(async move {
        let server = Server::start(config)
            .await
            .map_err(|e| CliError::failure(anyhow!(e)))?;
        outln!("Shepherd dashboard for {}", state.root().display());
        for line in token_lines(&hosts) {
            outln!("{line}");
        }
        outln!("Open: {}", server.url());
        outln!("(the link carries this start's secret; Ctrl-C stops the dashboard)");
        server
            .wait()
            .await
            .map_err(|e| CliError::failure(anyhow!("the dashboard stopped: {e}")))
    })?;
    Ok(exit_codes::SUCCESS)
}
