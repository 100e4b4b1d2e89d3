#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is how a test fails

use super::*;
use crate::model::ForgeKind;
use proptest::prelude::*;

fn remote(url: &str) -> RemoteInfo {
    parse_remote_url(url).expect("test remote parses")
}

/// A clone of github.com/o/r.
fn gh() -> TargetContext {
    TargetContext {
        remote: Some(remote("git@github.com:o/r.git")),
        ..TargetContext::default()
    }
}

/// A clone of gitlab.com/g/s/p.
fn gl() -> TargetContext {
    TargetContext {
        remote: Some(remote("https://gitlab.com/g/s/p.git")),
        ..TargetContext::default()
    }
}

/// A clone of an Enterprise host nothing is configured for.
fn ghe() -> TargetContext {
    TargetContext {
        remote: Some(remote("ssh://git@ghe.corp:2222/o/r.git")),
        ..TargetContext::default()
    }
}

/// A clone of a self-managed GitLab.
fn corp_gitlab() -> TargetContext {
    TargetContext {
        remote: Some(remote("git@git.corp:grp/proj.git")),
        gitlab_hosts: vec!["git.corp".to_owned()],
        ..TargetContext::default()
    }
}

fn nowhere() -> TargetContext {
    TargetContext::default()
}

fn with_flags(forge: Option<ForgeKind>, repo: Option<&str>) -> TargetContext {
    TargetContext {
        forge,
        repo: repo.map(str::to_owned),
        ..TargetContext::default()
    }
}

const GH: ForgeKind = ForgeKind::GitHub;
const GL: ForgeKind = ForgeKind::GitLab;
const FULL: Mode = Mode::Full;

fn gh_thread(id: u64) -> Mode {
    Mode::Targeted(TargetedThread::GitHubDiscussion(id))
}

fn gl_note(id: u64) -> Mode {
    Mode::Targeted(TargetedThread::GitLabNote(id))
}

#[test]
fn accepted_forms() {
    let cases: Vec<(&str, TargetContext, ForgeKind, &str, u64, Mode)> = vec![
        ("42", gh(), GH, "github.com/o/r", 42, FULL),
        ("#42", gh(), GH, "github.com/o/r", 42, FULL),
        ("PR #42", gh(), GH, "github.com/o/r", 42, FULL),
        ("PR 42", gh(), GH, "github.com/o/r", 42, FULL),
        ("pr42", gh(), GH, "github.com/o/r", 42, FULL),
        ("PR#42", gh(), GH, "github.com/o/r", 42, FULL),
        ("pr: #42", gh(), GH, "github.com/o/r", 42, FULL),
        ("pull request #42", gh(), GH, "github.com/o/r", 42, FULL),
        ("resolve PR 42", gh(), GH, "github.com/o/r", 42, FULL),
        ("PR 42 (#42)", gh(), GH, "github.com/o/r", 42, FULL),
        ("  42\n", gh(), GH, "github.com/o/r", 42, FULL),
        ("0042", gh(), GH, "github.com/o/r", 42, FULL),
        (
            "resolve PR 42 in 3 rounds",
            gh(),
            GH,
            "github.com/o/r",
            42,
            FULL,
        ),
        (
            "PR 42, which fixes issue #5",
            gh(),
            GH,
            "github.com/o/r",
            42,
            FULL,
        ),
        ("o/r#42", gh(), GH, "github.com/o/r", 42, FULL),
        ("other/repo#42", gh(), GH, "github.com/other/repo", 42, FULL),
        (
            "https://github.com/o/r/pull/42",
            gh(),
            GH,
            "github.com/o/r",
            42,
            FULL,
        ),
        (
            "https://github.com/o/r/pull/42/",
            gh(),
            GH,
            "github.com/o/r",
            42,
            FULL,
        ),
        (
            "https://github.com/o/r/pull/42/files",
            gh(),
            GH,
            "github.com/o/r",
            42,
            FULL,
        ),
        (
            "https://github.com/o/r/pull/42/commits",
            gh(),
            GH,
            "github.com/o/r",
            42,
            FULL,
        ),
        (
            "https://github.com/o/r/pull/42/checks",
            gh(),
            GH,
            "github.com/o/r",
            42,
            FULL,
        ),
        (
            "https://github.com/o/r/pull/42/commits/0a1b2c",
            gh(),
            GH,
            "github.com/o/r",
            42,
            FULL,
        ),
        (
            "https://github.com/o/r/pull/42#discussion_r123",
            gh(),
            GH,
            "github.com/o/r",
            42,
            gh_thread(123),
        ),
        (
            "https://github.com/o/r/pull/42/files#r456",
            gh(),
            GH,
            "github.com/o/r",
            42,
            gh_thread(456),
        ),
        (
            "https://github.com/o/r/pull/42/files#diff-abc12R7",
            gh(),
            GH,
            "github.com/o/r",
            42,
            FULL,
        ),
        (
            "https://github.com/o/r/pull/42?notification_referrer_id=x&tab=files",
            gh(),
            GH,
            "github.com/o/r",
            42,
            FULL,
        ),
        (
            "please fix https://github.com/o/r/pull/42 thanks",
            gh(),
            GH,
            "github.com/o/r",
            42,
            FULL,
        ),
        (
            "(see https://github.com/o/r/pull/42).",
            gh(),
            GH,
            "github.com/o/r",
            42,
            FULL,
        ),
        (
            "<https://github.com/o/r/pull/42>",
            gh(),
            GH,
            "github.com/o/r",
            42,
            FULL,
        ),
        (
            "[the PR](https://github.com/o/r/pull/42)",
            gh(),
            GH,
            "github.com/o/r",
            42,
            FULL,
        ),
        (
            "github.com/o/r/pull/42",
            gh(),
            GH,
            "github.com/o/r",
            42,
            FULL,
        ),
        (
            "HTTPS://WWW.GitHub.com/o/r/pull/42",
            gh(),
            GH,
            "github.com/o/r",
            42,
            FULL,
        ),
        (
            "https://x:secret@github.com/o/r/pull/42",
            gh(),
            GH,
            "github.com/o/r",
            42,
            FULL,
        ),
        (
            "PR 42 https://github.com/o/r/pull/42#discussion_r9",
            gh(),
            GH,
            "github.com/o/r",
            42,
            gh_thread(9),
        ),
        (
            "https://ghe.corp/o/r/pull/7",
            ghe(),
            GH,
            "ghe.corp/o/r",
            7,
            FULL,
        ),
        (
            "https://ghe.corp:8443/o/r/pull/7#discussion_r9",
            ghe(),
            GH,
            "ghe.corp:8443/o/r",
            7,
            gh_thread(9),
        ),
        ("#7", ghe(), GH, "ghe.corp/o/r", 7, FULL),
        ("!17", gl(), GL, "gitlab.com/g/s/p", 17, FULL),
        ("MR !17", gl(), GL, "gitlab.com/g/s/p", 17, FULL),
        ("MR 17", gl(), GL, "gitlab.com/g/s/p", 17, FULL),
        ("mr17", gl(), GL, "gitlab.com/g/s/p", 17, FULL),
        ("MR!17", gl(), GL, "gitlab.com/g/s/p", 17, FULL),
        ("merge request !17", gl(), GL, "gitlab.com/g/s/p", 17, FULL),
        ("17", gl(), GL, "gitlab.com/g/s/p", 17, FULL),
        ("g/s/p!17", gl(), GL, "gitlab.com/g/s/p", 17, FULL),
        ("other/proj!17", gl(), GL, "gitlab.com/other/proj", 17, FULL),
        (
            "https://gitlab.com/g/s/p/-/merge_requests/17",
            gl(),
            GL,
            "gitlab.com/g/s/p",
            17,
            FULL,
        ),
        (
            "https://gitlab.com/g/s/p/-/merge_requests/17/diffs",
            gl(),
            GL,
            "gitlab.com/g/s/p",
            17,
            FULL,
        ),
        (
            "https://gitlab.com/g/s/p/-/merge_requests/17#note_99",
            gl(),
            GL,
            "gitlab.com/g/s/p",
            17,
            gl_note(99),
        ),
        (
            "https://gitlab.com/g/s/p/-/merge_requests/17/diffs#note_99",
            gl(),
            GL,
            "gitlab.com/g/s/p",
            17,
            gl_note(99),
        ),
        (
            "https://gitlab.com/g/s/p/merge_requests/17",
            gl(),
            GL,
            "gitlab.com/g/s/p",
            17,
            FULL,
        ),
        ("17", corp_gitlab(), GL, "git.corp/grp/proj", 17, FULL),
        (
            "https://git.corp/grp/proj/-/merge_requests/17",
            corp_gitlab(),
            GL,
            "git.corp/grp/proj",
            17,
            FULL,
        ),
        (
            "https://gitlab.corp/a/b/c/-/merge_requests/3",
            nowhere(),
            GL,
            "gitlab.corp/a/b/c",
            3,
            FULL,
        ),
        (
            "MR !3",
            with_flags(None, Some("g/p")),
            GL,
            "gitlab.com/g/p",
            3,
            FULL,
        ),
        (
            "42",
            with_flags(Some(GH), Some("o/r")),
            GH,
            "github.com/o/r",
            42,
            FULL,
        ),
        (
            "42",
            with_flags(Some(GH), Some("https://ghe.corp/o/r")),
            GH,
            "ghe.corp/o/r",
            42,
            FULL,
        ),
        (
            "o/r#42",
            with_flags(None, None),
            GH,
            "github.com/o/r",
            42,
            FULL,
        ),
    ];
    assert!(cases.len() >= 40);
    for (input, ctx, forge, repo, number, mode) in cases {
        let t = parse_target(input, &ctx).unwrap_or_else(|e| panic!("{input:?}: {e}"));
        assert_eq!(t.forge, forge, "{input:?}");
        assert_eq!(t.repo.to_string(), repo, "{input:?}");
        assert_eq!(t.number, number, "{input:?}");
        assert_eq!(t.mode, mode, "{input:?}");
    }
}

#[test]
fn sources_are_recorded() {
    let cases: Vec<(&str, TargetContext, ForgeSource, RepoSource)> = vec![
        ("42", gh(), ForgeSource::Remote, RepoSource::Remote),
        ("x/y#42", gh(), ForgeSource::Remote, RepoSource::Reference),
        (
            "https://github.com/o/r/pull/1",
            gh(),
            ForgeSource::Url,
            RepoSource::Url,
        ),
        (
            "17",
            corp_gitlab(),
            ForgeSource::ConfiguredHost,
            RepoSource::Remote,
        ),
        ("#7", ghe(), ForgeSource::Reference, RepoSource::Remote),
        (
            "42",
            with_flags(Some(GH), Some("o/r")),
            ForgeSource::Flag,
            RepoSource::Flag,
        ),
    ];
    for (input, ctx, forge_source, repo_source) in cases {
        let t = parse_target(input, &ctx).unwrap_or_else(|e| panic!("{input:?}: {e}"));
        assert_eq!(t.forge_source, forge_source, "{input:?}");
        assert_eq!(t.repo_source, repo_source, "{input:?}");
    }
}

#[test]
fn a_gitlab_host_name_is_a_last_resort_guess() {
    let ctx = TargetContext {
        remote: Some(remote("git@gitlab.example.org:team/app.git")),
        ..TargetContext::default()
    };
    let t = parse_target("5", &ctx).expect("parses");
    assert_eq!((t.forge, t.forge_source), (GL, ForgeSource::HostName));
    // An explicit flag overrides the guess without a conflict.
    let ctx = TargetContext {
        forge: Some(GH),
        ..ctx
    };
    let t = parse_target("5", &ctx).expect("parses");
    assert_eq!((t.forge, t.forge_source), (GH, ForgeSource::Flag));
}

#[test]
fn anchors_are_recorded_without_targeting() {
    let t = parse_target("https://github.com/o/r/pull/42#issuecomment-789", &gh()).expect("parses");
    assert_eq!((t.mode, t.anchor), (FULL, Some(Anchor::IssueComment(789))));
    let t =
        parse_target("https://github.com/o/r/pull/42#pullrequestreview-5", &gh()).expect("parses");
    assert_eq!((t.mode, t.anchor), (FULL, Some(Anchor::Review(5))));
}

#[test]
fn the_emulator_host_keeps_its_port() {
    let ctx = TargetContext {
        remote: Some(remote("http://127.0.0.1:4000/o/r.git")),
        ..TargetContext::default()
    };
    let t = parse_target("http://127.0.0.1:4000/o/r/pull/3", &ctx).expect("parses");
    assert_eq!(t.repo.host, "127.0.0.1:4000");
    assert_eq!(t.forge, GH);
}

#[test]
fn display() {
    let t = parse_target("42", &gh()).expect("parses");
    assert_eq!(t.to_string(), "pull request github.com/o/r#42");
    let t =
        parse_target("https://gitlab.com/g/s/p/-/merge_requests/7#note_99", &gl()).expect("parses");
    assert_eq!(
        t.to_string(),
        "merge request gitlab.com/g/s/p!7 (discussion of note 99)"
    );
    assert_eq!(t.short_ref(), "!7");
    assert!(t.is_targeted());
    let t = parse_target("https://github.com/o/r/pull/42#discussion_r5", &gh()).expect("parses");
    assert_eq!(
        t.to_string(),
        "pull request github.com/o/r#42 (thread of review comment 5)"
    );
}

/// Assert the error, and that its message holds every needle.
fn rejects(
    input: &str,
    ctx: &TargetContext,
    is_variant: fn(&TargetError) -> bool,
    needles: &[&str],
) {
    let err = match parse_target(input, ctx) {
        Ok(t) => panic!("{input:?} was accepted as {t}"),
        Err(e) => e,
    };
    assert!(is_variant(&err), "{input:?}: unexpected {err:?}");
    let msg = err.to_string();
    for needle in needles {
        assert!(msg.contains(needle), "{input:?}: {msg:?} lacks {needle:?}");
    }
}

#[test]
fn rejections() {
    use TargetError as E;
    rejects(
        "",
        &gh(),
        |e| matches!(e, E::NoNumber { .. }),
        &["no pull request or merge request number", "\"\""],
    );
    rejects(
        "please fix the tests",
        &gh(),
        |e| matches!(e, E::NoNumber { .. }),
        &["\"please fix the tests\""],
    );
    rejects(
        "abc#42 v1.2.3 42nd",
        &gh(),
        |e| matches!(e, E::NoNumber { .. }),
        &["abc#42"],
    );
    rejects(
        "#12 and #13",
        &gh(),
        |e| matches!(e, E::NumberConflict { .. }),
        &["found both #12 and #13", "name exactly one"],
    );
    rejects(
        "12 or 13",
        &gh(),
        |e| matches!(e, E::NumberConflict { .. }),
        &["found both 12 and 13"],
    );
    rejects(
        "https://github.com/o/r/pull/1 https://github.com/o/r/pull/2",
        &gh(),
        |e| matches!(e, E::NumberConflict { .. }),
        &["found both https://github.com/o/r/pull/1 and https://github.com/o/r/pull/2"],
    );
    rejects(
        "https://github.com/o/r/pull/1 https://github.com/o/other/pull/1",
        &gh(),
        |e| matches!(e, E::RepoConflict { .. }),
        &[
            "conflicting repositories",
            "github.com/o/r",
            "github.com/o/other",
        ],
    );
    rejects(
        "https://github.com/o/r/pull/1#discussion_r1 https://github.com/o/r/pull/1#discussion_r2",
        &gh(),
        |e| matches!(e, E::ThreadConflict { .. }),
        &["#discussion_r1", "#discussion_r2", "exactly one"],
    );
    rejects(
        "MR !3",
        &with_flags(Some(GH), Some("o/r")),
        |e| matches!(e, E::KindConflict { .. }),
        &[
            "\"MR !3\" names a merge request",
            "the forge is github (from --forge)",
            "\"#3\"",
        ],
    );
    rejects(
        "#42",
        &gl(),
        |e| matches!(e, E::KindConflict { .. }),
        &[
            "names a pull request",
            "gitlab",
            "origin remote is on gitlab.com",
            "\"!42\"",
        ],
    );
    rejects(
        "o/r#42",
        &gl(),
        |e| matches!(e, E::KindConflict { .. }),
        &["\"o/r!42\""],
    );
    rejects(
        "https://github.com/o/r/pull/3",
        &with_flags(Some(GL), None),
        |e| matches!(e, E::ForgeConflict { .. }),
        &[
            "conflicting forges",
            "is a github pull request URL",
            "--forge is gitlab",
        ],
    );
    rejects(
        "42",
        &TargetContext {
            forge: Some(GL),
            ..gh()
        },
        |e| matches!(e, E::ForgeConflict { .. }),
        &["--forge is gitlab", "origin remote is on github.com"],
    );
    rejects(
        "https://git.corp/grp/proj/pull/4",
        &corp_gitlab(),
        |e| matches!(e, E::ForgeConflict { .. }),
        &["host git.corp is configured as gitlab"],
    );
    rejects(
        "https://github.com/o/r/pull/3",
        &gl(),
        |e| matches!(e, E::HostMismatch { .. }),
        &["on host github.com", "origin remote is on gitlab.com"],
    );
    rejects(
        "https://ghe.corp/o/r/pull/3",
        &gh(),
        |e| matches!(e, E::HostMismatch { .. }),
        &["ghe.corp", "github.com"],
    );
    rejects(
        "https://github.com/o/r/issues/5",
        &gh(),
        |e| matches!(e, E::NotAPullRequest { .. }),
        &["is an issue", "issues/5"],
    );
    rejects(
        "https://gitlab.com/g/p/-/issues/5",
        &gl(),
        |e| matches!(e, E::NotAPullRequest { .. }),
        &["is an issue"],
    );
    rejects(
        "fix issue #5",
        &gh(),
        |e| matches!(e, E::NotAPullRequest { .. }),
        &["\"issue #5\"", "is an issue"],
    );
    rejects(
        "#0",
        &gh(),
        |e| matches!(e, E::Zero { .. }),
        &["\"#0\"", "0 is not"],
    );
    rejects(
        "PR 99999999999999999999999",
        &gh(),
        |e| matches!(e, E::TooLarge { .. }),
        &["too large", "99999999999999999999999"],
    );
    rejects(
        "PR 42 !42",
        &gh(),
        |e| matches!(e, E::MixedKinds { .. }),
        &[
            "\"PR 42\" names a pull request",
            "\"!42\" names a merge request",
        ],
    );
    rejects(
        "PR !42",
        &gh(),
        |e| matches!(e, E::MixedReference { .. }),
        &["\"PR !42\"", "mixes"],
    );
    rejects(
        "42",
        &nowhere(),
        |e| matches!(e, E::NoRepository { .. }),
        &["no repository for \"42\"", "--repo"],
    );
    rejects(
        "42",
        &ghe(),
        |e| matches!(e, E::UnknownForge { .. }),
        &["ghe.corp", "--forge"],
    );
    rejects(
        "42",
        &with_flags(None, Some("o/r")),
        |e| matches!(e, E::UnknownForge { .. }),
        &["o/r"],
    );
    rejects(
        "o/r#42",
        &with_flags(None, Some("x/y")),
        |e| matches!(e, E::RepoConflict { .. }),
        &["o/r", "x/y", "--repo"],
    );
    rejects(
        "https://github.com/o/r/pull/4",
        &TargetContext {
            repo: Some("o/other".to_owned()),
            ..gh()
        },
        |e| matches!(e, E::RepoConflict { .. }),
        &["github.com/o/r", "o/other"],
    );
    rejects(
        "a/b/c#42",
        &gh(),
        |e| matches!(e, E::InvalidRepo { .. }),
        &["a/b/c", "owner/name"],
    );
    rejects(
        "42",
        &with_flags(Some(GH), Some("not-a-repo")),
        |e| matches!(e, E::InvalidRepoArg { .. }),
        &["--repo \"not-a-repo\""],
    );
    rejects(
        "https://github.com/o/r/-/merge_requests/4",
        &gh(),
        |e| matches!(e, E::InvalidUrl { .. }),
        &["github.com is github", "gitlab merge request path"],
    );
}

#[test]
fn credentials_in_the_input_are_never_echoed() {
    let err = parse_target(
        "https://u:hunter2@github.com/o/r/pull/1 https://ghp_secret@github.com/o/r/pull/2",
        &gh(),
    )
    .expect_err("two numbers");
    let msg = err.to_string();
    assert!(
        !msg.contains("hunter2") && !msg.contains("ghp_secret"),
        "{msg}"
    );
    assert!(msg.contains("https://***@github.com/o/r/pull/1"), "{msg}");

    let err = parse_target("https://u:hunter2@ghe.corp/o/r/pull/1", &gh()).expect_err("host");
    assert!(!err.to_string().contains("hunter2"), "{err}");
    assert!(!format!("{err:?}").contains("hunter2"), "{err:?}");

    let ctx = TargetContext {
        repo: Some("https://u:hunter2@ghe.corp/o".to_owned()),
        ..gh()
    };
    assert!(!format!("{ctx:?}").contains("hunter2"));
    let err = parse_target("1", &ctx).expect_err("bad --repo");
    assert!(!err.to_string().contains("hunter2"), "{err}");
}

#[test]
fn long_input_is_elided() {
    let input = format!("{} #1 #2", "word ".repeat(100));
    let msg = parse_target(&input, &gh())
        .expect_err("two numbers")
        .to_string();
    assert!(msg.contains('…') && msg.len() < 400, "{msg}");
}

#[test]
fn remote_urls() {
    let cases: &[(&str, &str, Option<ForgeKind>)] = &[
        ("https://github.com/o/r.git", "github.com/o/r", Some(GH)),
        ("https://github.com/o/r", "github.com/o/r", Some(GH)),
        ("https://github.com/o/r/", "github.com/o/r", Some(GH)),
        (
            "https://x-access-token:ghs_abc@github.com/o/r.git",
            "github.com/o/r",
            Some(GH),
        ),
        ("git@github.com:o/r.git", "github.com/o/r", Some(GH)),
        ("github.com:o/r", "github.com/o/r", Some(GH)),
        (
            "ssh://git@ssh.github.com:443/o/r.git",
            "github.com/o/r",
            Some(GH),
        ),
        ("ssh://git@ghe.corp:2222/o/r.git", "ghe.corp/o/r", None),
        ("https://ghe.corp:8443/o/r.git", "ghe.corp:8443/o/r", None),
        ("http://127.0.0.1:4000/o/r.git", "127.0.0.1:4000/o/r", None),
        ("git://host.example/o/r.git", "host.example/o/r", None),
        (
            "https://gitlab.com/g/sub/p.git",
            "gitlab.com/g/sub/p",
            Some(GL),
        ),
        (
            "git@gitlab.com:g/sub/sub2/p.git",
            "gitlab.com/g/sub/sub2/p",
            Some(GL),
        ),
        ("  https://GitHub.com/O/R.git\n", "github.com/O/R", Some(GH)),
    ];
    for (url, repo, forge) in cases {
        let info = parse_remote_url(url).unwrap_or_else(|e| panic!("{url}: {e}"));
        assert_eq!(info.repo.to_string(), *repo, "{url}");
        assert_eq!(info.forge, *forge, "{url}");
        assert!(!format!("{info:?}").contains("ghs_abc"));
    }
    let nested = parse_remote_url("git@gitlab.com:g/sub/p.git").expect("parses");
    assert_eq!(
        (nested.repo.owner.as_str(), nested.repo.name.as_str()),
        ("g/sub", "p")
    );
}

#[test]
fn remote_url_rejections_never_echo_credentials() {
    for (url, needle) in [
        ("", "empty"),
        ("/home/me/repo", "local path"),
        ("../repo", "local path"),
        ("file:///tmp/r", "local path"),
        ("ftp://host/o/r", "unsupported URL scheme"),
        ("https://github.com/o", "not owner/repo"),
        ("https://user:hunter2@github.com/o", "not owner/repo"),
        ("https://ghp_hunter2@github.com/", "not owner/repo"),
        ("C:\\work\\repo", "neither a URL"),
    ] {
        let err = parse_remote_url(url).expect_err(url);
        assert!(matches!(err, TargetError::InvalidRemote { .. }), "{url}");
        let msg = err.to_string();
        assert!(msg.contains(needle), "{url}: {msg}");
        assert!(
            !msg.contains("hunter2") && !format!("{err:?}").contains("hunter2"),
            "{msg}"
        );
    }
}

#[test]
fn redaction() {
    assert_eq!(redact_userinfo("https://a:b@h/x"), "https://***@h/x");
    assert_eq!(
        redact_userinfo("see https://tok@h/x and http://h/y"),
        "see https://***@h/x and http://h/y"
    );
    assert_eq!(redact_userinfo("git@github.com:o/r"), "git@github.com:o/r");
    assert_eq!(redact_userinfo("u:secret@host:o/r"), "***@host:o/r");
    assert_eq!(redact_userinfo("ping @bob about it"), "ping @bob about it");
    // Regression: multi-byte whitespace before an '@' (found by proptest).
    assert_eq!(redact_userinfo("A\u{2000}@"), "A\u{2000}@");
    assert_eq!(redact_userinfo("x\u{2002}u:p@h:o/r"), "x\u{2002}***@h:o/r");
}

/// Each accepted spelling of `n`, with a context it is valid in.
fn forms(n: u64) -> Vec<(String, TargetContext)> {
    let github = [
        format!("{n}"),
        format!("#{n}"),
        format!("PR #{n}"),
        format!("PR {n}"),
        format!("pr{n}"),
        format!("PR#{n}"),
        format!("pull request #{n}"),
        format!("o/r#{n}"),
        format!("resolve PR {n} please"),
        format!("PR {n} (#{n})"),
        format!("https://github.com/o/r/pull/{n}"),
        format!("https://github.com/o/r/pull/{n}/files"),
        format!("https://github.com/o/r/pull/{n}#discussion_r7"),
        format!("https://github.com/o/r/pull/{n}#issuecomment-7"),
    ];
    let gitlab = [
        format!("{n}"),
        format!("!{n}"),
        format!("MR !{n}"),
        format!("MR {n}"),
        format!("mr{n}"),
        format!("merge request !{n}"),
        format!("g/s/p!{n}"),
        format!("https://gitlab.com/g/s/p/-/merge_requests/{n}"),
        format!("https://gitlab.com/g/s/p/-/merge_requests/{n}/diffs#note_3"),
        format!("https://gitlab.com/g/s/p/merge_requests/{n}"),
    ];
    github
        .into_iter()
        .map(|f| (f, gh()))
        .chain(gitlab.into_iter().map(|f| (f, gl())))
        .collect()
}

const FRAGMENTS: &[&str] = &[
    "https://",
    "http://",
    "ssh://",
    "git@",
    "u:p@",
    "github.com",
    "gitlab.com",
    "ghe.corp:8443",
    "/",
    "o/r",
    "g/s/p",
    "/pull/",
    "/-/",
    "merge_requests/",
    "/issues/",
    "#",
    "!",
    "42",
    "0",
    "99999999999999999999999",
    "@",
    ":",
    "PR",
    "MR",
    "pull request",
    "issue",
    " ",
    "\u{2000}",
    "é",
    "#discussion_r",
    "#note_",
    "#r",
    "?q=1",
    ".git",
    "(",
    ")",
    "<",
    ">",
    "[",
    "](",
    ".",
];

proptest! {
    #[test]
    fn every_form_parses_back_to_its_number(n in 1..=u64::from(u32::MAX)) {
        for (input, ctx) in forms(n) {
            let t = parse_target(&input, &ctx);
            prop_assert!(t.is_ok(), "{input:?}: {:?}", t);
            prop_assert_eq!(t.map(|t| t.number).ok(), Some(n), "{}", input);
        }
    }

    #[test]
    fn parsing_never_panics(input in "\\PC{0,80}") {
        let _ = parse_target(&input, &gh());
        let _ = parse_remote_url(&input);
        let _ = redact_userinfo(&input);
    }

    #[test]
    fn parsing_reference_like_text_never_panics(
        parts in prop::collection::vec(prop::sample::select(FRAGMENTS), 0..16),
    ) {
        let input: String = parts.concat();
        for ctx in [gh(), gl(), ghe(), nowhere(), with_flags(Some(GL), Some(&input))] {
            if let Err(e) = parse_target(&input, &ctx) {
                prop_assert!(!e.to_string().is_empty());
            }
        }
        let _ = parse_remote_url(&input);
    }
}
