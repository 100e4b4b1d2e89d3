//! End-to-end tests of the converge loop: the engine against a running
//! emulator on 127.0.0.1:0, the real `git`, and real SQLite.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is how a test fails

mod common;
mod demo;

mod test_agents;
mod test_agents_checks;
mod test_ci;
mod test_ci_repair;
mod test_clusters;
mod test_config;
mod test_decisions;
mod test_demo;
mod test_faults;
mod test_forge_approvals;
mod test_forged;
mod test_guards;
mod test_limits;
mod test_markers;
mod test_readonly;
mod test_reviewers;
mod test_rounds;
mod test_settle;
mod test_stage_times;
mod test_statements;
