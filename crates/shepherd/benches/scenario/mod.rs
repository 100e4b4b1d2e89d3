//! The scale scenario both fetch benchmarks serve: one PR of `acme/bench`
//! with `threads` unresolved threads on a 500-line file, each of 1 to 3
//! comments by a reviewer, a bot and the author in turn, except the long
//! ones.
//!
//! The emulator's own request benchmark (`shepherd-emulator/benches/
//! requests.rs`) builds the same scenario; issue 29.7 moves this function
//! to the emulator as `Scenario::bench(threads, long)` so the three share
//! one.

use shepherd_emulator::{
    FileSpec, Permission, PullRequestSpec, RepositorySpec, Scenario, ThreadCommentSpec, ThreadSpec,
    UserKind, UserSpec,
};

/// The scenario: `long` lists (place among the threads, comments) of the
/// long threads.
pub fn bench(threads: usize, long: &[(usize, usize)]) -> Scenario {
    let mut s = Scenario::new(
        RepositorySpec::new("acme", "bench"),
        PullRequestSpec::new(1, "Bench", "author", "feature", "main"),
    );
    s.users = vec![
        UserSpec::new("author", "tok-author", UserKind::User, Permission::Write),
        UserSpec::new(
            "reviewer",
            "tok-reviewer",
            UserKind::User,
            Permission::Write,
        ),
        UserSpec::new("bot", "tok-bot", UserKind::Bot, Permission::Write),
    ];
    let lines: String = (1..=500).map(|i| format!("line {i}\n")).collect();
    s.base.insert("src/lib.rs".into(), FileSpec::text("\n"));
    s.head.insert("src/lib.rs".into(), FileSpec::text(lines));
    for t in 0..threads {
        let count = long
            .iter()
            .find(|(at, _)| *at == t)
            .map_or(1 + t % 3, |(_, n)| *n);
        let comments = (0..count)
            .map(|c| {
                let author = ["reviewer", "bot", "author"][c % 3];
                ThreadCommentSpec::new(author, format!("thread {t} comment {c}: please look"))
            })
            .collect();
        s.threads.push(ThreadSpec::new(
            "src/lib.rs",
            (t % 500 + 1) as u32,
            comments,
        ));
    }
    s
}
