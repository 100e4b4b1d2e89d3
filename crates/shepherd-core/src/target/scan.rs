//! The free-text scanner: every PR/MR reference, URL and bare number in the
//! input, each with its kind.

use crate::model::ForgeKind;

use super::error::TargetError;
use super::found::{repo_path_from_segments, Found};
use super::quote::{quote_input, redact_userinfo};
use super::urls::{parse_forge_url, UrlShape};

#[derive(Default)]
pub(super) struct Scan {
    pub(super) refs: Vec<Found>,
    /// Issue references and URLs, as written.
    pub(super) issues: Vec<String>,
}

pub(super) fn scan(input: &str) -> Result<Scan, TargetError> {
    let tokens: Vec<&str> = input.split_whitespace().map(strip_punct).collect();
    let mut out = Scan::default();
    let mut i = 0;
    while i < tokens.len() {
        let tok = tokens[i];
        let next = tokens.get(i + 1).copied().unwrap_or("");
        let lower = tok.to_ascii_lowercase();

        if let Some(start) = find_scheme(tok) {
            let url_text = strip_punct(&tok[start..]);
            match parse_forge_url(url_text)? {
                UrlShape::Pr(u) => out.refs.push(*u),
                UrlShape::Issue => out.issues.push(redact_userinfo(url_text)),
                UrlShape::Other => {}
            }
            i += 1;
            continue;
        }
        if looks_like_schemeless_url(tok) {
            if let Ok(shape) = parse_forge_url(&format!("https://{tok}")) {
                match shape {
                    UrlShape::Pr(mut u) => {
                        u.text = redact_userinfo(tok);
                        if let Some(url) = u.url.as_mut() {
                            url.text = u.text.clone();
                        }
                        out.refs.push(*u);
                        i += 1;
                        continue;
                    }
                    UrlShape::Issue => {
                        out.issues.push(redact_userinfo(tok));
                        i += 1;
                        continue;
                    }
                    UrlShape::Other => {}
                }
            }
        }

        // `PR 42`, `MR !42`, `PR: #42`
        if let Some(kind) = keyword_kind(&lower) {
            if let Some((sigil, digits)) = sigil_number(next) {
                let text = format!("{tok} {next}");
                check_sigil(kind, sigil, &text, input)?;
                out.refs.push(explicit_ref(text, digits, Some(kind)));
                i += 2;
                continue;
            }
        }
        // `pull request #42`, `merge request !42`
        if let Some(kind) = two_word_keyword(&lower, next) {
            let third = tokens.get(i + 2).copied().unwrap_or("");
            if let Some((sigil, digits)) = sigil_number(third) {
                let text = format!("{tok} {next} {third}");
                check_sigil(kind, sigil, &text, input)?;
                out.refs.push(explicit_ref(text, digits, Some(kind)));
                i += 3;
                continue;
            }
        }
        // `issue #5`, `issue 5`, `issue#5`
        if (lower == "issue" || lower == "issues") && sigil_number(next).is_some() {
            out.issues.push(format!("{tok} {next}"));
            i += 2;
            continue;
        }
        if let Some(rest) = lower.strip_prefix("issue") {
            if rest.starts_with('#') && sigil_number(rest).is_some() {
                out.issues.push(tok.to_owned());
                i += 1;
                continue;
            }
        }
        // `pr42`, `PR#42`, `mr!42`
        if let Some(r) = inline_keyword(tok, &lower, input)? {
            out.refs.push(r);
            i += 1;
            continue;
        }
        // `#42`, `!42`
        if let Some((Some(sigil), digits)) = sigil_number(tok) {
            out.refs
                .push(explicit_ref(tok.to_owned(), digits, Some(sigil)));
            i += 1;
            continue;
        }
        // `owner/repo#42`, `group/sub/project!42`
        if let Some(r) = path_reference(tok) {
            out.refs.push(r);
            i += 1;
            continue;
        }
        // `42`
        if !tok.is_empty() && tok.bytes().all(|b| b.is_ascii_digit()) {
            out.refs.push(Found {
                text: tok.to_owned(),
                digits: tok.to_owned(),
                number: tok.parse().unwrap_or(0),
                explicit: false,
                kind: None,
                url: None,
                path: None,
            });
        }
        i += 1;
    }
    Ok(out)
}

fn explicit_ref(text: String, digits: &str, kind: Option<ForgeKind>) -> Found {
    Found {
        number: digits.parse().unwrap_or(0),
        digits: digits.to_owned(),
        text,
        explicit: true,
        kind,
        url: None,
        path: None,
    }
}

/// `PR !42` mixes two kinds in one reference.
fn check_sigil(
    kind: ForgeKind,
    sigil: Option<ForgeKind>,
    text: &str,
    input: &str,
) -> Result<(), TargetError> {
    match sigil {
        Some(s) if s != kind => Err(TargetError::MixedReference {
            reference: text.to_owned(),
            input: quote_input(input),
        }),
        _ => Ok(()),
    }
}

/// Strip the punctuation free text wraps references in: `(#42)`, `PR 42.`,
/// `<https://…>`, `**PR**`.
fn strip_punct(tok: &str) -> &str {
    tok.trim_start_matches(['(', '[', '{', '<', '"', '\'', '`', '*'])
        .trim_end_matches([
            ')', ']', '}', '>', '"', '\'', '`', '*', '.', ',', ';', ':', '?', '!',
        ])
}

fn find_scheme(tok: &str) -> Option<usize> {
    let lower = tok.to_ascii_lowercase();
    match (lower.find("https://"), lower.find("http://")) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// `github.com/o/r/pull/42`: a first segment with a dot, then a path.
fn looks_like_schemeless_url(tok: &str) -> bool {
    match tok.split_once('/') {
        Some((host, rest)) => {
            host.contains('.')
                && !rest.is_empty()
                && (rest.contains("/pull/")
                    || rest.contains("merge_requests/")
                    || rest.contains("/issues/"))
        }
        None => false,
    }
}

fn keyword_kind(lower: &str) -> Option<ForgeKind> {
    ForgeKind::ALL
        .into_iter()
        .find(|k| k.spec().request_abbrev == lower)
}

fn two_word_keyword(lower: &str, next: &str) -> Option<ForgeKind> {
    if !next.eq_ignore_ascii_case("request") {
        return None;
    }
    ForgeKind::ALL
        .into_iter()
        .find(|k| k.spec().request_word == lower)
}

/// `#42` → (GitHub, "42"); `!42` → (GitLab, "42"); `42` → (None, "42").
fn sigil_number(tok: &str) -> Option<(Option<ForgeKind>, &str)> {
    let first = tok.chars().next()?;
    let (sigil, digits) = match ForgeKind::ALL
        .into_iter()
        .find(|k| k.spec().number_sigil == first)
    {
        Some(kind) => (Some(kind), &tok[first.len_utf8()..]),
        None => (None, tok),
    };
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then_some((sigil, digits))
}

/// `pr42`, `PR#42`, `MR!42`.
fn inline_keyword(tok: &str, lower: &str, input: &str) -> Result<Option<Found>, TargetError> {
    for kind in ForgeKind::ALL {
        if let Some(rest) = lower.strip_prefix(kind.spec().request_abbrev) {
            if let Some((sigil, digits)) = sigil_number(rest) {
                check_sigil(kind, sigil, tok, input)?;
                return Ok(Some(explicit_ref(tok.to_owned(), digits, Some(kind))));
            }
        }
    }
    Ok(None)
}

fn path_reference(tok: &str) -> Option<Found> {
    let at = tok.rfind(['#', '!'])?;
    let (path, tail) = tok.split_at(at);
    let (sigil, digits) = sigil_number(tail)?;
    let segments: Vec<&str> = path.split('/').collect();
    let repo = repo_path_from_segments(&segments)?;
    let mut found = explicit_ref(tok.to_owned(), digits, sigil);
    found.path = Some(repo);
    Some(found)
}

pub(super) fn check_number(found: &Found, quoted: &str) -> Result<(), TargetError> {
    if found.number != 0 {
        return Ok(());
    }
    if found.digits.bytes().all(|b| b == b'0') {
        Err(TargetError::Zero {
            reference: found.text.clone(),
            input: quoted.to_owned(),
        })
    } else {
        Err(TargetError::TooLarge {
            reference: found.text.clone(),
            input: quoted.to_owned(),
        })
    }
}
