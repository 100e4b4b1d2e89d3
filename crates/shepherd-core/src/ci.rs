//! The CI verdict: from the checks of a head commit to `PASS`, `FAIL`,
//! `PENDING` or `UNKNOWN`.
//!
//! Pure and deterministic; the forge client fetches the checks, the engine
//! polls (with [`poll_delay`]) and decides when the deadline has passed. The
//! rules (SPEC section 3, step 15):
//!
//! - Which checks count: with the required set [`RequiredSet::Unknown`]
//!   (discovery failed), every check (strict). With a known set, the required
//!   checks and any check the forge flags as required; a known but empty set
//!   (nothing required on the branch, nothing expected) is strict too, so that a
//!   repository without required checks still waits for its CI.
//! - A required check that has not appeared yet is waited for, and is
//!   `UNKNOWN` at the deadline; so is a counted check still pending, and so is a
//!   head with no counted check at all.
//! - `success`, `neutral`, `skipped` pass; `failure`, `cancelled`,
//!   `timed_out`, `action_required`, `startup_failure`, `error` fail; `stale`,
//!   or a completed check without a conclusion this build knows, is unknown.
//! - One failed counted check fails the verdict at once, whatever else is
//!   pending. `UNKNOWN` is never `PASS`.

use std::collections::BTreeSet;
use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Where a check comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckSource {
    /// A check run (GitHub Checks API, Actions jobs, apps).
    CheckRun,
    /// A legacy commit status (`context` + `state`).
    StatusContext,
}

/// Where a check is in its life (GitHub `CheckStatusState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    /// Queued.
    Queued,
    /// Running.
    InProgress,
    /// Finished: its conclusion says how.
    Completed,
    /// Waiting for a deployment protection rule.
    Waiting,
    /// Requested, not yet queued.
    Requested,
    /// Pending (also a legacy status that has not reported).
    Pending,
}

impl CheckStatus {
    /// Parses GitHub's spelling, REST (`in_progress`) or GraphQL (`IN_PROGRESS`).
    pub fn parse(text: &str) -> Option<CheckStatus> {
        Some(match text.to_ascii_lowercase().as_str() {
            "queued" => CheckStatus::Queued,
            "in_progress" => CheckStatus::InProgress,
            "completed" => CheckStatus::Completed,
            "waiting" => CheckStatus::Waiting,
            "requested" => CheckStatus::Requested,
            "pending" => CheckStatus::Pending,
            _ => return None,
        })
    }

    /// GitHub's REST spelling (`in_progress`).
    pub fn as_str(self) -> &'static str {
        match self {
            CheckStatus::Queued => "queued",
            CheckStatus::InProgress => "in_progress",
            CheckStatus::Completed => "completed",
            CheckStatus::Waiting => "waiting",
            CheckStatus::Requested => "requested",
            CheckStatus::Pending => "pending",
        }
    }
}

/// How a completed check ended (GitHub `CheckConclusionState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckConclusion {
    /// Succeeded.
    Success,
    /// Failed.
    Failure,
    /// Neither passed nor failed; counts as a pass, as on GitHub.
    Neutral,
    /// Cancelled.
    Cancelled,
    /// Skipped; counts as a pass, as on GitHub.
    Skipped,
    /// Timed out.
    TimedOut,
    /// Needs an action from a person.
    ActionRequired,
    /// Marked stale by GitHub (incomplete for too long): not a result.
    Stale,
    /// The job could not start.
    StartupFailure,
    /// Errored (legacy status `error`).
    Error,
}

impl CheckConclusion {
    /// Parses GitHub's spelling, REST (`timed_out`) or GraphQL (`TIMED_OUT`).
    pub fn parse(text: &str) -> Option<CheckConclusion> {
        Some(match text.to_ascii_lowercase().as_str() {
            "success" => CheckConclusion::Success,
            "failure" => CheckConclusion::Failure,
            "neutral" => CheckConclusion::Neutral,
            "cancelled" => CheckConclusion::Cancelled,
            "skipped" => CheckConclusion::Skipped,
            "timed_out" => CheckConclusion::TimedOut,
            "action_required" => CheckConclusion::ActionRequired,
            "stale" => CheckConclusion::Stale,
            "startup_failure" => CheckConclusion::StartupFailure,
            "error" => CheckConclusion::Error,
            _ => return None,
        })
    }

    /// GitHub's REST spelling (`timed_out`).
    pub fn as_str(self) -> &'static str {
        match self {
            CheckConclusion::Success => "success",
            CheckConclusion::Failure => "failure",
            CheckConclusion::Neutral => "neutral",
            CheckConclusion::Cancelled => "cancelled",
            CheckConclusion::Skipped => "skipped",
            CheckConclusion::TimedOut => "timed_out",
            CheckConclusion::ActionRequired => "action_required",
            CheckConclusion::Stale => "stale",
            CheckConclusion::StartupFailure => "startup_failure",
            CheckConclusion::Error => "error",
        }
    }
}

/// What one check says, on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckOutcome {
    /// Passed (success, neutral, skipped).
    Pass,
    /// Failed.
    Fail,
    /// Not finished.
    Pending,
    /// Finished without a usable result (stale, or no known conclusion).
    Unknown,
}

/// One check of a head commit, from either source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckState {
    /// The check run's name, or the status's context: what required checks name.
    pub name: String,
    /// Check run or legacy status.
    pub source: CheckSource,
    /// Where the check is.
    pub status: CheckStatus,
    /// How it ended, when completed (`None` while running, or when the forge
    /// gave a conclusion this build does not know).
    pub conclusion: Option<CheckConclusion>,
    /// Whether the forge flags it as required for the pull request (GitHub
    /// `isRequired`), when it said.
    pub required: Option<bool>,
}

impl CheckState {
    /// A legacy commit status: `state` is `success`, `failure`, `error`,
    /// `pending` (or GraphQL's `EXPECTED`, a required status not reported yet).
    /// Any other state is a completed check without a known conclusion.
    pub fn from_status_context(
        context: impl Into<String>,
        state: &str,
        required: Option<bool>,
    ) -> CheckState {
        let (status, conclusion) = match state.to_ascii_lowercase().as_str() {
            "success" => (CheckStatus::Completed, Some(CheckConclusion::Success)),
            "failure" => (CheckStatus::Completed, Some(CheckConclusion::Failure)),
            "error" => (CheckStatus::Completed, Some(CheckConclusion::Error)),
            "pending" | "expected" => (CheckStatus::Pending, None),
            _ => (CheckStatus::Completed, None),
        };
        CheckState {
            name: context.into(),
            source: CheckSource::StatusContext,
            status,
            conclusion,
            required,
        }
    }

    /// What this check says on its own.
    pub fn outcome(&self) -> CheckOutcome {
        if self.status != CheckStatus::Completed {
            return CheckOutcome::Pending;
        }
        match self.conclusion {
            Some(
                CheckConclusion::Success | CheckConclusion::Neutral | CheckConclusion::Skipped,
            ) => CheckOutcome::Pass,
            Some(
                CheckConclusion::Failure
                | CheckConclusion::Cancelled
                | CheckConclusion::TimedOut
                | CheckConclusion::ActionRequired
                | CheckConclusion::StartupFailure
                | CheckConclusion::Error,
            ) => CheckOutcome::Fail,
            Some(CheckConclusion::Stale) | None => CheckOutcome::Unknown,
        }
    }

    /// `in_progress`, `failure`, `completed`: the word a reason shows.
    fn describe(&self) -> &'static str {
        match (self.status, self.conclusion) {
            (CheckStatus::Completed, Some(conclusion)) => conclusion.as_str(),
            (status, _) => status.as_str(),
        }
    }
}

/// The checks that must pass, as far as discovery could tell.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequiredSet {
    /// These names are required (branch protection, rulesets, `isRequired`).
    Known(BTreeSet<String>),
    /// Discovery failed: every check counts.
    Unknown,
}

/// The overall state of CI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum CiStatus {
    /// Every counted check passed, and every required check appeared.
    Pass,
    /// A counted check failed.
    Fail,
    /// No usable answer: a timeout, a pending or missing check at the
    /// deadline, no checks at all, or a check without a result. Never a pass.
    Unknown,
    /// Still waiting (before the deadline).
    Pending,
}

impl CiStatus {
    /// `PASS`, `FAIL`, `UNKNOWN`, `PENDING`.
    pub fn as_str(self) -> &'static str {
        match self {
            CiStatus::Pass => "PASS",
            CiStatus::Fail => "FAIL",
            CiStatus::Unknown => "UNKNOWN",
            CiStatus::Pending => "PENDING",
        }
    }

    /// Whether polling can stop: anything but `PENDING`.
    pub fn is_final(self) -> bool {
        self != CiStatus::Pending
    }
}

impl fmt::Display for CiStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The verdict and what it rests on. Name lists are sorted and without repeats.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CiVerdict {
    /// The verdict.
    pub status: CiStatus,
    /// Why, one sentence per fact, for reports and `ci.json`.
    pub reasons: Vec<String>,
    /// Counted checks that failed.
    pub failed: Vec<String>,
    /// Counted checks not finished.
    pub pending: Vec<String>,
    /// Required checks that have not appeared.
    pub missing: Vec<String>,
    /// Checks that failed, had their jobs re-run once, and were then seen
    /// again (filled by the CI wait; those not in `failed` passed on the
    /// re-run: flaky).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rerun: Vec<String>,
}

/// The CI verdict of a head commit.
///
/// `checks` are the latest checks of the commit (check runs and statuses; a
/// name may repeat, every instance counts). `expected` names checks that must
/// appear whatever `required` says (say, from configuration); under a known
/// set, its names must appear too. `deadline_passed` turns what is still
/// waited for into `UNKNOWN`.
pub fn verdict(
    checks: &[CheckState],
    required: &RequiredSet,
    expected: &[String],
    deadline_passed: bool,
) -> CiVerdict {
    let mut must_appear: BTreeSet<&str> = expected.iter().map(String::as_str).collect();
    let mut reasons = Vec::new();
    let strict = match required {
        RequiredSet::Unknown => {
            reasons.push("the required checks are unknown: every check counts".to_owned());
            true
        }
        RequiredSet::Known(names) => {
            must_appear.extend(names.iter().map(String::as_str));
            let flagged = checks.iter().any(|c| c.required == Some(true));
            if must_appear.is_empty() && !flagged {
                // With no check at all, "no checks reported" (below) is the
                // reason; that every check counts says nothing then.
                if !checks.is_empty() {
                    reasons.push("no check is required: every check counts".to_owned());
                }
                true
            } else {
                false
            }
        }
    };
    let counts = |check: &CheckState| {
        strict || must_appear.contains(check.name.as_str()) || check.required == Some(true)
    };

    let mut failed = BTreeSet::new();
    let mut pending = BTreeSet::new();
    let mut unknown = BTreeSet::new();
    let mut counted = 0usize;
    for check in checks {
        let outcome = check.outcome();
        if !counts(check) {
            if outcome == CheckOutcome::Fail {
                reasons.push(format!(
                    "check `{}` {} but is not required",
                    check.name,
                    check.describe()
                ));
            }
            continue;
        }
        counted += 1;
        match outcome {
            CheckOutcome::Pass => {}
            CheckOutcome::Fail => {
                if failed.insert(check.name.clone()) {
                    reasons.push(format!("check `{}` {}", check.name, check.describe()));
                }
            }
            CheckOutcome::Pending => {
                pending.insert(check.name.clone());
            }
            CheckOutcome::Unknown => {
                if unknown.insert(check.name.clone()) {
                    reasons.push(format!(
                        "check `{}` finished without a result ({})",
                        check.name,
                        check.describe()
                    ));
                }
            }
        }
    }
    let present: BTreeSet<&str> = checks.iter().map(|c| c.name.as_str()).collect();
    let missing: Vec<String> = must_appear
        .difference(&present)
        .map(|name| (*name).to_owned())
        .collect();

    let waiting = !pending.is_empty() || !missing.is_empty() || counted == 0;
    let status = if !failed.is_empty() {
        CiStatus::Fail
    } else if waiting && deadline_passed {
        CiStatus::Unknown
    } else if waiting {
        CiStatus::Pending
    } else if !unknown.is_empty() {
        CiStatus::Unknown
    } else {
        CiStatus::Pass
    };

    let when = if deadline_passed {
        "at the deadline"
    } else {
        "so far"
    };
    for name in &pending {
        reasons.push(format!("check `{name}` still pending {when}"));
    }
    for name in &missing {
        reasons.push(format!("required check `{name}` has not appeared {when}"));
    }
    if counted == 0 && missing.is_empty() {
        reasons.push(format!("no checks reported {when}"));
    }
    if status == CiStatus::Pass {
        reasons.push(format!("{counted} counted check(s) passed"));
    }
    CiVerdict {
        status,
        reasons,
        failed: failed.into_iter().collect(),
        pending: pending.into_iter().collect(),
        missing,
        rerun: Vec::new(),
    }
}

/// Whether to re-run the failed jobs: only on a `FAIL` with failed checks,
/// and at most once per head SHA.
pub fn should_rerun(verdict: &CiVerdict, already_rerun_for_sha: bool) -> bool {
    verdict.status == CiStatus::Fail && !verdict.failed.is_empty() && !already_rerun_for_sha
}

/// The wait before poll `attempt` (0-based): `base`, doubling each attempt,
/// never above `max`. Deterministic, no jitter (one client polls one PR).
pub fn poll_delay(attempt: u32, base: Duration, max: Duration) -> Duration {
    let factor = 1u32.checked_shl(attempt.min(31)).unwrap_or(u32::MAX);
    base.checked_mul(factor).unwrap_or(max).min(max)
}

/// The first wait of a CI watch: a quick check is seen in seconds, not
/// after a whole poll interval.
pub const FIRST_POLL: Duration = Duration::from_secs(2);

/// The wait before CI poll `attempt` (0-based) with the configured
/// `interval`: [`FIRST_POLL`] (or `interval`, when shorter), doubling each
/// attempt up to `interval`: 2, 4, 8, 15, 15, ... s with the default 15 s.
pub fn ci_poll_schedule(attempt: u32, interval: Duration) -> Duration {
    poll_delay(attempt, FIRST_POLL.min(interval), interval)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn run(name: &str, status: CheckStatus, conclusion: Option<CheckConclusion>) -> CheckState {
        CheckState {
            name: name.to_owned(),
            source: CheckSource::CheckRun,
            status,
            conclusion,
            required: None,
        }
    }

    fn done(name: &str, conclusion: CheckConclusion) -> CheckState {
        run(name, CheckStatus::Completed, Some(conclusion))
    }

    fn known(names: &[&str]) -> RequiredSet {
        RequiredSet::Known(names.iter().map(|n| (*n).to_owned()).collect())
    }

    use CheckConclusion as C;
    use CiStatus as S;

    #[test]
    fn table() {
        let pending = run("build", CheckStatus::InProgress, None);
        let cases: Vec<(&str, Vec<CheckState>, RequiredSet, bool, CiStatus)> = vec![
            (
                "no checks, waiting",
                vec![],
                RequiredSet::Unknown,
                false,
                S::Pending,
            ),
            (
                "no checks at the deadline",
                vec![],
                RequiredSet::Unknown,
                true,
                S::Unknown,
            ),
            (
                "no checks, nothing required",
                vec![],
                known(&[]),
                true,
                S::Unknown,
            ),
            (
                "strict, all pass",
                vec![
                    done("a", C::Success),
                    done("b", C::Neutral),
                    done("c", C::Skipped),
                ],
                RequiredSet::Unknown,
                false,
                S::Pass,
            ),
            (
                "strict, one fails",
                vec![done("a", C::Success), done("b", C::Failure)],
                RequiredSet::Unknown,
                false,
                S::Fail,
            ),
            (
                "fail wins over pending",
                vec![pending.clone(), done("b", C::TimedOut)],
                RequiredSet::Unknown,
                false,
                S::Fail,
            ),
            (
                "pending before the deadline",
                vec![pending.clone(), done("b", C::Success)],
                RequiredSet::Unknown,
                false,
                S::Pending,
            ),
            (
                "pending at the deadline",
                vec![pending.clone(), done("b", C::Success)],
                RequiredSet::Unknown,
                true,
                S::Unknown,
            ),
            (
                "known: non-required failure ignored",
                vec![done("req", C::Success), done("lint", C::Failure)],
                known(&["req"]),
                false,
                S::Pass,
            ),
            (
                "known: required missing",
                vec![done("lint", C::Success)],
                known(&["req"]),
                false,
                S::Pending,
            ),
            (
                "known: required missing at deadline",
                vec![done("lint", C::Success)],
                known(&["req"]),
                true,
                S::Unknown,
            ),
            (
                "known: required fails",
                vec![done("req", C::Cancelled)],
                known(&["req"]),
                false,
                S::Fail,
            ),
            (
                "known empty is strict",
                vec![done("lint", C::Failure)],
                known(&[]),
                false,
                S::Fail,
            ),
            (
                "stale is unknown",
                vec![done("a", C::Stale)],
                RequiredSet::Unknown,
                false,
                S::Unknown,
            ),
            (
                "completed without conclusion",
                vec![run("a", CheckStatus::Completed, None)],
                RequiredSet::Unknown,
                false,
                S::Unknown,
            ),
            (
                "action required fails",
                vec![done("a", C::ActionRequired)],
                RequiredSet::Unknown,
                false,
                S::Fail,
            ),
            (
                "startup failure fails",
                vec![done("a", C::StartupFailure)],
                RequiredSet::Unknown,
                false,
                S::Fail,
            ),
            (
                "legacy error fails",
                vec![CheckState::from_status_context("ci/legacy", "error", None)],
                RequiredSet::Unknown,
                false,
                S::Fail,
            ),
            (
                "legacy pending waits",
                vec![CheckState::from_status_context(
                    "ci/legacy",
                    "pending",
                    None,
                )],
                RequiredSet::Unknown,
                false,
                S::Pending,
            ),
            (
                "legacy success passes",
                vec![CheckState::from_status_context(
                    "ci/legacy",
                    "success",
                    None,
                )],
                known(&["ci/legacy"]),
                false,
                S::Pass,
            ),
            (
                "queued, waiting, requested are pending",
                vec![
                    run("a", CheckStatus::Queued, None),
                    run("b", CheckStatus::Waiting, None),
                    run("c", CheckStatus::Requested, None),
                ],
                RequiredSet::Unknown,
                false,
                S::Pending,
            ),
        ];
        for (label, checks, required, deadline, want) in cases {
            let got = verdict(&checks, &required, &[], deadline);
            assert_eq!(got.status, want, "{label}: {got:?}");
            assert!(!got.reasons.is_empty(), "{label}: a verdict says why");
        }
    }

    #[test]
    fn lists_failed_pending_and_missing_sorted_once() {
        let checks = vec![
            done("z", C::Failure),
            done("a", C::Failure),
            done("a", C::Failure),
            run("p", CheckStatus::Queued, None),
        ];
        let got = verdict(&checks, &known(&["a", "z", "p", "gone"]), &[], false);
        assert_eq!(got.status, S::Fail);
        assert_eq!(got.failed, ["a", "z"]);
        assert_eq!(got.pending, ["p"]);
        assert_eq!(got.missing, ["gone"]);
        assert!(got
            .reasons
            .iter()
            .any(|r| r.contains("`gone`") && r.contains("not appeared")));
    }

    #[test]
    fn a_check_flagged_required_counts_under_a_known_set() {
        let mut flagged = done("flagged", C::Failure);
        flagged.required = Some(true);
        let got = verdict(&[flagged], &known(&[]), &[], false);
        assert_eq!(got.status, S::Fail);
        assert_eq!(got.failed, ["flagged"]);
        // Flagged required alone means the rest is not counted.
        let mut ok = done("flagged", C::Success);
        ok.required = Some(true);
        let got = verdict(&[ok, done("other", C::Failure)], &known(&[]), &[], false);
        assert_eq!(got.status, S::Pass, "{got:?}");
    }

    #[test]
    fn expected_checks_must_appear_even_when_discovery_failed() {
        let got = verdict(
            &[done("a", C::Success)],
            &RequiredSet::Unknown,
            &["deploy".to_owned()],
            true,
        );
        assert_eq!(got.status, S::Unknown);
        assert_eq!(got.missing, ["deploy"]);
    }

    #[test]
    fn rerun_once_per_sha_and_only_on_failure() {
        let fail = verdict(&[done("a", C::Failure)], &RequiredSet::Unknown, &[], false);
        assert!(should_rerun(&fail, false));
        assert!(!should_rerun(&fail, true));
        let pass = verdict(&[done("a", C::Success)], &RequiredSet::Unknown, &[], false);
        assert!(!should_rerun(&pass, false));
        let unknown = verdict(&[], &RequiredSet::Unknown, &[], true);
        assert!(!should_rerun(&unknown, false));
    }

    #[test]
    fn ci_polls_start_soon_and_back_off_to_the_interval() {
        let secs = |interval: u64| -> Vec<u64> {
            (0..7)
                .map(|a| ci_poll_schedule(a, Duration::from_secs(interval)).as_secs())
                .collect()
        };
        assert_eq!(secs(15), [2, 4, 8, 15, 15, 15, 15]);
        assert_eq!(secs(60), [2, 4, 8, 16, 32, 60, 60]);
        assert_eq!(secs(1), [1, 1, 1, 1, 1, 1, 1]);
        assert_eq!(secs(3), [2, 3, 3, 3, 3, 3, 3]);
        // A 1 s check is seen after 2 s, not after the 15 s interval.
        assert!(ci_poll_schedule(0, Duration::from_secs(15)) < Duration::from_secs(15));
        let fast = Duration::from_millis(150);
        assert_eq!(ci_poll_schedule(0, fast), fast);
        assert_eq!(ci_poll_schedule(u32::MAX, fast), fast);
    }

    #[test]
    fn poll_delay_doubles_up_to_the_maximum() {
        let base = Duration::from_secs(5);
        let max = Duration::from_secs(60);
        let got: Vec<u64> = (0..7).map(|a| poll_delay(a, base, max).as_secs()).collect();
        assert_eq!(got, [5, 10, 20, 40, 60, 60, 60]);
        assert_eq!(poll_delay(u32::MAX, base, max), max);
        assert_eq!(
            poll_delay(40, Duration::from_secs(u64::MAX / 2), Duration::MAX),
            Duration::MAX
        );
    }

    #[test]
    fn parses_both_spellings() {
        assert_eq!(
            CheckStatus::parse("IN_PROGRESS"),
            Some(CheckStatus::InProgress)
        );
        assert_eq!(
            CheckStatus::parse("in_progress"),
            Some(CheckStatus::InProgress)
        );
        assert_eq!(CheckStatus::parse("done"), None);
        assert_eq!(CheckConclusion::parse("TIMED_OUT"), Some(C::TimedOut));
        assert_eq!(
            CheckConclusion::parse("startup_failure"),
            Some(C::StartupFailure)
        );
        assert_eq!(CheckConclusion::parse("exploded"), None);
        for c in [
            C::Success,
            C::Failure,
            C::Neutral,
            C::Cancelled,
            C::Skipped,
            C::TimedOut,
            C::ActionRequired,
            C::Stale,
            C::StartupFailure,
            C::Error,
        ] {
            assert_eq!(CheckConclusion::parse(c.as_str()), Some(c));
        }
    }

    #[test]
    fn serializes_for_ci_json() {
        let v = verdict(&[], &RequiredSet::Unknown, &[], true);
        let json = serde_json::to_value(&v).unwrap();
        assert_eq!(json["status"], "UNKNOWN");
        let set = serde_json::to_value(known(&["b", "a"])).unwrap();
        assert_eq!(set, serde_json::json!({ "known": ["a", "b"] }));
        assert_eq!(
            serde_json::to_value(RequiredSet::Unknown).unwrap(),
            "unknown"
        );
    }

    fn any_status() -> impl Strategy<Value = CheckStatus> {
        prop_oneof![
            Just(CheckStatus::Queued),
            Just(CheckStatus::InProgress),
            Just(CheckStatus::Completed),
            Just(CheckStatus::Completed),
            Just(CheckStatus::Completed),
            Just(CheckStatus::Waiting),
            Just(CheckStatus::Requested),
            Just(CheckStatus::Pending),
        ]
    }

    fn any_conclusion() -> impl Strategy<Value = Option<CheckConclusion>> {
        proptest::option::weighted(
            0.9,
            prop_oneof![
                Just(C::Success),
                Just(C::Failure),
                Just(C::Neutral),
                Just(C::Cancelled),
                Just(C::Skipped),
                Just(C::TimedOut),
                Just(C::ActionRequired),
                Just(C::Stale),
                Just(C::StartupFailure),
                Just(C::Error),
            ],
        )
    }

    fn any_check() -> impl Strategy<Value = CheckState> {
        (
            prop_oneof![Just("a"), Just("b"), Just("c"), Just("d"), Just("e")],
            any_status(),
            any_conclusion(),
            proptest::option::of(any::<bool>()),
            any::<bool>(),
        )
            .prop_map(|(name, status, conclusion, required, legacy)| CheckState {
                name: name.to_owned(),
                source: if legacy {
                    CheckSource::StatusContext
                } else {
                    CheckSource::CheckRun
                },
                status,
                conclusion,
                required,
            })
    }

    fn any_required() -> impl Strategy<Value = RequiredSet> {
        prop_oneof![
            Just(RequiredSet::Unknown),
            proptest::collection::btree_set(
                prop_oneof![Just("a"), Just("b"), Just("c"), Just("x")].prop_map(str::to_owned),
                0..3
            )
            .prop_map(RequiredSet::Known),
        ]
    }

    fn passing(name: String) -> CheckState {
        CheckState {
            name,
            source: CheckSource::CheckRun,
            status: CheckStatus::Completed,
            conclusion: Some(C::Success),
            required: Some(false),
        }
    }

    proptest! {
        #[test]
        fn a_missing_required_check_is_never_a_pass(
            checks in proptest::collection::vec(any_check(), 0..8),
            extra in proptest::collection::vec("[f-z][a-z]{0,3}", 0..6),
            deadline in any::<bool>(),
        ) {
            // `missing` is required and never appears.
            let required = known(&["a", "missing"]);
            let before = verdict(&checks, &required, &[], deadline);
            prop_assert_ne!(before.status, S::Pass);
            let mut more = checks.clone();
            more.extend(extra.into_iter().filter(|n| n != "missing").map(passing));
            let after = verdict(&more, &required, &[], deadline);
            prop_assert_ne!(after.status, S::Pass);
            if before.status != S::Fail {
                // Passing non-required checks change nothing.
                prop_assert_eq!(after.status, before.status);
            }
        }

        #[test]
        fn a_failing_counted_check_always_fails(
            checks in proptest::collection::vec(any_check(), 0..8),
            required in any_required(),
            deadline in any::<bool>(),
            conclusion in prop_oneof![Just(C::Failure), Just(C::Cancelled), Just(C::TimedOut), Just(C::ActionRequired), Just(C::StartupFailure), Just(C::Error)],
        ) {
            let mut more = checks.clone();
            more.push(CheckState {
                name: "b".to_owned(),
                source: CheckSource::CheckRun,
                status: CheckStatus::Completed,
                conclusion: Some(conclusion),
                // Flagged required: counted under any set.
                required: Some(true),
            });
            let got = verdict(&more, &required, &[], deadline);
            prop_assert_eq!(got.status, S::Fail);
            prop_assert!(got.failed.contains(&"b".to_owned()));
        }

        #[test]
        fn pass_means_everything_counted_passed(
            checks in proptest::collection::vec(any_check(), 0..8),
            required in any_required(),
            deadline in any::<bool>(),
        ) {
            let got = verdict(&checks, &required, &[], deadline);
            if got.status == S::Pass {
                prop_assert!(got.failed.is_empty() && got.pending.is_empty() && got.missing.is_empty());
                prop_assert!(!checks.is_empty());
                if required == RequiredSet::Unknown {
                    prop_assert!(checks.iter().all(|c| c.outcome() == CheckOutcome::Pass));
                }
            }
            if deadline {
                prop_assert_ne!(got.status, S::Pending, "the deadline leaves no pending verdict");
            }
            if got.status == S::Pending {
                prop_assert!(!got.pending.is_empty() || !got.missing.is_empty() || got.reasons.iter().any(|r| r.contains("no checks")));
            }
        }

        #[test]
        fn the_deadline_never_turns_a_verdict_into_a_pass(
            checks in proptest::collection::vec(any_check(), 0..8),
            required in any_required(),
        ) {
            let before = verdict(&checks, &required, &[], false);
            let after = verdict(&checks, &required, &[], true);
            if after.status == S::Pass {
                prop_assert_eq!(before.status, S::Pass);
            }
            if before.status == S::Pending {
                prop_assert_eq!(after.status, S::Unknown);
            }
        }

        #[test]
        fn poll_delay_is_monotone_and_bounded(attempt in 0u32..80, base_ms in 1u64..10_000, max_ms in 1u64..600_000) {
            let base = Duration::from_millis(base_ms);
            let max = Duration::from_millis(max_ms);
            let d = poll_delay(attempt, base, max);
            prop_assert!(d <= max);
            prop_assert!(d <= poll_delay(attempt + 1, base, max));
            prop_assert_eq!(poll_delay(0, base, max), base.min(max));
        }
    }

    /// Issue 13 point 7: with no check at all, the UNKNOWN verdict's first
    /// reason says so, not that every check counts.
    #[test]
    fn no_checks_at_the_deadline_says_so_first() {
        let v = verdict(&[], &RequiredSet::Known(BTreeSet::new()), &[], true);
        assert_eq!(v.status, CiStatus::Unknown);
        assert_eq!(
            v.reasons,
            vec!["no checks reported at the deadline".to_owned()]
        );
    }
}
