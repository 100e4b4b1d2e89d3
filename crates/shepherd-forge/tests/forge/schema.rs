//! Every GraphQL document the client sends validates against GitHub's
//! published schema (the pinned npm package `@octokit/graphql-schema`,
//! installed by `shepherd-test-tools` into the test-tools cache).

use apollo_compiler::validation::Valid;
use apollo_compiler::{ExecutableDocument, Schema};
use shepherd_forge::github::queries::all_documents;
use shepherd_test_tools::github::graphql_schema;
use shepherd_test_tools::system::require;

/// GitHub's schema. A missing package is a failure, never a skip: it is
/// part of the test's input, and the failure says what installs it.
fn github_schema() -> Option<Valid<Schema>> {
    let path = require(graphql_schema());
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("GitHub's schema at {}: {e}", path.display()));
    match Schema::parse_and_validate(text, &path) {
        Ok(schema) => Some(schema),
        Err(with_errors) => {
            // GitHub's published schema defines two fields of
            // `EnterpriseOwnerInfo` twice (`repositoryDeployKeySetting` and
            // `repositoryDeployKeySettingOrganizations`, identical types), which
            // apollo-compiler rightly refuses. The partial schema keeps the first
            // definitions; that defect, and only it, is tolerated.
            let messages: Vec<String> = with_errors
                .errors
                .iter()
                .map(|d| d.to_json().message)
                .collect();
            let unexpected: Vec<&String> = messages
                .iter()
                .filter(|m| !is_known_schema_defect(m))
                .collect();
            assert!(
                unexpected.is_empty(),
                "GitHub's schema at {} does not validate:\n{}",
                path.display(),
                with_errors.errors
            );
            eprintln!(
                "note: tolerating {} known defect(s) of GitHub's schema: {}",
                messages.len(),
                messages.join("; ")
            );
            Some(Valid::assume_valid(with_errors.partial))
        }
    }
}

/// A field defined twice in one object type of GitHub's schema dump.
fn is_known_schema_defect(message: &str) -> bool {
    message.starts_with("duplicate definitions for the `")
        && message.ends_with("` field of object type `EnterpriseOwnerInfo`")
}

#[test]
fn every_document_validates_against_githubs_schema() {
    let Some(schema) = github_schema() else {
        return;
    };
    // The schema really loaded: the types the documents use are in it.
    for name in [
        "PullRequest",
        "PullRequestReviewThread",
        "PullRequestReviewComment",
        "Bot",
    ] {
        assert!(schema.types.contains_key(name), "schema lacks {name}");
    }
    let documents = all_documents();
    assert!(documents.len() >= 9);
    let mut failures = Vec::new();
    for (name, text) in documents {
        match ExecutableDocument::parse_and_validate(&schema, *text, format!("{name}.graphql")) {
            Ok(doc) => {
                let named: Vec<&str> = doc.operations.named.keys().map(|k| k.as_str()).collect();
                assert_eq!(named, [*name], "{name}: one operation, named {name}");
                assert!(
                    doc.operations.anonymous.is_none(),
                    "{name}: no anonymous operation"
                );
            }
            Err(with_errors) => failures.push(format!("{name}:\n{}", with_errors.errors)),
        }
    }
    assert!(
        failures.is_empty(),
        "invalid documents:\n{}",
        failures.join("\n")
    );
}

/// The check above can fail: a field GitHub does not have is refused.
#[test]
fn validation_refuses_an_unknown_field() {
    let Some(schema) = github_schema() else {
        return;
    };
    let bad = "query Bad { viewer { login tokenValue } }";
    let err = ExecutableDocument::parse_and_validate(&schema, bad, "bad.graphql")
        .expect_err("an unknown field must not validate");
    assert!(
        err.errors.to_string().contains("tokenValue"),
        "{}",
        err.errors
    );
    let bad_arg = "query Bad { viewer { pullRequests(first: \"x\") { totalCount } } }";
    assert!(ExecutableDocument::parse_and_validate(&schema, bad_arg, "bad.graphql").is_err());
}
