//! The honesty gate (SPEC section 4): may the round's public steps happen?
//!
//! Before Shepherd pushes, replies or resolves anything, [`check`] compares what
//! the round claims to have done ([`ItemResult`]s) with what it was asked to do
//! (the round's new [`GateItem`]s and the approved decisions) and with what git
//! shows (the [`CommitFacts`] the engine gathered). It is a pure, deterministic
//! function and fails closed: any violation makes the verdict fail and empties
//! [`GateVerdict::authorized`], so nothing public happens in that round.
//!
//! Rules, each a [`Rule`]:
//!
//! - Items have distinct ids; results cover the items exactly (no missing, extra
//!   or duplicate result).
//! - Each result's decision equals the approved decision of its item.
//! - The outcome is one the decision allows ([`allowed_outcomes`]): a blocked
//!   fixer turns a `code-change` (or a `metadata-change` that could not be made)
//!   into `needs-human`, which then carries no commit and is never resolved.
//! - A `fixed`/`fixed-differently` code change names a commit that exists
//!   locally and touches the thread's file, or one of the files its cluster
//!   declared. (A top-level item has no file: its commit must touch one of the
//!   cluster's files when clustered, else at least one file.)
//! - A fixed metadata change has `metadata_applied` and no commit; every other
//!   result has neither a commit nor `metadata_applied`.
//! - `resolve_authorized` equals [`resolve_authorized`] of the decision, outcome,
//!   item and config.
//! - No reply is empty or only whitespace.
//! - The reply answers the item's own root comment (a thread's first comment, or
//!   the top-level comment itself).
//!
//! The verdict does not depend on the order of items or results: violations are
//! sorted. An authorization to resolve a code change holds once the fix is
//! pushed; the engine resolves only after its push succeeded.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::ledger::{Decision, Outcome};

/// The configuration the gate reads (`[approve] resolve_wontfix`,
/// `[resolve] human_threads`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GateConfig {
    /// Whether an approved `wontfix` may be resolved.
    pub resolve_wontfix: bool,
    /// Whether threads opened by a person may be resolved; when false only
    /// threads opened by bots are.
    pub resolve_human_threads: bool,
}

/// One new item of the round.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GateItem {
    /// The item id (review thread id, or top-level comment id).
    pub id: String,
    /// Thread or top-level comment.
    pub kind: GateItemKind,
}

/// What an item is.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum GateItemKind {
    /// A review thread: can be replied to and resolved.
    ReviewThread {
        /// The id of the thread's first comment, which replies answer.
        root_comment_id: String,
        /// The file the thread is on.
        path: String,
        /// Whether a person (not a bot) opened the thread. A deleted author
        /// should count as a person: that is the cautious side.
        opened_by_human: bool,
    },
    /// A top-level comment or review body: can be replied to, never resolved.
    TopLevel {
        /// The comment's id.
        comment_id: String,
    },
}

impl GateItemKind {
    /// The comment a reply to this item must answer.
    pub fn reply_target(&self) -> &str {
        match self {
            GateItemKind::ReviewThread {
                root_comment_id, ..
            } => root_comment_id,
            GateItemKind::TopLevel { comment_id } => comment_id,
        }
    }
}

/// What the round did about one item, as the engine is about to make public.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ItemResult {
    /// The item.
    pub item_id: String,
    /// The decision acted on.
    pub decision: Decision,
    /// The outcome the reply will state.
    pub outcome: Outcome,
    /// The fix commit, for a fixed code change.
    pub commit: Option<String>,
    /// Whether the metadata edit (title, body, labels) was applied.
    pub metadata_applied: bool,
    /// The reply body (without the marker).
    pub reply: String,
    /// The comment id the reply answers.
    pub reply_target: String,
    /// Whether the engine means to resolve the thread.
    pub resolve_authorized: bool,
    /// The files the item's cluster declared; empty when not clustered.
    pub cluster_files: Vec<String>,
}

/// What git says about one commit.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CommitFact {
    /// Whether the commit exists in the local repository.
    pub exists_locally: bool,
    /// The files its diff touches (repository-relative paths).
    pub files: Vec<String>,
}

/// Facts about the commits results name, keyed by SHA as the results spell it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CommitFacts {
    commits: BTreeMap<String, CommitFact>,
}

impl CommitFacts {
    /// No facts.
    pub fn new() -> Self {
        Self::default()
    }

    /// Record the facts of `sha`, replacing earlier ones.
    pub fn insert(&mut self, sha: impl Into<String>, fact: CommitFact) {
        self.commits.insert(sha.into(), fact);
    }

    /// The facts of `sha`, if the engine gathered them.
    pub fn get(&self, sha: &str) -> Option<&CommitFact> {
        self.commits.get(sha)
    }
}

impl FromIterator<(String, CommitFact)> for CommitFacts {
    fn from_iter<T: IntoIterator<Item = (String, CommitFact)>>(iter: T) -> Self {
        CommitFacts {
            commits: iter.into_iter().collect(),
        }
    }
}

/// The rule a [`Violation`] breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rule {
    /// Two items share an id.
    DuplicateItem,
    /// An item has no result.
    MissingResult,
    /// A result names no item of the round.
    ExtraResult,
    /// An item has several results.
    DuplicateResult,
    /// An item has no approved decision.
    NotApproved,
    /// A result's decision differs from the approved one.
    DecisionMismatch,
    /// The outcome is not one the decision allows.
    OutcomeInconsistent,
    /// A fixed code change names no commit.
    CommitMissing,
    /// The commit does not exist locally (or the engine gave no facts about it).
    CommitNotLocal,
    /// The commit does not touch the item's file (or its cluster's files).
    CommitUntouchedFile,
    /// A result that is not a fixed code change names a commit.
    UnexpectedCommit,
    /// A fixed metadata change was not applied.
    MetadataNotApplied,
    /// A result that is not a fixed metadata change claims an applied edit.
    UnexpectedMetadata,
    /// `resolve_authorized` differs from the resolve table.
    ResolveMismatch,
    /// The reply is empty or whitespace.
    EmptyReply,
    /// The reply does not answer the item's own root comment.
    WrongReplyTarget,
}

/// One broken rule.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Violation {
    /// The item concerned, when there is one.
    pub item_id: Option<String>,
    /// The rule broken.
    pub rule: Rule,
    /// What is wrong, naming the item and the fact.
    pub reason: String,
}

/// The gate's answer (written to `gate.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GateVerdict {
    /// Whether the round's public steps may happen: exactly when there is no violation.
    pub passed: bool,
    /// Every violation, sorted by item, rule and reason.
    pub violations: Vec<Violation>,
    /// The threads that may be resolved (once pushed); empty unless `passed`.
    pub authorized: BTreeSet<String>,
}

impl GateVerdict {
    /// Whether some violation breaks `rule`.
    pub fn breaks(&self, rule: Rule) -> bool {
        self.violations.iter().any(|v| v.rule == rule)
    }
}

/// The outcomes a decision allows (SPEC section 4).
pub fn allowed_outcomes(decision: Decision) -> &'static [Outcome] {
    match decision {
        // A blocked fixer becomes needs-human.
        Decision::CodeChange => &[
            Outcome::Fixed,
            Outcome::FixedDifferently,
            Outcome::NeedsHuman,
        ],
        // An edit the forge would not take is handed to a person the same way.
        Decision::MetadataChange => &[Outcome::Fixed, Outcome::NeedsHuman],
        Decision::Question => &[Outcome::Replied],
        Decision::Wontfix => &[Outcome::Declined],
        Decision::AlreadyAddressed | Decision::Invalid => &[Outcome::NotAddressing],
        Decision::NeedsHuman => &[Outcome::NeedsHuman],
    }
}

/// Whether the item may be resolved: the "resolved" column of SPEC section 4.
///
/// - fixed (or fixed-differently) code change: yes, once pushed;
/// - fixed metadata change: yes, once applied;
/// - already-addressed or invalid, not addressing: yes (the gate requires approval);
/// - wontfix, declined: only with `resolve_wontfix`;
/// - question, needs-human, and any outcome the decision does not allow: never;
/// - top-level items: never (they cannot be resolved);
/// - threads opened by a person: never unless `resolve_human_threads`.
pub fn resolve_authorized(
    decision: Decision,
    outcome: Outcome,
    kind: &GateItemKind,
    cfg: &GateConfig,
) -> bool {
    match kind {
        GateItemKind::TopLevel { .. } => return false,
        GateItemKind::ReviewThread {
            opened_by_human, ..
        } => {
            if *opened_by_human && !cfg.resolve_human_threads {
                return false;
            }
        }
    }
    match (decision, outcome) {
        (Decision::CodeChange, Outcome::Fixed | Outcome::FixedDifferently) => true,
        (Decision::MetadataChange, Outcome::Fixed) => true,
        (Decision::AlreadyAddressed | Decision::Invalid, Outcome::NotAddressing) => true,
        (Decision::Wontfix, Outcome::Declined) => cfg.resolve_wontfix,
        _ => false,
    }
}

/// Run the gate over the round's new `items`, the `approved` decisions (by item
/// id; approvals of other items are ignored), the `results` and the `commits`
/// facts.
pub fn check(
    items: &[GateItem],
    approved: &BTreeMap<String, Decision>,
    results: &[ItemResult],
    commits: &CommitFacts,
    cfg: &GateConfig,
) -> GateVerdict {
    let mut violations = Vec::new();
    let mut push = |item: &str, rule: Rule, reason: String| {
        violations.push(Violation {
            item_id: Some(item.to_owned()),
            rule,
            reason: format!("item {item}: {reason}"),
        });
    };

    let mut by_id: BTreeMap<&str, &GateItem> = BTreeMap::new();
    let mut item_counts: BTreeMap<&str, usize> = BTreeMap::new();
    for item in items {
        *item_counts.entry(&item.id).or_default() += 1;
        by_id.entry(&item.id).or_insert(item);
    }
    for (id, count) in &item_counts {
        if *count > 1 {
            push(
                id,
                Rule::DuplicateItem,
                format!("appears {count} times among the round's items"),
            );
        }
    }

    let mut result_counts: BTreeMap<&str, usize> = BTreeMap::new();
    for result in results {
        *result_counts.entry(&result.item_id).or_default() += 1;
    }
    for id in by_id.keys() {
        if !result_counts.contains_key(id) {
            push(id, Rule::MissingResult, "has no result".to_owned());
        }
    }
    for (id, count) in &result_counts {
        if !by_id.contains_key(id) {
            push(
                id,
                Rule::ExtraResult,
                "has a result but is not a new item of the round".to_owned(),
            );
        }
        if *count > 1 {
            push(id, Rule::DuplicateResult, format!("has {count} results"));
        }
    }

    for result in results {
        let Some(item) = by_id.get(result.item_id.as_str()) else {
            continue;
        };
        check_result(item, result, approved, commits, cfg, &mut push);
    }

    violations.sort();
    let passed = violations.is_empty();
    let authorized = if passed {
        results
            .iter()
            .filter(|r| r.resolve_authorized)
            .map(|r| r.item_id.clone())
            .collect()
    } else {
        BTreeSet::new()
    };
    GateVerdict {
        passed,
        violations,
        authorized,
    }
}

fn check_result(
    item: &GateItem,
    result: &ItemResult,
    approved: &BTreeMap<String, Decision>,
    commits: &CommitFacts,
    cfg: &GateConfig,
    push: &mut impl FnMut(&str, Rule, String),
) {
    let id = item.id.as_str();
    let decision = result.decision;
    let outcome = result.outcome;

    match approved.get(id) {
        None => push(id, Rule::NotApproved, "has no approved decision".to_owned()),
        Some(want) if *want != decision => push(
            id,
            Rule::DecisionMismatch,
            format!(
                "result decision {} differs from the approved {}",
                decision.as_str(),
                want.as_str()
            ),
        ),
        Some(_) => {}
    }

    if !allowed_outcomes(decision).contains(&outcome) {
        push(
            id,
            Rule::OutcomeInconsistent,
            format!(
                "outcome {} is not allowed for decision {}",
                outcome.as_str(),
                decision.as_str()
            ),
        );
    }

    let fixed_code = decision == Decision::CodeChange
        && matches!(outcome, Outcome::Fixed | Outcome::FixedDifferently);
    let fixed_metadata = decision == Decision::MetadataChange && outcome == Outcome::Fixed;

    match (&result.commit, fixed_code) {
        (None, true) => push(
            id,
            Rule::CommitMissing,
            "fixed code change names no commit".to_owned(),
        ),
        (Some(sha), true) => check_commit(item, result, sha, commits, push),
        (Some(sha), false) => push(
            id,
            Rule::UnexpectedCommit,
            format!(
                "names commit {sha} but its outcome is {} for {}",
                outcome.as_str(),
                decision.as_str()
            ),
        ),
        (None, false) => {}
    }

    match (result.metadata_applied, fixed_metadata) {
        (false, true) => push(
            id,
            Rule::MetadataNotApplied,
            "fixed metadata change was not applied".to_owned(),
        ),
        (true, false) => push(
            id,
            Rule::UnexpectedMetadata,
            format!(
                "claims an applied metadata edit but its outcome is {} for {}",
                outcome.as_str(),
                decision.as_str()
            ),
        ),
        _ => {}
    }

    let want = resolve_authorized(decision, outcome, &item.kind, cfg);
    if result.resolve_authorized != want {
        push(
            id,
            Rule::ResolveMismatch,
            format!(
                "resolve_authorized is {} but the table says {} for {} / {}{}",
                result.resolve_authorized,
                want,
                decision.as_str(),
                outcome.as_str(),
                match &item.kind {
                    GateItemKind::TopLevel { .. } => " on a top-level comment",
                    GateItemKind::ReviewThread {
                        opened_by_human: true,
                        ..
                    } => " on a thread opened by a person",
                    GateItemKind::ReviewThread { .. } => " on a thread opened by a bot",
                }
            ),
        );
    }

    if result.reply.trim().is_empty() {
        push(id, Rule::EmptyReply, "reply is empty".to_owned());
    }

    let target = item.kind.reply_target();
    if result.reply_target != target {
        push(
            id,
            Rule::WrongReplyTarget,
            format!(
                "reply answers comment {:?}, not the item's root comment {target}",
                result.reply_target
            ),
        );
    }
}

fn check_commit(
    item: &GateItem,
    result: &ItemResult,
    sha: &str,
    commits: &CommitFacts,
    push: &mut impl FnMut(&str, Rule, String),
) {
    let id = item.id.as_str();
    let fact = match commits.get(sha) {
        Some(fact) if fact.exists_locally => fact,
        Some(_) => {
            push(
                id,
                Rule::CommitNotLocal,
                format!("commit {sha} does not exist locally"),
            );
            return;
        }
        None => {
            push(
                id,
                Rule::CommitNotLocal,
                format!("no facts about commit {sha}: not known to exist locally"),
            );
            return;
        }
    };
    let mut wanted: BTreeSet<&str> = result.cluster_files.iter().map(String::as_str).collect();
    if let GateItemKind::ReviewThread { path, .. } = &item.kind {
        wanted.insert(path);
    }
    let touches = if wanted.is_empty() {
        !fact.files.is_empty()
    } else {
        fact.files.iter().any(|f| wanted.contains(f.as_str()))
    };
    if !touches {
        let wanted: Vec<&str> = wanted.into_iter().collect();
        push(
            id,
            Rule::CommitUntouchedFile,
            format!(
                "commit {sha} touches {:?}, none of {:?}",
                fact.files, wanted
            ),
        );
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;
    use proptest::prelude::*;

    const DECISIONS: [Decision; 7] = Decision::ALL;
    const OUTCOMES: [Outcome; 6] = Outcome::ALL;

    fn cfg(resolve_wontfix: bool, resolve_human_threads: bool) -> GateConfig {
        GateConfig {
            resolve_wontfix,
            resolve_human_threads,
        }
    }

    fn thread(id: &str, path: &str, human: bool) -> GateItem {
        GateItem {
            id: id.to_owned(),
            kind: GateItemKind::ReviewThread {
                root_comment_id: format!("{id}-root"),
                path: path.to_owned(),
                opened_by_human: human,
            },
        }
    }

    fn top_level(id: &str) -> GateItem {
        GateItem {
            id: id.to_owned(),
            kind: GateItemKind::TopLevel {
                comment_id: format!("{id}-comment"),
            },
        }
    }

    /// A consistent result for `item`, with `commit` for fixed code changes.
    fn result(item: &GateItem, decision: Decision, outcome: Outcome, c: &GateConfig) -> ItemResult {
        let fixed_code = decision == Decision::CodeChange
            && matches!(outcome, Outcome::Fixed | Outcome::FixedDifferently);
        ItemResult {
            item_id: item.id.clone(),
            decision,
            outcome,
            commit: fixed_code.then(|| format!("sha-{}", item.id)),
            metadata_applied: decision == Decision::MetadataChange && outcome == Outcome::Fixed,
            reply: format!("Reply about {}.", item.id),
            reply_target: item.kind.reply_target().to_owned(),
            resolve_authorized: resolve_authorized(decision, outcome, &item.kind, c),
            cluster_files: Vec::new(),
        }
    }

    /// One case: two threads and a top-level comment, all consistent.
    struct Fixture {
        items: Vec<GateItem>,
        approved: BTreeMap<String, Decision>,
        results: Vec<ItemResult>,
        commits: CommitFacts,
        cfg: GateConfig,
    }

    impl Fixture {
        fn new() -> Self {
            let cfg = cfg(false, true);
            let items = vec![
                thread("T1", "src/a.rs", false),
                thread("T2", "src/b.rs", true),
                top_level("C1"),
            ];
            let plan = [
                (Decision::CodeChange, Outcome::Fixed),
                (Decision::Question, Outcome::Replied),
                (Decision::MetadataChange, Outcome::Fixed),
            ];
            let results: Vec<ItemResult> = items
                .iter()
                .zip(plan)
                .map(|(item, (d, o))| result(item, d, o, &cfg))
                .collect();
            let approved = results
                .iter()
                .map(|r| (r.item_id.clone(), r.decision))
                .collect();
            let mut commits = CommitFacts::new();
            commits.insert(
                "sha-T1",
                CommitFact {
                    exists_locally: true,
                    files: vec!["src/a.rs".into(), "README.md".into()],
                },
            );
            Fixture {
                items,
                approved,
                results,
                commits,
                cfg,
            }
        }

        fn check(&self) -> GateVerdict {
            check(
                &self.items,
                &self.approved,
                &self.results,
                &self.commits,
                &self.cfg,
            )
        }

        fn result_mut(&mut self, id: &str) -> &mut ItemResult {
            self.results.iter_mut().find(|r| r.item_id == id).unwrap()
        }
    }

    /// The verdict fails, breaks exactly `rules`, and authorizes nothing.
    fn assert_fails(v: &GateVerdict, rules: &[Rule], item: &str) {
        assert!(!v.passed, "{v:?}");
        assert!(v.authorized.is_empty(), "{v:?}");
        let got: BTreeSet<Rule> = v.violations.iter().map(|x| x.rule).collect();
        let want: BTreeSet<Rule> = rules.iter().copied().collect();
        assert_eq!(got, want, "{v:#?}");
        for x in &v.violations {
            assert_eq!(x.item_id.as_deref(), Some(item));
            assert!(
                x.reason.starts_with(&format!("item {item}: ")),
                "{}",
                x.reason
            );
        }
    }

    #[test]
    fn a_consistent_round_passes_and_authorizes_the_table() {
        let f = Fixture::new();
        let v = f.check();
        assert!(v.passed, "{v:#?}");
        assert!(v.violations.is_empty());
        // T1 is a fixed code change on a bot thread; T2 a question; C1 is top-level.
        assert_eq!(v.authorized, BTreeSet::from(["T1".to_owned()]));
    }

    #[test]
    fn an_empty_round_passes() {
        let v = check(
            &[],
            &BTreeMap::new(),
            &[],
            &CommitFacts::new(),
            &cfg(false, false),
        );
        assert!(v.passed && v.violations.is_empty() && v.authorized.is_empty());
    }

    #[test]
    fn rule_duplicate_item() {
        let mut f = Fixture::new();
        f.items.push(thread("T2", "src/b.rs", true));
        assert_fails(&f.check(), &[Rule::DuplicateItem], "T2");
    }

    #[test]
    fn rule_missing_result() {
        let mut f = Fixture::new();
        f.results.retain(|r| r.item_id != "T2");
        let v = f.check();
        assert_fails(&v, &[Rule::MissingResult], "T2");
        assert_eq!(v.violations[0].reason, "item T2: has no result");
    }

    #[test]
    fn rule_extra_result() {
        let mut f = Fixture::new();
        let mut extra = f.results[1].clone();
        extra.item_id = "T9".into();
        f.results.push(extra);
        assert_fails(&f.check(), &[Rule::ExtraResult], "T9");
    }

    #[test]
    fn rule_duplicate_result() {
        let mut f = Fixture::new();
        f.results.push(f.results[1].clone());
        let v = f.check();
        assert_fails(&v, &[Rule::DuplicateResult], "T2");
        assert_eq!(v.violations[0].reason, "item T2: has 2 results");
    }

    #[test]
    fn rule_not_approved() {
        let mut f = Fixture::new();
        f.approved.remove("T2");
        assert_fails(&f.check(), &[Rule::NotApproved], "T2");
    }

    #[test]
    fn approvals_of_other_items_are_ignored() {
        let mut f = Fixture::new();
        f.approved.insert("OLD".into(), Decision::Wontfix);
        assert!(f.check().passed);
    }

    #[test]
    fn rule_decision_mismatch() {
        // The approver changed question to already-addressed; the result kept question.
        let mut f = Fixture::new();
        f.approved.insert("T2".into(), Decision::AlreadyAddressed);
        let v = f.check();
        assert_fails(&v, &[Rule::DecisionMismatch], "T2");
        assert_eq!(
            v.violations[0].reason,
            "item T2: result decision question differs from the approved already-addressed"
        );
    }

    #[test]
    fn rule_outcome_inconsistent() {
        let mut f = Fixture::new();
        f.result_mut("T2").outcome = Outcome::Declined;
        let v = f.check();
        assert_fails(&v, &[Rule::OutcomeInconsistent], "T2");
        assert_eq!(
            v.violations[0].reason,
            "item T2: outcome declined is not allowed for decision question"
        );
    }

    #[test]
    fn a_blocked_fixer_is_needs_human_without_commit_or_resolve() {
        let mut f = Fixture::new();
        let r = f.result_mut("T1");
        r.outcome = Outcome::NeedsHuman;
        r.commit = None;
        r.resolve_authorized = false;
        let v = f.check();
        assert!(v.passed, "{v:#?}");
        assert!(v.authorized.is_empty());
        // ...and a commit or a resolve on it is refused.
        let mut g = Fixture::new();
        let r = g.result_mut("T1");
        r.outcome = Outcome::NeedsHuman;
        r.resolve_authorized = false;
        assert_fails(&g.check(), &[Rule::UnexpectedCommit], "T1");
        let mut h = Fixture::new();
        let r = h.result_mut("T1");
        r.outcome = Outcome::NeedsHuman;
        r.commit = None;
        assert_fails(&h.check(), &[Rule::ResolveMismatch], "T1");
    }

    #[test]
    fn rule_commit_missing() {
        let mut f = Fixture::new();
        f.result_mut("T1").commit = None;
        assert_fails(&f.check(), &[Rule::CommitMissing], "T1");
    }

    #[test]
    fn rule_commit_not_local() {
        let mut f = Fixture::new();
        f.commits.insert(
            "sha-T1",
            CommitFact {
                exists_locally: false,
                files: vec!["src/a.rs".into()],
            },
        );
        assert_fails(&f.check(), &[Rule::CommitNotLocal], "T1");
        let mut g = Fixture::new();
        g.result_mut("T1").commit = Some("unknown".into());
        let v = g.check();
        assert_fails(&v, &[Rule::CommitNotLocal], "T1");
        assert!(v.violations[0]
            .reason
            .contains("no facts about commit unknown"));
    }

    #[test]
    fn rule_commit_untouched_file() {
        let mut f = Fixture::new();
        f.commits.insert(
            "sha-T1",
            CommitFact {
                exists_locally: true,
                files: vec!["src/other.rs".into()],
            },
        );
        let v = f.check();
        assert_fails(&v, &[Rule::CommitUntouchedFile], "T1");
        assert_eq!(
            v.violations[0].reason,
            "item T1: commit sha-T1 touches [\"src/other.rs\"], none of [\"src/a.rs\"]"
        );
    }

    #[test]
    fn a_cluster_commit_may_touch_any_declared_file() {
        let mut f = Fixture::new();
        f.result_mut("T1").cluster_files =
            vec!["src/auth/mod.rs".into(), "src/auth/token.rs".into()];
        f.commits.insert(
            "sha-T1",
            CommitFact {
                exists_locally: true,
                files: vec!["src/auth/token.rs".into()],
            },
        );
        assert!(f.check().passed);
        f.commits.insert(
            "sha-T1",
            CommitFact {
                exists_locally: true,
                files: vec!["src/db/pool.rs".into()],
            },
        );
        assert_fails(&f.check(), &[Rule::CommitUntouchedFile], "T1");
    }

    #[test]
    fn a_top_level_code_change_needs_a_commit_touching_something() {
        let c = cfg(false, true);
        let item = top_level("C1");
        let r = result(&item, Decision::CodeChange, Outcome::FixedDifferently, &c);
        assert!(!r.resolve_authorized);
        let approved = BTreeMap::from([("C1".to_owned(), Decision::CodeChange)]);
        let fact = |files: Vec<String>| {
            CommitFacts::from_iter([(
                "sha-C1".to_owned(),
                CommitFact {
                    exists_locally: true,
                    files,
                },
            )])
        };
        let ok = check(
            std::slice::from_ref(&item),
            &approved,
            std::slice::from_ref(&r),
            &fact(vec!["x.rs".into()]),
            &c,
        );
        assert!(ok.passed && ok.authorized.is_empty(), "{ok:#?}");
        let empty = check(
            std::slice::from_ref(&item),
            &approved,
            std::slice::from_ref(&r),
            &fact(vec![]),
            &c,
        );
        assert_fails(&empty, &[Rule::CommitUntouchedFile], "C1");
    }

    #[test]
    fn rule_unexpected_commit() {
        let mut f = Fixture::new();
        f.result_mut("T2").commit = Some("sha-T1".into());
        assert_fails(&f.check(), &[Rule::UnexpectedCommit], "T2");
        let mut g = Fixture::new();
        g.result_mut("C1").commit = Some("sha-T1".into());
        assert_fails(&g.check(), &[Rule::UnexpectedCommit], "C1");
    }

    #[test]
    fn rule_metadata_not_applied() {
        let mut f = Fixture::new();
        f.result_mut("C1").metadata_applied = false;
        assert_fails(&f.check(), &[Rule::MetadataNotApplied], "C1");
    }

    #[test]
    fn rule_unexpected_metadata() {
        let mut f = Fixture::new();
        f.result_mut("T1").metadata_applied = true;
        assert_fails(&f.check(), &[Rule::UnexpectedMetadata], "T1");
        // A metadata change handed to a person was not applied.
        let mut g = Fixture::new();
        g.result_mut("C1").outcome = Outcome::NeedsHuman;
        assert_fails(&g.check(), &[Rule::UnexpectedMetadata], "C1");
    }

    #[test]
    fn rule_resolve_mismatch() {
        let mut f = Fixture::new();
        f.result_mut("T2").resolve_authorized = true;
        let v = f.check();
        assert_fails(&v, &[Rule::ResolveMismatch], "T2");
        assert_eq!(
            v.violations[0].reason,
            "item T2: resolve_authorized is true but the table says false for question / replied on a thread opened by a person"
        );
        let mut g = Fixture::new();
        g.result_mut("T1").resolve_authorized = false;
        assert_fails(&g.check(), &[Rule::ResolveMismatch], "T1");
    }

    #[test]
    fn rule_empty_reply() {
        for reply in ["", "   ", "\n\t \r\n"] {
            let mut f = Fixture::new();
            f.result_mut("C1").reply = reply.into();
            assert_fails(&f.check(), &[Rule::EmptyReply], "C1");
        }
    }

    #[test]
    fn rule_wrong_reply_target() {
        let mut f = Fixture::new();
        f.result_mut("T1").reply_target = "T2-root".into();
        let v = f.check();
        assert_fails(&v, &[Rule::WrongReplyTarget], "T1");
        assert_eq!(
            v.violations[0].reason,
            "item T1: reply answers comment \"T2-root\", not the item's root comment T1-root"
        );
        let mut g = Fixture::new();
        g.result_mut("C1").reply_target = "C1".into();
        assert_fails(&g.check(), &[Rule::WrongReplyTarget], "C1");
    }

    #[test]
    fn several_violations_are_all_reported_sorted() {
        let mut f = Fixture::new();
        f.result_mut("T2").reply = String::new();
        f.result_mut("T1").reply_target = "x".into();
        f.results.retain(|r| r.item_id != "C1");
        let v = f.check();
        let got: Vec<(Option<&str>, Rule)> = v
            .violations
            .iter()
            .map(|x| (x.item_id.as_deref(), x.rule))
            .collect();
        assert_eq!(
            got,
            [
                (Some("C1"), Rule::MissingResult),
                (Some("T1"), Rule::WrongReplyTarget),
                (Some("T2"), Rule::EmptyReply),
            ]
        );
        assert!(!v.passed && v.authorized.is_empty());
    }

    #[test]
    fn verdict_round_trips_through_json() {
        let mut f = Fixture::new();
        f.result_mut("T2").reply = String::new();
        let v = f.check();
        let json = serde_json::to_string(&v).unwrap();
        assert!(json.contains("\"rule\":\"empty-reply\""), "{json}");
        assert_eq!(serde_json::from_str::<GateVerdict>(&json).unwrap(), v);
        let item = serde_json::to_value(&f.items[2]).unwrap();
        assert_eq!(
            item,
            serde_json::json!({"id": "C1", "kind": {"type": "top-level", "comment_id": "C1-comment"}})
        );
        let facts = serde_json::to_value(&f.commits).unwrap();
        assert_eq!(facts["sha-T1"]["exists_locally"], true);
    }

    /// The SPEC section 4 table, written out independently of the code under test.
    fn spec_table(d: Decision, o: Outcome, c: &GateConfig) -> bool {
        const ROWS: &[(Decision, Outcome, &str)] = &[
            (Decision::CodeChange, Outcome::Fixed, "yes"),
            (Decision::CodeChange, Outcome::FixedDifferently, "yes"),
            (Decision::MetadataChange, Outcome::Fixed, "yes"),
            (Decision::AlreadyAddressed, Outcome::NotAddressing, "yes"),
            (Decision::Invalid, Outcome::NotAddressing, "yes"),
            (Decision::Wontfix, Outcome::Declined, "with resolve_wontfix"),
        ];
        ROWS.iter()
            .any(|(rd, ro, when)| *rd == d && *ro == o && (*when == "yes" || c.resolve_wontfix))
    }

    #[test]
    fn resolve_table_every_combination() {
        let mut yes = 0;
        for d in DECISIONS {
            for o in OUTCOMES {
                for (w, h) in [(false, false), (false, true), (true, false), (true, true)] {
                    let c = cfg(w, h);
                    let top = top_level("C");
                    assert!(
                        !resolve_authorized(d, o, &top.kind, &c),
                        "top-level {d:?} {o:?}"
                    );
                    let bot = thread("B", "f", false);
                    let want = spec_table(d, o, &c);
                    assert_eq!(
                        resolve_authorized(d, o, &bot.kind, &c),
                        want,
                        "bot {d:?} {o:?} {c:?}"
                    );
                    let person = thread("P", "f", true);
                    assert_eq!(
                        resolve_authorized(d, o, &person.kind, &c),
                        want && h,
                        "person {d:?} {o:?} {c:?}"
                    );
                    yes += usize::from(resolve_authorized(d, o, &person.kind, &c));
                }
            }
        }
        // 5 rows always (with human threads on: 2 configs), wontfix only with both flags on.
        assert_eq!(yes, 5 * 2 + 1);
    }

    #[test]
    fn question_and_needs_human_are_never_resolved() {
        for o in OUTCOMES {
            for d in [Decision::Question, Decision::NeedsHuman] {
                assert!(!resolve_authorized(
                    d,
                    o,
                    &thread("B", "f", false).kind,
                    &cfg(true, true)
                ));
            }
        }
        // A blocked fixer neither.
        assert!(!resolve_authorized(
            Decision::CodeChange,
            Outcome::NeedsHuman,
            &thread("B", "f", false).kind,
            &cfg(true, true)
        ));
    }

    #[test]
    fn allowed_outcomes_table() {
        use Outcome::*;
        let want: [(Decision, &[Outcome]); 7] = [
            (Decision::CodeChange, &[Fixed, FixedDifferently, NeedsHuman]),
            (Decision::MetadataChange, &[Fixed, NeedsHuman]),
            (Decision::Question, &[Replied]),
            (Decision::Wontfix, &[Declined]),
            (Decision::AlreadyAddressed, &[NotAddressing]),
            (Decision::Invalid, &[NotAddressing]),
            (Decision::NeedsHuman, &[Outcome::NeedsHuman]),
        ];
        for (d, outcomes) in want {
            assert_eq!(allowed_outcomes(d), outcomes, "{d:?}");
        }
    }

    // ---- properties ------------------------------------------------------

    const PATHS: [&str; 4] = ["src/a.rs", "src/b.rs", "src/auth/login.rs", "lib/c.rs"];

    /// Per item: (top-level?, opened by a person?, path, decision, outcome pick, clustered?).
    type Seed = (bool, bool, usize, usize, usize, bool);

    fn seeds(min: usize) -> impl Strategy<Value = (Vec<Seed>, bool, bool)> {
        (
            prop::collection::vec(
                (
                    any::<bool>(),
                    any::<bool>(),
                    0..PATHS.len(),
                    0..DECISIONS.len(),
                    0..3usize,
                    any::<bool>(),
                ),
                min..8,
            ),
            any::<bool>(),
            any::<bool>(),
        )
    }

    /// Build a consistent round from seeds. Item 0 is forced to be a fixed code
    /// change on a thread when `force_fix`.
    fn build((seeds, w, h): (Vec<Seed>, bool, bool), force_fix: bool) -> Fixture {
        let c = cfg(w, h);
        let mut f = Fixture {
            items: Vec::new(),
            approved: BTreeMap::new(),
            results: Vec::new(),
            commits: CommitFacts::new(),
            cfg: c,
        };
        for (i, (top, human, path, d, o, clustered)) in seeds.into_iter().enumerate() {
            let id = format!("I{i}");
            let forced = force_fix && i == 0;
            let item = if top && !forced {
                top_level(&id)
            } else {
                thread(&id, PATHS[path], human)
            };
            let decision = if forced {
                Decision::CodeChange
            } else {
                DECISIONS[d]
            };
            let allowed = allowed_outcomes(decision);
            let outcome = if forced {
                Outcome::Fixed
            } else {
                allowed[o % allowed.len()]
            };
            let mut r = result(&item, decision, outcome, &c);
            if clustered {
                r.cluster_files = vec!["src/auth/login.rs".into(), "src/auth/token.rs".into()];
            }
            if let Some(sha) = &r.commit {
                let touched = if clustered {
                    "src/auth/token.rs".to_owned()
                } else {
                    match &item.kind {
                        GateItemKind::ReviewThread { path, .. } => path.clone(),
                        GateItemKind::TopLevel { .. } => "Cargo.toml".to_owned(),
                    }
                };
                f.commits.insert(
                    sha.clone(),
                    CommitFact {
                        exists_locally: true,
                        files: vec!["unrelated.txt".into(), touched],
                    },
                );
            }
            f.approved.insert(id, decision);
            f.items.push(item);
            f.results.push(r);
        }
        f
    }

    fn rules(v: &GateVerdict) -> BTreeSet<Rule> {
        v.violations.iter().map(|x| x.rule).collect()
    }

    proptest! {
        #[test]
        fn consistent_rounds_pass(s in seeds(0)) {
            let f = build(s, false);
            let v = f.check();
            prop_assert!(v.passed, "{:#?}", v);
            let want: BTreeSet<String> =
                f.results.iter().filter(|r| r.resolve_authorized).map(|r| r.item_id.clone()).collect();
            prop_assert_eq!(&v.authorized, &want);
            // authorized is a subset of the threads whose table says yes.
            for id in &v.authorized {
                let item = f.items.iter().find(|i| &i.id == id).unwrap();
                let is_thread = matches!(item.kind, GateItemKind::ReviewThread { .. });
                prop_assert!(is_thread);
                let r = f.results.iter().find(|r| &r.item_id == id).unwrap();
                prop_assert!(resolve_authorized(r.decision, r.outcome, &item.kind, &f.cfg));
            }
        }

        #[test]
        fn a_single_mutation_fails_with_its_rule(
            s in seeds(1),
            pick in any::<prop::sample::Index>(),
            other in 1..DECISIONS.len(),
            mutation in 0..7usize,
            shuffle_seed in any::<u64>(),
        ) {
            let mut f = build(s, true);
            let i = pick.index(f.results.len());
            let expected = match mutation {
                0 => { f.results.remove(i); Rule::MissingResult }
                1 => { let r = f.results[i].clone(); f.results.push(r); Rule::DuplicateResult }
                2 => {
                    let d = f.results[i].decision;
                    let at = DECISIONS.iter().position(|x| *x == d).unwrap();
                    f.results[i].decision = DECISIONS[(at + other) % DECISIONS.len()];
                    Rule::DecisionMismatch
                }
                3 => { f.results[i].reply = " \n".into(); Rule::EmptyReply }
                4 => { f.results[i].resolve_authorized ^= true; Rule::ResolveMismatch }
                5 => {
                    // Item 0 is a fixed code change: its commit touches nothing relevant.
                    let sha = f.results[0].commit.clone().unwrap();
                    f.commits.insert(sha, CommitFact { exists_locally: true, files: vec!["docs/x.md".into()] });
                    Rule::CommitUntouchedFile
                }
                _ => { f.results[i].reply_target.push_str("-other"); Rule::WrongReplyTarget }
            };
            let v = f.check();
            prop_assert!(!v.passed);
            prop_assert!(v.authorized.is_empty());
            prop_assert!(rules(&v).contains(&expected), "{:?} not in {:#?}", expected, v);
            // Order of results does not matter, for failing rounds either.
            let mut shuffled = f.results.clone();
            shuffle(&mut shuffled, shuffle_seed);
            let w = check(&f.items, &f.approved, &shuffled, &f.commits, &f.cfg);
            prop_assert_eq!(v, w);
        }

        #[test]
        fn the_verdict_ignores_result_and_item_order(s in seeds(0), seed in any::<u64>()) {
            let f = build(s, false);
            let v = f.check();
            let mut results = f.results.clone();
            let mut items = f.items.clone();
            shuffle(&mut results, seed);
            shuffle(&mut items, seed.rotate_left(17));
            prop_assert_eq!(v, check(&items, &f.approved, &results, &f.commits, &f.cfg));
        }

        #[test]
        fn authorized_is_within_the_table_whatever_the_results(
            s in seeds(0),
            flips in prop::collection::vec(any::<bool>(), 8),
        ) {
            // Arbitrary resolve claims: whatever passes authorizes only what the table allows.
            let mut f = build(s, false);
            for (r, flip) in f.results.iter_mut().zip(flips) {
                r.resolve_authorized ^= flip;
            }
            let v = f.check();
            prop_assert_eq!(v.passed, v.violations.is_empty());
            for id in &v.authorized {
                let item = f.items.iter().find(|i| &i.id == id).unwrap();
                let r = f.results.iter().find(|r| &r.item_id == id).unwrap();
                prop_assert!(resolve_authorized(r.decision, r.outcome, &item.kind, &f.cfg));
            }
        }
    }

    /// A deterministic Fisher-Yates shuffle (a small LCG: no rand dependency).
    fn shuffle<T>(v: &mut [T], mut seed: u64) {
        for i in (1..v.len()).rev() {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let j = (seed >> 33) as usize % (i + 1);
            v.swap(i, j);
        }
    }
}
