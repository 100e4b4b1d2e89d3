//! The emulator's schema is a subset of GitHub's: every type, field,
//! argument and enum value it defines exists in GitHub's schema with the
//! same name and the same type.

use apollo_compiler::schema::ExtendedType;
use apollo_compiler::Schema;
use shepherd_test_tools::github::graphql_schema;
use shepherd_test_tools::system::require;

fn parse(text: &str, name: &str) -> Schema {
    match Schema::parse(text, name) {
        Ok(schema) => schema,
        // Parse errors that still leave a usable schema (unknown directives
        // and the like) do not matter for a name comparison.
        Err(with_errors) => with_errors.partial,
    }
}

#[test]
fn emulator_schema_is_a_subset_of_githubs() {
    // GitHub's schema, from the pinned `@octokit/graphql-schema`. A missing
    // package is a failure, never a skip: it is part of the test's input.
    let path = require(graphql_schema());
    let github_text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("GitHub's schema at {}: {e}", path.display()));
    let github = parse(&github_text, "github.graphql");
    let ours = parse(&shepherd_emulator::graphql_sdl(), "emulator.graphql");

    let mut problems = Vec::new();
    let mut checked_fields = 0;
    for (name, ty) in &ours.types {
        if ty.is_built_in() {
            continue;
        }
        let Some(theirs) = github.types.get(name) else {
            problems.push(format!("type {name} is not in GitHub's schema"));
            continue;
        };
        match (ty, theirs) {
            (ExtendedType::Object(a), ExtendedType::Object(b)) => {
                for iface in &a.implements_interfaces {
                    if !b.implements_interfaces.contains(iface) {
                        problems.push(format!("{name} implements {iface} only here"));
                    }
                }
                checked_fields += compare_fields(name, &a.fields, &b.fields, &mut problems);
            }
            (ExtendedType::Interface(a), ExtendedType::Interface(b)) => {
                checked_fields += compare_fields(name, &a.fields, &b.fields, &mut problems);
            }
            (ExtendedType::Enum(a), ExtendedType::Enum(b)) => {
                for value in a.values.keys() {
                    if !b.values.contains_key(value) {
                        problems.push(format!("enum value {name}.{value} is not GitHub's"));
                    }
                }
            }
            (ExtendedType::Scalar(_), ExtendedType::Scalar(_)) => {}
            (ExtendedType::Union(a), ExtendedType::Union(b)) => {
                for member in &a.members {
                    if !b.members.contains(member) {
                        problems.push(format!("union {name} has {member} only here"));
                    }
                }
            }
            (ExtendedType::InputObject(a), ExtendedType::InputObject(b)) => {
                for (field, def) in &a.fields {
                    match b.fields.get(field) {
                        None => {
                            problems.push(format!("input field {name}.{field} is not GitHub's"))
                        }
                        Some(theirs) if theirs.ty != def.ty => problems.push(format!(
                            "input {name}.{field}: {} here, {} at GitHub",
                            def.ty, theirs.ty
                        )),
                        Some(_) => {}
                    }
                }
                // What a client must send to GitHub, the emulator must accept.
                for (field, theirs) in &b.fields {
                    if theirs.ty.is_non_null()
                        && theirs.default_value.is_none()
                        && !a.fields.contains_key(field)
                    {
                        problems.push(format!("required input field {name}.{field} is missing"));
                    }
                }
                checked_fields += a.fields.len();
            }
            _ => problems.push(format!("{name} is a different kind of type at GitHub")),
        }
    }
    assert!(
        problems.is_empty(),
        "schema differences:\n{}",
        problems.join("\n")
    );
    // Guard against comparing nothing (a parse that lost every type).
    assert!(checked_fields > 50, "only {checked_fields} fields compared");
    for required in [
        "PullRequestReviewThread",
        "PullRequestReviewComment",
        "IssueComment",
        "Actor",
        "Node",
        "DiffSide",
        "PullRequestReviewThreadSubjectType",
        "Mutation",
        "ResolveReviewThreadPayload",
        "AddPullRequestReviewThreadReplyInput",
        "Commit",
        "PullRequestCommit",
        "StatusCheckRollup",
        "StatusCheckRollupContext",
        "CheckRun",
        "CheckSuite",
        "StatusContext",
        "Label",
    ] {
        assert!(
            ours.types.contains_key(required),
            "{required} missing from the emulator"
        );
    }
}

fn compare_fields(
    type_name: &str,
    ours: &apollo_compiler::collections::IndexMap<
        apollo_compiler::Name,
        apollo_compiler::schema::Component<apollo_compiler::schema::FieldDefinition>,
    >,
    theirs: &apollo_compiler::collections::IndexMap<
        apollo_compiler::Name,
        apollo_compiler::schema::Component<apollo_compiler::schema::FieldDefinition>,
    >,
    problems: &mut Vec<String>,
) -> usize {
    for (field_name, field) in ours {
        let Some(their_field) = theirs.get(field_name) else {
            problems.push(format!("field {type_name}.{field_name} is not GitHub's"));
            continue;
        };
        if field.ty != their_field.ty {
            problems.push(format!(
                "{type_name}.{field_name}: {} here, {} at GitHub",
                field.ty, their_field.ty
            ));
        }
        for arg in &field.arguments {
            match their_field.arguments.iter().find(|a| a.name == arg.name) {
                None => problems.push(format!(
                    "argument {type_name}.{field_name}({}) is not GitHub's",
                    arg.name
                )),
                Some(their_arg) if their_arg.ty != arg.ty => problems.push(format!(
                    "argument {type_name}.{field_name}({}): {} here, {} at GitHub",
                    arg.name, arg.ty, their_arg.ty
                )),
                Some(_) => {}
            }
        }
    }
    ours.len()
}
