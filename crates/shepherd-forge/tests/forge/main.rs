//! Integration tests of shepherd-forge: one binary (see STYLE.md).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is how a test fails

mod ci;
mod schema;
mod support;
mod transport;
mod writes;
