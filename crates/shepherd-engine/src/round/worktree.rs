//! Stage 2, worktree: the run's isolated worktree (a linked worktree of a
//! bare cache clone under the state directory; the user's checkout is never
//! touched), re-synced to the live remote head every round
//! (`worktree.json`). On the first round of a run, the repository's
//! configuration is read from the worktree and the agents are set up. The
//! stage's product is the [`Workspace`] the later stages work in.

use std::sync::Arc;

use serde::Serialize;
use shepherd_core::config::{
    repo_config_path, Config, LayerRecord, SourceRecord, REPO_CONFIG_PATHS,
};
use shepherd_core::model::PrSnapshot;

use super::pr_state::short;
use super::runner::{Books, Setup};
use super::state::{Round, RoundEnd, Step, Synced};
use super::workspace::{git_in, Workspace};
use crate::config::{ConfigRecord, RepoFile};
use crate::error::{EngineError, Result};
use crate::options::{Agents, CheckAgents, EngineOptions, ProgressEvent, Stage};
use crate::run_dir::{write_json, write_text};
use crate::worktree::{
    clear_stale_git_locks, CommitSha, Git, LockSweep, SyncOutcome, Worktree, WorktreeError,
};

#[derive(Serialize)]
struct WorktreeArtifact<'a> {
    path: String,
    created: bool,
    sync: &'a SyncOutcome,
    pr_head: &'a str,
    note: Option<String>,
}

/// The run's worktree synced to the PR's live head, and (on the run's
/// first round) the repository's configuration read and the agents set
/// up, into `setup` and `config`.
pub(crate) async fn stage(
    books: &mut Books,
    git: &Git,
    opts: &EngineOptions,
    setup: &mut Setup,
    config: &mut Config,
    round: &Round,
    snapshot: PrSnapshot,
) -> Result<Step<(Synced, Workspace)>> {
    let head_ref = snapshot.pr.head_ref.clone();
    let pr_head = snapshot.pr.head_sha.clone();
    let mut created = false;
    let wt = if let Some(wt) = &setup.worktree {
        Arc::clone(wt)
    } else {
        let git = git.clone();
        let cache = books.run.cache_dir.clone();
        let dir = books.run.worktree_dir.clone();
        let url = books.run.git_url.clone();
        let head = head_ref.clone();
        let made = tokio::task::spawn_blocking(move || -> Result<(Worktree, bool, LockSweep)> {
            Worktree::init_bare(&git, &cache)?;
            // The first git command of this process on the run: none of
            // ours is running, and the PR lock says no other Shepherd
            // works on this run. Locks a killed process left go first.
            let sweep = clear_stale_git_locks(&cache, &dir)?;
            if dir.exists() {
                match Worktree::open(&git, &cache, &dir, &url) {
                    Ok(wt) => return Ok((wt, false, sweep)),
                    Err(err) => {
                        tracing::warn!(%err, dir = %dir.display(), "recreating the worktree");
                        let _ = std::fs::remove_dir_all(&dir);
                    }
                }
            }
            Ok((
                Worktree::create(&git, &cache, &dir, &url, &head)?,
                true,
                sweep,
            ))
        })
        .await
        .map_err(|e| EngineError::Task(e.to_string()))?;
        let (wt, fresh, sweep) = match made {
            Ok(made) => made,
            Err(err) => {
                return Ok(Err(RoundEnd::Failed {
                    reason: format!("cannot set up the worktree: {err}"),
                }))
            }
        };
        report_lock_sweep(books, round, &sweep)?;
        created = fresh;
        let wt = Arc::new(wt);
        setup.worktree = Some(Arc::clone(&wt));
        wt
    };
    let head = head_ref.clone();
    let sync = match git_in(&wt, move |wt| wt.sync_to_remote_head(&head)).await {
        Ok(sync) => sync,
        Err(err) => {
            return Ok(Err(RoundEnd::Failed {
                reason: format!("cannot sync the worktree to {head_ref}: {err}"),
            }))
        }
    };
    let start_sha = sync.new_sha.0.clone();

    if let Some(record) = setup.config_record.clone().filter(|r| r.is_pending()) {
        let base_ref = snapshot.pr.base_ref.clone();
        match read_repo_config(books, git, round, &wt, &base_ref, record).await? {
            Ok((record, read)) => {
                setup.config_record = Some(record);
                let approve = config.approve.mode;
                *config = read;
                if opts.approve.is_some() {
                    // `shepherd resume --approve MODE` outranks every layer.
                    config.approve.mode = approve;
                }
                if opts.reply_needs_human {
                    config.approve.reply_needs_human = true;
                }
            }
            Err(end) => return Ok(Err(end)),
        }
    }
    let agents = match core_agents(&mut setup.agents, opts, config) {
        Ok(agents) => agents,
        Err(reason) => return Ok(Err(RoundEnd::Failed { reason })),
    };

    let note = (sync.new_sha.0 != pr_head).then(|| {
        format!(
            "the live head {} differs from the fetched head {}: someone pushed; the round works on the live head",
            short(&sync.new_sha.0),
            short(&pr_head)
        )
    });
    books.artifact(
        round,
        "worktree.json",
        &WorktreeArtifact {
            path: wt.path().display().to_string(),
            created,
            sync: &sync,
            pr_head: &pr_head,
            note: note.clone(),
        },
    )?;
    let mut summary = format!(
        "{} at {}",
        if created { "created" } else { "synced" },
        short(&sync.new_sha.0)
    );
    if !sync.abandoned.is_empty() {
        summary.push_str(&format!(
            ", {} unpushed local commit(s) left behind",
            sync.abandoned.len()
        ));
    }
    books.stage_done(round, Stage::Worktree, summary)?;
    let checks = match check_agents(&mut setup.checks, opts, config) {
        Ok(checks) => checks,
        Err(reason) => return Ok(Err(RoundEnd::Failed { reason })),
    };
    let synced = Synced {
        snapshot,
        start_sha,
    };
    Ok(Ok((
        synced,
        Workspace::new(wt, agents, checks, git.clone()),
    )))
}

/// The agents of triage, fix and cluster-fix: the embedder's, else the
/// configuration's (set up once, after the worktree stage read the
/// repository's configuration).
fn core_agents(
    set_up: &mut Option<Agents>,
    opts: &EngineOptions,
    config: &Config,
) -> std::result::Result<Agents, String> {
    if let Some(agents) = set_up {
        return Ok(agents.clone());
    }
    let agents = match &opts.agents {
        Some(agents) => agents.clone(),
        None => {
            Agents::from_config(config, opts.checkout.as_deref()).map_err(|err| err.to_string())?
        }
    };
    *set_up = Some(agents.clone());
    Ok(agents)
}

/// The checking agents: the embedder's, else builtin when it gave the
/// core agents, else the configuration's (set up once, after the
/// worktree stage read the repository's configuration).
fn check_agents(
    set_up: &mut Option<CheckAgents>,
    opts: &EngineOptions,
    config: &Config,
) -> std::result::Result<CheckAgents, String> {
    if let Some(checks) = set_up {
        return Ok(checks.clone());
    }
    let checks = if let Some(checks) = &opts.check_agents {
        checks.clone()
    } else if opts.agents.is_some() {
        CheckAgents::builtin()
    } else {
        CheckAgents::from_config(config, opts.checkout.as_deref()).map_err(|err| err.to_string())?
    };
    *set_up = Some(checks.clone());
    Ok(checks)
}

/// Say what the sweep of stale git locks and half-written worktree
/// entries did: a progress note and an event when it removed some, or
/// found some it had to leave.
fn report_lock_sweep(books: &mut Books, round: &Round, sweep: &LockSweep) -> Result<()> {
    let shown = |paths: &[std::path::PathBuf]| {
        paths
            .iter()
            .map(|l| l.display().to_string())
            .collect::<Vec<_>>()
    };
    // "1 stale git lock(s) and 1 half-written git worktree entry(ies): paths"
    let what = |locks: &[std::path::PathBuf], entries: &[std::path::PathBuf]| {
        let mut counts = Vec::new();
        if !locks.is_empty() {
            counts.push(format!("{} stale git lock(s)", locks.len()));
        }
        if !entries.is_empty() {
            counts.push(format!(
                "{} half-written git worktree entry(ies)",
                entries.len()
            ));
        }
        let paths = shown(locks).into_iter().chain(shown(entries));
        (counts.join(" and "), paths.collect::<Vec<_>>().join(", "))
    };
    let (message, payload) = match sweep {
        LockSweep::Clean => return Ok(()),
        LockSweep::Removed { locks, entries } => (
            {
                let (counts, paths) = what(locks, entries);
                format!("removed {counts} left by a process that is gone: {paths}")
            },
            serde_json::json!({
                "action": "removed",
                "locks": shown(locks),
                "worktree_entries": shown(entries),
            }),
        ),
        LockSweep::Busy {
            locks,
            entries,
            pids,
        } => (
            format!(
                "found {} ({}) while process(es) {} work in the repository: left alone \
                 (they may be in use)",
                what(locks, entries).0,
                what(locks, entries).1,
                pids.iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            serde_json::json!({
                "action": "busy",
                "locks": shown(locks),
                "worktree_entries": shown(entries),
                "pids": pids,
            }),
        ),
        LockSweep::Unknown { locks, entries } => (
            {
                let (counts, paths) = what(locks, entries);
                format!(
                    "found {counts} ({paths}), and this system cannot tell whether a \
                     process uses them: left alone; remove them if no git command runs there"
                )
            },
            serde_json::json!({
                "action": "unknown",
                "locks": shown(locks),
                "worktree_entries": shown(entries),
            }),
        ),
    };
    books.emit(ProgressEvent::Note { message });
    books.event(Some(round.n), "git-locks", payload)
}

/// Read the repository files the run's configuration still lacks: the
/// base branch's (when the trusted file comes from there) and the PR
/// head's (untrusted: it may only tighten), record them in
/// `config-layers.json`, and save the configuration in effect as
/// `config.toml` (and `config.json`: the files read, and what the head's
/// file asked for and did not get). Its product: `record`, read, and the
/// configuration it makes (the options' overrides still to apply).
async fn read_repo_config(
    books: &mut Books,
    git: &Git,
    round: &Round,
    wt: &Arc<Worktree>,
    base_ref: &str,
    mut record: ConfigRecord,
) -> Result<Step<(ConfigRecord, Config)>> {
    if record.base_branch.is_pending() {
        let base = base_ref.to_owned();
        let read = config_file_at(wt, git, move |wt| wt.remote_head(&base)).await;
        record.base_branch = match read {
            Ok((commit, None)) => RepoFile::Absent { commit },
            Ok((commit, Some((rel, text)))) => RepoFile::Read {
                layer: LayerRecord {
                    source: SourceRecord::Repo(format!(
                        "{rel} (base branch {base_ref} at {})",
                        short(&commit)
                    )),
                    toml: text,
                },
                commit,
            },
            Err(err) => {
                return Ok(Err(RoundEnd::Failed {
                    reason: format!(
                        "cannot read the configuration of the base branch {base_ref}: {err}"
                    ),
                }))
            }
        };
    }
    if record.pr_head.is_pending() {
        let read = config_file_at(wt, git, |wt| wt.head_sha()).await;
        record.pr_head = match read {
            Ok((commit, None)) => RepoFile::Absent { commit },
            Ok((commit, Some((rel, text)))) => RepoFile::Read {
                layer: LayerRecord {
                    source: SourceRecord::PrHead(rel.to_owned()),
                    toml: text,
                },
                commit,
            },
            Err(err) => {
                return Ok(Err(RoundEnd::Failed {
                    reason: format!("cannot read the pull request head's configuration: {err}"),
                }))
            }
        };
    }
    let effective = match record.effective() {
        Ok(effective) => effective,
        Err(err) => {
            return Ok(Err(RoundEnd::InvalidConfig {
                reason: format!("invalid configuration: {err}"),
            }))
        }
    };
    write_json(&books.dir.config_layers_file(), &record)?;
    for note in &effective.notes {
        books.emit(ProgressEvent::Note {
            message: note.clone(),
        });
    }
    books.artifact(
        round,
        "config.json",
        &serde_json::json!({ "files": effective.files, "ignored": effective.notes }),
    )?;
    let config = effective.config;
    books.run.round_limit = if books.run.target.is_targeted() {
        1
    } else {
        config.loop_.max_rounds
    };
    write_text(&books.dir.config_file(), &config.to_toml())?;
    Ok(Ok((record, config)))
}

/// The commit `which` names in the worktree, and the one repository
/// configuration file there (`None` when it has none); an error in words
/// when it cannot be read or there are several.
async fn config_file_at<F>(
    wt: &Arc<Worktree>,
    git: &Git,
    which: F,
) -> std::result::Result<(String, Option<(&'static str, String)>), String>
where
    F: FnOnce(&Worktree) -> std::result::Result<CommitSha, WorktreeError> + Send + 'static,
{
    let git = git.clone();
    git_in(wt, move |wt| {
        let sha = which(wt)?.0;
        let files = repo_files_at(&git, wt, &sha)?;
        Ok((sha, files))
    })
    .await
    .map_err(|e| e.to_string())
    .and_then(|(sha, files)| Ok((sha, one_file(files)?)))
}

/// The repository config files at commit `sha` (path and text), in
/// [`REPO_CONFIG_PATHS`] order.
fn repo_files_at(
    git: &Git,
    wt: &Worktree,
    sha: &str,
) -> std::result::Result<Vec<(&'static str, String)>, WorktreeError> {
    let mut found = Vec::new();
    for rel in REPO_CONFIG_PATHS {
        let spec = format!("{sha}:{rel}");
        let present = git
            .output(wt.path(), &["cat-file", "-e", &spec], None)?
            .status
            .success();
        if present {
            found.push((rel, git.stdout(wt.path(), &["show", &spec])?));
        }
    }
    Ok(found)
}

/// The one config file of `files`, or why not.
fn one_file(
    files: Vec<(&'static str, String)>,
) -> std::result::Result<Option<(&'static str, String)>, String> {
    let names: Vec<&str> = files.iter().map(|(rel, _)| *rel).collect();
    match repo_config_path(|p| names.contains(&p)) {
        Ok(_) => Ok(files.into_iter().next()),
        Err(err) => Err(err.to_string()),
    }
}
