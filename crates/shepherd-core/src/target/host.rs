//! Hosts: their normal form, and which forge a host is.

use crate::model::ForgeKind;

use super::model::TargetContext;

/// Lowercase, drop a trailing dot, and map the aliases of the two public
/// forges (`www.`, `ssh.github.com`, `altssh.gitlab.com`) to their web host.
pub(super) fn normalize_host(host: &str) -> String {
    let host = host.trim().trim_end_matches('.').to_ascii_lowercase();
    match ForgeKind::ALL
        .iter()
        .find(|k| k.spec().host_aliases.contains(&host.as_str()))
    {
        Some(kind) => kind.spec().default_host.to_owned(),
        None => host,
    }
}

/// The host without its port (`[::1]:80` → `[::1]`).
pub(super) fn host_name(host: &str) -> &str {
    if host.starts_with('[') {
        return host.find(']').map_or(host, |i| &host[..=i]);
    }
    host.rsplit_once(':').map_or(host, |(h, _)| h)
}

/// Hosts compare by name: an ssh remote has no web port.
pub(super) fn same_host(a: &str, b: &str) -> bool {
    let (a, b) = (normalize_host(a), normalize_host(b));
    host_name(&a) == host_name(&b)
}

pub(super) fn well_known_forge(host: &str) -> Option<ForgeKind> {
    ForgeKind::of_public_host(host_name(host))
}

pub(super) fn configured_forge(host: &str, ctx: &TargetContext) -> Option<ForgeKind> {
    let matches = |configured: &String| {
        let c = normalize_host(configured);
        let h = normalize_host(host);
        c == h || (!c.contains(':') && c == host_name(&h))
    };
    // A host is one forge's (the configuration refuses it in two lists).
    ForgeKind::ALL
        .into_iter()
        .find(|kind| ctx.hosts_of(*kind).iter().any(matches))
}

/// A guess from the host's first label, used only when nothing else says.
pub(super) fn forge_from_host_name(host: &str) -> Option<ForgeKind> {
    let name = host_name(host);
    let first = name.split('.').next().unwrap_or(name);
    if !name.contains('.') {
        return None;
    }
    ForgeKind::ALL
        .into_iter()
        .find(|k| k.spec().host_label == first)
}

pub(super) fn default_host(forge: ForgeKind) -> &'static str {
    forge.spec().default_host
}
