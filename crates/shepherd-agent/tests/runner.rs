//! The crate's one integration-test binary.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is how a test fails

mod common;
mod test_command;
mod test_exec;
mod test_prompts;
mod test_providers;
mod test_real_clis;
mod test_real_clis_more;
