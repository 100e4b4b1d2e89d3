//! The `builtin` provider: no model, only suggestion blocks (SPEC section 7).
//!
//! Fix validation accepts (`addressed`) exactly the items whose suggestion
//! block the diff applies as written, when the diff changes nothing else;
//! every other item is `unclear`. Review reports no findings ("builtin
//! provider has no model"); apply-review blocks every finding.
//!
//! Triage gives `code-change` to items whose suggestion block applies to the
//! worktree's file as it is now, and `needs-human` to everything else; the
//! theme comes from the lexical classifier. Fix applies suggestion blocks
//! with the semantics of the task's forge ([`SuggestionEdit::apply`]) and
//! refuses, as `blocked`, whatever it cannot apply exactly. It never commits.
//!
//! The forge is the task's (`pr.forge`). On GitHub an item's suggestion is
//! the one it carries (anchored on the comment's diff hunk). On GitLab it is
//! read with GitLab's semantics from the item itself
//! ([`TaskItem::gitlab_suggestion`], whichever constructor made the item)
//! and anchored on the thread's file at the head the forge traced the
//! thread to (`pr.head_sha`, read with `git cat-file` from the worktree's
//! repository): an earlier fix that moved or changed those lines makes the
//! edit refused, never misplaced.
//!
//! Several suggestions on one file (a cluster task) are applied from the
//! bottom of the file up, so an edit that changes the number of lines never
//! moves the lines a later edit is anchored to; two suggestions on
//! overlapping lines are a choice it does not make (the second is blocked).
//! An engine applying single-item tasks one after another on the same file
//! should likewise order them by descending line.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};

use async_trait::async_trait;
use shepherd_core::forges::SuggestionSyntax;
use shepherd_core::ledger::Decision;
use shepherd_core::suggestion::SuggestionEdit;
use shepherd_core::theme::classify_theme;

use crate::agent::{Agent, AgentContext, AgentError};
use crate::answer::{
    ApplyReviewAnswer, ClusterAssessment, ClusterVerdict, FindingOutcome, FixAnswer, FixStatus,
    FixValidationAnswer, FixVerdict, ItemValidation, ReviewAnswer, ThreadOutcome, TriageAnswer,
    TriageDecision,
};
use crate::task::{
    ApplyReviewTask, FixTask, FixValidationTask, ItemKind, PrContext, ReviewTask, Role,
    SuggestionState, TaskItem, TriageTask,
};

/// The summary of every review the builtin provider answers.
pub const BUILTIN_REVIEW_SUMMARY: &str = "builtin provider has no model";

/// The assessment of every cluster task the builtin provider answers.
pub const BUILTIN_CLUSTER_WHY: &str = "builtin agent applies each suggestion as written";

/// The `builtin` provider.
#[derive(Debug, Clone, Copy, Default)]
pub struct BuiltinAgent;

impl BuiltinAgent {
    /// The provider.
    pub fn new() -> Self {
        BuiltinAgent
    }
}

#[async_trait]
impl Agent for BuiltinAgent {
    fn name(&self) -> &str {
        "builtin"
    }

    async fn triage(
        &self,
        task: &TriageTask,
        _ctx: &AgentContext,
    ) -> Result<TriageAnswer, AgentError> {
        let task = task.clone();
        tokio::task::spawn_blocking(move || triage(&task))
            .await
            .map_err(|_| panicked(Role::Triage))
    }

    async fn fix(&self, task: &FixTask, _ctx: &AgentContext) -> Result<FixAnswer, AgentError> {
        let role = task.role();
        let task = task.clone();
        tokio::task::spawn_blocking(move || fix(&task))
            .await
            .map_err(|_| panicked(role))?
    }

    async fn validate_fix(
        &self,
        task: &FixValidationTask,
        _ctx: &AgentContext,
    ) -> Result<FixValidationAnswer, AgentError> {
        let task = task.clone();
        tokio::task::spawn_blocking(move || validate_fix(&task))
            .await
            .map_err(|_| panicked(Role::FixValidation))
    }

    async fn review(
        &self,
        _task: &ReviewTask,
        _ctx: &AgentContext,
    ) -> Result<ReviewAnswer, AgentError> {
        Ok(ReviewAnswer {
            findings: Vec::new(),
            summary: BUILTIN_REVIEW_SUMMARY.to_owned(),
        })
    }

    async fn apply_review(
        &self,
        task: &ApplyReviewTask,
        _ctx: &AgentContext,
    ) -> Result<ApplyReviewAnswer, AgentError> {
        Ok(ApplyReviewAnswer {
            outcomes: task
                .findings
                .iter()
                .map(|held| FindingOutcome {
                    id: held.finding.id.clone(),
                    status: FixStatus::Blocked,
                    summary: "builtin provider has no model to fix review findings".to_owned(),
                    files: Vec::new(),
                })
                .collect(),
        })
    }
}

/// Judges each item of `task` by whether its diff applies the item's
/// suggestion block as written (see the module docs). Pure: reads only the
/// task.
pub fn validate_fix(task: &FixValidationTask) -> FixValidationAnswer {
    let verdict = |item: &TaskItem, verdict: FixVerdict, reason: String| ItemValidation {
        id: item.id.clone(),
        verdict,
        reasons: vec![reason],
    };
    let unclear = |item: &TaskItem, reason: String| verdict(item, FixVerdict::Unclear, reason);
    let hunks = match crate::diff::parse(&task.diff) {
        Ok(hunks) if hunks.is_empty() => {
            return FixValidationAnswer {
                items: task
                    .items
                    .iter()
                    .map(|i| unclear(i, "the diff is empty: nothing changed".to_owned()))
                    .collect(),
            }
        }
        Ok(hunks) => hunks,
        Err(e) => {
            return FixValidationAnswer {
                items: task
                    .items
                    .iter()
                    .map(|i| unclear(i, format!("the diff could not be read ({e})")))
                    .collect(),
            }
        }
    };

    let states: Vec<SuggestionState> = task
        .items
        .iter()
        .map(|item| settle(&task.pr, &task.worktree, item))
        .collect();
    // Item index -> (edit, its first and last old line).
    let edits: BTreeMap<usize, (&SuggestionEdit, u32, u32)> = task
        .items
        .iter()
        .zip(&states)
        .enumerate()
        .filter_map(|(index, (item, state))| match state {
            SuggestionState::Applicable { edit } if item.kind == ItemKind::ReviewThread => {
                let (s, e) = edit.effective_range().ok()?;
                Some((index, (edit, s, e)))
            }
            _ => None,
        })
        .collect();
    // Item index -> the hunk showing its lines.
    let mut hunk_of: BTreeMap<usize, usize> = BTreeMap::new();
    for (index, (edit, s, e)) in &edits {
        if let Some(h) = hunks
            .iter()
            .position(|h| h.path == edit.site.path && h.covers(*s, *e))
        {
            hunk_of.insert(*index, h);
        }
    }
    let explained: Vec<bool> = hunks
        .iter()
        .enumerate()
        .map(|(h, hunk)| {
            let mut members: Vec<(u32, u32, &SuggestionEdit)> = hunk_of
                .iter()
                .filter(|(_, of)| **of == h)
                .filter_map(|(index, _)| edits.get(index).map(|(edit, s, e)| (*s, *e, *edit)))
                .collect();
            !members.is_empty() && hunk_is_exactly(hunk, &mut members)
        })
        .collect();
    let everything_explained = explained.iter().all(|e| *e);
    let unexplained_files: Vec<&str> = {
        let mut files: Vec<&str> = hunks
            .iter()
            .zip(&explained)
            .filter(|(_, e)| !**e)
            .map(|(h, _)| h.path.as_str())
            .collect();
        files.dedup();
        files
    };

    let items = task
        .items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let Some((edit, s, e)) = edits.get(&index) else {
                return unclear(
                    item,
                    "no applicable suggestion block: the builtin provider has no model to judge \
                     any other change"
                        .to_owned(),
                );
            };
            let site = if s == e {
                format!("{} line {s}", edit.site.path)
            } else {
                format!("{} lines {s}-{e}", edit.site.path)
            };
            match hunk_of.get(&index).map(|h| explained[*h]) {
                Some(true) if everything_explained => verdict(
                    item,
                    FixVerdict::Addressed,
                    format!("the diff applies the suggestion block to {site} exactly as written"),
                ),
                Some(true) => unclear(
                    item,
                    format!(
                        "the suggestion block is applied to {site} as written, but the diff also \
                         changes other lines (in {}); the builtin provider has no model to judge them",
                        unexplained_files.join(", ")
                    ),
                ),
                _ => unclear(
                    item,
                    format!(
                        "the diff does not apply the suggestion block to {site} as written; the \
                         builtin provider has no model to judge a different change"
                    ),
                ),
            }
        })
        .collect();
    FixValidationAnswer { items }
}

/// Whether `hunk` is exactly its old lines with `members` (first line, last
/// line, edit) applied: each anchor matches, no two overlap, and the result
/// is the hunk's new side.
fn hunk_is_exactly(hunk: &crate::diff::Hunk, members: &mut [(u32, u32, &SuggestionEdit)]) -> bool {
    fn same(a: &str, b: &str) -> bool {
        a.strip_suffix('\r').unwrap_or(a) == b.strip_suffix('\r').unwrap_or(b)
    }
    // Bottom-up, so earlier offsets stay valid.
    members.sort_by_key(|m| std::cmp::Reverse(m.0));
    let mut expected = hunk.old.clone();
    let mut floor = u32::MAX;
    for (s, e, edit) in members.iter() {
        if *e >= floor {
            return false;
        }
        floor = *s;
        // covers() held: both offsets lie inside the hunk's old lines.
        let from = (*s - hunk.old_start) as usize;
        let to = (*e - hunk.old_start) as usize + 1;
        let current = &hunk.old[from..to];
        if current.len() != edit.anchor.len()
            || !current.iter().zip(&edit.anchor).all(|(a, b)| same(a, b))
        {
            return false;
        }
        expected.splice(from..to, edit.suggestion.lines().iter().cloned());
    }
    expected.len() == hunk.new.len() && expected.iter().zip(&hunk.new).all(|(a, b)| same(a, b))
}

fn panicked(role: Role) -> AgentError {
    AgentError::InvalidTask {
        role,
        reason: "the builtin agent panicked on this task".to_owned(),
    }
}

const NEEDS_HUMAN_HINT: &str = "This needs a maintainer's decision: Shepherd's builtin agent only \
applies suggestion blocks and did not change anything for this comment.";

/// Triage every item of `task` (see the module docs). Reads files in
/// `task.worktree`; changes nothing.
pub fn triage(task: &TriageTask) -> TriageAnswer {
    TriageAnswer {
        items: task
            .items
            .iter()
            .map(|item| triage_item(&task.pr, &task.worktree, item))
            .collect(),
    }
}

/// The suggestion of `item` as the builtin provider applies it for `pr`
/// (see the module docs): on GitHub the item's own; on GitLab GitLab's
/// reading of the item, anchored on the file at `pr.head_sha`.
pub fn settle(pr: &PrContext, worktree: &Path, item: &TaskItem) -> SuggestionState {
    match pr.forge.spec().suggestion {
        SuggestionSyntax::Fenced => item.suggestion.clone(),
        SuggestionSyntax::RelativeRange => match item.gitlab_suggestion() {
            SuggestionState::Applicable { edit } if edit.anchor_pending => {
                let pinned = file_at_commit(worktree, &pr.head_sha, &edit.site.path)
                    .and_then(|file| edit.pinned(&file).map_err(|e| e.to_string()));
                match pinned {
                    Ok(edit) => SuggestionState::Applicable { edit },
                    Err(reason) => SuggestionState::Refused { reason },
                }
            }
            other => other,
        },
    }
}

/// The content of `rel` at commit `sha`, read from the repository of
/// `worktree` (`git cat-file`). `rel` must be a plain relative path and
/// `sha` a commit id.
fn file_at_commit(worktree: &Path, sha: &str, rel: &str) -> Result<String, String> {
    check_relative(rel)?;
    let hex = (7..=64).contains(&sha.len()) && sha.bytes().all(|b| b.is_ascii_hexdigit());
    if !hex {
        return Err(format!("{rel}: the head is not a commit id"));
    }
    let short = &sha[..10.min(sha.len())];
    let mut cmd = Command::new("git");
    cmd.arg("-C")
        .arg(worktree)
        .args(["cat-file", "blob"])
        .arg(format!("{sha}:{rel}"))
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    tracing::debug!(cmd = ?cmd, "builtin agent reads the head's file");
    let output = cmd
        .output()
        .map_err(|e| format!("{rel}: cannot run git to read it at the head {short}: {e}"))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(format!(
            "{rel}: cannot read it at the head {short}: {}",
            stderr.lines().next().unwrap_or("git failed").trim()
        ));
    }
    String::from_utf8(output.stdout).map_err(|_| format!("{rel}: not valid UTF-8 at the head"))
}

fn triage_item(pr: &PrContext, worktree: &Path, item: &TaskItem) -> TriageDecision {
    let state = settle(pr, worktree, item);
    let suggestion_text = match &state {
        SuggestionState::Applicable { edit } => Some(edit.suggestion.lines().join("\n")),
        _ => None,
    };
    let theme = classify_theme(item.root_body(), suggestion_text.as_deref());
    let needs_human = |reasoning: String| TriageDecision {
        id: item.id.clone(),
        decision: Decision::NeedsHuman,
        theme: Some(theme),
        reasoning,
        reply_hint: NEEDS_HUMAN_HINT.to_owned(),
        pr_changed_evidence: false,
    };
    if item.kind != ItemKind::ReviewThread {
        return needs_human(
            "top-level comment: the builtin agent has no model to judge it and only applies \
             suggestion blocks on review threads"
                .to_owned(),
        );
    }
    match &state {
        SuggestionState::Absent => needs_human(
            "no suggestion block: the builtin agent has no model to judge this comment".to_owned(),
        ),
        SuggestionState::Refused { reason } => needs_human(format!(
            "the suggestion block cannot be applied as written: {reason}"
        )),
        SuggestionState::Applicable { edit } => match dry_run(worktree, edit) {
            Ok(()) => TriageDecision {
                id: item.id.clone(),
                decision: Decision::CodeChange,
                theme: Some(theme),
                reasoning: format!(
                    "the comment carries a suggestion block for {} that still applies to the \
                     current file; the builtin agent applies it as written",
                    describe_site(edit)
                ),
                reply_hint: "Applied the suggested change as written.".to_owned(),
                pr_changed_evidence: false,
            },
            Err(reason) => needs_human(format!("the suggestion block no longer applies: {reason}")),
        },
    }
}

fn dry_run(worktree: &Path, edit: &SuggestionEdit) -> Result<(), String> {
    let path = resolve_in_worktree(worktree, &edit.site.path)?;
    let content = read_text(&path, &edit.site.path)?;
    edit.apply(&content).map(drop).map_err(|e| e.to_string())
}

/// The lines `edit` replaces (its site's, for a relative suggestion its
/// effective range).
fn replaced(edit: &SuggestionEdit) -> (u32, u32) {
    edit.effective_range()
        .unwrap_or((edit.site.start_line, edit.site.end_line))
}

fn describe_site(edit: &SuggestionEdit) -> String {
    let (start, end) = replaced(edit);
    if start == end {
        format!("{} line {end}", edit.site.path)
    } else {
        format!("{} lines {start}-{end}", edit.site.path)
    }
}

/// Refuses absolute paths, `..` and empty paths.
fn check_relative(rel: &str) -> Result<(), String> {
    let plain = !rel.is_empty()
        && Path::new(rel)
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if plain {
        Ok(())
    } else {
        Err(format!("{rel}: not a relative path inside the repository"))
    }
}

/// The file `rel` inside `worktree`, refusing anything that could leave it:
/// absolute paths, `..`, and symbolic links pointing outside.
pub(crate) fn resolve_in_worktree(worktree: &Path, rel: &str) -> Result<PathBuf, String> {
    check_relative(rel)?;
    let relative = Path::new(rel);
    let root = worktree
        .canonicalize()
        .map_err(|e| format!("worktree {}: {e}", worktree.display()))?;
    let file = root
        .join(relative)
        .canonicalize()
        .map_err(|e| format!("{rel}: {e}"))?;
    if !file.starts_with(&root) {
        return Err(format!("{rel}: resolves outside the repository"));
    }
    Ok(file)
}

fn read_text(path: &Path, rel: &str) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{rel}: {e}"))?;
    String::from_utf8(bytes).map_err(|_| format!("{rel}: not valid UTF-8"))
}

/// Apply the suggestion of every item of `task` in `task.worktree` (see the
/// module docs). Outcomes are in the task's item order.
pub fn fix(task: &FixTask) -> Result<FixAnswer, AgentError> {
    if task.items.is_empty() || (task.cluster.is_none() && task.items.len() != 1) {
        return Err(AgentError::InvalidTask {
            role: task.role(),
            reason: format!("{} items for a {} task", task.items.len(), task.role()),
        });
    }

    let states: Vec<SuggestionState> = task
        .items
        .iter()
        .map(|item| settle(&task.pr, &task.worktree, item))
        .collect();
    // Item index -> why it was not applied.
    let mut blocked: BTreeMap<usize, String> = BTreeMap::new();
    // Resolved file -> (index, edit) of the applicable suggestions.
    let mut by_file: BTreeMap<PathBuf, Vec<(usize, &SuggestionEdit)>> = BTreeMap::new();
    for (index, (item, state)) in task.items.iter().zip(&states).enumerate() {
        match state {
            SuggestionState::Applicable { edit } if item.kind == ItemKind::ReviewThread => {
                match resolve_in_worktree(&task.worktree, &edit.site.path) {
                    Ok(path) => by_file.entry(path).or_default().push((index, edit)),
                    Err(reason) => {
                        blocked.insert(index, reason);
                    }
                }
            }
            SuggestionState::Refused { reason } => {
                blocked.insert(index, reason.clone());
            }
            _ => {
                blocked.insert(
                    index,
                    "no applicable suggestion block; the builtin agent only applies suggestions"
                        .to_owned(),
                );
            }
        }
    }

    let mut fixed: BTreeMap<usize, &SuggestionEdit> = BTreeMap::new();
    for (path, mut edits) in by_file {
        // Bottom-up, so that no edit moves the lines of one still to apply.
        edits.sort_by_key(|(_, edit)| std::cmp::Reverse(replaced(edit)));
        // Every group holds at least the edit that created it.
        let rel = &edits[0].1.site.path;
        let mut content = match read_text(&path, rel) {
            Ok(content) => content,
            Err(reason) => {
                for (index, _) in edits {
                    blocked.insert(index, reason.clone());
                }
                continue;
            }
        };
        let mut applied: Vec<(usize, &SuggestionEdit)> = Vec::new();
        for (index, edit) in edits {
            let overlap = applied.iter().find(|(_, done)| {
                let ((start, end), (done_start, done_end)) = (replaced(edit), replaced(done));
                start <= done_end && done_start <= end
            });
            if let Some((other, _)) = overlap {
                blocked.insert(
                    index,
                    format!(
                        "{}: overlaps the suggestion of {} on the same lines; refusing to choose",
                        describe_site(edit),
                        task.items[*other].id
                    ),
                );
                continue;
            }
            match edit.apply(&content) {
                Ok(next) => {
                    content = next;
                    applied.push((index, edit));
                }
                Err(e) => {
                    blocked.insert(index, e.to_string());
                }
            }
        }
        if applied.is_empty() {
            continue;
        }
        if let Err(e) = std::fs::write(&path, &content) {
            for (index, _) in applied {
                blocked.insert(index, format!("{rel}: writing failed: {e}"));
            }
            continue;
        }
        tracing::debug!(file = %rel, edits = applied.len(), "builtin agent applied suggestions");
        fixed.extend(applied);
    }

    let outcomes = task
        .items
        .iter()
        .enumerate()
        .map(
            |(index, item)| match (fixed.get(&index), blocked.get(&index)) {
                (Some(edit), _) => ThreadOutcome {
                    id: item.id.clone(),
                    status: FixStatus::Fixed,
                    summary: format!("applied the suggestion to {}", describe_site(edit)),
                    reply: "Applied the suggested change as written.".to_owned(),
                    files: vec![edit.site.path.clone()],
                },
                (None, reason) => {
                    let reason = reason.map_or("not applied", String::as_str);
                    ThreadOutcome {
                        id: item.id.clone(),
                        status: FixStatus::Blocked,
                        summary: format!("suggestion not applied: {reason}"),
                        reply: format!(
                            "Shepherd could not apply this automatically ({reason}). \
                         A maintainer needs to look at it."
                        ),
                        files: Vec::new(),
                    }
                }
            },
        )
        .collect();

    Ok(FixAnswer {
        outcomes,
        cluster_assessment: task.cluster.as_ref().map(|_| ClusterAssessment {
            verdict: ClusterVerdict::Coincidental,
            why: BUILTIN_CLUSTER_WHY.to_owned(),
        }),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;
    use crate::check::{check_fix_answer, check_triage_answer};
    use crate::task::{ClusterContext, PrContext, TaskItem};
    use crate::validate::parse_answer;
    use shepherd_core::cluster::Cluster;
    use shepherd_core::model::{
        ForgeKind, ReviewThread, SubjectType, TopLevelComment, TopLevelKind,
    };
    use shepherd_core::theme::Theme;
    use std::path::Path;
    use std::process::Command;

    /// A ten-line file `l1`..`l10`, and a hunk adding all of it.
    const FILE: &str = "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\nl10\n";
    const HUNK: &str = "@@ -0,0 +1,10 @@\n+l1\n+l2\n+l3\n+l4\n+l5\n+l6\n+l7\n+l8\n+l9\n+l10";

    fn thread(id: &str, path: &str, start: Option<u32>, line: u32, body: &str) -> ReviewThread {
        shepherd_core::testing::thread(id)
            .path(path)
            .range(start, line)
            .comment(
                shepherd_core::testing::comment(format!("{id}-c1"), "rev", body)
                    .hunk(HUNK)
                    .build(),
            )
            .build()
    }

    fn pr() -> PrContext {
        PrContext {
            forge: ForgeKind::GitHub,
            number: 7,
            title: "t".into(),
            url: "https://github.com/o/r/pull/7".into(),
            head_sha: "abc".into(),
            base_ref: "main".into(),
        }
    }

    fn worktree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, content) in files {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, content).unwrap();
        }
        dir
    }

    fn read(dir: &Path, path: &str) -> String {
        std::fs::read_to_string(dir.join(path)).unwrap()
    }

    fn top_level(id: &str, body: &str) -> TaskItem {
        TaskItem::from_top_level(&TopLevelComment {
            id: id.into(),
            database_id: None,
            kind: TopLevelKind::IssueComment,
            author: None,
            body: body.into(),
            url: String::new(),
            created_at: String::new(),
            review_state: None,
        })
    }

    fn triage_task(dir: &Path, items: Vec<TaskItem>) -> TriageTask {
        TriageTask {
            pr: pr(),
            worktree: dir.to_owned(),
            items,
        }
    }

    #[test]
    fn triage_gives_code_change_only_to_applicable_suggestions() {
        let dir = worktree(&[
            ("src/a.rs", FILE),
            ("src/changed.rs", &FILE.replace("l5", "L5")),
        ]);
        let mut outdated = thread("T3", "src/a.rs", None, 4, "```suggestion\nx\n```");
        outdated.is_outdated = true;
        let task = triage_task(
            dir.path(),
            vec![
                TaskItem::from_thread(&thread(
                    "T1",
                    "src/a.rs",
                    Some(2),
                    3,
                    "This should propagate the error instead of unwrap():\n```suggestion\nl2?\n```",
                ), "shepherd"),
                TaskItem::from_thread(&thread("T2", "src/a.rs", None, 4, "Why is this here?"), "shepherd"),
                TaskItem::from_thread(&outdated, "shepherd"),
                TaskItem::from_thread(&thread(
                    "T4",
                    "src/changed.rs",
                    None,
                    5,
                    "```suggestion\nx\n```",
                ), "shepherd"),
                top_level("IC1", "Please add tests.\n```suggestion\nx\n```"),
            ],
        );
        let answer = triage(&task);
        check_triage_answer(&task, &answer).unwrap();
        // The answer passes its own schema.
        let reparsed: TriageAnswer =
            parse_answer(&serde_json::to_string(&answer).unwrap()).unwrap();
        assert_eq!(reparsed, answer);

        let d: Vec<(&str, Decision)> = answer
            .items
            .iter()
            .map(|i| (i.id.as_str(), i.decision))
            .collect();
        assert_eq!(
            d,
            vec![
                ("T1", Decision::CodeChange),
                ("T2", Decision::NeedsHuman),
                ("T3", Decision::NeedsHuman),
                ("T4", Decision::NeedsHuman),
                ("IC1", Decision::NeedsHuman),
            ]
        );
        let r = |i: usize| answer.items[i].reasoning.as_str();
        assert!(r(0).contains("src/a.rs lines 2-3"), "{}", r(0));
        assert!(r(1).starts_with("no suggestion block"), "{}", r(1));
        assert!(r(2).contains("outdated"), "{}", r(2));
        assert!(
            r(3).contains("no longer applies") && r(3).contains("line 5"),
            "{}",
            r(3)
        );
        assert!(r(4).starts_with("top-level comment"), "{}", r(4));
        assert_eq!(answer.items[0].theme, Some(Theme::ErrorHandling));
        assert_eq!(answer.items[4].theme, Some(Theme::Testing));
        assert!(answer.items.iter().all(|i| !i.pr_changed_evidence));
        // Triage changes nothing.
        assert_eq!(read(dir.path(), "src/a.rs"), FILE);
    }

    #[test]
    fn fix_applies_the_suggestion_to_the_worktree() {
        let dir = worktree(&[("src/a.rs", FILE)]);
        let item = TaskItem::from_thread(
            &thread(
                "T1",
                "src/a.rs",
                Some(2),
                3,
                "```suggestion\ntwo\nand\nthree\n```",
            ),
            "shepherd",
        );
        let task = FixTask::single(pr(), dir.path().to_owned(), item);
        let answer = fix(&task).unwrap();
        check_fix_answer(&task, &answer).unwrap();
        assert_eq!(answer.cluster_assessment, None);
        let o = &answer.outcomes[0];
        assert_eq!((o.id.as_str(), o.status), ("T1", FixStatus::Fixed));
        assert_eq!(o.files, vec!["src/a.rs"]);
        assert_eq!(o.summary, "applied the suggestion to src/a.rs lines 2-3");
        assert_eq!(
            read(dir.path(), "src/a.rs"),
            "l1\ntwo\nand\nthree\nl4\nl5\nl6\nl7\nl8\nl9\nl10\n"
        );
    }

    #[test]
    fn fix_refuses_when_the_anchored_lines_changed() {
        let changed = FILE.replace("l3", "l3 // edited");
        let dir = worktree(&[("src/a.rs", &changed)]);
        let item = TaskItem::from_thread(
            &thread("T1", "src/a.rs", Some(2), 3, "```suggestion\nx\n```"),
            "shepherd",
        );
        let answer = fix(&FixTask::single(pr(), dir.path().to_owned(), item)).unwrap();
        let o = &answer.outcomes[0];
        assert_eq!(o.status, FixStatus::Blocked);
        assert!(o.files.is_empty());
        assert!(
            o.summary.contains("line 3 no longer matches"),
            "{}",
            o.summary
        );
        assert!(o.reply.contains("line 3 no longer matches"), "{}", o.reply);
        assert_eq!(read(dir.path(), "src/a.rs"), changed);
    }

    fn cluster(ids: &[&str], files: &[&str]) -> ClusterContext {
        ClusterContext::new(
            Cluster {
                theme: Theme::Naming,
                area: "src".into(),
                files: files.iter().map(|f| f.to_string()).collect(),
                item_ids: ids.iter().map(|f| f.to_string()).collect(),
                hypothesis: "h".into(),
            },
            None,
        )
    }

    #[test]
    fn cluster_fix_applies_each_suggestion_bottom_up() {
        let dir = worktree(&[("src/a.rs", FILE), ("src/b.rs", FILE)]);
        let items = vec![
            // Grows line 2 into three lines: were it applied first, T2's lines would move.
            TaskItem::from_thread(
                &thread("T1", "src/a.rs", None, 2, "```suggestion\n2a\n2b\n2c\n```"),
                "shepherd",
            ),
            TaskItem::from_thread(
                &thread(
                    "T2",
                    "src/a.rs",
                    Some(8),
                    9,
                    "```suggestion\neight-nine\n```",
                ),
                "shepherd",
            ),
            TaskItem::from_thread(
                &thread("T3", "src/b.rs", None, 1, "```suggestion\n```"),
                "shepherd",
            ),
            TaskItem::from_thread(
                &thread("T4", "src/b.rs", None, 5, "rename this"),
                "shepherd",
            ),
        ];
        let task = FixTask::cluster(
            pr(),
            dir.path().to_owned(),
            cluster(&["T1", "T2", "T3", "T4"], &["src/a.rs", "src/b.rs"]),
            items,
        );
        let answer = fix(&task).unwrap();
        check_fix_answer(&task, &answer).unwrap();
        let statuses: Vec<FixStatus> = answer.outcomes.iter().map(|o| o.status).collect();
        assert_eq!(
            statuses,
            [
                FixStatus::Fixed,
                FixStatus::Fixed,
                FixStatus::Fixed,
                FixStatus::Blocked
            ]
        );
        assert_eq!(
            read(dir.path(), "src/a.rs"),
            "l1\n2a\n2b\n2c\nl3\nl4\nl5\nl6\nl7\neight-nine\nl10\n"
        );
        assert_eq!(
            read(dir.path(), "src/b.rs"),
            FILE.strip_prefix("l1\n").unwrap()
        );
        assert!(answer.outcomes[3]
            .summary
            .contains("only applies suggestions"));
        assert_eq!(
            answer.cluster_assessment,
            Some(ClusterAssessment {
                verdict: ClusterVerdict::Coincidental,
                why: BUILTIN_CLUSTER_WHY.into()
            })
        );
        let reparsed: FixAnswer = parse_answer(&serde_json::to_string(&answer).unwrap()).unwrap();
        assert_eq!(reparsed, answer);
    }

    #[test]
    fn overlapping_suggestions_are_not_both_applied() {
        let dir = worktree(&[("src/a.rs", FILE)]);
        let items = vec![
            TaskItem::from_thread(
                &thread("T1", "src/a.rs", Some(3), 5, "```suggestion\nfirst\n```"),
                "shepherd",
            ),
            TaskItem::from_thread(
                &thread("T2", "src/a.rs", Some(5), 6, "```suggestion\nsecond\n```"),
                "shepherd",
            ),
        ];
        let task = FixTask::cluster(
            pr(),
            dir.path().to_owned(),
            cluster(&["T1", "T2"], &["src/a.rs"]),
            items,
        );
        let answer = fix(&task).unwrap();
        // Bottom-up: T2 (lines 5-6) goes first, T1 overlaps it.
        assert_eq!(answer.outcomes[1].status, FixStatus::Fixed);
        assert_eq!(answer.outcomes[0].status, FixStatus::Blocked);
        assert!(
            answer.outcomes[0]
                .summary
                .contains("overlaps the suggestion of T2"),
            "{}",
            answer.outcomes[0].summary
        );
        assert_eq!(
            read(dir.path(), "src/a.rs"),
            "l1\nl2\nl3\nl4\nsecond\nl7\nl8\nl9\nl10\n"
        );
    }

    #[test]
    fn paths_outside_the_worktree_are_refused() {
        let outside = worktree(&[("victim.rs", FILE)]);
        let dir = worktree(&[]);
        std::os::unix::fs::symlink(outside.path().join("victim.rs"), dir.path().join("link.rs"))
            .unwrap();
        let relative = format!(
            "../{}/victim.rs",
            outside.path().file_name().unwrap().to_str().unwrap()
        );
        for (path, why) in [
            (relative.as_str(), "not a relative path inside"),
            ("link.rs", "resolves outside"),
            ("/etc/passwd", "not a relative path inside"),
        ] {
            let item = TaskItem::from_thread(
                &thread("T1", path, None, 2, "```suggestion\nx\n```"),
                "shepherd",
            );
            let answer = fix(&FixTask::single(pr(), dir.path().to_owned(), item)).unwrap();
            assert_eq!(answer.outcomes[0].status, FixStatus::Blocked, "{path}");
            assert!(
                answer.outcomes[0].summary.contains(why),
                "{path}: {}",
                answer.outcomes[0].summary
            );
        }
        assert_eq!(read(outside.path(), "victim.rs"), FILE);
    }

    #[test]
    fn fix_task_shape_is_checked() {
        let dir = worktree(&[]);
        let mut task = FixTask::single(pr(), dir.path().to_owned(), top_level("IC1", "x"));
        task.items.clear();
        assert!(matches!(fix(&task), Err(AgentError::InvalidTask { .. })));
        task.items = vec![top_level("a", "x"), top_level("b", "y")];
        assert!(matches!(fix(&task), Err(AgentError::InvalidTask { .. })));
    }

    #[tokio::test]
    async fn through_the_trait_object() {
        let dir = worktree(&[("src/a.rs", FILE)]);
        let agent: std::sync::Arc<dyn Agent> = std::sync::Arc::new(BuiltinAgent::new());
        assert_eq!(agent.name(), "builtin");
        let item = TaskItem::from_thread(
            &thread("T1", "src/a.rs", None, 1, "```suggestion\none\n```"),
            "shepherd",
        );
        let ctx = AgentContext::default();
        let triaged = agent
            .triage(&triage_task(dir.path(), vec![item.clone()]), &ctx)
            .await
            .unwrap();
        assert_eq!(triaged.items[0].decision, Decision::CodeChange);
        let fixed = agent
            .fix(&FixTask::single(pr(), dir.path().to_owned(), item), &ctx)
            .await
            .unwrap();
        assert_eq!(fixed.outcomes[0].status, FixStatus::Fixed);
        assert!(read(dir.path(), "src/a.rs").starts_with("one\nl2\n"));
    }

    /// A diff of `src/a.rs` (the ten-line FILE) replacing lines 2-3.
    fn diff_replacing_2_3(with: &[&str], extra: &str) -> String {
        let mut d = String::from(
            "diff --git a/src/a.rs b/src/a.rs\nindex 1..2 100644\n--- a/src/a.rs\n+++ b/src/a.rs\n",
        );
        d.push_str(&format!(
            "@@ -1,6 +1,{} @@\n l1\n-l2\n-l3\n",
            4 + with.len()
        ));
        for l in with {
            d.push_str(&format!("+{l}\n"));
        }
        d.push_str(" l4\n l5\n l6\n");
        d.push_str(extra);
        d
    }

    fn validation_task(items: Vec<TaskItem>, diff: String) -> FixValidationTask {
        FixValidationTask::new(pr(), PathBuf::from("/nonexistent"), items, diff)
    }

    fn suggested(id: &str) -> TaskItem {
        TaskItem::from_thread(
            &thread(
                id,
                "src/a.rs",
                Some(2),
                3,
                "```suggestion\ntwo\nand\nthree\n```",
            ),
            "shepherd",
        )
    }

    #[test]
    fn a_verbatim_suggestion_is_addressed() {
        let task = validation_task(
            vec![suggested("T1")],
            diff_replacing_2_3(&["two", "and", "three"], ""),
        );
        let answer = validate_fix(&task);
        crate::check::check_fix_validation_answer(&task, &answer).unwrap();
        assert_eq!(answer.items[0].verdict, FixVerdict::Addressed);
        assert_eq!(
            answer.items[0].reasons,
            ["the diff applies the suggestion block to src/a.rs lines 2-3 exactly as written"]
        );
        let reparsed: FixValidationAnswer =
            parse_answer(&serde_json::to_string(&answer).unwrap()).unwrap();
        assert_eq!(reparsed, answer);
    }

    #[test]
    fn anything_but_the_verbatim_suggestion_is_unclear() {
        let other_file = "diff --git a/src/b.rs b/src/b.rs\n--- a/src/b.rs\n+++ b/src/b.rs\n@@ -1 +1 @@\n-x\n+y\n";
        let cases = [
            (
                diff_replacing_2_3(&["two", "AND", "three"], ""),
                "does not apply",
            ),
            (
                diff_replacing_2_3(&["two", "and", "three"], other_file),
                "also changes other lines (in src/b.rs)",
            ),
            (String::new(), "the diff is empty"),
            ("@@ broken".to_owned(), "could not be read"),
        ];
        for (diff, why) in cases {
            let answer = validate_fix(&validation_task(vec![suggested("T1")], diff));
            assert_eq!(answer.items[0].verdict, FixVerdict::Unclear, "{why}");
            assert!(
                answer.items[0].reasons[0].contains(why),
                "{:?}",
                answer.items[0]
            );
        }
        let no_suggestion =
            TaskItem::from_thread(&thread("T2", "src/a.rs", None, 2, "rename"), "shepherd");
        let answer = validate_fix(&validation_task(
            vec![no_suggestion],
            diff_replacing_2_3(&["two"], ""),
        ));
        assert_eq!(answer.items[0].verdict, FixVerdict::Unclear);
        assert!(answer.items[0].reasons[0].starts_with("no applicable suggestion block"));
    }

    #[test]
    fn two_suggestions_in_one_hunk_are_both_addressed() {
        let second = TaskItem::from_thread(
            &thread("T2", "src/a.rs", None, 5, "```suggestion\nfive\n```"),
            "shepherd",
        );
        let diff = "--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1,7 +1,8 @@\n l1\n-l2\n-l3\n+two\n+and\n+three\n l4\n-l5\n+five\n l6\n l7\n";
        let answer = validate_fix(&validation_task(vec![suggested("T1"), second], diff.into()));
        let verdicts: Vec<FixVerdict> = answer.items.iter().map(|v| v.verdict).collect();
        assert_eq!(verdicts, [FixVerdict::Addressed, FixVerdict::Addressed]);
    }

    // ---- GitLab ----------------------------------------------------------

    /// A git repository holding `files` in one commit; its worktree and SHA.
    fn repository(files: &[(&str, &str)]) -> (tempfile::TempDir, String) {
        let dir = worktree(files);
        let git = |args: &[&str]| {
            let out = Command::new("git")
                .arg("-C")
                .arg(dir.path())
                .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
                .args(args)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .output()
                .unwrap();
            assert!(out.status.success(), "git {args:?}: {out:?}");
            String::from_utf8(out.stdout).unwrap().trim().to_owned()
        };
        git(&["init", "-q"]);
        git(&["add", "-A"]);
        git(&["commit", "-q", "-m", "head"]);
        let sha = git(&["rev-parse", "HEAD"]);
        (dir, sha)
    }

    fn gitlab_pr(head_sha: &str) -> PrContext {
        PrContext {
            forge: ForgeKind::GitLab,
            url: "https://gitlab.com/o/r/-/merge_requests/7".into(),
            head_sha: head_sha.into(),
            ..pr()
        }
    }

    /// A GitLab thread: a discussion id, notes without diff hunks.
    fn gitlab_thread(
        id: &str,
        path: &str,
        start: Option<u32>,
        line: u32,
        body: &str,
    ) -> ReviewThread {
        let mut t = thread(id, path, start, line, body);
        t.comments[0].diff_hunk = None;
        t
    }

    #[test]
    fn gitlab_suggestions_are_triaged_and_applied_relative_to_the_commented_line() {
        let (dir, head) = repository(&[("src/a.rs", FILE), ("src/b.rs", FILE)]);
        let threads = [
            // -2+0 on the one-line thread at 9: lines 7-9.
            gitlab_thread(
                "D1",
                "src/a.rs",
                None,
                9,
                "```suggestion:-2+0\nseven-nine\n```",
            ),
            // A plain block is -0+0: line 3 only, on a thread over 2-3.
            gitlab_thread("D2", "src/a.rs", Some(2), 3, "```suggestion\nthree\n```"),
            // +1 below: lines 1-2 of b.
            gitlab_thread(
                "D3",
                "src/b.rs",
                None,
                1,
                "```suggestion:-0+1\none-two\n```",
            ),
            // GitHub's reading of it would need a diff hunk: GitLab's does not.
            gitlab_thread("D4", "src/b.rs", None, 5, "```suggestion:-0+0\n```"),
        ];
        for (name, items) in [
            (
                "made for GitLab",
                threads
                    .iter()
                    .map(|t| TaskItem::from_thread_on(t, ForgeKind::GitLab, "shepherd"))
                    .collect::<Vec<_>>(),
            ),
            (
                "made with GitHub's reading",
                threads
                    .iter()
                    .map(|t| TaskItem::from_thread(t, "shepherd"))
                    .collect(),
            ),
        ] {
            let task = TriageTask {
                pr: gitlab_pr(&head),
                worktree: dir.path().to_owned(),
                items: items.clone(),
            };
            let answer = triage(&task);
            for d in &answer.items {
                assert_eq!(d.decision, Decision::CodeChange, "{name}: {d:?}");
            }
            assert!(
                answer.items[0].reasoning.contains("src/a.rs lines 7-9"),
                "{name}"
            );
            assert!(
                answer.items[1].reasoning.contains("src/a.rs line 3"),
                "{name}"
            );
            if name == "made for GitLab" {
                let SuggestionState::Applicable { edit } = &items[0].suggestion else {
                    panic!("{:?}", items[0].suggestion);
                };
                assert!(edit.anchor_pending, "the task carries GitLab's reading");
            }
        }

        let items: Vec<TaskItem> = threads
            .iter()
            .map(|t| TaskItem::from_thread_on(t, ForgeKind::GitLab, "shepherd"))
            .collect();
        let task = FixTask::cluster(
            gitlab_pr(&head),
            dir.path().to_owned(),
            cluster(&["D1", "D2", "D3", "D4"], &["src/a.rs", "src/b.rs"]),
            items,
        );
        let answer = fix(&task).unwrap();
        check_fix_answer(&task, &answer).unwrap();
        assert!(
            answer.outcomes.iter().all(|o| o.status == FixStatus::Fixed),
            "{answer:?}"
        );
        assert_eq!(
            answer.outcomes[0].summary,
            "applied the suggestion to src/a.rs lines 7-9"
        );
        assert_eq!(
            read(dir.path(), "src/a.rs"),
            "l1\nl2\nthree\nl4\nl5\nl6\nseven-nine\nl10\n"
        );
        assert_eq!(
            read(dir.path(), "src/b.rs"),
            "one-two\nl3\nl4\nl6\nl7\nl8\nl9\nl10\n"
        );

        // Validation reads the same suggestions from the diff of the fix.
        let diff = "--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1,10 +1,8 @@\n l1\n l2\n-l3\n+three\n l4\n l5\n l6\n-l7\n-l8\n-l9\n+seven-nine\n l10\n";
        let validation = FixValidationTask::new(
            gitlab_pr(&head),
            dir.path().to_owned(),
            task.items[..2].to_vec(),
            diff.to_owned(),
        );
        let verdicts: Vec<FixVerdict> = validate_fix(&validation)
            .items
            .iter()
            .map(|v| v.verdict)
            .collect();
        assert_eq!(verdicts, [FixVerdict::Addressed, FixVerdict::Addressed]);
    }

    #[test]
    fn gitlab_suggestions_are_anchored_on_the_head_not_on_the_moved_worktree() {
        let (dir, head) = repository(&[("src/a.rs", FILE)]);
        let item = TaskItem::from_thread_on(
            &gitlab_thread("D1", "src/a.rs", None, 4, "```suggestion:-0+0\nfour\n```"),
            ForgeKind::GitLab,
            "shepherd",
        );
        // An earlier fix of the round added a line above: line 4 is now l3.
        let moved = format!("l0\n{FILE}");
        std::fs::write(dir.path().join("src/a.rs"), &moved).unwrap();
        let answer = fix(&FixTask::single(
            gitlab_pr(&head),
            dir.path().to_owned(),
            item.clone(),
        ))
        .unwrap();
        let o = &answer.outcomes[0];
        assert_eq!(o.status, FixStatus::Blocked, "{o:?}");
        assert!(
            o.summary.contains("line 4 no longer matches"),
            "{}",
            o.summary
        );
        assert_eq!(read(dir.path(), "src/a.rs"), moved);

        // Refusals: outdated, left side, a head the repository lacks.
        let mut outdated = gitlab_thread("D2", "src/a.rs", None, 4, "```suggestion:-0+0\nx\n```");
        outdated.is_outdated = true;
        let mut left = gitlab_thread("D3", "src/a.rs", None, 4, "```suggestion:-0+0\nx\n```");
        left.diff_side = shepherd_core::model::DiffSide::Left;
        for (thread, head, why) in [
            (outdated, head.as_str(), "outdated"),
            (left, head.as_str(), "left side"),
            (
                gitlab_thread("D4", "src/a.rs", None, 4, "```suggestion:-0+0\nx\n```"),
                "0123456789012345678901234567890123456789",
                "cannot read it at the head 0123456789",
            ),
            (
                gitlab_thread("D5", "src/a.rs", None, 4, "```suggestion:-0+0\nx\n```"),
                "HEAD",
                "not a commit id",
            ),
        ] {
            let item = TaskItem::from_thread(&thread, "shepherd");
            let triaged = triage(&TriageTask {
                pr: gitlab_pr(head),
                worktree: dir.path().to_owned(),
                items: vec![item],
            });
            assert_eq!(triaged.items[0].decision, Decision::NeedsHuman, "{why}");
            assert!(
                triaged.items[0].reasoning.contains(why),
                "{why}: {}",
                triaged.items[0].reasoning
            );
        }
    }

    #[test]
    fn an_items_gitlab_reading_is_its_threads() {
        let mut threads = vec![
            gitlab_thread("D1", "src/a.rs", Some(2), 4, "```suggestion:-1+1\nx\n```"),
            gitlab_thread("D2", "src/a.rs", None, 4, "no block"),
            gitlab_thread("D3", "src/a.rs", None, 4, "```suggestion\n```"),
        ];
        let mut outdated = gitlab_thread("D4", "src/a.rs", None, 4, "```suggestion\nx\n```");
        outdated.is_outdated = true;
        outdated.line = None;
        threads.push(outdated);
        let mut file = gitlab_thread("D5", "src/a.rs", None, 4, "```suggestion\nx\n```");
        file.line = None;
        file.original_line = None;
        file.subject_type = SubjectType::File;
        threads.push(file);
        for t in &threads {
            let item = TaskItem::from_thread(t, "shepherd");
            assert_eq!(
                item.gitlab_suggestion(),
                SuggestionState::of_thread_on(t, ForgeKind::GitLab, "shepherd"),
                "{}",
                t.id
            );
        }
        // GitHub's reading is untouched by the forge-aware constructor.
        let t = thread("T1", "src/a.rs", None, 2, "```suggestion\nx\n```");
        assert_eq!(
            TaskItem::from_thread_on(&t, ForgeKind::GitHub, "shepherd"),
            TaskItem::from_thread(&t, "shepherd")
        );
    }

    #[tokio::test]
    async fn review_and_apply_review_have_no_model() {
        let agent = BuiltinAgent::new();
        let ctx = AgentContext::default();
        let review = agent
            .review(
                &ReviewTask {
                    pr: pr(),
                    worktree: PathBuf::from("/nonexistent"),
                    base_sha: "a".into(),
                    head_sha: "b".into(),
                    commits: Vec::new(),
                    files: Vec::new(),
                    diff: String::new(),
                },
                &ctx,
            )
            .await
            .unwrap();
        assert!(review.findings.is_empty());
        assert_eq!(review.summary, "builtin provider has no model");
        crate::check::check_review_answer(&review).unwrap();
        let finding = crate::answer::ReviewFinding {
            id: "F1".into(),
            severity: crate::answer::Severity::High,
            confidence: 90,
            title: "t".into(),
            path: None,
            line: None,
            explanation: "e".into(),
            reproduction: Some("false".into()),
        };
        let task = ApplyReviewTask {
            pr: pr(),
            worktree: PathBuf::from("/nonexistent"),
            findings: vec![crate::task::HeldFinding {
                finding,
                evidence: "it failed".into(),
            }],
        };
        let applied = agent.apply_review(&task, &ctx).await.unwrap();
        crate::check::check_apply_review_answer(&task, &applied).unwrap();
        assert_eq!(applied.outcomes[0].status, FixStatus::Blocked);
    }
}
