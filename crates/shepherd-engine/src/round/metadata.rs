//! Metadata fixes (SPEC section 3, step 7; section 4's `metadata-change`
//! row): a fix agent edits the pull request's title, description and
//! labels as files (`.shepherd-pr/title.txt`, `body.md`, `labels.txt` in
//! its scratch worktree); Shepherd turns the difference into an edit and
//! applies it through the forge API.
//!
//! - The description is added to, never replaced: the text the agent added
//!   at the end of `body.md` goes into a section of the description
//!   delimited by `<!-- shepherd:metadata item=ID -->` and
//!   `<!-- /shepherd:metadata item=ID -->` (replaced if the section is
//!   there, appended otherwise). An edit that changes or removes any of the
//!   existing text is refused and handed to a person.
//! - The ledger gets an entry before the forge calls and one after.
//! - Crash safety: the PR is read again before the edit is applied, and an
//!   edit already present (a crash, or a "commit then fail" answer) is not
//!   applied twice; after the calls, the PR is read back and the edit counts
//!   as applied only when the forge shows it (the honesty gate's metadata
//!   rule: applied, no commit).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use shepherd_agent::{FixStatus, FixTask, PrContext, TaskItem, TriageNote};
use shepherd_core::config::{Config, APPROVAL_LABEL};
use shepherd_core::gate::resolve_authorized;
use shepherd_core::reply::Said;
use shepherd_core::{Decision, LedgerEntry, Outcome};
use shepherd_forge::Forge;

use super::item::WorkItem;
use super::runner::Books;
use super::state::Round;
use super::unit::UnitResult;
use super::unit::{blocked_all, blocked_by_failure, FixUnit, JobOutput};
use crate::error::Result;
use crate::options::PrFields;
use crate::store::{LedgerRecord, Timestamp};

/// The directory of a metadata fixer's worktree holding the PR's fields.
pub(crate) const PR_DIR: &str = ".shepherd-pr";
const TITLE_FILE: &str = ".shepherd-pr/title.txt";
const BODY_FILE: &str = ".shepherd-pr/body.md";
const LABELS_FILE: &str = ".shepherd-pr/labels.txt";

/// What the metadata fixer is told, with triage's reasoning.
const INSTRUCTIONS: &str = "This item is a metadata-change: the pull request's title, \
description and labels are the files .shepherd-pr/title.txt (one line), .shepherd-pr/body.md \
and .shepherd-pr/labels.txt (one label per line) of your worktree. Make the change by editing \
those files and no other. Shepherd applies it through the forge: the new title, the labels \
added or removed, and the text you add at the END of body.md, which goes into a section of the \
description marked as Shepherd's. Do not change or remove any existing text of body.md: such an \
edit is refused.";

/// Write `fields` into `dir/.shepherd-pr/`.
pub(crate) fn write_fields(dir: &Path, fields: &PrFields) -> std::io::Result<()> {
    std::fs::create_dir_all(dir.join(PR_DIR))?;
    std::fs::write(dir.join(TITLE_FILE), format!("{}\n", fields.title))?;
    std::fs::write(dir.join(BODY_FILE), &fields.body)?;
    let mut labels = fields.labels.join("\n");
    if !labels.is_empty() {
        labels.push('\n');
    }
    std::fs::write(dir.join(LABELS_FILE), labels)?;
    Ok(())
}

/// Read the fields back from `dir/.shepherd-pr/`.
pub(crate) fn read_fields(dir: &Path) -> std::io::Result<PrFields> {
    let title = std::fs::read_to_string(dir.join(TITLE_FILE))?;
    let body = std::fs::read_to_string(dir.join(BODY_FILE))?;
    let labels = std::fs::read_to_string(dir.join(LABELS_FILE))?;
    Ok(PrFields {
        title: title.lines().next().unwrap_or("").trim().to_owned(),
        body,
        labels: labels
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect(),
    })
}

/// The fix task of a metadata item, working in `dir`.
pub(crate) fn metadata_task(pr: PrContext, dir: PathBuf, items: Vec<TaskItem>) -> FixTask {
    let items = items
        .into_iter()
        .map(|item| {
            let note = match &item.triage {
                Some(n) => TriageNote {
                    reasoning: format!("{} {INSTRUCTIONS}", n.reasoning),
                    reply_hint: n.reply_hint.clone(),
                },
                None => TriageNote {
                    reasoning: INSTRUCTIONS.to_owned(),
                    reply_hint: String::new(),
                },
            };
            item.with_triage(note)
        })
        .collect();
    FixTask {
        pr,
        worktree: dir,
        items,
        cluster: None,
        files_hint: vec![
            TITLE_FILE.to_owned(),
            BODY_FILE.to_owned(),
            LABELS_FILE.to_owned(),
        ],
    }
}

/// The edit a metadata fixer asked for, as Shepherd applies it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub(crate) struct MetadataEdit {
    /// The new title.
    pub(crate) title: Option<String>,
    /// The text of the item's section of the description.
    pub(crate) section: Option<String>,
    /// Labels to add.
    pub(crate) add_labels: Vec<String>,
    /// Labels to remove.
    pub(crate) remove_labels: Vec<String>,
}

impl MetadataEdit {
    /// What the edit does, for the reply.
    fn describe(&self) -> String {
        let mut parts = Vec::new();
        if self.title.is_some() {
            parts.push("set the title".to_owned());
        }
        if self.section.is_some() {
            parts.push("added to the description (a section marked as Shepherd's)".to_owned());
        }
        if !self.add_labels.is_empty() {
            parts.push(format!("added the label(s) {}", self.add_labels.join(", ")));
        }
        if !self.remove_labels.is_empty() {
            parts.push(format!(
                "removed the label(s) {}",
                self.remove_labels.join(", ")
            ));
        }
        format!("Shepherd edited the pull request: {}.", parts.join("; "))
    }
}

fn normalize(text: &str) -> String {
    text.replace("\r\n", "\n").trim_end().to_owned()
}

/// The edit that turns `before` into `after`: a changed title, labels added
/// and removed, and text appended to the description. Refused (with the
/// reason) when the description's existing text changed, the title would be
/// empty, or nothing changed.
pub(crate) fn plan_edit(
    before: &PrFields,
    after: &PrFields,
) -> std::result::Result<MetadataEdit, String> {
    let mut edit = MetadataEdit::default();
    let title = after.title.trim();
    if title.is_empty() {
        return Err("the edit would leave the pull request without a title".to_owned());
    }
    if title != before.title.trim() {
        edit.title = Some(title.to_owned());
    }
    let old = normalize(&before.body);
    let new = normalize(&after.body);
    if new != old {
        match new.strip_prefix(old.as_str()) {
            Some(added) if !added.trim().is_empty() => {
                edit.section = Some(added.trim().to_owned());
            }
            Some(_) => {}
            None => {
                return Err(
                    "the edit would change or remove the existing description; Shepherd only adds \
                     to it"
                        .to_owned(),
                )
            }
        }
    }
    edit.add_labels = after
        .labels
        .iter()
        .filter(|l| !before.labels.contains(l))
        .cloned()
        .collect();
    edit.remove_labels = before
        .labels
        .iter()
        .filter(|l| !after.labels.contains(l))
        .cloned()
        .collect();
    if edit == MetadataEdit::default() {
        return Err("the fixer changed none of the title, description or labels".to_owned());
    }
    // Shepherd never grants itself approval (issue 26.2): a request for
    // the approval label is answered, not done; only a person adds it.
    // Label names compare without case, as GitHub's do.
    let approval = |l: &String| l.trim().eq_ignore_ascii_case(APPROVAL_LABEL);
    if edit.add_labels.iter().any(approval) || edit.remove_labels.iter().any(approval) {
        return Err(format!(
            "Shepherd never adds or removes its own approval label `{APPROVAL_LABEL}`: a \
             maintainer adds it to approve Shepherd's replies, or removes it"
        ));
    }
    Ok(edit)
}

fn section_start(item: &str) -> String {
    format!("<!-- shepherd:metadata item={item} -->")
}

fn section_end(item: &str) -> String {
    format!("<!-- /shepherd:metadata item={item} -->")
}

fn section_block(item: &str, text: &str) -> String {
    format!(
        "{}\n{}\n{}",
        section_start(item),
        text.trim(),
        section_end(item)
    )
}

/// `body` with item `item`'s section holding `text`: the section replaced
/// where it is, else appended. The rest of the body is kept as it is.
pub(crate) fn body_with_section(body: &str, item: &str, text: &str) -> String {
    let (start, end) = (section_start(item), section_end(item));
    let block = section_block(item, text);
    if let Some(s) = body.find(&start) {
        if let Some(e) = body[s..].find(&end) {
            let e = s + e + end.len();
            return format!("{}{block}{}", &body[..s], &body[e..]);
        }
    }
    let kept = body.trim_end();
    if kept.is_empty() {
        block
    } else {
        format!("{kept}\n\n{block}")
    }
}

/// Whether `current` already shows `edit` of item `item`.
pub(crate) fn is_applied(current: &PrFields, item: &str, edit: &MetadataEdit) -> bool {
    let title = edit
        .title
        .as_deref()
        .is_none_or(|t| current.title.trim() == t);
    let body = edit
        .section
        .as_deref()
        .is_none_or(|text| normalize(&current.body).contains(&section_block(item, text)));
    let added = edit.add_labels.iter().all(|l| current.labels.contains(l));
    let removed = edit
        .remove_labels
        .iter()
        .all(|l| !current.labels.contains(l));
    title && body && added && removed
}

/// The title, description and labels of pull request `number`, as the
/// forge has them now.
pub(crate) async fn read_pr_fields(
    forge: &dyn Forge,
    number: u64,
) -> std::result::Result<PrFields, String> {
    forge
        .pull_request_fields(number)
        .await
        .map_err(|e| format!("cannot read the pull request's description: {e}"))
}

/// Apply a metadata unit's edit; the result of its one item.
pub(crate) async fn merge_metadata(
    books: &mut Books,
    forge: &dyn Forge,
    config: &Config,
    round: &Round,
    unit: &FixUnit,
    out: JobOutput,
) -> Result<BTreeMap<String, UnitResult>> {
    let Some(item) = unit.items.first() else {
        return Ok(BTreeMap::new());
    };
    let answer = match out.answer {
        Ok(a) => a,
        Err(failure) => return Ok(blocked_by_failure(unit, &failure)),
    };
    let Some(outcome) = answer.outcomes.into_iter().find(|o| o.id == item.id()) else {
        return Ok(blocked_all(unit, "the fixer gave no outcome for it"));
    };
    if outcome.status == FixStatus::Blocked {
        return Ok(BTreeMap::from([(
            item.id().to_owned(),
            UnitResult {
                status: FixStatus::Blocked,
                reply: outcome.reply,
                summary: outcome.summary,
                commit: None,
                metadata_applied: false,
            },
        )]));
    }
    let (Some(before), Some(after)) = (out.metadata_before, out.metadata_after) else {
        return Ok(blocked_all(
            unit,
            "the fixer's edit of the pull request could not be read",
        ));
    };
    let edit = match plan_edit(&before, &after) {
        Ok(edit) => edit,
        Err(why) => return Ok(blocked_all(unit, &why)),
    };
    let mut summary = outcome.summary.clone();
    if !out.changed.is_empty() {
        summary.push_str(&format!(
            " (changes to repository files were ignored: {})",
            out.changed.join(", ")
        ));
    }
    match apply_metadata_edit(books, forge, round, item, &edit).await? {
        Ok(adopted) => {
            let reply = Said::Edited {
                text: &outcome.reply,
                edit: &edit.describe(),
            }
            .text();
            let cfg = config.gate_config();
            let authorized = resolve_authorized(
                Decision::MetadataChange,
                Outcome::Fixed,
                &item.gate_item().kind,
                &cfg,
            );
            books.store().append_ledger(&LedgerRecord {
                run_id: books.run.run_id.clone(),
                entry: LedgerEntry {
                    item_id: item.id().to_owned(),
                    round: round.n,
                    decision: Some(Decision::MetadataChange),
                    outcome: Some(Outcome::Fixed),
                    commit: None,
                    reply_id: None,
                    resolve_authorized: authorized,
                    replied: false,
                    resolved: false,
                },
                fix_kind: Some("metadata".to_owned()),
                reply_body: Some(reply.clone()),
                at: Timestamp::now(),
            })?;
            if adopted {
                summary.push_str(" (the edit was already on the pull request)");
            }
            Ok(BTreeMap::from([(
                item.id().to_owned(),
                UnitResult {
                    status: FixStatus::Fixed,
                    reply,
                    summary,
                    commit: None,
                    metadata_applied: true,
                },
            )]))
        }
        Err(why) => Ok(blocked_all(unit, &why)),
    }
}

/// Apply `edit` of `item` through the forge, with a ledger entry before
/// the calls: read the PR first (an edit already there is not applied
/// again), make the calls, read it back. `Ok(adopted)` when the forge
/// shows the edit (`adopted`: it was there before the calls).
async fn apply_metadata_edit(
    books: &mut Books,
    forge: &dyn Forge,
    round: &Round,
    item: &WorkItem,
    edit: &MetadataEdit,
) -> Result<std::result::Result<bool, String>> {
    let number = books.run.target.number;
    books.store().append_ledger(&LedgerRecord {
        run_id: books.run.run_id.clone(),
        entry: LedgerEntry {
            decision: Some(Decision::MetadataChange),
            ..LedgerEntry::new(item.id(), round.n)
        },
        fix_kind: None,
        reply_body: None,
        at: Timestamp::now(),
    })?;
    books.event(
        Some(round.n),
        "metadata-edit-started",
        serde_json::json!({ "item": item.id(), "edit": edit }),
    )?;
    let current = match read_pr_fields(forge, number).await {
        Ok(f) => f,
        Err(why) => return Ok(Err(why)),
    };
    let adopted = is_applied(&current, item.id(), edit);
    let mut errors: Vec<String> = Vec::new();
    let mut sent_body: Option<String> = None;
    if !adopted {
        let title = edit.title.as_deref().filter(|t| current.title.trim() != *t);
        let body = edit
            .section
            .as_deref()
            .map(|text| body_with_section(&current.body, item.id(), text))
            .filter(|b| *b != current.body);
        if title.is_some() || body.is_some() {
            if let Err(e) = forge
                .update_pull_request(number, title, body.as_deref())
                .await
            {
                errors.push(e.to_string());
            }
        }
        sent_body = body;
        let add: Vec<String> = edit
            .add_labels
            .iter()
            .filter(|l| !current.labels.contains(l))
            .cloned()
            .collect();
        if !add.is_empty() {
            if let Err(e) = forge.add_labels(number, &add).await {
                errors.push(e.to_string());
            }
        }
        for label in edit
            .remove_labels
            .iter()
            .filter(|l| current.labels.contains(l))
        {
            if let Err(e) = forge.remove_label(number, label).await {
                errors.push(e.to_string());
            }
        }
    }
    // Read back: the edit counts only when the forge shows it.
    let (shown, after) = match read_pr_fields(forge, number).await {
        Ok(f) => (is_applied(&f, item.id(), edit), Some(f)),
        Err(why) => {
            errors.push(why);
            (false, None)
        }
    };
    // Not all of it: a part that landed is undone, so that the pull
    // request is either fully edited or as it was, and the reply says
    // which.
    let undo = match (&after, shown) {
        (Some(after), false) => Some(
            undo_partial_edit(forge, number, edit, &current, after, sent_body.as_deref()).await,
        ),
        _ => None,
    };
    books.event(
        Some(round.n),
        "metadata-edit-finished",
        serde_json::json!({
            "item": item.id(),
            "applied": shown,
            "already_there": adopted,
            "errors": errors,
            "left_after_undo": undo.as_ref().map(|u| u.left.clone()),
            "undo_errors": undo.as_ref().map(|u| u.errors.clone()),
        }),
    )?;
    if shown {
        return Ok(Ok(adopted));
    }
    let mut why = format!(
        "the pull request does not show the whole edit after the forge calls{}",
        if errors.is_empty() {
            String::new()
        } else {
            format!(": {}", errors.join("; "))
        }
    );
    match undo {
        None => why.push_str(
            "; the pull request could not be read back, so whether part of the edit is on it \
             is unknown",
        ),
        Some(u) if u.undone.is_empty() && u.left.is_empty() => {
            why.push_str("; nothing of it was applied")
        }
        Some(u) if u.left.is_empty() => why.push_str(&format!(
            "; the part that had been applied ({}) was undone, so the pull request is as it was",
            u.undone.join("; ")
        )),
        Some(u) => why.push_str(&format!(
            "; part of the edit is still on the pull request and could not be undone: {}",
            u.left.join("; ")
        )),
    }
    Ok(Err(why))
}

/// Undo the parts of `edit` that `after` shows (against `before`, the
/// pull request before the calls): the title and the description only
/// when they are still what Shepherd set (`sent_body`), the labels the
/// edit added or removed. Reads the pull request back to say what is
/// left.
async fn undo_partial_edit(
    forge: &dyn Forge,
    number: u64,
    edit: &MetadataEdit,
    before: &PrFields,
    after: &PrFields,
    sent_body: Option<&str>,
) -> Undo {
    let mut errors = Vec::new();
    let title = edit
        .title
        .as_deref()
        .filter(|t| after.title.trim() == *t && before.title.trim() != *t)
        .map(|_| before.title.as_str());
    let body = sent_body
        .filter(|b| after.body == *b)
        .map(|_| before.body.as_str());
    if title.is_some() || body.is_some() {
        if let Err(e) = forge.update_pull_request(number, title, body).await {
            errors.push(e.to_string());
        }
    }
    let added: Vec<String> = edit
        .add_labels
        .iter()
        .filter(|l| after.labels.contains(l) && !before.labels.contains(l))
        .cloned()
        .collect();
    for label in &added {
        if let Err(e) = forge.remove_label(number, label).await {
            errors.push(e.to_string());
        }
    }
    let removed: Vec<String> = edit
        .remove_labels
        .iter()
        .filter(|l| !after.labels.contains(l) && before.labels.contains(l))
        .cloned()
        .collect();
    if !removed.is_empty() {
        if let Err(e) = forge.add_labels(number, &removed).await {
            errors.push(e.to_string());
        }
    }
    let tried = partial_parts(edit, before, after);
    let left = match read_pr_fields(forge, number).await {
        Ok(now) => partial_parts(edit, before, &now),
        Err(why) => {
            errors.push(why);
            // Not read back: nothing is known to be undone.
            tried.clone()
        }
    };
    let undone = tried.into_iter().filter(|p| !left.contains(p)).collect();
    Undo {
        undone,
        left,
        errors,
    }
}

/// What undoing a partial metadata edit did.
struct Undo {
    /// The parts that were on the pull request and are no longer.
    undone: Vec<String>,
    /// The parts still on it.
    left: Vec<String>,
    /// The errors of the undo calls.
    errors: Vec<String>,
}

/// The parts of `edit` that `now` shows and `before` did not, as a person
/// reads them (`set the title`, `added the label(s) docs`).
pub(crate) fn partial_parts(edit: &MetadataEdit, before: &PrFields, now: &PrFields) -> Vec<String> {
    let mut parts = Vec::new();
    if edit
        .title
        .as_deref()
        .is_some_and(|t| now.title.trim() == t && before.title.trim() != t)
    {
        parts.push("the new title".to_owned());
    }
    if edit.section.is_some() && normalize(&now.body) != normalize(&before.body) {
        parts.push("the description's change".to_owned());
    }
    let added: Vec<&str> = edit
        .add_labels
        .iter()
        .filter(|l| now.labels.contains(l) && !before.labels.contains(l))
        .map(String::as_str)
        .collect();
    if !added.is_empty() {
        parts.push(format!("the added label(s) {}", added.join(", ")));
    }
    let removed: Vec<&str> = edit
        .remove_labels
        .iter()
        .filter(|l| !now.labels.contains(l) && before.labels.contains(l))
        .map(String::as_str)
        .collect();
    if !removed.is_empty() {
        parts.push(format!(
            "the removal of the label(s) {}",
            removed.join(", ")
        ));
    }
    parts
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;

    fn fields(title: &str, body: &str, labels: &[&str]) -> PrFields {
        PrFields {
            title: title.into(),
            body: body.into(),
            labels: labels.iter().map(|l| (*l).to_owned()).collect(),
        }
    }

    #[test]
    fn appended_text_becomes_a_section_and_the_rest_is_kept() {
        let before = fields("Add login", "Adds login.\r\n", &["a"]);
        let after = fields(
            "Add login",
            "Adds login.\n\n## Testing\nRun it.\n",
            &["a", "b"],
        );
        let edit = plan_edit(&before, &after).unwrap();
        assert_eq!(edit.title, None);
        assert_eq!(edit.section.as_deref(), Some("## Testing\nRun it."));
        assert_eq!(edit.add_labels, ["b"]);
        let body = body_with_section(&before.body, "IC_1", edit.section.as_deref().unwrap());
        assert!(
            body.starts_with("Adds login.\n\n<!-- shepherd:metadata item=IC_1 -->\n"),
            "{body}"
        );
        let now = fields("Add login", &body, &["a", "b"]);
        assert!(is_applied(&now, "IC_1", &edit));
        assert!(!is_applied(&before, "IC_1", &edit));
        // Applying again replaces the section, never doubles it.
        let again = body_with_section(&body, "IC_1", "## Testing\nRun it twice.");
        assert_eq!(
            again
                .matches("<!-- shepherd:metadata item=IC_1 -->")
                .count(),
            1,
            "{again}"
        );
        assert!(again.starts_with("Adds login."), "{again}");
        assert!(again.contains("Run it twice."));
    }

    #[test]
    fn edits_that_drop_the_authors_text_or_change_nothing_are_refused() {
        let before = fields("T", "The author's words.", &[]);
        assert!(plan_edit(&before, &fields("T", "Other words.", &[]))
            .unwrap_err()
            .contains("existing description"));
        assert!(plan_edit(&before, &fields("T", "The author's", &[])).is_err());
        assert!(plan_edit(&before, &before.clone())
            .unwrap_err()
            .contains("none"));
        assert!(plan_edit(&before, &fields("  ", "The author's words.", &[])).is_err());
        // The approval label, added or removed, in any case: refused whole.
        let why = plan_edit(
            &before,
            &fields("T", "The author's words.", &["bug", "Shepherd-Approved"]),
        )
        .unwrap_err();
        assert!(why.contains("never adds or removes"), "{why}");
        let approved = fields("T", "The author's words.", &["shepherd-approved"]);
        assert!(plan_edit(&approved, &before).is_err());
        let retitled =
            plan_edit(&before, &fields("New title", "The author's words.\n", &[])).unwrap();
        assert_eq!(retitled.title.as_deref(), Some("New title"));
        assert_eq!(retitled.section, None);
    }

    #[test]
    fn partial_parts_name_what_landed() {
        let before = fields("T", "Body", &["keep", "old"]);
        let edit = MetadataEdit {
            title: Some("New".into()),
            section: Some("More".into()),
            add_labels: vec!["docs".into()],
            remove_labels: vec!["old".into()],
        };
        assert!(partial_parts(&edit, &before, &before).is_empty());
        let body = body_with_section("Body", "IC_1", "More");
        assert_eq!(
            partial_parts(&edit, &before, &fields("New", &body, &["keep", "old"])),
            ["the new title", "the description's change"]
        );
        assert_eq!(
            partial_parts(&edit, &before, &fields("T", "Body", &["keep", "docs"])),
            ["the added label(s) docs", "the removal of the label(s) old"]
        );
    }

    #[test]
    fn fields_round_trip_through_files() {
        let dir = tempfile::tempdir().unwrap();
        let f = fields("Title", "Body\n", &["x", "y z"]);
        write_fields(dir.path(), &f).unwrap();
        assert_eq!(read_fields(dir.path()).unwrap(), f);
    }
}
