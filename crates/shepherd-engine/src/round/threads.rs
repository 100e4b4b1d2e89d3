//! Stage 3, threads: classify every unresolved thread and top-level comment
//! against the ledger (the store's ledger of the PR, plus entries rebuilt
//! from Shepherd's markers on the forge, so a fresh state directory never
//! replies twice; only markers in the viewer's own comments count, so a
//! pasted one hides nothing), keep what is trusted (and, in targeted mode, the one
//! thread), and find the items an earlier attempt of this run already fixed
//! or got approved but did not reply to (`threads.json`).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use shepherd_core::classify::{classify, rebuild_ledger_from_markers, Class, Classified};
use shepherd_core::config::TrustConfig;
use shepherd_core::gate::ItemResult;
use shepherd_core::model::PrSnapshot;
use shepherd_core::target::{Mode, Target, TargetedThread};
use shepherd_core::Ledger;

use super::item::{Planned, WorkItem};
use shepherd_forge::Forge;

use super::replies::still_held;
use super::runner::{Access, Books};
use super::state::{Items, Round, RoundEnd, Step, Synced};
use super::workspace::Workspace;
use crate::error::Result;
use crate::options::Stage;
use crate::run_dir::read_json;
use crate::store::LedgerRecord;

#[derive(Serialize)]
struct ThreadsArtifact<'a> {
    items: &'a [Classified],
    out_of_scope: Vec<&'a str>,
    new: Vec<&'a str>,
    carried: Vec<&'a str>,
    resolve_retry: Vec<&'a str>,
    untrusted: Vec<&'a str>,
    /// Items reported to the user earlier in the run, unchanged since.
    held_for_user: Vec<&'a str>,
    ledger_from_markers: usize,
    /// What each item says (its first and, when there are more, its last
    /// comment), for people reading the run (the dashboard). Untrusted text.
    excerpts: BTreeMap<&'a str, Excerpt<'a>>,
}

/// The longest comment body kept in an excerpt, in characters.
const EXCERPT_CHARS: usize = 2000;

#[derive(Serialize)]
struct Excerpt<'a> {
    comments: usize,
    first: CommentExcerpt<'a>,
    last: Option<CommentExcerpt<'a>>,
    /// A thread on several lines: its first line on the current diff (its
    /// last is the item's `line`), so that a suggestion is shown over the
    /// lines it replaces.
    #[serde(skip_serializing_if = "Option::is_none")]
    start_line: Option<u32>,
}

#[derive(Serialize)]
struct CommentExcerpt<'a> {
    author: Option<&'a str>,
    body: String,
}

impl<'a> CommentExcerpt<'a> {
    fn new(author: Option<&'a shepherd_core::model::Author>, body: &str) -> Self {
        let mut text: String = body.chars().take(EXCERPT_CHARS).collect();
        if text.len() < body.len() {
            text.push_str(" …");
        }
        CommentExcerpt {
            author: author.map(|a| a.login.as_str()),
            body: text,
        }
    }
}

/// The excerpts of every thread and top-level comment of `snapshot`.
fn excerpts(snapshot: &PrSnapshot) -> BTreeMap<&str, Excerpt<'_>> {
    let threads = snapshot.threads.iter().filter_map(|t| {
        let first = t.comments.first()?;
        let last = t.comments.last().filter(|_| t.comments.len() > 1);
        Some((
            t.id.as_str(),
            Excerpt {
                comments: t.comments.len(),
                first: CommentExcerpt::new(first.author.as_ref(), &first.body),
                last: last.map(|c| CommentExcerpt::new(c.author.as_ref(), &c.body)),
                start_line: t.start_line,
            },
        ))
    });
    let comments = snapshot.comments.iter().map(|c| {
        (
            c.id.as_str(),
            Excerpt {
                comments: 1,
                first: CommentExcerpt::new(c.author.as_ref(), &c.body),
                last: None,
                start_line: None,
            },
        )
    });
    threads.chain(comments).collect()
}

/// The ledger a round classifies against: entries rebuilt from the markers
/// (for items the store knows nothing of), then the store's entries, so an
/// item's latest entry is the store's when it has one.
pub(crate) fn merged_ledger(store_entries: &Ledger, snapshot: &PrSnapshot) -> (Ledger, usize) {
    let known: BTreeSet<&str> = store_entries
        .entries()
        .iter()
        .map(|e| e.item_id.as_str())
        .collect();
    let from_markers: Vec<_> = rebuild_ledger_from_markers(snapshot, &snapshot.viewer)
        .into_iter()
        .filter(|e| !known.contains(e.item_id.as_str()))
        .collect();
    let count = from_markers.len();
    let ledger = from_markers
        .into_iter()
        .chain(store_entries.entries().iter().cloned())
        .collect();
    (ledger, count)
}

/// Whether Shepherd acts on an item: its opener is trusted (`[trust]`).
/// A person counts as a collaborator only when the forge said they may
/// write to the repository ([`learn_access`]); on a public repository
/// anyone can comment, and everyone else is reported.
pub(crate) fn trusted(trust: &TrustConfig, access: &Access, c: &Classified) -> bool {
    trust.trusts(c.author.as_ref(), may_write(access, c))
}

/// Why Shepherd does not act on an item, or `None` when it does.
fn untrusted_because(trust: &TrustConfig, access: &Access, c: &Classified) -> Option<String> {
    let role = c
        .author
        .as_ref()
        .and_then(|a| access.get(&a.login))
        .map(|a| a.role.as_str());
    trust.untrusted_because(c.author.as_ref(), may_write(access, c), role)
}

/// Whether the forge said the item's opener may write (unknown: no).
fn may_write(access: &Access, c: &Classified) -> bool {
    c.author
        .as_ref()
        .and_then(|a| access.get(&a.login))
        .is_some_and(|a| a.can_write)
}

/// Asks the forge, once per run and person, whether the openers of the
/// new items in `classified` may write to the repository (GitHub's
/// collaborator permission API, GitLab's project members), for the
/// people whose trust depends on it. A forge that cannot tell fails
/// the round closed: the reason is returned.
pub(crate) async fn learn_access(
    forge: &dyn Forge,
    trust: &TrustConfig,
    access: &mut Access,
    classified: &[Classified],
) -> std::result::Result<(), String> {
    let logins: BTreeSet<String> = classified
        .iter()
        .filter(|c| c.class == Class::New)
        .filter(|c| trust.needs_access(c.author.as_ref()))
        .filter_map(|c| c.author.as_ref().map(|a| a.login.clone()))
        .filter(|login| !access.contains_key(login))
        .collect();
    for login in logins {
        let known = forge.user_access(&login).await.map_err(|e| {
            format!("cannot tell whether @{login} may write to the repository (`[trust]`): {e}")
        })?;
        tracing::debug!(%login, role = %known.role, can_write = known.can_write, "access");
        access.insert(login, known);
    }
    Ok(())
}

/// Whether an item is in the run's scope (targeted mode: the one thread).
pub(crate) fn in_scope(target: &Target, snapshot: &PrSnapshot, c: &Classified) -> bool {
    match target.mode {
        Mode::Full => true,
        Mode::Targeted(TargetedThread::GitHubDiscussion(id) | TargetedThread::GitLabNote(id)) => {
            snapshot
                .threads
                .iter()
                .any(|t| t.id == c.item_id && t.comments.iter().any(|c| c.database_id == Some(id)))
        }
    }
}

/// Classify `snapshot` against the PR's ledger (store plus markers).
pub(crate) fn classify_snapshot(
    books: &Books,
    snapshot: &PrSnapshot,
) -> Result<(Ledger, Vec<Classified>, usize)> {
    let store_ledger = books.store().ledger_for_pr(&books.run.pr)?;
    let (ledger, from_markers) = merged_ledger(&store_ledger, snapshot);
    let classified = classify(snapshot, &ledger);
    Ok((ledger, classified, from_markers))
}

/// Classify the snapshot pr-state fetched: a look at the threads, should
/// the round stop before the threads stage.
pub(crate) fn look_at_snapshot(books: &mut Books, n: u32, snapshot: &PrSnapshot) -> Result<()> {
    let (_, classified, _) = classify_snapshot(books, snapshot)?;
    books.note_items(&classified);
    books.looked_at_threads(n, "pr-state", classified)
}

/// Classify the PR's feedback, keep what the round acts on, and carry
/// what an earlier attempt of this run did not reply to.
pub(crate) async fn stage(
    books: &mut Books,
    forge: &dyn Forge,
    trust: &TrustConfig,
    access: &mut Access,
    round: &Round,
    synced: &Synced,
    ws: &Workspace,
) -> Result<Step<Items>> {
    let snapshot = &synced.snapshot;
    let (ledger, classified, from_markers) = classify_snapshot(books, snapshot)?;
    let scoped: Vec<Classified> = classified
        .iter()
        .filter(|c| in_scope(&books.run.target, snapshot, c))
        .cloned()
        .collect();
    if let Err(reason) = learn_access(forge, trust, access, &scoped).await {
        return Ok(Err(RoundEnd::Failed { reason }));
    }
    let mut work = Vec::new();
    let mut carried = Vec::new();
    let mut resolve_retry = Vec::new();
    books.note_items(&classified);

    // This run's latest entry of each item: what an earlier attempt did.
    let mine: BTreeMap<String, LedgerRecord> = books
        .store()
        .latest_entries(&books.run.run_id)?
        .into_iter()
        .map(|r| (r.entry.item_id.clone(), r))
        .collect();

    reconcile(books, snapshot, &classified, &mine)?;

    let mut untrusted = Vec::new();
    let mut held = Vec::new();
    let mut untrusted_items = Vec::new();
    for c in &classified {
        if !in_scope(&books.run.target, snapshot, c) {
            continue;
        }
        let Some(item) = WorkItem::of(c, snapshot) else {
            // Classification only yields the snapshot's threads and
            // top-level comments.
            tracing::warn!(item = %c.item_id, "a classified item the snapshot does not show");
            continue;
        };
        match c.class {
            Class::New if !trusted(trust, access, c) => {
                let why = untrusted_because(trust, access, c).unwrap_or_default();
                untrusted_items
                    .push(item.attention(shepherd_core::report::AttentionKind::Untrusted, why));
                untrusted.push(c.item_id.clone());
            }
            Class::New if still_held(&books.run, snapshot, &c.item_id) => {
                held.push(c.item_id.clone());
            }
            Class::New => match mine.get(&c.item_id) {
                Some(record) if record.entry.decision.is_some() && !record.entry.replied => {
                    match carry(books, ws, &item, record, &synced.start_sha).await? {
                        Some(planned) => carried.push((item, planned)),
                        None => work.push(item),
                    }
                }
                _ => work.push(item),
            },
            Class::ResolveRetry => resolve_retry.push(item),
            Class::AwaitingReviewer => {}
        }
    }

    let artifact = ThreadsArtifact {
        items: &classified,
        out_of_scope: classified
            .iter()
            .filter(|c| !in_scope(&books.run.target, snapshot, c))
            .map(|c| c.item_id.as_str())
            .collect(),
        new: work.iter().map(WorkItem::id).collect(),
        carried: carried.iter().map(|(w, _)| w.id()).collect(),
        resolve_retry: resolve_retry.iter().map(WorkItem::id).collect(),
        untrusted: untrusted.iter().map(String::as_str).collect(),
        held_for_user: held.iter().map(String::as_str).collect(),
        ledger_from_markers: from_markers,
        excerpts: excerpts(snapshot),
    };
    books.artifact(round, "threads.json", &artifact)?;
    books.run.untrusted = untrusted_items;
    let mut summary = format!(
        "{} item(s): {} new, {} resolve-retry, {} awaiting reviewer",
        classified.len(),
        work.len(),
        resolve_retry.len(),
        classified
            .iter()
            .filter(|c| c.class == Class::AwaitingReviewer)
            .count()
    );
    if !carried.is_empty() {
        summary.push_str(&format!(
            ", {} carried from an earlier attempt",
            carried.len()
        ));
    }
    if !untrusted.is_empty() {
        summary.push_str(&format!(
            ", {} untrusted (reported, not acted on)",
            untrusted.len()
        ));
    }
    if !held.is_empty() {
        summary.push_str(&format!(
            ", {} needing your decision (reported earlier, unchanged since)",
            held.len()
        ));
    }
    if from_markers > 0 {
        summary.push_str(&format!(
            ", {from_markers} ledger entries rebuilt from markers"
        ));
    }
    books.stage_done(round, Stage::Threads, summary)?;
    Ok(Ok(Items {
        ledger,
        classified,
        work,
        carried,
        resolve_retry,
    }))
}

/// Catch the ledger up with replies the forge has but this run's ledger
/// does not (the process stopped between the forge's answer and the
/// ledger write): the item's reply is recorded, with its comment id.
fn reconcile(
    books: &Books,
    snapshot: &PrSnapshot,
    classified: &[Classified],
    mine: &BTreeMap<String, LedgerRecord>,
) -> Result<()> {
    for c in classified.iter().filter(|c| c.class != Class::New) {
        // Only a reply this run meant to post (a planned entry with its
        // body) is adopted: after an abandoned attempt, a reply with the
        // same marker is another runner's.
        let Some(record) = mine
            .get(&c.item_id)
            .filter(|r| !r.entry.replied && r.reply_body.is_some())
        else {
            continue;
        };
        // Our reply: the viewer's comment with the item's marker.
        let own = |body: &str, author: Option<&shepherd_core::Author>| {
            shepherd_core::Marker::is_own_for(body, author, &snapshot.viewer, &c.item_id)
        };
        let reply = snapshot
            .threads
            .iter()
            .filter(|t| t.id == c.item_id)
            .flat_map(|t| &t.comments)
            .filter(|x| own(&x.body, x.author.as_ref()))
            .map(|x| x.id.clone())
            .chain(
                snapshot
                    .comments
                    .iter()
                    .filter(|x| own(&x.body, x.author.as_ref()))
                    .map(|x| x.id.clone()),
            )
            .next_back();
        let Some(reply_id) = reply else { continue };
        let mut entry = record.entry.clone();
        entry.replied = true;
        entry.reply_id = Some(reply_id);
        books.store().append_ledger(&LedgerRecord {
            entry,
            at: crate::store::Timestamp::now(),
            ..record.clone()
        })?;
    }
    Ok(())
}

/// The planned result of an item an earlier attempt of this run handled
/// without replying: kept when it needs no commit, or when its commit is
/// already in the live head (pushed). A commit the forge does not have is
/// redone from triage (the worktree was re-synced without it).
async fn carry(
    books: &Books,
    ws: &Workspace,
    item: &WorkItem,
    record: &LedgerRecord,
    head: &str,
) -> Result<Option<Planned>> {
    let e = &record.entry;
    let (Some(decision), Some(outcome)) = (e.decision, e.outcome) else {
        return Ok(None);
    };
    if let Some(commit) = e.commit.clone() {
        let head = head.to_owned();
        let pushed = ws
            .git(move |wt| wt.is_ancestor(&commit, &head))
            .await
            .unwrap_or(false);
        if !pushed {
            return Ok(None);
        }
    }
    let Some(reply) = record.reply_body.clone() else {
        return Ok(None);
    };
    // The cluster files the result declared, from that round's results.
    let cluster_files =
        read_json::<Vec<serde_json::Value>>(&books.dir.round(e.round).join("results.json"))
            .ok()
            .and_then(|results| {
                results.into_iter().find_map(|r| {
                    (r["result"]["item_id"] == e.item_id.as_str()).then(|| {
                        serde_json::from_value::<Vec<String>>(r["result"]["cluster_files"].clone())
                            .unwrap_or_default()
                    })
                })
            })
            .unwrap_or_default();
    Ok(Some(Planned {
        result: ItemResult {
            item_id: e.item_id.clone(),
            decision,
            outcome,
            commit: e.commit.clone(),
            metadata_applied: record.fix_kind.as_deref() == Some("metadata"),
            reply,
            reply_target: item.reply_target(),
            resolve_authorized: e.resolve_authorized,
            cluster_files,
        },
        kind: item.classified.kind,
        fix_kind: record.fix_kind.clone(),
        summary: format!("carried from round {}", e.round),
        carried: true,
    }))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use shepherd_core::model::{Comment, ReviewThread};
    use shepherd_core::testing;
    use shepherd_core::{LedgerEntry, Marker};

    use super::*;

    fn comment(id: &str, login: &str, body: &str) -> Comment {
        testing::comment(id, login, body).build()
    }

    /// What `me` sees: these threads on `a.sh`.
    fn snapshot(threads: Vec<ReviewThread>) -> PrSnapshot {
        testing::snapshot("me", threads, Vec::new())
    }

    fn thread(id: &str, comments: Vec<Comment>) -> ReviewThread {
        testing::thread(id).path("a.sh").comments(comments).build()
    }

    #[test]
    fn the_store_wins_over_markers_and_markers_fill_the_gaps() {
        let snap = snapshot(vec![
            thread(
                "T1",
                vec![
                    comment("c1", "rev", "fix it"),
                    comment("c2", "me", &Marker::new("T1", 1, true).append_to("done")),
                ],
            ),
            thread(
                "T2",
                vec![
                    comment("c3", "rev", "why?"),
                    comment(
                        "c4",
                        "me",
                        &Marker::new("T2", 1, false).append_to("because"),
                    ),
                ],
            ),
        ]);
        let mut known = LedgerEntry::new("T1", 1);
        known.replied = true;
        known.reply_id = Some("c2".into());
        known.resolve_authorized = true;
        known.resolved = true;
        let store: Ledger = [known.clone()].into_iter().collect();
        let (ledger, from_markers) = merged_ledger(&store, &snap);
        assert_eq!(from_markers, 1, "only T2 comes from its marker");
        assert_eq!(ledger.latest("T1"), Some(&known));
        let t2 = ledger.latest("T2").unwrap();
        assert!(t2.replied && !t2.resolve_authorized);
        assert_eq!(t2.reply_id.as_deref(), Some("c4"));
    }

    /// SECURITY: a marker pasted by another account never enters the
    /// ledger, whatever it says.
    #[test]
    fn a_pasted_marker_never_enters_the_ledger() {
        let snap = snapshot(vec![thread(
            "T1",
            vec![
                comment("c1", "rev", "fix it"),
                comment(
                    "c2",
                    "mallory",
                    &Marker::new("T1", 1, true).append_to("done"),
                ),
            ],
        )]);
        let (ledger, from_markers) = merged_ledger(&Ledger::new(), &snap);
        assert_eq!(from_markers, 0);
        assert!(ledger.latest("T1").is_none());
        let mut own = snap.clone();
        own.threads[0].comments[1].author = comment("x", "me", "").author;
        let (ledger, from_markers) = merged_ledger(&Ledger::new(), &own);
        assert_eq!(from_markers, 1, "the same comment by the viewer counts");
        assert!(ledger.latest("T1").is_some_and(|e| e.resolve_authorized));
    }
}
