//! GraphQL errors in GitHub's shape: a message and a `type`
//! (`NOT_FOUND`, `EXCESSIVE_PAGINATION`, …).
//!
//! async-graphql puts custom keys under `extensions`; the HTTP handler moves
//! `extensions.type` to the top level of each error, where GitHub has it.

use async_graphql::{Error, ErrorExtensions as _};

/// An error with GitHub's `type`.
pub(crate) fn typed(kind: &'static str, message: impl Into<String>) -> Error {
    Error::new(message).extend_with(|_, ext| ext.set("type", kind))
}

/// GitHub's `NOT_FOUND`.
pub(crate) fn not_found(message: impl Into<String>) -> Error {
    typed("NOT_FOUND", message)
}

/// GitHub's `NOT_FOUND` for a node id that names nothing the viewer can
/// see, worded as GitHub words it (with its full stop): `Could not resolve
/// to a node with the global id of 'X'.` (GitHub's GraphQL API answers
/// `node(id:)` and every mutation's id argument so; clients match on it).
pub(crate) fn unresolvable_node(id: &str) -> Error {
    not_found(format!(
        "Could not resolve to a node with the global id of '{id}'."
    ))
}

/// Moves `extensions.type` of each error to a top-level `type`, dropping
/// `extensions` when nothing else is left in it.
pub(crate) fn to_github_shape(response: &mut serde_json::Value) {
    let Some(errors) = response.get_mut("errors").and_then(|e| e.as_array_mut()) else {
        return;
    };
    for error in errors {
        let Some(object) = error.as_object_mut() else {
            continue;
        };
        let kind = object
            .get_mut("extensions")
            .and_then(|ext| ext.as_object_mut())
            .and_then(|ext| ext.remove("type"));
        if let Some(kind) = kind {
            object.insert("type".to_owned(), kind);
        }
        let empty = object
            .get("extensions")
            .and_then(|ext| ext.as_object())
            .is_some_and(|ext| ext.is_empty());
        if empty {
            object.remove("extensions");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn moves_type_to_top_level() {
        let mut response = json!({
            "data": null,
            "errors": [
                {"message": "gone", "extensions": {"type": "NOT_FOUND"}},
                {"message": "other", "extensions": {"type": "X", "code": 1}},
                {"message": "plain"}
            ]
        });
        to_github_shape(&mut response);
        assert_eq!(
            response["errors"][0],
            json!({"message": "gone", "type": "NOT_FOUND"})
        );
        assert_eq!(response["errors"][1]["type"], "X");
        assert_eq!(response["errors"][1]["extensions"], json!({"code": 1}));
        assert_eq!(response["errors"][2], json!({"message": "plain"}));
    }
}
