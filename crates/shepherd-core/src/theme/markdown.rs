//! The Markdown splitter: a comment cut into the places its words come from
//! (headline, body, quotes, code spans, fenced code, suggestions).

use super::markup::{strip_html_comments, strip_tags, strip_urls};
use super::prose::{
    identifier_words, is_ask, is_headline_candidate, is_plain_word, is_prose, is_title,
    prose_chunks, split_first_sentence, words,
};
use super::weights::{BODY, CODE_WORD, HEADLINE};

/// A run of words from one place of the comment.
pub(super) struct Segment {
    pub(super) words: Vec<String>,
    pub(super) multiplier: u32,
    /// Identifiers from code: a rule word also matches inside one
    /// (`RWMutex` holds `mutex`), since identifiers glue words together.
    pub(super) inside_identifiers: bool,
}

/// A comment split into the places words and code come from (module docs,
/// step 2).
pub(super) struct Parsed {
    /// The prose by sentence, in order, with each sentence's multiplier.
    pub(super) sentences: Vec<(String, u32)>,
    /// The sentences' words, in order, then the code-span words.
    pub(super) segments: Vec<Segment>,
    /// Indices into `segments`, heaviest first: a rule counts at most
    /// twice, and its heaviest matches are the ones that count.
    pub(super) by_weight: Vec<usize>,
    /// Fenced code, code spans and the suggestion argument, lowercased.
    pub(super) code: String,
    /// Whether a suggestion only rewrites prose.
    pub(super) prose_suggestion: bool,
    /// Whether the prose asks a question.
    pub(super) has_question: bool,
}

impl Parsed {
    pub(super) fn new(comment: &str, suggestion: Option<&str>) -> Parsed {
        let text = strip_html_comments(comment);
        let mut headline: Option<String> = None;
        let mut titled = false;
        let mut quoted = String::new();
        let mut body = String::new();
        let mut code = String::new();
        let mut code_words: Vec<String> = Vec::new();
        let mut suggestions: Vec<String> = Vec::new();
        let mut fence: Option<bool> = None; // Some(is a suggestion block)
        let mut details_depth: usize = 0;
        for line in text.lines() {
            let trimmed = line.trim_start();
            // A fence may open inside a quote (`> ```kotlin`): its lines are
            // code all the same.
            let unquoted = trimmed.trim_start_matches(['>', ' ']);
            if unquoted.starts_with("```") || unquoted.starts_with("~~~") {
                fence = match fence {
                    Some(_) => None,
                    None => Some(unquoted.trim_start_matches(['`', '~']).trim() == "suggestion"),
                };
                if fence == Some(true) {
                    suggestions.push(String::new());
                }
                continue;
            }
            if let Some(is_suggestion) = fence {
                code.push_str(&line.to_lowercase());
                code.push('\n');
                if is_suggestion {
                    if let Some(last) = suggestions.last_mut() {
                        last.push_str(line);
                        last.push('\n');
                    }
                }
                continue;
            }
            let opens = line.matches("<details").count();
            let closes = line.matches("</details").count();
            if details_depth == 0 && opens == 0 {
                let line = strip_tags(&strip_urls(line));
                let mut prose_line = String::new();
                for (i, piece) in line.split('`').enumerate() {
                    if i % 2 == 1 {
                        code.push_str(&piece.to_lowercase());
                        code.push('\n');
                        if is_plain_word(piece) {
                            // `gofmt`, `clippy`, `null`: a name used as a
                            // word of the sentence.
                            prose_line.push_str(piece);
                            prose_line.push(' ');
                        } else {
                            code_words.extend(identifier_words(piece));
                        }
                    } else {
                        prose_line.push_str(piece);
                        prose_line.push(' ');
                    }
                }
                let prose_line = prose_chunks(&prose_line.to_lowercase());
                if trimmed.starts_with('>') {
                    // A quote: context (what someone else wrote), not the
                    // reviewer's own words.
                    quoted.push_str(&prose_line);
                    quoted.push('\n');
                } else if headline.is_none() && is_headline_candidate(trimmed, &prose_line) {
                    titled = is_title(trimmed);
                    let (first, rest) = split_first_sentence(&prose_line);
                    headline = Some(first.to_owned());
                    body.push_str(rest);
                } else {
                    body.push_str(&prose_line);
                }
                body.push('\n');
            }
            details_depth = (details_depth + opens).saturating_sub(closes);
        }
        if let Some(s) = suggestion {
            code.push('\n');
            code.push_str(&s.to_lowercase());
            suggestions.push(s.to_owned());
        }
        let prose_suggestion = suggestions.iter().any(|s| is_prose(s));
        let mut sentences: Vec<(String, u32)> = Vec::new();
        if let Some(first) = headline {
            let multiplier = if titled || is_ask(&first) {
                HEADLINE
            } else {
                BODY
            };
            sentences.push((first, multiplier));
        }
        for sentence in body.split(['.', '!', '?', ';', '\n']) {
            let sentence = sentence.trim();
            if !sentence.is_empty() {
                let multiplier = if is_ask(sentence) { HEADLINE } else { BODY };
                sentences.push((sentence.to_owned(), multiplier));
            }
        }
        for sentence in quoted.split(['.', '!', '?', ';', '\n']) {
            let sentence = sentence.trim();
            if !sentence.is_empty() {
                sentences.push((sentence.to_owned(), CODE_WORD));
            }
        }
        let has_question =
            body.contains('?') || sentences.first().is_some_and(|(s, _)| s.contains('?'));
        let mut segments: Vec<Segment> = sentences
            .iter()
            .map(|(sentence, multiplier)| Segment {
                words: words(sentence),
                multiplier: *multiplier,
                inside_identifiers: false,
            })
            .collect();
        segments.push(Segment {
            words: code_words,
            multiplier: CODE_WORD,
            inside_identifiers: true,
        });
        let mut by_weight: Vec<usize> = (0..segments.len()).collect();
        by_weight.sort_by(|&a, &b| segments[b].multiplier.cmp(&segments[a].multiplier));
        Parsed {
            sentences,
            by_weight,
            has_question,
            segments,
            code,
            prose_suggestion,
        }
    }
}
