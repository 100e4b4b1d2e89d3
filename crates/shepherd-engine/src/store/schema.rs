//! The database schema as numbered migrations.
//!
//! `PRAGMA user_version` holds the number of migrations applied. Migrations
//! are only ever appended: an applied one is never edited.

/// Migration `i` moves the schema from version `i` to `i + 1`.
pub(crate) const MIGRATIONS: &[&str] = &[
    // 1: runs, rounds, events, approvals, ledger, locks.
    r#"
CREATE TABLE runs (
    id          TEXT PRIMARY KEY,
    forge       TEXT NOT NULL,
    host        TEXT NOT NULL,
    repo        TEXT NOT NULL,
    number      INTEGER NOT NULL,
    status      TEXT NOT NULL CHECK (status IN
                  ('running','paused','converged','failed','exhausted','interrupted')),
    reason      TEXT,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
) STRICT;
CREATE INDEX runs_by_pr ON runs (forge, host, repo, number, created_at);

CREATE TABLE rounds (
    run_id      TEXT NOT NULL REFERENCES runs (id),
    number      INTEGER NOT NULL CHECK (number >= 1),
    stage       TEXT NOT NULL,
    gate_hash   TEXT,
    gate_state  TEXT,
    started_at  INTEGER NOT NULL,
    ended_at    INTEGER,
    PRIMARY KEY (run_id, number)
) STRICT;

CREATE TABLE events (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id      TEXT NOT NULL REFERENCES runs (id),
    round       INTEGER,
    kind        TEXT NOT NULL,
    payload     TEXT NOT NULL,
    at          INTEGER NOT NULL
) STRICT;
CREATE INDEX events_by_run ON events (run_id, seq);
CREATE TRIGGER events_append_only_update BEFORE UPDATE ON events
    BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
CREATE TRIGGER events_append_only_delete BEFORE DELETE ON events
    BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;

CREATE TABLE approvals (
    run_id          TEXT NOT NULL REFERENCES runs (id),
    round           INTEGER NOT NULL,
    item_id         TEXT NOT NULL,
    decision        TEXT NOT NULL,
    reply_override  TEXT,
    approver        TEXT,
    state           TEXT NOT NULL CHECK (state IN ('pending','approved','rejected')),
    updated_at      INTEGER NOT NULL,
    PRIMARY KEY (run_id, round, item_id)
) STRICT;

CREATE TABLE ledger (
    seq                 INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id              TEXT NOT NULL REFERENCES runs (id),
    round               INTEGER NOT NULL,
    item_id             TEXT NOT NULL,
    decision            TEXT,
    outcome             TEXT,
    fix_kind            TEXT,
    commit_sha          TEXT,
    reply_body          TEXT,
    reply_id            TEXT,
    resolve_authorized  INTEGER NOT NULL CHECK (resolve_authorized IN (0, 1)),
    replied             INTEGER NOT NULL CHECK (replied IN (0, 1)),
    resolved            INTEGER NOT NULL CHECK (resolved IN (0, 1)),
    at                  INTEGER NOT NULL
) STRICT;
CREATE INDEX ledger_by_run ON ledger (run_id, seq);
CREATE TRIGGER ledger_append_only_update BEFORE UPDATE ON ledger
    BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
CREATE TRIGGER ledger_append_only_delete BEFORE DELETE ON ledger
    BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;

-- No foreign key to runs: a lock may be taken before its run row exists.
CREATE TABLE locks (
    forge         TEXT NOT NULL,
    host          TEXT NOT NULL,
    repo          TEXT NOT NULL,
    number        INTEGER NOT NULL,
    run_id        TEXT NOT NULL,
    pid           INTEGER NOT NULL,
    hostname      TEXT NOT NULL,
    acquired_at   INTEGER NOT NULL,
    refreshed_at  INTEGER NOT NULL,
    PRIMARY KEY (forge, host, repo, number)
) STRICT;
"#,
    // 2: a run may end `handed-off` (the loop is done, items wait for a
    // person). SQLite cannot change a CHECK: the table is made anew and
    // renamed into place, with foreign keys off for the migration (SQLite's
    // documented procedure; the children's `REFERENCES runs` then name the
    // new table, and `foreign_key_check` runs before the commit).
    r#"
CREATE TABLE runs_v2 (
    id          TEXT PRIMARY KEY,
    forge       TEXT NOT NULL,
    host        TEXT NOT NULL,
    repo        TEXT NOT NULL,
    number      INTEGER NOT NULL,
    status      TEXT NOT NULL CHECK (status IN
                  ('running','paused','converged','handed-off','failed','exhausted','interrupted')),
    reason      TEXT,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
) STRICT;
INSERT INTO runs_v2 (id, forge, host, repo, number, status, reason, created_at, updated_at)
    SELECT id, forge, host, repo, number, status, reason, created_at, updated_at FROM runs;
DROP TABLE runs;
ALTER TABLE runs_v2 RENAME TO runs;
CREATE INDEX runs_by_pr ON runs (forge, host, repo, number, created_at);
"#,
];

/// The schema version this binary writes and understands.
pub(crate) fn current_version() -> i64 {
    // The list holds a handful of entries; the cast cannot truncate.
    MIGRATIONS.len() as i64
}
