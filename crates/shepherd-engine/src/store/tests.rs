//! Store tests against real SQLite files in temp dirs.

use std::sync::{Arc, Barrier};
use std::time::Duration;

use shepherd_core::{Decision, ForgeKind, LedgerEntry, Outcome};

use super::*;

fn pr(number: u64) -> PrKey {
    PrKey::new(ForgeKind::GitHub, "GitHub.com", "acme/widgets", number)
}

fn t(ms: i64) -> Timestamp {
    Timestamp(ms)
}

fn temp_store() -> (tempfile::TempDir, Store) {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::open(tmp.path().join("state/state.db")).unwrap();
    (tmp, store)
}

fn entry(item: &str, round: u32) -> LedgerEntry {
    LedgerEntry::new(item, round)
}

#[test]
fn fresh_database_is_migrated_in_wal_and_reopens() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("nested/dir/state.db");
    {
        let mut store = Store::open(&path).unwrap();
        assert_eq!(
            store.schema_version().unwrap(),
            Store::supported_schema_version()
        );
        assert!(Store::supported_schema_version() >= 1);
        store.create_run("r1", &pr(1), t(10)).unwrap();
    }
    let store = Store::open(&path).unwrap();
    assert_eq!(
        store.schema_version().unwrap(),
        Store::supported_schema_version()
    );
    assert_eq!(store.get_run("r1").unwrap().pr.host, "github.com");
    let raw = rusqlite::Connection::open(&path).unwrap();
    let mode: String = raw
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn open_in_state_dir_uses_state_db() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = StateDir::at(tmp.path().join("s"));
    let store = Store::open_in(&dir).unwrap();
    assert_eq!(store.path(), tmp.path().join("s/state.db"));
    assert!(tmp.path().join("s/state.db").is_file());
}

#[test]
fn foreign_keys_are_on() {
    let (_tmp, store) = temp_store();
    let on: i64 = store
        .conn_for_tests()
        .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
        .unwrap();
    assert_eq!(on, 1);
}

#[test]
fn newer_schema_is_refused_and_left_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("state.db");
    drop(Store::open(&path).unwrap());
    let raw = rusqlite::Connection::open(&path).unwrap();
    raw.pragma_update(None, "user_version", 99).unwrap();
    drop(raw);
    let err = Store::open(&path).unwrap_err();
    match &err {
        StoreError::TooNew {
            found, supported, ..
        } => {
            assert_eq!(*found, 99);
            assert_eq!(*supported, Store::supported_schema_version());
        }
        other => panic!("expected TooNew, got {other:?}"),
    }
    let msg = err.to_string();
    assert!(msg.contains("newer") && msg.contains("99"), "{msg}");
    let raw = rusqlite::Connection::open(&path).unwrap();
    let v: i64 = raw
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, 99);
}

#[test]
fn runs_lifecycle() {
    let (_tmp, mut store) = temp_store();
    let run = store.create_run("r1", &pr(7), t(100)).unwrap();
    assert_eq!(run.status, RunStatus::Running);
    assert!(matches!(
        store.create_run("r1", &pr(7), t(101)),
        Err(StoreError::RunExists { .. })
    ));
    assert!(matches!(
        store.create_run("../evil", &pr(7), t(101)),
        Err(StoreError::InvalidRunId { .. })
    ));
    store
        .set_run_status("r1", RunStatus::Paused, Some("awaiting approval"), t(200))
        .unwrap();
    let got = store.get_run("r1").unwrap();
    assert_eq!(got.status, RunStatus::Paused);
    assert_eq!(got.reason.as_deref(), Some("awaiting approval"));
    assert_eq!(got.created_at, t(100));
    assert_eq!(got.updated_at, t(200));
    assert!(matches!(
        store.set_run_status("nope", RunStatus::Failed, None, t(1)),
        Err(StoreError::RunNotFound { .. })
    ));
    store.create_run("r2", &pr(7), t(300)).unwrap();
    store.create_run("r3", &pr(8), t(400)).unwrap();
    let ids: Vec<_> = store
        .runs_for_pr(&pr(7))
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(ids, ["r1", "r2"]);
    let ids: Vec<_> = store
        .list_runs()
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(ids, ["r3", "r2", "r1"]);
    assert!(store.run("missing").unwrap().is_none());
}

#[test]
fn rounds_start_stage_finish() {
    let (_tmp, mut store) = temp_store();
    store.create_run("r1", &pr(1), t(0)).unwrap();
    store.start_round("r1", 1, "pr-state", t(10)).unwrap();
    assert!(matches!(
        store.start_round("r1", 1, "pr-state", t(11)),
        Err(StoreError::RoundExists { round: 1, .. })
    ));
    assert!(matches!(
        store.start_round("ghost", 1, "pr-state", t(11)),
        Err(StoreError::RunNotFound { .. })
    ));
    store.set_round_stage("r1", 1, "triage").unwrap();
    let gate = serde_json::json!({"open": ["PRRT_1"]});
    store
        .finish_round("r1", 1, Some("abc123"), Some(&gate), t(50))
        .unwrap();
    store.start_round("r1", 2, "pr-state", t(60)).unwrap();
    assert!(matches!(
        store.finish_round("r1", 3, None, None, t(70)),
        Err(StoreError::RoundNotFound { round: 3, .. })
    ));
    let rounds = store.rounds("r1").unwrap();
    assert_eq!(rounds.len(), 2);
    assert_eq!(rounds[0].stage, "triage");
    assert_eq!(rounds[0].gate_hash.as_deref(), Some("abc123"));
    assert_eq!(rounds[0].gate_state.as_ref(), Some(&gate));
    assert_eq!(rounds[0].ended_at, Some(t(50)));
    assert_eq!(rounds[1].ended_at, None);
}

#[test]
fn events_are_ordered_and_append_only() {
    let (_tmp, mut store) = temp_store();
    store.create_run("r1", &pr(1), t(0)).unwrap();
    let a = store
        .append_event("r1", None, "run-started", &serde_json::json!({}), t(1))
        .unwrap();
    let b = store
        .append_event(
            "r1",
            Some(1),
            "push-rejected",
            &serde_json::json!({"sha": "abc"}),
            t(2),
        )
        .unwrap();
    assert!(b > a);
    let events = store.events("r1").unwrap();
    assert_eq!(events.len(), 2);
    assert_eq!(events[1].kind, "push-rejected");
    assert_eq!(events[1].round, Some(1));
    assert_eq!(events[1].payload["sha"], "abc");
    let err = store
        .conn_for_tests()
        .execute("UPDATE events SET kind = 'x'", [])
        .unwrap_err();
    assert!(err.to_string().contains("append-only"), "{err}");
    assert!(store
        .conn_for_tests()
        .execute("DELETE FROM events", [])
        .is_err());
    assert_eq!(store.events("r1").unwrap().len(), 2);
}

#[test]
fn approvals_crud() {
    let (_tmp, mut store) = temp_store();
    store.create_run("r1", &pr(1), t(0)).unwrap();
    let mut a = Approval {
        run_id: "r1".into(),
        round: 1,
        item_id: "PRRT_b".into(),
        decision: Decision::Question,
        reply_override: None,
        approver: None,
        state: ApprovalState::Pending,
        updated_at: t(5),
    };
    store.put_approval(&a).unwrap();
    let mut other = a.clone();
    other.item_id = "PRRT_a".into();
    other.decision = Decision::Wontfix;
    store.put_approval(&other).unwrap();

    // Change a decision and the reply of one item.
    a.decision = Decision::CodeChange;
    a.reply_override = Some("Will do.".into());
    a.state = ApprovalState::Approved;
    a.approver = Some("alice".into());
    a.updated_at = t(6);
    store.put_approval(&a).unwrap();
    assert_eq!(store.approval("r1", 1, "PRRT_b").unwrap(), Some(a.clone()));

    // Approve the rest; order stays the order of first insertion.
    assert_eq!(
        store
            .decide_pending("r1", 1, ApprovalState::Approved, "bob", t(7))
            .unwrap(),
        1
    );
    let all = store.approvals("r1", 1).unwrap();
    let items: Vec<_> = all.iter().map(|a| a.item_id.as_str()).collect();
    assert_eq!(items, ["PRRT_b", "PRRT_a"]);
    assert_eq!(all[1].state, ApprovalState::Approved);
    assert_eq!(all[1].approver.as_deref(), Some("bob"));
    assert_eq!(all[0].approver.as_deref(), Some("alice"));

    store.delete_approval("r1", 1, "PRRT_a").unwrap();
    assert!(store.approval("r1", 1, "PRRT_a").unwrap().is_none());
    assert!(matches!(
        store.delete_approval("r1", 1, "PRRT_a"),
        Err(StoreError::ApprovalNotFound { .. })
    ));
    let mut orphan = a.clone();
    orphan.run_id = "ghost".into();
    assert!(matches!(
        store.put_approval(&orphan),
        Err(StoreError::RunNotFound { .. })
    ));
}

#[test]
fn ledger_is_append_only_ordered_across_runs_and_latest_per_item() {
    let (_tmp, mut store) = temp_store();
    store.create_run("r1", &pr(1), t(0)).unwrap();
    store.create_run("other", &pr(2), t(0)).unwrap();

    let mut e = entry("T1", 1);
    e.decision = Some(Decision::CodeChange);
    let mut rec = LedgerRecord::new("r1", e.clone(), t(1));
    rec.fix_kind = Some("suggestion".into());
    store.append_ledger(&rec).unwrap();

    store
        .append_ledger(&LedgerRecord::new("r1", entry("T2", 1), t(2)))
        .unwrap();
    store
        .append_ledger(&LedgerRecord::new("other", entry("X", 1), t(3)))
        .unwrap();

    e.outcome = Some(Outcome::Fixed);
    e.commit = Some("deadbeef".into());
    e.resolve_authorized = true;
    e.replied = true;
    e.reply_id = Some("123".into());
    let mut rec = LedgerRecord::new("r1", e.clone(), t(4));
    rec.reply_body = Some("Fixed in deadbeef.".into());
    store.append_ledger(&rec).unwrap();

    // A later run of the same PR.
    store.create_run("r2", &pr(1), t(10)).unwrap();
    let mut e2 = e.clone();
    e2.round = 1;
    e2.resolved = true;
    store
        .append_ledger(&LedgerRecord::new("r2", e2.clone(), t(11)))
        .unwrap();

    let ledger = store.ledger_for_pr(&pr(1)).unwrap();
    let order: Vec<_> = ledger
        .entries()
        .iter()
        .map(|e| (e.item_id.as_str(), e.resolved, e.replied))
        .collect();
    assert_eq!(
        order,
        [
            ("T1", false, false),
            ("T2", false, false),
            ("T1", false, true),
            ("T1", true, true)
        ]
    );
    assert_eq!(ledger.latest("T1"), Some(&e2));

    let latest = store.latest_entries("r1").unwrap();
    assert_eq!(latest.len(), 2);
    assert_eq!(latest[0].entry, e);
    assert_eq!(latest[0].reply_body.as_deref(), Some("Fixed in deadbeef."));
    assert_eq!(latest[0].at, t(4));
    assert_eq!(latest[1].entry.item_id, "T2");

    let all = store.ledger_records("r1").unwrap();
    assert_eq!(all[0].fix_kind.as_deref(), Some("suggestion"));

    assert!(matches!(
        store.append_ledger(&LedgerRecord::new("ghost", entry("T", 1), t(1))),
        Err(StoreError::RunNotFound { .. })
    ));
    let conn = store.conn_for_tests();
    let err = conn
        .execute("UPDATE ledger SET resolved = 1", [])
        .unwrap_err();
    assert!(err.to_string().contains("append-only"), "{err}");
    assert!(conn
        .execute("DELETE FROM ledger WHERE item_id = 'T1'", [])
        .is_err());
    assert_eq!(store.ledger_records("r1").unwrap().len(), 3);
}

#[test]
fn lock_acquire_conflict_release() {
    let (_tmp, mut store) = temp_store();
    let store_alive = |_: u32| true;
    store = store.with_process_probe(store_alive);
    let key = pr(1);
    assert_eq!(
        store
            .acquire_lock(&key, "r1", 100, "hostA", t(1000))
            .unwrap(),
        LockOutcome::Acquired
    );
    // Re-entering with the same process and run is fine.
    assert_eq!(
        store
            .acquire_lock(&key, "r1", 100, "hostA", t(1001))
            .unwrap(),
        LockOutcome::Acquired
    );
    match store.acquire_lock(&key, "r2", 200, "hostA", t(2000)) {
        Err(StoreError::Locked {
            pid,
            hostname,
            run,
            since,
        }) => {
            assert_eq!((pid, hostname.as_str(), run.as_str()), (100, "hostA", "r1"));
            assert_eq!(since, t(1001));
        }
        other => panic!("expected Locked, got {other:?}"),
    }
    let msg = store
        .acquire_lock(&key, "r2", 200, "hostA", t(2000))
        .unwrap_err()
        .to_string();
    assert!(msg.contains("r1") && msg.contains("pid 100"), "{msg}");
    // Another PR is independent.
    assert_eq!(
        store
            .acquire_lock(&pr(2), "r2", 200, "hostA", t(2000))
            .unwrap(),
        LockOutcome::Acquired
    );
    // Only the holder releases.
    assert!(!store.release_lock(&key, "r2").unwrap());
    assert!(store.release_lock(&key, "r1").unwrap());
    assert!(store.lock(&key).unwrap().is_none());
    assert_eq!(
        store
            .acquire_lock(&key, "r2", 200, "hostA", t(3000))
            .unwrap(),
        LockOutcome::Acquired
    );
    assert_eq!(store.lock(&key).unwrap().unwrap().run_id, "r2");
}

#[test]
fn stale_lock_of_dead_process_is_taken_over() {
    let (_tmp, store) = temp_store();
    let mut store = store.with_process_probe(|pid: u32| pid != 100);
    let key = pr(1);
    store
        .acquire_lock(&key, "r1", 100, "hostA", t(1000))
        .unwrap();
    let outcome = store
        .acquire_lock(&key, "r2", 200, "hostA", t(1001))
        .unwrap();
    assert_eq!(
        outcome,
        LockOutcome::TookOverStale {
            previous_pid: 100,
            previous_hostname: "hostA".into(),
            previous_run: "r1".into()
        }
    );
    let held = store.lock(&key).unwrap().unwrap();
    assert_eq!(
        (held.pid, held.run_id.as_str(), held.acquired_at),
        (200, "r2", t(1001))
    );
}

#[test]
fn lock_on_another_host_is_stale_only_after_ttl() {
    let (_tmp, store) = temp_store();
    // The probe says every pid is alive: other hosts' pids must not be probed.
    let mut store = store
        .with_process_probe(|_: u32| true)
        .with_lock_ttl(Duration::from_secs(60));
    let key = pr(1);
    store.acquire_lock(&key, "r1", 100, "hostB", t(0)).unwrap();
    assert!(matches!(
        store.acquire_lock(&key, "r2", 200, "hostA", t(59_999)),
        Err(StoreError::Locked { .. })
    ));
    // A refresh pushes the TTL out.
    assert!(store.refresh_lock(&key, "r1", t(50_000)).unwrap());
    assert!(matches!(
        store.acquire_lock(&key, "r2", 200, "hostA", t(100_000)),
        Err(StoreError::Locked { .. })
    ));
    let outcome = store
        .acquire_lock(&key, "r2", 200, "hostA", t(110_000))
        .unwrap();
    assert!(
        matches!(
            outcome,
            LockOutcome::TookOverStale {
                previous_pid: 100,
                ..
            }
        ),
        "{outcome:?}"
    );
    // The previous holder no longer refreshes it.
    assert!(!store.refresh_lock(&key, "r1", t(110_001)).unwrap());
    assert_eq!(store.break_lock(&key).unwrap().unwrap().run_id, "r2");
    assert!(store.lock(&key).unwrap().is_none());
}

#[test]
fn lock_of_live_process_on_this_host_is_real() {
    // The real probe: this test process is alive.
    let (_tmp, mut store) = temp_store();
    let key = pr(1);
    let me = std::process::id();
    store.acquire_lock(&key, "r1", me, "hostA", t(0)).unwrap();
    assert!(matches!(
        store.acquire_lock(&key, "r2", me + 1, "hostA", t(1)),
        Err(StoreError::Locked { .. })
    ));
}

#[test]
fn concurrent_writers_do_not_lose_entries() {
    const PER_THREAD: u32 = 200;
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("state.db");
    let barrier = Arc::new(Barrier::new(2));
    let handles: Vec<_> = ["a", "b"]
        .into_iter()
        .map(|name| {
            let path = path.clone();
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                // Both open (and migrate) a fresh database at once.
                barrier.wait();
                let mut store = Store::open(&path).unwrap();
                let run = format!("run-{name}");
                store.create_run(&run, &pr(1), t(0)).unwrap();
                for i in 0..PER_THREAD {
                    let rec =
                        LedgerRecord::new(&run, entry(&format!("{name}-{i}"), 1), t(i64::from(i)));
                    store.append_ledger(&rec).unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let store = Store::open(&path).unwrap();
    let ledger = store.ledger_for_pr(&pr(1)).unwrap();
    assert_eq!(ledger.entries().len(), 2 * PER_THREAD as usize);
    for name in ["a", "b"] {
        let mine: Vec<_> = ledger
            .entries()
            .iter()
            .filter(|e| e.item_id.starts_with(&format!("{name}-")))
            .map(|e| e.item_id.clone())
            .collect();
        let expected: Vec<_> = (0..PER_THREAD).map(|i| format!("{name}-{i}")).collect();
        assert_eq!(mine, expected, "writer {name} lost or reordered entries");
    }
}

#[test]
fn timestamp_displays_as_rfc3339() {
    assert_eq!(Timestamp(0).to_string(), "1970-01-01T00:00:00.000Z");
    assert_eq!(
        Timestamp(1_714_564_800_123).to_string(),
        "2024-05-01T12:00:00.123Z"
    );
    assert_eq!(
        Timestamp(951_782_400_000).to_string(),
        "2000-02-29T00:00:00.000Z"
    );
    assert_eq!(Timestamp(-1).to_string(), "1969-12-31T23:59:59.999Z");
    assert_eq!(
        Timestamp(1_000).saturating_add(Duration::from_millis(500)),
        Timestamp(1_500)
    );
    assert_eq!(
        Timestamp(i64::MAX - 1).saturating_add(Duration::from_secs(1)),
        Timestamp(i64::MAX)
    );
    assert!(Timestamp::now() > Timestamp(1_600_000_000_000));
}

/// A database of schema 1 (before `handed-off`) with a run, a round and a
/// ledger entry is migrated in place: nothing lost, the new status can be
/// written, and foreign keys still hold.
#[test]
fn a_schema_1_database_is_migrated_to_take_handed_off() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("state.db");
    {
        let raw = rusqlite::Connection::open(&path).unwrap();
        raw.execute_batch(super::schema::MIGRATIONS[0]).unwrap();
        raw.pragma_update(None, "user_version", 1).unwrap();
        raw.execute_batch(
            "INSERT INTO runs VALUES ('r1','github','github.com','o/r',7,'converged',NULL,10,20);
             INSERT INTO rounds (run_id, number, stage, started_at) VALUES ('r1', 1, 'converge', 10);",
        )
        .unwrap();
        // Schema 1 refuses the new word.
        assert!(raw
            .execute("UPDATE runs SET status = 'handed-off' WHERE id = 'r1'", [])
            .is_err());
    }
    let mut store = Store::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), 2);
    let run = store.get_run("r1").unwrap();
    assert_eq!((run.status, run.pr.number), (RunStatus::Converged, 7));
    assert_eq!(store.rounds("r1").unwrap().len(), 1);
    store
        .set_run_status("r1", RunStatus::HandedOff, Some("2 items wait"), t(30))
        .unwrap();
    assert_eq!(store.get_run("r1").unwrap().status, RunStatus::HandedOff);
    store
        .append_ledger(&LedgerRecord::new("r1", entry("PRRT_1", 1), t(31)))
        .unwrap();
    // Foreign keys are on again and still name the (new) runs table.
    let orphan = store.conn_for_tests().execute(
        "INSERT INTO rounds (run_id, number, stage, started_at) VALUES ('nope', 1, 'x', 1)",
        [],
    );
    assert!(orphan.is_err(), "a round of no run is refused");
    let on: i64 = store
        .conn_for_tests()
        .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
        .unwrap();
    assert_eq!(on, 1);
}
