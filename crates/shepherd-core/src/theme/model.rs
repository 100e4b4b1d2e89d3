//! The themes themselves, and the order that breaks ties between them.

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

    pub(super) fn index(self) -> usize {
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

/// The themes' two-letter names, for the rule tables.
pub(super) mod abbrev {
    pub(in crate::theme) use super::Theme::{
        Architecture as AR, Concurrency as CO, Documentation as DO, ErrorHandling as EH,
        Logging as LO, Naming as NA, Performance as PE, ResourceManagement as RM, Security as SE,
        Style as ST, Testing as TE, TypeSafety as TS, Validation as VA,
    };
}
