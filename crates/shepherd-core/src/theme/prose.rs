//! Prose: sentences, requests, titles, words, and where scripts change.

use super::markup::{strip_tags, strip_urls};

/// Whether a prose line can be the headline: it has at least two words and
/// is not a review bot's badge line (`_⚠️ Potential issue_ | _🟡 Minor_`,
/// `![medium](…)`, `**Low Severity**`).
pub(super) fn is_headline_candidate(raw: &str, prose: &str) -> bool {
    let raw = raw.trim();
    if raw.is_empty() || raw.starts_with("![") || (raw.starts_with('_') && raw.ends_with('_')) {
        return false;
    }
    let words = words(prose);
    if words.len() < 2 {
        return false;
    }
    !(words.len() == 2 && words[1] == "severity")
}

/// Whether a sentence is a request: it starts, after a polite or hedging
/// lead-in (`please`, `nit:`, `I'd`, `we should`), with an imperative verb
/// (`update the docstring`, `use a context manager`). What a comment asks
/// for weighs more than what it observes on the way.
pub(super) fn is_ask(sentence: &str) -> bool {
    const LEAD_INS: &[&str] = &[
        "please",
        "nit",
        "nitpick",
        "maybe",
        "perhaps",
        "suggestion",
        "i",
        "d",
        "would",
        "we",
        "you",
        "should",
        "could",
        "can",
        "let",
        "s",
        "lets",
        "also",
        "just",
        "so",
        "then",
        "ideally",
        "instead",
        "here",
        "minor",
        "optional",
    ];
    const VERBS: &[&str] = &[
        "add",
        "update",
        "use",
        "remove",
        "rename",
        "fix",
        "avoid",
        "consider",
        "move",
        "extract",
        "replace",
        "handle",
        "validate",
        "check",
        "document",
        "drop",
        "delete",
        "split",
        "wrap",
        "return",
        "log",
        "catch",
        "propagate",
        "make",
        "keep",
        "put",
        "prefer",
        "change",
        "include",
        "mention",
        "explain",
        "describe",
        "clarify",
        "reword",
        "test",
        "cover",
        "assert",
        "close",
        "release",
        "free",
        "reuse",
        "inline",
        "simplify",
        "guard",
        "reject",
        "sanitize",
        "escape",
        "lock",
        "revert",
        "specify",
        "pass",
        "declare",
        "annotate",
        "throw",
        "raise",
        "hoist",
        "cache",
        "rephrase",
        "format",
        "run",
        "sort",
        "limit",
        "clamp",
        "compile",
    ];
    let words = words(sentence);
    let first = words.iter().find(|w| !LEAD_INS.contains(&w.as_str()));
    first.is_some_and(|w| VERBS.contains(&w.as_str()))
}

/// Whether a line is a title: a Markdown heading or a line in bold, as
/// review bots head their comments (`**Propagate the error.**`).
pub(super) fn is_title(raw: &str) -> bool {
    let raw = raw.trim();
    raw.starts_with('#') || (raw.starts_with("**") && raw.ends_with("**"))
}

/// The first sentence of a line and the rest.
pub(super) fn split_first_sentence(line: &str) -> (&str, &str) {
    let end = [". ", "? ", "! ", ": "]
        .iter()
        .filter_map(|sep| line.find(sep).map(|i| i + 1))
        .min()
        .unwrap_or(line.len());
    line.split_at(end)
}

/// Drops paths from a lowercased prose line (a whitespace-separated chunk
/// with a `/` that looks like a path, so that `src/auth/login.ts` says
/// nothing about authentication); `s/teh/the` (a sed-style correction)
/// becomes the word `typo`; `try/catch`-like pairs stay words.
pub(super) fn prose_chunks(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut skip_next = false;
    for chunk in line.split_whitespace() {
        if std::mem::take(&mut skip_next) {
            continue;
        }
        if matches!(chunk, "->" | "→") {
            // `recieve -> receive`: a correction of the text. The words on
            // either side are the text corrected, not the reviewer's words
            // (`log -> \`log\``, in backquotes, says nothing about logging).
            let kept = out.trim_end().len();
            let word_start = out[..kept].rfind(' ').map_or(0, |i| i + 1);
            out.truncate(word_start);
            out.push_str("typo ");
            skip_next = true;
            continue;
        }
        if chunk.contains('/') {
            let slashes = chunk.matches('/').count();
            if chunk.starts_with("s/") && slashes >= 2 {
                out.push_str("typo ");
                continue;
            }
            let last = chunk.rsplit('/').next().unwrap_or("");
            let is_path = slashes >= 2
                || chunk.starts_with(['/', '.', '~'])
                || chunk.ends_with('/')
                || last.contains('.');
            if is_path {
                continue;
            }
        }
        out.push_str(chunk);
        out.push(' ');
    }
    out
}

/// Whether a code span is a single lowercase word (`gofmt`, `null`,
/// `async`) rather than an identifier or an expression.
pub(super) fn is_plain_word(span: &str) -> bool {
    !span.is_empty()
        && span
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// The words of an inline code span, lowercased: string literals dropped
/// (`'error_tracking'` is data, not a remark on errors), identifiers cut at
/// every non-alphanumeric character (`snake_case` gives two words).
pub(super) fn identifier_words(span: &str) -> Vec<String> {
    let mut kept = String::with_capacity(span.len());
    let mut quote: Option<char> = None;
    for c in span.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None => kept.push(c),
        }
    }
    words(&kept.to_lowercase())
}

/// Whether suggested text is prose (a rewritten sentence, doc comment or
/// heading) rather than code: comment markers aside, at least four words and
/// hardly any code punctuation.
pub(super) fn is_prose(text: &str) -> bool {
    let mut letters = 0usize;
    let mut punctuation = 0usize;
    let mut word_count = 0usize;
    for line in text.lines() {
        let line = line.trim_start();
        let line = ["///", "//!", "//", "/**", "/*", "*", "#", "--", "<!--", ">"]
            .iter()
            .find_map(|m| line.strip_prefix(m))
            .unwrap_or(line);
        let line = strip_tags(&strip_urls(line));
        word_count += line.split_whitespace().count();
        for c in line.chars() {
            if c.is_alphabetic() || c == ' ' {
                letters += 1;
            } else if matches!(
                c,
                ';' | '{'
                    | '}'
                    | '('
                    | ')'
                    | '='
                    | '<'
                    | '>'
                    | '['
                    | ']'
                    | '&'
                    | '|'
                    | '$'
                    | '"'
                    | '_'
            ) {
                punctuation += 1;
            }
        }
    }
    word_count >= 4 && letters > 0 && punctuation * 30 < letters
}

/// Words of lowercased prose, cut at every non-alphanumeric character.
/// `log in`, `logged in` and `logged out` (a session, not a log) become
/// `login`.
pub(super) fn words(prose: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in prose
        .split(|c: char| !c.is_alphanumeric())
        .flat_map(split_at_script_change)
        .filter(|w| !w.is_empty())
    {
        if matches!(w, "in" | "into" | "out")
            && out
                .last()
                .is_some_and(|prev| matches!(prev.as_str(), "log" | "logs" | "logged" | "logging"))
        {
            if let Some(prev) = out.last_mut() {
                *prev = "login".to_owned();
            }
        }
        out.push(w.to_owned());
    }
    out
}

/// Cuts a run of letters where it passes between Chinese, Japanese or
/// Korean script and any other: those scripts write no space before a
/// particle, so `optional을` and `logを` are a word and a particle.
fn split_at_script_change(run: &str) -> impl Iterator<Item = &str> {
    let mut cuts: Vec<usize> = Vec::new();
    let mut prev: Option<bool> = None;
    for (i, c) in run.char_indices() {
        let cjk = is_cjk(c);
        if prev.is_some_and(|p| p != cjk) {
            cuts.push(i);
        }
        prev = Some(cjk);
    }
    cuts.push(run.len());
    let mut start = 0;
    cuts.into_iter().map(move |end| {
        let piece = &run[start..end];
        start = end;
        piece
    })
}

/// Whether a character is of a script written without spaces between
/// words: kana, Han ideographs, Hangul.
fn is_cjk(c: char) -> bool {
    matches!(c,
        '\u{1100}'..='\u{11FF}'
        | '\u{3040}'..='\u{30FF}'
        | '\u{3130}'..='\u{318F}'
        | '\u{3400}'..='\u{4DBF}'
        | '\u{4E00}'..='\u{9FFF}'
        | '\u{AC00}'..='\u{D7AF}'
        | '\u{F900}'..='\u{FAFF}'
        | '\u{FF66}'..='\u{FF9F}')
}
