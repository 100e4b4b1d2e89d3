//! GitHub's validation errors for fields and arguments the schema does not
//! have, in GitHub's (graphql-ruby's) words and shape:
//!
//! ```json
//! {"message": "Field 'nope' doesn't exist on type 'User'",
//!  "locations": [{"line": 1, "column": 10}],
//!  "path": ["query", "viewer", "nope"],
//!  "extensions": {"code": "undefinedField", "typeName": "User", "fieldName": "nope"}}
//! ```
//!
//! They run before async-graphql's own validation, whose messages differ and
//! which checks an unknown field's arguments against its parent field.

use async_graphql::parser::types::{
    DocumentOperations, ExecutableDocument, OperationType, Selection, SelectionSet,
};
use async_graphql::Pos;
use serde_json::{json, Value};

use super::types::{named, TypeIndex};

/// The errors for undefined fields and arguments in `document`, in order.
pub(crate) fn undefined_fields_and_arguments(
    index: &TypeIndex,
    document: &ExecutableDocument,
) -> Vec<Value> {
    let mut errors = Vec::new();
    let operations: Vec<_> = match &document.operations {
        DocumentOperations::Single(op) => vec![(None, op)],
        DocumentOperations::Multiple(ops) => {
            let mut ops: Vec<_> = ops.iter().map(|(n, op)| (Some(n.as_str()), op)).collect();
            ops.sort_by_key(|(_, op)| (op.pos.line, op.pos.column));
            ops
        }
    };
    for (name, op) in operations {
        let (kind, root) = match op.node.ty {
            OperationType::Query => ("query", "Query"),
            OperationType::Mutation => ("mutation", "Mutation"),
            OperationType::Subscription => continue,
        };
        if !index.has_type(root) {
            continue;
        }
        let head = match name {
            Some(name) => format!("{kind} {name}"),
            None => kind.to_owned(),
        };
        let mut path = vec![head];
        walk(
            index,
            &op.node.selection_set.node,
            root,
            &mut path,
            &mut errors,
        );
    }
    let mut fragments: Vec<_> = document.fragments.iter().collect();
    fragments.sort_by_key(|(_, f)| (f.pos.line, f.pos.column));
    for (name, fragment) in fragments {
        let on = fragment.node.type_condition.node.on.node.as_str();
        if !index.has_type(on) {
            continue;
        }
        let mut path = vec![format!("fragment {name}")];
        walk(
            index,
            &fragment.node.selection_set.node,
            on,
            &mut path,
            &mut errors,
        );
    }
    errors
}

fn location(pos: Pos) -> Value {
    json!([{ "line": pos.line, "column": pos.column }])
}

fn walk(
    index: &TypeIndex,
    set: &SelectionSet,
    on: &str,
    path: &mut Vec<String>,
    errors: &mut Vec<Value>,
) {
    for item in &set.items {
        match &item.node {
            Selection::Field(field) => {
                let pos = field.pos;
                let field = &field.node;
                let name = field.name.node.as_str();
                path.push(field.response_key().node.to_string());
                if on == "Query" && (name == "__schema" || name == "__type") {
                    path.pop();
                    continue;
                }
                match index.field(on, name) {
                    None => errors.push(json!({
                        "path": path,
                        "extensions": {"code": "undefinedField", "typeName": on, "fieldName": name},
                        "locations": location(pos),
                        "message": format!("Field '{name}' doesn't exist on type '{on}'"),
                    })),
                    Some(def) => {
                        for (arg, _) in &field.arguments {
                            let arg_name = arg.node.as_str();
                            if def.args.iter().any(|a| a == arg_name) {
                                continue;
                            }
                            let mut arg_path = path.clone();
                            arg_path.push(arg_name.to_owned());
                            errors.push(json!({
                                "path": arg_path,
                                "extensions": {
                                    "code": "argumentNotAccepted",
                                    "name": name,
                                    "typeName": "Field",
                                    "argumentName": arg_name,
                                },
                                "locations": location(arg.pos),
                                "message": format!("Field '{name}' doesn't accept argument '{arg_name}'"),
                            }));
                        }
                        let inner = named(&def.ty).to_owned();
                        walk(index, &field.selection_set.node, &inner, path, errors);
                    }
                }
                path.pop();
            }
            Selection::InlineFragment(fragment) => {
                let fragment = &fragment.node;
                let ty = fragment
                    .type_condition
                    .as_ref()
                    .map_or(on, |c| c.node.on.node.as_str())
                    .to_owned();
                if !index.has_type(&ty) {
                    continue;
                }
                path.push(match &fragment.type_condition {
                    Some(_) => format!("... on {ty}"),
                    None => "...".to_owned(),
                });
                walk(index, &fragment.selection_set.node, &ty, path, errors);
                path.pop();
            }
            // Fragment definitions are checked on their own.
            Selection::FragmentSpread(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(query: &str) -> Vec<Value> {
        let document = async_graphql::parser::parse_query(query).unwrap();
        undefined_fields_and_arguments(TypeIndex::shared(), &document)
    }

    #[test]
    fn undefined_fields_are_named_on_their_type() {
        let found = errors("query Q { viewer { login nope } }");
        assert_eq!(found.len(), 1);
        assert_eq!(
            found[0],
            json!({
                "path": ["query Q", "viewer", "nope"],
                "extensions": {"code": "undefinedField", "typeName": "User", "fieldName": "nope"},
                "locations": [{"line": 1, "column": 26}],
                "message": "Field 'nope' doesn't exist on type 'User'",
            })
        );
    }

    #[test]
    fn an_unknown_fields_arguments_are_not_blamed_on_its_parent() {
        let found = errors(
            "{ repository(owner: \"a\", name: \"b\") { pullRequest(number: 1) { nope(first: 1) { id } } } }",
        );
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0]["extensions"]["fieldName"], "nope");
        assert_eq!(found[0]["extensions"]["typeName"], "PullRequest");
    }

    #[test]
    fn unknown_arguments_and_fragments() {
        let found = errors(
            "{ viewer { login(x: 1) } node(id: \"1\") { ... on User { zz } ...F } } fragment F on Bot { yy }",
        );
        let messages: Vec<&str> = found
            .iter()
            .map(|e| e["message"].as_str().unwrap())
            .collect();
        assert_eq!(
            messages,
            [
                "Field 'login' doesn't accept argument 'x'",
                "Field 'zz' doesn't exist on type 'User'",
                "Field 'yy' doesn't exist on type 'Bot'",
            ]
        );
        assert_eq!(
            found[1]["path"],
            json!(["query", "node", "... on User", "zz"])
        );
        assert_eq!(found[2]["path"], json!(["fragment F", "yy"]));
        assert!(
            errors("{ __typename viewer { __typename login } __schema { types { name } } }")
                .is_empty()
        );
    }
}
