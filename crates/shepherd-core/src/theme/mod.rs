//! Theme categories of review feedback, and the lexical classifier that
//! assigns one when no agent does (SPEC section 5).
//!
//! The triage agent normally supplies a [`Theme`] as a byproduct of its answer.
//! The builtin provider has no agent, so [`classify_theme`] derives one from the
//! comment text and any suggested code. It is deliberately simple and fully
//! deterministic: the same input always gives the same theme, whatever the
//! letter case.
//!
//! # How the classifier scores
//!
//! 1. The comment is split into places (classification ignores letter case):
//!    - HTML comments, HTML tags, URLs and paths (a whitespace-separated chunk
//!      that looks like one: `src/auth/login.ts` says nothing about
//!      authentication) are dropped; collapsed `<details>…</details>`
//!      sections (bots' committable suggestions, agent prompts, tool output)
//!      are not read;
//!    - fenced code and the `suggestion` argument are code;
//!    - an inline code span is code, and its identifiers are words at half
//!      weight (`CODE_WORD`), string literals dropped; a span that is one
//!      plain lowercase word (`gofmt`) is a word of the sentence;
//!    - the rest is prose, cut into sentences. A bot's title (a bold line or
//!      a heading after its badge line) and a sentence that asks for
//!      something (it starts with an imperative: `Update the docstring`)
//!      weigh `HEADLINE`; other sentences `BODY`; quoted lines
//!      `CODE_WORD`.
//! 2. Prose is cut into words at every character that is not alphanumeric,
//!    and where Latin letters meet Chinese, Japanese or Korean script
//!    (`optional을` is `optional` and a particle); the words either side of
//!    a `->` correction are the text corrected, and become the word `typo`.
//!    Each word rule is a pattern of one or more words; `prefix*` matches
//!    words starting with `prefix`, `*suffix` words ending with `suffix`, any
//!    other word exactly (`log` does not match `login`; `logged in` reads as
//!    `login`). Inside identifiers a rule word of four or more letters also
//!    matches as part of a word (`RWMutex` holds `mutex`). Word rules also
//!    hold the common themes' words of Spanish, Portuguese, French and
//!    German; substring rules cover scripts without spaces (Chinese,
//!    Japanese, Korean) and Russian stems; code rules are substrings of code
//!    (`.unwrap()`, `mutex`).
//! 3. Each rule adds its weight times the place's multiplier for each match,
//!    counting at most two matches per rule (the heaviest), so one repeated
//!    word cannot drown the rest. A suggestion that only rewrites prose adds
//!    documentation weight; a comment on a documentation file
//!    ([`classify_theme_at`]) a little more.
//! 4. A short approval that asks for nothing is [`Theme::Other`]; so are
//!    remarks about the pull request itself (split it, rebase), which score
//!    `other` and win when they outscore every theme.
//! 5. The theme with the highest score wins; ties go to the theme earlier in
//!    [`TIE_BREAK`]. A best score below [`MIN_SCORE`] (a weight of one word in
//!    the body) gives [`Theme::Other`].
//!
//! Accuracy on real review comments is measured on a held-out corpus
//! (`tests/data/review_comments.jsonl`, `docs/clustering.md`).

mod classify;
mod markdown;
mod markup;
mod matcher;
mod model;
mod prose;
mod score;
mod substring_rules;
#[cfg(test)]
mod tests;
mod weights;
mod word_rules;

pub use classify::{classify_theme, classify_theme_at, is_doc_file, DOC_FILE_WEIGHT};
pub use model::{Theme, UnknownTheme, MIN_SCORE, TIE_BREAK};
