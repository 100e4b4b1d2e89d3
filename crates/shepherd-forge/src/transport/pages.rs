//! Pagination: `per_page=100`, then GitLab's `X-Next-Page` (the next page
//! number, asked of the same URL, so the token never follows a link
//! elsewhere), else `Link: rel="next"` while it stays on the API's origin.

use reqwest::header::{HeaderMap, LINK};
use serde::de::DeserializeOwned;
use url::Url;

use super::client::Transport;
use super::exchange::decode_json;
use super::flavor::Flavor;
use super::request::Conditional;
use crate::error::{ForgeError, Result};

impl Transport {
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

/// The `rel="next"` target of a `Link` header.
pub(super) fn next_link(headers: &HeaderMap) -> Option<Url> {
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
