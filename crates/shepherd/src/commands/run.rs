//! `shepherd run`: drive a PR to a clean finish. Also the pieces `resume`
//! and `demo` share: state directory, configuration layers, git access,
//! progress lines, the TTY approver and the final output.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use anyhow::anyhow;
use clap::Args;
use shepherd_core::config::{ApproveMode, Overrides};
use shepherd_core::escape::visible;
use shepherd_core::target::Target;
use shepherd_core::{Decision, ForgeKind};
use shepherd_engine::{
    ApprovalChange, ApprovalRequest, ApprovalVerdict, Approver, Engine, EngineError, EngineOptions,
    Git, HttpCredentials, Progress, ProgressEvent, RunOutcome, RunSpec, RunStatus, StateDir,
    StoreError,
};
use shepherd_forge::Token;

use crate::error::{CliError, CliResult};
use crate::forge_setup::{
    config_layers, connect, current_checkout, current_forge_config, endpoint_hint,
    resolve_target_with, runtime, trusted_repo_config, with_target_scheme, ForgeArgs,
};
use crate::ui::color_enabled_stderr;

/// Drive a pull request to a clean finish: fix, reply, resolve, wait for CI, repeat
///
/// Rounds run until CI is green and no new feedback arrives (exit 0), a
/// person is needed (exit 3: approve or resume), the run fails (exit 1), or
/// the round limit is reached (exit 4). A `#discussion_r…` URL handles that
/// one thread only.
#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// The PR: `42`, `#42`, `owner/repo#42`, or a PR URL (with `#discussion_rN`: targeted mode)
    #[arg(value_name = "TARGET")]
    target: String,

    #[command(flatten)]
    forge: ForgeArgs,

    #[command(flatten)]
    common: CommonRunArgs,

    /// Most rounds this run makes (`loop.max_rounds`)
    #[arg(long, value_name = "N")]
    max_rounds: Option<u32>,
}

/// Flags `run`, `resume` and `demo` share.
#[derive(Debug, Clone, Args)]
pub(crate) struct CommonRunArgs {
    /// How reply-only decisions are approved: `prompt` asks on a terminal (and pauses without
    /// one), `auto` approves at once
    #[arg(long, value_name = "MODE", value_parser = parse_approve)]
    pub approve: Option<ApproveMode>,

    /// Where the state database and run directories live (default
    /// `$XDG_STATE_HOME/shepherd`)
    #[arg(long, value_name = "DIR", env = "SHEPHERD_STATE_DIR")]
    pub state_dir: Option<PathBuf>,

    /// Print the report as JSON on stdout (progress still goes to stderr)
    #[arg(long)]
    pub json: bool,

    /// Post the drafted reply on items Shepherd could not judge (needs-human);
    /// without it they are reported to you only (`approve.reply_needs_human`)
    #[arg(long)]
    pub reply_needs_human: bool,
}

fn parse_approve(text: &str) -> Result<ApproveMode, String> {
    match text {
        "auto" => Ok(ApproveMode::Auto),
        "prompt" => Ok(ApproveMode::Prompt),
        other => Err(format!(
            "`{other}` is not an approval mode; use `auto` or `prompt`"
        )),
    }
}

/// The state directory: `--state-dir`, `SHEPHERD_STATE_DIR`, XDG, HOME.
pub(crate) fn state_dir(flag: Option<PathBuf>) -> CliResult<StateDir> {
    StateDir::resolve(flag, |k| std::env::var(k).ok()).map_err(CliError::usage)
}

/// The git URL of the target's repository: beside `--api-url` when given
/// (the emulator, an Enterprise host), else `https://HOST/OWNER/NAME.git`.
pub(crate) fn git_url(target: &Target, api_url: Option<&str>) -> CliResult<String> {
    let repo = &target.repo;
    let Some(api) = api_url else {
        return Ok(format!(
            "https://{}/{}/{}.git",
            repo.host, repo.owner, repo.name
        ));
    };
    let url = url_base(api).ok_or_else(|| CliError::usage(anyhow!("invalid --api-url {api}")))?;
    Ok(format!("{url}/{}/{}.git", repo.owner, repo.name))
}

/// `scheme://host[:port]` of an API URL, with `/api/v3`, `/api/v4` or a
/// path prefix before them kept (a forge under a sub-path).
fn url_base(api: &str) -> Option<String> {
    let api = api.trim().trim_end_matches('/');
    let (scheme, rest) = api.split_once("://")?;
    if !matches!(scheme, "http" | "https") || rest.contains('@') {
        return None;
    }
    let rest = rest
        .strip_suffix("/api/v3")
        .or_else(|| rest.strip_suffix("/api/v4"))
        .unwrap_or(rest);
    Some(format!("{scheme}://{rest}"))
}

/// The git credentials of the forge's token (never shown, never given to agents).
pub(crate) fn git_with_credentials(target: &Target) -> CliResult<Git> {
    let host = &target.repo.host;
    let creds = match target.forge {
        ForgeKind::GitHub => {
            HttpCredentials::github(Token::discover(host).map_err(CliError::failure)?.expose())
        }
        ForgeKind::GitLab => HttpCredentials::gitlab(
            Token::discover_gitlab(host)
                .map_err(CliError::failure)?
                .expose(),
        ),
    };
    Ok(Git::new().with_credentials(creds))
}

/// ANSI styling of stderr, off without a TTY or with `NO_COLOR`.
#[derive(Debug, Clone, Copy)]
struct Paint {
    enabled: bool,
}

impl Paint {
    fn paint(self, code: &str, text: &str) -> String {
        if self.enabled {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }
    fn bold(self, text: &str) -> String {
        self.paint("1", text)
    }
    fn dim(self, text: &str) -> String {
        self.paint("2", text)
    }
    fn green(self, text: &str) -> String {
        self.paint("32", text)
    }
    fn yellow(self, text: &str) -> String {
        self.paint("33", text)
    }
    fn cyan(self, text: &str) -> String {
        self.paint("36", text)
    }
}

/// One line per stage on stderr; colour and symbols on a TTY.
pub(crate) struct LineProgress {
    style: Paint,
    tty: bool,
}

impl LineProgress {
    pub(crate) fn new() -> Self {
        LineProgress {
            style: Paint {
                enabled: color_enabled_stderr(),
            },
            tty: std::io::stderr().is_terminal(),
        }
    }
}

impl Progress for LineProgress {
    fn event(&self, event: &ProgressEvent) {
        let s = self.style;
        let line = match event {
            ProgressEvent::RunStarted {
                run_id,
                target,
                resumed,
            } => format!(
                "{} {} (run {run_id})",
                s.bold(if *resumed { "Resuming" } else { "Shepherding" }),
                visible(&target.to_string())
            ),
            ProgressEvent::RoundStarted { round } => s.bold(&format!("Round {round}")),
            ProgressEvent::Stage {
                round,
                stage,
                summary,
            } => {
                let mark = if self.tty { "✓" } else { "-" };
                format!(
                    "  {mark} {} {}",
                    s.cyan(&format!("{round}/{:<10}", stage.as_str())),
                    // Stage summaries and reasons quote forge text (paths,
                    // ids): visible escapes, never raw controls.
                    visible(summary)
                )
            }
            ProgressEvent::Waiting { round, what } => {
                let mark = if self.tty { "…" } else { "-" };
                format!(
                    "  {mark} {} {}",
                    s.dim(&format!("{round}/waiting   ")),
                    s.dim(&visible(what))
                )
            }
            ProgressEvent::Note { message } => {
                format!("  {} {}", s.yellow("note:"), visible(message))
            }
            ProgressEvent::RunFinished { status, reason, .. } => {
                let word = match status {
                    RunStatus::Converged => s.green("converged"),
                    RunStatus::Paused => s.yellow("paused"),
                    other => s.yellow(other.as_str()),
                };
                match reason {
                    Some(r) => format!("{} {word}: {}", s.bold("Run"), visible(r)),
                    None => format!("{} {word}", s.bold("Run")),
                }
            }
        };
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "{line}");
    }
}

/// The approval prompt on a terminal: approve all, change a decision, edit
/// a reply, reject, or decide later (pause).
pub(crate) struct TtyApprover {
    lock: Mutex<()>,
}

impl TtyApprover {
    /// A prompt when stdin and stderr are terminals.
    pub(crate) fn if_terminal() -> Option<Arc<dyn Approver>> {
        (std::io::stdin().is_terminal() && std::io::stderr().is_terminal()).then(|| {
            Arc::new(TtyApprover {
                lock: Mutex::new(()),
            }) as Arc<dyn Approver>
        })
    }
}

const DECISIONS: [Decision; 7] = [
    Decision::CodeChange,
    Decision::MetadataChange,
    Decision::Question,
    Decision::Wontfix,
    Decision::AlreadyAddressed,
    Decision::Invalid,
    Decision::NeedsHuman,
];

fn decision_word(d: Decision) -> String {
    serde_json::to_value(d)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

pub(crate) fn parse_decision(text: &str) -> Option<Decision> {
    DECISIONS
        .into_iter()
        .find(|d| decision_word(*d) == text.trim())
}

impl Approver for TtyApprover {
    fn review(&self, request: &ApprovalRequest) -> ApprovalVerdict {
        let _guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        let mut changes: Vec<ApprovalChange> = Vec::new();
        let stdin = std::io::stdin();
        let mut err = std::io::stderr();
        let mut read_line = |prompt: &str| -> Option<String> {
            let _ = write!(err, "{prompt}");
            let _ = err.flush();
            let mut line = String::new();
            match stdin.lock().read_line(&mut line) {
                Ok(0) | Err(_) => None,
                Ok(_) => Some(line.trim().to_owned()),
            }
        };
        loop {
            eprintln!(
                "\nRound {} triage (reply-only decisions need approval):",
                request.round
            );
            for (i, item) in request.items.iter().enumerate() {
                let change = changes.iter().find(|c| c.item_id == item.item_id);
                let decision = change.and_then(|c| c.decision).unwrap_or(item.decision);
                let reply = match change.and_then(|c| c.reply.clone()) {
                    Some(text) => text,
                    // The drafted reply was written for the triaged decision.
                    None if decision != item.decision => "(a reply is needed)".to_owned(),
                    None => item.reply.clone(),
                };
                // Paths, logins, reasons and replies are untrusted: no raw
                // control or bidi character reaches the terminal.
                let place = match (&item.path, item.line) {
                    (Some(p), Some(l)) => visible(&format!("{p}:{l}")),
                    (Some(p), None) => visible(p),
                    (None, _) => "(conversation)".to_owned(),
                };
                eprintln!(
                    "  [{}] {place} by @{} -> {}{}",
                    i + 1,
                    visible(item.author.as_deref().unwrap_or("ghost")),
                    decision_word(decision),
                    if item.needs_approval {
                        "  (needs approval)"
                    } else {
                        ""
                    }
                );
                eprintln!(
                    "      why:   {}",
                    visible(item.reasoning.lines().next().unwrap_or(""))
                );
                eprintln!(
                    "      reply: {}",
                    visible(reply.lines().next().unwrap_or(""))
                );
            }
            let Some(choice) = read_line(
                "[a]pprove all, [c]hange a decision, [e]dit a reply, [r]eject, [l]ater: ",
            ) else {
                return ApprovalVerdict::Defer;
            };
            match choice.as_str() {
                "a" | "approve" => return ApprovalVerdict::Approve(changes),
                "r" | "reject" => return ApprovalVerdict::Reject,
                "l" | "later" | "" => return ApprovalVerdict::Defer,
                "c" | "e" => {
                    let Some(n) = read_line("item number: ")
                        .and_then(|s| s.parse::<usize>().ok())
                        .and_then(|n| request.items.get(n.wrapping_sub(1)))
                    else {
                        eprintln!("no such item");
                        continue;
                    };
                    let entry = match changes.iter().position(|c| c.item_id == n.item_id) {
                        Some(i) => &mut changes[i],
                        None => {
                            changes.push(ApprovalChange {
                                item_id: n.item_id.clone(),
                                decision: None,
                                reply: None,
                            });
                            let last = changes.len() - 1;
                            &mut changes[last]
                        }
                    };
                    if choice == "c" {
                        let words: Vec<String> =
                            DECISIONS.iter().map(|d| decision_word(*d)).collect();
                        match read_line(&format!("decision ({}): ", words.join(", ")))
                            .as_deref()
                            .and_then(parse_decision)
                        {
                            Some(d)
                                if entry.reply.is_none()
                                    && shepherd_engine::changed_decision_needs_reply(
                                        n.decision, d,
                                    ) =>
                            {
                                // The drafted reply was written for the old
                                // decision: the new one needs its own.
                                match read_line(&format!(
                                    "reply for {} (one line; required): ",
                                    decision_word(d)
                                ))
                                .filter(|t| !t.is_empty())
                                {
                                    Some(text) => {
                                        entry.decision = Some(d);
                                        entry.reply = Some(text);
                                    }
                                    None => eprintln!(
                                        "a changed decision needs its own reply; decision not changed"
                                    ),
                                }
                            }
                            Some(d) => entry.decision = Some(d),
                            None => eprintln!("not a decision"),
                        }
                    } else if let Some(text) =
                        read_line("reply (one line): ").filter(|t| !t.is_empty())
                    {
                        entry.reply = Some(text);
                    }
                }
                _ => eprintln!("choose a, c, e, r or l"),
            }
        }
    }
}

/// The engine's error as the CLI reports it.
pub(crate) fn engine_error(err: EngineError) -> CliError {
    match err {
        EngineError::Store(StoreError::Locked { .. }) => CliError::failure(err).with_hint(
            "one run per pull request at a time: wait for it, or check it with `shepherd status`",
        ),
        EngineError::Config(_) => CliError::usage(err),
        EngineError::PausedRunExists { .. } => CliError::failure(err),
        EngineError::Store(StoreError::RunNotFound { .. } | StoreError::InvalidRunId { .. })
        | EngineError::NothingToApprove { .. }
        | EngineError::ReplyNeeded { .. }
        | EngineError::UnknownItem { .. } => CliError::usage(err),
        other => CliError::failure(other),
    }
}

/// Print the outcome (the report, or its JSON) and return the exit code.
pub(crate) fn print_outcome(outcome: &RunOutcome, json: bool) -> CliResult<u8> {
    let mut out = std::io::stdout().lock();
    let written = if json {
        serde_json::to_string_pretty(&outcome.report)
            .map_err(|e| CliError::failure(anyhow!(e)))
            .map(|text| writeln!(out, "{text}"))?
    } else {
        // The terminal's rendering; `report.md` keeps the Markdown.
        writeln!(
            out,
            "{}",
            shepherd_core::escape::terminal(&outcome.report.to_markdown())
        )
        .and_then(|()| {
            writeln!(out, "Run directory: {}", outcome.run_dir.display())?;
            if outcome.status == RunStatus::Paused {
                writeln!(out, "Continue with: shepherd resume {}", outcome.run_id)?;
            }
            Ok(())
        })
    };
    if let Err(err) = written {
        if err.kind() != std::io::ErrorKind::BrokenPipe {
            return Err(CliError::failure(anyhow!("cannot write the report: {err}")));
        }
    }
    Ok(outcome.exit_code())
}

/// Engine options for a command: progress lines, the TTY approver.
pub(crate) fn engine_options() -> EngineOptions {
    EngineOptions {
        progress: Arc::new(LineProgress::new()),
        approver: TtyApprover::if_terminal(),
        ..EngineOptions::default()
    }
}

pub(crate) fn cmd_run(args: RunArgs) -> CliResult<u8> {
    // Loaded once: the `[forge]` hosts decide the forge of a remote, and the
    // run is given the same layers.
    let mut layers = config_layers(Overrides {
        max_rounds: args.max_rounds,
        approve: args.common.approve,
        reply_needs_human: args.common.reply_needs_human.then_some(true),
        ..Overrides::default()
    })?;
    let target = resolve_target_with(&args.target, &args.forge, &layers)?;
    let forge_args = with_target_scheme(&args.target, &target, &args.forge);
    let (checkout_file, repo_config) = trusted_repo_config(&target)?;
    if let Some(file) = checkout_file {
        layers.insert(0, file);
        // Checked with the file before anything starts: a bad key is a
        // usage error naming the file.
        shepherd_core::config::Config::layered(&layers).map_err(CliError::usage)?;
    }
    let state = state_dir(args.common.state_dir.clone())?;
    let forge = connect(&target, &forge_args, &current_forge_config(&layers)?)?;
    let git = git_with_credentials(&target)?;
    let hint = endpoint_hint(&target, &forge_args);
    let spec = RunSpec {
        git_url: git_url(&target, forge_args.api_url.as_deref())?,
        api_url: forge_args.api_url.clone(),
        target,
        layers,
        repo_config,
    };
    let opts = EngineOptions {
        checkout: current_checkout(),
        ..engine_options()
    };
    let engine = Engine::new(forge, state, git, opts);
    let outcome = runtime()?
        .block_on(engine.start(spec))
        .map_err(|e| engine_error(e).with_unreachable_hint(|| hint))?;
    print_outcome(&outcome, args.common.json)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;

    #[test]
    fn git_urls_sit_beside_the_api() {
        assert_eq!(
            url_base("http://127.0.0.1:8080").unwrap(),
            "http://127.0.0.1:8080"
        );
        assert_eq!(
            url_base("https://ghe.corp/api/v3/").unwrap(),
            "https://ghe.corp"
        );
        assert_eq!(
            url_base("https://gl.corp/api/v4").unwrap(),
            "https://gl.corp"
        );
        assert!(url_base("ftp://x").is_none());
        assert!(url_base("https://user:pw@x").is_none());
        assert_eq!(
            parse_decision("already-addressed"),
            Some(Decision::AlreadyAddressed)
        );
        assert_eq!(parse_decision("nope"), None);
    }
}
