//! GraphQL calls (GitHub for reads and writes; GitLab for the one
//! mutation its REST API lacks, re-requesting a review): queries retried
//! on transient failures, mutations sent once; `data` decoded straight
//! into the caller's type, `errors` turned into failures.

use std::time::Duration;

use reqwest::header::RETRY_AFTER;
use reqwest::Method;
use serde::de::{DeserializeOwned, IgnoredAny};
use serde::Deserialize;

use super::client::Transport;
use super::exchange::decode_json;
use super::limits::{header_secs, rate_limit_failure};
use super::request::{Answer, Failure, Resend, Spec};
use crate::error::{ForgeError, Result};

impl Transport {
    /// A GraphQL query (retried on transient failures); returns `data`.
    pub(crate) async fn graphql<T: DeserializeOwned>(
        &self,
        operation: &str,
        document: &str,
        variables: serde_json::Value,
    ) -> Result<T> {
        self.graphql_with(operation, document, variables, Resend::Transient)
            .await
    }

    /// A GraphQL mutation: sent once, resent only after a rate-limit refusal.
    pub(crate) async fn graphql_mutation<T: DeserializeOwned>(
        &self,
        operation: &str,
        document: &str,
        variables: serde_json::Value,
    ) -> Result<T> {
        self.graphql_with(operation, document, variables, Resend::Refused)
            .await
    }

    async fn graphql_with<T: DeserializeOwned>(
        &self,
        operation: &str,
        document: &str,
        variables: serde_json::Value,
        resend: Resend,
    ) -> Result<T> {
        let name = format!("GraphQL {operation}");
        let Some(endpoint) = self.api.graphql.as_ref() else {
            return Err(ForgeError::Unsupported {
                operation: "graphql",
            });
        };
        let body = serde_json::json!({
            "query": document,
            "operationName": operation,
            "variables": variables,
        });
        let spec = Spec {
            name: &name,
            method: Method::POST,
            url: endpoint,
            query: &[],
            json: Some(&body),
            resend,
            if_none_match: None,
        };
        self.run(&spec, |answer| self.graphql_data(operation, &name, answer))
            .await
    }

    /// The `data` of a GraphQL answer decoded straight from its bytes into
    /// `T` (no intermediate `serde_json::Value`), or its `errors` as a failure.
    fn graphql_data<T: DeserializeOwned>(
        &self,
        operation: &str,
        name: &str,
        answer: Answer,
    ) -> std::result::Result<T, Failure> {
        #[derive(Deserialize)]
        struct Envelope<D> {
            #[serde(default = "Option::default")]
            data: Option<D>,
            #[serde(default)]
            errors: Option<Vec<WireError>>,
        }
        #[derive(Deserialize)]
        struct WireError {
            #[serde(default)]
            message: String,
            #[serde(rename = "type", default)]
            kind: Option<String>,
        }
        // One pass decodes `data` into `T`. When it does not fit (a partial
        // `data` beside `errors`), a second pass reads the errors alone.
        let (data, errors) = match serde_json::from_slice::<Envelope<T>>(&answer.body) {
            Ok(envelope) => (envelope.data, envelope.errors.unwrap_or_default()),
            Err(err) => {
                let envelope: Envelope<IgnoredAny> =
                    decode_json(name, &answer.body).map_err(Failure::Fatal)?;
                let errors = envelope.errors.unwrap_or_default();
                if errors.is_empty() {
                    return Err(Failure::Fatal(ForgeError::Decode {
                        request: name.to_owned(),
                        message: err.to_string(),
                    }));
                }
                (None, errors)
            }
        };
        if !errors.is_empty() {
            if errors
                .iter()
                .any(|e| e.kind.as_deref() == Some("RATE_LIMITED"))
            {
                let retry_after =
                    header_secs(&answer.headers, RETRY_AFTER.as_str()).map(Duration::from_secs);
                return Err(rate_limit_failure(
                    self.api.flavor,
                    name.to_owned(),
                    &answer.headers,
                    retry_after,
                ));
            }
            // GitHub answers a query it could not finish (a timeout, a bug on
            // its side) with an untyped error: worth another try, like a 5xx.
            // A typed error (`NOT_FOUND`, `FORBIDDEN`, ...) is final. Only
            // queries resend on it: a mutation is never resent after an error
            // its forge may have raised after processing it.
            let transient = errors
                .iter()
                .all(|e| e.kind.as_deref().is_none_or(transient_graphql_type));
            let error = ForgeError::GraphQl {
                operation: operation.to_owned(),
                messages: errors.into_iter().map(|e| self.scrub(&e.message)).collect(),
            };
            return Err(if transient {
                Failure::Retry {
                    error,
                    after: None,
                    rejected: false,
                }
            } else {
                Failure::Fatal(error)
            });
        }
        data.ok_or_else(|| {
            Failure::Fatal(ForgeError::Decode {
                request: name.to_owned(),
                message: "the answer has neither data nor errors".into(),
            })
        })
    }
}

/// GraphQL error types that say the forge failed, not the query: retried
/// (reads only), as an untyped error is.
fn transient_graphql_type(kind: &str) -> bool {
    matches!(
        kind,
        "INTERNAL" | "INTERNAL_SERVER_ERROR" | "SERVICE_UNAVAILABLE" | "TIMEOUT"
    )
}
