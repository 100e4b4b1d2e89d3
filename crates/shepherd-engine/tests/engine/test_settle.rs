//! Post, then settle (issue 17): two runs without a shared database can
//! both find no reply of theirs and both post. After posting, the earliest
//! of the viewer's replies with the item's marker is the reply, and a later
//! one the run posted itself is deleted. The forge's reads and deletes, and
//! the race forced on the emulator, on both forges.

use std::time::Duration;

use serde_json::Value;
use shepherd_core::{Marker, PrSnapshot};
use shepherd_emulator::{FaultSpec, Permission, UserKind, UserSpec};
use shepherd_engine::{RunStatus, Store};
use shepherd_forge::{ItemRef, ThreadRef};

use crate::common::*;

const VIEWER: &str = "dev";

/// The comments of the PR in the emulator's state whose body contains
/// `needle`, as (author, body).
fn comments_with(pr: &Value, needle: &str) -> Vec<(String, String)> {
    let threads = pr["threads"].as_array().into_iter().flatten();
    let in_threads = threads.flat_map(|t| t["comments"].as_array().into_iter().flatten());
    let issue = pr["issue_comments"].as_array().into_iter().flatten();
    in_threads
        .chain(issue)
        .filter(|c| c["body"].as_str().unwrap_or("").contains(needle))
        .map(|c| {
            (
                c["author"].as_str().unwrap_or("").to_owned(),
                c["body"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

async fn snapshot(setup: &Setup) -> PrSnapshot {
    setup.forge().snapshot(PR).await.unwrap()
}

/// The forge reads every reply of the viewer with an item's marker, oldest
/// first, and deletes one by its REST id: once, a second time is fine (gone
/// already), someone else's pasted marker is not among them, and a
/// read-only account may not delete the viewer's reply.
async fn marker_replies_are_read_oldest_first_and_deleted(forge: ForgeKind) {
    let mut scenario = demo();
    scenario.users.push(UserSpec::new(
        "read-only-person",
        "emu_read_only_person_token",
        UserKind::User,
        Permission::Read,
    ));
    let setup = setup_on(forge, scenario).await;
    let snap = snapshot(&setup).await;
    let thread = &snap.threads[0];
    let client = setup.forge();
    let at = ItemRef::Thread(thread.id.clone());
    let body = Marker::new(&thread.id, 1, false).append_to("Answered.");
    let thread_ref = ThreadRef::of(thread).unwrap();
    let first = client
        .reply_to_thread(PR, &thread_ref, &body)
        .await
        .unwrap();
    setup
        .emu
        .act_reply("reviewer", &thread.id, &body)
        .await
        .unwrap();
    let second = client
        .reply_to_thread(PR, &thread_ref, &body)
        .await
        .unwrap();
    let found = client.find_marker_replies(PR, &at, VIEWER).await.unwrap();
    let ids: Vec<_> = found.iter().map(|c| c.id.clone()).collect();
    assert_eq!(ids, [first.id.clone(), second.id.clone()]);

    // A read-only account cannot delete the viewer's reply.
    let reader = setup.forge_as("emu_read_only_person_token");
    let refused = reader
        .delete_comment(PR, &at, second.database_id.unwrap())
        .await;
    assert!(refused.is_err(), "a read-only account deleted a reply");

    client
        .delete_comment(PR, &at, second.database_id.unwrap())
        .await
        .unwrap();
    client
        .delete_comment(PR, &at, second.database_id.unwrap())
        .await
        .expect("a comment gone already is fine");
    let found = client.find_marker_replies(PR, &at, VIEWER).await.unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].id, first.id);
    let pr = setup.pr();
    let left = comments_with(&pr, "Answered.");
    assert_eq!(left.len(), 2, "ours and the reviewer's paste: {left:?}");

    // A conversation comment: the same.
    let item = snap.comments[0].id.clone();
    let top = ItemRef::TopLevel(item.clone());
    let body = Marker::new(&item, 1, false).append_to("Noted.");
    let a = client.post_issue_comment(PR, &body).await.unwrap();
    let b = client.post_issue_comment(PR, &body).await.unwrap();
    let found = client.find_marker_replies(PR, &top, VIEWER).await.unwrap();
    let ids: Vec<_> = found.iter().map(|c| c.id.clone()).collect();
    assert_eq!(ids, [a.id.clone(), b.id.clone()]);
    client
        .delete_comment(PR, &top, b.database_id.unwrap())
        .await
        .unwrap();
    let found = client.find_marker_replies(PR, &top, VIEWER).await.unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].id, a.id);
    assert_eq!(comments_with(&setup.pr(), "Noted.").len(), 1);
}
both_forges!(marker_replies_are_read_oldest_first_and_deleted);

/// The race, forced: the run's first thread reply is held by the forge for
/// 3 s after the run checked for a reply of its own; meanwhile "another
/// job" (the same account, real HTTP) replies in every thread with the
/// item's marker. The run's reply lands later, so the run deletes it and
/// records the other job's as the reply; the other threads' replies are
/// adopted. Every item keeps exactly one reply, and the ledger names the
/// one that remains.
/// Runs the demo with its first thread reply held 3 s by the forge, while
/// "another job" replies in every thread with the item's marker once the
/// run's reply is on its way; returns the outcome and, per thread, the id
/// of the other job's reply.
async fn race(setup: &Setup) -> (shepherd_engine::RunOutcome, Vec<(String, String)>) {
    let target = setup.fault_target(Mutation::Reply);
    setup
        .emu
        .set_fault(FaultSpec::nth(target, 1).with_delay(3_000))
        .unwrap();
    let snap = snapshot(setup).await;
    let client = setup.forge();
    let other_job = async {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
        while setup.emu.request_count(target) == 0 {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the run never replied in a thread"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let mut rivals = Vec::new();
        for thread in &snap.threads {
            let body = Marker::new(&thread.id, 1, false).append_to("Replied by the other job.");
            let posted = client
                .reply_to_thread(PR, &ThreadRef::of(thread).unwrap(), &body)
                .await
                .unwrap();
            rivals.push((thread.id.clone(), posted.id));
        }
        rivals
    };
    tokio::join!(setup.run(""), other_job)
}

async fn a_reply_posted_after_another_runs_is_deleted_and_theirs_recorded(forge: ForgeKind) {
    let setup = setup_on(forge, demo()).await;
    let (outcome, rivals) = race(&setup).await;
    assert_handed_off(&outcome);
    let pr = setup.pr();
    assert_no_duplicate_replies(&pr);

    let replies = read_json(&outcome.run_dir.join("rounds/1/replies.json"));
    let entries = replies.as_array().unwrap();
    let deleted: Vec<&Value> = entries
        .iter()
        .filter(|e| e["deleted_double"].is_string())
        .collect();
    assert_eq!(
        deleted.len(),
        1,
        "one reply of the run was doubled: {replies:#}"
    );
    let settled = deleted[0];
    let item = settled["item_id"].as_str().unwrap();
    let rival = &rivals.iter().find(|(t, _)| t == item).unwrap().1;
    assert_eq!(settled["comment_id"], rival.as_str(), "{settled}");
    assert_eq!(settled["adopted_existing"], true);
    assert!(settled["error"].is_null(), "{settled}");

    // Exactly one reply of the item remains: the other job's.
    let client = setup.forge();
    let left = client
        .find_marker_replies(PR, &ItemRef::Thread(item.to_owned()), VIEWER)
        .await
        .unwrap();
    let ids: Vec<_> = left.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, [rival.as_str()]);

    // The ledger names it.
    let store = Store::open_in(&setup.state_dir()).unwrap();
    let latest = store.latest_entries(&outcome.run_id).unwrap();
    let entry = latest
        .iter()
        .find(|r| r.entry.item_id == item && r.entry.round == 1)
        .unwrap_or_else(|| panic!("no ledger entry for {item}"));
    assert_eq!(entry.entry.reply_id.as_deref(), Some(rival.as_str()));
    assert!(entry.entry.replied);
}
both_forges!(a_reply_posted_after_another_runs_is_deleted_and_theirs_recorded);

/// The race as above, with the forge refusing the delete: the double is
/// not left silently; the run pauses with a reply failure naming it.
async fn a_double_that_cannot_be_deleted_pauses_the_run(forge: ForgeKind) {
    let setup = setup_on(forge, demo()).await;
    let delete = match forge {
        ForgeKind::GitHub => "DELETE /repos/{owner}/{repo}/pulls/comments/{comment_id}",
        ForgeKind::GitLab => "DELETE /api/v4/projects/{id}/merge_requests/{iid}/notes/{note_id}",
    };
    let mut refuse = FaultSpec::nth(delete, 1).with_status(403, None);
    refuse.nth = None;
    refuse.every = true;
    setup.emu.set_fault(refuse).unwrap();
    let (outcome, _) = race(&setup).await;
    assert_eq!(
        outcome.status,
        RunStatus::Paused,
        "{:?}\n{}",
        outcome.reason,
        outcome.report.to_markdown()
    );
    let reason = outcome.reason.unwrap_or_default();
    assert!(reason.contains("deleting it failed"), "{reason}");
    assert!(setup.emu.request_count(delete) >= 1, "a delete was sent");
    let replies = read_json(&outcome.run_dir.join("rounds/1/replies.json"));
    let failed: Vec<&Value> = replies
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["error"].as_str().is_some_and(|e| e.contains("doubles")))
        .collect();
    assert_eq!(failed.len(), 1, "{replies:#}");
    assert!(failed[0]["deleted_double"].is_null());
}
both_forges!(a_double_that_cannot_be_deleted_pauses_the_run);
