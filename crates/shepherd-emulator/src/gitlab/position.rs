//! A new discussion's `position` (GitLab's "Create a new thread in the
//! merge request diff"): the file and lines a diff note is on. The
//! position must be on the merge request's current version (`head_sha`
//! its head) and its line in that version's diff, as the emulator keeps
//! only the current diff.

use serde_json::{Map, Value};

use super::common::GlError;
use crate::scenario::Side;
use crate::state::{NewThread, PullRequestRecord};

/// GitLab's answer to a position on no line of the diff.
const INVALID_LINE: &str = r#"Note {:line_code=>["can't be blank", "must be a valid line code"]}"#;

/// The thread `body` starts at `position` on `pr`; with no position, a
/// discussion of the merge request itself (an empty path, no line).
pub(crate) fn new_thread(
    pr: &PullRequestRecord,
    body: String,
    position: Option<&Map<String, Value>>,
) -> Result<NewThread, GlError> {
    let mut thread = NewThread {
        path: String::new(),
        line: None,
        start_line: None,
        side: Side::Right,
        body,
        diff_hunk: String::new(),
    };
    let Some(position) = position else {
        return Ok(thread);
    };
    // Grape's answer to required keys left out.
    let missing: Vec<String> = ["base_sha", "start_sha", "head_sha", "position_type"]
        .iter()
        .filter(|key| text(position, key).is_none())
        .map(|key| format!("position[{key}] is missing"))
        .collect();
    if !missing.is_empty() {
        return Err(GlError::parameter(&missing.join(", ")));
    }
    if text(position, "head_sha") != Some(pr.head_sha.as_str()) {
        return Err(GlError::bad_request(
            "position[head_sha] is not the head of the merge request's current version",
        ));
    }
    thread.path = text(position, "new_path")
        .or_else(|| text(position, "old_path"))
        .ok_or_else(|| GlError::bad_request(r#"Note {:position=>["is incomplete"]}"#))?
        .to_owned();
    match text(position, "position_type") {
        Some("file") => {
            if !pr.diff.contains_key(&thread.path) {
                return Err(GlError::bad_request(INVALID_LINE));
            }
        }
        Some("text") => {
            let (line, side) = match (number(position, "new_line"), number(position, "old_line")) {
                (Some(new), _) => (new, Side::Right),
                (None, Some(old)) => (old, Side::Left),
                (None, None) => return Err(GlError::bad_request(INVALID_LINE)),
            };
            thread.diff_hunk = pr
                .hunk_for(&thread.path, line, side)
                .ok_or_else(|| GlError::bad_request(INVALID_LINE))?;
            thread.line = Some(line);
            thread.side = side;
            thread.start_line = range_start(position, side).filter(|start| *start < line);
        }
        _ => {
            return Err(GlError::parameter(
                "position[position_type] does not have a valid value",
            ))
        }
    }
    Ok(thread)
}

/// The first line of `line_range`, on `side`: its `new_line`/`old_line`,
/// else the numbers of its `line_code` (`<sha1 of path>_<old>_<new>`).
fn range_start(position: &Map<String, Value>, side: Side) -> Option<u32> {
    let start = position.get("line_range")?.get("start")?.as_object()?;
    let key = match side {
        Side::Right => "new_line",
        Side::Left => "old_line",
    };
    number(start, key).or_else(|| {
        let code = text(start, "line_code")?;
        let mut parts = code.rsplit('_');
        let new = parts.next()?.parse().ok();
        let old = parts.next()?.parse().ok();
        match side {
            Side::Right => new,
            Side::Left => old,
        }
        .filter(|line| *line > 0)
    })
}

fn text<'m>(map: &'m Map<String, Value>, key: &str) -> Option<&'m str> {
    map.get(key)?.as_str().filter(|s| !s.is_empty())
}

/// A line number, as JSON or as text (a form body).
fn number(map: &Map<String, Value>, key: &str) -> Option<u32> {
    match map.get(key)? {
        Value::Number(n) => n.as_u64().and_then(|n| u32::try_from(n).ok()),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => unreachable!(),
        }
    }

    #[test]
    fn a_range_starts_at_its_line_or_its_line_code() {
        let position = map(json!({ "line_range": { "start": { "new_line": "3" } } }));
        assert_eq!(range_start(&position, Side::Right), Some(3));
        let position = map(json!({ "line_range": { "start": { "line_code": "abc_7_0" } } }));
        assert_eq!(range_start(&position, Side::Left), Some(7));
        assert_eq!(range_start(&position, Side::Right), None);
        assert_eq!(range_start(&map(json!({})), Side::Right), None);
    }
}
