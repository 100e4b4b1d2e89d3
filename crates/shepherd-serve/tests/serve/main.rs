//! shepherd-serve's tests: the real server on an ephemeral loopback port
//! over a real state directory, with runs made by the real engine against
//! the emulator; plus one test in a real headless Chromium.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is how a test fails

mod browser;
mod common;
// The demo pull request, as the engine's tests name it; not every
// helper is used here.
#[allow(dead_code)]
#[path = "../../../shepherd-engine/tests/engine/demo.rs"]
mod demo;
mod test_browser;
mod test_http;
