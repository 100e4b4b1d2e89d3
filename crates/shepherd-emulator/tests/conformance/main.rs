//! Conformance: real clients (PyGithub, python-gitlab) against the
//! emulator, and every REST body validated against GitHub's OpenAPI
//! description. The clients and the description are installed by the tests
//! (see `tools.rs`).

// Tests may panic on anything unexpected, helpers included.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod scenario;
mod test_gitlab_fields;
mod test_openapi;
mod test_python_clients;
mod test_rest_text;
mod tools;
