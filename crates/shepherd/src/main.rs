//! The `shepherd` binary: parse flags, run the command, map the result to an exit code.

fn main() -> std::process::ExitCode {
    shepherd::run()
}
