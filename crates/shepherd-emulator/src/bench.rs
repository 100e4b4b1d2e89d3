//! The scale scenario the benchmarks serve (the emulator's request bench,
//! Shepherd's fetch benches): one PR of `acme/bench` with `threads`
//! unresolved threads on a 500-line file, each of 1 to 3 comments by a
//! reviewer, a bot and the author in turn, except the long ones.

use crate::scenario::{
    FileSpec, Permission, PullRequestSpec, RepositorySpec, Scenario, ThreadCommentSpec, ThreadSpec,
    UserKind, UserSpec,
};

impl Scenario {
    /// The scale scenario: `long` lists (place among the threads, comments)
    /// of the long threads.
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
            let line = u32::try_from(t % 500 + 1).unwrap_or(1);
            s.threads
                .push(ThreadSpec::new("src/lib.rs", line, comments));
        }
        s
    }
}
