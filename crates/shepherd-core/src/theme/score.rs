//! Scoring a split comment: every rule matched against its places.

use super::markdown::Parsed;
use super::matcher::{count_substrings, matches_at, pair_bucket, rule_index, stem_of};
use super::model::Theme;
use super::substring_rules::{CODE_RULES, PROSE_SUBSTRING_RULES};
use super::weights::{
    BODY, CODE, CODE_WORD, HEADLINE, MAX_MATCHES_PER_RULE, PROSE_SUGGESTION_WEIGHT,
};

impl Parsed {
    pub(super) fn scores(&self) -> [u32; 14] {
        let mut scores = [0u32; 14];
        let index = rule_index();
        let mut matches = vec![0u32; index.rules.len()];
        let mut multipliers = vec![0u32; index.rules.len()];
        // Segments are heaviest first, so a rule's first matches are its
        // heaviest.
        for segment in self.by_weight.iter().map(|&i| &self.segments[i]) {
            for (i, word) in segment.words.iter().enumerate() {
                let mut seen: Vec<usize> = Vec::new();
                // Inside an identifier a rule word may start at any byte.
                let starts = if segment.inside_identifiers {
                    word.len()
                } else {
                    1
                };
                for (k, byte) in word.bytes().enumerate().take(starts.max(1)) {
                    if k > 0 && !word.is_char_boundary(k) {
                        continue;
                    }
                    let next = word.as_bytes().get(k + 1).copied();
                    let candidates = &index.by_first[pair_bucket(byte, next)];
                    let suffixes: &[usize] = if k == 0 { &index.by_suffix } else { &[] };
                    for &r in candidates.iter().chain(suffixes) {
                        if matches[r] >= MAX_MATCHES_PER_RULE || seen.contains(&r) {
                            continue;
                        }
                        let rule = &index.rules[r];
                        let hit = if k == 0 {
                            matches_at(&segment.words[i..], &rule.parts, segment.inside_identifiers)
                        } else {
                            rule.parts.len() == 1
                                && stem_of(rule.parts[0]).len() >= 4
                                && word[k..].starts_with(stem_of(rule.parts[0]))
                        };
                        if hit {
                            seen.push(r);
                            matches[r] += 1;
                            multipliers[r] += segment.multiplier;
                        }
                    }
                }
            }
        }
        for (rule, multiplier) in index.rules.iter().zip(&multipliers) {
            scores[rule.theme.index()] += rule.weight * multiplier;
        }
        // The characters of other scripts in the prose: a needle of another
        // script is only searched for when its first character occurs.
        let mut non_ascii: Vec<char> = self
            .sentences
            .iter()
            .flat_map(|(s, _)| s.chars())
            .filter(|c| !c.is_ascii())
            .collect();
        non_ascii.sort_unstable();
        non_ascii.dedup();
        for &(theme, needle, weight) in PROSE_SUBSTRING_RULES {
            let first = needle.chars().next().unwrap_or(' ');
            if !first.is_ascii() && non_ascii.binary_search(&first).is_err() {
                continue;
            }
            let mut left = MAX_MATCHES_PER_RULE;
            for multiplier in [HEADLINE, BODY, CODE_WORD] {
                for (sentence, _) in self.sentences.iter().filter(|(_, m)| *m == multiplier) {
                    let found = count_substrings(sentence, needle, left);
                    scores[theme.index()] += weight * found * multiplier;
                    left -= found;
                }
            }
        }
        for &(theme, needle, weight) in CODE_RULES {
            let matches = count_substrings(&self.code, needle, MAX_MATCHES_PER_RULE);
            scores[theme.index()] += weight * matches * CODE;
        }
        if self.prose_suggestion {
            scores[Theme::Documentation.index()] += PROSE_SUGGESTION_WEIGHT * BODY;
        }
        scores
    }

    /// A short approval or thanks that asks for nothing ("LGTM, thanks!",
    /// "Nice catch"): `other`, whatever words it mentions.
    pub(super) fn is_approval_only(&self) -> bool {
        const OPENERS: &[&str] = &[
            "lgtm",
            "nice",
            "thanks",
            "thank",
            "great",
            "approved",
            "approving",
            "awesome",
            "kudos",
            "ship",
            "good",
        ];
        const ASKS: &[&str] = &[
            "but", "however", "though", "please", "nit", "should", "could", "would", "consider",
            "maybe", "instead", "why", "not", "can", "must",
        ];
        let words: Vec<&str> = self
            .segments
            .iter()
            .filter(|s| !s.inside_identifiers)
            .flat_map(|s| s.words.iter().map(String::as_str))
            .collect();
        if words.is_empty() || words.len() > 15 {
            return false;
        }
        if self.has_question {
            return false;
        }
        let opens = words.iter().take(3).any(|w| OPENERS.contains(w))
            || words
                .windows(2)
                .take(2)
                .any(|w| w[0] == "looks" && matches!(w[1], "good" | "great" | "nice" | "fine"));
        opens && !words.iter().any(|w| ASKS.contains(w))
    }
}
