//! The answer schema in the subset OpenAI's structured outputs accept
//! (what `codex exec --output-schema` sends to the model).
//!
//! Strict mode requires every object to list all its properties as required
//! and to forbid others (Shepherd's answer schemas already do), and refuses
//! some keywords. This keeps `type`, `properties`, `required`,
//! `additionalProperties`, `items`, `enum`, `anyOf`, `$ref`/`$defs` and
//! `description`; turns `oneOf` of constants into `enum` (and any other
//! `oneOf` into `anyOf`); and drops length, range, pattern and format
//! constraints. Nothing is lost: Shepherd validates every answer against the
//! full schema afterwards.

use serde_json::{Map, Value};

/// Keywords dropped wherever they appear.
const DROPPED: [&str; 14] = [
    "$schema",
    "title",
    "format",
    "pattern",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minItems",
    "maxItems",
    "uniqueItems",
    "default",
];

/// `schema` restricted to the strict subset (see the module docs).
pub(crate) fn strict_schema(schema: &Value) -> Value {
    match schema {
        Value::Object(obj) => Value::Object(strict_object(obj)),
        Value::Array(items) => Value::Array(items.iter().map(strict_schema).collect()),
        other => other.clone(),
    }
}

fn strict_object(obj: &Map<String, Value>) -> Map<String, Value> {
    // A `$ref` may not have siblings there.
    if let Some(target) = obj.get("$ref") {
        let mut only = Map::new();
        only.insert("$ref".to_owned(), target.clone());
        return only;
    }
    let mut out = Map::new();
    for (key, value) in obj {
        if DROPPED.contains(&key.as_str()) {
            continue;
        }
        match (key.as_str(), value) {
            // Property names and definition names are not keywords.
            ("properties" | "$defs", Value::Object(children)) => {
                let children = children
                    .iter()
                    .map(|(name, child)| (name.clone(), strict_schema(child)))
                    .collect();
                out.insert(key.clone(), Value::Object(children));
            }
            ("oneOf", Value::Array(variants)) => match constants(variants) {
                Some(values) => {
                    out.insert("type".to_owned(), Value::String("string".to_owned()));
                    out.insert("enum".to_owned(), Value::Array(values));
                }
                None => {
                    out.insert("anyOf".to_owned(), strict_schema(value));
                }
            },
            ("const", constant) => {
                out.insert("enum".to_owned(), Value::Array(vec![constant.clone()]));
            }
            _ => {
                out.insert(key.clone(), strict_schema(value));
            }
        }
    }
    out
}

/// The string constants of `oneOf` variants that are each one string constant.
fn constants(variants: &[Value]) -> Option<Vec<Value>> {
    variants
        .iter()
        .map(|v| match v.get("const") {
            Some(c @ Value::String(_)) => Some(c.clone()),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;
    use crate::answer::{FixAnswer, ReviewAnswer, TriageAnswer};
    use crate::validate::answer_schema;

    fn keywords(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(o) => {
                for (k, child) in o {
                    if k != "properties" && k != "$defs" {
                        out.push(k.clone());
                    }
                    if k == "properties" || k == "$defs" {
                        for grandchild in child.as_object().unwrap().values() {
                            keywords(grandchild, out);
                        }
                    } else {
                        keywords(child, out);
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|c| keywords(c, out)),
            _ => {}
        }
    }

    #[test]
    fn only_strict_keywords_remain() {
        const ALLOWED: [&str; 10] = [
            "type",
            "properties",
            "required",
            "additionalProperties",
            "items",
            "enum",
            "anyOf",
            "$ref",
            "$defs",
            "description",
        ];
        for schema in [
            answer_schema::<TriageAnswer>(),
            answer_schema::<FixAnswer>(),
            answer_schema::<ReviewAnswer>(),
        ] {
            let strict = strict_schema(&schema);
            let mut found = Vec::new();
            keywords(&strict, &mut found);
            for k in &found {
                assert!(ALLOWED.contains(&k.as_str()), "{k} in {strict:#}");
            }
            // Still a schema that a valid answer passes.
            jsonschema::validator_for(&strict).unwrap();
        }
        let strict = strict_schema(&answer_schema::<FixAnswer>());
        assert_eq!(
            strict["$defs"]["FixStatus"]["enum"],
            serde_json::json!(["fixed", "fixed-differently", "blocked"])
        );
        assert_eq!(
            strict["$defs"]["ThreadOutcome"]["properties"]["status"],
            serde_json::json!({"$ref": "#/$defs/FixStatus"})
        );
    }
}
