//! REST calls: GETs decoded from JSON, and mutations sent once.

use reqwest::Method;
use serde::de::DeserializeOwned;
use url::Url;

use super::client::Transport;
use super::exchange::decode_json;
use super::request::{Answer, Conditional, Resend, Spec};
use crate::error::Result;
use crate::url_path::{join_path, join_segments};

impl Transport {
    /// The REST URL of `segments` under the REST base, each encoded whole
    /// (`group/sub/project` stays one segment: `group%2Fsub%2Fproject`).
    pub(crate) fn url(&self, segments: &[&str]) -> Result<Url> {
        join_segments(&self.api.rest, segments)
    }

    /// A REST GET of `path` under the REST base, decoded from JSON.
    pub(crate) async fn rest_get<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, &str)],
    ) -> Result<T> {
        let url = join_path(&self.api.rest, path);
        self.get(&url, query, Conditional::No).await
    }

    /// Every page of a REST list (`per_page=100`, following `Link: rel="next"`
    /// while it stays on the API's origin).
    pub(crate) async fn rest_get_all<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, &str)],
    ) -> Result<Vec<T>> {
        let url = join_path(&self.api.rest, path);
        let pages: Vec<Vec<T>> = self.get_pages(&url, query, Conditional::No).await?;
        Ok(pages.into_iter().flatten().collect())
    }

    /// A GET of `url`, decoded from JSON; retried on transient failures.
    pub(crate) async fn get<T: DeserializeOwned>(
        &self,
        url: &Url,
        query: &[(&str, &str)],
        conditional: Conditional,
    ) -> Result<T> {
        let name = format!("GET {}", url.path());
        let answer = self.get_url(&name, url, query, conditional).await?;
        decode_json(&name, &answer.body)
    }

    /// A plain GET of `url` with its answer's headers (for `Link`); retried on
    /// transient failures.
    pub(crate) async fn get_answer(&self, url: &Url, query: &[(&str, &str)]) -> Result<Answer> {
        let name = format!("GET {}", url.path());
        self.get_url(&name, url, query, Conditional::No).await
    }

    /// A mutation over REST (`POST`, `PATCH`, `PUT`, `DELETE`), sent once
    /// (resent only after a rate-limit refusal). Returns the answer, whatever 2xx.
    pub(crate) async fn send(
        &self,
        method: Method,
        url: &Url,
        json: Option<&serde_json::Value>,
    ) -> Result<Answer> {
        self.send_with_query(method, url, &[], json).await
    }

    /// POSTs `{"body": body}` to `url` (sent once, as every mutation) and
    /// decodes the object the forge created: a comment or a note.
    pub(crate) async fn post_body<T: DeserializeOwned>(&self, url: &Url, body: &str) -> Result<T> {
        let answer = self
            .send(
                Method::POST,
                url,
                Some(&serde_json::json!({ "body": body })),
            )
            .await?;
        decode_json(&format!("POST {}", url.path()), &answer.body)
    }

    /// [`Transport::send`] with a query string (GitLab's
    /// `PUT …/discussions/:id?resolved=true`). The query never appears in
    /// errors or logs, which name the path only.
    pub(crate) async fn send_with_query(
        &self,
        method: Method,
        url: &Url,
        query: &[(&str, &str)],
        json: Option<&serde_json::Value>,
    ) -> Result<Answer> {
        let name = format!("{method} {}", url.path());
        let spec = Spec {
            name: &name,
            method: method.clone(),
            url,
            query,
            json,
            resend: Resend::Refused,
            if_none_match: None,
        };
        self.run(&spec, Ok).await
    }
}
