//! The reference of every key, rendered from the key table (README, doctor).

use super::keys::KEYS;
use super::layers::ENV_VARS;
use super::sections::Config;
use toml::{Table, Value};

/// The reference of every key (type, default, description) and of the
/// environment variables, as Markdown, for the README and `shepherd doctor`.
pub fn reference_markdown() -> String {
    let defaults = match Value::try_from(Config::default()) {
        Ok(Value::Table(t)) => t,
        _ => Table::new(),
    };
    let cell = |s: &str| s.replace('|', "\\|").replace('\n', " ");
    let mut out = String::new();
    out.push_str("| Key | Type | Default | Description |\n|---|---|---|---|\n");
    for d in KEYS {
        let default =
            lookup(&defaults, d.key).map_or_else(|| "unset".to_string(), |v| format!("`{v}`"));
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            d.key,
            cell(&d.kind.describe()),
            cell(&default),
            cell(d.doc)
        ));
    }
    out.push_str(
        "\nEnvironment variables override the configuration files; flags override both. \
         Booleans accept `true/false`, `1/0`, `yes/no`, `on/off`; an empty variable counts as unset.\n\n",
    );
    out.push_str("| Variable | Key |\n|---|---|\n");
    for v in ENV_VARS {
        out.push_str(&format!("| `{}` | `{}` |\n", v.name, v.key));
    }
    out
}

pub(super) fn lookup<'a>(table: &'a Table, key: &str) -> Option<&'a Value> {
    let (first, rest) = key
        .split_once('.')
        .map_or((key, None), |(a, b)| (a, Some(b)));
    let value = table.get(first)?;
    match (rest, value) {
        (None, v) => Some(v),
        (Some(rest), Value::Table(t)) => lookup(t, rest),
        _ => None,
    }
}
