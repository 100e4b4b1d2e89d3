//! The review bodies of a pull request, read through REST so that their
//! pages come at once.
//!
//! On GitHub every standalone review comment is its own review, so a pull
//! request has about as many reviews as review comments: GraphQL's cursor
//! pagination of `reviews` would put one sequential round trip per 100 of
//! them on the snapshot's critical path (207 at 10,000 threads). REST's
//! `GET /repos/{o}/{r}/pulls/{n}/reviews` pages by number instead: the first
//! page's `Link: rel="last"` names the page count, and the other pages are
//! asked together, [`REVIEW_PAGES_IN_FLIGHT`] at a time, so they take
//! `1 + ceil((pages - 1) / 3)` steps beside the thread pages.

use std::collections::HashSet;

use futures::{StreamExt, TryStreamExt};
use shepherd_core::model::{RepoRef, TopLevelComment};

use super::client::repo_url;
use super::rest_wire::ReviewListedRest;
use crate::error::{ForgeError, Result};
use crate::transport::{decode_json, last_page, link_target, Transport, SHARED_IN_FLIGHT};

/// How many review pages are asked at once: all the client's shared slots
/// (the lead's stays for the thread pages, the critical path of a snapshot).
pub(crate) const REVIEW_PAGES_IN_FLIGHT: usize = SHARED_IN_FLIGHT;

/// Non-empty bodies of submitted reviews, in the forge's order.
pub(crate) async fn fetch_review_bodies(
    transport: &Transport,
    repo: &RepoRef,
    number: u64,
) -> Result<Vec<TopLevelComment>> {
    let number = number.to_string();
    let url = repo_url(transport, repo, &["pulls", &number, "reviews"])?;
    let name = format!("GET {}", url.path());
    let first = transport
        .get_answer(&url, &[("per_page", "100"), ("page", "1")])
        .await?;
    let mut reviews: Vec<ReviewListedRest> = decode_json(&name, &first.body)?;
    if let Some(last) = last_page(&first.headers) {
        let url = &url;
        let pages: Vec<Vec<ReviewListedRest>> = futures::stream::iter(2..=last)
            .map(|page| async move {
                let page = page.to_string();
                let answer = transport
                    .get_answer(url, &[("per_page", "100"), ("page", &page)])
                    .await?;
                decode_json::<Vec<ReviewListedRest>>(&format!("GET {}", url.path()), &answer.body)
            })
            .buffered(REVIEW_PAGES_IN_FLIGHT)
            .try_collect()
            .await?;
        reviews.extend(pages.into_iter().flatten());
    } else if link_target(&first.headers, "next").is_some() {
        // A forge that names no last page: read on page by page.
        let mut page = 2u64;
        loop {
            let number = page.to_string();
            let answer = transport
                .get_answer(&url, &[("per_page", "100"), ("page", &number)])
                .await?;
            let more: Vec<ReviewListedRest> = decode_json(&name, &answer.body)?;
            reviews.extend(more);
            if link_target(&answer.headers, "next").is_none() {
                break;
            }
            page = page.checked_add(1).ok_or_else(|| ForgeError::Decode {
                request: name.clone(),
                message: "too many pages".into(),
            })?;
        }
    }
    // A review submitted between two pages shifts the later ones: keep the
    // first sight of each.
    let mut seen = HashSet::new();
    Ok(reviews
        .into_iter()
        .filter(|review| seen.insert(review.id))
        .filter_map(ReviewListedRest::into_review_body)
        .collect())
}
