//! The matcher: the word rules indexed by their first bytes, and how a rule
//! word matches a word of the comment.

use super::model::Theme;
use super::word_rules::{PROCESS_RULES, WORD_RULES};

/// Whether `word` matches one pattern word: `prefix*` matches words starting
/// with `prefix`, `*suffix` words ending with `suffix`, anything else the
/// word exactly. Inside identifiers a pattern of four or more letters also
/// matches as a part of the word (`rwmutex` holds `mutex`).
fn word_matches(word: &str, part: &str, inside_identifiers: bool) -> bool {
    if let Some(prefix) = part.strip_suffix('*') {
        return word.starts_with(prefix)
            || (inside_identifiers && prefix.len() >= 4 && word.contains(prefix));
    }
    if let Some(suffix) = part.strip_prefix('*') {
        return word.ends_with(suffix);
    }
    word == part || (inside_identifiers && part.len() >= 4 && word.contains(part))
}

/// A word rule, its pattern cut into words.
pub(super) struct WordRule {
    pub(super) theme: Theme,
    pub(super) parts: Vec<&'static str>,
    pub(super) weight: u32,
}

/// The word rules ([`WORD_RULES`], and [`PROCESS_RULES`] as
/// [`Theme::Other`]), indexed by the first two bytes of their first word so
/// that a word is only compared with the rules it can start.
pub(super) struct RuleIndex {
    pub(super) rules: Vec<WordRule>,
    /// Rules by [`pair_bucket`] of their first two bytes.
    pub(super) by_first: Vec<Vec<usize>>,
    /// Rules whose first word is a `*suffix` pattern: tried on every word.
    pub(super) by_suffix: Vec<usize>,
}

/// A pattern word without its `*` (`validat*` → `validat`).
pub(super) fn stem_of(part: &str) -> &str {
    part.trim_end_matches('*')
}

/// A bucket per ASCII letter and digit, one for everything else.
const BUCKETS: usize = 37;

fn bucket_of(byte: u8) -> usize {
    match byte {
        b'a'..=b'z' => usize::from(byte - b'a'),
        b'0'..=b'9' => 26 + usize::from(byte - b'0'),
        _ => 36,
    }
}

/// The bucket of a word's first two bytes (`None`: the word has one byte).
pub(super) fn pair_bucket(first: u8, second: Option<u8>) -> usize {
    bucket_of(first) * (BUCKETS + 1) + second.map_or(BUCKETS, bucket_of)
}

pub(super) fn rule_index() -> &'static RuleIndex {
    static INDEX: std::sync::OnceLock<RuleIndex> = std::sync::OnceLock::new();
    INDEX.get_or_init(|| {
        let rules: Vec<WordRule> = WORD_RULES
            .iter()
            .copied()
            .chain(PROCESS_RULES.iter().map(|&(p, w)| (Theme::Other, p, w)))
            .map(|(theme, pattern, weight)| WordRule {
                theme,
                parts: pattern.split(' ').collect(),
                weight,
            })
            .collect();
        let mut by_first = vec![Vec::new(); BUCKETS * (BUCKETS + 1)];
        let mut by_suffix = Vec::new();
        for (i, rule) in rules.iter().enumerate() {
            let first = rule.parts.first().copied().unwrap_or("");
            if first.starts_with('*') {
                by_suffix.push(i);
            } else {
                let stem = stem_of(first).as_bytes();
                let b0 = stem.first().copied().unwrap_or(b' ');
                match stem.get(1) {
                    Some(&b1) => by_first[pair_bucket(b0, Some(b1))].push(i),
                    // `x` matches the one-byte word; `x*` any word from `x`.
                    None if first.ends_with('*') => {
                        for b in 0..=BUCKETS {
                            by_first[bucket_of(b0) * (BUCKETS + 1) + b].push(i);
                        }
                    }
                    None => by_first[pair_bucket(b0, None)].push(i),
                }
            }
        }
        RuleIndex {
            rules,
            by_first,
            by_suffix,
        }
    })
}

/// Whether `parts` match the words starting at `words[0]`.
pub(super) fn matches_at(words: &[String], parts: &[&str], inside_identifiers: bool) -> bool {
    words.len() >= parts.len()
        && words
            .iter()
            .zip(parts)
            .all(|(w, p)| word_matches(w, p, inside_identifiers))
}

pub(super) fn count_substrings(haystack: &str, needle: &str, limit: u32) -> u32 {
    let mut count = 0;
    for _ in haystack.match_indices(needle).take(limit as usize) {
        count += 1;
    }
    count
}
