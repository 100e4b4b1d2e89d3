//! The run report (SPEC section 11): a Markdown document and its JSON twin,
//! built deterministically from the ledger's latest entries and what the run
//! recorded (rounds, the last CI verdict, the last classification, clusters,
//! failures).
//!
//! [`build`] turns a [`ReportInput`] into a [`Report`] (the JSON twin);
//! [`Report::to_markdown`] renders it. The same input always gives the same
//! bytes: lists are sorted, nothing reads a clock.
//!
//! What it says:
//!
//! - the rounds, with what each did;
//! - per outcome, the items and their paths (items with no outcome yet are
//!   listed as undecided);
//! - replied, resolved, awaiting reviewer, and authorized-but-unresolved;
//! - the CI verdict, and each required check that failed: whose failure it
//!   is, its log excerpt (fenced, untrusted), what was tried, what fixed it;
//! - "Review threads clear: yes", or "no, N deliberately-open threads: paths"
//!   (threads Shepherd answered and left open on purpose), plus any other
//!   unresolved thread;
//! - clusters: the gate's signals in each round it opened, each item's theme
//!   and whether the triage agent or the lexical classifier gave it, the
//!   clusters (theme, area, files, items), how many items stayed isolated, and the
//!   escalations with their context sentence; reply failures needing
//!   attention;
//! - the items the run reported to the user and did not act on: those
//!   Shepherd could not judge (a person must decide; nothing was posted) and
//!   those whose author is not trusted, each with where it is, a link, a
//!   one-line excerpt and why;
//! - agent time and, where the provider reports them, tokens and cost;
//! - that convergence is not mergeability.

mod build;
mod ci_failures;
mod input;
mod markdown;
mod model;
#[cfg(test)]
mod tests;
mod text;

pub use build::build;
pub use input::*;
pub use model::*;
