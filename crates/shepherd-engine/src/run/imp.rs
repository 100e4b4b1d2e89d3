//! The run: rounds until convergence, a pause, a failure or the round limit;
//! the per-PR lock; resume; the end of a run (status, worktree, report).

use std::path::PathBuf;
use std::sync::Arc;

use shepherd_core::config::{Config, ConfigLayer, OnExhaust};

use shepherd_core::converge::{after_round, LimitAction};
use shepherd_core::report::{build, ItemRecord, Report, ReportInput, RoundSummary, StageTime};
use shepherd_core::target::Target;
use shepherd_forge::Forge;

use crate::config::{ConfigRecord, RepoConfigSource};
use crate::error::{EngineError, Result};
use crate::options::{EngineOptions, ProgressEvent};
use crate::round::{Books, Round, RoundEnd, Runner, Setup, Tally};
use crate::run_dir::{PauseKind, RunDir, RunFile};
use crate::store::{
    ApprovalState, LockOutcome, PrKey, RunStatus, StateDir, Store, StoreError, Timestamp,
};
use crate::worktree::Git;

/// What `shepherd run` starts.
#[derive(Debug, Clone)]
pub struct RunSpec {
    /// The PR (and, in targeted mode, the thread).
    pub target: Target,
    /// Where to fetch and push the repository (`https://github.com/o/r.git`,
    /// the emulator's URL).
    pub git_url: String,
    /// The forge API URL, when not the host's default (saved for resume).
    pub api_url: Option<String>,
    /// The configuration layers of the user's side, lowest first: the
    /// user's checkout's `shepherd.toml` (when `repo_config` is
    /// [`RepoConfigSource::Checkout`]), the user's file, the environment,
    /// the flags. Recorded before the first stage (`config-layers.json`).
    pub layers: Vec<ConfigLayer>,
    /// Where the trusted repository file comes from: the user's checkout
    /// (already in `layers`), or the PR's base branch. The PR head's file
    /// is read either way, and may only tighten (see [`crate::ConfigRecord`]).
    pub repo_config: RepoConfigSource,
}

/// How a run (or a resumed run) stopped.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// The run id.
    pub run_id: String,
    /// Converged, paused, failed or exhausted.
    pub status: RunStatus,
    /// Why.
    pub reason: Option<String>,
    /// The run directory.
    pub run_dir: PathBuf,
    /// The report (also in `report.md` and `report.json`).
    pub report: Report,
    /// Where the worktree was kept, when it was.
    pub worktree_kept: Option<PathBuf>,
    /// Whether it ended on an invalid repository configuration
    /// ([`RunOutcome::failed_on_config`]).
    invalid_config: bool,
    /// `loop.succeed_when_handed_off` as the run had it
    /// ([`RunOutcome::succeeded`]).
    succeed_when_handed_off: bool,
}

impl RunOutcome {
    /// Whether the run failed because a configuration file it read during
    /// the run is invalid (the CLI exits as for a bad user config).
    pub fn failed_on_config(&self) -> bool {
        self.status == RunStatus::Failed && self.invalid_config
    }

    /// Whether the run ended as a success: `converged`, or `handed-off`
    /// where the user set `loop.succeed_when_handed_off`.
    pub fn succeeded(&self) -> bool {
        self.status == RunStatus::Converged
            || (self.status == RunStatus::HandedOff && self.succeed_when_handed_off)
    }
}

/// The engine: runs and resumes runs against one forge.
pub struct Engine {
    forge: Arc<dyn Forge>,
    state: StateDir,
    git: Git,
    opts: EngineOptions,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("state", &self.state)
            .field("git", &self.git)
            .field("opts", &self.opts)
            .finish_non_exhaustive()
    }
}

/// A new run id: `YYYYMMDD-HHMMSS-<number>-<4 hex>`.
fn new_run_id(number: u64, pid: u32) -> String {
    let now = Timestamp::now();
    let text = now.to_string(); // 2024-05-01T12:00:00.000Z
    let digits: String = text.chars().filter(char::is_ascii_digit).collect();
    let (date, time) = digits.split_at(8.min(digits.len()));
    let time = time.get(..6).unwrap_or(time);
    let salt = (now.as_millis() as u64)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(u64::from(pid).wrapping_mul(0xBF58_476D_1CE4_E5B9));
    format!("{date}-{time}-{number}-{:04x}", (salt >> 48) & 0xffff)
}

impl Engine {
    /// An engine for `forge`, keeping state in `state`, running git as `git`
    /// (with the forge's credentials).
    pub fn new(forge: Arc<dyn Forge>, state: StateDir, git: Git, opts: EngineOptions) -> Self {
        Engine {
            forge,
            state,
            git,
            opts,
        }
    }

    /// The runner of run `run`, its first worktree stage to come; `record`
    /// is the configuration the run was started with.
    fn runner(
        &self,
        store: Store,
        run: RunFile,
        dir: RunDir,
        config: Config,
        record: Option<ConfigRecord>,
    ) -> Runner {
        Runner {
            books: Books::new(store, run, dir, self.opts.progress.clone()),
            forge: self.forge.clone(),
            config,
            opts: self.opts.clone(),
            git: self.git_for_runs(),
            setup: Setup {
                config_record: record,
                ..Setup::default()
            },
            access: Default::default(),
        }
    }

    fn git_for_runs(&self) -> Git {
        match &self.opts.identity {
            Some((name, email)) => self.git.clone().with_identity(name, email),
            None => {
                let probe = std::env::temp_dir();
                let configured = self
                    .git
                    .stdout(&probe, &["config", "--global", "--get", "user.email"])
                    .is_ok_and(|s| !s.is_empty())
                    || std::env::var_os("GIT_AUTHOR_EMAIL").is_some();
                if configured {
                    self.git.clone()
                } else {
                    self.git
                        .clone()
                        .with_identity("Shepherd", "shepherd@localhost")
                }
            }
        }
    }

    fn lock(&self, store: &mut Store, pr: &PrKey, run_id: &str) -> Result<()> {
        match store.acquire_lock(
            pr,
            run_id,
            self.opts.pid,
            &self.opts.hostname,
            Timestamp::now(),
        )? {
            LockOutcome::Acquired => {}
            LockOutcome::TookOverStale {
                previous_pid,
                previous_hostname,
                previous_run,
            } => self.opts.progress.event(&ProgressEvent::Note {
                message: format!(
                    "took over the stale lock of run {previous_run} (pid {previous_pid} on \
                     {previous_hostname} is gone)"
                ),
            }),
        }
        Ok(())
    }

    /// Start a run of `spec.target` and drive it to its end.
    pub async fn start(&self, spec: RunSpec) -> Result<RunOutcome> {
        let mut store = Store::open_in(&self.state)?;
        let number = spec.target.number;
        let pr = PrKey::from_repo(self.forge.kind(), &spec.target.repo, number);
        let run_id = new_run_id(number, self.opts.pid);
        if let Some(paused) = store
            .runs_for_pr(&pr)?
            .into_iter()
            .find(|r| r.status == RunStatus::Paused)
        {
            // A paused run holds decisions (and maybe an approver's replies)
            // that a new run would silently drop.
            return Err(EngineError::PausedRunExists {
                run: paused.id,
                pr: pr.to_string(),
            });
        }
        self.lock(&mut store, &pr, &run_id)?;
        let created = (|| -> Result<(RunDir, Config, ConfigRecord)> {
            let record = ConfigRecord::new(&spec.layers, spec.repo_config)?;
            let config = record.effective()?.config;
            store.create_run(&run_id, &pr, Timestamp::now())?;
            let dir = RunDir::new(self.state.create_run_dir(&run_id)?);
            // Before the first stage: whatever stops the run, a resume has it.
            crate::run_dir::write_json(&dir.config_layers_file(), &record)?;
            Ok((dir, config, record))
        })();
        let (dir, config, record) = match created {
            Ok(v) => v,
            Err(err) => {
                let _ = store.release_lock(&pr, &run_id);
                return Err(err);
            }
        };
        let repo = &spec.target.repo;
        let run = RunFile {
            version: RunFile::VERSION,
            run_id: run_id.clone(),
            target: spec.target.clone(),
            pr: pr.clone(),
            git_url: spec.git_url.clone(),
            api_url: spec.api_url.clone(),
            cache_dir: self
                .state
                .root()
                .join("cache")
                .join(sanitize(&repo.host))
                .join(sanitize(&repo.owner))
                .join(format!("{}.git", sanitize(&repo.name))),
            worktree_dir: dir.worktree(),
            round: 0,
            round_limit: if spec.target.is_targeted() {
                1
            } else {
                config.loop_.max_rounds
            },
            head_ref: None,
            review_base: None,
            rerun_shas: Vec::new(),
            fix_history: Vec::new(),
            pause: None,
            agent: Default::default(),
            rounds: Vec::new(),
            failures: Vec::new(),
            clusters: Vec::new(),
            escalations: Vec::new(),
            cluster_rounds: Vec::new(),
            last_gate_state: None,
            last_open_items: Vec::new(),
            threads_look: None,
            last_ci: None,
            ci_failures: Vec::new(),
            repair_attempts: std::collections::BTreeMap::new(),
            last_reviewers: Vec::new(),
            last_changes_requested: Vec::new(),
            items: Default::default(),
            pr_url: String::new(),
            pr_title: String::new(),
            worktree_kept: None,
            held: Default::default(),
            untrusted: Vec::new(),
        };
        dir.save(&run)?;
        self.opts.progress.event(&ProgressEvent::RunStarted {
            run_id: run_id.clone(),
            target: spec.target.to_string(),
            resumed: false,
        });
        let runner = self.runner(store, run, dir, config, Some(record));
        Ok(drive(runner, 1).await)
    }

    /// Continue a paused or interrupted run where it stopped, without
    /// repeating public actions: the round it stopped in is re-entered from
    /// the top (a fresh fetch; items already replied to are no longer new;
    /// fixes already pushed are replied to, not redone; saved triage and
    /// approvals are reused). A run paused at the round limit gets another
    /// `max_rounds` rounds.
    pub async fn resume(&self, run_id: &str) -> Result<RunOutcome> {
        let mut store = Store::open_in(&self.state)?;
        let stored = store.get_run(run_id)?;
        if stored.status == RunStatus::Converged {
            return Err(EngineError::NotResumable {
                run: run_id.to_owned(),
                reason: "it converged".to_owned(),
            });
        }
        let dir = RunDir::new(self.state.run_dir(run_id)?);
        let mut run = dir.load()?;
        if run.pr != stored.pr {
            return Err(EngineError::NotResumable {
                run: run_id.to_owned(),
                reason: "run.json does not match the state database".to_owned(),
            });
        }
        let approvals_rejected = run.round > 0
            && store
                .approvals(run_id, run.round)?
                .iter()
                .any(|a| a.state == ApprovalState::Rejected);
        if approvals_rejected {
            return Err(EngineError::NotResumable {
                run: run_id.to_owned(),
                reason: "its triage was rejected; start a new run".to_owned(),
            });
        }
        let (config, record) = match resume_config(&dir) {
            Ok(v) => v,
            Err(err) => return Err(err),
        };
        self.lock(&mut store, &run.pr, run_id)?;
        let mut config = config;
        if let Some(mode) = self.opts.approve {
            config.approve.mode = mode;
        }
        if self.opts.reply_needs_human {
            config.approve.reply_needs_human = true;
        }
        let start = if run.pause == Some(PauseKind::Exhausted) {
            run.round_limit = run.round + config.loop_.max_rounds.max(1);
            run.round + 1
        } else {
            run.round.max(1)
        };
        if start == run.round {
            // The round it stopped in is re-entered: the time since the pause
            // is a wait of its own (the user's, for an approval), never the
            // time of the stage the round runs first (issue 28 point 6).
            store.append_event(
                run_id,
                Some(start),
                RESUMED,
                &serde_json::json!({ "wait": wait_name(run.pause) }),
                Timestamp::now(),
            )?;
        }
        run.pause = None;
        run.worktree_kept = None;
        store.set_run_status(run_id, RunStatus::Running, None, Timestamp::now())?;
        dir.save(&run)?;
        self.opts.progress.event(&ProgressEvent::RunStarted {
            run_id: run_id.to_owned(),
            target: run.target.to_string(),
            resumed: true,
        });
        let runner = self.runner(store, run, dir, config, record);
        Ok(drive(runner, start).await)
    }
}

/// The configuration of a run being resumed: computed from the layers it
/// was started with (`config-layers.json`; the repository files it has not
/// read yet are read by its first worktree stage). A run directory of an
/// older version without that file has its `config.toml`; one with neither
/// is not resumed, since the defaults are not what the run was started with.
fn resume_config(dir: &RunDir) -> Result<(Config, Option<ConfigRecord>)> {
    let layers = dir.config_layers_file();
    if layers.exists() {
        let record: ConfigRecord = crate::run_dir::read_json(&layers)?;
        let config = record.effective()?.config;
        return Ok((config, Some(record)));
    }
    match std::fs::read_to_string(dir.config_file()) {
        Ok(text) => {
            let path = dir.config_file().display().to_string();
            Ok((Config::layered(&[ConfigLayer::repo(path, text)])?, None))
        }
        Err(_) => Err(EngineError::NotResumable {
            run: dir
                .root()
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            reason: "its configuration was not recorded (neither config-layers.json nor                      config.toml is in its directory); start a new run"
                .to_owned(),
        }),
    }
}

fn sanitize(part: &str) -> String {
    part.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// How a run ends, before the bookkeeping.
struct End {
    status: RunStatus,
    reason: Option<String>,
    pause: Option<PauseKind>,
    remove_worktree: bool,
    /// The run failed on an invalid repository configuration.
    invalid_config: bool,
}

impl End {
    /// A run that ends with `status` for `reason`: no pause, its worktree
    /// kept, its configuration valid.
    fn new(status: RunStatus, reason: Option<String>) -> Self {
        End {
            status,
            reason,
            pause: None,
            remove_worktree: false,
            invalid_config: false,
        }
    }
}

/// Rounds from `first` until the run ends; never fails (an engine error
/// fails the run, with the error as its reason).
async fn drive(mut runner: Runner, first: u32) -> RunOutcome {
    let mut n = first;
    let end = loop {
        match one_round(&mut runner, n).await {
            Ok((tally, end)) => {
                let on_exhaust = runner.config.loop_.on_exhaust;
                let limit = runner.books.run.round_limit;
                match end {
                    RoundEnd::Converged => {
                        break End {
                            remove_worktree: true,
                            ..End::new(RunStatus::Converged, None)
                        }
                    }
                    RoundEnd::Ended { reason } => {
                        break End {
                            remove_worktree: true,
                            ..End::new(RunStatus::Failed, Some(reason))
                        }
                    }
                    RoundEnd::Failed { reason } => break End::new(RunStatus::Failed, Some(reason)),
                    RoundEnd::InvalidConfig { reason } => {
                        break End {
                            invalid_config: true,
                            ..End::new(RunStatus::Failed, Some(reason))
                        }
                    }
                    RoundEnd::Paused { kind, reason } => {
                        break End {
                            pause: Some(kind),
                            ..End::new(RunStatus::Paused, Some(reason))
                        }
                    }
                    RoundEnd::Restart { note } | RoundEnd::Next { note } => {
                        if tally.stalled {
                            // The note already ends in its own "(stalled: …)":
                            // said once, without nesting parentheses.
                            let note = note
                                .strip_suffix(crate::round::converge::STALLED_SUFFIX)
                                .unwrap_or(&note);
                            let reason = format!(
                                "stalled: round {n} ended in the same state as round {}, so \
                                 another round would change nothing; {note}",
                                n.saturating_sub(1)
                            );
                            break limit_end(on_exhaust, reason, &runner.books.run.run_id);
                        }
                        match after_round(n, limit, on_exhaust) {
                            LimitAction::Continue => n += 1,
                            _ => {
                                let reason = format!(
                                    "reached the round limit ({limit}) without converging: {note}"
                                );
                                break limit_end(on_exhaust, reason, &runner.books.run.run_id);
                            }
                        }
                    }
                }
            }
            Err(err) => {
                break End::new(RunStatus::Failed, Some(format!("round {n} stopped: {err}")))
            }
        }
    };
    finish(runner, end).await
}

fn limit_end(on_exhaust: OnExhaust, reason: String, run_id: &str) -> End {
    match on_exhaust {
        OnExhaust::Approval => End {
            pause: Some(PauseKind::Exhausted),
            ..End::new(
                RunStatus::Paused,
                Some(format!(
                    "{reason}. A person should look; `shepherd resume {run_id}` allows more \
                     rounds"
                )),
            )
        },
        OnExhaust::Fail => End::new(RunStatus::Exhausted, Some(reason)),
    }
}

/// One round: its bookkeeping around the stages.
async fn one_round(runner: &mut Runner, n: u32) -> Result<(Tally, RoundEnd)> {
    let run_id = runner.books.run.run_id.clone();
    runner.books.run.round = n;
    // Bound first: a guard in the scrutinee would live through the arms.
    let started = runner
        .books
        .store()
        .start_round(&run_id, n, "pr-state", Timestamp::now());
    match started {
        Ok(()) => {}
        Err(StoreError::RoundExists { .. }) => runner
            .books
            .store()
            .set_round_stage(&run_id, n, "pr-state")?,
        Err(err) => return Err(err.into()),
    }
    runner
        .books
        .store()
        .refresh_lock(&runner.books.run.pr, &run_id, Timestamp::now())?;
    runner.books.save_run()?;
    runner.books.emit(ProgressEvent::RoundStarted { round: n });
    let round = Round::new(n, runner.books.dir.create_round(n)?);
    let mut tally = Tally::default();
    let end = runner.run_round(&round, &mut tally).await?;
    let stored = runner
        .books
        .store()
        .rounds(&run_id)?
        .into_iter()
        .find(|r| r.number == n);
    let started_at = stored.as_ref().map_or(Timestamp::now(), |r| r.started_at);
    let stage = stored.map(|r| r.stage).unwrap_or_default();
    let (stage_times, tail_ms) = stage_times(
        &runner.books.store().events(&run_id)?,
        n,
        started_at,
        Timestamp::now(),
    );
    let ended = match &end {
        RoundEnd::Converged => "converged",
        RoundEnd::Next { .. } => "next round",
        RoundEnd::Restart { .. } => "restarted",
        RoundEnd::Paused { .. } => "paused",
        RoundEnd::Failed { .. } | RoundEnd::InvalidConfig { .. } => "failed",
        RoundEnd::Ended { .. } => "ended",
    };
    let note = match &end {
        RoundEnd::Converged => None,
        RoundEnd::Next { .. } => None,
        RoundEnd::Restart { note } => Some(note.clone()),
        RoundEnd::Paused { reason, .. }
        | RoundEnd::Failed { reason }
        | RoundEnd::InvalidConfig { reason }
        | RoundEnd::Ended { reason } => Some(reason.clone()),
    };
    let summary = RoundSummary {
        number: n,
        stage,
        new_items: tally.items,
        commits: tally.commits,
        pushed: tally.pushed.clone(),
        ci: tally.ci,
        stalled: tally.stalled,
        note,
        ended: Some(ended.to_owned()),
        stage_times,
        tail_ms,
    };
    runner.books.run.rounds.retain(|r| r.number != n);
    runner.books.run.rounds.push(summary);
    runner.books.save_run()?;
    // A report as of this round, beside its artifacts.
    if let Ok(report) = build_report(&runner.books.store(), &runner.books.run, "running", None) {
        let _ = crate::run_dir::write_json(&round.dir.join("report.json"), &report);
        let _ = crate::run_dir::write_text(&round.dir.join("report.md"), &report.to_markdown());
    }
    Ok((tally, end))
}

/// The event of a resume that re-enters the round its run stopped in; its
/// `wait` names the time since the stop ([`wait_name`]).
const RESUMED: &str = "resumed";

/// What a round waited for between its stop and the resume: the name its
/// time has in the round's stage times.
fn wait_name(pause: Option<PauseKind>) -> &'static str {
    match pause {
        Some(PauseKind::Approval) => "approval wait",
        Some(PauseKind::PendingReview) => "pending-review wait",
        Some(PauseKind::ReplyFailures) => "reply-failures wait",
        Some(PauseKind::Exhausted) => "round-limit wait",
        None => "interrupted",
    }
}

/// How long each stage of round `n` took, from the store's `stage` events
/// (each recorded when its stage completed), the first counted from the
/// round's start; and the time from the last one to `ended`, in ms. A
/// resume that re-entered the round ([`RESUMED`]) ends a wait, named by
/// what the round waited for: the stage run first after it counts from it.
fn stage_times(
    events: &[crate::store::Event],
    n: u32,
    started: Timestamp,
    ended: Timestamp,
) -> (Vec<StageTime>, u64) {
    let ms = |from: Timestamp, to: Timestamp| u64::try_from(to.0 - from.0).unwrap_or(0);
    let mut last = started;
    let mut times = Vec::new();
    for event in events
        .iter()
        .filter(|e| e.round == Some(n) && (e.kind == "stage" || e.kind == RESUMED))
    {
        let field = if event.kind == RESUMED {
            "wait"
        } else {
            "stage"
        };
        let Some(stage) = event.payload[field].as_str() else {
            continue;
        };
        times.push(StageTime {
            stage: stage.to_owned(),
            ms: ms(last, event.at),
        });
        last = event.at;
    }
    (times, ms(last, ended))
}

async fn finish(mut runner: Runner, mut end: End) -> RunOutcome {
    let run_id = runner.books.run.run_id.clone();
    if end.status == RunStatus::Converged {
        hand_off_what_waits(&runner, &mut end);
    }
    runner.books.run.pause = end.pause;
    if let Some(wt) = runner.setup.worktree.take() {
        if end.remove_worktree {
            let removed = match Arc::try_unwrap(wt) {
                Ok(wt) => tokio::task::spawn_blocking(move || wt.remove())
                    .await
                    .map_err(|e| e.to_string())
                    .and_then(|r| r.map_err(|e| e.to_string())),
                Err(_) => Err("the worktree is still in use".to_owned()),
            };
            if let Err(err) = removed {
                tracing::warn!(%err, "cannot remove the worktree");
                runner.books.run.worktree_kept = Some(runner.books.run.worktree_dir.clone());
            }
        } else {
            runner.books.run.worktree_kept = Some(runner.books.run.worktree_dir.clone());
        }
    } else if !end.remove_worktree && runner.books.run.worktree_dir.exists() {
        runner.books.run.worktree_kept = Some(runner.books.run.worktree_dir.clone());
    }
    if let Err(err) = runner.books.store().set_run_status(
        &run_id,
        end.status,
        end.reason.as_deref(),
        Timestamp::now(),
    ) {
        tracing::error!(%err, "cannot record the run's status");
    }
    let _ = runner.books.store().append_event(
        &run_id,
        None,
        "run-finished",
        &serde_json::json!({ "status": end.status.as_str(), "reason": end.reason }),
        Timestamp::now(),
    );
    if let Err(err) = runner.books.save_run() {
        tracing::error!(%err, "cannot save run.json");
    }
    let report = build_report(
        &runner.books.store(),
        &runner.books.run,
        end.status.as_str(),
        end.reason.clone(),
    )
    .unwrap_or_else(|err| {
        tracing::error!(%err, "cannot build the report from the ledger");
        build(&empty_input(
            &runner.books.run,
            end.status.as_str(),
            end.reason.clone(),
        ))
        .with_cluster_rounds(runner.books.run.cluster_rounds.iter().cloned())
        .with_ci_failures(runner.books.run.ci_failures.iter().cloned())
    });
    let _ = crate::run_dir::write_json(&runner.books.dir.root().join("report.json"), &report);
    let _ = crate::run_dir::write_text(
        &runner.books.dir.root().join("report.md"),
        &report.to_markdown(),
    );
    if let Err(err) = runner
        .books
        .store()
        .release_lock(&runner.books.run.pr, &run_id)
    {
        tracing::error!(%err, "cannot release the lock");
    }
    runner.books.emit(ProgressEvent::RunFinished {
        run_id: run_id.clone(),
        status: end.status,
        reason: end.reason.clone(),
    });
    RunOutcome {
        run_id,
        status: end.status,
        reason: end.reason,
        run_dir: runner.books.dir.root().to_path_buf(),
        report,
        worktree_kept: runner.books.run.worktree_kept.clone(),
        invalid_config: end.invalid_config,
        succeed_when_handed_off: runner.config.loop_.succeed_when_handed_off,
    }
}

/// A converged loop whose trusted items wait for a person ends `handed-off`
/// with those items named: "converged" is said only of a clear PR.
fn hand_off_what_waits(runner: &Runner, end: &mut End) {
    let report = match build_report(
        &runner.books.store(),
        &runner.books.run,
        RunStatus::Converged.as_str(),
        None,
    ) {
        Ok(report) => report,
        Err(err) => {
            // Whether anything waits is not known: not "converged" either.
            tracing::error!(%err, "cannot build the report from the ledger");
            end.status = RunStatus::HandedOff;
            end.reason = Some(format!(
                "the loop is done, but whether items wait for a person is not known (the \
                 ledger could not be read: {err})"
            ));
            return;
        }
    };
    let waiting = report.waiting_for_a_person();
    if waiting.is_empty() {
        return;
    }
    let named: Vec<String> = waiting
        .iter()
        .map(|t| match &t.path {
            Some(path) => format!("{} ({path})", t.item_id),
            None => t.item_id.clone(),
        })
        .collect();
    end.status = RunStatus::HandedOff;
    end.reason = Some(format!(
        "the loop is done, but {} item(s) wait for a person: {}",
        waiting.len(),
        named.join(", ")
    ));
}

fn empty_input(run: &RunFile, status: &str, reason: Option<String>) -> ReportInput {
    ReportInput {
        run_id: run.run_id.clone(),
        target: run.target.to_string(),
        pr_url: run.pr_url.clone(),
        title: run.pr_title.clone(),
        status: status.to_owned(),
        reason,
        rounds: run.rounds.clone(),
        items: Vec::new(),
        open_items: run.last_open_items.clone(),
        threads_look: run.threads_look.clone(),
        ci: run.last_ci.clone(),
        clusters: run.clusters.clone(),
        escalations: run.escalations.clone(),
        failures: run.failures.clone(),
        agent: run.agent.clone(),
        worktree_kept: run.worktree_kept.as_ref().map(|p| p.display().to_string()),
        attention: run
            .held
            .values()
            .map(|h| h.item.clone())
            .chain(run.untrusted.iter().cloned())
            .collect(),
        reviewers: run.last_reviewers.clone(),
        changes_requested: run.last_changes_requested.clone(),
    }
}

/// The report of a run from the ledger's latest entries and `run.json`.
pub(crate) fn build_report(
    store: &Store,
    run: &RunFile,
    status: &str,
    reason: Option<String>,
) -> Result<Report> {
    let mut input = empty_input(run, status, reason);
    input.items = store
        .latest_entries(&run.run_id)?
        .into_iter()
        .map(|r| {
            let info = run.items.get(&r.entry.item_id);
            ItemRecord {
                kind: info.map_or(shepherd_core::classify::ItemKind::ReviewThread, |i| i.kind),
                path: info.and_then(|i| i.path.clone()),
                line: info.and_then(|i| i.line),
                fix_kind: r.fix_kind,
                url: info.and_then(|i| i.url.clone()),
                reply: r.reply_body,
                entry: r.entry,
            }
        })
        .collect();
    Ok(build(&input)
        .with_cluster_rounds(run.cluster_rounds.iter().cloned())
        .with_ci_failures(run.ci_failures.iter().cloned()))
}

/// The report of run `run_id`, as `shepherd report` shows it (rebuilt from
/// the store and the run directory, so it is current even for a run that
/// was interrupted).
pub fn run_report(state: &StateDir, run_id: &str) -> Result<Report> {
    let store = Store::open_in(state)?;
    let run = store.get_run(run_id)?;
    let file = RunDir::new(state.run_dir(run_id)?).load()?;
    let status = effective_status(&store, &run);
    build_report(&store, &file, status.as_str(), run.reason)
}

/// A run's status as a person should read it: a `running` run whose lock
/// holder is gone is `interrupted`.
pub fn effective_status(store: &Store, run: &crate::store::Run) -> RunStatus {
    if run.status != RunStatus::Running {
        return run.status;
    }
    match store.lock(&run.pr) {
        Ok(Some(lock)) if lock.run_id == run.id => {
            let same_host = lock.hostname == crate::store::local_hostname();
            if same_host
                && !crate::store::ProcessProbe::is_alive(&crate::store::SystemProbe, lock.pid)
            {
                RunStatus::Interrupted
            } else {
                RunStatus::Running
            }
        }
        _ => RunStatus::Interrupted,
    }
}

/// `run.json` of run `run_id` (target, git URL, round, pause reason).
pub fn load_run_file(state: &StateDir, run_id: &str) -> Result<RunFile> {
    RunDir::new(state.run_dir(run_id)?).load()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;
    use crate::store::Event;

    fn event(seq: i64, round: Option<u32>, kind: &str, stage: &str, at: i64) -> Event {
        Event {
            seq,
            run_id: "r".into(),
            round,
            kind: kind.into(),
            payload: serde_json::json!({ "stage": stage }),
            at: Timestamp(at),
        }
    }

    #[test]
    fn stage_times_come_from_the_rounds_stage_events() {
        let events = [
            event(1, Some(1), "stage", "pr-state", 1_100),
            event(2, Some(1), "ci-rerun", "", 1_200),
            event(3, Some(2), "stage", "pr-state", 1_250),
            event(4, Some(1), "stage", "worktree", 1_400),
            event(5, Some(1), "stage", "ci", 7_400),
        ];
        let (times, tail) = stage_times(&events, 1, Timestamp(1_000), Timestamp(7_900));
        let got: Vec<(&str, u64)> = times.iter().map(|t| (t.stage.as_str(), t.ms)).collect();
        assert_eq!(got, [("pr-state", 100), ("worktree", 300), ("ci", 6_000)]);
        assert_eq!(tail, 500);
        // A resume of the round ends a wait, named so: the stage the round
        // runs first after it counts from the resume.
        let mut resumed = events.to_vec();
        resumed.push(Event {
            kind: RESUMED.into(),
            payload: serde_json::json!({ "wait": wait_name(Some(PauseKind::Approval)) }),
            ..event(6, Some(1), "", "", 60_000)
        });
        resumed.push(event(7, Some(1), "stage", "pr-state", 60_300));
        let (times, _) = stage_times(&resumed, 1, Timestamp(1_000), Timestamp(61_000));
        let got: Vec<(&str, u64)> = times.iter().map(|t| (t.stage.as_str(), t.ms)).collect();
        assert_eq!(
            got,
            [
                ("pr-state", 100),
                ("worktree", 300),
                ("ci", 6_000),
                ("approval wait", 52_600),
                ("pr-state", 300)
            ]
        );
        // No stage completed: everything is the tail.
        let (times, tail) = stage_times(&events, 3, Timestamp(1_000), Timestamp(1_800));
        assert!(times.is_empty());
        assert_eq!(tail, 800);
    }
}
