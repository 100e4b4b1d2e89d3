//! Conditional GETs: the `ETag` of each polled URL is kept with its answer
//! and sent as `If-None-Match`; a `304 Not Modified` (which GitHub does not
//! count against the rate limit) gives back the kept answer.

use reqwest::header::ETAG;
use reqwest::{Method, StatusCode};
use url::Url;

use super::client::Transport;
use super::request::{Answer, Conditional, Kept, Resend, Spec};
use crate::error::Result;

/// How many URLs the ETag cache keeps; past it the cache starts over (the
/// polled URLs of one run are a handful).
const ETAG_CACHE_CAPACITY: usize = 256;

impl Transport {
    /// A GET, conditional when asked: a `304` gives back the kept answer.
    pub(super) async fn get_url(
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
}

/// The ETag cache's key: the URL with its query.
fn cache_key(url: &Url, query: &[(&str, &str)]) -> String {
    let mut url = url.clone();
    if !query.is_empty() {
        url.query_pairs_mut().extend_pairs(query);
    }
    url.into()
}
