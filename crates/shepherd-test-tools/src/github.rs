//! GitHub's published API descriptions, from the npm registry
//! ([`crate::npm::GITHUB`]): the GraphQL schema the client's documents and
//! the emulator's schema are checked against, and the OpenAPI description
//! the emulator's REST bodies are validated against.

use std::path::PathBuf;

use crate::npm::GITHUB;
use crate::ToolError;

/// GitHub's GraphQL schema (`@octokit/graphql-schema`'s `schema.graphql`).
///
/// # Errors
///
/// When npm is missing or the install fails, saying what to install.
pub fn graphql_schema() -> Result<PathBuf, ToolError> {
    Ok(GITHUB
        .node_modules()?
        .join("@octokit/graphql-schema/schema.graphql"))
}

/// `generated/` of `@octokit/openapi` (`api.github.com.json` and others).
///
/// # Errors
///
/// As [`graphql_schema`].
pub fn openapi_dir() -> Result<PathBuf, ToolError> {
    Ok(GITHUB.node_modules()?.join("@octokit/openapi/generated"))
}
