//! The widgets repository both test binaries (`emulator`, `conformance`)
//! play on: PR 1 "Add widgets" of `OWNER/widgets` by alice, from
//! `feature/widgets` into `main`, whose head adds `line 5` to a 300-line
//! `src/lib.rs`; alice (write), bob (admin), the bot `review-bot` (write)
//! and reader (read). Each binary adds what its tests need.

use shepherd_emulator::{
    FileSpec, Permission, PullRequestSpec, RepositorySpec, Scenario, UserKind, UserSpec,
};

pub const ALICE: &str = "tok-alice";
pub const BOB: &str = "tok-bob";
pub const BOT: &str = "tok-bot";
pub const READER: &str = "tok-reader";

/// The widgets scenario under `owner` (`acme`, or GitLab's `acme/tools`),
/// with `README.md` as `readme_head` on the head.
pub fn widgets(owner: &str, readme_head: &str) -> Scenario {
    let pr = PullRequestSpec::new(1, "Add widgets", "alice", "feature/widgets", "main");
    let mut s = Scenario::new(RepositorySpec::new(owner, "widgets"), pr);
    s.users = vec![
        UserSpec::new("alice", ALICE, UserKind::User, Permission::Write),
        UserSpec::new("bob", BOB, UserKind::User, Permission::Admin),
        UserSpec::new("review-bot", BOT, UserKind::Bot, Permission::Write),
        UserSpec::new("reader", READER, UserKind::User, Permission::Read),
    ];
    let lines: String = (1..=300).map(|i| format!("line {i}\n")).collect();
    let base = lines.replace("line 5\n", "");
    s.base.insert("src/lib.rs".into(), FileSpec::text(base));
    s.head.insert("src/lib.rs".into(), FileSpec::text(lines));
    s.base
        .insert("README.md".into(), FileSpec::text("# widgets\n"));
    s.head
        .insert("README.md".into(), FileSpec::text(readme_head));
    s
}
