//! Clustering of systemic feedback (SPEC section 5): the gate, proximity,
//! grouping, the `<cluster-brief>` block, and escalation.
//!
//! Everything here is pure and deterministic: the same input, in any order,
//! gives the same output. The engine decides what to feed in (new items,
//! ledger history) and writes [`ClusterReport`] as `clusters.json`.
//!
//! # Gate
//!
//! [`evaluate_gate`] opens when a round has at least `min_volume` new items,
//! or when it is a re-entry (new items after a fix round of this run, or fixes
//! from an earlier run of this PR in the ledger). Several items on one file is
//! *not* a signal. A disabled gate or targeted mode keeps it closed. A closed
//! gate means the caller does no clustering work at all.
//!
//! # Proximity
//!
//! Paths are compared by `/`-separated segments (empty and `.` segments are
//! ignored, so `./src//a.rs` is `src/a.rs`). Two files are [`proximate`] when
//!
//! - they are the same file, or
//! - neither sits at the repository root, and the directory of one is the
//!   directory of the other or one of its ancestors (one file lies in the
//!   other's directory subtree).
//!
//! So `src/auth/login.ts` ~ `src/auth/middleware.ts` (same directory) and
//! `src/auth/login.ts` ~ `src/auth/oauth/google.ts` (`src/auth/oauth` is inside
//! `src/auth`), but not `src/auth/login.ts` ~ `src/db/pool.ts`: their common
//! directory `src` is the directory of neither. A root file is proximate only
//! to itself (`README.md` is not proximate to `Cargo.toml`, nor to
//! `src/main.rs`): the root alone never links. A file directly in `src/`, on
//! the other hand, is proximate to every file below `src/`
//! (`src/lib.rs` ~ `src/db/pool.ts`).
//!
//! Proximity is not transitive (`src/auth/oauth/google.ts` and
//! `src/auth/saml/okta.ts` are not proximate), so clusters are *connected
//! components*: items link through chains (`google.ts` ~ `login.ts` ~
//! `okta.ts` puts all three in one cluster when `src/auth/login.ts` has an
//! item of the same theme). Likewise an item on `src/lib.rs` joins items of
//! its theme in `src/auth/` and `src/db/` into one cluster whose area is `src`.
//!
//! # Grouping
//!
//! [`group`] splits items by theme, takes the connected components of each
//! theme's items under proximity, and makes every component of two or more
//! items a [`Cluster`] whose area is the deepest common directory of its files
//! (`.` for the repository root, which only a cluster on one root file has).
//! Items without a path (top-level comments), items themed
//! [`Theme::Other`] (`other` is no theme for this purpose: nothing fitted)
//! and components of one item are isolated.
//!
//! Each item says where its theme came from ([`ThemeSource`]): the triage
//! agent's answer, or the lexical classifier when the agent gave none (or
//! there is no agent). Grouping uses the theme it is given; the report
//! lists every item's theme and source ([`Grouping::themes`]).
//!
//! # Escalation
//!
//! History is modeled per fix round (see [`RoundAreas`]); [`escalations`]
//! flags the current feedback on an area that was fixed and drew new feedback
//! for `escalate_after` consecutive fix rounds.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::theme::Theme;

/// The default of `cluster.min_volume`.
pub const DEFAULT_MIN_VOLUME: usize = 4;

/// The default of `cluster.escalate_after`.
pub const DEFAULT_ESCALATE_AFTER: u32 = 2;

/// How the area of a cluster at the repository root is written.
pub const ROOT_AREA: &str = ".";

// ---------------------------------------------------------------------------
// Gate

/// What the gate looks at in one round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterGateInput {
    /// How many new items the round has.
    pub new_items: usize,
    /// `cluster.min_volume` (default [`DEFAULT_MIN_VOLUME`]).
    pub min_volume: usize,
    /// New items appeared after a fix round of this run.
    pub fix_rounds_this_run_before: bool,
    /// The ledger holds fixes from an earlier run of this PR.
    pub earlier_run_fixes: bool,
    /// `cluster.enabled`.
    pub enabled: bool,
    /// Targeted mode (one thread, no clustering).
    pub targeted: bool,
}

impl Default for ClusterGateInput {
    /// No new items, default volume, no re-entry, enabled, not targeted.
    fn default() -> Self {
        ClusterGateInput {
            new_items: 0,
            min_volume: DEFAULT_MIN_VOLUME,
            fix_rounds_this_run_before: false,
            earlier_run_fixes: false,
            enabled: true,
            targeted: false,
        }
    }
}

/// One reason the gate saw to open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum GateSignal {
    /// The round has at least `min` new items.
    Volume {
        /// New items in the round.
        count: usize,
        /// `cluster.min_volume`.
        min: usize,
    },
    /// New items appeared after a fix round of this run.
    ReentryWithinRun,
    /// The ledger holds fixes from an earlier run of this PR.
    ReentryAcrossRuns,
}

/// The gate's verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GateDecision {
    /// Whether cluster analysis runs this round.
    pub open: bool,
    /// The signals seen, in the order volume, re-entry within the run,
    /// re-entry across runs. Listed even when the gate stays closed because
    /// clustering is disabled or the run is targeted, so the report can say
    /// what was seen.
    pub signals: Vec<GateSignal>,
}

/// Decides whether this round clusters.
///
/// Signals only count when the round has new items (there is nothing to
/// cluster otherwise). The gate opens when clustering is enabled, the run is
/// not targeted, and at least one signal was seen.
pub fn evaluate_gate(input: &ClusterGateInput) -> GateDecision {
    let mut signals = Vec::new();
    if input.new_items > 0 {
        if input.new_items >= input.min_volume {
            signals.push(GateSignal::Volume {
                count: input.new_items,
                min: input.min_volume,
            });
        }
        if input.fix_rounds_this_run_before {
            signals.push(GateSignal::ReentryWithinRun);
        }
        if input.earlier_run_fixes {
            signals.push(GateSignal::ReentryAcrossRuns);
        }
    }
    GateDecision {
        open: input.enabled && !input.targeted && !signals.is_empty(),
        signals,
    }
}

// ---------------------------------------------------------------------------
// Proximity

/// The path's segments, ignoring empty and `.` segments.
fn segments(path: &str) -> Vec<&str> {
    path.split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect()
}

/// Whether two file paths are close enough to cluster (module docs, "Proximity").
///
/// An empty path is proximate to nothing.
pub fn proximate(a: &str, b: &str) -> bool {
    let a = segments(a);
    let b = segments(b);
    let (Some((_, dir_a)), Some((_, dir_b))) = (a.split_last(), b.split_last()) else {
        return false;
    };
    if a == b {
        return true;
    }
    if dir_a.is_empty() || dir_b.is_empty() {
        return false;
    }
    dir_a.starts_with(dir_b) || dir_b.starts_with(dir_a)
}

// ---------------------------------------------------------------------------
// Grouping

/// Where an item's theme came from.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum ThemeSource {
    /// The triage agent supplied it with its decision.
    Agent,
    /// The deterministic lexical classifier ([`crate::theme::classify_theme`]):
    /// no agent theme was given.
    #[default]
    Lexical,
}

/// One item's theme as grouping used it, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ItemTheme {
    /// The item id.
    pub id: String,
    /// The theme grouping used.
    pub theme: Theme,
    /// Where that theme came from.
    pub source: ThemeSource,
}

/// One item as grouping sees it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ClusterItem {
    /// The item (thread or top-level comment) id. Ids are expected to be unique.
    pub id: String,
    /// The file the thread is on; `None` for top-level items, which never
    /// cluster. An empty path counts as `None`.
    pub path: Option<String>,
    /// The item's theme.
    pub theme: Theme,
    /// Where the theme came from.
    #[serde(default)]
    pub source: ThemeSource,
}

impl ClusterItem {
    /// An item on `path` (or a top-level item, with `None`), its theme from
    /// the lexical classifier.
    pub fn new(id: impl Into<String>, path: Option<&str>, theme: Theme) -> Self {
        ClusterItem {
            id: id.into(),
            path: path.map(str::to_owned),
            theme,
            source: ThemeSource::Lexical,
        }
    }

    /// The same item with its theme from `source`.
    pub fn with_source(mut self, source: ThemeSource) -> Self {
        self.source = source;
        self
    }
}

/// Two or more items of one theme linked by proximity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cluster {
    /// The members' theme.
    pub theme: Theme,
    /// The deepest common directory of the members' files ([`ROOT_AREA`] at the root).
    pub area: String,
    /// The members' files, normalized, sorted, without duplicates.
    pub files: Vec<String>,
    /// The members' ids, sorted.
    pub item_ids: Vec<String>,
    /// One deterministic sentence naming the suspected shared cause.
    pub hypothesis: String,
}

/// The result of [`group`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grouping {
    /// Clusters, sorted by (theme, area, first item id).
    pub clusters: Vec<Cluster>,
    /// Ids of the items in no cluster, sorted.
    pub isolated: Vec<String>,
    /// Every item's theme and its source, sorted by id.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub themes: Vec<ItemTheme>,
}

/// Which component an item belongs to, within its theme.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Component {
    /// Files outside the root: keyed by the topmost directory that holds an
    /// item of the theme, among the ancestors-or-self of the file's directory.
    Dir(String),
    /// A file at the root: proximate only to itself.
    RootFile(String),
}

/// Groups items into clusters and isolated items (module docs, "Grouping").
///
/// Runs in about O(n · d²) for n items of path depth d (10,000 items take a
/// few milliseconds in a release build); the result does not depend on input order.
pub fn group(items: &[ClusterItem]) -> Grouping {
    // Per theme, the normalized directory and file of each item with a path.
    struct Placed<'a> {
        item: &'a ClusterItem,
        dir: Vec<&'a str>,
        file: String,
    }
    let mut isolated: Vec<String> = Vec::new();
    let mut by_theme: BTreeMap<Theme, Vec<Placed<'_>>> = BTreeMap::new();
    for item in items {
        let segs = item.path.as_deref().map(segments).unwrap_or_default();
        let Some((_, dir)) = segs.split_last() else {
            isolated.push(item.id.clone());
            continue;
        };
        if item.theme == Theme::Other {
            // SPEC section 5: `other` is not a theme; such items never cluster.
            isolated.push(item.id.clone());
            continue;
        }
        by_theme.entry(item.theme).or_default().push(Placed {
            item,
            dir: dir.to_vec(),
            file: segs.join("/"),
        });
    }

    let mut clusters = Vec::new();
    for (theme, placed) in by_theme {
        let present: BTreeSet<String> = placed
            .iter()
            .filter(|p| !p.dir.is_empty())
            .map(|p| p.dir.join("/"))
            .collect();
        let mut components: BTreeMap<Component, Vec<&Placed<'_>>> = BTreeMap::new();
        for p in &placed {
            let key = if p.dir.is_empty() {
                Component::RootFile(p.file.clone())
            } else {
                // The topmost present ancestor-or-self directory. Two present
                // directories are linked exactly when one is an ancestor of the
                // other, so following "nearest present ancestor" links upward
                // always ends at this directory: it names the component.
                let mut prefix = String::new();
                let mut top = None;
                for seg in &p.dir {
                    if !prefix.is_empty() {
                        prefix.push('/');
                    }
                    prefix.push_str(seg);
                    if present.contains(&prefix) {
                        top = Some(prefix.clone());
                        break;
                    }
                }
                // The item's own directory is in `present`, so the loop found
                // one; fall back to it all the same.
                Component::Dir(top.unwrap_or_else(|| p.dir.join("/")))
            };
            components.entry(key).or_default().push(p);
        }
        for members in components.into_values() {
            if members.len() < 2 {
                isolated.extend(members.iter().map(|p| p.item.id.clone()));
                continue;
            }
            let area = common_dir(members.iter().map(|p| p.dir.as_slice()));
            let files: Vec<String> = members
                .iter()
                .map(|p| p.file.clone())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            let mut item_ids: Vec<String> = members.iter().map(|p| p.item.id.clone()).collect();
            item_ids.sort();
            let hypothesis = hypothesis(theme, &area, item_ids.len(), files.len());
            clusters.push(Cluster {
                theme,
                area,
                files,
                item_ids,
                hypothesis,
            });
        }
    }
    clusters.sort_by(|a, b| {
        (a.theme, &a.area, a.item_ids.first()).cmp(&(b.theme, &b.area, b.item_ids.first()))
    });
    isolated.sort();
    let mut themes: Vec<ItemTheme> = items
        .iter()
        .map(|i| ItemTheme {
            id: i.id.clone(),
            theme: i.theme,
            source: i.source,
        })
        .collect();
    themes.sort_by(|a, b| a.id.cmp(&b.id));
    Grouping {
        clusters,
        isolated,
        themes,
    }
}

/// The deepest common directory of `dirs`, [`ROOT_AREA`] when they share none.
fn common_dir<'a>(mut dirs: impl Iterator<Item = &'a [&'a str]>) -> String {
    let Some(first) = dirs.next() else {
        return ROOT_AREA.to_owned();
    };
    let mut len = first.len();
    for dir in dirs {
        len = first[..len]
            .iter()
            .zip(dir)
            .take_while(|(a, b)| a == b)
            .count();
    }
    if len == 0 {
        ROOT_AREA.to_owned()
    } else {
        first[..len].join("/")
    }
}

/// How an area reads in a sentence.
fn area_phrase(area: &str) -> String {
    if area == ROOT_AREA {
        "the repository root".to_owned()
    } else {
        area.to_owned()
    }
}

/// What a theme's shared cause would be about: "… in how AREA {this}".
fn cause_phrase(theme: Theme) -> &'static str {
    match theme {
        Theme::ErrorHandling => "handles errors",
        Theme::Validation => "validates its inputs",
        Theme::TypeSafety => "uses types",
        Theme::Naming => "names things",
        Theme::Performance => "spends time and memory",
        Theme::Testing => "is tested",
        Theme::Security => "handles untrusted data and secrets",
        Theme::Documentation => "is documented",
        Theme::Style => "is formatted and written",
        Theme::Architecture => "is structured",
        Theme::Concurrency => "shares state between threads and tasks",
        Theme::ResourceManagement => "acquires and releases resources",
        Theme::Logging => "logs",
        Theme::Other => "is written",
    }
}

/// The cluster's one-sentence hypothesis.
fn hypothesis(theme: Theme, area: &str, items: usize, files: usize) -> String {
    let area = area_phrase(area);
    let file_word = if files == 1 { "file" } else { "files" };
    format!(
        "{items} {theme} comments across {files} {file_word} in {area} suggest a shared cause in how {area} {}.",
        cause_phrase(theme)
    )
}

// ---------------------------------------------------------------------------
// Brief

/// Escapes text for the brief: `&`, `<`, `>` and control characters become
/// character references, so no path or id can open or close an element or
/// break the one-entry-per-line layout.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c if c.is_control() => out.push_str(&format!("&#{};", u32::from(c))),
            c => out.push(c),
        }
    }
    out
}

/// The `<cluster-brief>` block for the cluster fix agent (SPEC section 5).
///
/// One element per line; inside `<files>`, `<threads>` and
/// `<just-fixed-files>`, one entry per line. `<just-fixed-files>` appears
/// exactly when `just_fixed_files` is `Some` (a re-entry), with its entries
/// normalized, sorted and deduplicated. No comment bodies: only paths, ids and
/// the hypothesis. The block ends with a newline. For example:
///
/// ```text
/// <cluster-brief>
/// <theme>error-handling</theme>
/// <area>src/auth</area>
/// <files>
/// src/auth/login.ts
/// src/auth/oauth/google.ts
/// </files>
/// <threads>
/// PRRT_1
/// PRRT_2
/// </threads>
/// <hypothesis>2 error-handling comments across 2 files in src/auth suggest a shared cause in how src/auth handles errors.</hypothesis>
/// </cluster-brief>
/// ```
pub fn render_brief(cluster: &Cluster, just_fixed_files: Option<&[String]>) -> String {
    let mut out = String::from("<cluster-brief>\n");
    out.push_str(&format!("<theme>{}</theme>\n", cluster.theme));
    out.push_str(&format!("<area>{}</area>\n", escape(&cluster.area)));
    push_list(&mut out, "files", cluster.files.iter().map(String::as_str));
    push_list(
        &mut out,
        "threads",
        cluster.item_ids.iter().map(String::as_str),
    );
    out.push_str(&format!(
        "<hypothesis>{}</hypothesis>\n",
        escape(&cluster.hypothesis)
    ));
    if let Some(files) = just_fixed_files {
        let normalized: BTreeSet<String> = files
            .iter()
            .map(|f| segments(f).join("/"))
            .filter(|f| !f.is_empty())
            .collect();
        push_list(
            &mut out,
            "just-fixed-files",
            normalized.iter().map(String::as_str),
        );
    }
    out.push_str("</cluster-brief>\n");
    out
}

fn push_list<'a>(out: &mut String, tag: &str, entries: impl Iterator<Item = &'a str>) {
    out.push_str(&format!("<{tag}>\n"));
    for entry in entries {
        out.push_str(&escape(entry));
        out.push('\n');
    }
    out.push_str(&format!("</{tag}>\n"));
}

// ---------------------------------------------------------------------------
// Escalation

/// An area of feedback: a theme in a directory.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct AreaKey {
    /// The theme.
    pub theme: Theme,
    /// The directory ([`ROOT_AREA`] for the root).
    pub area: String,
}

impl AreaKey {
    /// An area key; `area` is normalized (`./src//auth/` is `src/auth`, an
    /// empty area is [`ROOT_AREA`]).
    pub fn new(theme: Theme, area: &str) -> Self {
        let segs = segments(area);
        AreaKey {
            theme,
            area: if segs.is_empty() {
                ROOT_AREA.to_owned()
            } else {
                segs.join("/")
            },
        }
    }

    /// The key of a cluster.
    pub fn of_cluster(cluster: &Cluster) -> Self {
        AreaKey::new(cluster.theme, &cluster.area)
    }

    /// Whether feedback on `other` counts as feedback on `self`: same theme,
    /// and the same area or one inside the other (the root only matches the
    /// root, as in proximity).
    pub fn overlaps(&self, other: &AreaKey) -> bool {
        if self.theme != other.theme {
            return false;
        }
        let a = segments(&self.area);
        let b = segments(&other.area);
        if a == b {
            return true;
        }
        !a.is_empty() && !b.is_empty() && (a.starts_with(&b) || b.starts_with(&a))
    }
}

/// What one past fix round did, for escalation.
///
/// The engine keeps one entry per fix round (a round that committed fixes),
/// oldest first, across the runs of the PR it wants to count. `fixed` holds
/// the areas the round fixed: the key of each cluster fixed, and for an
/// isolated item fixed, its theme and its file's directory. `drew_feedback`
/// holds the areas of the new items the *next* round saw (filled in once that
/// round has fetched them). For the most recent fix round the next round is
/// the current one, so its `drew_feedback` may be left empty: the current
/// feedback passed to [`escalations`] stands for it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoundAreas {
    /// The round (1-based) this fix round was; 0 when unknown. A round that
    /// is re-run after a crash replaces its own entry instead of adding one.
    #[serde(default)]
    pub round: u32,
    /// Areas this fix round fixed.
    pub fixed: Vec<AreaKey>,
    /// Areas that drew new feedback after this fix round.
    pub drew_feedback: Vec<AreaKey>,
}

/// New feedback on one area in the current round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AreaFeedback {
    /// The area.
    pub key: AreaKey,
    /// The new items on it.
    pub item_ids: Vec<String>,
}

impl From<&Cluster> for AreaFeedback {
    fn from(cluster: &Cluster) -> Self {
        AreaFeedback {
            key: AreaKey::of_cluster(cluster),
            item_ids: cluster.item_ids.clone(),
        }
    }
}

/// The current round's feedback by area: one entry per cluster, and one per
/// isolated item with a path (its theme and its file's directory). Top-level
/// items have no area and are left out. Sorted by (key, first item id).
pub fn area_feedback(grouping: &Grouping, items: &[ClusterItem]) -> Vec<AreaFeedback> {
    let isolated: BTreeSet<&str> = grouping.isolated.iter().map(String::as_str).collect();
    let mut out: Vec<AreaFeedback> = grouping.clusters.iter().map(AreaFeedback::from).collect();
    for item in items {
        if !isolated.contains(item.id.as_str()) {
            continue;
        }
        let Some(path) = item.path.as_deref() else {
            continue;
        };
        let segs = segments(path);
        let Some((_, dir)) = segs.split_last() else {
            continue;
        };
        out.push(AreaFeedback {
            key: AreaKey::new(item.theme, &dir.join("/")),
            item_ids: vec![item.id.clone()],
        });
    }
    out.sort_by(|a, b| (&a.key, a.item_ids.first()).cmp(&(&b.key, b.item_ids.first())));
    out
}

/// An area shepherd stops patching: its new items become needs-human.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Escalation {
    /// The area, as the current feedback names it.
    pub key: AreaKey,
    /// The current round's items on it, sorted.
    pub item_ids: Vec<String>,
    /// How many consecutive fix rounds fixed the area and drew new feedback.
    pub rounds: u32,
    /// The sentence for replies and the report: "several rounds of feedback
    /// on THEME in AREA suggest a deeper issue".
    pub context: String,
}

/// The current feedback that escalates (SPEC section 5, "Escalation").
///
/// For each entry of `current`, counts the fix rounds, newest first, that
/// fixed an area overlapping it ([`AreaKey::overlaps`]) and then drew feedback
/// overlapping it (for the newest round: the current feedback itself); the
/// count stops at the first round that did not. Feedback whose count reaches
/// `escalate_after` escalates. `escalate_after == 0` disables escalation.
/// The result is sorted by (key, first item id).
pub fn escalations(
    history: &[RoundAreas],
    current: &[AreaFeedback],
    escalate_after: u32,
) -> Vec<Escalation> {
    if escalate_after == 0 {
        return Vec::new();
    }
    let mut out = Vec::new();
    for feedback in current {
        let mut rounds = 0u32;
        for (i, round) in history.iter().enumerate().rev() {
            let newest = i + 1 == history.len();
            let fixed = round.fixed.iter().any(|k| k.overlaps(&feedback.key));
            let drew = newest
                || round
                    .drew_feedback
                    .iter()
                    .any(|k| k.overlaps(&feedback.key));
            if !(fixed && drew) {
                break;
            }
            rounds += 1;
        }
        if rounds >= escalate_after {
            let mut item_ids = feedback.item_ids.clone();
            item_ids.sort();
            out.push(Escalation {
                context: escalation_context(&feedback.key),
                key: feedback.key.clone(),
                item_ids,
                rounds,
            });
        }
    }
    out.sort_by(|a, b| (&a.key, a.item_ids.first()).cmp(&(&b.key, b.item_ids.first())));
    out
}

/// "several rounds of feedback on THEME in AREA suggest a deeper issue".
pub fn escalation_context(key: &AreaKey) -> String {
    format!(
        "several rounds of feedback on {} in {} suggest a deeper issue",
        key.theme,
        area_phrase(&key.area)
    )
}

// ---------------------------------------------------------------------------
// Report

/// What one round's clustering saw and did; the engine writes it as
/// `clusters.json`, only in rounds whose gate opened (a closed gate does no
/// clustering work and leaves no file).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterReport {
    /// Format version ([`ClusterReport::VERSION`]).
    pub version: u32,
    /// The round (1-based).
    pub round: u32,
    /// The gate's decision and the signals it saw.
    pub gate: GateDecision,
    /// The clusters formed (empty with a closed gate).
    pub clusters: Vec<Cluster>,
    /// Ids of the items in no cluster.
    pub isolated: Vec<String>,
    /// Areas no longer patched.
    pub escalations: Vec<Escalation>,
    /// Every item's theme and where it came from (the triage agent or the
    /// lexical classifier), sorted by id. Absent from reports written
    /// before it existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub themes: Vec<ItemTheme>,
    /// On re-entry, the files the previous fix round changed: what each
    /// cluster's brief lists as `<just-fixed-files>` ([`render_brief`]).
    /// `None` (and absent from the JSON) when the round is not a re-entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub just_fixed_files: Option<Vec<String>>,
}

impl ClusterReport {
    /// The current `clusters.json` format version.
    pub const VERSION: u32 = 1;

    /// A report for `round` from the gate's decision, the grouping and the
    /// escalations.
    pub fn new(
        round: u32,
        gate: GateDecision,
        grouping: Grouping,
        escalations: Vec<Escalation>,
    ) -> Self {
        ClusterReport {
            version: Self::VERSION,
            round,
            gate,
            clusters: grouping.clusters,
            isolated: grouping.isolated,
            themes: grouping.themes,
            escalations,
            just_fixed_files: None,
        }
    }

    /// The same report for a re-entry round: `files` (normalized as paths
    /// are everywhere here, sorted, without duplicates or empty paths) are
    /// the files the previous fix round changed.
    pub fn with_just_fixed_files<S: AsRef<str>>(mut self, files: &[S]) -> Self {
        let normalized: BTreeSet<String> = files
            .iter()
            .map(|f| segments(f.as_ref()).join("/"))
            .filter(|f| !f.is_empty())
            .collect();
        self.just_fixed_files = Some(normalized.into_iter().collect());
        self
    }

    /// The `<cluster-brief>` of `cluster` in this round: with
    /// `<just-fixed-files>` exactly when the round is a re-entry.
    pub fn brief(&self, cluster: &Cluster) -> String {
        render_brief(cluster, self.just_fixed_files.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn item(id: &str, path: Option<&str>, theme: Theme) -> ClusterItem {
        ClusterItem::new(id, path, theme)
    }

    // -- gate -------------------------------------------------------------

    #[test]
    fn gate_opens_on_volume() {
        let d = evaluate_gate(&ClusterGateInput {
            new_items: 4,
            ..Default::default()
        });
        assert!(d.open);
        assert_eq!(d.signals, vec![GateSignal::Volume { count: 4, min: 4 }]);
    }

    #[test]
    fn gate_stays_closed_below_volume_without_reentry() {
        let d = evaluate_gate(&ClusterGateInput {
            new_items: 3,
            ..Default::default()
        });
        assert!(!d.open);
        assert!(d.signals.is_empty());
    }

    #[test]
    fn same_file_concentration_is_not_a_gate_signal() {
        // Ten items, all on one file: grouping would cluster them, but the
        // gate never looks at files, so with min_volume 11 it stays closed.
        let items: Vec<ClusterItem> = (0..10)
            .map(|i| {
                item(
                    &format!("T{i}"),
                    Some("src/auth/login.ts"),
                    Theme::ErrorHandling,
                )
            })
            .collect();
        assert_eq!(group(&items).clusters.len(), 1);
        let d = evaluate_gate(&ClusterGateInput {
            new_items: items.len(),
            min_volume: 11,
            ..Default::default()
        });
        assert_eq!(
            d,
            GateDecision {
                open: false,
                signals: vec![]
            }
        );
    }

    #[test]
    fn gate_opens_on_reentry_with_a_single_item() {
        let within = evaluate_gate(&ClusterGateInput {
            new_items: 1,
            fix_rounds_this_run_before: true,
            ..Default::default()
        });
        assert!(within.open);
        assert_eq!(within.signals, vec![GateSignal::ReentryWithinRun]);

        let across = evaluate_gate(&ClusterGateInput {
            new_items: 1,
            earlier_run_fixes: true,
            ..Default::default()
        });
        assert!(across.open);
        assert_eq!(across.signals, vec![GateSignal::ReentryAcrossRuns]);
    }

    #[test]
    fn gate_lists_all_signals_in_a_fixed_order() {
        let d = evaluate_gate(&ClusterGateInput {
            new_items: 9,
            min_volume: 2,
            fix_rounds_this_run_before: true,
            earlier_run_fixes: true,
            ..Default::default()
        });
        assert!(d.open);
        assert_eq!(
            d.signals,
            vec![
                GateSignal::Volume { count: 9, min: 2 },
                GateSignal::ReentryWithinRun,
                GateSignal::ReentryAcrossRuns
            ]
        );
    }

    #[test]
    fn disabled_or_targeted_gate_stays_closed_but_reports_signals() {
        let busy = ClusterGateInput {
            new_items: 12,
            fix_rounds_this_run_before: true,
            ..Default::default()
        };
        for input in [
            ClusterGateInput {
                enabled: false,
                ..busy.clone()
            },
            ClusterGateInput {
                targeted: true,
                ..busy.clone()
            },
        ] {
            let d = evaluate_gate(&input);
            assert!(!d.open, "{input:?}");
            assert_eq!(d.signals.len(), 2);
        }
        assert!(evaluate_gate(&busy).open);
    }

    #[test]
    fn gate_without_new_items_sees_nothing() {
        let d = evaluate_gate(&ClusterGateInput {
            new_items: 0,
            min_volume: 0,
            fix_rounds_this_run_before: true,
            earlier_run_fixes: true,
            ..Default::default()
        });
        assert!(!d.open);
        assert!(d.signals.is_empty());
    }

    #[test]
    fn gate_signals_serialize_with_a_kind_tag() {
        let d = evaluate_gate(&ClusterGateInput {
            new_items: 5,
            earlier_run_fixes: true,
            ..Default::default()
        });
        assert_eq!(
            serde_json::to_value(&d).unwrap(),
            serde_json::json!({
                "open": true,
                "signals": [
                    {"kind": "volume", "count": 5, "min": 4},
                    {"kind": "reentry-across-runs"}
                ]
            })
        );
    }

    // -- proximity --------------------------------------------------------

    #[test]
    fn proximity_follows_the_spec_examples() {
        assert!(proximate("src/auth/login.ts", "src/auth/middleware.ts"));
        assert!(proximate(
            "src/auth/middleware.ts",
            "src/auth/oauth/google.ts"
        ));
        assert!(proximate("src/auth/login.ts", "src/auth/oauth/google.ts"));
        assert!(proximate("src/auth/oauth/google.ts", "src/auth/login.ts"));
        assert!(!proximate("src/auth/login.ts", "src/db/pool.ts"));
        assert!(!proximate("README.md", "Cargo.toml"));
        assert!(proximate("a.rs", "a.rs"));
    }

    #[test]
    fn proximity_edge_cases() {
        // The root never links, whichever side it is on.
        assert!(!proximate("README.md", "src/main.rs"));
        assert!(!proximate("src/main.rs", "README.md"));
        // Siblings below a common directory are not proximate by themselves.
        assert!(!proximate(
            "src/auth/oauth/google.ts",
            "src/auth/saml/okta.ts"
        ));
        // A file directly in a directory is proximate to its whole subtree.
        assert!(proximate("src/lib.rs", "src/auth/oauth/google.ts"));
        // Same file, same directory.
        assert!(proximate("src/auth/login.ts", "src/auth/login.ts"));
        // Normalization of `./`, `//` and a leading `/`.
        assert!(proximate(
            "./src/auth/login.ts",
            "/src//auth/oauth/google.ts"
        ));
        assert!(proximate("./a.rs", "a.rs"));
        // Directory names compare by segment, not by string prefix.
        assert!(!proximate("src/auth/a.ts", "src/authz/b.ts"));
        // Empty paths are proximate to nothing.
        assert!(!proximate("", ""));
        assert!(!proximate("", "a.rs"));
        assert!(!proximate("./", "a.rs"));
    }

    // -- grouping ---------------------------------------------------------

    #[test]
    fn spec_example_groups_the_auth_area_and_isolates_the_rest() {
        let items = vec![
            item("T4", Some("src/auth/oauth/google.ts"), Theme::ErrorHandling),
            item("T1", Some("src/auth/login.ts"), Theme::ErrorHandling),
            item("T2", Some("src/auth/middleware.ts"), Theme::ErrorHandling),
            item("T3", Some("src/auth/login.ts"), Theme::ErrorHandling),
            item("T5", Some("src/db/pool.ts"), Theme::ErrorHandling),
            item("T6", Some("src/auth/login.ts"), Theme::Naming),
            item("T7", None, Theme::ErrorHandling),
            item("T8", Some("README.md"), Theme::Documentation),
        ];
        let g = group(&items);
        assert_eq!(
            g.clusters,
            vec![Cluster {
                theme: Theme::ErrorHandling,
                area: "src/auth".into(),
                files: vec![
                    "src/auth/login.ts".into(),
                    "src/auth/middleware.ts".into(),
                    "src/auth/oauth/google.ts".into()
                ],
                item_ids: vec!["T1".into(), "T2".into(), "T3".into(), "T4".into()],
                hypothesis: "4 error-handling comments across 3 files in src/auth suggest a shared cause in how src/auth handles errors.".into(),
            }]
        );
        assert_eq!(g.isolated, vec!["T5", "T6", "T7", "T8"]);
    }

    #[test]
    fn theme_without_proximity_is_not_a_cluster() {
        let g = group(&[
            item("a", Some("src/auth/login.ts"), Theme::Security),
            item("b", Some("src/db/pool.ts"), Theme::Security),
            item("c", Some("README.md"), Theme::Security),
            item("d", Some("Cargo.toml"), Theme::Security),
        ]);
        assert!(g.clusters.is_empty());
        assert_eq!(g.isolated, vec!["a", "b", "c", "d"]);
    }

    #[test]
    fn proximity_without_theme_is_not_a_cluster() {
        let g = group(&[
            item("a", Some("src/auth/login.ts"), Theme::Security),
            item("b", Some("src/auth/login.ts"), Theme::Naming),
        ]);
        assert!(g.clusters.is_empty());
        assert_eq!(g.isolated, vec!["a", "b"]);
    }

    #[test]
    fn a_file_proximate_to_both_links_items_that_are_not() {
        // google.ts and okta.ts are not proximate, but both are proximate to
        // login.ts, so the three form one cluster; a file in a parent
        // directory links its subdirectories alike.
        for (theme, apart, link, area, ids) in [
            (
                Theme::Validation,
                [
                    ("g", "src/auth/oauth/google.ts"),
                    ("o", "src/auth/saml/okta.ts"),
                ],
                ("l", "src/auth/login.ts"),
                "src/auth",
                ["g", "l", "o"],
            ),
            (
                Theme::Logging,
                [("auth", "src/auth/a.ts"), ("db", "src/db/b.ts")],
                ("lib", "src/lib.rs"),
                "src",
                ["auth", "db", "lib"],
            ),
        ] {
            let apart = apart.map(|(id, path)| item(id, Some(path), theme));
            assert!(group(&apart).clusters.is_empty(), "{area}");
            let mut linked = apart.to_vec();
            linked.push(item(link.0, Some(link.1), theme));
            let g = group(&linked);
            assert_eq!(g.clusters.len(), 1, "{area}");
            assert_eq!(g.clusters[0].area, area);
            assert_eq!(g.clusters[0].item_ids, ids);
        }
    }

    #[test]
    fn same_file_items_cluster_with_the_files_directory_as_area() {
        let g = group(&[
            item("b", Some("src/auth/login.ts"), Theme::ErrorHandling),
            item("a", Some("./src/auth/login.ts"), Theme::ErrorHandling),
        ]);
        assert_eq!(g.clusters.len(), 1);
        assert_eq!(g.clusters[0].area, "src/auth");
        assert_eq!(g.clusters[0].files, vec!["src/auth/login.ts"]);
        assert_eq!(
            g.clusters[0].hypothesis,
            "2 error-handling comments across 1 file in src/auth suggest a shared cause in how src/auth handles errors."
        );
    }

    #[test]
    fn a_root_file_clusters_only_with_itself() {
        let g = group(&[
            item("1", Some("README.md"), Theme::Documentation),
            item("2", Some("README.md"), Theme::Documentation),
            item("3", Some("CONTRIBUTING.md"), Theme::Documentation),
            item("4", Some("docs/guide.md"), Theme::Documentation),
        ]);
        assert_eq!(g.clusters.len(), 1);
        assert_eq!(g.clusters[0].area, ROOT_AREA);
        assert_eq!(g.clusters[0].item_ids, vec!["1", "2"]);
        assert_eq!(
            g.clusters[0].hypothesis,
            "2 documentation comments across 1 file in the repository root suggest a shared cause in how the repository root is documented."
        );
        assert_eq!(g.isolated, vec!["3", "4"]);
    }

    #[test]
    fn top_level_and_empty_paths_are_isolated() {
        let g = group(&[
            item("x", None, Theme::Testing),
            item("y", None, Theme::Testing),
            item("z", Some(""), Theme::Testing),
        ]);
        assert!(g.clusters.is_empty());
        assert_eq!(g.isolated, vec!["x", "y", "z"]);
    }

    #[test]
    fn clusters_sort_by_theme_then_area_then_first_id() {
        let g = group(&[
            item("n2", Some("web/ui/a.ts"), Theme::Naming),
            item("n1", Some("web/ui/b.ts"), Theme::Naming),
            item("e3", Some("src/db/a.rs"), Theme::ErrorHandling),
            item("e4", Some("src/db/b.rs"), Theme::ErrorHandling),
            item("e1", Some("lib/x/a.rs"), Theme::ErrorHandling),
            item("e2", Some("lib/x/a.rs"), Theme::ErrorHandling),
        ]);
        let keys: Vec<(Theme, &str)> = g
            .clusters
            .iter()
            .map(|c| (c.theme, c.area.as_str()))
            .collect();
        assert_eq!(
            keys,
            vec![
                (Theme::ErrorHandling, "lib/x"),
                (Theme::ErrorHandling, "src/db"),
                (Theme::Naming, "web/ui")
            ]
        );
        assert_eq!(g.clusters[2].item_ids, vec!["n1", "n2"]);
    }

    #[test]
    fn every_theme_has_a_hypothesis_ending_in_a_full_stop() {
        for theme in Theme::ALL {
            let h = hypothesis(theme, "src/x", 3, 2);
            assert!(h.starts_with(&format!("3 {theme} comments across 2 files in src/x")));
            assert!(h.ends_with('.'));
            assert_eq!(h.matches('.').count(), 1, "{h}");
        }
    }

    // -- brief ------------------------------------------------------------

    fn auth_cluster() -> Cluster {
        group(&[
            item(
                "PRRT_kwDO3",
                Some("src/auth/oauth/google.ts"),
                Theme::ErrorHandling,
            ),
            item(
                "PRRT_kwDO1",
                Some("src/auth/login.ts"),
                Theme::ErrorHandling,
            ),
            item(
                "PRRT_kwDO2",
                Some("src/auth/middleware.ts"),
                Theme::ErrorHandling,
            ),
        ])
        .clusters
        .remove(0)
    }

    /// The brief's wording, compared with `src/snapshots/` (insta):
    /// `INSTA_UPDATE=always cargo test -p shepherd-core brief` rewrites it.
    fn brief_snapshot(name: &str, brief: &str) {
        let mut settings = insta::Settings::clone_current();
        settings.set_prepend_module_to_snapshot(false);
        settings.set_omit_expression(true);
        settings.bind(|| insta::assert_snapshot!(name, brief));
    }

    #[test]
    fn brief_of_a_cluster() {
        brief_snapshot("cluster-brief", &render_brief(&auth_cluster(), None));
    }

    #[test]
    fn brief_on_reentry_lists_just_fixed_files() {
        let fixed = vec![
            "src/auth/middleware.ts".to_owned(),
            "./src/auth/login.ts".to_owned(),
            "src/auth/middleware.ts".to_owned(),
        ];
        let brief = render_brief(&auth_cluster(), Some(&fixed));
        assert!(brief.contains(
            "<just-fixed-files>\nsrc/auth/login.ts\nsrc/auth/middleware.ts\n</just-fixed-files>"
        ));
        brief_snapshot("cluster-brief-reentry", &brief);
    }

    #[test]
    fn brief_escapes_paths_and_ids() {
        let g = group(&[
            item("a&1", Some("src/<x>/a&b.ts"), Theme::Style),
            item("a<2", Some("src/<x>/c\n</files>.ts"), Theme::Style),
        ]);
        let brief = render_brief(
            &g.clusters[0],
            Some(&["src/</just-fixed-files>".to_owned()]),
        );
        assert_eq!(
            brief,
            "<cluster-brief>
<theme>style</theme>
<area>src/&lt;x&gt;</area>
<files>
src/&lt;x&gt;/a&amp;b.ts
src/&lt;x&gt;/c&#10;&lt;/files&gt;.ts
</files>
<threads>
a&amp;1
a&lt;2
</threads>
<hypothesis>2 style comments across 2 files in src/&lt;x&gt; suggest a shared cause in how src/&lt;x&gt; is formatted and written.</hypothesis>
<just-fixed-files>
src/&lt;/just-fixed-files&gt;
</just-fixed-files>
</cluster-brief>
"
        );
        // Exactly one of each structural tag survives.
        for tag in [
            "<files>",
            "</files>",
            "<threads>",
            "</threads>",
            "</just-fixed-files>",
        ] {
            assert_eq!(brief.matches(tag).count(), 1, "{tag}");
        }
    }

    // -- escalation -------------------------------------------------------

    fn key(theme: Theme, area: &str) -> AreaKey {
        AreaKey::new(theme, area)
    }

    fn feedback(theme: Theme, area: &str, ids: &[&str]) -> AreaFeedback {
        AreaFeedback {
            key: key(theme, area),
            item_ids: ids.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn escalates_after_two_consecutive_fix_rounds_with_new_feedback() {
        let eh_auth = key(Theme::ErrorHandling, "src/auth");
        let now = [feedback(Theme::ErrorHandling, "src/auth", &["T9", "T8"])];

        // Round 2: one fix round behind, feedback again: not yet.
        let one = [RoundAreas {
            round: 0,
            fixed: vec![eh_auth.clone()],
            drew_feedback: vec![],
        }];
        assert!(escalations(&one, &now, DEFAULT_ESCALATE_AFTER).is_empty());

        // Round 3: fixed in rounds 1 and 2, feedback after each.
        let two = [
            RoundAreas {
                round: 0,
                fixed: vec![eh_auth.clone()],
                drew_feedback: vec![eh_auth.clone()],
            },
            RoundAreas {
                round: 0,
                fixed: vec![eh_auth.clone()],
                drew_feedback: vec![],
            },
        ];
        assert_eq!(
            escalations(&two, &now, DEFAULT_ESCALATE_AFTER),
            vec![Escalation {
                key: eh_auth,
                item_ids: vec!["T8".into(), "T9".into()],
                rounds: 2,
                context: "several rounds of feedback on error-handling in src/auth suggest a deeper issue".into(),
            }]
        );
    }

    #[test]
    fn a_round_without_the_fix_or_the_feedback_breaks_the_streak() {
        let k = key(Theme::ErrorHandling, "src/auth");
        let now = [feedback(Theme::ErrorHandling, "src/auth", &["T1"])];
        let no_feedback_between = [
            RoundAreas {
                round: 0,
                fixed: vec![k.clone()],
                drew_feedback: vec![],
            },
            RoundAreas {
                round: 0,
                fixed: vec![k.clone()],
                drew_feedback: vec![],
            },
        ];
        assert!(escalations(&no_feedback_between, &now, 2).is_empty());
        let not_fixed_last = [
            RoundAreas {
                round: 0,
                fixed: vec![k.clone()],
                drew_feedback: vec![k.clone()],
            },
            RoundAreas {
                round: 0,
                fixed: vec![key(Theme::ErrorHandling, "src/db")],
                drew_feedback: vec![],
            },
        ];
        assert!(escalations(&not_fixed_last, &now, 2).is_empty());
        assert!(escalations(&[], &now, 1).is_empty());
    }

    #[test]
    fn escalation_matches_overlapping_areas_of_the_same_theme_only() {
        let fixed = key(Theme::ErrorHandling, "src/auth");
        let history = [
            RoundAreas {
                round: 0,
                fixed: vec![fixed.clone()],
                drew_feedback: vec![key(Theme::ErrorHandling, "src/auth/oauth")],
            },
            RoundAreas {
                round: 0,
                fixed: vec![fixed],
                drew_feedback: vec![],
            },
        ];
        let now = [
            feedback(Theme::ErrorHandling, "src/auth/oauth", &["in-subtree"]),
            feedback(Theme::ErrorHandling, "src/db", &["elsewhere"]),
            feedback(Theme::Naming, "src/auth", &["other-theme"]),
        ];
        let e = escalations(&history, &now, 2);
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].item_ids, vec!["in-subtree"]);
        assert_eq!(
            e[0].context,
            "several rounds of feedback on error-handling in src/auth/oauth suggest a deeper issue"
        );
    }

    #[test]
    fn escalate_after_counts_rounds_and_zero_disables() {
        let k = key(Theme::Concurrency, "src/sync");
        let round = RoundAreas {
            round: 0,
            fixed: vec![k.clone()],
            drew_feedback: vec![k.clone()],
        };
        let history = vec![round.clone(), round.clone(), round];
        let now = [feedback(Theme::Concurrency, "src/sync", &["T"])];
        assert_eq!(escalations(&history, &now, 3)[0].rounds, 3);
        assert_eq!(escalations(&history, &now, 1)[0].rounds, 3);
        assert!(escalations(&history, &now, 4).is_empty());
        assert!(escalations(&history, &now, 0).is_empty());
    }

    #[test]
    fn area_keys_overlap_like_proximity() {
        let a = key(Theme::Logging, "src/auth");
        assert!(a.overlaps(&key(Theme::Logging, "./src/auth/")));
        assert!(a.overlaps(&key(Theme::Logging, "src/auth/oauth")));
        assert!(key(Theme::Logging, "src/auth/oauth").overlaps(&a));
        assert!(!a.overlaps(&key(Theme::Logging, "src/authz")));
        assert!(!a.overlaps(&key(Theme::Logging, "src/db")));
        assert!(!a.overlaps(&key(Theme::Style, "src/auth")));
        let root = key(Theme::Logging, "");
        assert_eq!(root.area, ROOT_AREA);
        assert!(root.overlaps(&key(Theme::Logging, ".")));
        assert!(!root.overlaps(&a));
        assert!(!a.overlaps(&root));
        assert_eq!(
            escalation_context(&root),
            "several rounds of feedback on logging in the repository root suggest a deeper issue"
        );
    }

    #[test]
    fn area_feedback_covers_clusters_and_isolated_items_with_paths() {
        let items = vec![
            item("c2", Some("src/auth/a.ts"), Theme::ErrorHandling),
            item("c1", Some("src/auth/b.ts"), Theme::ErrorHandling),
            item("i1", Some("src/db/pool.ts"), Theme::ErrorHandling),
            item("top", None, Theme::ErrorHandling),
        ];
        let g = group(&items);
        assert_eq!(
            area_feedback(&g, &items),
            vec![
                feedback(Theme::ErrorHandling, "src/auth", &["c1", "c2"]),
                feedback(Theme::ErrorHandling, "src/db", &["i1"]),
            ]
        );
    }

    // -- report -----------------------------------------------------------

    #[test]
    fn cluster_report_json_shape() {
        let items = vec![
            item("T1", Some("src/auth/login.ts"), Theme::ErrorHandling)
                .with_source(ThemeSource::Agent),
            item("T2", Some("src/auth/middleware.ts"), Theme::ErrorHandling),
            item("T3", None, Theme::Other),
        ];
        let gate = evaluate_gate(&ClusterGateInput {
            new_items: 3,
            fix_rounds_this_run_before: true,
            ..Default::default()
        });
        let report = ClusterReport::new(2, gate, group(&items), vec![]);
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "version": 1,
                "round": 2,
                "gate": {"open": true, "signals": [{"kind": "reentry-within-run"}]},
                "clusters": [{
                    "theme": "error-handling",
                    "area": "src/auth",
                    "files": ["src/auth/login.ts", "src/auth/middleware.ts"],
                    "item_ids": ["T1", "T2"],
                    "hypothesis": "2 error-handling comments across 2 files in src/auth suggest a shared cause in how src/auth handles errors."
                }],
                "isolated": ["T3"],
                "escalations": [],
                "themes": [
                    {"id": "T1", "theme": "error-handling", "source": "agent"},
                    {"id": "T2", "theme": "error-handling", "source": "lexical"},
                    {"id": "T3", "theme": "other", "source": "lexical"}
                ]
            })
        );
        let back: ClusterReport = serde_json::from_value(json).unwrap();
        assert_eq!(back, report);
    }

    #[test]
    fn two_other_items_on_one_file_never_form_a_cluster() {
        let items = vec![
            item("a", Some("src/auth/login.ts"), Theme::Other),
            item("b", Some("src/auth/login.ts"), Theme::Other),
            item("c", Some("src/auth/middleware.ts"), Theme::Other),
        ];
        let g = group(&items);
        assert!(g.clusters.is_empty(), "{:?}", g.clusters);
        assert_eq!(g.isolated, vec!["a", "b", "c"]);
        // The same items with a real theme do cluster: `other` is the reason.
        let themed: Vec<ClusterItem> = items
            .into_iter()
            .map(|i| ClusterItem {
                theme: Theme::Naming,
                ..i
            })
            .collect();
        assert_eq!(group(&themed).clusters.len(), 1);
    }

    #[test]
    fn other_items_do_not_link_themed_clusters_either() {
        let items = vec![
            item("t1", Some("src/auth/login.ts"), Theme::Security),
            item("o1", Some("src/auth/login.ts"), Theme::Other),
            item("o2", Some("src/auth/oauth/google.ts"), Theme::Other),
        ];
        let g = group(&items);
        assert!(g.clusters.is_empty());
        assert_eq!(g.isolated, vec!["o1", "o2", "t1"]);
    }

    #[test]
    fn every_cluster_theme_is_a_real_theme() {
        let themes = [Theme::Other, Theme::Naming, Theme::Other, Theme::Security];
        let items: Vec<ClusterItem> = (0..40)
            .map(|i| {
                item(
                    &format!("T{i:02}"),
                    Some(&format!("src/m{}/f{}.rs", i % 3, i % 5)),
                    themes[i % themes.len()],
                )
            })
            .collect();
        let g = group(&items);
        assert!(!g.clusters.is_empty());
        assert!(g.clusters.iter().all(|c| c.theme != Theme::Other));
        let clustered: usize = g.clusters.iter().map(|c| c.item_ids.len()).sum();
        assert_eq!(clustered + g.isolated.len(), items.len());
    }

    #[test]
    fn grouping_uses_the_given_theme_and_reports_its_source() {
        // The agent said naming for both; the lexical classifier would have
        // said something else: grouping follows the agent.
        let items = vec![
            item("A", Some("src/db/pool.rs"), Theme::Naming).with_source(ThemeSource::Agent),
            item("B", Some("src/db/query.rs"), Theme::Naming).with_source(ThemeSource::Agent),
            item("C", Some("src/db/query.rs"), Theme::Logging),
        ];
        let g = group(&items);
        assert_eq!(g.clusters.len(), 1);
        assert_eq!(g.clusters[0].theme, Theme::Naming);
        assert_eq!(g.clusters[0].item_ids, vec!["A", "B"]);
        assert_eq!(
            g.themes,
            vec![
                ItemTheme {
                    id: "A".into(),
                    theme: Theme::Naming,
                    source: ThemeSource::Agent
                },
                ItemTheme {
                    id: "B".into(),
                    theme: Theme::Naming,
                    source: ThemeSource::Agent
                },
                ItemTheme {
                    id: "C".into(),
                    theme: Theme::Logging,
                    source: ThemeSource::Lexical
                },
            ]
        );
    }

    #[test]
    fn a_cluster_item_without_a_source_reads_as_lexical() {
        let item: ClusterItem =
            serde_json::from_str(r#"{"id":"T1","path":"src/a.rs","theme":"naming"}"#).unwrap();
        assert_eq!(item.source, ThemeSource::Lexical);
    }

    #[test]
    fn a_reentry_report_carries_the_just_fixed_files_into_the_brief() {
        let items = vec![
            item("T1", Some("src/auth/login.ts"), Theme::ErrorHandling),
            item("T2", Some("src/auth/middleware.ts"), Theme::ErrorHandling),
        ];
        let gate = evaluate_gate(&ClusterGateInput {
            new_items: 2,
            fix_rounds_this_run_before: true,
            ..Default::default()
        });
        let plain = ClusterReport::new(3, gate.clone(), group(&items), vec![]);
        assert!(!plain
            .brief(&plain.clusters[0])
            .contains("<just-fixed-files>"));
        assert!(serde_json::to_value(&plain)
            .unwrap()
            .get("just_fixed_files")
            .is_none());

        let report = ClusterReport::new(3, gate, group(&items), vec![]).with_just_fixed_files(&[
            "./src/auth/login.ts",
            "src/auth//login.ts",
            "",
            "README.md",
        ]);
        assert_eq!(
            report.just_fixed_files.as_deref(),
            Some(&["README.md".to_owned(), "src/auth/login.ts".to_owned()][..])
        );
        let brief = report.brief(&report.clusters[0]);
        assert!(
            brief.ends_with(
                "<just-fixed-files>\nREADME.md\nsrc/auth/login.ts\n</just-fixed-files>\n</cluster-brief>\n"
            ),
            "{brief}"
        );
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(
            json["just_fixed_files"],
            serde_json::json!(["README.md", "src/auth/login.ts"])
        );
        let back: ClusterReport = serde_json::from_value(json).unwrap();
        assert_eq!(back, report);
    }

    // -- properties -------------------------------------------------------

    const THEMES: [Theme; 4] = [
        Theme::ErrorHandling,
        Theme::Naming,
        Theme::Security,
        Theme::Other,
    ];

    fn path_strategy() -> impl Strategy<Value = Option<String>> {
        let dirs = prop::collection::vec(
            prop::sample::select(vec!["src", "auth", "db", "oauth"]),
            0..4,
        );
        let file = prop::sample::select(vec!["a.rs", "b.ts", "README.md"]);
        prop_oneof![
            1 => Just(None),
            1 => Just(Some(String::new())),
            8 => (dirs, file, any::<bool>()).prop_map(|(dirs, file, dot)| {
                let mut path = if dot { "./".to_owned() } else { String::new() };
                for d in dirs {
                    path.push_str(d);
                    path.push('/');
                }
                path.push_str(file);
                Some(path)
            }),
        ]
    }

    fn items_strategy() -> impl Strategy<Value = Vec<ClusterItem>> {
        prop::collection::vec(
            (path_strategy(), prop::sample::select(THEMES.to_vec())),
            0..40,
        )
        .prop_map(|v| {
            v.into_iter()
                .enumerate()
                .map(|(i, (path, theme))| ClusterItem {
                    id: format!("T{i:03}"),
                    path,
                    theme,
                    source: ThemeSource::Lexical,
                })
                .collect()
        })
    }

    fn has_path(item: &ClusterItem) -> bool {
        item.path
            .as_deref()
            .is_some_and(|p| !segments(p).is_empty())
    }

    /// Connected components of the proximity graph per theme, by brute
    /// force; `other` items are no part of it (SPEC section 5).
    fn naive_components(items: &[ClusterItem]) -> BTreeSet<BTreeSet<String>> {
        let placed: Vec<&ClusterItem> = items
            .iter()
            .filter(|i| has_path(i) && i.theme != Theme::Other)
            .collect();
        let mut component: Vec<usize> = (0..placed.len()).collect();
        loop {
            let mut changed = false;
            for i in 0..placed.len() {
                for j in 0..placed.len() {
                    let linked = placed[i].theme == placed[j].theme
                        && proximate(
                            placed[i].path.as_deref().unwrap_or_default(),
                            placed[j].path.as_deref().unwrap_or_default(),
                        );
                    if linked && component[j] < component[i] {
                        component[i] = component[j];
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        let mut by_root: BTreeMap<usize, BTreeSet<String>> = BTreeMap::new();
        for (i, c) in component.iter().enumerate() {
            by_root.entry(*c).or_default().insert(placed[i].id.clone());
        }
        by_root.into_values().filter(|s| s.len() >= 2).collect()
    }

    proptest! {
        #[test]
        fn grouping_ignores_input_order(
            (items, shuffled) in items_strategy()
                .prop_flat_map(|v| (Just(v.clone()), Just(v).prop_shuffle()))
        ) {
            prop_assert_eq!(group(&items), group(&shuffled));
        }

        #[test]
        fn clusters_are_the_connected_components_of_proximity(items in items_strategy()) {
            let g = group(&items);
            let got: BTreeSet<BTreeSet<String>> = g
                .clusters
                .iter()
                .map(|c| c.item_ids.iter().cloned().collect())
                .collect();
            prop_assert_eq!(got, naive_components(&items));
        }

        #[test]
        fn no_cluster_is_themed_other(items in items_strategy()) {
            let g = group(&items);
            prop_assert!(g.clusters.iter().all(|c| c.theme != Theme::Other));
            let others: BTreeSet<&str> = items
                .iter()
                .filter(|i| i.theme == Theme::Other)
                .map(|i| i.id.as_str())
                .collect();
            prop_assert!(others.iter().all(|id| g.isolated.iter().any(|i| i == id)));
        }

        #[test]
        fn clusters_have_two_items_of_one_theme_linked_by_chains(items in items_strategy()) {
            let by_id: BTreeMap<&str, &ClusterItem> =
                items.iter().map(|i| (i.id.as_str(), i)).collect();
            for c in group(&items).clusters {
                prop_assert!(c.item_ids.len() >= 2);
                let members: Vec<&ClusterItem> =
                    c.item_ids.iter().map(|id| by_id[id.as_str()]).collect();
                prop_assert!(members.iter().all(|m| m.theme == c.theme));
                // Every member is reachable from the first through proximity.
                let mut reached = vec![false; members.len()];
                reached[0] = true;
                let mut stack = vec![0];
                while let Some(i) = stack.pop() {
                    for j in 0..members.len() {
                        if !reached[j]
                            && proximate(
                                members[i].path.as_deref().unwrap_or_default(),
                                members[j].path.as_deref().unwrap_or_default(),
                            )
                        {
                            reached[j] = true;
                            stack.push(j);
                        }
                    }
                }
                prop_assert!(reached.iter().all(|r| *r), "cluster {:?} not chained", c.item_ids);
            }
        }

        #[test]
        fn every_item_appears_exactly_once(items in items_strategy()) {
            let g = group(&items);
            let mut seen: Vec<String> = g.isolated.clone();
            for c in &g.clusters {
                seen.extend(c.item_ids.iter().cloned());
            }
            seen.sort();
            let mut all: Vec<String> = items.iter().map(|i| i.id.clone()).collect();
            all.sort();
            prop_assert_eq!(seen, all);
        }

        #[test]
        fn top_level_items_are_always_isolated(items in items_strategy()) {
            let g = group(&items);
            for i in items.iter().filter(|i| !has_path(i)) {
                prop_assert!(g.isolated.contains(&i.id));
            }
        }

        #[test]
        fn area_is_the_deepest_common_directory(items in items_strategy()) {
            for c in group(&items).clusters {
                let dirs: Vec<Vec<&str>> = c
                    .files
                    .iter()
                    .map(|f| {
                        let s = segments(f);
                        s[..s.len() - 1].to_vec()
                    })
                    .collect();
                let area: Vec<&str> = if c.area == ROOT_AREA { vec![] } else { segments(&c.area) };
                prop_assert!(dirs.iter().all(|d| d.starts_with(&area)));
                let deeper = dirs
                    .iter()
                    .all(|d| d.len() > area.len() && d[area.len()] == dirs[0].get(area.len()).copied().unwrap_or_default());
                prop_assert!(!deeper, "area {} is not deepest for {:?}", c.area, c.files);
                prop_assert!(c.files.windows(2).all(|w| w[0] < w[1]));
                prop_assert!(c.item_ids.windows(2).all(|w| w[0] < w[1]));
            }
        }
    }
}
