//! From a merge request's discussions to review threads and top-level items.
//!
//! - A discussion that can be resolved (several notes, one of them
//!   resolvable: GitLab's own rule) is a review thread, with id the
//!   discussion id; resolved ones are dropped. Its comments are its notes
//!   that are not system notes, oldest first, each with id the note id.
//! - Any other discussion whose first note is a person's (not a system
//!   note) is a top-level item (`IssueComment`), with id that note's id.
//! - System notes ("added 1 commit", "resolved all threads") are ignored.
//!
//! A thread's anchor is its first note's `position`: `new_path`/`new_line`
//! (right side), falling back to `old_path`/`old_line` (left side, a removed
//! line); the start of a multi-line range comes from
//! `line_range.start` (its line numbers, else those of its line code). A
//! thread without a position (started on the overview) has an empty path,
//! no line, and is a file-level thread.
//!
//! Outdated, the rule implemented: GitLab moves a note's position to each
//! new diff while its lines are unchanged, so a position whose `head_sha` is
//! the merge request's head is current. Otherwise the lines are traced from
//! the position's head to the merge request's head through
//! `GET …/repository/compare?from=<position head>&to=<head>&straight=true`
//! (one request per distinct position head): a file the comparison does not
//! touch keeps its lines; a right-side range whose lines all survive, with
//! nothing inserted between them, moves to where they are now; anything else
//! (a changed, deleted or renamed file, a diff too large to show, a failed
//! comparison) is outdated. A left-side thread stays current only when the
//! target side did not move (same `start_sha`) and its file is untouched.
//! An outdated thread keeps its original lines and has no current line.

use std::collections::HashMap;

use shepherd_core::model::{
    Comment, DiffSide, ReviewThread, SubjectType, TopLevelComment, TopLevelKind,
};

use super::trace::{map_range, parse_hunks};
use super::wire::{CompareWire, DiscussionWire, NoteWire, PositionWire, UserWire};

/// What the mapping needs of the merge request.
#[derive(Debug, Clone)]
pub(crate) struct MrView {
    /// The head commit.
    pub(crate) head_sha: String,
    /// The target side of the current diff (`diff_refs.start_sha`).
    pub(crate) start_sha: Option<String>,
    /// The merge request's web URL (`…/-/merge_requests/7`).
    pub(crate) web_url: String,
}

/// A thread's anchor, as written (at `head_sha`).
#[derive(Debug, Clone)]
pub(crate) struct Anchor {
    head_sha: String,
    start_sha: Option<String>,
    /// The file at `head_sha` (`new_path`).
    head_path: String,
    side: DiffSide,
    /// The first line of a multi-line range.
    start: Option<u32>,
    /// The (last) line; `None` for a file-level note.
    end: Option<u32>,
}

/// A thread whose current lines are not settled yet.
#[derive(Debug, Clone)]
pub(crate) struct Pending {
    thread: ReviewThread,
    anchor: Option<Anchor>,
}

impl Pending {
    /// The position's head, when it is not the merge request's (the thread's
    /// lines must be traced from there).
    pub(crate) fn trace_from<'a>(&'a self, mr: &MrView) -> Option<&'a str> {
        let anchor = self.anchor.as_ref()?;
        (anchor.head_sha != mr.head_sha).then_some(anchor.head_sha.as_str())
    }
}

/// The discussions, split.
#[derive(Debug, Default)]
pub(crate) struct Split {
    /// Unresolved review threads, in forge order.
    pub(crate) threads: Vec<Pending>,
    /// Top-level items, in forge order.
    pub(crate) items: Vec<TopLevelComment>,
}

/// Splits `discussions` into unresolved threads and top-level items.
pub(crate) fn split(discussions: Vec<DiscussionWire>, mr: &MrView) -> Split {
    let mut out = Split::default();
    for discussion in discussions {
        if discussion.is_resolvable() {
            if discussion.is_resolved() {
                continue;
            }
            out.threads.push(thread(discussion, mr));
            continue;
        }
        let Some(first) = discussion.notes.into_iter().next() else {
            continue;
        };
        if first.system {
            continue;
        }
        out.items.push(TopLevelComment {
            id: first.id.to_string(),
            database_id: Some(first.id),
            kind: TopLevelKind::IssueComment,
            author: first.author.as_ref().map(UserWire::author),
            url: note_url(&mr.web_url, first.id),
            created_at: first.created_at,
            body: first.body,
            review_state: None,
        });
    }
    out
}

/// The web URL of note `id` of the merge request at `web_url`.
pub(crate) fn note_url(web_url: &str, id: u64) -> String {
    format!("{web_url}#note_{id}")
}

fn comment(note: NoteWire, web_url: &str) -> Comment {
    Comment {
        id: note.id.to_string(),
        database_id: Some(note.id),
        author: note.author.as_ref().map(UserWire::author),
        url: note_url(web_url, note.id),
        // GitLab creates a note when it is published (a draft note's
        // publication makes a new note), so `created_at` is that time.
        created_at: note.created_at,
        body: note.body,
        diff_hunk: None,
        review_state: None,
        review_submitted_at: None,
    }
}

fn thread(discussion: DiscussionWire, mr: &MrView) -> Pending {
    let position = discussion
        .notes
        .iter()
        .find(|n| !n.system)
        .and_then(|n| n.position.clone());
    let anchor = position.as_ref().and_then(anchor);
    let (path, side) = match (&position, &anchor) {
        (_, Some(anchor)) if anchor.side == DiffSide::Left => (
            position
                .as_ref()
                .and_then(|p| p.old_path.clone())
                .unwrap_or_else(|| anchor.head_path.clone()),
            DiffSide::Left,
        ),
        (_, Some(anchor)) => (anchor.head_path.clone(), DiffSide::Right),
        (Some(p), None) => (
            p.new_path
                .clone()
                .or_else(|| p.old_path.clone())
                .unwrap_or_default(),
            DiffSide::Right,
        ),
        (None, None) => (String::new(), DiffSide::Right),
    };
    let on_lines = anchor.as_ref().and_then(|a| a.end).is_some();
    let comments = discussion
        .notes
        .into_iter()
        .filter(|n| !n.system)
        .map(|n| comment(n, &mr.web_url))
        .collect();
    let end = anchor.as_ref().and_then(|a| a.end);
    let start = anchor.as_ref().and_then(|a| a.start);
    Pending {
        thread: ReviewThread {
            id: discussion.id,
            is_resolved: false,
            is_outdated: false,
            path,
            line: end,
            start_line: start,
            original_line: end,
            original_start_line: start,
            diff_side: side,
            subject_type: if on_lines {
                SubjectType::Line
            } else {
                SubjectType::File
            },
            // GitLab does not say per discussion; a refusal surfaces when
            // the reply or the resolve is sent.
            viewer_can_reply: true,
            viewer_can_resolve: true,
            comments,
        },
        anchor,
    }
}

/// The anchor of a position with a head and a file; `None` for a position
/// Shepherd cannot place (no head SHA, no path).
fn anchor(position: &PositionWire) -> Option<Anchor> {
    let head_sha = position.head_sha.clone().filter(|s| !s.is_empty())?;
    let head_path = position
        .new_path
        .clone()
        .or_else(|| position.old_path.clone())
        .filter(|p| !p.is_empty())?;
    let text = position.position_type.as_deref().unwrap_or("text") == "text";
    let start_point = position
        .line_range
        .as_ref()
        .and_then(|r| r.start.as_ref())
        .map(|p| p.lines());
    let (side, end, start) = match (text, position.new_line, position.old_line) {
        (false, _, _) | (true, None, None) => (DiffSide::Right, None, None),
        (true, Some(new), _) => (DiffSide::Right, Some(new), start_point.and_then(|(_, n)| n)),
        (true, None, Some(old)) => (DiffSide::Left, Some(old), start_point.and_then(|(o, _)| o)),
    };
    // A one-line range, or a start past the end, has no separate start.
    let start = match (start, end) {
        (Some(start), Some(end)) if start < end => Some(start),
        _ => None,
    };
    Some(Anchor {
        head_sha,
        start_sha: position.start_sha.clone(),
        head_path,
        side,
        start,
        end,
    })
}

/// The threads with their current lines, given the comparisons fetched per
/// position head (`None`: the comparison failed).
pub(crate) fn settle(
    threads: Vec<Pending>,
    mr: &MrView,
    compares: &HashMap<String, Option<CompareWire>>,
) -> Vec<ReviewThread> {
    threads
        .into_iter()
        .map(|pending| {
            let Pending { mut thread, anchor } = pending;
            let Some(anchor) = anchor else {
                return thread;
            };
            if anchor.head_sha == mr.head_sha {
                return thread;
            }
            let compare = compares.get(&anchor.head_sha).and_then(Option::as_ref);
            match traced(&anchor, mr, compare) {
                Some((start, end)) => {
                    thread.line = end;
                    thread.start_line = start;
                }
                None => {
                    thread.is_outdated = true;
                    thread.line = None;
                    thread.start_line = None;
                }
            }
            thread
        })
        .collect()
}

/// `(start_line, line)` at the merge request's head, or `None`: outdated.
fn traced(
    anchor: &Anchor,
    mr: &MrView,
    compare: Option<&CompareWire>,
) -> Option<(Option<u32>, Option<u32>)> {
    let compare = compare.filter(|c| !c.compare_timeout)?;
    let change = compare
        .diffs
        .iter()
        .find(|d| d.old_path == anchor.head_path || d.new_path == anchor.head_path);
    let Some(change) = change else {
        // The file is the same at both heads.
        if anchor.side == DiffSide::Left && anchor.start_sha != mr.start_sha {
            return None;
        }
        return Some((anchor.start, anchor.end));
    };
    let unusable = change.deleted_file
        || change.renamed_file
        || change.old_path != anchor.head_path
        || change.diff.is_empty()
        || change.too_large == Some(true)
        || change.collapsed == Some(true);
    if unusable || anchor.side == DiffSide::Left {
        return None;
    }
    let Some(end) = anchor.end else {
        // A file-level note on a file that changed.
        return None;
    };
    let hunks = parse_hunks(&change.diff)?;
    let (start, end) = map_range(&hunks, anchor.start.unwrap_or(end), end)?;
    Some((anchor.start.map(|_| start), Some(end)))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use serde_json::json;
    use shepherd_core::model::AuthorKind;

    use super::*;
    use crate::gitlab::wire::FileDiffWire;

    const HEAD: &str = "1111111111111111111111111111111111111111";
    const OLD: &str = "0000000000000000000000000000000000000000";

    fn mr() -> MrView {
        MrView {
            head_sha: HEAD.into(),
            start_sha: Some("5555555555555555555555555555555555555555".into()),
            web_url: "https://gitlab.example/g/p/-/merge_requests/7".into(),
        }
    }

    fn user(name: &str) -> serde_json::Value {
        json!({ "id": 1, "username": name, "name": name, "state": "active" })
    }

    fn note(id: u64, body: &str, position: serde_json::Value) -> serde_json::Value {
        json!({
            "id": id, "type": "DiffNote", "body": body, "author": user("alice"),
            "created_at": format!("2024-05-02T10:00:{:02}.000Z", id % 60),
            "system": false, "resolvable": true, "resolved": false,
            "position": position,
        })
    }

    fn position(head: &str, new_line: Option<u32>, old_line: Option<u32>) -> serde_json::Value {
        json!({
            "base_sha": "5555555555555555555555555555555555555555",
            "start_sha": "5555555555555555555555555555555555555555",
            "head_sha": head,
            "old_path": "src/lib.rs", "new_path": "src/lib.rs",
            "position_type": "text", "new_line": new_line, "old_line": old_line,
        })
    }

    fn discussion(id: &str, notes: Vec<serde_json::Value>) -> DiscussionWire {
        serde_json::from_value(json!({ "id": id, "individual_note": false, "notes": notes }))
            .unwrap()
    }

    #[test]
    fn resolvable_threads_items_and_system_notes() {
        let system = json!({
            "id": 50, "type": null, "body": "added 1 commit", "author": user("alice"),
            "created_at": "2024-05-02T10:00:00.000Z", "system": true, "resolvable": false,
        });
        let lone = json!({
            "id": 60, "type": null, "body": "Please also update the changelog.",
            "author": user("project_5_bot_ab12"), "created_at": "2024-05-02T10:01:00.000Z",
            "system": false, "resolvable": false,
        });
        let mut resolved = note(70, "done?", position(HEAD, Some(3), None));
        resolved["resolved"] = true.into();
        let discussions = vec![
            serde_json::from_value(
                json!({ "id": "d-system", "individual_note": true, "notes": [system] }),
            )
            .unwrap(),
            discussion(
                "d-open",
                vec![
                    note(1, "root", position(HEAD, Some(12), Some(11))),
                    note(2, "reply", json!(null)),
                ],
            ),
            serde_json::from_value(
                json!({ "id": "d-lone", "individual_note": true, "notes": [lone] }),
            )
            .unwrap(),
            discussion("d-resolved", vec![resolved]),
        ];
        let split = split(discussions, &mr());
        assert_eq!(split.items.len(), 1);
        let item = &split.items[0];
        assert_eq!((item.id.as_str(), item.database_id), ("60", Some(60)));
        assert_eq!(item.kind, TopLevelKind::IssueComment);
        assert_eq!(item.author.as_ref().unwrap().kind, AuthorKind::Bot);
        assert_eq!(
            item.url,
            "https://gitlab.example/g/p/-/merge_requests/7#note_60"
        );
        let threads = settle(split.threads, &mr(), &HashMap::new());
        assert_eq!(threads.len(), 1, "resolved threads are dropped");
        let t = &threads[0];
        assert_eq!(t.id, "d-open");
        assert_eq!(
            (t.path.as_str(), t.line, t.diff_side),
            ("src/lib.rs", Some(12), DiffSide::Right)
        );
        assert!(!t.is_outdated);
        assert_eq!(t.subject_type, SubjectType::Line);
        let ids: Vec<&str> = t.comments.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["1", "2"]);
        assert_eq!(t.comments[1].database_id, Some(2));
    }

    #[test]
    fn old_side_and_ranges_and_overview_threads() {
        let mut ranged = position(HEAD, Some(20), None);
        ranged["line_range"] = json!({
            "start": { "line_code": "abc_0_17", "type": "new" },
            "end": { "line_code": "abc_0_20", "type": "new" },
        });
        let mut overview = note(3, "general question", json!(null));
        overview["type"] = "DiscussionNote".into();
        let discussions = vec![
            discussion(
                "d-left",
                vec![note(1, "why remove?", position(HEAD, None, Some(8)))],
            ),
            discussion("d-range", vec![note(2, "these lines", ranged)]),
            discussion("d-overview", vec![overview]),
        ];
        let threads = settle(split(discussions, &mr()).threads, &mr(), &HashMap::new());
        assert_eq!(
            (threads[0].diff_side, threads[0].line),
            (DiffSide::Left, Some(8))
        );
        assert_eq!(
            (threads[1].start_line, threads[1].line),
            (Some(17), Some(20))
        );
        assert_eq!(threads[1].original_start_line, Some(17));
        let overview = &threads[2];
        assert_eq!((overview.path.as_str(), overview.line), ("", None));
        assert_eq!(overview.subject_type, SubjectType::File);
        assert!(!overview.is_outdated);
    }

    fn compare(diff: &str) -> CompareWire {
        CompareWire {
            diffs: vec![FileDiffWire {
                old_path: "src/lib.rs".into(),
                new_path: "src/lib.rs".into(),
                diff: diff.into(),
                renamed_file: false,
                deleted_file: false,
                too_large: None,
                collapsed: None,
            }],
            compare_timeout: false,
        }
    }

    #[test]
    fn stale_positions_are_traced_or_outdated() {
        // Between OLD and HEAD: two lines inserted at the top, line 10 changed.
        let diff = "@@ -1,2 +1,4 @@\n+a\n+b\n x\n y\n@@ -9,3 +11,3 @@\n n\n-t\n+T\n e\n";
        let discussions = vec![
            discussion("moved", vec![note(1, "a", position(OLD, Some(5), None))]),
            discussion("changed", vec![note(2, "b", position(OLD, Some(10), None))]),
            discussion("left", vec![note(3, "c", position(OLD, None, Some(4)))]),
            discussion(
                "unknown",
                vec![note(
                    4,
                    "d",
                    position("2222222222222222222222222222222222222222", Some(5), None),
                )],
            ),
        ];
        let mut compares = HashMap::new();
        compares.insert(OLD.to_owned(), Some(compare(diff)));
        compares.insert("2222222222222222222222222222222222222222".to_owned(), None);
        let threads = settle(split(discussions, &mr()).threads, &mr(), &compares);
        let moved = &threads[0];
        assert!(!moved.is_outdated);
        assert_eq!((moved.line, moved.original_line), (Some(7), Some(5)));
        let changed = &threads[1];
        assert!(changed.is_outdated);
        assert_eq!((changed.line, changed.original_line), (None, Some(10)));
        assert!(threads[2].is_outdated, "left side on a changed file");
        assert!(threads[3].is_outdated, "a failed comparison is outdated");

        // A file untouched between the heads keeps its lines, either side.
        let mut other = compare(diff);
        other.diffs[0].old_path = "README.md".into();
        other.diffs[0].new_path = "README.md".into();
        let mut compares = HashMap::new();
        compares.insert(OLD.to_owned(), Some(other));
        let discussions = vec![
            discussion("same", vec![note(1, "a", position(OLD, Some(5), None))]),
            discussion("left", vec![note(2, "b", position(OLD, None, Some(4)))]),
        ];
        let threads = settle(split(discussions, &mr()).threads, &mr(), &compares);
        assert_eq!((threads[0].is_outdated, threads[0].line), (false, Some(5)));
        assert_eq!((threads[1].is_outdated, threads[1].line), (false, Some(4)));
    }
}
