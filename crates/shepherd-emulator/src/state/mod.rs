//! The emulated forge's state: users, the repository, pull requests with
//! their threads, comments and reviews.
//!
//! One [`State`] lives behind a lock in [`crate::shared::Shared`]; handlers
//! read it and mutate it through the `apply_*` methods, each one effect of
//! GitHub's, applied whole under the write lock. Records carry their
//! database ids and node ids; everything is serializable for
//! `GET /_emulator/state`.

mod edits;
mod push;
mod records;
mod reviewers;
mod store;
mod threads;

pub(crate) use records::{
    position_by_id, BotPost, DiffVersionRecord, IssueCommentRecord, LabelEventRecord, LabelRecord,
    NewThread, PullRequestEdit, PullRequestRecord, PushOutcome, RepositoryRecord,
    ReviewCommentRecord, ReviewRecord, SystemNoteRecord, ThreadRecord, UserRecord, WriteError,
};
pub(crate) use store::{HeadMoved, State};

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    use super::store::gitlab_draft_title;
    use super::*;
    use crate::git::{self, CreatedRepository};
    use crate::scenario::{Permission, ReviewStateSpec, Scenario, UserKind};
    use crate::scenario::{
        PullRequestSpec, RepositorySpec, ReviewSpec, ThreadCommentSpec, ThreadSpec, UserSpec,
    };

    fn state() -> State {
        let mut s = Scenario::new(
            RepositorySpec::new("o", "r"),
            PullRequestSpec::new(1, "t", "alice", "feature", "main"),
        );
        s.users = vec![
            UserSpec::new("alice", "ta", UserKind::User, Permission::Write),
            UserSpec::new("bob", "tb", UserKind::User, Permission::Write),
        ];
        s.threads.push(ThreadSpec::new(
            "a.txt",
            3,
            vec![ThreadCommentSpec::new("bob", "x")],
        ));
        let mut pending = ReviewSpec::new("alice", ReviewStateSpec::Pending, "");
        pending.name = Some("draft".into());
        s.reviews.push(pending);
        let repo = CreatedRepository {
            git_dir: PathBuf::from("/nonexistent"),
            base_sha: "b".repeat(40),
            head_sha: "h".repeat(40),
        };
        State::from_scenario(&s, &repo, &BTreeMap::new(), "http://emu")
    }

    #[test]
    fn a_reply_joins_the_authors_pending_review() {
        let mut state = state();
        let root = state.pull_requests[0].threads[0].comments[0].database_id;
        let pending = state.pull_requests[0].pending_review_of("alice").unwrap();
        let mine = state.apply_reply_to_comment(1, "alice", root, "r").unwrap();
        assert_eq!(mine.review_id, pending);
        let theirs = state.apply_reply_to_comment(1, "bob", root, "r").unwrap();
        assert_ne!(theirs.review_id, pending);
        let pr = &state.pull_requests[0];
        assert!(!pr.review_visible_to(mine.review_id, "bob"));
        assert!(pr.review_visible_to(theirs.review_id, "alice"));
        // Bob cannot answer alice's invisible comment.
        assert_eq!(
            state.apply_reply_to_comment(1, "bob", mine.comment_id, "r"),
            Err(WriteError::NotFound("Not Found".into()))
        );
    }

    #[test]
    fn resolving_twice_is_one_change() {
        let mut state = state();
        let thread = state.pull_requests[0].threads[0].database_id;
        let updated = state.pull_requests[0].updated_at.clone();
        state.apply_resolve(thread, "bob", true, true).unwrap();
        let once = state.pull_requests[0].updated_at.clone();
        assert_ne!(once, updated);
        state.apply_resolve(thread, "bob", true, true).unwrap();
        assert_eq!(state.pull_requests[0].updated_at, once);
        assert!(state.pull_requests[0].threads[0].resolved);
        // A non-writer who is not the author may not.
        assert!(matches!(
            state.apply_resolve(thread, "bob", false, false),
            Err(WriteError::Forbidden(_))
        ));
    }

    #[test]
    fn a_push_moves_or_outdates_threads() {
        let mut state = state();
        let diff = "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,3 @@\n+new\n one\n two\n";
        let push = git::parse_diff(diff);
        let outcome = state.apply_push(1, &"n".repeat(40), &push, BTreeMap::new(), vec![]);
        let thread = &state.pull_requests[0].threads[0];
        assert_eq!(outcome.moved, vec![thread.database_id]);
        assert_eq!(thread.line(), Some(4));
        assert_eq!(thread.original_line, Some(3));
        let diff = "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -3,2 +3,2 @@\n three\n-four\n+FOUR\n";
        let push = git::parse_diff(diff);
        let outcome = state.apply_push(1, &"m".repeat(40), &push, BTreeMap::new(), vec![]);
        assert_eq!(outcome.outdated.len(), 1);
        assert_eq!(state.pull_requests[0].threads[0].line(), None);
    }

    #[test]
    fn labels_are_created_once_and_removed_by_name() {
        let mut state = state();
        state
            .apply_add_labels(1, "alice", &["Bug".into(), "bug".into()])
            .unwrap();
        assert_eq!(state.pull_requests[0].labels, ["Bug"]);
        assert_eq!(state.labels.len(), 1);
        // Adding a label already there changes nothing and records nothing.
        state.apply_add_labels(1, "bob", &["BUG".into()]).unwrap();
        state.apply_remove_label(1, "bob", "BUG").unwrap();
        assert!(state.pull_requests[0].labels.is_empty());
        let events: Vec<(&str, &str, bool)> = state.pull_requests[0]
            .label_events
            .iter()
            .map(|e| (e.actor.as_str(), e.label.as_str(), e.added))
            .collect();
        assert_eq!(events, [("alice", "Bug", true), ("bob", "Bug", false)]);
        let times: Vec<&str> = state.pull_requests[0]
            .label_events
            .iter()
            .map(|e| e.created_at.as_str())
            .collect();
        assert!(times[0] < times[1], "{times:?}");
        assert_eq!(
            state.apply_remove_label(1, "alice", "bug"),
            Err(WriteError::NotFound("Label does not exist".into()))
        );
    }

    #[test]
    fn gitlab_drafts_are_marked_by_the_title() {
        for title in [
            "Draft: x",
            "draft:x",
            "[Draft] x",
            "(DRAFT) x",
            "  Draft: x",
        ] {
            assert!(gitlab_draft_title(title), "{title}");
        }
        for title in ["x Draft:", "Drafting x", "WIP: x", "Draft x", ""] {
            assert!(!gitlab_draft_title(title), "{title}");
        }
    }

    #[test]
    fn setting_labels_removes_and_adds_with_events() {
        let mut state = state();
        state
            .apply_add_labels(1, "alice", &["a".into(), "b".into()])
            .unwrap();
        let before = state.pull_requests[0].label_events.len();
        state
            .apply_set_labels(1, "bob", &["B".into(), "c".into()])
            .unwrap();
        assert_eq!(state.pull_requests[0].labels, ["b", "c"]);
        let events: Vec<(&str, &str, bool)> = state.pull_requests[0].label_events[before..]
            .iter()
            .map(|e| (e.actor.as_str(), e.label.as_str(), e.added))
            .collect();
        assert_eq!(events, [("bob", "a", false), ("bob", "c", true)]);
        // A blank name changes nothing.
        assert!(state.apply_set_labels(1, "bob", &[" ".into()]).is_err());
        assert_eq!(state.pull_requests[0].labels, ["b", "c"]);
        state.apply_set_labels(1, "bob", &[]).unwrap();
        assert!(state.pull_requests[0].labels.is_empty());
    }
}
