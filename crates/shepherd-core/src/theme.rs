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

use serde::{Deserialize, Serialize};

/// The category of a review item (SPEC section 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Theme {
    /// Errors ignored, swallowed, unwrapped or badly propagated.
    ErrorHandling,
    /// Inputs not checked: empty, out of range, malformed.
    Validation,
    /// Types too loose: casts, `any`, lossy conversions.
    TypeSafety,
    /// Names of variables, functions and types.
    Naming,
    /// Time and memory spent needlessly.
    Performance,
    /// Tests missing, weak or flaky.
    Testing,
    /// Injection, secrets, authentication, untrusted data.
    Security,
    /// Doc comments, README, explanations.
    Documentation,
    /// Formatting, lints, idioms.
    Style,
    /// Structure, coupling, responsibilities.
    Architecture,
    /// Races, locks, shared state.
    Concurrency,
    /// Leaked or unreleased files, connections, memory.
    ResourceManagement,
    /// Log statements: missing, noisy, wrong level.
    Logging,
    /// None of the above.
    Other,
}

impl Theme {
    /// Every theme, in the order of SPEC section 5.
    pub const ALL: [Theme; 14] = [
        Theme::ErrorHandling,
        Theme::Validation,
        Theme::TypeSafety,
        Theme::Naming,
        Theme::Performance,
        Theme::Testing,
        Theme::Security,
        Theme::Documentation,
        Theme::Style,
        Theme::Architecture,
        Theme::Concurrency,
        Theme::ResourceManagement,
        Theme::Logging,
        Theme::Other,
    ];

    /// The kebab-case name (`error-handling`), as serde and the SPEC spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Theme::ErrorHandling => "error-handling",
            Theme::Validation => "validation",
            Theme::TypeSafety => "type-safety",
            Theme::Naming => "naming",
            Theme::Performance => "performance",
            Theme::Testing => "testing",
            Theme::Security => "security",
            Theme::Documentation => "documentation",
            Theme::Style => "style",
            Theme::Architecture => "architecture",
            Theme::Concurrency => "concurrency",
            Theme::ResourceManagement => "resource-management",
            Theme::Logging => "logging",
            Theme::Other => "other",
        }
    }

    fn index(self) -> usize {
        // The discriminants are 0..14 in declaration order, which is `ALL`'s order.
        self as usize
    }
}

impl std::fmt::Display for Theme {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A string that names no theme.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown theme `{value}`: expected one of error-handling, validation, type-safety, naming, performance, testing, security, documentation, style, architecture, concurrency, resource-management, logging, other")]
pub struct UnknownTheme {
    /// The rejected input, truncated to 64 characters.
    pub value: String,
}

impl std::str::FromStr for Theme {
    type Err = UnknownTheme;

    /// Parses a theme name. Lenient about what agents tend to write: case,
    /// surrounding whitespace, and `_` or spaces instead of `-` are accepted
    /// (`Error Handling`, `type_safety`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let normalized: String = s
            .trim()
            .chars()
            .map(|c| match c {
                '_' | ' ' => '-',
                c => c.to_ascii_lowercase(),
            })
            .collect();
        Theme::ALL
            .into_iter()
            .find(|t| t.as_str() == normalized)
            .ok_or_else(|| UnknownTheme {
                value: s.chars().take(64).collect(),
            })
    }
}

/// Below this best score, in rule weight counted as one match in the body,
/// the classifier answers [`Theme::Other`]: one weak word (`explain`, `loop`)
/// is not evidence of a theme.
pub const MIN_SCORE: u32 = 2;

/// The order that breaks ties between equal scores: the more specific, more
/// consequential themes first.
pub const TIE_BREAK: [Theme; 14] = [
    Theme::Security,
    Theme::Concurrency,
    Theme::ResourceManagement,
    Theme::Validation,
    Theme::ErrorHandling,
    Theme::TypeSafety,
    Theme::Testing,
    Theme::Performance,
    Theme::Logging,
    Theme::Documentation,
    Theme::Naming,
    Theme::Architecture,
    Theme::Style,
    Theme::Other,
];

/// Matches at most this many times per rule.
const MAX_MATCHES_PER_RULE: u32 = 2;

use Theme::{
    Architecture as AR, Concurrency as CO, Documentation as DO, ErrorHandling as EH, Logging as LO,
    Naming as NA, Performance as PE, ResourceManagement as RM, Security as SE, Style as ST,
    Testing as TE, TypeSafety as TS, Validation as VA,
};

/// Word rules over prose: (theme, pattern, weight). See the module docs for
/// the pattern syntax.
const WORD_RULES: &[(Theme, &str, u32)] = &[
    // error-handling
    (EH, "error*", 2),
    (EH, "err", 1),
    (EH, "error* handl*", 2),
    (EH, "unwrap*", 3),
    (EH, "expect", 1),
    (EH, "panic*", 3),
    (EH, "exception*", 3),
    (EH, "throw*", 2),
    (EH, "raise*", 2),
    (EH, "catch*", 2),
    (EH, "try", 1),
    (EH, "propagat*", 3),
    (EH, "swallow*", 3),
    (EH, "unhandled", 3),
    (EH, "handl*", 1),
    (EH, "fallible", 3),
    (EH, "infallible", 2),
    (EH, "result", 1),
    (EH, "fail*", 1),
    (EH, "crash*", 2),
    (EH, "silently", 2),
    (EH, "ignor*", 1),
    (EH, "rejection", 2),
    (EH, "recover*", 2),
    (EH, "fallback", 1),
    (EH, "bubbl*", 1),
    (EH, "errno", 2),
    (EH, "stack trace", 1),
    (EH, "error message*", 1),
    (EH, "on error", 2),
    (EH, "on failure", 2),
    (EH, "fail* closed", 3),
    (EH, "fail* open", 2),
    (EH, "cannot be", 1),
    (EH, "exit code*", 2),
    (EH, "exit status*", 2),
    (EH, "return code*", 2),
    // validation
    (VA, "validat*", 3),
    (VA, "invalid", 2),
    (VA, "input*", 1),
    (VA, "empty", 2),
    (VA, "blank", 1),
    (VA, "negative", 2),
    (VA, "range", 1),
    (VA, "out of range", 2),
    (VA, "bound*", 1),
    (VA, "null", 1),
    (VA, "nil", 1),
    (VA, "none", 1),
    (VA, "missing", 1),
    (VA, "malformed", 3),
    (VA, "check*", 1),
    (VA, "guard*", 1),
    (VA, "precondition*", 2),
    (VA, "constraint*", 1),
    (VA, "required", 1),
    (VA, "reject*", 1),
    (VA, "schema*", 2),
    (VA, "limit*", 1),
    (VA, "length", 1),
    (VA, "too long", 1),
    (VA, "too large", 1),
    (VA, "zero", 1),
    (VA, "nan", 2),
    (VA, "finite", 1),
    (VA, "parse*", 1),
    (VA, "email*", 1),
    (VA, "enforce*", 1),
    (VA, "clamp*", 2),
    (VA, "well formed", 2),
    (VA, "sanity check*", 2),
    (VA, "edge case*", 1),
    (VA, "untrusted input", 1),
    (VA, "whitespace only", 2),
    (VA, "notnull", 3),
    (VA, "null check*", 3),
    (VA, "nil check*", 3),
    (VA, "not null", 2),
    (VA, "greater than", 1),
    (VA, "less than", 1),
    (VA, "positive", 1),
    (VA, "undefined", 1),
    (VA, "notblank", 3),
    (VA, "nullable false", 3),
    (VA, "non empty", 2),
    (VA, "bad input", 2),
    (VA, "bad request", 2),
    // type-safety
    (TS, "type", 2),
    (TS, "types", 2),
    (TS, "typed", 2),
    (TS, "typing*", 2),
    (TS, "typescript", 1),
    (TS, "typesafe", 3),
    (TS, "type safe*", 3),
    (TS, "untyped", 3),
    (TS, "any", 1),
    (TS, "as any", 3),
    (TS, "cast*", 3),
    (TS, "coerc*", 3),
    (TS, "transmute*", 3),
    (TS, "generic*", 2),
    (TS, "enum*", 2),
    (TS, "newtype*", 3),
    (TS, "nullable", 2),
    (TS, "non null assertion*", 3),
    (TS, "unknown", 1),
    (TS, "primitive*", 2),
    (TS, "stringly", 3),
    (TS, "u8", 1),
    (TS, "u16", 1),
    (TS, "u32", 1),
    (TS, "u64", 1),
    (TS, "i32", 1),
    (TS, "i64", 1),
    (TS, "usize", 1),
    (TS, "f64", 1),
    (TS, "lossy", 2),
    (TS, "truncat*", 2),
    (TS, "implicit*", 1),
    (TS, "annotat*", 2),
    (TS, "signature*", 1),
    (TS, "mypy", 3),
    (TS, "pyright", 3),
    (TS, "ts ignore", 3),
    (TS, "ts expect error", 3),
    (TS, "narrow*", 2),
    (TS, "discriminated", 2),
    (TS, "overflow*", 2),
    (TS, "phantom*", 2),
    (TS, "compile time", 1),
    (TS, "type check*", 2),
    // naming
    (NA, "name", 2),
    (NA, "names", 2),
    (NA, "named", 1),
    (NA, "naming", 3),
    (NA, "renam*", 3),
    (NA, "misnamed", 3),
    (NA, "misleading", 2),
    (NA, "descriptive", 2),
    (NA, "identifier*", 1),
    (NA, "camelcase", 3),
    (NA, "camel case", 3),
    (NA, "snake case", 3),
    (NA, "pascalcase", 3),
    (NA, "kebab case", 2),
    (NA, "abbreviat*", 2),
    (NA, "variable*", 1),
    (NA, "called", 1),
    (NA, "convention*", 1),
    (NA, "plural*", 2),
    (NA, "singular", 2),
    (NA, "verb", 2),
    (NA, "noun", 1),
    (NA, "hungarian", 3),
    (NA, "clearer", 1),
    (NA, "meaningful", 1),
    (NA, "vague", 1),
    (NA, "shadow*", 1),
    (NA, "generic name*", 4),
    (NA, "too generic", 2),
    (NA, "connotation*", 3),
    (NA, "specific name*", 2),
    (NA, "casing", 2),
    (NA, "prefix*", 1),
    (NA, "suffix*", 1),
    (NA, "function name*", 3),
    (NA, "method name*", 3),
    (NA, "variable name*", 3),
    (NA, "class name*", 3),
    (NA, "call it", 2),
    // performance
    (PE, "perf", 3),
    (PE, "performan*", 3),
    (PE, "slow*", 2),
    (PE, "fast*", 1),
    (PE, "speed*", 2),
    (PE, "efficien*", 3),
    (PE, "inefficien*", 3),
    (PE, "allocat*", 2),
    (PE, "realloc*", 2),
    (PE, "preallocat*", 3),
    (PE, "clone*", 1),
    (PE, "borrow*", 1),
    (PE, "wasteful", 2),
    (PE, "copy*", 1),
    (PE, "quadratic*", 3),
    (PE, "complexity", 2),
    (PE, "cach*", 2),
    (PE, "memoiz*", 3),
    (PE, "n 1", 3),
    (PE, "hot path*", 3),
    (PE, "hot loop*", 3),
    (PE, "in a loop", 2),
    (PE, "inside the loop", 2),
    (PE, "loop*", 1),
    (PE, "latenc*", 2),
    (PE, "throughput", 3),
    (PE, "redundant", 1),
    (PE, "repeated*", 1),
    (PE, "recompil*", 2),
    (PE, "every call", 2),
    (PE, "per call", 2),
    (PE, "per line", 2),
    (PE, "per item", 2),
    (PE, "per row", 2),
    (PE, "per iteration", 2),
    (PE, "per request", 2),
    (PE, "every iteration", 2),
    (PE, "every request", 1),
    (PE, "expensive", 2),
    (PE, "overhead", 2),
    (PE, "optimi*", 2),
    (PE, "bottleneck*", 3),
    (PE, "benchmark*", 2),
    (PE, "lazy", 1),
    (PE, "lazily", 1),
    (PE, "batch*", 2),
    (PE, "index*", 1),
    (PE, "full table scan*", 3),
    (PE, "capacity", 2),
    (PE, "lookup*", 1),
    (PE, "hashset", 2),
    (PE, "unnecessar*", 1),
    (PE, "rerender*", 3),
    (PE, "re render*", 3),
    (PE, "memory", 1),
    (PE, "cpu", 2),
    (PE, "round trip*", 2),
    (PE, "roundtrip*", 2),
    (PE, "invalidat*", 1),
    // testing
    (TE, "test*", 3),
    (TE, "untested", 3),
    (TE, "unit", 1),
    (TE, "coverage", 3),
    (TE, "covered", 1),
    (TE, "assert*", 3),
    (TE, "fault inject*", 3),
    (TE, "insta", 3),
    (TE, "mock*", 3),
    (TE, "stub*", 2),
    (TE, "fixture*", 3),
    (TE, "spec", 2),
    (TE, "specs", 2),
    (TE, "flak*", 3),
    (TE, "snapshot*", 2),
    (TE, "e2e", 3),
    (TE, "regression*", 2),
    (TE, "jest", 3),
    (TE, "pytest", 3),
    (TE, "vitest", 3),
    (TE, "proptest", 3),
    (TE, "fuzz*", 2),
    (TE, "harness", 1),
    // security
    (SE, "secur*", 3),
    (SE, "insecur*", 3),
    (SE, "vulnerab*", 3),
    (SE, "injection", 1),
    (SE, "inject*", 1),
    (SE, "sql injection", 3),
    (SE, "command injection", 3),
    (SE, "code injection", 3),
    (SE, "script injection", 3),
    (SE, "html injection", 3),
    (SE, "header injection", 3),
    (SE, "prompt injection", 3),
    (SE, "shell injection", 3),
    (SE, "ldap injection", 3),
    (SE, "xss", 3),
    (SE, "csrf", 3),
    (SE, "ssrf", 3),
    (SE, "sql", 1),
    (SE, "parameteriz*", 3),
    (SE, "interpolat*", 1),
    (SE, "sanitiz*", 3),
    (SE, "unsanitiz*", 3),
    (SE, "escap*", 1),
    (SE, "unescaped", 2),
    (SE, "secret*", 3),
    (SE, "password*", 3),
    (SE, "passwd", 3),
    (SE, "credential*", 3),
    (SE, "token*", 2),
    (SE, "api key*", 3),
    (SE, "apikey*", 3),
    (SE, "auth", 2),
    (SE, "authenticat*", 2),
    (SE, "authoriz*", 2),
    (SE, "unauthori*", 3),
    (SE, "permission*", 2),
    (SE, "privilege*", 3),
    (SE, "encrypt*", 2),
    (SE, "decrypt*", 2),
    (SE, "plaintext", 3),
    (SE, "bcrypt", 3),
    (SE, "argon2*", 3),
    (SE, "leak*", 1),
    (SE, "expos*", 1),
    (SE, "attacker*", 3),
    (SE, "malicious", 3),
    (SE, "untrusted", 3),
    (SE, "exploit*", 3),
    (SE, "traversal", 3),
    (SE, "path traversal", 2),
    (SE, "crafted", 2),
    (SE, "session cookie*", 3),
    (SE, "rce", 3),
    (SE, "eval", 2),
    (SE, "innerhtml", 3),
    (SE, "dangerouslysetinnerhtml", 3),
    (SE, "cve*", 3),
    (SE, "timing attack*", 3),
    (SE, "constant time", 3),
    (SE, "csp", 2),
    (SE, "cors", 2),
    (SE, "spoof*", 3),
    (SE, "forgery", 3),
    (SE, "open redirect*", 3),
    (SE, "crypto*", 2),
    (SE, "predictable", 2),
    (SE, "brute force*", 3),
    (SE, "rate limit*", 2),
    (SE, "denial of service", 3),
    (SE, "redos", 3),
    (SE, "sensitive", 2),
    (SE, "pii", 3),
    (SE, "shell", 1),
    // documentation
    (DO, "doc", 2),
    (DO, "docs", 3),
    (DO, "docstring*", 3),
    (DO, "doc comment*", 3),
    (DO, "documentation", 3),
    (DO, "document", 1),
    (DO, "documented", 2),
    (DO, "documenting", 2),
    (DO, "documents", 1),
    (DO, "undocumented", 3),
    (DO, "readme*", 3),
    (DO, "changelog*", 3),
    (DO, "jsdoc", 3),
    (DO, "tsdoc", 3),
    (DO, "rustdoc", 3),
    (DO, "javadoc", 3),
    (DO, "comment", 1),
    (DO, "comments", 1),
    (DO, "explain*", 1),
    (DO, "describ*", 1),
    (DO, "outdated", 1),
    (DO, "stale", 1),
    (DO, "example*", 1),
    (DO, "wording", 3),
    (DO, "grammar*", 2),
    (DO, "sentence", 2),
    (DO, "sentences", 2),
    (DO, "clarify", 1),
    (DO, "mention*", 1),
    (DO, "typo*", 3),
    (DO, "misspell*", 1),
    (DO, "rationale", 1),
    (DO, "tutorial*", 2),
    (DO, "help text", 2),
    (DO, "usage", 1),
    (DO, "man page*", 2),
    (DO, "markdown", 1),
    (DO, "a comment", 2),
    (DO, "this comment", 2),
    (DO, "add a comment", 4),
    (DO, "worth a comment", 4),
    (DO, "comma", 3),
    (DO, "commas", 3),
    (DO, "full stop", 3),
    (DO, "period", 1),
    (DO, "punctuation", 3),
    (DO, "capitaliz*", 2),
    (DO, "spelling", 3),
    (DO, "section", 2),
    (DO, "sections", 2),
    (DO, "paragraph*", 2),
    (DO, "heading*", 2),
    (DO, "hyperlink*", 2),
    (DO, "link", 1),
    (DO, "phrasing", 3),
    (DO, "phrase", 2),
    (DO, "rephrase", 2),
    (DO, "word", 1),
    (DO, "english", 2),
    (DO, "tense", 2),
    (DO, "capital", 2),
    (DO, "lowercase", 1),
    (DO, "uppercase", 1),
    (DO, "release note*", 3),
    (DO, "note", 1),
    (DO, "explanation*", 2),
    (DO, "unclear", 1),
    (DO, "instructions", 1),
    (DO, "i18n", 1),
    (DO, "localiz*", 1),
    (DO, "active voice", 3),
    (DO, "reads better", 3),
    (DO, "reads slightly better", 3),
    (DO, "guide", 1),
    (DO, "description", 1),
    (DO, "pr description", 3),
    (DO, "explain why", 2),
    (DO, "translat*", 2),
    // style
    (ST, "style*", 2),
    (ST, "styling", 2),
    (ST, "format", 1),
    (ST, "fmt", 2),
    (ST, "formatt*", 3),
    (ST, "indent*", 3),
    (ST, "whitespace", 3),
    (ST, "trailing", 2),
    (ST, "line length", 3),
    (ST, "long line*", 2),
    (ST, "lint*", 2),
    (ST, "clippy", 2),
    (ST, "prettier", 3),
    (ST, "rustfmt", 3),
    (ST, "gofmt", 3),
    (ST, "eslint", 2),
    (ST, "nit", 2),
    (ST, "nits", 2),
    (ST, "nitpick*", 1),
    (ST, "consisten*", 1),
    (ST, "inconsisten*", 1),
    (ST, "idiom*", 2),
    (ST, "markdownlint*", 3),
    (ST, "*lint", 2),
    (ST, "md0*", 3),
    (ST, "fence*", 2),
    (ST, "destructur*", 2),
    (ST, "shorter", 1),
    (ST, "simpler", 1),
    (ST, "easier to understand", 2),
    (ST, "easier to read", 2),
    (ST, "easier on the eye*", 3),
    (ST, "more readable", 2),
    (ST, "recommend*", 1),
    (ST, "newline*", 2),
    (ST, "line break*", 2),
    (ST, "commented out", 2),
    (ST, "leftover*", 1),
    (ST, "todo", 1),
    (ST, "pythonic", 2),
    (ST, "list comprehension*", 2),
    (ST, "f string*", 2),
    (ST, "optional chaining", 2),
    (ST, "one liner*", 2),
    (ST, "redundant", 1),
    (ST, "unnecessary", 1),
    (ST, "isort", 2),
    (ST, "ruff", 2),
    (ST, "flake8", 2),
    (ST, "hardcoded", 1),
    (ST, "unidiomatic", 2),
    (ST, "readab*", 2),
    (ST, "unused", 2),
    (ST, "dead code", 2),
    (ST, "import order", 2),
    (ST, "semicolon*", 2),
    (ST, "brace*", 2),
    (ST, "bracket*", 1),
    (ST, "parenthes*", 1),
    (ST, "quote*", 1),
    (ST, "tab", 2),
    (ST, "tabs", 2),
    (ST, "spaces", 1),
    (ST, "blank line*", 2),
    (ST, "early return*", 2),
    (ST, "guard clause*", 2),
    (ST, "nesting", 2),
    (ST, "nested", 1),
    (ST, "simplif*", 1),
    (ST, "verbose", 1),
    (ST, "cleaner", 1),
    (ST, "shorthand", 2),
    (ST, "ternary", 1),
    (ST, "magic number*", 1),
    (ST, "superfluous", 1),
    (ST, "cosmetic", 2),
    (ST, "alphabetic*", 1),
    (ST, "prefer", 1),
    (ST, "boilerplate", 1),
    // architecture
    (AR, "architect*", 3),
    (AR, "design*", 2),
    (AR, "coupling", 3),
    (AR, "coupled", 2),
    (AR, "decoupl*", 3),
    (AR, "tightly", 2),
    (AR, "abstraction*", 3),
    (AR, "abstract*", 1),
    (AR, "layer*", 2),
    (AR, "separation of concerns", 3),
    (AR, "concern*", 1),
    (AR, "responsibilit*", 2),
    (AR, "single responsibility", 3),
    (AR, "refactor*", 1),
    (AR, "module*", 1),
    (AR, "modular*", 2),
    (AR, "dependency inject*", 5),
    (AR, "depend*", 1),
    (AR, "circular*", 2),
    (AR, "cyclic", 2),
    (AR, "god object*", 3),
    (AR, "god class*", 3),
    (AR, "monolith*", 2),
    (AR, "extract*", 1),
    (AR, "duplicat*", 2),
    (AR, "dry", 2),
    (AR, "reus*", 2),
    (AR, "internal implementation", 3),
    (AR, "internal", 1),
    (AR, "public", 1),
    (AR, "drift*", 1),
    (AR, "another file", 2),
    (AR, "separate file*", 2),
    (AR, "service layer", 3),
    (AR, "shared constant*", 2),
    (AR, "helper*", 1),
    (AR, "util*", 1),
    (AR, "move this", 2),
    (AR, "move it", 2),
    (AR, "one place", 2),
    (AR, "single place", 2),
    (AR, "separate", 1),
    (AR, "package*", 1),
    (AR, "encapsulat*", 2),
    (AR, "business logic", 3),
    (AR, "controller*", 1),
    (AR, "service*", 1),
    (AR, "pattern*", 1),
    (AR, "interface*", 1),
    (AR, "trait*", 1),
    (AR, "public api", 2),
    (AR, "api surface", 2),
    (AR, "belong*", 2),
    (AR, "centraliz*", 2),
    (AR, "scattered", 2),
    (AR, "spread across", 2),
    (AR, "structur*", 1),
    (AR, "inheritance", 2),
    (AR, "composition", 2),
    (AR, "dependency inversion", 3),
    (AR, "domain*", 1),
    (AR, "cohesion", 3),
    (AR, "cohesive", 3),
    (AR, "split*", 1),
    // concurrency
    (CO, "concurren*", 3),
    (CO, "race", 3),
    (CO, "races", 3),
    (CO, "racy", 3),
    (CO, "deadlock*", 3),
    (CO, "livelock*", 3),
    (CO, "mutex*", 3),
    (CO, "lock", 2),
    (CO, "locks", 2),
    (CO, "locking", 2),
    (CO, "locked", 2),
    (CO, "unlock*", 2),
    (CO, "atomic*", 3),
    (CO, "synchroniz*", 3),
    (CO, "unsynchroniz*", 3),
    // A bare "thread" is as often a chat or review thread as a thread of
    // execution: only its concurrent senses count.
    (CO, "between threads", 3),
    (CO, "across threads", 3),
    (CO, "multiple threads", 3),
    (CO, "two threads", 3),
    (CO, "other threads", 2),
    (CO, "worker thread*", 3),
    (CO, "thread pool*", 2),
    (CO, "background thread*", 2),
    (CO, "main thread", 2),
    (CO, "dead lock*", 3),
    (CO, "threading", 3),
    (CO, "multithread*", 3),
    (CO, "thread safe*", 3),
    (CO, "parallel*", 2),
    (CO, "async*", 1),
    (CO, "await*", 1),
    (CO, "spawn*", 2),
    (CO, "goroutine*", 3),
    (CO, "channel*", 1),
    (CO, "semaphore*", 3),
    (CO, "interleav*", 3),
    (CO, "toctou", 3),
    (CO, "send sync", 3),
    (CO, "sync", 1),
    (CO, "volatile", 2),
    (CO, "contention", 3),
    (CO, "contended", 3),
    (CO, "reentran*", 2),
    (CO, "shared state", 3),
    (CO, "shared mutable", 3),
    (CO, "simultaneous*", 2),
    (CO, "at the same time", 2),
    (CO, "promise all", 2),
    (CO, "blocking", 2),
    (CO, "critical section*", 3),
    (CO, "memory ordering", 3),
    (CO, "condvar*", 3),
    // resource-management
    (RM, "leak*", 2),
    (RM, "close", 2),
    (RM, "closes", 1),
    (RM, "closed", 1),
    (RM, "closing", 1),
    (RM, "not closing", 2),
    (RM, "not closed", 2),
    (RM, "unclosed", 3),
    (RM, "never closed", 3),
    (RM, "not closed", 3),
    (RM, "release*", 1),
    (RM, "dispos*", 2),
    (RM, "cleanup", 3),
    (RM, "clean up", 2),
    (RM, "cleaned up", 2),
    (RM, "drop", 2),
    (RM, "dropped", 1),
    (RM, "raii", 3),
    (RM, "destructor*", 3),
    (RM, "finaliz*", 2),
    (RM, "finally", 1),
    (RM, "file handle*", 3),
    (RM, "descriptor*", 3),
    (RM, "fd", 2),
    (RM, "fds", 2),
    (RM, "socket*", 1),
    (RM, "connection*", 1),
    (RM, "pool*", 2),
    (RM, "exhaust*", 3),
    (RM, "unbounded", 2),
    (RM, "grow*", 1),
    (RM, "memory", 1),
    (RM, "oom", 3),
    (RM, "out of memory", 3),
    (RM, "freed", 2),
    (RM, "deallocat*", 3),
    (RM, "reclaim*", 2),
    (RM, "lifecycle", 2),
    (RM, "context manager*", 3),
    (RM, "with statement", 3),
    (RM, "defer", 3),
    (RM, "using statement", 3),
    (RM, "try with resources", 3),
    (RM, "listener*", 1),
    (RM, "unmount*", 1),
    (RM, "unsubscrib*", 3),
    (RM, "subscription*", 1),
    (RM, "timer*", 1),
    (RM, "temp file*", 2),
    (RM, "tempfile*", 2),
    (RM, "temporary file*", 2),
    (RM, "dangling", 2),
    (RM, "zombie*", 3),
    (RM, "orphan*", 2),
    (RM, "disk space", 2),
    (RM, "resource*", 2),
    (RM, "acquir*", 1),
    // logging
    (LO, "log", 3),
    (LO, "logs", 3),
    (LO, "logged", 3),
    (LO, "logging", 3),
    (LO, "logger*", 3),
    (LO, "log level*", 3),
    (LO, "level", 1),
    (LO, "print statement*", 2),
    (LO, "printf", 2),
    (LO, "warning", 1),
    (LO, "spam*", 2),
    (LO, "trace", 1),
    (LO, "*logger", 3),
    (LO, "debug", 1),
    (LO, "tracing", 3),
    (LO, "span*", 1),
    (LO, "println*", 2),
    (LO, "eprintln*", 2),
    (LO, "print", 1),
    (LO, "console", 2),
    (LO, "verbos*", 1),
    (LO, "noisy", 2),
    (LO, "telemetry", 2),
    (LO, "observab*", 1),
    (LO, "metric*", 1),
    (LO, "warn", 2),
    (LO, "info", 1),
    (LO, "stdout", 1),
    (LO, "stderr", 1),
    // More English, from general usage in reviews rather than from the
    // corpus: the documentation and style vocabulary that reviewers use for
    // text and for small edits of code.
    (DO, "reword*", 3),
    (DO, "spelled", 2),
    (DO, "spelt", 2),
    (DO, "clarif*", 1),
    (DO, "verbiage", 3),
    (DO, "wordy", 2),
    (DO, "doc string*", 3),
    (DO, "code comment*", 3),
    (DO, "inline comment*", 2),
    (DO, "api doc*", 3),
    (DO, "godoc", 3),
    (DO, "doxygen", 3),
    (DO, "docs page*", 3),
    (DO, "wiki", 1),
    (DO, "faq", 2),
    (DO, "prose", 2),
    (DO, "missing word*", 3),
    (DO, "extra word*", 3),
    (DO, "repeated word*", 3),
    (DO, "duplicate word*", 3),
    (DO, "news entry", 3),
    (DO, "news fragment*", 3),
    (DO, "broken link*", 3),
    (DO, "dead link*", 3),
    (DO, "table of contents", 3),
    (DO, "comment says", 2),
    (DO, "the comment", 1),
    (DO, "missing period", 3),
    (DO, "trailing period", 3),
    (ST, "a constant", 2),
    (ST, "const", 1),
    (ST, "inline this", 2),
    (ST, "if else", 2),
    (ST, "80 columns", 3),
    (ST, "80 char*", 3),
    (ST, "100 char*", 3),
    (ST, "120 char*", 3),
    (ST, "line wrap*", 2),
    (ST, "wrap at", 2),
    (AR, "into a function", 2),
    (AR, "own function", 2),
    (AR, "deduplicat*", 2),
    (AR, "dedup*", 2),
    (AR, "private", 1),
    (AR, "be private", 2),
    (AR, "be public", 2),
    (AR, "visibility", 2),
    (AR, "pub crate", 2),
    (ST, "pep8", 3),
    (ST, "pep 8", 3),
    (ST, "golangci*", 2),
    (ST, "rubocop", 3),
    (ST, "checkstyle", 3),
    (ST, "spotless", 3),
    (ST, "clang format", 3),
    (ST, "extra space*", 3),
    (ST, "extra line*", 2),
    (ST, "empty line*", 2),
    (ST, "trailing space*", 3),
    (ST, "double space*", 2),
    (ST, "missing space", 2),
    (ST, "not used", 2),
    (ST, "never used", 2),
    (ST, "unused import*", 3),
    (ST, "wildcard import*", 2),
    (ST, "not needed", 1),
    (ST, "no need", 1),
    (ST, "can be removed", 1),
    (ST, "concise", 2),
    (ST, "succinct", 2),
    (ST, "legib*", 2),
    (ST, "clutter*", 2),
    (ST, "tidy", 2),
    (ST, "tidier", 2),
    (ST, "arrow function*", 2),
    (ST, "template literal*", 2),
    (ST, "code style", 2),
    (NA, "name it", 2),
    (NA, "better name*", 2),
    (LO, "debug print*", 3),
    (LO, "debug statement*", 3),
    (LO, "dbg", 2),
    (LO, "printed", 1),
    (LO, "printing", 1),
    // Words of other languages written with spaces (Spanish, Portuguese,
    // French, German): the common themes' words.
    (EH, "erro", 2),
    (EH, "erros", 2),
    (EH, "erreur*", 2),
    (EH, "fehler*", 2),
    (EH, "excepci*", 3),
    (EH, "exceção", 3),
    (EH, "exceções", 3),
    (EH, "ausnahme*", 3),
    (VA, "validaci*", 3),
    (VA, "validaç*", 3),
    (VA, "validier*", 3),
    (NA, "nombre*", 1),
    (NA, "renombr*", 3),
    (NA, "nome", 1),
    (NA, "renomear", 3),
    (NA, "renommer", 3),
    (NA, "umbenenn*", 3),
    (NA, "benenn*", 3),
    (PE, "rendimiento", 3),
    (PE, "desempenho", 3),
    (PE, "leistung*", 2),
    (TE, "prueba*", 3),
    (SE, "seguridad", 3),
    (SE, "segurança", 3),
    (SE, "sicherheit*", 3),
    (SE, "sécurité", 3),
    (DO, "documentaci*", 3),
    (DO, "documentaç*", 3),
    (DO, "dokumentation", 3),
    (DO, "documentar*", 3),
    (DO, "documenter", 3),
    (DO, "dokumentier*", 3),
    (DO, "comentario*", 2),
    (DO, "comentário*", 2),
    (DO, "commentaire*", 2),
    (DO, "kommentar*", 2),
    (DO, "tippfehler", 3),
    (DO, "rechtschreib*", 3),
    (DO, "errata", 3),
    (DO, "faute de frappe", 3),
    (DO, "erro de digitação", 3),
    (ST, "estilo", 2),
    (ST, "formatierung", 3),
    (ST, "einrückung", 3),
    (ST, "formatação", 3),
    (AR, "duplicad*", 2),
    (AR, "dupliziert*", 2),
    (CO, "nebenläufig*", 3),
];

/// Word rules for remarks about the pull request rather than the code
/// (split it, rebase, the commit message): they score [`Theme::Other`], which
/// wins only when it scores more than every theme.
const PROCESS_RULES: &[(&str, u32)] = &[
    ("unrelated change*", 4),
    ("unrelated", 3),
    ("unrelated commit*", 4),
    ("separate pr*", 4),
    ("separate pull request*", 4),
    ("smaller pr*", 4),
    ("one pr", 3),
    ("split this pr", 4),
    ("split into", 1),
    ("rebase*", 3),
    ("merge conflict*", 3),
    ("commit message*", 3),
    ("squash*", 3),
    ("force push*", 3),
    ("cherry pick*", 2),
];

/// Substring rules over code (lowercased): (theme, needle, weight).
const CODE_RULES: &[(Theme, &str, u32)] = &[
    // error-handling
    (EH, ".unwrap()", 2),
    (EH, ".expect(", 2),
    (EH, "?;", 1),
    (EH, ")?", 1),
    (EH, "result<", 1),
    (EH, "err(", 1),
    (EH, ".map_err(", 2),
    (EH, "catch", 2),
    (EH, "try {", 1),
    (EH, "try:", 1),
    (EH, "except ", 1),
    (EH, "throw ", 1),
    (EH, "panic!", 2),
    (EH, "err != nil", 2),
    (EH, "ok_or", 1),
    // shell: stop when a command fails
    (EH, "|| return", 3),
    (EH, "|| exit", 3),
    (EH, "set -e", 2),
    // validation
    (VA, "validate", 2),
    (VA, "is_empty(", 1),
    (VA, "isnan(", 1),
    (VA, "isfinite(", 1),
    (VA, "ensure!", 1),
    (VA, ".trim()", 1),
    // type-safety
    (TS, "as any", 2),
    (TS, ": any", 2),
    (TS, "<any>", 2),
    (TS, "as unknown", 1),
    (TS, "transmute", 2),
    (TS, "try_from", 2),
    (TS, "try_into", 2),
    (TS, "@ts-ignore", 2),
    (TS, "@ts-expect-error", 2),
    (TS, "isinstance(", 1),
    (TS, "instanceof", 1),
    // performance
    (PE, "with_capacity", 2),
    (PE, "lazylock", 1),
    (PE, "once_cell", 1),
    (PE, "usememo", 1),
    (PE, "usecallback", 1),
    (PE, "lru", 1),
    (PE, "hashset", 1),
    // testing
    (TE, "#[test]", 3),
    (TE, "::test]", 3),
    (TE, "#[cfg(test)]", 3),
    (TE, "assert", 1),
    (TE, "describe(", 2),
    (TE, " it(", 2),
    (TE, ").tobe", 2),
    (TE, ".toequal(", 2),
    (TE, "mock", 1),
    (TE, "def test_", 3),
    (TE, "fn test_", 3),
    // security
    (SE, "sanitize", 2),
    (SE, "escape", 1),
    (SE, "bcrypt", 2),
    (SE, "argon2", 2),
    (SE, "timingsafeequal", 2),
    (SE, "constant_time", 2),
    (SE, "ct_eq", 2),
    (SE, "encodeuricomponent", 2),
    (SE, "textcontent", 1),
    (SE, "shlex.quote", 2),
    (SE, "secrets.", 1),
    // documentation
    (DO, "///", 2),
    (DO, "//!", 2),
    (DO, "/**", 2),
    (DO, "\"\"\"", 2),
    (DO, "@param", 2),
    (DO, "@returns", 2),
    (DO, "# errors", 1),
    (DO, "# examples", 1),
    // architecture
    (AR, "trait ", 1),
    (AR, "interface ", 1),
    // concurrency
    (CO, "mutex", 2),
    (CO, "rwlock", 2),
    (CO, "atomic", 2),
    (CO, ".lock()", 2),
    (CO, "arc<", 1),
    (CO, "spawn", 1),
    (CO, "await", 1),
    (CO, "semaphore", 2),
    (CO, "synchronized", 2),
    (CO, "threading.", 2),
    (CO, "go func", 2),
    (CO, "ctx.done()", 2),
    (CO, "waitgroup", 2),
    (CO, "select!", 1),
    (CO, "promise.all", 1),
    (CO, "ordering::", 2),
    // resource-management
    (RM, "drop(", 2),
    (RM, ".close(", 2),
    (RM, "close()", 2),
    (RM, "defer ", 2),
    (RM, "with open(", 2),
    (RM, "finally", 2),
    (RM, "dispose", 2),
    (RM, "using (", 2),
    (RM, "removeeventlistener", 2),
    (RM, "unsubscribe", 2),
    (RM, "cleartimeout", 2),
    (RM, "clearinterval", 2),
    (RM, "release(", 2),
    (RM, "try (", 2),
    // logging
    (LO, "log::", 3),
    (LO, "tracing::", 3),
    (LO, "console.log", 2),
    (LO, "console.error", 2),
    (LO, "console.warn", 2),
    (LO, "logger.", 3),
    (LO, "logging.", 3),
    (LO, "println!", 1),
    (LO, "eprintln!", 1),
    (LO, "info!(", 2),
    (LO, "warn!(", 2),
    (LO, "debug!(", 2),
    (LO, "error!(", 2),
    (LO, "trace!(", 2),
    (LO, "log.printf", 2),
    (LO, "slog", 1),
];

/// Substring rules over prose, for scripts written without spaces between
/// words (Chinese, Japanese, Korean), a few other languages' stems and
/// markers that are not words: (theme, needle, weight). Needles are
/// lowercase.
const PROSE_SUBSTRING_RULES: &[(Theme, &str, u32)] = &[
    // error-handling
    (EH, "错误处理", 3),
    (EH, "异常", 2),
    (EH, "エラー処理", 3),
    (EH, "エラーハンドリング", 3),
    (EH, "例外", 2),
    (EH, "에러", 3),
    (EH, "예외", 3),
    (EH, "오류", 2),
    (EH, "ошибк", 3),
    (EH, "%w", 3),
    // documentation markers of doc comments
    (DO, ":param", 3),
    (DO, "@param", 3),
    (DO, "@return", 3),
    // validation
    (VA, "校验", 3),
    (VA, "验证", 3),
    (VA, "判空", 3),
    (VA, "非空", 2),
    (VA, "バリデーション", 3),
    (VA, "検証", 2),
    (VA, "유효성", 3),
    (VA, "검증", 3),
    (VA, "валидац", 3),
    // type-safety
    (TS, "类型", 3),
    (TS, "型安全", 3),
    (TS, "타입", 3),
    // naming
    (NA, "命名", 3),
    (NA, "变量名", 3),
    (NA, "名前", 2),
    (NA, "네이밍", 3),
    (NA, "이름", 3),
    (NA, "переимен", 3),
    // performance
    (PE, "性能", 3),
    (PE, "パフォーマンス", 3),
    (PE, "성능", 3),
    (PE, "производительн", 3),
    // testing
    (TE, "测试", 3),
    (TE, "テスト", 3),
    (TE, "테스트", 3),
    (TE, "тест", 3),
    // security
    (SE, "安全", 2),
    (SE, "漏洞", 3),
    (SE, "セキュリティ", 3),
    (SE, "脆弱", 3),
    (SE, "보안", 3),
    (SE, "уязвим", 3),
    // documentation
    (DO, "文档", 3),
    (DO, "注释", 3),
    (DO, "描述", 2),
    (DO, "ドキュメント", 3),
    (DO, "説明", 2),
    (DO, "見出し", 2),
    (DO, "문서", 3),
    (DO, "설명", 2),
    (DO, "документац", 3),
    // style
    (ST, "格式", 3),
    (ST, "缩进", 3),
    (ST, "可读性", 3),
    (ST, "解构", 2),
    (ST, "フォーマット", 3),
    (ST, "インデント", 3),
    (ST, "読みやす", 3),
    (ST, "가독성", 3),
    (ST, "공백", 3),
    (ST, "пробел", 3),
    (ST, "отступ", 3),
    // architecture
    (AR, "架构", 3),
    (AR, "设计", 2),
    (AR, "設計", 2),
    (AR, "アーキテクチャ", 3),
    (AR, "책임", 2),
    (AR, "구조", 2),
    (AR, "архитектур", 3),
    // concurrency
    (CO, "并发", 3),
    (CO, "竞态", 3),
    (CO, "死锁", 3),
    (CO, "线程安全", 3),
    (CO, "スレッドセーフ", 3),
    (CO, "排他", 2),
    (CO, "デッドロック", 3),
    (CO, "동시성", 3),
    (CO, "데드락", 3),
    (CO, "гонк", 2),
    // resource-management
    (RM, "泄漏", 3),
    (RM, "泄露", 3),
    (RM, "リーク", 3),
    (RM, "누수", 3),
    (RM, "утечк", 3),
    // logging
    (LO, "日志", 3),
    (LO, "ログ", 3),
    (LO, "로그", 3),
    (LO, "логир", 3),
    // More words of Chinese, Japanese, Korean and Russian for the common
    // themes, from general usage (typo, comment, redundant, duplicate…).
    (EH, "报错", 2),
    (EH, "抛出", 2),
    (EH, "捕获", 2),
    (EH, "исключени", 3),
    (VA, "检查", 1),
    (VA, "为空", 2),
    (VA, "空值", 2),
    (VA, "チェック", 1),
    (VA, "空文字", 2),
    (VA, "검사", 2),
    (VA, "провер", 1),
    (NA, "函数名", 3),
    (NA, "方法名", 3),
    (NA, "変数名", 3),
    (NA, "関数名", 3),
    (NA, "メソッド名", 3),
    (NA, "변수명", 3),
    (NA, "함수명", 3),
    (NA, "메서드명", 3),
    (NA, "메소드명", 3),
    (NA, "назван", 2),
    (PE, "效率", 2),
    (PE, "耗时", 2),
    (PE, "缓存", 2),
    (PE, "効率", 2),
    (PE, "キャッシュ", 2),
    (PE, "효율", 2),
    (PE, "캐시", 2),
    (TE, "单测", 3),
    (TE, "用例", 2),
    (SE, "权限", 2),
    (SE, "鉴权", 3),
    (SE, "密码", 3),
    (SE, "密钥", 3),
    (SE, "認証", 2),
    (SE, "権限", 2),
    (SE, "인증", 2),
    (SE, "권한", 2),
    (SE, "безопасн", 3),
    (DO, "拼写", 3),
    (DO, "错别字", 3),
    (DO, "笔误", 3),
    (DO, "说明", 2),
    (DO, "誤字", 3),
    (DO, "脱字", 3),
    (DO, "コメント", 2),
    (DO, "오타", 3),
    (DO, "오탈자", 3),
    (DO, "주석", 3),
    (DO, "맞춤법", 3),
    (DO, "опечат", 3),
    (DO, "комментари", 2),
    (DO, "описани", 2),
    (ST, "多余", 2),
    (ST, "冗余", 2),
    (ST, "简化", 2),
    (ST, "风格", 3),
    (ST, "规范", 2),
    (ST, "冗長", 2),
    (ST, "不要", 2),
    (ST, "簡潔", 2),
    (ST, "컨벤션", 3),
    (ST, "포맷", 2),
    (ST, "불필요", 2),
    (ST, "форматир", 3),
    (ST, "лишн", 2),
    (ST, "избыточн", 2),
    (ST, "читаем", 3),
    (ST, "стил", 2),
    (AR, "解耦", 3),
    (AR, "耦合", 3),
    (AR, "抽取", 2),
    (AR, "抽离", 2),
    (AR, "复用", 2),
    (AR, "封装", 2),
    (AR, "职责", 2),
    (AR, "責務", 3),
    (AR, "分離", 2),
    (AR, "共通化", 3),
    (AR, "重複", 1),
    (AR, "중복", 1),
    (AR, "분리", 2),
    (AR, "추상화", 3),
    (AR, "의존성", 2),
    (AR, "дублир", 2),
    (AR, "рефактор", 1),
    (CO, "锁", 2),
    (CO, "ロック", 2),
    (CO, "동기화", 3),
    (CO, "блокировк", 2),
    (RM, "释放", 2),
    (RM, "解放", 2),
    (RM, "해제", 2),
    (LO, "打印", 2),
];

/// Weight multipliers by where a match was found. A rule's weight is
/// multiplied by [`BODY`] for an ordinary match in the prose.
const HEADLINE: u32 = 3;
/// The prose after the first sentence (see [`HEADLINE`]).
const BODY: u32 = 2;
/// Identifiers inside inline code spans: they name things, they do not ask
/// for anything.
const CODE_WORD: u32 = 1;
/// Code substrings ([`CODE_RULES`]).
const CODE: u32 = 2;

/// How much a comment on a documentation file leans to documentation.
pub const DOC_FILE_WEIGHT: u32 = 1;

/// Whether a path is a documentation file: Markdown, reStructuredText,
/// AsciiDoc or plain text, or anything under a `doc/` or `docs/` directory.
pub fn is_doc_file(path: &str) -> bool {
    let path = path.to_ascii_lowercase();
    let name = path.rsplit('/').next().unwrap_or(&path);
    let in_docs = path.split('/').any(|seg| seg == "doc" || seg == "docs");
    let ext = name.rsplit_once('.').map_or("", |(_, ext)| ext);
    in_docs
        || matches!(
            ext,
            "md" | "markdown" | "mdx" | "rst" | "adoc" | "asciidoc" | "txt"
        )
}

/// A suggestion that only changes prose (a doc comment, a README line) is
/// worth this much documentation weight.
const PROSE_SUGGESTION_WEIGHT: u32 = 3;

/// Classifies a review comment into a [`Theme`] by keywords and code signals.
///
/// `comment` is the comment body as the forge gives it (Markdown, possibly
/// with a review bot's `<details>` sections); `suggestion` is suggested code,
/// when the caller extracted it. See the module docs for the scoring rules.
/// Deterministic and case-insensitive; never panics.
pub fn classify_theme(comment: &str, suggestion: Option<&str>) -> Theme {
    classify_theme_at(comment, suggestion, None)
}

/// [`classify_theme`] for a comment on the file at `path` (a thread's file;
/// `None` for top-level comments). A comment on a documentation file
/// (`README.md`, `docs/…`, `*.rst`) leans to [`Theme::Documentation`] by
/// [`DOC_FILE_WEIGHT`], as much as one more documentation word would.
pub fn classify_theme_at(comment: &str, suggestion: Option<&str>, path: Option<&str>) -> Theme {
    let parsed = Parsed::new(comment, suggestion);
    if parsed.is_approval_only() {
        return Theme::Other;
    }
    let mut scores = parsed.scores();
    if path.is_some_and(is_doc_file) {
        scores[Theme::Documentation.index()] += DOC_FILE_WEIGHT * BODY;
    }
    let mut best = Theme::Other;
    let mut best_score = 0;
    for theme in TIE_BREAK {
        let score = scores[theme.index()];
        if score > best_score {
            best = theme;
            best_score = score;
        }
    }
    if best_score < MIN_SCORE * BODY {
        Theme::Other
    } else {
        best
    }
}

/// Per-theme scores, indexed by [`Theme`]'s declaration order, in units of
/// a rule weight times its place's multiplier.
#[cfg(test)]
fn theme_scores(comment: &str, suggestion: Option<&str>) -> [u32; 14] {
    Parsed::new(comment, suggestion).scores()
}

/// A run of words from one place of the comment.
struct Segment {
    words: Vec<String>,
    multiplier: u32,
    /// Identifiers from code: a rule word also matches inside one
    /// (`RWMutex` holds `mutex`), since identifiers glue words together.
    inside_identifiers: bool,
}

/// A comment split into the places words and code come from (module docs,
/// step 2).
struct Parsed {
    /// The prose by sentence, in order, with each sentence's multiplier.
    sentences: Vec<(String, u32)>,
    /// The sentences' words, in order, then the code-span words.
    segments: Vec<Segment>,
    /// Indices into `segments`, heaviest first: a rule counts at most
    /// twice, and its heaviest matches are the ones that count.
    by_weight: Vec<usize>,
    /// Fenced code, code spans and the suggestion argument, lowercased.
    code: String,
    /// Whether a suggestion only rewrites prose.
    prose_suggestion: bool,
    /// Whether the prose asks a question.
    has_question: bool,
}

impl Parsed {
    fn new(comment: &str, suggestion: Option<&str>) -> Parsed {
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

    fn scores(&self) -> [u32; 14] {
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
    fn is_approval_only(&self) -> bool {
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

/// Whether a prose line can be the headline: it has at least two words and
/// is not a review bot's badge line (`_⚠️ Potential issue_ | _🟡 Minor_`,
/// `![medium](…)`, `**Low Severity**`).
fn is_headline_candidate(raw: &str, prose: &str) -> bool {
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
fn is_ask(sentence: &str) -> bool {
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
fn is_title(raw: &str) -> bool {
    let raw = raw.trim();
    raw.starts_with('#') || (raw.starts_with("**") && raw.ends_with("**"))
}

/// The first sentence of a line and the rest.
fn split_first_sentence(line: &str) -> (&str, &str) {
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
fn prose_chunks(line: &str) -> String {
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
fn is_plain_word(span: &str) -> bool {
    !span.is_empty()
        && span
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// The words of an inline code span, lowercased: string literals dropped
/// (`'error_tracking'` is data, not a remark on errors), identifiers cut at
/// every non-alphanumeric character (`snake_case` gives two words).
fn identifier_words(span: &str) -> Vec<String> {
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
fn is_prose(text: &str) -> bool {
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

fn strip_html_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("<!--") {
        out.push_str(&rest[..start]);
        match rest[start..].find("-->") {
            Some(end) => rest = &rest[start + end + 3..],
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// HTML tags review bots and people use in comments.
const HTML_TAGS: &[&str] = &[
    "a",
    "b",
    "i",
    "u",
    "p",
    "br",
    "hr",
    "div",
    "span",
    "table",
    "tr",
    "td",
    "th",
    "thead",
    "tbody",
    "code",
    "pre",
    "strong",
    "em",
    "sub",
    "sup",
    "details",
    "summary",
    "img",
    "ul",
    "ol",
    "li",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "blockquote",
    "kbd",
    "picture",
    "source",
];

/// Drops HTML tags (`<table>`, `</code>`, `<br/>`) from a line, keeping
/// their text; other `<…>` (`<param-name>`, `Vec<u8>`) stay.
fn strip_tags(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(start) = rest.find('<') {
        let tail = &rest[start + 1..];
        let name: String = tail
            .trim_start_matches(['/', '!'])
            .chars()
            .take_while(char::is_ascii_alphanumeric)
            .collect::<String>()
            .to_ascii_lowercase();
        let is_tag = tail.starts_with("!--") || HTML_TAGS.contains(&name.as_str());
        match (is_tag, tail.find('>')) {
            (true, Some(end)) if !tail[..end].contains('<') => {
                out.push_str(&rest[..start]);
                out.push(' ');
                rest = &tail[end + 1..];
            }
            _ => {
                out.push_str(&rest[..=start]);
                rest = tail;
            }
        }
    }
    out.push_str(rest);
    out
}

fn strip_urls(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    loop {
        let next = [rest.find("http://"), rest.find("https://")]
            .into_iter()
            .flatten()
            .min();
        let Some(start) = next else { break };
        out.push_str(&rest[..start]);
        out.push(' ');
        let tail = &rest[start..];
        let end = tail
            .find(|c: char| c.is_whitespace() || matches!(c, ')' | '>' | ']' | '"' | '\''))
            .unwrap_or(tail.len());
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// Words of lowercased prose, cut at every non-alphanumeric character.
/// `log in`, `logged in` and `logged out` (a session, not a log) become
/// `login`.
fn words(prose: &str) -> Vec<String> {
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
struct WordRule {
    theme: Theme,
    parts: Vec<&'static str>,
    weight: u32,
}

/// The word rules ([`WORD_RULES`], and [`PROCESS_RULES`] as
/// [`Theme::Other`]), indexed by the first two bytes of their first word so
/// that a word is only compared with the rules it can start.
struct RuleIndex {
    rules: Vec<WordRule>,
    /// Rules by [`pair_bucket`] of their first two bytes.
    by_first: Vec<Vec<usize>>,
    /// Rules whose first word is a `*suffix` pattern: tried on every word.
    by_suffix: Vec<usize>,
}

/// A pattern word without its `*` (`validat*` → `validat`).
fn stem_of(part: &str) -> &str {
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
fn pair_bucket(first: u8, second: Option<u8>) -> usize {
    bucket_of(first) * (BUCKETS + 1) + second.map_or(BUCKETS, bucket_of)
}

fn rule_index() -> &'static RuleIndex {
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
fn matches_at(words: &[String], parts: &[&str], inside_identifiers: bool) -> bool {
    words.len() >= parts.len()
        && words
            .iter()
            .zip(parts)
            .all(|(w, p)| word_matches(w, p, inside_identifiers))
}

fn count_substrings(haystack: &str, needle: &str, limit: u32) -> u32 {
    let mut count = 0;
    for _ in haystack.match_indices(needle).take(limit as usize) {
        count += 1;
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (expected theme, comment, suggestion): review comments as bots and
    /// people write them, at least four per theme.
    const CASES: &[(Theme, &str, Option<&str>)] = &[
        // error-handling
        (
            Theme::ErrorHandling,
            "_⚠️ Potential issue_\n\n**Handle the error from `fs.readFile` instead of ignoring it.**\n\nIf the config file is missing, `err` is silently ignored and `data` is `undefined`, which crashes later in `JSON.parse`. Propagate the error to the caller.\n\n<details>\n<summary>🤖 Prompt for AI Agents</summary>\n\n```\nIn src/config/load.ts around lines 12 to 18, handle the error instead of ignoring it.\n```\n\n</details>",
            None,
        ),
        (
            Theme::ErrorHandling,
            "Using `.unwrap()` here will panic if the environment variable is not set. Consider returning a `Result` and using `?` to propagate the error.",
            Some("let port = env::var(\"PORT\")?;"),
        ),
        (
            Theme::ErrorHandling,
            "this swallows the exception, at least rethrow it",
            None,
        ),
        (
            Theme::ErrorHandling,
            "Empty catch block. If `JSON.parse` throws we lose the error entirely.",
            None,
        ),
        (
            Theme::ErrorHandling,
            "`fetchUser` returns a promise that is never awaited, so a rejection here becomes an unhandled rejection and kills the process on Node 15+.",
            None,
        ),
        (
            Theme::ErrorHandling,
            "err is assigned but never checked here",
            Some("if err != nil {\n\treturn fmt.Errorf(\"open config: %w\", err)\n}"),
        ),
        // validation
        (
            Theme::Validation,
            "_⚠️ Potential issue_\n\n**Validate `page` and `limit` query parameters.**\n\n`parseInt` returns `NaN` for non-numeric input and negative values are passed straight to the query. Reject values outside 1..=100 with a 400.",
            None,
        ),
        (
            Theme::Validation,
            "What happens if `items` is empty? `items[0]` will be undefined here.",
            None,
        ),
        (
            Theme::Validation,
            "nit: should we check that the email is well-formed before saving it?",
            None,
        ),
        (
            Theme::Validation,
            "The function does not validate that `start` is less than or equal to `end`. An inverted range would produce a negative duration.",
            None,
        ),
        (
            Theme::Validation,
            "Missing bounds check on `idx`: an out-of-range index from the request body will panic.",
            None,
        ),
        (
            Theme::Validation,
            "`amount` comes straight from the form; reject zero and negative amounts before creating the charge.",
            None,
        ),
        // type-safety
        (
            Theme::TypeSafety,
            "Avoid `as any` here, it defeats the type checker. Type the response as `ApiResponse<User>` instead.",
            None,
        ),
        (
            Theme::TypeSafety,
            "Casting `u64` to `u32` silently truncates large values. Use `u32::try_from(len)` and handle the overflow.",
            Some("let len = u32::try_from(len)?;"),
        ),
        (
            Theme::TypeSafety,
            "This should be an enum rather than a stringly-typed `status: string`; a typo like `'actve'` compiles fine today.",
            None,
        ),
        (
            Theme::TypeSafety,
            "`// @ts-ignore` hides a real type error: `user` may be undefined here.",
            None,
        ),
        (
            Theme::TypeSafety,
            "prefer a newtype for UserId so we can't mix it up with OrderId",
            None,
        ),
        (
            Theme::TypeSafety,
            "`data` is annotated as `dict` but callers pass a list; mypy would flag this if the module weren't excluded. Use a TypedDict.",
            None,
        ),
        // naming
        (
            Theme::Naming,
            "nit: `data` is a very generic name. Something like `pendingInvoices` would be more descriptive.",
            None,
        ),
        (
            Theme::Naming,
            "Rename `doStuff` to describe what it actually does, e.g. `syncInventory`.",
            None,
        ),
        (
            Theme::Naming,
            "The function name `getUser` is misleading: it creates the user when missing. `getOrCreateUser`?",
            None,
        ),
        (
            Theme::Naming,
            "Boolean names should read as predicates: `isEnabled` rather than `enabled`.",
            None,
        ),
        (
            Theme::Naming,
            "Use snake_case for Python function names (`loadConfig` -> `load_config`).",
            None,
        ),
        (
            Theme::Naming,
            "`tmp2` is not a meaningful variable name",
            None,
        ),
        (
            Theme::Naming,
            "_🧹 Nitpick (assertive)_\n\n**Inconsistent naming: `user_id` vs `userId`.**\n\nThe rest of the module uses camelCase; rename the field for consistency.",
            None,
        ),
        // performance
        (
            Theme::Performance,
            "This runs a query per order inside the loop, a classic N+1. Fetch all line items in one query with `WHERE order_id = ANY($1)`.",
            None,
        ),
        (
            Theme::Performance,
            "`Regex::new` is compiled on every call. Hoist it into a `LazyLock` static.",
            None,
        ),
        (
            Theme::Performance,
            "Unnecessary `.clone()` of the whole vector; borrow it instead.",
            None,
        ),
        (
            Theme::Performance,
            "Using `Array.includes` inside `filter` makes this O(n*m). Converting `allowedIds` to a `Set` first would make lookups O(1) and improve performance for large lists.",
            None,
        ),
        (
            Theme::Performance,
            "`sorted()` on every request for a list that never changes is wasteful, cache it at startup.",
            None,
        ),
        (
            Theme::Performance,
            "This re-renders the whole table on every keystroke. Memoize `rows`.",
            Some("const rows = useMemo(() => buildRows(data), [data]);"),
        ),
        // testing
        (
            Theme::Testing,
            "Can you add a unit test for the empty-input case?",
            None,
        ),
        (
            Theme::Testing,
            "This test is flaky: it depends on wall-clock time. Inject a fake clock.",
            None,
        ),
        (
            Theme::Testing,
            "_🛠️ Refactor suggestion_\n\n**Add test coverage for the retry path.**\n\nNone of the new tests exercise `retryWithBackoff` when the server returns 503. Consider adding a test with a mocked transport.",
            None,
        ),
        (
            Theme::Testing,
            "The assertion only checks that no exception was thrown; assert on the returned value too.",
            None,
        ),
        (
            Theme::Testing,
            "Snapshot needs updating after the header change (`cargo insta review`).",
            None,
        ),
        (
            Theme::Testing,
            "please use a pytest fixture instead of setting up the db in each test",
            None,
        ),
        // security
        (
            Theme::Security,
            "_⚠️ Potential issue_\n\n**SQL injection: `name` is interpolated into the query string.**\n\nUse a parameterized query (`db.query('SELECT * FROM users WHERE name = $1', [name])`).",
            None,
        ),
        (
            Theme::Security,
            "Don't log the raw token, this leaks credentials into our log aggregator.",
            None,
        ),
        (
            Theme::Security,
            "`innerHTML` with user-controlled content is an XSS vector; use `textContent`.",
            None,
        ),
        (
            Theme::Security,
            "Compare the HMAC with a constant-time comparison, otherwise this is open to timing attacks.",
            None,
        ),
        (
            Theme::Security,
            "The API key is hardcoded here and will end up in the repo. Read it from the environment or the secret manager.",
            None,
        ),
        (
            Theme::Security,
            "path comes from the request: `../` lets an attacker read arbitrary files (path traversal).",
            None,
        ),
        (
            Theme::Security,
            "**Reject path traversal in `name` before joining paths.**\n\nA crafted value like `../../x` escapes the root. Validate the id format.",
            None,
        ),
        (
            Theme::Security,
            "needs an auth check, anyone can hit this endpoint",
            None,
        ),
        // documentation
        (
            Theme::Documentation,
            "Please add a doc comment explaining what `ttl` is measured in (seconds? ms?).",
            None,
        ),
        (
            Theme::Documentation,
            "README still says `npm run start`, but the script was renamed to `dev`.",
            None,
        ),
        (
            Theme::Documentation,
            "The docstring says this returns `None` on failure, but it raises `ValueError` now. Update the docstring.",
            None,
        ),
        (
            Theme::Documentation,
            "typo: 'recieve' -> 'receive' in the comment above",
            None,
        ),
        (
            Theme::Documentation,
            "_🧹 Nitpick_\n\n**Document the new `--dry-run` flag in the CLI help text and CHANGELOG.**",
            None,
        ),
        (
            Theme::Documentation,
            "The `# Errors` section of the rustdoc is missing the timeout case.",
            None,
        ),
        // style
        (Theme::Style, "nit: trailing whitespace", None),
        (
            Theme::Style,
            "Run `cargo fmt`; the indentation in this match is off.",
            None,
        ),
        (
            Theme::Style,
            "This nesting is getting deep; an early return for the error case would read better.",
            None,
        ),
        (
            Theme::Style,
            "Unused import `HashMap` (clippy will flag this).",
            None,
        ),
        (
            Theme::Style,
            "Prefer `if let Some(x)` over `match` with a `None => {}` arm; it's the idiomatic form.",
            None,
        ),
        (
            Theme::Style,
            "Mixed tabs and spaces in this file, please run prettier.",
            None,
        ),
        // architecture
        (
            Theme::Architecture,
            "_🛠️ Refactor suggestion_\n\n**Move the pricing rules out of the HTTP handler.**\n\nThe handler now mixes request parsing, business logic and persistence. Extracting a `PricingService` would keep the layers separate and make the rules testable without HTTP.",
            None,
        ),
        (
            Theme::Architecture,
            "This module now depends on `ui/`, which creates a circular dependency between core and ui.",
            None,
        ),
        (
            Theme::Architecture,
            "The god object `AppState` keeps growing; can we split it by responsibility?",
            None,
        ),
        (
            Theme::Architecture,
            "Tight coupling between the parser and the database layer here. Consider introducing a trait so the parser doesn't know about Postgres.",
            None,
        ),
        (
            Theme::Architecture,
            "Same logic is duplicated in three controllers; it belongs in one place.",
            None,
        ),
        (
            Theme::Architecture,
            "Why does the CLI layer talk to the HTTP client directly? That bypasses the abstraction we built in `forge/`.",
            None,
        ),
        // concurrency
        (
            Theme::Concurrency,
            "_⚠️ Potential issue_\n\n**Race condition on `cache`.**\n\nTwo requests can both miss and both insert; the check-then-set isn't atomic. Use `entry()` or hold the lock across both operations.",
            None,
        ),
        (
            Theme::Concurrency,
            "Holding the `MutexGuard` across `.await` can deadlock (and makes the future `!Send`).",
            None,
        ),
        (
            Theme::Concurrency,
            "`counter` is shared between goroutines without synchronization.",
            None,
        ),
        (
            Theme::Concurrency,
            "This isn't thread-safe: `HashMap` behind an `Rc` is shared across worker threads.",
            None,
        ),
        (
            Theme::Concurrency,
            "Two pods can run this migration simultaneously; take an advisory lock first.",
            None,
        ),
        (
            Theme::Concurrency,
            "These three awaits run sequentially even though they are independent. Use `Promise.all` to run them concurrently.",
            None,
        ),
        // resource-management
        (
            Theme::ResourceManagement,
            "The file handle is never closed if `parse` throws. Use a `with` block.",
            None,
        ),
        (
            Theme::ResourceManagement,
            "`setInterval` is never cleared when the component unmounts, so it leaks.",
            None,
        ),
        (
            Theme::ResourceManagement,
            "Connections from the pool are not released on the error path; under load we'll exhaust the pool.",
            None,
        ),
        (
            Theme::ResourceManagement,
            "Use `defer resp.Body.Close()` right after the error check, otherwise the body leaks.",
            None,
        ),
        (
            Theme::ResourceManagement,
            "This temp dir is never cleaned up; use `tempfile::TempDir` so it's removed on drop.",
            None,
        ),
        (
            Theme::ResourceManagement,
            "The event listener added in `mount` is never removed, leaking a closure per re-mount.",
            None,
        ),
        // logging
        (
            Theme::Logging,
            "Please log the underlying error here before returning 500, otherwise we have nothing to debug with.",
            None,
        ),
        (
            Theme::Logging,
            "Leftover `console.log`, remove before merging.",
            None,
        ),
        (
            Theme::Logging,
            "This runs per request at `info` level and will flood the logs; `debug` is more appropriate.",
            None,
        ),
        (
            Theme::Logging,
            "Use `tracing::warn!` instead of `eprintln!` so it ends up in the structured logs.",
            None,
        ),
        (
            Theme::Logging,
            "Missing log line when the retry gives up.",
            None,
        ),
        (
            Theme::Logging,
            "use the request-scoped logger so the request id is attached",
            None,
        ),
        // other
        (Theme::Other, "LGTM 👍", None),
        (
            Theme::Other,
            "Why was this file moved? Was that intentional?",
            None,
        ),
        (Theme::Other, "Thanks! Can you rebase on main?", None),
        (
            Theme::Other,
            "This change looks unrelated to the PR, maybe split it into a separate one?",
            None,
        ),
        (
            Theme::Other,
            "Is this behaviour intended? I thought we agreed on the opposite last week.",
            None,
        ),
        (
            Theme::Other,
            "Could you add a screenshot of the new settings page?",
            None,
        ),
    ];

    #[test]
    fn classifies_every_realistic_comment() {
        let failures: Vec<String> = CASES
            .iter()
            .filter_map(|&(expected, comment, suggestion)| {
                let got = classify_theme(comment, suggestion);
                (got != expected).then(|| {
                    format!(
                        "expected {expected}, got {got} (scores {:?}) for {comment:?}",
                        theme_scores(comment, suggestion)
                    )
                })
            })
            .collect();
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    /// The four `src/auth/` threads of the demo scenario
    /// (`examples/scenarios/demo`): shell error paths in an authentication
    /// module, whose words (`password`, `token`, `logged in`) must not
    /// outweigh what they ask for (stop when a command fails).
    const DEMO_AUTH: &[(&str, &str)] = &[
        (
            "The result of `password_check` is ignored: a wrong password still opens a session. Stop on failure:\n\n```suggestion\n    password_check \"$1\" \"$2\" || return 1\n```",
            "    password_check \"$1\" \"$2\" || return 1",
        ),
        (
            "If the session file cannot be written (no `$SESSION_DIR`, a full disk), the id is still printed and the caller believes the user is logged in.\n\n```suggestion\n    echo \"$1\" > \"$SESSION_DIR/$id\" || return 1\n```",
            "    echo \"$1\" > \"$SESSION_DIR/$id\" || return 1",
        ),
        (
            "If `/dev/urandom` cannot be read, `seed` is empty and every token is `user-`: a guessable session id. Stop there; a fallback can come later:\n\n```suggestion\n    seed=$(od -An -N4 -tu4 /dev/urandom) || return 1\n    # TODO: fall back to another entropy source when /dev/urandom is missing\n```",
            "    seed=$(od -An -N4 -tu4 /dev/urandom) || return 1\n    # TODO: fall back to another entropy source when /dev/urandom is missing",
        ),
        (
            "When `$AUTH_DB` cannot be read, `grep` fails, `expected` is empty, and an unknown user with an empty password gets in. Fail closed:\n\n```suggestion\n    [ -r \"$AUTH_DB\" ] || { echo \"password_check: cannot read $AUTH_DB\" >&2; return 2; }\n    expected=$(grep \"^$1:\" \"$AUTH_DB\" | cut -d: -f2)\n    [ -n \"$expected\" ] && [ \"$2\" = \"$expected\" ]\n```",
            "    [ -r \"$AUTH_DB\" ] || { echo \"password_check: cannot read $AUTH_DB\" >&2; return 2; }\n    expected=$(grep \"^$1:\" \"$AUTH_DB\" | cut -d: -f2)\n    [ -n \"$expected\" ] && [ \"$2\" = \"$expected\" ]",
        ),
    ];

    #[test]
    fn the_demo_auth_threads_are_error_handling_with_or_without_the_suggestion() {
        for &(comment, suggestion) in DEMO_AUTH {
            for s in [Some(suggestion), None] {
                assert_eq!(
                    classify_theme(comment, s),
                    Theme::ErrorHandling,
                    "scores {:?} for {comment:?}",
                    theme_scores(comment, s)
                );
            }
        }
    }

    #[test]
    fn shell_failure_checks_are_error_handling() {
        for code in [
            "cp \"$src\" \"$dst\" || exit 1",
            "cd \"$dir\" || return",
            "set -e",
        ] {
            assert_eq!(
                classify_theme("", Some(code)),
                Theme::ErrorHandling,
                "{code}"
            );
        }
    }

    #[test]
    fn table_covers_every_theme_at_least_four_times() {
        assert!(CASES.len() >= 60, "only {} cases", CASES.len());
        for theme in Theme::ALL {
            let n = CASES.iter().filter(|c| c.0 == theme).count();
            assert!(n >= 4, "{theme} has only {n} cases");
        }
    }

    #[test]
    fn classification_is_case_insensitive() {
        for &(expected, comment, suggestion) in CASES {
            let upper = comment.to_uppercase();
            let upper_suggestion = suggestion.map(str::to_uppercase);
            assert_eq!(
                classify_theme(&upper, upper_suggestion.as_deref()),
                expected,
                "{upper:?}"
            );
        }
    }

    #[test]
    fn classification_is_deterministic() {
        let first: Vec<Theme> = CASES
            .iter()
            .map(|&(_, c, s)| classify_theme(c, s))
            .collect();
        for _ in 0..3 {
            let again: Vec<Theme> = CASES
                .iter()
                .rev()
                .map(|&(_, c, s)| classify_theme(c, s))
                .rev()
                .collect();
            assert_eq!(first, again);
        }
    }

    #[test]
    fn words_match_at_boundaries_not_inside_other_words() {
        // `log` must not match `login`, `catalog` or `blog`.
        assert_eq!(
            classify_theme(
                "The login and catalog pages link to the blog in `src/auth/login.ts`.",
                None
            ),
            Theme::Other
        );
        assert_eq!(classify_theme("log this", None), Theme::Logging);
    }

    #[test]
    fn suggestion_code_alone_gives_signals() {
        assert_eq!(
            classify_theme(
                "Consider this instead:",
                Some("let guard = state.lock().unwrap();\nlet counter = Arc::new(Mutex::new(0));")
            ),
            Theme::Concurrency
        );
        assert_eq!(
            classify_theme(
                "Suggested change:",
                Some("#[test]\nfn parses_empty() {\n    assert_eq!(parse(\"\"), None);\n}")
            ),
            Theme::Testing
        );
        assert_eq!(
            classify_theme("See below.", Some("log::warn!(\"retrying {attempt}\");")),
            Theme::Logging
        );
        assert_eq!(
            classify_theme(
                "Alternatively:",
                Some("let f = File::open(p).expect(\"open\");")
            ),
            Theme::ErrorHandling
        );
        // Without the suggestion these say nothing.
        assert_eq!(classify_theme("Consider this instead:", None), Theme::Other);
    }

    #[test]
    fn fenced_code_in_the_comment_is_code_not_prose() {
        let body =
            "Suggested change:\n\n```suggestion\nlet conn = pool.get().await?;\ndrop(conn);\n```\n";
        // `drop(` counts as a code signal, the words in the fence do not.
        assert_eq!(classify_theme(body, None), Theme::ResourceManagement);
        let scores = theme_scores(body, None);
        assert_eq!(scores[Theme::Performance.index()], 0, "`pool` is not prose");
    }

    #[test]
    fn collapsed_details_and_links_are_ignored() {
        let body = "_⚠️ Potential issue_\n\n**Propagate the error instead of discarding it.**\n\n<details>\n<summary>📝 Committable suggestion</summary>\n\n‼️ **IMPORTANT**\nCarefully review the code before committing. Ensure that it accurately replaces the highlighted code, contains no missing lines, and has no issues with indentation. Thoroughly test & benchmark the code.\n\n</details>\n\n<!-- fingerprinting:phantom:triton:style -->\n[Learn more](https://docs.example.com/style/logging)";
        assert_eq!(classify_theme(body, None), Theme::ErrorHandling);
        let scores = theme_scores(body, None);
        assert_eq!(scores[Theme::Style.index()], 0);
        assert_eq!(scores[Theme::Testing.index()], 0);
        assert_eq!(scores[Theme::Documentation.index()], 0);
    }

    #[test]
    fn a_single_weak_word_is_other() {
        assert_eq!(classify_theme("Can you explain this?", None), Theme::Other);
        assert_eq!(classify_theme("", None), Theme::Other);
        assert_eq!(classify_theme("", Some("")), Theme::Other);
    }

    #[test]
    fn ties_follow_the_fixed_order() {
        // `secret` (security, 3) against `log` (logging, 3): security comes first.
        assert_eq!(classify_theme("secret log", None), Theme::Security);
        assert_eq!(classify_theme("log secret", None), Theme::Security);
        // `test` (testing, 3) against `naming` (naming, 3): testing comes first.
        assert_eq!(classify_theme("naming test", None), Theme::Testing);
        let mut seen = TIE_BREAK.to_vec();
        seen.sort();
        assert_eq!(seen, Theme::ALL.to_vec(), "every theme appears once");
    }

    #[test]
    fn one_repeated_word_counts_at_most_twice() {
        let repeated = "log ".repeat(50);
        assert_eq!(
            theme_scores(&repeated, None)[Theme::Logging.index()],
            3 * HEADLINE * MAX_MATCHES_PER_RULE
        );
    }

    /// The traps of issue 18: a word in another sense is not the theme.
    #[test]
    fn word_senses_are_guarded() {
        let cases = [
            // a discussion thread, not a thread of execution
            ("Please reply in this thread once the threads above are resolved.", Theme::Other),
            // a session, not a log
            (
                "The user stays logged in after the password change; revoke the session token.",
                Theme::Security,
            ),
            // the DOM, not documentation
            (
                "`document.querySelector` runs before the DOM is ready, so it returns `null` and the handler crashes.",
                Theme::ErrorHandling,
            ),
            // fault injection in a test plan, not an injection attack
            (
                "Add a test that uses fault injection to simulate a full disk.",
                Theme::Testing,
            ),
            // a runtime assert, not a test
            (
                "`assert!(len > 0)` panics on empty input from the network; return an error instead.",
                Theme::ErrorHandling,
            ),
        ];
        for (comment, expected) in cases {
            assert_eq!(
                classify_theme(comment, None),
                expected,
                "{comment:?}: {:?}",
                theme_scores(comment, None)
            );
        }
    }

    #[test]
    fn string_literals_in_code_spans_say_nothing() {
        let comment = "Rename the metric `'error_tracking'` to something shorter.";
        assert_eq!(classify_theme(comment, None), Theme::Naming);
        assert_eq!(theme_scores(comment, None)[Theme::ErrorHandling.index()], 0);
    }

    #[test]
    fn compound_identifiers_are_read_inside() {
        for (comment, expected) in [
            (
                "Careful: `RWMutex` is held while `RLocking` again here.",
                Theme::Concurrency,
            ),
            (
                "A `TypedDict` would make these keys checked.",
                Theme::TypeSafety,
            ),
            ("markdownlint flags this line (MD013).", Theme::Style),
        ] {
            assert_eq!(
                classify_theme(comment, None),
                expected,
                "{comment:?}: {:?}",
                theme_scores(comment, None)
            );
        }
    }

    #[test]
    fn chinese_japanese_korean_and_russian_comments_get_themes() {
        for (comment, expected) in [
            (
                "这里缺少错误处理，读取失败时会直接崩溃。",
                Theme::ErrorHandling,
            ),
            ("この関数にテストを追加してください。", Theme::Testing),
            ("이 변수 이름이 너무 모호합니다.", Theme::Naming),
            ("удали лишние пробелы", Theme::Style),
        ] {
            assert_eq!(
                classify_theme(comment, None),
                expected,
                "{comment:?}: {:?}",
                theme_scores(comment, None)
            );
        }
    }

    #[test]
    fn more_languages_get_the_common_themes() {
        for (comment, expected) in [
            ("这里的注释写错了", Theme::Documentation),
            ("这段代码有点冗余，可以简化一下", Theme::Style),
            ("建议把这部分逻辑抽离出来复用", Theme::Architecture),
            ("このコメントは古いです", Theme::Documentation),
            ("この変数名を見直してください", Theme::Naming),
            ("오타가 있습니다", Theme::Documentation),
            ("불필요한 코드는 삭제해 주세요", Theme::Style),
            ("Опечатка в слове", Theme::Documentation),
            ("Falta documentar este parámetro.", Theme::Documentation),
            ("Bitte den Kommentar aktualisieren.", Theme::Documentation),
            ("Faltan pruebas para este caso.", Theme::Testing),
            ("Isso pode gerar um problema de segurança.", Theme::Security),
        ] {
            assert_eq!(
                classify_theme(comment, None),
                expected,
                "{comment:?}: {:?}",
                theme_scores(comment, None)
            );
        }
    }

    #[test]
    fn everyday_review_wording_for_text_layout_and_structure() {
        for (comment, expected) in [
            ("This sentence is hard to parse.", Theme::Documentation),
            ("Missing period at the end.", Theme::Documentation),
            ("Please reword this paragraph.", Theme::Documentation),
            ("Can we make this a constant?", Theme::Style),
            ("I'd inline this variable.", Theme::Style),
            ("Wrap at 80 columns please.", Theme::Style),
            (
                "This could be a `match` instead of the if/else chain.",
                Theme::Style,
            ),
            ("Extract this into a function.", Theme::Architecture),
            ("Can this be private?", Theme::Architecture),
        ] {
            assert_eq!(
                classify_theme(comment, None),
                expected,
                "{comment:?}: {:?}",
                theme_scores(comment, None)
            );
        }
    }

    #[test]
    fn a_suggestion_that_only_rewrites_prose_is_documentation() {
        let only_prose = "```suggestion\n/// Returns the parsed config, or an error when the file is missing.\n```";
        assert_eq!(classify_theme(only_prose, None), Theme::Documentation);
        let only_code = "```suggestion\nlet config = parse(&text).unwrap_or_default();\n```";
        assert_ne!(classify_theme(only_code, None), Theme::Documentation);
    }

    #[test]
    fn sed_and_arrow_corrections_are_documentation() {
        assert_eq!(
            classify_theme("s/recieve/receive/", None),
            Theme::Documentation
        );
        assert_eq!(
            classify_theme("recieve -> receive", None),
            Theme::Documentation
        );
        // A path is no correction.
        assert_eq!(classify_theme("see src/auth/login.ts", None), Theme::Other);
        // The words corrected are the text's, not the reviewer's: `log`
        // here is a word of the documentation, not a log statement.
        assert_eq!(
            classify_theme("Please write log -> `log` in the guide.", None),
            Theme::Documentation
        );
    }

    #[test]
    fn code_fenced_inside_a_quote_is_code() {
        let quoted = "I thought this was the idiom:\n\n> ```kotlin\n> data?.let {\n>     // run if not null, validate nothing\n> }\n> ```";
        let parsed = Parsed::new(quoted, None);
        assert!(parsed.code.contains("data?.let"), "{:?}", parsed.code);
        assert!(
            parsed
                .sentences
                .iter()
                .all(|(s, _)| !s.contains("validate")),
            "{:?}",
            parsed.sentences
        );
    }

    #[test]
    fn words_are_cut_where_latin_meets_cjk_script() {
        assert_eq!(
            words("optional을 써주시는게"),
            ["optional", "을", "써주시는게"]
        );
        assert_eq!(words("logを出す"), ["log", "を出す"]);
        // Latin letters with diacritics stay one word.
        assert_eq!(words("validação"), ["validação"]);
    }

    #[test]
    fn approvals_and_process_remarks_are_other() {
        for comment in [
            "LGTM, thanks! Nice work on the atomics.",
            "Thank you very much! These type annotations are very useful!",
            "Please rebase on main, there are merge conflicts.",
            "This PR has several unrelated changes; please split them into separate PRs.",
        ] {
            assert_eq!(
                classify_theme(comment, None),
                Theme::Other,
                "{comment:?}: {:?}",
                theme_scores(comment, None)
            );
        }
        assert_eq!(classify_theme("Good catch, thanks!", None), Theme::Other);
        // An approval that still asks for something is not only an approval.
        assert_eq!(
            classify_theme(
                "LGTM, but please rename `tmp` to something descriptive.",
                None
            ),
            Theme::Naming
        );
    }

    #[test]
    fn a_bot_title_and_a_request_weigh_more_than_an_aside() {
        // The title asks for validation; the body mentions an error on the way.
        let bot = "_⚠️ Potential issue_ | _🟡 Minor_\n\n**Reject negative timeouts.**\n\nOtherwise the request fails with an error later.";
        assert_eq!(classify_theme(bot, None), Theme::Validation);
        // The request is the second sentence.
        let human = "The docstring says this returns `None` on failure. Update the docstring.";
        assert_eq!(classify_theme(human, None), Theme::Documentation);
    }

    #[test]
    fn comments_on_documentation_files_lean_to_documentation() {
        let comment = "This sentence is hard to follow, maybe split it.";
        assert_eq!(
            classify_theme_at(comment, None, Some("docs/guide.md")),
            Theme::Documentation
        );
        assert!(is_doc_file("README.md"));
        assert!(is_doc_file("docs/api/index.html"));
        assert!(!is_doc_file("src/docstring.rs"));
        // A strong theme still wins on a documentation file.
        assert_eq!(
            classify_theme_at(
                "Hardcoded password in the example config.",
                None,
                Some("README.md")
            ),
            Theme::Security
        );
    }

    #[test]
    fn display_from_str_and_serde_agree() {
        for theme in Theme::ALL {
            let s = theme.to_string();
            assert_eq!(s.parse::<Theme>(), Ok(theme));
            let json = serde_json::to_string(&theme).unwrap();
            assert_eq!(json, format!("\"{s}\""));
            assert_eq!(serde_json::from_str::<Theme>(&json).unwrap(), theme);
        }
        assert_eq!(
            serde_json::to_string(&Theme::ResourceManagement).unwrap(),
            "\"resource-management\""
        );
    }

    #[test]
    fn from_str_is_lenient_about_case_and_separators() {
        assert_eq!(" Error Handling ".parse(), Ok(Theme::ErrorHandling));
        assert_eq!("type_safety".parse(), Ok(Theme::TypeSafety));
        assert_eq!("RESOURCE-MANAGEMENT".parse(), Ok(Theme::ResourceManagement));
        let err = "bugs".parse::<Theme>().unwrap_err();
        assert_eq!(err.value, "bugs");
        assert!(err.to_string().starts_with("unknown theme `bugs`"));
        assert!(serde_json::from_str::<Theme>("\"Error Handling\"").is_err());
    }

    #[test]
    fn theme_index_matches_all_order() {
        for (i, theme) in Theme::ALL.into_iter().enumerate() {
            assert_eq!(theme.index(), i);
        }
    }
}
