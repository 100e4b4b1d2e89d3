//! Finding the answer's JSON object in an agent's free text.
//!
//! CLIs without structured output (or whose structured output is not used)
//! answer in prose: the object alone, the object in a code fence, or the
//! object after a sentence. The extracted text is validated afterwards like
//! any answer; extraction only decides which part of the text to validate.

/// The JSON object `text` answers with: the whole text when it is one;
/// else the last fenced code block holding one; else the last balanced
/// `{...}` holding one; else the trimmed text itself (which then fails
/// validation with a message naming the problem).
pub(crate) fn json_object(text: &str) -> String {
    let trimmed = text.trim();
    if is_object(trimmed) {
        return trimmed.to_owned();
    }
    if let Some(block) = fenced_blocks(trimmed)
        .into_iter()
        .rev()
        .find(|b| is_object(b.trim()))
    {
        return block.trim().to_owned();
    }
    if let Some(object) = balanced_objects(trimmed)
        .into_iter()
        .rev()
        .find(|o| is_object(o))
    {
        return object.to_owned();
    }
    trimmed.to_owned()
}

fn is_object(s: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(s).is_ok_and(|v| v.is_object())
}

/// The contents of every ```` ``` ```` fenced block, in order.
fn fenced_blocks(text: &str) -> Vec<&str> {
    let mut blocks = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find("```") {
        let after = &rest[open + 3..];
        // Skip the info string (`json`) up to the end of the line.
        let Some(newline) = after.find('\n') else {
            break;
        };
        let body = &after[newline + 1..];
        let Some(close) = body.find("```") else {
            break;
        };
        blocks.push(&body[..close]);
        rest = &body[close + 3..];
    }
    blocks
}

/// Every top-level balanced `{...}` span, in order, skipping braces inside
/// JSON strings.
fn balanced_objects(text: &str) -> Vec<&str> {
    let mut spans = Vec::new();
    let bytes = text.as_bytes();
    let (mut depth, mut start) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for (i, &b) in bytes.iter().enumerate() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' if depth > 0 => in_string = true,
            b'{' => {
                if depth == 0 {
                    start = i;
                }
                depth += 1;
            }
            b'}' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    spans.push(&text[start..=i]);
                }
            }
            _ => {}
        }
    }
    spans
}

/// The first HTTP error status (400-599) a CLI's error text names:
/// `"statusCode":401`, `status: 429`, `code: 401`, `[401]`, `401 Unauthorized`.
pub(crate) fn http_status(text: &str) -> Option<u16> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i + 3 <= bytes.len() {
        let is_code = bytes[i..i + 3].iter().all(u8::is_ascii_digit)
            && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric())
            && bytes.get(i + 3).is_none_or(|b| !b.is_ascii_alphanumeric());
        if is_code {
            let code: u16 = text[i..i + 3].parse().unwrap_or(0);
            let before = text[..i].trim_end_matches([' ', ':', '"', '=', '[', '(']);
            let lower = before.to_ascii_lowercase();
            let named = ["status", "statuscode", "code", "http"]
                .iter()
                .any(|k| lower.ends_with(k));
            let after = text[i + 3..].trim_start();
            let phrase = [
                "Unauthorized",
                "Forbidden",
                "Too Many",
                "Internal",
                "Bad ",
                "Service",
            ]
            .iter()
            .any(|p| after.starts_with(p));
            let bracketed = text[..i].ends_with('[') && text[i + 3..].starts_with(']');
            if (400..600).contains(&code) && (named || phrase || bracketed) {
                return Some(code);
            }
            i += 3;
        } else {
            i += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_object_in_prose_and_fences() {
        assert_eq!(json_object("  {\"a\":1}\n"), "{\"a\":1}");
        assert_eq!(
            json_object("Here it is:\n```json\n{\"a\": \"}\"}\n```\nDone."),
            "{\"a\": \"}\"}"
        );
        assert_eq!(
            json_object("First {\"draft\":true} then the answer: {\"a\":{\"b\":\"{\"}}"),
            "{\"a\":{\"b\":\"{\"}}"
        );
        assert_eq!(json_object("no json here"), "no json here");
        assert_eq!(json_object("[1,2]"), "[1,2]");
    }

    #[test]
    fn finds_the_http_status_a_cli_names() {
        assert_eq!(http_status(r#"{"statusCode":401,"x":1}"#), Some(401));
        assert_eq!(
            http_status("ApiError: got status: 429 Too Many Requests"),
            Some(429)
        );
        assert_eq!(http_status("[API Error: boom (Status: 500)]"), Some(500));
        assert_eq!(http_status("{ code: 401 }"), Some(401));
        assert_eq!(http_status("401 Unauthorized"), Some(401));
        assert_eq!(http_status("took 401 ms; line 404 of a.rs"), None);
        assert_eq!(http_status("exit code 1"), None);
    }
}
