//! The demo converged by the real agent CLIs. A test binary of its own:
//! the CLIs load the machine, and the engine suite's timing-sensitive tests
//! (parallel fixers) run without them, before or after.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is how a test fails

// The engine suite's helpers; its `both_forges!` is not used here.
#[path = "../engine/common.rs"]
#[allow(unused_macros, unused_imports)]
mod common;
// The demo pull request, which the helpers name.
#[path = "../engine/demo.rs"]
#[allow(dead_code)]
mod demo;

mod real_demo;
mod test_real_ci_repair;
mod test_real_clis;
mod test_real_more;
