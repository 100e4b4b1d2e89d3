//! `shepherd serve`: the local dashboard (the `shepherd-serve` crate), with
//! resuming done by this very binary's `shepherd resume`.

use std::fs::OpenOptions;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;

use anyhow::anyhow;
use clap::Args;
use shepherd_engine::StateDir;
use shepherd_serve::{Resumer, ServeConfig, Server};

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

impl Resumer for ResumeCommand {
    fn resume(&self, run_id: &str) -> Result<(), String> {
        let dir = self.state.run_dir(run_id).map_err(|e| e.to_string())?;
        let log_path = dir.join("resume.log");
        let log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .map_err(|e| format!("cannot open {}: {e}", log_path.display()))?;
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
        let run = run_id.to_owned();
        // Reap it; its outcome is in the store (and its log).
        std::thread::spawn(move || match child.wait() {
            Ok(status) => tracing::info!(%run, ?status, "shepherd resume ended"),
            Err(e) => tracing::warn!(%run, %e, "cannot wait for shepherd resume"),
        });
        Ok(())
    }
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
    runtime()?.block_on(async move {
        let server = Server::start(config)
            .await
            .map_err(|e| CliError::failure(anyhow!(e)))?;
        outln!("Shepherd dashboard for {}", state.root().display());
        outln!("Open: {}", server.url());
        outln!("(the link carries this start's secret; Ctrl-C stops the dashboard)");
        server
            .wait()
            .await
            .map_err(|e| CliError::failure(anyhow!("the dashboard stopped: {e}")))
    })?;
    Ok(exit_codes::SUCCESS)
}
