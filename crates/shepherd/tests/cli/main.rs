//! End-to-end tests of the `shepherd` binary and its libraries against a real
//! emulator on 127.0.0.1:0, with the real `git`.

mod common;

mod test_client;
mod test_threads_cmd;
