//! Writing a GraphQL answer as JSON bytes, with strings that were made JSON
//! once (a comment's `diffHunk`, most of a review-thread page's bytes)
//! copied in as they are, instead of copied into the answer's value,
//! escaped again and copied out on every request.
//!
//! Such a string is resolved as a [`JsonString`]: the request's
//! [`JsonStrings`] keep it, and async-graphql's value holds a one-key
//! object marked by [`RAW_KEY`] with its index there; [`write_value`] writes
//! the JSON text in its place. An object whose selection is only plain
//! fields ([`plain_fields`]) can be written to JSON text whole the same way,
//! without async-graphql's per-field futures and maps (see
//! `pull_request/fast_path.rs`: threads, review comments, reviews). Every
//! answer is written here (or, with errors, read back into a
//! `serde_json::Value` by [`to_json`]), so no mark reaches a client.

use std::borrow::Cow;
use std::rc::Rc;
use std::sync::{Arc, Mutex, PoisonError};

use async_graphql::context::QueryEnv;
use async_graphql::indexmap::IndexMap;
use async_graphql::parser::types::{Field, Selection, SelectionSet};
use async_graphql::registry::Registry;
use async_graphql::{ContextSelectionSet, Name, OutputType, Positioned, ServerResult, Value};

use crate::hunk::DiffHunk;

/// The key of the one-key object that stands for a pre-made JSON string.
const RAW_KEY: &str = "$shepherd_emulator::json_string";

/// A pre-made piece of JSON text.
pub(crate) enum Raw {
    /// A diff hunk's JSON string.
    Hunk(DiffHunk),
    /// An object written whole.
    Text(JsonText),
}

/// JSON text written ahead, with diff hunks' JSON strings spliced in where
/// they go instead of copied in.
pub(crate) struct JsonText {
    bytes: Vec<u8>,
    /// Each hunk with the offset in `bytes` it goes at, in order.
    hunks: Vec<(usize, DiffHunk)>,
}

impl JsonText {
    /// `bytes`, with `hunks` at their offsets (ascending).
    pub(crate) fn new(bytes: Vec<u8>, hunks: Vec<(usize, DiffHunk)>) -> JsonText {
        JsonText { bytes, hunks }
    }

    fn len(&self) -> usize {
        let hunks: usize = self.hunks.iter().map(|(_, h)| h.json().len()).sum();
        self.bytes.len() + hunks
    }

    fn write_to(&self, out: &mut Vec<u8>) {
        let mut at = 0;
        for (offset, hunk) in &self.hunks {
            out.extend_from_slice(&self.bytes[at..*offset]);
            out.extend_from_slice(hunk.json().as_bytes());
            at = *offset;
        }
        out.extend_from_slice(&self.bytes[at..]);
    }
}

impl Raw {
    fn len(&self) -> usize {
        match self {
            Raw::Hunk(hunk) => hunk.json().len(),
            Raw::Text(text) => text.len(),
        }
    }

    fn write_to(&self, out: &mut Vec<u8>) {
        match self {
            Raw::Hunk(hunk) => out.extend_from_slice(hunk.json().as_bytes()),
            Raw::Text(text) => text.write_to(out),
        }
    }
}

/// The pre-made JSON of one request's answer (request data).
#[derive(Clone, Default)]
pub(crate) struct JsonStrings(Arc<Mutex<Vec<Raw>>>);

impl JsonStrings {
    fn push(&self, raw: Raw) -> Value {
        let mut kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        kept.push(raw);
        let mut object = IndexMap::with_capacity(1);
        object.insert(Name::new(RAW_KEY), Value::Number((kept.len() - 1).into()));
        Value::Object(object)
    }

    /// The value that stands for `json`, a JSON text, in the answer.
    pub(crate) fn text(&self, json: JsonText) -> Value {
        self.push(Raw::Text(json))
    }

    /// The pieces, by index.
    pub(crate) fn take(&self) -> Vec<Raw> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// A `String!` field whose value is already a JSON string literal.
pub(crate) struct JsonString(DiffHunk);

impl From<DiffHunk> for JsonString {
    fn from(hunk: DiffHunk) -> JsonString {
        JsonString(hunk)
    }
}

impl OutputType for JsonString {
    fn type_name() -> Cow<'static, str> {
        <String as OutputType>::type_name()
    }

    fn create_type_info(registry: &mut Registry) -> String {
        <String as OutputType>::create_type_info(registry)
    }

    async fn resolve(
        &self,
        ctx: &ContextSelectionSet<'_>,
        _field: &Positioned<Field>,
    ) -> ServerResult<Value> {
        let Some(strings) = ctx.data_opt::<JsonStrings>() else {
            // Without a place to keep it: an ordinary string.
            return Ok(Value::String(self.0.to_string()));
        };
        Ok(strings.push(Raw::Hunk(self.0.clone())))
    }
}

/// The pre-made JSON that `value` stands for, if it is a mark.
fn raw<'a>(value: &IndexMap<Name, Value>, strings: &'a [Raw]) -> Option<&'a Raw> {
    if value.len() != 1 {
        return None;
    }
    match value.get(RAW_KEY) {
        Some(Value::Number(index)) => {
            let index = usize::try_from(index.as_u64()?).ok()?;
            strings.get(index)
        }
        _ => None,
    }
}

/// `{"data": …}`, the answer without errors or extensions.
pub(crate) fn data_answer(data: &Value, strings: &[Raw]) -> Vec<u8> {
    // The pre-made pieces are most of the answer.
    let ahead: usize = strings.iter().map(Raw::len).sum();
    let mut out = Vec::with_capacity(4096 + ahead + ahead / 8);
    out.extend_from_slice(b"{\"data\":");
    write_value(&mut out, data, strings);
    out.push(b'}');
    out
}

/// `value` as a `serde_json::Value` (for reshaping an answer with errors).
pub(crate) fn to_json(value: &Value, strings: &[Raw]) -> serde_json::Result<serde_json::Value> {
    let mut out = Vec::new();
    write_value(&mut out, value, strings);
    serde_json::from_slice(&out)
}

/// Writes `value` as JSON, as async-graphql's own serialization does, with
/// each pre-made JSON string (an index into `strings`) written as it is.
pub(crate) fn write_value(out: &mut Vec<u8>, value: &Value, strings: &[Raw]) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Boolean(true) => out.extend_from_slice(b"true"),
        Value::Boolean(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => {
            // Writing to a Vec cannot fail.
            let _ = serde_json::to_writer(&mut *out, n);
        }
        Value::String(s) => write_str(out, s),
        Value::Enum(name) => write_name(out, name),
        Value::Binary(bytes) => {
            // serde_json writes bytes as an array of numbers.
            let _ = serde_json::to_writer(&mut *out, &bytes[..]);
        }
        Value::List(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(out, item, strings);
            }
            out.push(b']');
        }
        Value::Object(fields) => {
            if let Some(raw) = raw(fields, strings) {
                raw.write_to(out);
                return;
            }
            out.push(b'{');
            for (i, (key, item)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_name(out, key);
                out.push(b':');
                write_value(out, item, strings);
            }
            out.push(b'}');
        }
    }
}

/// Writes a GraphQL name (a response key, a type or enum value name, which
/// the parser and the schema keep to `[_A-Za-z][_0-9A-Za-z]*`): nothing in
/// it needs escaping.
pub(crate) fn write_name(out: &mut Vec<u8>, name: &str) {
    debug_assert!(name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'));
    out.push(b'"');
    out.extend_from_slice(name.as_bytes());
    out.push(b'"');
}

pub(crate) fn write_str(out: &mut Vec<u8>, s: &str) {
    // Without an early exit, so that the check runs many bytes at a time.
    let plain = !s.bytes().fold(false, |escape, b| {
        escape | (b < 0x20) | (b == b'"') | (b == b'\\')
    });
    if plain {
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    } else {
        // serde_json's escaping (writing to a Vec cannot fail).
        let _ = serde_json::to_writer(&mut *out, s);
    }
}

/// One field of a selection: its response key, its name and what it
/// selects in turn.
pub(crate) struct PlainField<'a> {
    pub(crate) key: &'a str,
    pub(crate) name: &'a str,
    pub(crate) selection_set: &'a Positioned<SelectionSet>,
    /// The field as written (its arguments: variables unresolved).
    pub(crate) field: &'a Field,
}

/// Writes a JSON object of `fields`, each key as the query names it and its
/// value by `value`; `None` when `value` gives `None` for one.
pub(crate) fn write_object<'a>(
    out: &mut Vec<u8>,
    fields: &[PlainField<'a>],
    mut value: impl FnMut(&mut Vec<u8>, &PlainField<'a>) -> Option<()>,
) -> Option<()> {
    out.push(b'{');
    for (i, field) in fields.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_name(out, field.key);
        out.push(b':');
        value(out, field)?;
    }
    out.push(b'}');
    Some(())
}

/// The plain fields of the selection sets met while writing one thread:
/// a page of comments finds its comments' (and their authors' and reviews')
/// fields once, not once per comment.
#[derive(Default)]
pub(crate) struct FieldsMemo<'a> {
    /// By the selection set's address and the type: its plain fields, or
    /// `None` when it has others. The sets are borrowed for `'a`, longer
    /// than the memo lives, so no address is reused while it is kept.
    seen: Vec<(usize, &'static str, Option<SharedFields<'a>>)>,
}

/// A selection's plain fields, shared by the objects that use it.
pub(crate) type SharedFields<'a> = Rc<[PlainField<'a>]>;

impl<'a> FieldsMemo<'a> {
    /// [`plain_fields`], found once per selection set and type.
    pub(crate) fn get(
        &mut self,
        env: &'a QueryEnv,
        set: &'a Positioned<SelectionSet>,
        on: &'static str,
        with_arguments: &[&str],
    ) -> Option<SharedFields<'a>> {
        let key = std::ptr::from_ref(set) as usize;
        if let Some((_, _, fields)) = self.seen.iter().find(|(k, o, _)| *k == key && *o == on) {
            return fields.clone();
        }
        let fields: Option<SharedFields<'a>> =
            plain_fields(env, set, on, with_arguments).map(Rc::from);
        self.seen.push((key, on, fields.clone()));
        fields
    }
}

/// The fields `set` selects on an object of type `on`, fragments spread in,
/// in order; `None` when async-graphql must resolve it: a field with
/// arguments (but those named in `with_arguments`) or directives, a
/// fragment on another type (an interface), or a response key asked twice
/// (fields to merge).
pub(crate) fn plain_fields<'a>(
    env: &'a QueryEnv,
    set: &'a Positioned<SelectionSet>,
    on: &str,
    with_arguments: &[&str],
) -> Option<Vec<PlainField<'a>>> {
    let mut fields = Vec::with_capacity(set.node.items.len());
    collect(env, &set.node, on, &mut fields, 0)?;
    if fields
        .iter()
        .any(|f| !f.field.arguments.is_empty() && !with_arguments.contains(&f.name))
    {
        return None;
    }
    for (i, field) in fields.iter().enumerate() {
        if fields[..i].iter().any(|f| f.key == field.key) {
            return None;
        }
    }
    Some(fields)
}

fn collect<'a>(
    env: &'a QueryEnv,
    set: &'a SelectionSet,
    on: &str,
    fields: &mut Vec<PlainField<'a>>,
    depth: usize,
) -> Option<()> {
    // Fragments nest a few levels in practice; deeper ones go the usual way.
    if depth > 8 {
        return None;
    }
    for item in &set.items {
        match &item.node {
            Selection::Field(field) => {
                let field = &field.node;
                if !field.directives.is_empty() {
                    return None;
                }
                fields.push(PlainField {
                    key: field.response_key().node.as_str(),
                    name: field.name.node.as_str(),
                    selection_set: &field.selection_set,
                    field,
                });
            }
            Selection::FragmentSpread(spread) => {
                let spread = &spread.node;
                let fragment = &env.fragments.get(&spread.fragment_name.node)?.node;
                if !spread.directives.is_empty()
                    || !fragment.directives.is_empty()
                    || fragment.type_condition.node.on.node.as_str() != on
                {
                    return None;
                }
                collect(env, &fragment.selection_set.node, on, fields, depth + 1)?;
            }
            Selection::InlineFragment(fragment) => {
                let fragment = &fragment.node;
                let other_type = fragment
                    .type_condition
                    .as_ref()
                    .is_some_and(|c| c.node.on.node.as_str() != on);
                if other_type || !fragment.directives.is_empty() {
                    return None;
                }
                collect(env, &fragment.selection_set.node, on, fields, depth + 1)?;
            }
        }
    }
    Some(())
}

/// The value of argument `name` of `field` (`null` when not given), its
/// variables resolved; `None` for a variable the request does not give
/// (async-graphql then applies the variable's default).
pub(crate) fn argument(env: &QueryEnv, field: &PlainField<'_>, name: &str) -> Option<Value> {
    let Some((_, value)) = field.field.arguments.iter().find(|(n, _)| n.node == name) else {
        return Some(Value::Null);
    };
    value
        .node
        .clone()
        .into_const_with(|var| env.variables.get(&var).cloned().ok_or(()))
        .ok()
}

/// Writes `null` or the number.
pub(crate) fn write_int(out: &mut Vec<u8>, n: Option<i32>) {
    match n {
        // Writing to a Vec cannot fail.
        Some(n) => {
            let _ = serde_json::to_writer(&mut *out, &n);
        }
        None => out.extend_from_slice(b"null"),
    }
}

/// Writes `true` or `false`.
pub(crate) fn write_bool(out: &mut Vec<u8>, b: bool) {
    out.extend_from_slice(if b { b"true" } else { b"false" });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(index: u64) -> Value {
        let mut object = IndexMap::new();
        object.insert(Name::new(RAW_KEY), Value::Number(index.into()));
        Value::Object(object)
    }

    #[test]
    fn values_are_written_as_serde_writes_them() {
        let value = async_graphql::value!({
            "a": [1, -2, 2.5, null, true, false, "x\"y\n\u{1}é"],
            "b": { "c": {}, "d": [] },
        });
        let ours = data_answer(&value, &[]);
        let theirs = serde_json::to_vec(&async_graphql::Response::new(value.clone())).unwrap();
        assert_eq!(
            String::from_utf8(ours).unwrap(),
            String::from_utf8(theirs).unwrap()
        );
        let theirs = serde_json::to_value(async_graphql::Response::new(value.clone())).unwrap();
        assert_eq!(to_json(&value, &[]).unwrap(), theirs["data"]);
    }

    #[test]
    fn pre_made_json_strings_are_strings() {
        let strings = [
            Raw::Hunk(DiffHunk::from("@@ -1 +1 @@\n+\"q\"\t".to_owned())),
            Raw::Text(JsonText::new(
                b"{\"a\":[1,],\"b\":}".to_vec(),
                vec![
                    (8, DiffHunk::from("x".to_owned())),
                    (14, DiffHunk::from("y".to_owned())),
                ],
            )),
        ];
        let mut object = IndexMap::new();
        object.insert(Name::new("diffHunk"), mark(1));
        object.insert(Name::new("n"), Value::Number(3.into()));
        object.insert(Name::new("again"), mark(0));
        let value = Value::Object(object);
        let written: serde_json::Value =
            serde_json::from_slice(&data_answer(&value, &strings)).unwrap();
        assert_eq!(
            written,
            serde_json::json!({"data": {"diffHunk": {"a": [1, "x"], "b": "y"}, "n": 3, "again": "@@ -1 +1 @@\n+\"q\"\t"}})
        );
        assert_eq!(to_json(&value, &strings).unwrap(), written["data"]);
    }
}
