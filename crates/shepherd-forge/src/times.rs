//! Forge timestamps (RFC 3339), read and written.

use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use crate::error::{ForgeError, Result};

/// A forge timestamp, or a decode error naming `request`.
pub(crate) fn forge_time(request: &str, text: &str) -> Result<OffsetDateTime> {
    OffsetDateTime::parse(text, &Rfc3339).map_err(|e| ForgeError::Decode {
        request: request.to_owned(),
        message: format!("`{text}` is not an RFC 3339 time: {e}"),
    })
}
