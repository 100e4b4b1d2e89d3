use std::time::Duration;

use time::OffsetDateTime;

use super::*;

const HEAD: &str = "1a2b3c4d5e6f";
const OLD: &str = "0f0f0f0f0f0f";

fn at(secs: i64) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp(1_800_000_000 + secs).unwrap()
}

fn review(author: &str, commit: &str, state: ReviewState) -> ReviewSeen {
    ReviewSeen {
        author: author.into(),
        author_is_bot: author.ends_with("[bot]"),
        commit: Some(commit.into()),
        state,
        body: String::new(),
    }
}

fn signal(
    name: &str,
    creator: Option<&str>,
    outcome: CheckOutcome,
    description: &str,
) -> SignalSeen {
    SignalSeen {
        name: name.into(),
        creator: creator.map(Into::into),
        outcome,
        description: (!description.is_empty()).then(|| description.into()),
    }
}

fn note(author: &str, body: &str, created: i64, updated: Option<i64>) -> NoteSeen {
    NoteSeen {
        author: author.into(),
        body: body.into(),
        created_at: at(created),
        updated_at: updated.map(at),
    }
}

struct Look {
    reviews: Vec<ReviewSeen>,
    signals: Vec<SignalSeen>,
    requested: Vec<String>,
    notes: Vec<NoteSeen>,
    approvals: Vec<(String, OffsetDateTime)>,
    carry: bool,
}

impl Look {
    fn github() -> Look {
        Look {
            reviews: vec![],
            signals: vec![],
            requested: vec![],
            notes: vec![],
            approvals: vec![],
            carry: true,
        }
    }

    fn gitlab() -> Look {
        Look {
            carry: false,
            ..Look::github()
        }
    }

    fn state(&self, login: &str, wait_over: bool) -> ReviewerState {
        let activity = Activity {
            reviews_carry_commit: self.carry,
            reviews: self.reviews.clone(),
            signals: self.signals.clone(),
            requested: self.requested.clone(),
            notes: self.notes.clone(),
            approvals: self.approvals.clone(),
            pushed_at: None,
        };
        state_of(login, &activity.look(HEAD, at(0)), wait_over)
    }
}

const RATE_LIMIT: &str = "> [!WARNING]\n> ## Review limit reached\n> \n> `@dev`, you've reached your PR review limit, so we couldn't start this review.\n> \n> **Next review available in:** **32 minutes**\n";

#[test]
fn a_review_on_the_head_is_reviewed_and_one_on_an_older_head_is_not() {
    let mut look = Look::github();
    look.reviews.push(review(
        "chatgpt-codex-connector[bot]",
        OLD,
        ReviewState::Commented,
    ));
    assert_eq!(
        look.state("chatgpt-codex-connector[bot]", false),
        ReviewerState::Pending {
            awaiting: Awaiting::Nothing
        }
    );
    look.reviews.push(review(
        "chatgpt-codex-connector",
        HEAD,
        ReviewState::Commented,
    ));
    assert_eq!(
        look.state("chatgpt-codex-connector[bot]", false),
        ReviewerState::Reviewed {
            evidence: Evidence::Review {
                state: ReviewState::Commented
            }
        }
    );
}

#[test]
fn a_draft_review_proves_nothing() {
    let mut look = Look::github();
    look.reviews.push(review(
        "copilot-pull-request-reviewer[bot]",
        HEAD,
        ReviewState::Pending,
    ));
    assert!(!look
        .state("copilot-pull-request-reviewer[bot]", false)
        .is_settled());
}

#[test]
fn a_status_settles_only_when_its_creator_is_the_reviewer() {
    let mut look = Look::github();
    // Anyone with write access can set a status named `CodeRabbit`.
    look.signals.push(signal(
        "CodeRabbit",
        Some("mallory"),
        CheckOutcome::Pass,
        "Review completed",
    ));
    assert_eq!(look.state("coderabbitai[bot]", false).as_str(), "pending");
    look.signals
        .push(signal("CodeRabbit", None, CheckOutcome::Pass, ""));
    assert_eq!(look.state("coderabbitai[bot]", false).as_str(), "pending");
    look.signals.push(signal(
        "CodeRabbit",
        Some("coderabbitai[bot]"),
        CheckOutcome::Pending,
        "",
    ));
    assert_eq!(
        look.state("coderabbitai[bot]", false),
        ReviewerState::Pending {
            awaiting: Awaiting::Running {
                name: "CodeRabbit".into()
            }
        }
    );
    assert_eq!(
        look.state("coderabbitai[bot]", true),
        ReviewerState::NotSeen { started: true }
    );
    look.signals.push(signal(
        "CodeRabbit",
        Some("coderabbitai"),
        CheckOutcome::Pass,
        "Review completed",
    ));
    assert_eq!(look.state("coderabbitai[bot]", false).as_str(), "reviewed");
}

#[test]
fn a_success_status_that_says_the_review_did_not_run_is_declined() {
    let mut look = Look::github();
    look.signals.push(signal(
        "CodeRabbit",
        Some("coderabbitai[bot]"),
        CheckOutcome::Pass,
        "Review skipped",
    ));
    let state = look.state("coderabbitai[bot]", false);
    let ReviewerState::Declined { notice } = state else {
        panic!("{state:?}")
    };
    assert_eq!(notice.reason, DeclineReason::Skipped);
}

#[test]
fn a_rate_limit_notice_after_the_push_declines_with_its_wait() {
    let mut look = Look::github();
    look.notes
        .push(note("coderabbitai[bot]", RATE_LIMIT, 5, None));
    let state = look.state("coderabbitai[bot]", false);
    let ReviewerState::Declined { notice } = &state else {
        panic!("{state:?}")
    };
    assert_eq!(notice.reason, DeclineReason::RateLimited);
    assert_eq!(notice.wait, Some(Duration::from_secs(32 * 60)));
    assert_eq!(notice.quote, "Review limit reached");
    let on_head = ReviewerOnHead {
        login: "coderabbitai[bot]".into(),
        head: HEAD.into(),
        state,
        waited_secs: 600,
    };
    assert_eq!(
        on_head.statement().unwrap(),
        "coderabbitai[bot] did not review 1a2b3c4: rate limited, next review in 32 min (it said: \"Review limit reached\")"
    );
}

#[test]
fn a_notice_from_before_the_push_is_stale_unless_edited_after_it() {
    let mut look = Look::github();
    look.notes
        .push(note("coderabbitai[bot]", RATE_LIMIT, -60, Some(-30)));
    assert_eq!(look.state("coderabbitai[bot]", false).as_str(), "pending");
    // CodeRabbit edits its summary comment in place to say it is limited.
    look.notes[0].updated_at = Some(at(10));
    assert_eq!(look.state("coderabbitai[bot]", false).as_str(), "declined");
}

#[test]
fn a_notice_by_someone_else_declines_nothing() {
    let mut look = Look::github();
    look.notes.push(note("mallory", RATE_LIMIT, 5, None));
    assert_eq!(
        look.state("coderabbitai[bot]", true),
        ReviewerState::NotSeen { started: false }
    );
}

#[test]
fn a_review_of_the_head_wins_over_a_notice() {
    let mut look = Look::github();
    look.notes
        .push(note("coderabbitai[bot]", RATE_LIMIT, 5, None));
    look.reviews
        .push(review("coderabbitai[bot]", HEAD, ReviewState::Commented));
    assert_eq!(look.state("coderabbitai[bot]", false).as_str(), "reviewed");
}

#[test]
fn a_requested_reviewer_is_pending_then_not_seen() {
    let mut look = Look::github();
    look.requested.push("copilot-pull-request-reviewer".into());
    assert_eq!(
        look.state("copilot-pull-request-reviewer[bot]", false),
        ReviewerState::Pending {
            awaiting: Awaiting::Requested
        }
    );
    assert_eq!(
        look.state("copilot-pull-request-reviewer[bot]", true),
        ReviewerState::NotSeen { started: true }
    );
}

#[test]
fn copilots_quota_notice_declines() {
    let mut look = Look::github();
    look.notes.push(note(
        "copilot-pull-request-reviewer[bot]",
        "Copilot wasn't able to review this pull request because you have reached your quota limit for premium requests.",
        3,
        None,
    ));
    let ReviewerState::Declined { notice } =
        look.state("copilot-pull-request-reviewer[bot]", false)
    else {
        panic!()
    };
    assert_eq!(notice.reason, DeclineReason::QuotaUsed);
    assert_eq!(notice.wait, None);
}

#[test]
fn on_gitlab_a_note_or_approval_after_the_push_is_the_review() {
    let mut look = Look::gitlab();
    look.notes
        .push(note("review-bot", "looks fine", -5, Some(50)));
    assert_eq!(
        look.state("review-bot", false).as_str(),
        "pending",
        "an edited older note"
    );
    look.notes.push(note("review-bot", "one finding", 8, None));
    assert_eq!(
        look.state("review-bot", false),
        ReviewerState::Reviewed {
            evidence: Evidence::Note
        }
    );
    let mut look = Look::gitlab();
    look.approvals.push(("review-bot".into(), at(-1)));
    assert_eq!(look.state("review-bot", false).as_str(), "pending");
    look.approvals.push(("review-bot".into(), at(1)));
    assert_eq!(
        look.state("review-bot", false),
        ReviewerState::Reviewed {
            evidence: Evidence::Approval
        }
    );
    // On GitHub a conversation comment is not a review of the head.
    let mut look = Look::github();
    look.notes.push(note("review-bot", "one finding", 8, None));
    assert_eq!(look.state("review-bot", false).as_str(), "pending");
}

#[test]
fn notices_name_reason_and_wait_in_the_texts_bots_post() {
    let cases: &[(&str, DeclineReason, Option<u64>)] = &[
        (
            "> ## Rate limit exceeded\n> Please wait **24 minutes and 26 seconds** before requesting another review.",
            DeclineReason::RateLimited,
            Some(24 * 60 + 26),
        ),
        (
            "Review limit reached\nNext included review available in 27 minutes.",
            DeclineReason::RateLimited,
            Some(27 * 60),
        ),
        ("⚠️ Action not completed", DeclineReason::RateLimited, None),
        ("Review rate limited", DeclineReason::RateLimited, None),
        ("Reviews paused", DeclineReason::Paused, None),
        ("Auto reviews are disabled on this repository.", DeclineReason::Paused, None),
        ("Please wait 1 hour before requesting another review. Rate limited", DeclineReason::RateLimited, Some(3600)),
    ];
    for (text, reason, wait) in cases {
        let notice = find_notice(text).unwrap_or_else(|| panic!("{text}"));
        assert_eq!(notice.reason, *reason, "{text}");
        assert_eq!(notice.wait.map(|d| d.as_secs()), *wait, "{text}");
    }
    for text in ["LGTM", "Found 2 issues in src/lib.rs", "", "rate this PR"] {
        assert_eq!(find_notice(text), None, "{text}");
    }
}

#[test]
fn a_quote_is_bounded_and_plain() {
    let long = format!("## Review limit reached {}", "x ".repeat(200));
    let notice = find_notice(&long).unwrap();
    assert!(notice.quote.chars().count() <= notice::QUOTE_MAX);
    assert!(notice.quote.starts_with("Review limit reached"));
    assert!(notice.quote.ends_with('…'));
}

#[test]
fn by_default_known_bots_with_a_signal_on_the_head_are_awaited() {
    let known = vec![
        "coderabbitai".to_owned(),
        "copilot-pull-request-reviewer".to_owned(),
    ];
    let activity = Activity {
        reviews_carry_commit: true,
        reviews: vec![review(
            "chatgpt-codex-connector[bot]",
            OLD,
            ReviewState::Commented,
        )],
        signals: vec![
            signal(
                "CodeRabbit",
                Some("coderabbitai[bot]"),
                CheckOutcome::Pending,
                "",
            ),
            signal("CodeRabbit", Some("coderabbitai"), CheckOutcome::Pass, ""),
            signal("build", Some("github-actions[bot]"), CheckOutcome::Pass, ""),
            signal("CodeRabbit", Some("mallory"), CheckOutcome::Pass, ""),
            signal("legacy", None, CheckOutcome::Pass, ""),
        ],
        ..Activity::default()
    };
    assert_eq!(default_wait_for(&activity, &known), ["coderabbitai[bot]"]);
    assert!(default_wait_for(&Activity::default(), &known).is_empty());
}

#[test]
fn stale_change_requests_are_named() {
    let reviews = vec![
        review("alice", OLD, ReviewState::ChangesRequested),
        review("bob", OLD, ReviewState::ChangesRequested),
        review("bob", HEAD, ReviewState::Approved),
        review("carol", HEAD, ReviewState::ChangesRequested),
        review("dave", OLD, ReviewState::ChangesRequested),
        review("dave", HEAD, ReviewState::Commented),
    ];
    let stale = changes_requested_on_older_heads(&reviews, HEAD, &["Dave".to_owned()]);
    let who: Vec<(&str, bool)> = stale
        .iter()
        .map(|c| (c.login.as_str(), c.requested))
        .collect();
    assert_eq!(who, [("alice", false), ("dave", true)]);
    assert_eq!(stale[0].commit.as_deref(), Some(OLD));
}

#[test]
fn a_stale_change_request_says_what_is_open() {
    let mut alice = changes_requested_on_older_heads(
        &[review("alice", OLD, ReviewState::ChangesRequested)],
        HEAD,
        &[],
    )
    .remove(0);
    let short_old: String = OLD.chars().take(7).collect();
    assert_eq!(
        alice.describe(),
        format!("alice requested changes on {short_old}, an older head")
    );
    alice.count_open(["alice", "bob", "Alice"]);
    assert!(!alice.all_handled());
    assert!(alice.describe().ends_with("; 2 of their threads are open"));
    alice.count_open(["bob"]);
    assert!(alice.all_handled());
    alice.rerequested = true;
    assert_eq!(
        alice.describe(),
        format!(
            "alice requested changes on {short_old}, an older head; their threads are \
             handled; their review was requested again"
        )
    );
    // GitLab's reviewer states carry no commit: said so, never a head.
    let mut gitlab = review("alice", OLD, ReviewState::ChangesRequested);
    gitlab.commit = None;
    let stale = changes_requested_on_older_heads(&[gitlab], HEAD, &[]);
    assert!(
        stale[0]
            .describe()
            .contains("the forge does not say on which head"),
        "{}",
        stale[0].describe()
    );
}

#[test]
fn statements_for_each_unreviewed_state() {
    let mk = |state| ReviewerOnHead {
        login: "review-bot".into(),
        head: HEAD.into(),
        state,
        waited_secs: 600,
    };
    assert_eq!(
        mk(ReviewerState::NotSeen { started: false })
            .statement()
            .unwrap(),
        "review-bot did not review 1a2b3c4 within 10 min"
    );
    assert_eq!(
        mk(ReviewerState::NotSeen { started: true })
            .statement()
            .unwrap(),
        "review-bot did not review 1a2b3c4 within 10 min (it had started)"
    );
    assert_eq!(
        mk(ReviewerState::Reviewed {
            evidence: Evidence::Note
        })
        .statement(),
        None
    );
}

#[test]
fn the_state_serializes_with_its_name() {
    let on_head = ReviewerOnHead {
        login: "review-bot".into(),
        head: HEAD.into(),
        state: ReviewerState::Pending {
            awaiting: Awaiting::Requested,
        },
        waited_secs: 0,
    };
    let json = serde_json::to_value(&on_head).unwrap();
    assert_eq!(json["state"], "pending");
    assert_eq!(json["awaiting"]["why"], "requested");
}

#[test]
fn a_trigger_comment_is_shepherds_only_when_the_viewer_wrote_it() {
    let body = trigger_body("@coderabbitai review\n", HEAD);
    assert!(body.starts_with("@coderabbitai review\n\n<!-- shepherd:trigger head="));
    assert!(is_own_trigger(
        &body,
        Some("shepherd-bot[bot]"),
        "shepherd-bot",
        Some(HEAD)
    ));
    assert!(is_own_trigger(
        &body,
        Some("shepherd-bot"),
        "shepherd-bot",
        None
    ));
    assert!(!is_own_trigger(
        &body,
        Some("shepherd-bot"),
        "shepherd-bot",
        Some(OLD)
    ));
    assert!(!is_own_trigger(
        &body,
        Some("mallory"),
        "shepherd-bot",
        None
    ));
    assert!(!is_own_trigger(&body, None, "shepherd-bot", None));
    assert!(!is_own_trigger(
        "@coderabbitai review",
        Some("shepherd-bot"),
        "shepherd-bot",
        None
    ));
}
