//! Stage 9, pre-push review (SPEC section 3): before the round's commits are
//! pushed, the `review` role (on its own provider and model, read-only)
//! reviews the commits the forge has not seen (`start..HEAD`, the live head
//! the round started from up to the local HEAD) and reports findings with a
//! severity, a confidence and a reproduction.
//!
//! The reproduction rule (also what the review prompt tells the reviewer):
//! a reproduction is one shell command, run from the repository root, that
//! **fails** (exits non-zero) while the problem exists and **passes** (exits
//! 0) once it is fixed. So:
//!
//! - a CRITICAL or HIGH finding with confidence >= 80 is first *refuted* by
//!   running its reproduction in a scratch worktree at HEAD (environment
//!   sealed like an agent's, own process group, timeout): exit 0 means the
//!   problem does not show, the finding is **refuted** and nothing is done;
//!   a non-zero exit means it **holds**; a timeout, or a command that cannot
//!   run (exit 126/127), proves nothing: **inconclusive**, reported, not
//!   acted on;
//! - findings that hold go to the `apply-review` role, which fixes them in
//!   the run's worktree; Shepherd commits the change (protected paths
//!   refused) and runs each reproduction again: exit 0 is **held and
//!   fixed**, anything else **held and not fixed**. A fix commit that fixes
//!   none of them is dropped. The revalidate stage then runs the verify
//!   command on the new HEAD;
//! - the other findings are **below the threshold**: noted, not acted on.
//!
//! The outcome of every finding goes to `pre-push-review.md` (and
//! `pre-push-review.json`). The review runs when `[review] enabled` (the
//! default) and the review role's provider is not `builtin`, and only on
//! commits whose verification passed; a review that fails is noted, and the
//! push still depends on the verify command alone.

use std::time::{Duration, Instant};

use serde::Serialize;
use shepherd_agent::{
    check_apply_review_answer, findings_to_refute, ApplyReviewTask, FixStatus, HeldFinding,
    PrContext, ReviewCommit, ReviewFinding, ReviewTask, UsageLog, REFUTE_MIN_CONFIDENCE,
};

use super::guard;
use super::parallel::path_safe;
use shepherd_core::config::Config;

use super::runner::Books;
use super::state::{Changes, Flow, Reviewed, Round, RoundEnd, Step, Synced, Validated};
use super::unit::headline;
use super::validate::run_command;
use super::workspace::Workspace;
use crate::error::{EngineError, Result};
use crate::options::{is_builtin, Stage};
use crate::run_dir::write_text;
use crate::worktree::{
    commits_between, diff_between, reset_hard, ProtectedPaths, ScratchWorktree, WorktreeError,
};

/// The longest one reproduction may run.
const MAX_REPRODUCTION: Duration = Duration::from_secs(600);

/// What became of one finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum FindingFate {
    /// The reproduction passed: the problem does not show. Not acted on.
    Refuted,
    /// The reproduction failed, and passes after Shepherd's fix commit.
    HeldAndFixed,
    /// The reproduction failed, and still fails (or the fix was refused).
    HeldNotFixed,
    /// The reproduction timed out or could not run: nothing proven.
    Inconclusive,
    /// Not CRITICAL/HIGH at confidence >= 80: noted, not acted on.
    BelowThreshold,
}

impl FindingFate {
    fn words(self) -> &'static str {
        match self {
            FindingFate::Refuted => "refuted (its reproduction passed): not fixed",
            FindingFate::HeldAndFixed => "held, and fixed (its reproduction passes after the fix)",
            FindingFate::HeldNotFixed => "held, and not fixed",
            FindingFate::Inconclusive => {
                "inconclusive (its reproduction timed out or could not run): not acted on"
            }
            FindingFate::BelowThreshold => "below the threshold: noted, not acted on",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
struct FindingRecord {
    finding: ReviewFinding,
    fate: FindingFate,
    /// Exit code of the first run of the reproduction.
    exit_code: Option<i32>,
    /// The end of its output (untrusted).
    evidence: Option<String>,
    /// Exit code after the fix.
    exit_code_after_fix: Option<i32>,
    /// What the apply-review agent said.
    fix_summary: Option<String>,
}

#[derive(Debug, Default, Serialize)]
struct ReviewArtifact {
    round: u32,
    skipped: Option<String>,
    provider: Option<String>,
    base: Option<String>,
    head: Option<String>,
    commits: Vec<String>,
    summary: Option<String>,
    error: Option<String>,
    findings: Vec<FindingRecord>,
    fix_commit: Option<String>,
    note: Option<String>,
}

/// How a reproduction run ended.
struct Repro {
    exit_code: Option<i32>,
    conclusive: bool,
    tail: String,
}

fn tail(text: &str, max: usize) -> String {
    let chars: Vec<char> = text.chars().collect();
    chars[chars.len().saturating_sub(max)..].iter().collect()
}

/// Run a finding's reproduction in a scratch worktree at `sha`.
async fn reproduce(
    books: &Books,
    config: &Config,
    round: &Round,
    ws: &Workspace,
    finding: &ReviewFinding,
    sha: &str,
    label: &str,
) -> Result<Repro> {
    let command = finding.reproduction.clone().unwrap_or_default();
    let dir = books
        .dir
        .root()
        .join("scratch")
        .join(format!("{}-{}", round.n, path_safe(label)));
    let git = ws.git.clone();
    let repo = ws.repo_dir().to_path_buf();
    let sha = sha.to_owned();
    let scratch =
        tokio::task::spawn_blocking(move || ScratchWorktree::add(&git, &repo, &dir, &sha))
            .await
            .map_err(|e| EngineError::Task(e.to_string()))??;
    let timeout = config.verify.timeout().min(MAX_REPRODUCTION);
    let run = run_command(
        &["sh".to_owned(), "-c".to_owned(), command],
        scratch.path(),
        timeout,
        true,
    )
    .await;
    let _ = tokio::task::spawn_blocking(move || scratch.remove()).await;
    let conclusive = !run.timed_out && matches!(run.exit_code, Some(c) if c != 126 && c != 127);
    Ok(Repro {
        exit_code: run.exit_code,
        conclusive,
        tail: tail(&run.output, 2000),
    })
}

/// The pre-push review of the validated commits (and the fix of its
/// findings that held), or the end of the round when the reviewer broke
/// the read-only rule (before any commit of this stage).
pub(crate) async fn stage(
    books: &mut Books,
    config: &Config,
    round: &Round,
    synced: &Synced,
    ws: &Workspace,
    validated: Validated,
) -> Result<Step<Reviewed>> {
    let Validated(mut changes) = validated;
    let flow = review(books, config, round, synced, ws, &mut changes).await?;
    Ok(flow.map(|()| Reviewed(changes)))
}

async fn review(
    books: &mut Books,
    config: &Config,
    round: &Round,
    synced: &Synced,
    ws: &Workspace,
    changes: &mut Changes,
) -> Result<Flow> {
    if changes.commits.is_empty() {
        return Ok(Ok(()));
    }
    let mut artifact = ReviewArtifact {
        round: round.n,
        ..ReviewArtifact::default()
    };
    let reviewer = ws.checks.review.clone();
    let head = ws.git(|wt| wt.head_sha()).await?.0;
    let skipped = if !config.review.enabled {
        Some("`[review] enabled = false`".to_owned())
    } else if is_builtin(reviewer.as_ref()) {
        Some("the review role runs the builtin provider, which has no model".to_owned())
    } else if changes
        .verified
        .as_ref()
        .is_none_or(|v| !v.passed || v.head != head)
    {
        Some("the verify command did not pass, so nothing will be pushed".to_owned())
    } else {
        None
    };
    if let Some(why) = skipped {
        artifact.skipped = Some(why.clone());
        write_review(books, round, &artifact)?;
        books.stage_done(round, Stage::Review, format!("skipped: {why}"))?;
        return Ok(Ok(()));
    }

    let base = synced.start_sha.clone();
    let git = ws.git.clone();
    let (b, h) = (base.clone(), head.clone());
    let (commits, (diff, files)) = ws
        .git(move |wt| {
            Ok((
                commits_between(&git, wt.path(), &b, &h)?,
                diff_between(&git, wt.path(), &b, &h)?,
            ))
        })
        .await?;
    artifact.provider = Some(reviewer.name().to_owned());
    artifact.base = Some(base.clone());
    artifact.head = Some(head.clone());
    artifact.commits = commits.iter().map(|(sha, _)| sha.0.clone()).collect();
    let snapshot = &synced.snapshot;
    let pr = PrContext::new(snapshot.forge, &snapshot.pr);
    let task = ReviewTask {
        pr: pr.clone(),
        worktree: ws.path().to_path_buf(),
        base_sha: base,
        head_sha: head.clone(),
        commits: commits
            .into_iter()
            .map(|(sha, subject)| ReviewCommit {
                sha: sha.0,
                subject,
            })
            .collect(),
        files,
        diff,
    };
    // A read-only role: a change to the worktree fails it closed, and
    // the round stops before the push.
    let call = guard::ReadOnly {
        role: "review",
        provider: reviewer.name(),
        dir: task.worktree.clone(),
    };
    let (agent, task_ref) = (&reviewer, &task);
    let guarded = guard::read_only_call(books, &ws.git, round, call, |ctx| async move {
        agent.review(task_ref, &ctx).await
    })
    .await?;
    let got = match guarded {
        Ok(got) => got,
        Err(reason) => {
            artifact.error = Some(reason.clone());
            write_review(books, round, &artifact)?;
            return Ok(Err(RoundEnd::Failed { reason }));
        }
    };
    let answer = match got {
        Ok(a) => a,
        Err(err) => {
            let error = format!("the review failed: {err}");
            artifact.error = Some(error.clone());
            write_review(books, round, &artifact)?;
            books.stage_done(
                round,
                Stage::Review,
                format!("{error}; the push depends on the verify command alone"),
            )?;
            return Ok(Ok(()));
        }
    };
    artifact.summary = Some(answer.summary.clone());
    let refute: Vec<String> = findings_to_refute(&answer)
        .into_iter()
        .map(|f| f.id.clone())
        .collect();

    // Refute first.
    let mut records: Vec<FindingRecord> = Vec::new();
    for finding in &answer.findings {
        let mut record = FindingRecord {
            finding: finding.clone(),
            fate: FindingFate::BelowThreshold,
            exit_code: None,
            evidence: None,
            exit_code_after_fix: None,
            fix_summary: None,
        };
        if refute.contains(&finding.id) {
            let repro = reproduce(
                books,
                config,
                round,
                ws,
                finding,
                &head,
                &format!("repro-{}", finding.id),
            )
            .await?;
            record.exit_code = repro.exit_code;
            record.evidence = Some(repro.tail);
            record.fate = match (repro.conclusive, repro.exit_code) {
                (false, _) => FindingFate::Inconclusive,
                (true, Some(0)) => FindingFate::Refuted,
                (true, _) => FindingFate::HeldNotFixed,
            };
        }
        records.push(record);
    }

    // Fix what held.
    let held: Vec<HeldFinding> = records
        .iter()
        .filter(|r| r.fate == FindingFate::HeldNotFixed)
        .map(|r| HeldFinding {
            finding: r.finding.clone(),
            evidence: r.evidence.clone().unwrap_or_default(),
        })
        .collect();
    if !held.is_empty() {
        let task = ApplyReviewTask {
            pr,
            worktree: ws.path().to_path_buf(),
            findings: held,
        };
        let (commit, note) =
            apply_review(books, config, round, ws, task, &head, &mut records).await?;
        changes.commits.extend(commit.clone());
        artifact.fix_commit = commit;
        artifact.note = note;
    }
    artifact.findings = records;
    write_review(books, round, &artifact)?;
    let count = |fate| artifact.findings.iter().filter(|r| r.fate == fate).count();
    let mut summary = format!(
        "{} finding(s): {} refuted, {} held and fixed, {} held and not fixed, {} inconclusive, \
         {} below the threshold",
        artifact.findings.len(),
        count(FindingFate::Refuted),
        count(FindingFate::HeldAndFixed),
        count(FindingFate::HeldNotFixed),
        count(FindingFate::Inconclusive),
        count(FindingFate::BelowThreshold),
    );
    if let Some(sha) = &artifact.fix_commit {
        summary.push_str(&format!(
            "; fix committed as {}",
            super::pr_state::short(sha)
        ));
    }
    books.stage_done(round, Stage::Review, summary)?;
    Ok(Ok(()))
}

/// The apply-review agent on `task` (the findings that held, in the
/// run's worktree); the commit (kept when it fixes at least one finding,
/// for the caller to add to the round's) and a note.
async fn apply_review(
    books: &mut Books,
    config: &Config,
    round: &Round,
    ws: &Workspace,
    task: ApplyReviewTask,
    head: &str,
    records: &mut [FindingRecord],
) -> Result<(Option<String>, Option<String>)> {
    let agent = ws.checks.apply_review.clone();
    ws.git(|wt| wt.discard_changes()).await?;
    let usage = UsageLog::new();
    let ctx = round.agent_ctx("apply-review", &usage);
    let started = Instant::now();
    let got = guard::writing_call(
        books,
        ws,
        round,
        "apply-review",
        agent.apply_review(&task, &ctx),
    )
    .await?;
    books.account_agent("apply-review", agent.name(), started.elapsed(), &usage);
    let answer = match ws
        .keep_checked(got, |a| check_apply_review_answer(&task, a))
        .await?
    {
        Ok(a) => a,
        Err(refused) => return Ok((None, Some(refused.said_of("apply-review agent")))),
    };
    for o in &answer.outcomes {
        if let Some(r) = records.iter_mut().find(|r| r.finding.id == o.id) {
            r.fix_summary = Some(o.summary.clone());
        }
    }
    if answer
        .outcomes
        .iter()
        .all(|o| o.status == FixStatus::Blocked)
    {
        ws.git(|wt| wt.discard_changes()).await?;
        return Ok((
            None,
            Some("the apply-review agent fixed nothing (blocked)".to_owned()),
        ));
    }
    let changed = ws.git(|wt| wt.changed_paths()).await?;
    if changed.is_empty() {
        return Ok((
            None,
            Some("the apply-review agent changed no file".to_owned()),
        ));
    }
    let protected = ProtectedPaths::new(&config.paths.protected)?;
    let held = &task.findings;
    let ids: Vec<&str> = held.iter().map(|h| h.finding.id.as_str()).collect();
    let mut message = format!(
        "shepherd: fix pre-push review findings ({})\n\n",
        ids.join(", ")
    );
    for h in held {
        message.push_str(&format!(
            "- {} ({}): {}\n",
            h.finding.id,
            h.finding.severity,
            headline(&h.finding.title)
        ));
    }
    let files = changed.clone();
    let committed = ws
        .git(move |wt| Ok(wt.commit_files(&message, &files, &protected)))
        .await?;
    ws.git(|wt| wt.discard_changes()).await?;
    let sha = match committed {
        Ok(sha) => sha.0,
        Err(e @ (WorktreeError::ProtectedPath { .. } | WorktreeError::NothingToCommit)) => {
            return Ok((None, Some(format!("the review fix was refused: {e}"))));
        }
        Err(e) => return Err(EngineError::Worktree(e)),
    };
    // Does each reproduction pass now?
    let mut fixed = 0usize;
    for r in records
        .iter_mut()
        .filter(|r| r.fate == FindingFate::HeldNotFixed)
    {
        let repro = reproduce(
            books,
            config,
            round,
            ws,
            &r.finding,
            &sha,
            &format!("repro-{}-after", r.finding.id),
        )
        .await?;
        r.exit_code_after_fix = repro.exit_code;
        if repro.conclusive && repro.exit_code == Some(0) {
            r.fate = FindingFate::HeldAndFixed;
            fixed += 1;
        }
    }
    if fixed == 0 {
        let git = ws.git.clone();
        let back = head.to_owned();
        ws.git(move |wt| reset_hard(&git, wt.path(), &back)).await?;
        return Ok((
            None,
            Some("the review fix made no reproduction pass, so its commit was dropped".to_owned()),
        ));
    }
    books.event(
        Some(round.n),
        "commit",
        serde_json::json!({ "sha": sha, "findings": ids, "files": changed, "unit": "apply-review" }),
    )?;
    Ok((Some(sha), None))
}

fn write_review(books: &Books, round: &Round, artifact: &ReviewArtifact) -> Result<()> {
    books.artifact(round, "pre-push-review.json", artifact)?;
    write_text(
        &round.dir.join("pre-push-review.md"),
        &review_markdown(artifact),
    )
}

/// Markdown-safe text on one line ([`shepherd_core::escape::markdown_line`]).
fn md(text: &str) -> String {
    shepherd_core::escape::markdown_line(text)
}

/// A code span on one line ([`shepherd_core::escape::code_span_line`]).
fn code(text: &str) -> String {
    shepherd_core::escape::code_span_line(text)
}

fn review_markdown(a: &ReviewArtifact) -> String {
    let mut out = format!("# Pre-push review, round {}\n\n", a.round);
    if let Some(why) = &a.skipped {
        out.push_str(&format!("Skipped: {}.\n", md(why)));
        return out;
    }
    out.push_str(&format!(
        "- Reviewer: {} (the `review` role)\n- Commits reviewed: {} ({}..{})\n",
        md(a.provider.as_deref().unwrap_or("?")),
        a.commits.len(),
        code(a.base.as_deref().map_or("?", |s| s.get(..12).unwrap_or(s))),
        code(a.head.as_deref().map_or("?", |s| s.get(..12).unwrap_or(s))),
    ));
    if let Some(e) = &a.error {
        out.push_str(&format!("\n{}\n", md(e)));
        return out;
    }
    if let Some(s) = &a.summary {
        out.push_str(&format!("- Reviewer's summary: {}\n", md(s)));
    }
    if let Some(sha) = &a.fix_commit {
        out.push_str(&format!("- Fix commit: {}\n", code(sha)));
    }
    if let Some(n) = &a.note {
        out.push_str(&format!("- Note: {}\n", md(n)));
    }
    out.push_str(&format!(
        "\nA CRITICAL or HIGH finding of confidence >= {REFUTE_MIN_CONFIDENCE} is first refuted by \
         running its reproduction, a command that fails (non-zero exit) while the problem exists \
         and passes (exit 0) once it is fixed: exit 0 refutes it; a non-zero exit means it holds, \
         and it is fixed and committed. The other findings are noted.\n\n"
    ));
    if a.findings.is_empty() {
        out.push_str("No findings.\n");
        return out;
    }
    out.push_str("| finding | severity | confidence | where | outcome |\n|---|---|---|---|---|\n");
    for r in &a.findings {
        let f = &r.finding;
        let place = match (&f.path, f.line) {
            (Some(p), Some(l)) => code(&format!("{p}:{l}")),
            (Some(p), None) => code(p),
            _ => "-".to_owned(),
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            md(&f.id),
            f.severity,
            f.confidence,
            place,
            r.fate.words()
        ));
    }
    for r in &a.findings {
        let f = &r.finding;
        out.push_str(&format!("\n## {}: {}\n\n", md(&f.id), md(&f.title)));
        out.push_str(&format!("- Outcome: {}\n", r.fate.words()));
        out.push_str(&format!("- Explanation: {}\n", md(&f.explanation)));
        if let Some(rep) = &f.reproduction {
            out.push_str(&format!("- Reproduction: {}\n", code(rep)));
        }
        if let Some(c) = r.exit_code {
            out.push_str(&format!("- Reproduction exit code: {c}\n"));
        }
        if let Some(c) = r.exit_code_after_fix {
            out.push_str(&format!("- Exit code after the fix: {c}\n"));
        }
        if let Some(s) = &r.fix_summary {
            out.push_str(&format!("- Fix: {}\n", md(s)));
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;
    use shepherd_agent::Severity;

    #[test]
    fn the_markdown_names_every_outcome_and_escapes_the_reviewer() {
        let finding = |id: &str, title: &str| ReviewFinding {
            id: id.into(),
            severity: Severity::Critical,
            confidence: 90,
            title: title.into(),
            path: Some("src/a.rs".into()),
            line: Some(3),
            explanation: "<script>x</script>".into(),
            reproduction: Some("cargo test `x`".into()),
        };
        let artifact = ReviewArtifact {
            round: 2,
            provider: Some("command".into()),
            base: Some("a".repeat(40)),
            head: Some("b".repeat(40)),
            commits: vec!["b".repeat(40)],
            summary: Some("two *bugs*".into()),
            findings: vec![
                FindingRecord {
                    finding: finding("F1", "refuted one"),
                    fate: FindingFate::Refuted,
                    exit_code: Some(0),
                    evidence: None,
                    exit_code_after_fix: None,
                    fix_summary: None,
                },
                FindingRecord {
                    finding: finding("F2", "held one"),
                    fate: FindingFate::HeldAndFixed,
                    exit_code: Some(1),
                    evidence: None,
                    exit_code_after_fix: Some(0),
                    fix_summary: Some("fixed it".into()),
                },
            ],
            fix_commit: Some("c".repeat(40)),
            ..ReviewArtifact::default()
        };
        let text = review_markdown(&artifact);
        assert!(
            text.contains("| F1 | CRITICAL | 90 | `src/a.rs:3` | refuted"),
            "{text}"
        );
        assert!(
            text.contains("| F2 | CRITICAL | 90 | `src/a.rs:3` | held, and fixed"),
            "{text}"
        );
        assert!(text.contains("two \\*bugs\\*"), "{text}");
        assert!(!text.contains("<script>"), "{text}");
        assert!(text.contains("`cargo test 'x'`"), "{text}");
        let skipped = review_markdown(&ReviewArtifact {
            round: 1,
            skipped: Some("off".into()),
            ..ReviewArtifact::default()
        });
        assert!(skipped.contains("Skipped: off."), "{skipped}");
    }
}
