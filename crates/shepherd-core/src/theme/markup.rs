//! Markup that says nothing of the theme: HTML comments and tags, URLs.

pub(super) fn strip_html_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("<!--") {
        out.push_str(&rest[..start]);
        match rest[start..].find("-->") {
            Some(end) => rest = &rest[start + end + 3..],
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// HTML tags review bots and people use in comments.
const HTML_TAGS: &[&str] = &[
    "a",
    "b",
    "i",
    "u",
    "p",
    "br",
    "hr",
    "div",
    "span",
    "table",
    "tr",
    "td",
    "th",
    "thead",
    "tbody",
    "code",
    "pre",
    "strong",
    "em",
    "sub",
    "sup",
    "details",
    "summary",
    "img",
    "ul",
    "ol",
    "li",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "blockquote",
    "kbd",
    "picture",
    "source",
];

/// Drops HTML tags (`<table>`, `</code>`, `<br/>`) from a line, keeping
/// their text; other `<…>` (`<param-name>`, `Vec<u8>`) stay.
pub(super) fn strip_tags(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(start) = rest.find('<') {
        let tail = &rest[start + 1..];
        let name: String = tail
            .trim_start_matches(['/', '!'])
            .chars()
            .take_while(char::is_ascii_alphanumeric)
            .collect::<String>()
            .to_ascii_lowercase();
        let is_tag = tail.starts_with("!--") || HTML_TAGS.contains(&name.as_str());
        match (is_tag, tail.find('>')) {
            (true, Some(end)) if !tail[..end].contains('<') => {
                out.push_str(&rest[..start]);
                out.push(' ');
                rest = &tail[end + 1..];
            }
            _ => {
                out.push_str(&rest[..=start]);
                rest = tail;
            }
        }
    }
    out.push_str(rest);
    out
}

pub(super) fn strip_urls(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    loop {
        let next = [rest.find("http://"), rest.find("https://")]
            .into_iter()
            .flatten()
            .min();
        let Some(start) = next else { break };
        out.push_str(&rest[..start]);
        out.push(' ');
        let tail = &rest[start..];
        let end = tail
            .find(|c: char| c.is_whitespace() || matches!(c, ')' | '>' | ']' | '"' | '\''))
            .unwrap_or(tail.len());
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}
