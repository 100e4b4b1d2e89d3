//! Shepherd's agents: the seam the engine calls, typed tasks and answers,
//! answer validation, prompts, and the providers.
//!
//! - [`Agent`] is the trait the engine holds as `Arc<dyn Agent>`, one per role.
//! - [`task`] holds what an agent is asked ([`TriageTask`], [`FixTask`]);
//!   [`answer`] what it answers ([`TriageAnswer`], [`FixAnswer`]), with JSON
//!   Schemas generated from the types and the id checks.
//! - [`validate`] runs "ask, validate, retry once with the errors, else fail
//!   closed" for every subprocess provider.
//! - [`prompts`] renders the embedded (or per-repository) prompt templates,
//!   with comment bodies fenced as untrusted data.
//! - [`exec`] is the one command factory for agent processes: sealed
//!   environment without tokens, process groups, timeouts, transcripts.
//! - Providers: [`BuiltinAgent`] (no model: suggestion blocks only) and
//!   [`CommandAgent`] (any executable speaking JSON on stdin/stdout).
#![warn(missing_docs)]

pub mod agent;
pub mod answer;
pub mod builtin;
pub mod command;
pub mod exec;
pub mod prompts;
pub mod task;
pub mod validate;

pub use agent::{Agent, AgentContext, AgentError};
pub use answer::{
    check_fix_answer, check_ids, check_triage_answer, ClusterAssessment, ClusterVerdict, FixAnswer,
    FixAnswerError, FixStatus, IdSetMismatch, ThreadOutcome, TriageAnswer, TriageDecision,
};
pub use builtin::BuiltinAgent;
pub use command::{CommandAgent, CommandConfig, CommandRequest};
pub use prompts::Prompts;
pub use task::{
    ClusterContext, FixTask, ItemKind, PrContext, Role, SuggestionState, TaskComment, TaskItem,
    TriageNote, TriageTask,
};
