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
//! By concern, each file below the ones it uses: `config` (the options a
//! caller sets), `flavor` (what differs between GitHub and GitLab),
//! `request` (a request's parts and outcomes), `limits` (rate limits),
//! `client` (the [`Transport`] itself), `exchange` (one HTTP exchange and its
//! status), `retry` (the retry loop), `conditional` (ETags), and the calls
//! the clients make: `graphql`, `rest`, `pages` (pagination).

mod client;
mod conditional;
mod config;
mod exchange;
mod flavor;
mod graphql;
mod limits;
mod pages;
mod request;
mod rest;
mod retry;

#[cfg(test)]
mod tests;

pub(crate) use client::{Transport, SHARED_IN_FLIGHT};
pub use config::{ClientConfig, RetryPolicy};
pub(crate) use exchange::decode_json;
pub(crate) use flavor::{Api, Flavor};
pub(crate) use pages::{last_page, link_target};
pub(crate) use request::Conditional;
