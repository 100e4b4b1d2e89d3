//! The third-party tools and descriptions Shepherd's tests use, in one
//! place, so that every test binary (and `cargo xtask test`'s preflight)
//! finds them the same way and says the same thing when one is missing.
//!
//! Two kinds:
//!
//! - **Pinned packages from registries that keep every version** (npm,
//!   PyPI), installed by the tests themselves on first use into a cache
//!   outside the clone ([`cache`]): GitHub's GraphQL schema and OpenAPI
//!   description ([`github`]), the CI tools ([`npm::CI_TOOLS`]), each an
//!   npm set with its lockfile ([`npm`]), and Python virtual environments
//!   with pinned requirements ([`python`]). A second run fetches nothing.
//! - **Programs from the machine's package manager** ([`system`]): git,
//!   Node.js and npm, python3 with `venv`, and Debian's `chromium`,
//!   `chromium-driver`, `gh` and `rsync`. These are never pinned to an
//!   exact version (Debian drops a version at its next security update):
//!   `cargo xtask test` installs them by name, and each is checked against
//!   the version range the tests depend on.
//!
//! Nothing here reads a path outside the clone but the cache and the
//! machine's programs; a missing prerequisite is an error that names the
//! package and the command that installs it, never a silent skip.

pub mod cache;
pub mod github;
pub mod npm;
pub mod python;
pub mod system;

mod error;

pub use error::ToolError;
