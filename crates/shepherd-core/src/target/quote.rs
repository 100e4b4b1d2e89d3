//! How messages quote what the user gave: credentials redacted, whitespace
//! collapsed, long input elided.

/// The longest input an error quotes before eliding the rest.
const MAX_QUOTE: usize = 160;

/// Replace the user info of every URL in `text` (`https://user:token@host/…`)
/// by `***`, so that credentials never reach a message.
pub fn redact_userinfo(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(idx) = rest.find("://") {
        let (head, tail) = rest.split_at(idx + 3);
        out.push_str(head);
        let auth_end = tail
            .find(|c: char| c == '/' || c == '?' || c == '#' || c.is_whitespace())
            .unwrap_or(tail.len());
        let authority = &tail[..auth_end];
        match authority.rfind('@') {
            Some(at) => {
                out.push_str("***");
                out.push_str(&authority[at..]);
            }
            None => out.push_str(authority),
        }
        rest = &tail[auth_end..];
    }
    // scp-like `user:secret@host:path`: redact a user part holding a ':'.
    if let Some(at) = rest.find('@') {
        let user = &rest[..at];
        // After the last whitespace character, which may be several bytes long.
        let starts_token = user
            .char_indices()
            .rev()
            .find(|(_, c)| c.is_whitespace())
            .map_or(0, |(i, c)| i + c.len_utf8());
        if user[starts_token..].contains(':') && !user[starts_token..].contains('/') {
            out.push_str(&rest[..starts_token]);
            out.push_str("***");
            out.push_str(&rest[at..]);
            return out;
        }
    }
    out.push_str(rest);
    out
}

pub(super) fn truncate(text: &str) -> String {
    if text.chars().count() <= MAX_QUOTE {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(MAX_QUOTE).collect();
    out.push('…');
    out
}

/// The input as messages quote it: credentials redacted, whitespace
/// collapsed, long input elided.
pub(super) fn quote_input(input: &str) -> String {
    let collapsed = input.split_whitespace().collect::<Vec<_>>().join(" ");
    truncate(&redact_userinfo(&collapsed))
}
