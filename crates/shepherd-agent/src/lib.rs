//! Shepherd's agents: the seam the engine calls, typed tasks and answers,
//! answer validation, prompts, and the providers.
//!
//! - [`Agent`] is the trait the engine holds as `Arc<dyn Agent>`, one per role
//!   ([`agent_for`] builds it from the role's configuration).
//! - [`task`] holds what an agent is asked ([`TriageTask`], [`FixTask`],
//!   [`FixValidationTask`], [`ReviewTask`], [`ApplyReviewTask`]); [`answer`]
//!   what it answers, with JSON Schemas generated from the types and the
//!   checks a schema cannot express (ids against the task's, and
//!   [`findings_to_refute`] for the pre-push review).
//! - [`validate`] runs "ask, validate, retry once with the errors, else fail
//!   closed" for every subprocess provider.
//! - [`prompts`] renders the embedded (or per-repository) prompt templates,
//!   with comment bodies fenced as untrusted data.
//! - [`exec`] is the one command factory for agent processes: sealed
//!   environment without forge tokens, process groups, timeouts, transcripts.
//! - [`usage`] records tokens, cost and time per call, where providers report
//!   them, in the call's [`AgentContext`].
//! - [`mod@probe`] makes one real triage call to a configured provider, for
//!   `shepherd doctor --probe`.
//! - Providers: [`BuiltinAgent`] (no model: suggestion blocks only),
//!   [`CommandAgent`] (any executable speaking JSON on stdin/stdout) and
//!   [`CliAgent`] (`claude`, `codex`, `copilot`, `gemini`, `opencode`).
#![warn(missing_docs)]

pub mod agent;
pub mod answer;
pub mod builtin;
pub mod check;
pub mod command;
pub(crate) mod diff;
pub(crate) mod driver;
pub mod exec;
pub mod factory;
pub mod probe;
pub mod prompts;
pub mod providers;
pub mod task;
pub mod usage;
pub mod validate;

pub use agent::{file_name_safe, Agent, AgentContext, AgentError};
pub use answer::{
    findings_to_refute, ApplyReviewAnswer, ClusterAssessment, ClusterVerdict, FindingOutcome,
    FixAnswer, FixStatus, FixValidationAnswer, FixVerdict, ItemValidation, ReviewAnswer,
    ReviewFinding, Severity, ThreadOutcome, TriageAnswer, TriageDecision, REFUTE_MIN_CONFIDENCE,
};
pub use builtin::BuiltinAgent;
pub use check::{
    check_apply_review_answer, check_fix_answer, check_fix_validation_answer, check_ids,
    check_review_answer, check_triage_answer, AnswerError, FixAnswerError, IdSetMismatch,
};
pub use command::{CommandAgent, CommandConfig, CommandRequest};
pub use factory::{agent_for, SettingsError};
pub use probe::{probe, Probe};
pub use prompts::Prompts;
pub use providers::versions::{parse_version, Fit, Support, Version};
pub use providers::{CliAgent, CliConfig, CliConfigError, CliProvider};
pub use task::{
    ApplyReviewTask, CiFailureContext, ClusterContext, FixTask, FixValidationTask, HeldFinding,
    ItemKind, PrContext, ReviewCommit, ReviewTask, Role, SuggestionState, TaskComment, TaskItem,
    TriageNote, TriageTask,
};
pub use usage::{Usage, UsageLog, UsageRecord};
