//! The honesty gate of a CI repair (issue 31): what lets the fix of a
//! failing check go out.
//!
//! A repair is Shepherd's answer to a check its own push turned red. It
//! goes out only as a commit that changes files, that the fix agent says
//! fixes the check, and on which the verify command passed: the same bar
//! as a review fix (SPEC section 4), without a thread to reply to or
//! resolve. Anything else is refused with the reason, and the failure
//! stays with a person once the attempts are spent.

use serde::{Deserialize, Serialize};

/// What the verify command said of the repair commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RepairVerify {
    /// It passed on the repair's head.
    Passed,
    /// It failed (or timed out) there.
    Failed,
    /// No verify command is known: nothing unverified is pushed.
    NoCommand,
}

/// What is known of one repair attempt when the gate is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RepairFacts<'a> {
    /// Whether the fix agent answered that it fixed the failure (not
    /// `blocked`).
    pub agent_fixed: bool,
    /// The commit Shepherd made of what the agent changed, if any.
    pub commit: Option<&'a str>,
    /// The files that commit changes.
    pub files: &'a [String],
    /// The verify command's verdict on the commit.
    pub verify: RepairVerify,
}

/// Whether a repair may be pushed: `Ok` or the reason it may not, in words
/// for the report (`the fix changed no file`).
pub fn gate_repair(facts: &RepairFacts<'_>) -> Result<(), String> {
    if !facts.agent_fixed {
        return Err("the fix agent could not fix it (blocked)".to_owned());
    }
    let Some(commit) = facts.commit else {
        return Err("the fix changed no file".to_owned());
    };
    if commit.is_empty() || facts.files.is_empty() {
        return Err("the fix changed no file".to_owned());
    }
    match facts.verify {
        RepairVerify::Passed => Ok(()),
        RepairVerify::Failed => Err("the verify command failed on the fix".to_owned()),
        RepairVerify::NoCommand => {
            Err("no verify command: an unverified fix is not pushed".to_owned())
        }
    }
}
