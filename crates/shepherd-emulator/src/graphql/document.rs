//! Looking into a parsed request document: which operation runs.

use async_graphql::parser::types::{DocumentOperations, ExecutableDocument, OperationDefinition};
use async_graphql::Positioned;

/// The operation a request runs: the one named, else the only one.
pub(crate) fn operation<'a>(
    document: &'a ExecutableDocument,
    name: Option<&str>,
) -> Option<&'a Positioned<OperationDefinition>> {
    match (&document.operations, name) {
        (DocumentOperations::Single(op), _) => Some(op),
        (DocumentOperations::Multiple(ops), Some(name)) => ops.get(name),
        (DocumentOperations::Multiple(ops), None) if ops.len() == 1 => ops.values().next(),
        (DocumentOperations::Multiple(_), None) => None,
    }
}
