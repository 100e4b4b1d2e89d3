//! Opaque identifiers: GraphQL node ids, pagination cursors, timestamps.
//!
//! Node ids look like GitHub's (`PRRT_…`): a type prefix and an opaque,
//! stable encoding of the object's database id. Cursors encode the database
//! id of an item, so they stay valid when items are added or hidden.

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine as _;

/// The kinds of objects that have node ids, with GitHub's prefixes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum NodeKind {
    Repository,
    User,
    Bot,
    PullRequest,
    ReviewThread,
    ReviewComment,
    Review,
    IssueComment,
    Label,
    CheckRun,
    CheckSuite,
    StatusContext,
    WorkflowRun,
    App,
    /// A `labeled` issue event (GitHub's `LabeledEvent`).
    LabeledEvent,
    /// An `unlabeled` issue event (GitHub's `UnlabeledEvent`).
    UnlabeledEvent,
}

impl NodeKind {
    const ALL: [NodeKind; 16] = [
        NodeKind::Repository,
        NodeKind::User,
        NodeKind::Bot,
        NodeKind::PullRequest,
        NodeKind::ReviewThread,
        NodeKind::ReviewComment,
        NodeKind::Review,
        NodeKind::IssueComment,
        NodeKind::Label,
        NodeKind::CheckRun,
        NodeKind::CheckSuite,
        NodeKind::StatusContext,
        NodeKind::WorkflowRun,
        NodeKind::App,
        NodeKind::LabeledEvent,
        NodeKind::UnlabeledEvent,
    ];

    fn prefix(self) -> &'static str {
        match self {
            NodeKind::Repository => "R",
            NodeKind::User => "U",
            NodeKind::Bot => "BOT",
            NodeKind::PullRequest => "PR",
            NodeKind::ReviewThread => "PRRT",
            NodeKind::ReviewComment => "PRRC",
            NodeKind::Review => "PRR",
            NodeKind::IssueComment => "IC",
            NodeKind::Label => "LA",
            NodeKind::CheckRun => "CR",
            NodeKind::CheckSuite => "CS",
            NodeKind::StatusContext => "SC",
            NodeKind::WorkflowRun => "WFR",
            NodeKind::App => "A",
            NodeKind::LabeledEvent => "LE",
            NodeKind::UnlabeledEvent => "UNLE",
        }
    }
}

/// Objects named by a commit rather than a database id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum CommitKind {
    /// A commit (`C_`).
    Commit,
    /// A pull request's commit (`PURC_`); the payload also names the PR.
    PullRequestCommit,
    /// The status check rollup of a commit.
    StatusCheckRollup,
}

impl CommitKind {
    const ALL: [CommitKind; 3] = [
        CommitKind::Commit,
        CommitKind::PullRequestCommit,
        CommitKind::StatusCheckRollup,
    ];

    fn prefix(self) -> &'static str {
        match self {
            CommitKind::Commit => "C",
            CommitKind::PullRequestCommit => "PURC",
            CommitKind::StatusCheckRollup => "SCR",
        }
    }
}

/// The node id of a commit-named object: `PREFIX_` and an opaque encoding
/// of `key` (a SHA, or `PR:SHA`).
pub(crate) fn commit_node_id(kind: CommitKind, key: &str) -> String {
    let payload = format!("emu:{}:{key}", kind.prefix());
    format!("{}_{}", kind.prefix(), URL_SAFE_NO_PAD.encode(payload))
}

/// Decodes a node id made by [`commit_node_id`].
pub(crate) fn parse_commit_node_id(id: &str) -> Option<(CommitKind, String)> {
    let (prefix, rest) = id.split_once('_')?;
    let kind = CommitKind::ALL.into_iter().find(|k| k.prefix() == prefix)?;
    let payload = String::from_utf8(URL_SAFE_NO_PAD.decode(rest).ok()?).ok()?;
    let key = payload.strip_prefix(&format!("emu:{prefix}:"))?;
    Some((kind, key.to_owned()))
}

/// The node id of an object: `PREFIX_` then an opaque encoding of its database id.
pub(crate) fn node_id(kind: NodeKind, database_id: u64) -> String {
    let payload = format!("emu:{}:{database_id}", kind.prefix());
    format!("{}_{}", kind.prefix(), URL_SAFE_NO_PAD.encode(payload))
}

/// Decodes a node id made by [`node_id`].
pub(crate) fn parse_node_id(id: &str) -> Option<(NodeKind, u64)> {
    let (prefix, rest) = id.split_once('_')?;
    let kind = NodeKind::ALL.into_iter().find(|k| k.prefix() == prefix)?;
    let payload = String::from_utf8(URL_SAFE_NO_PAD.decode(rest).ok()?).ok()?;
    let number = payload.strip_prefix(&format!("emu:{prefix}:"))?;
    Some((kind, number.parse().ok()?))
}

/// GitLab's discussion id of the object with this database id: 40 hex
/// digits (a SHA-1, as GitLab's are), stable per object.
pub(crate) fn discussion_id(database_id: u64) -> String {
    sha1_hex(format!("emu:discussion:{database_id}").as_bytes())
}

/// GitLab's `line_code` of a diff line: the SHA-1 of the path, then the old
/// and new line numbers (0 for a side the line is not on).
pub(crate) fn line_code(path: &str, old: Option<u32>, new: Option<u32>) -> String {
    format!(
        "{}_{}_{}",
        sha1_hex(path.as_bytes()),
        old.unwrap_or(0),
        new.unwrap_or(0)
    )
}

/// SHA-1 (FIPS 180-1) in lowercase hex. Used for identifiers only (GitLab's
/// discussion ids and line codes are SHA-1s), never for security.
pub(crate) fn sha1_hex(data: &[u8]) -> String {
    let mut h: [u32; 5] = [
        0x6745_2301,
        0xefcd_ab89,
        0x98ba_dcfe,
        0x1032_5476,
        0xc3d2_e1f0,
    ];
    let mut message = data.to_vec();
    let bit_len = (data.len() as u64).wrapping_mul(8);
    message.push(0x80);
    while message.len() % 64 != 56 {
        message.push(0);
    }
    message.extend_from_slice(&bit_len.to_be_bytes());
    for block in message.chunks_exact(64) {
        let mut w = [0u32; 80];
        for (i, word) in block.chunks_exact(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..80 {
            w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotate_left(1);
        }
        let [mut a, mut b, mut c, mut d, mut e] = h;
        for (i, word) in w.iter().enumerate() {
            let (f, k) = match i {
                0..=19 => ((b & c) | (!b & d), 0x5a82_7999),
                20..=39 => (b ^ c ^ d, 0x6ed9_eba1),
                40..=59 => ((b & c) | (b & d) | (c & d), 0x8f1b_bcdc),
                _ => (b ^ c ^ d, 0xca62_c1d6),
            };
            let temp = a
                .rotate_left(5)
                .wrapping_add(f)
                .wrapping_add(e)
                .wrapping_add(k)
                .wrapping_add(*word);
            e = d;
            d = c;
            c = b.rotate_left(30);
            b = a;
            a = temp;
        }
        for (slot, value) in h.iter_mut().zip([a, b, c, d, e]) {
            *slot = slot.wrapping_add(value);
        }
    }
    h.iter().map(|word| format!("{word:08x}")).collect()
}

/// A pagination cursor pointing at the item with this database id.
pub(crate) fn cursor(database_id: u64) -> String {
    STANDARD.encode(format!("cursor:v2:{database_id}"))
}

/// Decodes a cursor made by [`cursor`].
pub(crate) fn parse_cursor(cursor: &str) -> Option<u64> {
    let payload = String::from_utf8(STANDARD.decode(cursor).ok()?).ok()?;
    payload.strip_prefix("cursor:v2:")?.parse().ok()
}

/// Formats seconds since the Unix epoch as ISO 8601 in UTC (`2024-01-01T00:00:00Z`).
pub(crate) fn iso8601(epoch_seconds: i64) -> String {
    let days = epoch_seconds.div_euclid(86_400);
    let secs = epoch_seconds.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

/// Howard Hinnant's `civil_from_days`: days since 1970-01-01 to a date.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_ids_round_trip_and_carry_github_prefixes() {
        for kind in NodeKind::ALL {
            let id = node_id(kind, 1234);
            assert!(id.starts_with(&format!("{}_", kind.prefix())), "{id}");
            assert_eq!(parse_node_id(&id), Some((kind, 1234)));
        }
        assert!(node_id(NodeKind::ReviewThread, 7).starts_with("PRRT_"));
        let sha = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
        let id = commit_node_id(CommitKind::Commit, sha);
        assert!(id.starts_with("C_"), "{id}");
        assert_eq!(
            parse_commit_node_id(&id),
            Some((CommitKind::Commit, sha.into()))
        );
        assert_eq!(parse_node_id(&id), None);
    }

    #[test]
    fn node_ids_of_one_kind_do_not_parse_as_another() {
        let id = node_id(NodeKind::Review, 5);
        let forged = id.replacen("PRR_", "PRRT_", 1);
        assert_eq!(parse_node_id(&forged), None);
        assert_eq!(parse_node_id("PRRT_not-base64!"), None);
        assert_eq!(parse_node_id("nonsense"), None);
    }

    #[test]
    fn sha1_matches_known_vectors() {
        assert_eq!(sha1_hex(b""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
        assert_eq!(sha1_hex(b"abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
        assert_eq!(
            sha1_hex(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1"
        );
        let million = vec![b'a'; 1_000_000];
        assert_eq!(
            sha1_hex(&million),
            "34aa973cd4c4daa4f61eeb2bdbad27316534016f"
        );
    }

    #[test]
    fn discussion_ids_and_line_codes_look_like_gitlabs() {
        let id = discussion_id(1234);
        assert_eq!(id.len(), 40);
        assert!(id.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(id, discussion_id(1235));
        assert_eq!(
            line_code("README.md", None, Some(7)),
            format!("{}_0_7", sha1_hex(b"README.md"))
        );
    }

    #[test]
    fn cursors_round_trip() {
        assert_eq!(parse_cursor(&cursor(42)), Some(42));
        assert_eq!(parse_cursor("bogus"), None);
    }

    #[test]
    fn iso8601_formats_known_instants() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso8601(1_704_067_200), "2024-01-01T00:00:00Z");
        assert_eq!(iso8601(1_709_210_096), "2024-02-29T12:34:56Z");
        assert_eq!(iso8601(951_782_400), "2000-02-29T00:00:00Z");
    }
}
