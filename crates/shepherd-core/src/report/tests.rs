#![allow(clippy::unwrap_used)] // a panic is how a test fails

use super::text::outcome_word;
use super::*;

use crate::ci::CiStatus;
use crate::classify::{Class, Classified, ItemKind};
use crate::cluster::{Cluster, ClusterReport, Escalation, GateSignal, ItemTheme, ThemeSource};
use crate::ledger::{Decision, LedgerEntry, Outcome};
use crate::theme::Theme;

fn record(id: &str, path: Option<&str>, decision: Decision, outcome: Outcome) -> ItemRecord {
    let mut entry = LedgerEntry::new(id, 1);
    entry.decision = Some(decision);
    entry.outcome = Some(outcome);
    entry.replied = true;
    ItemRecord {
        entry,
        kind: if path.is_some() {
            ItemKind::ReviewThread
        } else {
            ItemKind::IssueComment
        },
        path: path.map(str::to_owned),
        line: path.map(|_| 3),
        fix_kind: None,
        url: None,
        reply: None,
    }
}

fn open(id: &str, path: Option<&str>, class: Class) -> Classified {
    Classified {
        item_id: id.to_owned(),
        kind: if path.is_some() {
            ItemKind::ReviewThread
        } else {
            ItemKind::IssueComment
        },
        class,
        reason: String::new(),
        path: path.map(str::to_owned),
        line: None,
        author: None,
        outdated: false,
        url: None,
        replied_round: Some(1),
        waits_for_a_person: false,
    }
}

/// Runs `check` with the snapshots of this module: `report/snapshots/<name>.snap`,
/// the spec of the report's wording (the inputs are fixed and nothing reads
/// a clock, so nothing needs masking). A new or changed text fails the test;
/// `INSTA_UPDATE=always` writes it, for review before it is committed.
fn snapshots(check: impl FnOnce()) {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.bind(check);
}

fn input() -> ReportInput {
    let mut fixed = record("T1", Some("src/a.sh"), Decision::CodeChange, Outcome::Fixed);
    fixed.entry.commit = Some("0123456789abcdef0123".into());
    fixed.entry.resolve_authorized = true;
    fixed.entry.resolved = true;
    let mut pending = record(
        "T3",
        Some("src/c.sh"),
        Decision::Invalid,
        Outcome::NotAddressing,
    );
    pending.entry.resolve_authorized = true;
    ReportInput {
        run_id: "r1".into(),
        target: "pull request github.com/o/r#7".into(),
        pr_url: "https://github.com/o/r/pull/7".into(),
        title: "Add *things*".into(),
        status: "converged".into(),
        reason: None,
        rounds: vec![RoundSummary {
            number: 1,
            stage: "converge".into(),
            new_items: 3,
            commits: 1,
            pushed: Some("0123456789abcdef0123".into()),
            ci: Some(CiStatus::Pass),
            stalled: false,
            note: None,
            ended: None,
            stage_times: Vec::new(),
            tail_ms: 0,
        }],
        items: vec![
            pending,
            record("T2", Some("src/b.sh"), Decision::Question, Outcome::Replied),
            fixed,
            record("IC_1", None, Decision::NeedsHuman, Outcome::NeedsHuman),
        ],
        open_items: vec![
            open("T2", Some("src/b.sh"), Class::AwaitingReviewer),
            open("IC_1", None, Class::AwaitingReviewer),
            open("T3", Some("src/c.sh"), Class::ResolveRetry),
        ],
        threads_look: Some(ThreadsLook {
            round: 1,
            stage: ThreadsLook::CONVERGE.into(),
        }),
        ci: None,
        clusters: vec![Cluster {
            theme: Theme::ErrorHandling,
            area: "src".into(),
            files: vec!["src/a.sh".into()],
            item_ids: vec!["T1".into(), "T4".into()],
            hypothesis: "h".into(),
        }],
        escalations: vec![],
        failures: vec![PublicFailure {
            item_id: Some("T3".into()),
            action: "resolve".into(),
            error: "502".into(),
        }],
        agent: AgentUsage {
            providers: vec!["builtin".into()],
            calls: 2,
            millis: 1500,
            tokens: None,
            cost_usd: None,
            roles: vec![RoleUsage {
                role: "triage".into(),
                providers: vec!["builtin".into()],
                calls: 2,
                millis: 1500,
                input_tokens: Some(10),
                output_tokens: Some(5),
                cost_usd: Some(0.25),
            }],
        },
        worktree_kept: None,
        attention: Vec::new(),
        reviewers: Vec::new(),
        changes_requested: Vec::new(),
    }
}

#[test]
fn outcomes_and_thread_lists() {
    let report = build(&input());
    let words: Vec<&str> = report
        .outcomes
        .iter()
        .map(|g| outcome_word(g.outcome))
        .collect();
    assert_eq!(words, ["fixed", "not-addressing", "replied", "needs-human"]);
    assert_eq!(report.resolved.len(), 1);
    assert_eq!(report.replied.len(), 4);
    assert_eq!(
        report
            .authorized_unresolved
            .iter()
            .map(|t| t.item_id.as_str())
            .collect::<Vec<_>>(),
        ["T3"]
    );
    assert_eq!(report.awaiting_reviewer.len(), 2);
    assert!(!report.review_threads.clear);
    assert_eq!(
        report.review_threads.summary,
        "no, 1 deliberately-open thread: src/b.sh; 1 thread whose resolve has not succeeded: src/c.sh"
    );
    assert!(report.converged);
}

#[test]
fn markdown_is_deterministic_and_escapes_untrusted_text() {
    let a = build(&input()).to_markdown();
    let mut shuffled = input();
    shuffled.items.reverse();
    shuffled.open_items.reverse();
    let b = build(&shuffled).to_markdown();
    assert_eq!(a, b);
    // The title's `*things*` is escaped, the commit shortened, the failure,
    // the time and the agent's usage said, and the closing caveat kept.
    snapshots(|| insta::assert_snapshot!("report-markdown", a));
}

/// The JSON twin, whole: its field names and values are what `report
/// --json` and the CI outputs give.
#[test]
fn the_json_twin_says_what_the_markdown_says() {
    let report = build(&input());
    snapshots(|| insta::assert_json_snapshot!("report-json", report));
    let back: Report = serde_json::from_value(serde_json::to_value(&report).unwrap()).unwrap();
    assert_eq!(back, report);
}

#[test]
fn the_clusters_section_shows_signals_theme_sources_clusters_isolated_and_escalations() {
    use crate::cluster::{escalation_context, AreaKey, GateDecision};

    let key = AreaKey::new(Theme::ErrorHandling, "src/store");
    let escalation = Escalation {
        key: key.clone(),
        item_ids: vec!["T10".into(), "T9".into()],
        rounds: 2,
        context: escalation_context(&key),
    };
    let mut i = input();
    i.escalations = vec![escalation.clone()];
    i.clusters.push(Cluster {
        theme: Theme::ErrorHandling,
        area: "src/store".into(),
        files: vec!["src/store/a.sh".into(), "src/store/b.sh".into()],
        item_ids: vec!["T10".into(), "T9".into()],
        hypothesis: "h2".into(),
    });
    let round1 = ClusterReport {
        version: ClusterReport::VERSION,
        round: 1,
        gate: GateDecision {
            open: true,
            signals: vec![GateSignal::Volume { count: 5, min: 4 }],
        },
        clusters: i.clusters[..1].to_vec(),
        isolated: vec!["T2".into(), "T3".into(), "IC_1".into()],
        escalations: vec![],
        themes: vec![
            ItemTheme {
                id: "T1".into(),
                theme: Theme::ErrorHandling,
                source: ThemeSource::Agent,
            },
            ItemTheme {
                id: "T2".into(),
                theme: Theme::Other,
                source: ThemeSource::Lexical,
            },
            ItemTheme {
                id: "T4".into(),
                theme: Theme::ErrorHandling,
                source: ThemeSource::Agent,
            },
        ],
        just_fixed_files: None,
    };
    let round3 = ClusterReport {
        round: 3,
        gate: GateDecision {
            open: true,
            signals: vec![GateSignal::ReentryWithinRun],
        },
        clusters: i.clusters[1..].to_vec(),
        isolated: vec![],
        escalations: vec![escalation],
        themes: vec![],
        ..round1.clone()
    };
    let report =
        build(&i).with_cluster_rounds([ClusterRound::from(&round3), ClusterRound::from(&round1)]);
    assert_eq!(
        report
            .cluster_rounds
            .iter()
            .map(|r| r.round)
            .collect::<Vec<_>>(),
        [1, 3]
    );
    let md = report.to_markdown();
    let section = &md[md.find("## Clusters").unwrap()..md.find("## Needs attention").unwrap()];
    // The JSON twin carries the same.
    let json = serde_json::to_value(&report).unwrap();
    snapshots(|| {
        insta::assert_snapshot!("clusters-markdown", section);
        insta::assert_json_snapshot!("clusters-json", json["cluster_rounds"]);
    });
    let back: Report = serde_json::from_value(json).unwrap();
    assert_eq!(back, report);
}

#[test]
fn without_clusters_the_section_says_none_was_formed() {
    let mut i = input();
    i.clusters.clear();
    let md = build(&i).to_markdown();
    assert!(
        md.contains("## Clusters\n\nNo cluster was formed.\n"),
        "{md}"
    );
    assert!(!md.contains("Cluster gate"), "{md}");
    assert!(!md.contains("Escalated"), "{md}");
}

#[test]
fn commits_never_pushed_are_marked_in_the_rounds_table() {
    let mut i = input();
    i.rounds.push(RoundSummary {
        number: 2,
        stage: "push".into(),
        new_items: 2,
        commits: 2,
        pushed: None,
        ci: None,
        stalled: false,
        note: Some("the push was rejected".into()),
        ended: None,
        stage_times: Vec::new(),
        tail_ms: 0,
    });
    let md = build(&i).to_markdown();
    assert!(
        md.contains("| 1 | converge | 3 | 1 | `0123456789ab` |"),
        "{md}"
    );
    assert!(md.contains("| 2 | push | 2 | 2 (not pushed) | - |"), "{md}");
}

#[test]
fn the_rounds_table_says_where_each_round_ended_and_how_long_its_stages_took() {
    let mut i = input();
    i.rounds[0].ended = Some("next round".into());
    i.rounds[0].stage_times = vec![
        StageTime {
            stage: "pr-state".into(),
            ms: 120,
        },
        StageTime {
            stage: "ci".into(),
            ms: 6_240,
        },
        StageTime {
            stage: "converge".into(),
            ms: 80,
        },
    ];
    i.rounds.push(RoundSummary {
        number: 2,
        stage: "cluster".into(),
        new_items: 2,
        commits: 0,
        pushed: None,
        ci: None,
        stalled: false,
        note: Some("4 reply-only decisions await approval".into()),
        ended: Some("paused".into()),
        stage_times: vec![StageTime {
            stage: "pr-state".into(),
            ms: 50,
        }],
        tail_ms: 1_500,
    });
    let md = build(&i).to_markdown();
    let section = &md[md.find("## Rounds").unwrap()..md.find("## Items by outcome").unwrap()];
    snapshots(|| insta::assert_snapshot!("rounds-markdown", section));
    // An old run's summary (no times) still reads.
    let old: RoundSummary = serde_json::from_value(serde_json::json!({
        "number": 1, "stage": "converge", "new_items": 0, "commits": 0,
        "pushed": null, "ci": null, "stalled": false, "note": null
    }))
    .unwrap();
    assert_eq!(old.ended_at(), "converge");
    assert_eq!(old.times_line(), None);
}

#[test]
fn clear_threads_say_yes() {
    let mut i = input();
    i.open_items.clear();
    let report = build(&i);
    assert!(report.review_threads.clear);
    assert_eq!(report.review_threads.summary, "yes");
    assert!(report.to_markdown().contains("Review threads clear: yes"));
}

/// Issue 27: "yes" only when every awaited reviewer reviewed the final
/// head; one that did not is said, in words, in the Markdown and the JSON.
#[test]
fn clear_threads_are_not_yes_while_an_awaited_reviewer_did_not_review() {
    use crate::reviewers::{find_notice, Evidence, ReviewerOnHead, ReviewerState};
    let mut i = input();
    i.open_items.clear();
    let on = |login: &str, state| ReviewerOnHead {
        login: login.into(),
        head: "1a2b3c4d5e".into(),
        state,
        waited_secs: 600,
    };
    i.reviewers = vec![on(
        "codex[bot]",
        ReviewerState::Reviewed {
            evidence: Evidence::Note,
        },
    )];
    let report = build(&i);
    assert_eq!(report.review_threads.summary, "yes");
    assert!(
        report
            .to_markdown()
            .contains("- Reviewer: codex\\[bot\\] reviewed 1a2b3c4"),
        "{}",
        report.to_markdown()
    );
    let notice =
        find_notice("## Review limit reached\nNext review available in: 32 minutes").unwrap();
    i.reviewers
        .push(on("coderabbitai[bot]", ReviewerState::Declined { notice }));
    let report = build(&i);
    assert!(!report.review_threads.clear);
    assert_eq!(
        report.review_threads.summary,
        "not known: coderabbitai[bot] did not review 1a2b3c4: rate limited, next review in 32 min (it said: \"Review limit reached\")"
    );
    let md = report.to_markdown();
    assert!(!md.contains("Review threads clear: yes"), "{md}");
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["reviewers"][1]["state"], "declined");
    assert_eq!(json["reviewers"][1]["notice"]["reason"], "rate-limited");
}

/// A person whose change request is on an older head is named in the
/// Markdown and the JSON, with their threads' state.
#[test]
fn a_stale_change_request_is_named() {
    use crate::reviewers::ChangesRequested;
    let mut i = input();
    i.changes_requested = vec![ChangesRequested {
        login: "alice".into(),
        commit: Some("1a2b3c4d5e".into()),
        head: "9f8e7d6c5b".into(),
        open_threads: Some(2),
        requested: false,
        rerequested: false,
    }];
    let report = build(&i);
    let md = report.to_markdown();
    assert!(
        md.contains(
            "- Changes requested: alice requested changes on 1a2b3c4, an older head; 2 of \
             their threads are open\n"
        ),
        "{md}"
    );
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["changes_requested"][0]["login"], "alice");
    assert_eq!(json["changes_requested"][0]["open_threads"], 2);
}

fn new_thread(id: &str, path: &str) -> Classified {
    Classified {
        replied_round: None,
        waits_for_a_person: false,
        ..open(id, Some(path), Class::New)
    }
}

/// A run that stopped before it ever saw the threads (a failure at
/// pr-state) knows nothing: the summary says so, never `yes`.
#[test]
fn without_a_look_at_the_threads_clear_is_unknown() {
    let mut i = input();
    i.open_items.clear();
    i.threads_look = None;
    let report = build(&i);
    assert!(!report.review_threads.known);
    assert!(!report.review_threads.clear);
    assert!(report.review_threads.summary.starts_with("unknown"));
    assert!(report
        .to_markdown()
        .contains("Review threads clear: unknown: the run stopped before"));
}

/// Table: what the run last saw, what it did after, and the sentence.
#[test]
fn the_summary_states_what_was_seen_and_done_after_the_look() {
    let at_threads = ThreadsLook {
        round: 2,
        stage: "threads".into(),
    };
    let eight: Vec<Classified> = (1..=8)
        .map(|n| new_thread(&format!("T{n}"), &format!("src/f{}.sh", n % 3)))
        .collect();
    let replied_after = |id: &str, round: u32, authorized: bool, resolved: bool| {
        let mut r = record(id, Some("src/f1.sh"), Decision::Question, Outcome::Replied);
        r.entry.round = round;
        r.entry.resolve_authorized = authorized;
        r.entry.resolved = resolved;
        r
    };
    /// What, the look's classification, the ledger after it, the look,
    /// the expected sentence.
    type Case = (
        &'static str,
        Vec<Classified>,
        Vec<ItemRecord>,
        ThreadsLook,
        &'static str,
    );
    let cases: Vec<Case> = vec![
        (
            "paused at approval: eight new threads",
            eight.clone(),
            vec![],
            at_threads.clone(),
            "no, 8 threads not handled yet: src/f0.sh, src/f1.sh, src/f2.sh \
             (as seen at the threads stage of round 2; not looked at since)",
        ),
        (
            "a reply after the look leaves the thread open",
            vec![new_thread("T1", "src/f1.sh")],
            vec![replied_after("T1", 2, false, false)],
            at_threads.clone(),
            "no, 1 thread replied to, left open: src/f1.sh \
             (as seen at the threads stage of round 2; not looked at since)",
        ),
        (
            "an authorized resolve that failed after the look",
            vec![new_thread("T1", "src/f1.sh")],
            vec![replied_after("T1", 2, true, false)],
            at_threads.clone(),
            "no, 1 thread whose resolve has not succeeded: src/f1.sh \
             (as seen at the threads stage of round 2; not looked at since)",
        ),
        (
            "a resolve that succeeded after the look closes it",
            vec![new_thread("T1", "src/f1.sh")],
            vec![replied_after("T1", 2, true, true)],
            at_threads.clone(),
            "yes (as seen at the threads stage of round 2; not looked at since)",
        ),
        (
            "a reply of an earlier round does not count as handled now",
            vec![new_thread("T1", "src/f1.sh")],
            vec![replied_after("T1", 1, false, false)],
            at_threads.clone(),
            "no, 1 thread not handled yet: src/f1.sh \
             (as seen at the threads stage of round 2; not looked at since)",
        ),
        (
            "a pending-review stop still counts what pr-state saw",
            vec![new_thread("T1", "src/f1.sh"), new_thread("T2", "src/f2.sh")],
            vec![],
            ThreadsLook {
                round: 1,
                stage: "pr-state".into(),
            },
            "no, 2 threads not handled yet: src/f1.sh, src/f2.sh \
             (as seen at the pr-state stage of round 1; not looked at since)",
        ),
        (
            "the post-CI re-fetch saw nothing open",
            vec![],
            vec![],
            ThreadsLook {
                round: 3,
                stage: ThreadsLook::CONVERGE.into(),
            },
            "yes",
        ),
    ];
    for (what, open_items, items, look, expected) in cases {
        let mut i = input();
        i.open_items = open_items;
        i.items = items;
        i.threads_look = Some(look);
        let report = build(&i);
        assert_eq!(report.review_threads.summary, expected, "{what}");
        assert_eq!(
            report.review_threads.clear,
            expected.starts_with("yes"),
            "{what}"
        );
        assert!(report.review_threads.known, "{what}");
    }
}

/// Property: whatever the look and the ledger, `yes` is said only when
/// no thread of the look is left open, and every open thread of the look
/// that the run did not resolve is counted.
#[test]
fn yes_only_when_every_seen_thread_is_closed() {
    let classes = [Class::New, Class::ResolveRetry, Class::AwaitingReviewer];
    for n in 0..3usize.pow(4) * 4 {
        let mut i = input();
        i.items.clear();
        i.open_items.clear();
        let mut open_left = 0;
        for k in 0..4 {
            let class = classes[(n / 3usize.pow(k)) % 3];
            let id = format!("T{k}");
            i.open_items.push(open(&id, Some("src/x.sh"), class));
            let resolved_after = (n / 81) == k as usize;
            if resolved_after {
                let mut r = record(
                    &id,
                    Some("src/x.sh"),
                    Decision::Invalid,
                    Outcome::NotAddressing,
                );
                r.entry.round = 1;
                r.entry.resolve_authorized = true;
                r.entry.resolved = true;
                i.items.push(r);
            } else {
                open_left += 1;
            }
        }
        let report = build(&i);
        let t = &report.review_threads;
        assert_eq!(
            t.deliberately_open.len() + t.other_open.len(),
            open_left,
            "{n}"
        );
        assert_eq!(t.clear, open_left == 0, "{n}");
        assert_eq!(t.summary.starts_with("yes"), open_left == 0, "{n}");
    }
}

#[test]
fn control_characters_in_paths_are_escaped_in_markdown() {
    let mut i = input();
    i.items = vec![record(
        "T\u{7}1",
        Some("src/\u{1b}[2Jevil\u{202e}hs.sh"),
        Decision::Question,
        Outcome::Replied,
    )];
    i.open_items = vec![open(
        "T\u{7}1",
        Some("src/\u{1b}[2Jevil\u{202e}hs.sh"),
        Class::AwaitingReviewer,
    )];
    i.title = "title \u{202e}evil".into();
    i.worktree_kept = Some("/tmp/\u{1b}]0;x\u{7}".into());
    let md = build(&i).to_markdown();
    assert!(
        !md.chars().any(|c| c != '\n' && crate::escape::is_unsafe(c)),
        "{md:?}"
    );
    assert!(md.contains("`src/\\x1b[2Jevil\\u{202e}hs.sh:3`"), "{md}");
    assert!(md.contains("title \\\\u{202e}evil"), "{md}");
}

/// Issue 26 point 7: what a converged loop leaves for a person.
#[test]
fn waiting_for_a_person_lists_unresolved_needs_human_items_and_held_ones() {
    let item = |id: &str, path: Option<&str>, resolved: bool| ReportItem {
        item_id: id.into(),
        path: path.map(str::to_owned),
        line: None,
        decision: None,
        commit: None,
        replied: true,
        resolved,
        url: None,
        reply: None,
    };
    let mut report = build(&input());
    report.attention.clear();
    report.outcomes = vec![
        OutcomeGroup {
            outcome: Some(Outcome::Fixed),
            items: vec![item("T_FIXED", Some("a.rs"), true)],
        },
        OutcomeGroup {
            outcome: Some(Outcome::NeedsHuman),
            items: vec![
                item("T_CRASHED", Some("b.rs"), false),
                item("T_SOMEONE_RESOLVED", Some("c.rs"), true),
            ],
        },
    ];
    report.attention = vec![
        AttentionItem {
            kind: AttentionKind::NeedsYourDecision,
            path: None,
            line: None,
            item_id: "IC_1".into(),
            url: None,
            excerpt: String::new(),
            why: String::new(),
        },
        AttentionItem {
            kind: AttentionKind::Untrusted,
            path: Some("d.rs".into()),
            line: None,
            item_id: "T_STRANGER".into(),
            url: None,
            excerpt: String::new(),
            why: String::new(),
        },
    ];
    let ids: Vec<String> = report
        .waiting_for_a_person()
        .into_iter()
        .map(|t| t.item_id)
        .collect();
    assert_eq!(ids, ["IC_1", "T_CRASHED"]);
}

/// Issue 26 point 7, across runs: an open thread whose last word is a
/// reply that handed it to a person (an earlier run's, known from its
/// marker) still waits for one; the report says so, apart from the
/// threads left open for the reviewer.
#[test]
fn an_open_item_handed_to_a_person_earlier_still_waits() {
    let mut i = input();
    i.items.clear();
    i.attention.clear();
    let handed = Classified {
        waits_for_a_person: true,
        ..open("T_EARLIER", Some("src/z.sh"), Class::AwaitingReviewer)
    };
    i.open_items = vec![
        handed,
        open("T_QUESTION", Some("src/q.sh"), Class::AwaitingReviewer),
    ];
    let report = build(&i);
    let ids =
        |list: Vec<ThreadPath>| -> Vec<String> { list.into_iter().map(|t| t.item_id).collect() };
    assert_eq!(ids(report.waiting_for_a_person()), ["T_EARLIER"]);
    assert_eq!(ids(report.handed_to_a_person.clone()), ["T_EARLIER"]);
    assert_eq!(ids(report.awaiting_reviewer.clone()), ["T_QUESTION"]);
    let md = report.to_markdown();
    assert!(md.contains("Waiting for a person"), "{md}");
    assert!(md.contains("src/z.sh"), "{md}");
    // Without the flag nothing waits for a person.
    i.open_items[0].waits_for_a_person = false;
    assert!(build(&i).waiting_for_a_person().is_empty());
}
