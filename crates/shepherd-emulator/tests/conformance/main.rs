//! Conformance: real clients (PyGithub, python-gitlab, `gh`) against the
//! emulator, and every REST body validated against GitHub's OpenAPI
//! description. The clients and the description are installed by the tests
//! (see `tools.rs`).

// Tests may panic on anything unexpected, helpers included.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod scenario;
mod test_gh;
mod test_gitlab_cli;
mod test_gitlab_fields;
mod test_openapi;
mod test_python_clients;
mod test_rest_text;
mod tools;
#[path = "../support/widgets.rs"]
mod widgets;

// The private CA and HTTPS front of the forge crate's TLS tests (the `gh`
// test reaches the emulator through it); not every helper is used here.
#[allow(dead_code)]
#[path = "../../../shepherd-forge/tests/forge/tls_front.rs"]
mod tls_front;
