//! The [`Transport`]: one authenticated HTTP client of a forge, its `ETag`
//! cache and its request slots, shared by its clones.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::Semaphore;

use super::config::{ClientConfig, RetryPolicy};
use super::flavor::Api;
use super::request::Kept;
use crate::error::{ForgeError, Result};
use crate::token::Token;

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

/// The authenticated HTTP side of a forge client.
#[derive(Clone)]
pub(crate) struct Transport {
    pub(super) http: reqwest::Client,
    pub(super) api: Api,
    pub(super) token: Token,
    pub(super) retry: RetryPolicy,
    /// ETags and answers of conditional GETs, by full URL (query included).
    pub(super) etags: Arc<Mutex<HashMap<String, Kept>>>,
    /// The shared slots of [`MAX_IN_FLIGHT`] ([`SHARED_IN_FLIGHT`]), shared
    /// by the clones of a transport.
    pub(super) in_flight: Arc<Semaphore>,
    /// The lead's slot, shared by the clones of a transport.
    pub(super) lead_slot: Arc<Semaphore>,
    /// Whether this transport's requests take the lead's slot.
    pub(super) is_lead: bool,
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
}
