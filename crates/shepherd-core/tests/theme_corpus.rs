//! The lexical theme classifier measured on real review comments
//! (`tests/data/review_comments.jsonl`, see `tests/data/README.md`).
//!
//! Each comment is in the development part or the held-out part, by a hash
//! of its source and text fixed when it was added. Rules are written from the
//! development part only; accuracy is reported on the held-out part, and
//! the tests below fail when it drops below the figures reached.
//!
//! `cargo test -p shepherd-core --test theme_corpus -- --nocapture` prints
//! the figures.

use std::collections::{BTreeMap, BTreeSet};

use shepherd_core::cluster::{group, ClusterItem};
use shepherd_core::theme::{classify_theme_at, Theme};

mod corpus;

use corpus::{corpus, path_of, Row};

/// Held-out accuracy floors: the figures reached when the rules were last
/// changed (71/101, 58/87 and 13/14), rounded down. A change that lowers any
/// of them fails. The target is 70% overall and 60% on human
/// comments; both are met, and the floors hold them.
const HELD_OUT_OVERALL_FLOOR: f64 = 0.70;
const HELD_OUT_HUMAN_FLOOR: f64 = 0.66;
const HELD_OUT_BOT_FLOOR: f64 = 0.92;
/// Held-out pairwise cluster F1 (classifier's themes against the labels'),
/// as reached (0.60: 3 of 7 pairs), rounded down.
const HELD_OUT_CLUSTER_F1_FLOOR: f64 = 0.60;

/// FNV-1a, 64 bits: the split is `held-out` when the hash of
/// `source + "\n" + text` is 0 or 1 modulo 5 (about 40%).
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn split_of(row: &Row) -> &'static str {
    let key = format!("{}\n{}", row.source, row.text);
    if fnv1a(key.as_bytes()) % 5 < 2 {
        "held-out"
    } else {
        "dev"
    }
}

#[derive(Default, Clone, Copy)]
struct Tally {
    right: usize,
    total: usize,
}

impl Tally {
    fn add(&mut self, ok: bool) {
        self.total += 1;
        self.right += usize::from(ok);
    }
    fn rate(self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.right as f64 / self.total as f64
        }
    }
}

impl std::fmt::Display for Tally {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:5.1}% ({}/{})",
            100.0 * self.rate(),
            self.right,
            self.total
        )
    }
}

struct Figures {
    overall: Tally,
    bot: Tally,
    human: Tally,
    inline: Tally,
    top_level: Tally,
    short: Tally,
    /// Per expected theme: recall.
    per_theme: BTreeMap<Theme, Tally>,
    /// Items answered `other` although labelled with a theme.
    false_other: usize,
}

fn measure(rows: &[&Row]) -> Figures {
    let mut f = Figures {
        overall: Tally::default(),
        bot: Tally::default(),
        human: Tally::default(),
        inline: Tally::default(),
        top_level: Tally::default(),
        short: Tally::default(),
        per_theme: BTreeMap::new(),
        false_other: 0,
    };
    for row in rows {
        let expected: Theme = row
            .theme
            .parse()
            .unwrap_or_else(|e| panic!("{}: {e}", row.source));
        let got = classify_theme_at(&row.text, None, path_of(row));
        let ok = got == expected;
        f.overall.add(ok);
        match row.author_kind.as_str() {
            "bot" => f.bot.add(ok),
            _ => f.human.add(ok),
        }
        match row.placement.as_str() {
            "inline" => f.inline.add(ok),
            _ => f.top_level.add(ok),
        }
        if row.text.chars().count() < 100 {
            f.short.add(ok);
        }
        f.per_theme.entry(expected).or_default().add(ok);
        if got == Theme::Other && expected != Theme::Other {
            f.false_other += 1;
        }
    }
    f
}

fn print(name: &str, f: &Figures) {
    println!("== {name} ==");
    println!("overall   {}", f.overall);
    println!("bot       {}", f.bot);
    println!("human     {}", f.human);
    println!("inline    {}", f.inline);
    println!("top-level {}", f.top_level);
    println!("short     {}  (< 100 chars)", f.short);
    println!("labelled with a theme, answered other: {}", f.false_other);
    for (theme, t) in &f.per_theme {
        println!("  {:<20} {t}", theme.as_str());
    }
}

fn part<'a>(rows: &'a [Row], split: &str) -> Vec<&'a Row> {
    rows.iter().filter(|r| r.split == split).collect()
}

/// The pairs of item ids that `group` puts in one cluster when each comment
/// is an item with `theme_of`'s theme, all comments of one pull request on
/// one file (so that only their themes decide whether they cluster).
fn clustered_pairs(rows: &[&Row], theme_of: impl Fn(&Row) -> Theme) -> BTreeSet<(String, String)> {
    let items: Vec<ClusterItem> = rows
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let file = format!("{}.txt", row.source.replace(['/', ':', '.'], "_"));
            ClusterItem::new(format!("{i:03}"), Some(&file), theme_of(row))
        })
        .collect();
    let mut pairs = BTreeSet::new();
    for cluster in group(&items).clusters {
        for (k, a) in cluster.item_ids.iter().enumerate() {
            for b in &cluster.item_ids[k + 1..] {
                pairs.insert((a.clone(), b.clone()));
            }
        }
    }
    pairs
}

/// Pairwise precision, recall and F1 of the clusters formed with the
/// classifier's themes against those formed with the labelled themes, and
/// how many pairs each has.
fn cluster_agreement(rows: &[&Row]) -> (f64, f64, f64, usize, usize) {
    let truth = clustered_pairs(rows, |r| r.theme.parse().unwrap_or(Theme::Other));
    let predicted = clustered_pairs(rows, |r| classify_theme_at(&r.text, None, path_of(r)));
    let both = truth.intersection(&predicted).count() as f64;
    let precision = if predicted.is_empty() {
        0.0
    } else {
        both / predicted.len() as f64
    };
    let recall = if truth.is_empty() {
        0.0
    } else {
        both / truth.len() as f64
    };
    let f1 = if precision + recall == 0.0 {
        0.0
    } else {
        2.0 * precision * recall / (precision + recall)
    };
    (precision, recall, f1, predicted.len(), truth.len())
}

#[test]
fn clusters_with_the_classifier_s_themes_agree_with_those_of_the_labels() {
    let rows = corpus();
    for split in ["dev", "held-out"] {
        let (precision, recall, f1, predicted, truth) = cluster_agreement(&part(&rows, split));
        println!(
            "{split}: pairwise cluster F1 {f1:.2} (precision {precision:.2}, recall {recall:.2}; \
             {predicted} pairs with the classifier's themes, {truth} with the labels)"
        );
    }
    // With the labels as themes the clusters are the labels' own: the
    // measure is a real comparison, not a constant.
    let held = part(&rows, "held-out");
    let truth = clustered_pairs(&held, |r| r.theme.parse().unwrap_or(Theme::Other));
    assert!(
        !truth.is_empty(),
        "no two held-out comments share a theme and a pull request"
    );
    let (_, _, f1, _, _) = cluster_agreement(&held);
    assert!(
        f1 >= HELD_OUT_CLUSTER_F1_FLOOR,
        "held-out pairwise cluster F1 {f1:.2} < {HELD_OUT_CLUSTER_F1_FLOOR}"
    );
}

#[test]
fn every_row_is_well_formed_and_in_the_split_its_hash_gives() {
    let rows = corpus();
    assert!(rows.len() >= 50, "only {} comments", rows.len());
    for row in &rows {
        assert!(row.theme.parse::<Theme>().is_ok(), "{}", row.theme);
        assert!(
            row.source.starts_with("https://github.com/")
                || row.source.starts_with("https://gitlab.com/"),
            "{}",
            row.source
        );
        assert!(matches!(row.author_kind.as_str(), "bot" | "human"));
        assert!(matches!(row.placement.as_str(), "inline" | "top-level"));
        assert!(!row.text.trim().is_empty());
        assert_eq!(row.split, split_of(row), "{}", row.source);
    }
}

#[test]
fn held_out_accuracy_does_not_drop() {
    let rows = corpus();
    let dev = measure(&part(&rows, "dev"));
    let held = measure(&part(&rows, "held-out"));
    print("dev", &dev);
    print("held-out", &held);
    // Misses are listed for the development part only: rules are never
    // written from held-out misses.
    for row in part(&rows, "dev") {
        let got = classify_theme_at(&row.text, None, path_of(row));
        if got.as_str() != row.theme {
            println!(
                "dev miss: expected {}, got {got}: {}",
                row.theme,
                row.text
                    .chars()
                    .take(120)
                    .collect::<String>()
                    .replace('\n', " ")
            );
        }
    }
    assert!(
        held.overall.rate() >= HELD_OUT_OVERALL_FLOOR,
        "held-out overall {} < {HELD_OUT_OVERALL_FLOOR}",
        held.overall
    );
    assert!(
        held.human.rate() >= HELD_OUT_HUMAN_FLOOR,
        "held-out human {} < {HELD_OUT_HUMAN_FLOOR}",
        held.human
    );
    assert!(
        held.bot.rate() >= HELD_OUT_BOT_FLOOR,
        "held-out bot {} < {HELD_OUT_BOT_FLOOR}",
        held.bot
    );
}
