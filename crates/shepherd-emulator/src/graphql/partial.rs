//! Partial results as GitHub gives them: a field that fails is `null` beside
//! its error and the rest of `data` stays; a failing non-null field makes its
//! nearest nullable ancestor `null` (GraphQL's null propagation), and `data`
//! itself only when there is none.
//!
//! async-graphql 7 drops a failed field's key instead (and turns an object
//! whose every field failed into `null`), so the handler puts the nulls where
//! GitHub has them, from each error's `path` and the schema's types.

use async_graphql::parser::types::{
    BaseType, ExecutableDocument, OperationType, Selection, SelectionSet, Type,
};
use serde_json::Value;

use super::document::operation;
use super::types::{named, TypeIndex};

/// One step of an error's path, with whether the value there may be null.
struct Step {
    segment: Value,
    nullable: bool,
}

/// Places the nulls that `errors` imply into `data` (see the module docs).
pub(crate) fn place_nulls(
    index: &TypeIndex,
    document: &ExecutableDocument,
    operation_name: Option<&str>,
    response: &mut Value,
) {
    let Some(op) = operation(document, operation_name) else {
        return;
    };
    let root = match op.node.ty {
        OperationType::Query => "Query",
        OperationType::Mutation => "Mutation",
        OperationType::Subscription => return,
    };
    let paths: Vec<Vec<Value>> = response
        .get("errors")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|e| e.get("path")?.as_array().cloned())
        .filter(|path| !path.is_empty())
        .collect();
    // Where each error's null goes: `None` is `data` itself.
    let mut targets: Vec<Option<Vec<Value>>> = Vec::new();
    for path in paths {
        let Some(steps) = steps(index, document, &op.node.selection_set.node, root, &path) else {
            continue;
        };
        let target = steps
            .iter()
            .rposition(|s| s.nullable)
            .map(|last| steps[..=last].iter().map(|s| s.segment.clone()).collect());
        targets.push(target);
    }
    if targets.iter().any(Option::is_none) {
        response["data"] = Value::Null;
        return;
    }
    let mut targets: Vec<Vec<Value>> = targets.into_iter().flatten().collect();
    targets.sort_by_key(Vec::len);
    let mut placed: Vec<Vec<Value>> = Vec::new();
    for target in targets {
        if placed.iter().any(|p| target.starts_with(p)) {
            continue;
        }
        set_null(response, &target);
        placed.push(target);
    }
}

/// Sets `data.<path>` to null, making objects of the nulls on the way (an
/// object whose every field failed, which async-graphql turned into null).
fn set_null(response: &mut Value, path: &[Value]) {
    let Some(object) = response.as_object_mut() else {
        return;
    };
    let mut at = object.entry("data").or_insert(Value::Null);
    for segment in path {
        if at.is_null() {
            *at = Value::Object(serde_json::Map::new());
        }
        at = match (at, segment) {
            (Value::Object(map), Value::String(key)) => {
                map.entry(key.clone()).or_insert(Value::Null)
            }
            (Value::Array(items), Value::Number(n)) => {
                match n
                    .as_u64()
                    .and_then(|i| items.get_mut(usize::try_from(i).ok()?))
                {
                    Some(item) => item,
                    None => return,
                }
            }
            _ => return,
        };
    }
    *at = Value::Null;
}

/// The steps of `path` with their nullability; `None` when the path does
/// not follow the query (then the error is left as it is).
fn steps(
    index: &TypeIndex,
    document: &ExecutableDocument,
    root_set: &SelectionSet,
    root: &str,
    path: &[Value],
) -> Option<Vec<Step>> {
    let mut steps = Vec::with_capacity(path.len());
    let mut sets: Vec<&SelectionSet> = vec![root_set];
    let mut parent = root.to_owned();
    // The type of the value at the current step, lists included.
    let mut current: Option<Type> = None;
    for segment in path {
        match segment {
            Value::String(key) => {
                let mut found: Vec<(&async_graphql::parser::types::Field, String)> = Vec::new();
                for set in &sets {
                    collect(index, document, set, &parent, key, &mut found);
                }
                let (field, on) = found.first()?;
                let def = index.field(on, field.name.node.as_str())?;
                let ty = def.ty.clone();
                steps.push(Step {
                    segment: segment.clone(),
                    nullable: ty.nullable,
                });
                parent = named(&ty).to_owned();
                sets = found.iter().map(|(f, _)| &f.selection_set.node).collect();
                current = Some(ty);
            }
            Value::Number(_) => {
                let BaseType::List(item) = current.take()?.base else {
                    return None;
                };
                steps.push(Step {
                    segment: segment.clone(),
                    nullable: item.nullable,
                });
                current = Some(*item);
            }
            _ => return None,
        }
    }
    Some(steps)
}

/// The fields of `set` (fragments included) answering to response key
/// `key`, each with the type it is selected on.
fn collect<'a>(
    index: &TypeIndex,
    document: &'a ExecutableDocument,
    set: &'a SelectionSet,
    on: &str,
    key: &str,
    found: &mut Vec<(&'a async_graphql::parser::types::Field, String)>,
) {
    for item in &set.items {
        match &item.node {
            Selection::Field(field) => {
                let field = &field.node;
                if field.response_key().node.as_str() == key
                    && index.field(on, field.name.node.as_str()).is_some()
                {
                    found.push((field, on.to_owned()));
                }
            }
            Selection::InlineFragment(fragment) => {
                let fragment = &fragment.node;
                let ty = fragment
                    .type_condition
                    .as_ref()
                    .map_or(on, |c| c.node.on.node.as_str());
                collect(
                    index,
                    document,
                    &fragment.selection_set.node,
                    ty,
                    key,
                    found,
                );
            }
            Selection::FragmentSpread(spread) => {
                let name = &spread.node.fragment_name.node;
                if let Some(fragment) = document.fragments.get(name) {
                    let ty = fragment.node.type_condition.node.on.node.as_str();
                    collect(
                        index,
                        document,
                        &fragment.node.selection_set.node,
                        ty,
                        key,
                        found,
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn placed(query: &str, mut response: Value) -> Value {
        let document = async_graphql::parser::parse_query(query).unwrap();
        place_nulls(TypeIndex::shared(), &document, None, &mut response);
        response
    }

    #[test]
    fn a_failed_nullable_field_is_null_beside_the_rest() {
        let response = placed(
            "{ viewer { login } node(id: \"x\") { id } }",
            json!({"data": {"viewer": {"login": "a"}}, "errors": [{"message": "m", "path": ["node"]}]}),
        );
        assert_eq!(
            response["data"],
            json!({"viewer": {"login": "a"}, "node": null})
        );
        let response = placed(
            "{ node(id: \"x\") { id } }",
            json!({"data": null, "errors": [{"message": "m", "path": ["node"]}]}),
        );
        assert_eq!(response["data"], json!({"node": null}));
    }

    #[test]
    fn a_failed_non_null_field_nulls_its_nearest_nullable_ancestor() {
        let query = "{ r: repository(owner: \"a\", name: \"b\") { pullRequest(number: 1) { number reviewThreads(first: 101) { totalCount } } } }";
        let response = placed(
            query,
            json!({"data": {"r": {"pullRequest": {"number": 1}}}, "errors": [{"message": "m", "path": ["r", "pullRequest", "reviewThreads"]}]}),
        );
        assert_eq!(response["data"], json!({"r": {"pullRequest": null}}));
        let response = placed(
            "{ viewer { login } }",
            json!({"data": {"viewer": {}}, "errors": [{"message": "m", "path": ["viewer", "login"]}]}),
        );
        assert_eq!(response["data"], Value::Null);
    }

    #[test]
    fn fragments_and_list_items_are_followed() {
        let query = "query Q($id: ID!) { node(id: $id) { ... on PullRequestReviewThread { comments(first: 1) { nodes { ...C } } } } } fragment C on PullRequestReviewComment { id author { login } }";
        let response = placed(
            query,
            json!({"data": {"node": {"comments": {"nodes": [{"id": "1"}, {"id": "2", "author": {"login": "a"}}]}}},
                   "errors": [{"message": "m", "path": ["node", "comments", "nodes", 0, "author"]}]}),
        );
        assert_eq!(
            response["data"]["node"]["comments"]["nodes"],
            json!([{"id": "1", "author": null}, {"id": "2", "author": {"login": "a"}}])
        );
    }
}
