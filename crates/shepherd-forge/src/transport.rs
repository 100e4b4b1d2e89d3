//! HTTP to a forge (GitHub or GitLab): authentication, timeouts, retries,
//! rate limits, pagination, and turning every failure into a [`ForgeError`]
//! that names the request.
//!
//! What differs between the forges is small and lives in [`Flavor`]: the
//! headers sent, the names of the rate-limit headers, the hint of a rejected
//! token, and GitLab's `X-Next-Page` pagination (GitHub uses `Link` only).
//! Both forges take the token as `Authorization: Bearer`: GitLab documents it
//! for personal, project and group access tokens alike, and it is the only
//! header its OAuth tokens (what `glab auth login` may store) work with.
//!
//! Retries go through `backon`: its `adjust` hook lets a `Retry-After` or a
//! rate-limit reset replace the computed delay, which `reqwest-retry` cannot do
//! (its policy never sees the response). Reads are retried on a 5xx, a
//! network error, a rate limit and a GraphQL error that is not the query's
//! fault (untyped, or `INTERNAL`-like); they are the only calls retried blindly. A
//! mutation is sent once: it is retried only when the forge refused it with a
//! rate limit (a refusal means it was not processed), never after a 5xx, a
//! GraphQL error or a network error, after which it may have landed; the caller checks on the
//! forge (for replies: looks for the marker) before sending it again.
//!
//! Polled GETs can be conditional: the transport keeps the `ETag` of each URL
//! with its answer and sends `If-None-Match`; a `304 Not Modified` (which
//! GitHub does not count against the rate limit) gives back the kept answer.
//!
//! Pages: `per_page=100`, then GitLab's `X-Next-Page` (the next page number,
//! asked of the same URL, so the token never follows a link elsewhere), else
//! `Link: rel="next"` while it stays on the API's origin.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use backon::{ExponentialBuilder, Retryable};
use bytes::Bytes;
use reqwest::header::{
    HeaderMap, HeaderValue, ACCEPT, AUTHORIZATION, ETAG, IF_NONE_MATCH, LINK, RETRY_AFTER,
};
use reqwest::{Method, StatusCode};
use serde::de::{DeserializeOwned, IgnoredAny};
use serde::Deserialize;
use tokio::sync::Semaphore;
use url::Url;

use crate::error::{ForgeError, Result};
use crate::token::Token;
use crate::url_path::{join_path, join_segments};

/// The media type GitHub's REST API documents.
const GITHUB_JSON: &str = "application/vnd.github+json";
/// What GitLab's REST API answers.
const PLAIN_JSON: &str = "application/json";
/// The REST API version Shepherd is written against.
const API_VERSION: &str = "2022-11-28";
/// How long GitHub asks to wait after a secondary rate limit that names no time.
const SECONDARY_LIMIT_WAIT: Duration = Duration::from_secs(60);
/// How many URLs the ETag cache keeps; past it the cache starts over (the
/// polled URLs of one run are a handful).
const ETAG_CACHE_CAPACITY: usize = 256;
/// The most requests one client has in flight at once. GitHub's secondary
/// rate limits punish many concurrent requests; four lets a snapshot overlap
/// its reads (threads, long threads' tails, comments, reviews) and stays
/// well inside them. Waiting for a slot happens before the request is sent,
/// so a retry's backoff never holds one.
///
/// One of the four is the lead's ([`Transport::lead`]): the chain of
/// requests a snapshot waits on (its thread pages, each asked with the
/// cursor of the one before) never queues behind the reads beside it, which
/// share the other three.
pub const MAX_IN_FLIGHT: usize = 4;
/// The slots the lead's requests do not use.
pub(crate) const SHARED_IN_FLIGHT: usize = MAX_IN_FLIGHT - 1;

/// How the client retries. Attempts count the first try.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Total attempts of one read, the first included (at least 1).
    pub max_attempts: usize,
    /// The wait before the second attempt; it doubles for each later one.
    pub initial_backoff: Duration,
    /// The longest computed wait between two attempts.
    pub max_backoff: Duration,
    /// The longest wait the client accepts from a rate limit (`Retry-After`,
    /// `x-ratelimit-reset`); beyond it the call fails with
    /// [`ForgeError::RateLimited`], saying when the limit resets.
    pub max_rate_limit_wait: Duration,
}

impl Default for RetryPolicy {
    /// 4 attempts, waits of 0.5 s, 1 s, 2 s; rate-limit waits up to 2 minutes.
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 4,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(8),
            max_rate_limit_wait: Duration::from_secs(120),
        }
    }
}

impl RetryPolicy {
    /// One attempt, no retry.
    pub fn none() -> Self {
        RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        }
    }
}

/// HTTP options of a client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientConfig {
    /// The `User-Agent` header (GitHub requires one).
    pub user_agent: String,
    /// Timeout of a whole request, answer included.
    pub timeout: Duration,
    /// Timeout of the connection.
    pub connect_timeout: Duration,
    /// Retries of reads.
    pub retry: RetryPolicy,
    /// A PEM file of CA certificates trusted besides the system's store
    /// (`[forge] ca_file`); read when the client is built.
    pub ca_file: Option<PathBuf>,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            user_agent: format!("shepherd/{}", env!("CARGO_PKG_VERSION")),
            timeout: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(10),
            retry: RetryPolicy::default(),
            ca_file: None,
        }
    }
}

/// Which forge a transport talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flavor {
    /// GitHub: its media type and API version headers, `x-ratelimit-*`.
    GitHub,
    /// GitLab: plain JSON, `RateLimit-*`, `X-Next-Page` pagination.
    GitLab,
}

impl Flavor {
    /// The header holding how many requests are left (`0`: used up).
    fn remaining_header(self) -> &'static str {
        match self {
            Flavor::GitHub => "x-ratelimit-remaining",
            Flavor::GitLab => "ratelimit-remaining",
        }
    }

    /// The header holding when the limit resets (unix seconds, on both).
    fn reset_header(self) -> &'static str {
        match self {
            Flavor::GitHub => "x-ratelimit-reset",
            Flavor::GitLab => "ratelimit-reset",
        }
    }

    /// What to check when the forge rejects the token.
    fn unauthorized_hint(self) -> &'static str {
        match self {
            Flavor::GitHub => "check GITHUB_TOKEN (or GH_TOKEN), or run `gh auth login`",
            Flavor::GitLab => {
                "check GITLAB_TOKEN (the token needs the `api` scope), or run `glab auth login`"
            }
        }
    }
}

/// Where a forge's API lives, as the transport needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Api {
    /// Which forge.
    pub(crate) flavor: Flavor,
    /// The REST base: paths are appended to it.
    pub(crate) rest: Url,
    /// The GraphQL endpoint (GitHub only).
    pub(crate) graphql: Option<Url>,
}

/// A successful answer (or a `304` to a conditional request).
#[derive(Clone)]
pub(crate) struct Answer {
    pub(crate) status: StatusCode,
    pub(crate) headers: HeaderMap,
    /// The body as received (shared, not copied, by the ETag cache).
    pub(crate) body: Bytes,
}

/// One failed attempt: either final, or worth another try after `after`
/// (`None`: the backoff schedule decides). `rejected`: the forge refused the
/// request without processing it (a rate limit), so even a mutation may be
/// sent again.
enum Failure {
    Fatal(ForgeError),
    Retry {
        error: ForgeError,
        after: Option<Duration>,
        rejected: bool,
    },
}

/// Which failures a request is retried on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Resend {
    /// Reads: every transient failure.
    Transient,
    /// Mutations: only a refusal by rate limit (the request was not processed).
    Refused,
}

/// Whether a GET is conditional (`If-None-Match` with the kept `ETag`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Conditional {
    /// A plain GET.
    No,
    /// Keep the answer's `ETag` and send it next time.
    Yes,
}

/// An answer kept for its `ETag`.
struct Kept {
    etag: String,
    answer: Answer,
}

impl Failure {
    fn into_error(self) -> ForgeError {
        match self {
            Failure::Fatal(error) | Failure::Retry { error, .. } => error,
        }
    }
}

/// What one request is: built anew for each attempt.
struct Spec<'a> {
    /// `GET /repos/o/r` or `GraphQL ReviewThreads`: what errors and logs name.
    name: &'a str,
    method: Method,
    url: &'a Url,
    query: &'a [(&'a str, &'a str)],
    json: Option<&'a serde_json::Value>,
    resend: Resend,
    if_none_match: Option<&'a str>,
}

/// The authenticated HTTP side of a forge client.
#[derive(Clone)]
pub(crate) struct Transport {
    http: reqwest::Client,
    api: Api,
    token: Token,
    retry: RetryPolicy,
    /// ETags and answers of conditional GETs, by full URL (query included).
    etags: Arc<Mutex<HashMap<String, Kept>>>,
    /// The shared slots of [`MAX_IN_FLIGHT`] ([`SHARED_IN_FLIGHT`]), shared
    /// by the clones of a transport.
    in_flight: Arc<Semaphore>,
    /// The lead's slot, shared by the clones of a transport.
    lead_slot: Arc<Semaphore>,
    /// Whether this transport's requests take the lead's slot.
    is_lead: bool,
}

impl Transport {
    pub(crate) fn new(api: Api, token: Token, config: ClientConfig) -> Result<Self> {
        let builder = reqwest::Client::builder()
            .user_agent(config.user_agent)
            .timeout(config.timeout)
            .connect_timeout(config.connect_timeout);
        let http = crate::tls::with_roots(builder, config.ca_file.as_deref())?
            .build()
            .map_err(|source| ForgeError::Client { source })?;
        Ok(Transport {
            http,
            api,
            token,
            retry: config.retry,
            etags: Arc::new(Mutex::new(HashMap::new())),
            in_flight: Arc::new(Semaphore::new(SHARED_IN_FLIGHT)),
            lead_slot: Arc::new(Semaphore::new(1)),
            is_lead: false,
        })
    }

    /// This transport for the lead: the one sequential chain a caller waits
    /// on (a snapshot's thread pages). Its requests take the slot kept for
    /// the lead, so reads asked beside it (reviews, comments, long threads'
    /// tails) never delay it; a chain is one request at a time, so one slot
    /// is all it needs.
    pub(crate) fn lead(&self) -> Transport {
        Transport {
            is_lead: true,
            ..self.clone()
        }
    }

    pub(crate) fn token(&self) -> &Token {
        &self.token
    }

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

    /// Every page of a paginated GET (`per_page=100` unless `query` sets it),
    /// each page decoded as a `P` (a list, or an object holding one). The
    /// next page is GitLab's `X-Next-Page` (asked of the same URL and query
    /// with `page=N`), else `Link: rel="next"` while it stays on the API's
    /// origin.
    pub(crate) async fn get_pages<P: DeserializeOwned>(
        &self,
        first: &Url,
        query: &[(&str, &str)],
        conditional: Conditional,
    ) -> Result<Vec<P>> {
        let name = format!("GET {}", first.path());
        let mut first_query: Vec<(&str, &str)> = query.to_vec();
        if !first_query.iter().any(|(k, _)| *k == "per_page") {
            first_query.push(("per_page", "100"));
        }
        let mut pages = Vec::new();
        let mut answer = self
            .get_url(&name, first, &first_query, conditional)
            .await?;
        let mut page_number = 1u64;
        loop {
            pages.push(decode_json(&name, &answer.body)?);
            if self.api.flavor == Flavor::GitLab {
                if let Some(next) = next_page_number(&answer.headers) {
                    if next <= page_number {
                        return Err(ForgeError::Decode {
                            request: name,
                            message: format!(
                                "X-Next-Page does not advance (page {page_number}, next {next})"
                            ),
                        });
                    }
                    page_number = next;
                    let page = next.to_string();
                    let mut next_query: Vec<(&str, &str)> = first_query
                        .iter()
                        .copied()
                        .filter(|(k, _)| *k != "page")
                        .collect();
                    next_query.push(("page", &page));
                    answer = self.get_url(&name, first, &next_query, conditional).await?;
                    continue;
                }
            }
            let Some(next) = next_link(&answer.headers) else {
                break;
            };
            if next.origin() != first.origin() {
                // Never send the token to another origin.
                return Err(ForgeError::Decode {
                    request: name,
                    message: "the next-page link points to another origin".into(),
                });
            }
            answer = self.get_url(&name, &next, &[], conditional).await?;
        }
        Ok(pages)
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

    /// A GET, conditional when asked: a `304` gives back the kept answer.
    async fn get_url(
        &self,
        name: &str,
        url: &Url,
        query: &[(&str, &str)],
        conditional: Conditional,
    ) -> Result<Answer> {
        let key = match conditional {
            Conditional::Yes => Some(cache_key(url, query)),
            Conditional::No => None,
        };
        let etag = key
            .as_ref()
            .and_then(|key| self.kept(key).map(|kept| kept.etag));
        let mut spec = Spec {
            name,
            method: Method::GET,
            url,
            query,
            json: None,
            resend: Resend::Transient,
            if_none_match: etag.as_deref(),
        };
        let mut answer = self.run(&spec, Ok).await?;
        if answer.status == StatusCode::NOT_MODIFIED {
            if let Some(kept) = key.as_ref().and_then(|key| self.kept(key)) {
                tracing::debug!(request = name, "not modified; using the kept answer");
                return Ok(kept.answer);
            }
            // The kept answer was dropped meanwhile: ask again, plainly.
            spec.if_none_match = None;
            answer = self.run(&spec, Ok).await?;
        }
        if let Some(key) = key {
            let etag = answer
                .headers
                .get(ETAG)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            if let Some(etag) = etag {
                self.keep(key, etag, &answer);
            }
        }
        Ok(answer)
    }

    fn kept(&self, key: &str) -> Option<Kept> {
        let cache = self.etags.lock().unwrap_or_else(|e| e.into_inner());
        cache.get(key).map(|kept| Kept {
            etag: kept.etag.clone(),
            answer: kept.answer.clone(),
        })
    }

    fn keep(&self, key: String, etag: String, answer: &Answer) {
        let mut cache = self.etags.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() >= ETAG_CACHE_CAPACITY && !cache.contains_key(&key) {
            cache.clear();
        }
        cache.insert(
            key,
            Kept {
                etag,
                answer: answer.clone(),
            },
        );
    }

    /// Sends `spec`, retrying per the policy, and hands each successful HTTP
    /// answer to `accept`, which may itself fail (GraphQL `errors`).
    async fn run<T>(
        &self,
        spec: &Spec<'_>,
        accept: impl Fn(Answer) -> std::result::Result<T, Failure>,
    ) -> Result<T> {
        let policy = &self.retry;
        let max_attempts = policy.max_attempts.max(1);
        let backoff = ExponentialBuilder::default()
            .with_factor(2.0)
            .with_min_delay(policy.initial_backoff)
            .with_max_delay(policy.max_backoff)
            .with_max_times(max_attempts - 1);
        let mut attempt = 0usize;
        let accept = &accept;
        let result = (|| {
            attempt += 1;
            let number = attempt;
            async move { accept(self.attempt(spec, number).await?) }
        })
        .retry(backoff)
        .sleep(tokio::time::sleep)
        .when(|failure: &Failure| match (failure, spec.resend) {
            (Failure::Fatal(_), _) => false,
            (Failure::Retry { .. }, Resend::Transient) => true,
            (Failure::Retry { rejected, .. }, Resend::Refused) => *rejected,
        })
        .adjust(|failure: &Failure, next: Option<Duration>| {
            let next = next?;
            match failure {
                Failure::Retry {
                    after: Some(wait), ..
                } if *wait > policy.max_rate_limit_wait => None,
                Failure::Retry {
                    after: Some(wait), ..
                } => Some(*wait),
                _ => Some(next),
            }
        })
        .notify(|failure: &Failure, wait: Duration| {
            if let Failure::Retry { error, .. } = failure {
                tracing::warn!(
                    request = spec.name,
                    wait_ms = wait.as_millis() as u64,
                    "{error}; retrying"
                );
            }
        })
        .await;
        result.map_err(Failure::into_error)
    }

    /// One attempt: the HTTP exchange and the classification of its status.
    async fn attempt(
        &self,
        spec: &Spec<'_>,
        number: usize,
    ) -> std::result::Result<Answer, Failure> {
        let started = Instant::now();
        let mut auth =
            HeaderValue::from_str(&format!("Bearer {}", self.token.expose())).map_err(|_| {
                Failure::Fatal(ForgeError::Unauthorized {
                    request: spec.name.to_owned(),
                    hint: format!(
                        "the token from {} holds characters a header cannot carry",
                        self.token.source()
                    ),
                })
            })?;
        auth.set_sensitive(true);
        let mut request = self
            .http
            .request(spec.method.clone(), spec.url.clone())
            .header(AUTHORIZATION, auth);
        request = match self.api.flavor {
            Flavor::GitHub => request
                .header(ACCEPT, GITHUB_JSON)
                .header("X-GitHub-Api-Version", API_VERSION),
            Flavor::GitLab => request.header(ACCEPT, PLAIN_JSON),
        };
        if !spec.query.is_empty() {
            request = request.query(spec.query);
        }
        if let Some(json) = spec.json {
            request = request.json(json);
        }
        if let Some(etag) = spec.if_none_match {
            if let Ok(value) = HeaderValue::from_str(etag) {
                request = request.header(IF_NONE_MATCH, value);
            }
        }
        let network = |source: reqwest::Error| {
            if let Some(cert) = crate::tls::certificate_failure(&source) {
                // The same certificate fails every attempt: final.
                let (reason, hint) = crate::tls::describe(cert);
                return Failure::Fatal(ForgeError::Certificate {
                    request: spec.name.to_owned(),
                    origin: spec.url.origin().ascii_serialization(),
                    reason,
                    hint: hint.to_owned(),
                });
            }
            let error = ForgeError::Network {
                request: spec.name.to_owned(),
                source: source.without_url(),
            };
            Failure::Retry {
                error,
                after: None,
                rejected: false,
            }
        };
        // A closed semaphore cannot happen (it is never closed); should it,
        // the request goes without a slot rather than failing.
        let slots = if self.is_lead {
            &self.lead_slot
        } else {
            &self.in_flight
        };
        let _slot = slots.acquire().await.ok();
        let response = request.send().await.map_err(|err| {
            let failure = network(err);
            let what = match &failure {
                Failure::Fatal(error) | Failure::Retry { error, .. } => error.to_string(),
            };
            tracing::debug!(
                request = spec.name,
                attempt = number,
                elapsed_ms = elapsed_ms(started),
                "{what}"
            );
            failure
        })?;
        let status = response.status();
        let headers = response.headers().clone();
        let body = response.bytes().await.map_err(network)?;
        tracing::debug!(
            request = spec.name,
            status = status.as_u16(),
            attempt = number,
            elapsed_ms = elapsed_ms(started),
            "forge request"
        );
        let not_modified = status == StatusCode::NOT_MODIFIED && spec.if_none_match.is_some();
        if status.is_success() || not_modified {
            return Ok(Answer {
                status,
                headers,
                body,
            });
        }
        Err(self.classify(spec.name, status, &headers, &body))
    }

    /// Turns an unsuccessful status into a final or retryable failure.
    fn classify(
        &self,
        name: &str,
        status: StatusCode,
        headers: &HeaderMap,
        body: &[u8],
    ) -> Failure {
        let request = name.to_owned();
        let message = self.scrub(&error_message(status, body));
        let retry_after = header_secs(headers, RETRY_AFTER.as_str()).map(Duration::from_secs);
        match status.as_u16() {
            401 => Failure::Fatal(ForgeError::Unauthorized {
                request,
                hint: format!(
                    "the token from {} is invalid, expired or revoked; {}",
                    self.token.source(),
                    self.api.flavor.unauthorized_hint()
                ),
            }),
            403 | 429 => {
                let rate_limited = status == StatusCode::TOO_MANY_REQUESTS
                    || retry_after.is_some()
                    || exhausted(self.api.flavor, headers)
                    || message.to_ascii_lowercase().contains("rate limit");
                if rate_limited {
                    rate_limit_failure(self.api.flavor, request, headers, retry_after)
                } else {
                    Failure::Fatal(ForgeError::Forbidden { request, message })
                }
            }
            404 => Failure::Fatal(ForgeError::NotFound { request, message }),
            500..=599 => Failure::Retry {
                error: ForgeError::Http {
                    request,
                    status: status.as_u16(),
                    message,
                },
                after: retry_after,
                rejected: false,
            },
            code => Failure::Fatal(ForgeError::Http {
                request,
                status: code,
                message,
            }),
        }
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

    /// Masks the token in text that came from the forge.
    fn scrub(&self, text: &str) -> String {
        let secret = self.token.expose();
        if secret.is_empty() {
            text.to_owned()
        } else {
            text.replace(secret, "***")
        }
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

/// A rate-limit failure: retried after the forge's wait when one is known.
fn rate_limit_failure(
    flavor: Flavor,
    request: String,
    headers: &HeaderMap,
    retry_after: Option<Duration>,
) -> Failure {
    let reset_at = header_secs(headers, flavor.reset_header());
    // GitHub's documented order (GitLab's headers mean the same): Retry-After;
    // else, with the limit used up, the reset time; else (a secondary limit)
    // at least a minute.
    let wait = match retry_after {
        Some(wait) => wait,
        None if exhausted(flavor, headers) => {
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            // One second past the reset, so the retry lands after it.
            reset_at.map_or(SECONDARY_LIMIT_WAIT, |at| {
                Duration::from_secs(at.saturating_sub(now) + 1)
            })
        }
        None => SECONDARY_LIMIT_WAIT,
    };
    let error = ForgeError::RateLimited {
        request,
        wait: Some(wait),
        reset_at,
    };
    Failure::Retry {
        error,
        after: Some(wait),
        rejected: true,
    }
}

/// Whether the answer says the primary rate limit is used up.
fn exhausted(flavor: Flavor, headers: &HeaderMap) -> bool {
    header_secs(headers, flavor.remaining_header()) == Some(0)
}

/// GitLab's `X-Next-Page`: the next page's number, absent or empty on the last.
fn next_page_number(headers: &HeaderMap) -> Option<u64> {
    headers
        .get("x-next-page")?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// A header holding a whole number (seconds, an epoch time, a count).
fn header_secs(headers: &HeaderMap, name: &str) -> Option<u64> {
    headers.get(name)?.to_str().ok()?.trim().parse().ok()
}

/// The forge's `message` (GitLab's may be an object of field errors), else
/// GitLab's OAuth-style `error` with its `error_description`, else the start
/// of the body, else the status reason.
fn error_message(status: StatusCode, body: &[u8]) -> String {
    #[derive(Deserialize)]
    struct Wire {
        message: Option<serde_json::Value>,
        error: Option<String>,
        error_description: Option<String>,
    }
    if let Ok(wire) = serde_json::from_slice::<Wire>(body) {
        match wire.message {
            Some(serde_json::Value::String(m)) if !m.trim().is_empty() => return m,
            Some(serde_json::Value::Null | serde_json::Value::String(_)) | None => {}
            Some(other) => return cut(&other.to_string()),
        }
        if let Some(error) = wire.error.filter(|e| !e.trim().is_empty()) {
            return match wire.error_description {
                Some(description) => cut(&format!("{error}: {description}")),
                None => cut(&error),
            };
        }
    }
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.is_empty() {
        return status.canonical_reason().unwrap_or("no message").to_owned();
    }
    cut(text)
}

/// At most 200 characters of `text`, with `…` when cut.
fn cut(text: &str) -> String {
    let cut: String = text.chars().take(200).collect();
    if cut.len() < text.len() {
        format!("{cut}…")
    } else {
        cut
    }
}

/// The ETag cache's key: the URL with its query.
fn cache_key(url: &Url, query: &[(&str, &str)]) -> String {
    let mut url = url.clone();
    if !query.is_empty() {
        url.query_pairs_mut().extend_pairs(query);
    }
    url.into()
}

pub(crate) fn decode_json<T: DeserializeOwned>(name: &str, body: &[u8]) -> Result<T> {
    serde_json::from_slice(body).map_err(|err| ForgeError::Decode {
        request: name.to_owned(),
        message: err.to_string(),
    })
}

/// The `rel="next"` target of a `Link` header.
fn next_link(headers: &HeaderMap) -> Option<Url> {
    link_target(headers, "next")
}

/// The target of relation `rel` (`next`, `last`) in a `Link` header.
pub(crate) fn link_target(headers: &HeaderMap, rel: &str) -> Option<Url> {
    let link = headers.get(LINK)?.to_str().ok()?;
    let quoted = format!("rel=\"{rel}\"");
    let bare = format!("rel={rel}");
    link.split(',').find_map(|part| {
        let (target, params) = part.split_once(';')?;
        let matches = params
            .split(';')
            .any(|p| p.trim() == quoted || p.trim() == bare);
        if !matches {
            return None;
        }
        let target = target.trim().strip_prefix('<')?.strip_suffix('>')?;
        Url::parse(target).ok()
    })
}

/// The `page` number of the `rel="last"` target of a `Link` header: how
/// many pages a GitHub REST list has (absent when it has one).
pub(crate) fn last_page(headers: &HeaderMap) -> Option<u64> {
    let last = link_target(headers, "last")?;
    last.query_pairs()
        .find(|(key, _)| key == "page")
        .and_then(|(_, value)| value.parse().ok())
}

fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        map
    }

    #[test]
    fn last_page_reads_the_page_of_rel_last() {
        let h = headers(&[(
            "link",
            "<https://api.github.com/x?per_page=100&page=2>; rel=\"next\", \
             <https://api.github.com/x?per_page=100&page=207>; rel=\"last\"",
        )]);
        assert_eq!(last_page(&h), Some(207));
        let h = headers(&[("link", "<https://api.github.com/x?page=1>; rel=\"prev\"")]);
        assert_eq!(last_page(&h), None);
        assert_eq!(last_page(&HeaderMap::new()), None);
    }

    #[test]
    fn next_link_finds_rel_next() {
        let h = headers(&[(
            "link",
            "<https://api.github.com/x?page=2>; rel=\"next\", <https://api.github.com/x?page=5>; rel=\"last\"",
        )]);
        assert_eq!(
            next_link(&h).unwrap().as_str(),
            "https://api.github.com/x?page=2"
        );
        let h = headers(&[("link", "<https://api.github.com/x?page=1>; rel=\"prev\"")]);
        assert!(next_link(&h).is_none());
    }

    #[test]
    fn error_message_prefers_the_forge_message() {
        let body = br#"{"message":"Bad credentials","documentation_url":"x"}"#;
        assert_eq!(
            error_message(StatusCode::UNAUTHORIZED, body),
            "Bad credentials"
        );
        assert_eq!(error_message(StatusCode::BAD_GATEWAY, b""), "Bad Gateway");
        let long = "x".repeat(500);
        assert_eq!(
            error_message(StatusCode::BAD_GATEWAY, long.as_bytes())
                .chars()
                .count(),
            201
        );
    }

    #[test]
    fn primary_limit_waits_until_the_reset() {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let reset = (now + 30).to_string();
        let h = headers(&[
            ("x-ratelimit-remaining", "0"),
            ("x-ratelimit-reset", &reset),
        ]);
        let Failure::Retry {
            after: Some(wait),
            error,
            ..
        } = rate_limit_failure(Flavor::GitHub, "r".into(), &h, None)
        else {
            panic!("expected a retry")
        };
        assert!((29..=32).contains(&wait.as_secs()), "{wait:?}");
        assert!(matches!(
            error,
            ForgeError::RateLimited {
                reset_at: Some(_),
                ..
            }
        ));
    }

    #[test]
    fn retry_after_wins_and_secondary_defaults_to_a_minute() {
        let h = headers(&[]);
        let Failure::Retry { after, .. } =
            rate_limit_failure(Flavor::GitHub, "r".into(), &h, Some(Duration::from_secs(3)))
        else {
            panic!("expected a retry")
        };
        assert_eq!(after, Some(Duration::from_secs(3)));
        let Failure::Retry { after, .. } = rate_limit_failure(Flavor::GitHub, "r".into(), &h, None)
        else {
            panic!("expected a retry")
        };
        assert_eq!(after, Some(SECONDARY_LIMIT_WAIT));
    }
}
