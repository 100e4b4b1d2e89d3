//! End-to-end tests of the `shepherd` binary and its libraries against a real
//! emulator on 127.0.0.1:0, with the real `git`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is how a test fails

mod ci_tools;
mod common;
mod fake_runner;

mod test_ci_action;
mod test_ci_gitlab;
mod test_ci_lint;
mod test_client;
mod test_doctor;
mod test_first_hour;
mod test_reviewers;
mod test_run_approval;
mod test_run_config;
mod test_run_demo;
mod test_run_kill;
mod test_run_tty;
mod test_serve;
mod test_statements;
mod test_threads_cmd;
mod test_tls;

// The private CA and HTTPS front of the forge crate's TLS tests.
#[path = "../../../shepherd-forge/tests/forge/tls_front.rs"]
mod tls_front;
