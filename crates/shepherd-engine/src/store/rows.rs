//! Reading and writing column values: rows read by name into plain
//! structs, serde enums stored as their word, JSON columns.

use rusqlite::{Connection, Params, Row};
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::error::{Result, SqlContext, StoreError};

/// Every row `sql` selects, each read by `from_row` (a [`row!`] struct's).
pub(super) fn query_rows<R>(
    conn: &Connection,
    context: &'static str,
    sql: &str,
    params: impl Params,
    from_row: fn(&Row<'_>) -> rusqlite::Result<R>,
) -> Result<Vec<R>> {
    let mut stmt = conn.prepare(sql).ctx(context)?;
    let rows = stmt
        .query_map(params, from_row)
        .and_then(Iterator::collect)
        .ctx(context)?;
    Ok(rows)
}

/// Encode a kebab-case serde enum (Decision, Outcome) as its word.
pub(super) fn enum_to_str<T: Serialize>(value: &T) -> Result<String> {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => Ok(s),
        Ok(other) => Err(StoreError::Corrupt {
            column: "enum",
            value: other.to_string(),
        }),
        Err(source) => Err(StoreError::Json {
            context: "encode enum",
            source,
        }),
    }
}

pub(super) fn enum_from_str<T: DeserializeOwned>(column: &'static str, s: String) -> Result<T> {
    serde_json::from_value(serde_json::Value::String(s.clone()))
        .map_err(|_| StoreError::Corrupt { column, value: s })
}

pub(super) fn decode_json(s: &str) -> Result<serde_json::Value> {
    serde_json::from_str(s).map_err(|source| StoreError::Json {
        context: "decode stored JSON",
        source,
    })
}

/// A struct of a table's row and its `from_row`, which reads each field from
/// the column of the same name (so a `SELECT`'s column order cannot swap two
/// fields of one type).
macro_rules! row {
    ($(#[$meta:meta])* struct $name:ident { $($field:ident: $ty:ty),* $(,)? }) => {
        $(#[$meta])*
        struct $name {
            $($field: $ty),*
        }

        impl $name {
            fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Self> {
                Ok($name {
                    $($field: r.get(stringify!($field))?),*
                })
            }
        }
    };
}
pub(super) use row;
