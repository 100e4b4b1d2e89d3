//! A review comment's `diffHunk`: shared by every comment of its thread
//! (a reply copies a reference, not the text), with its JSON string form
//! made once, so that a GraphQL page writes the hunk without escaping it
//! again per request.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use serde::{Serialize, Serializer};

/// The one-line hunk of line `line` (1-based) of `text`, for a comment on
/// a line outside the diff (GitHub only allows lines in the diff; scenarios
/// and control requests are less strict).
pub(crate) fn one_line_hunk(text: &str, line: u32) -> String {
    let content = text
        .lines()
        .nth(line.saturating_sub(1) as usize)
        .unwrap_or_default();
    format!("@@ -{line},1 +{line},1 @@\n {content}")
}

/// The text of a diff hunk and the same text as a JSON string (quoted and
/// escaped).
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct DiffHunk(Arc<Inner>);

#[derive(PartialEq, Eq)]
struct Inner {
    text: String,
    json: String,
}

impl DiffHunk {
    /// The hunk as a JSON string literal, quotes included.
    pub(crate) fn json(&self) -> &str {
        &self.0.json
    }
}

impl From<String> for DiffHunk {
    fn from(text: String) -> DiffHunk {
        // Serializing a string to JSON cannot fail; the fallback is never used.
        let json = serde_json::to_string(&text).unwrap_or_else(|_| "\"\"".to_owned());
        DiffHunk(Arc::new(Inner { text, json }))
    }
}

impl Deref for DiffHunk {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0.text
    }
}

impl fmt::Debug for DiffHunk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0.text, f)
    }
}

impl Serialize for DiffHunk {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_json_form_is_the_text_as_a_json_string() {
        let hunk = DiffHunk::from("@@ -1 +1 @@\n+say \"hi\"\t\\".to_owned());
        let back: String = serde_json::from_str(hunk.json()).unwrap();
        assert_eq!(back, &*hunk);
        assert_eq!(serde_json::to_value(&hunk).unwrap(), back.as_str());
        assert_eq!(format!("{hunk:?}"), format!("{back:?}"));
    }
}
