//! Markdown (the run report) to HTML, safely: the report quotes forge text
//! (titles, paths, reasons), so raw HTML in it is shown as text, images are
//! not loaded, and a link is kept only when it is `http(s)://` (anything
//! else, `javascript:` included, becomes its text).

use pulldown_cmark::{html, CodeBlockKind, CowStr, Event, LinkType, Options, Parser, Tag, TagEnd};
use shepherd_core::suggestion::{extract_suggestions, Suggestion};

/// `text` (Markdown) as HTML safe to embed in a page.
pub fn to_html(text: &str) -> String {
    to_html_with(text, |_| None)
}

/// [`to_html`], with each ```` ```suggestion ```` block (as
/// [`extract_suggestions`] reads its fence) replaced by what `suggestion`
/// makes of it: HTML the caller built and escaped itself. `None` keeps the
/// block as a code block.
pub fn to_html_with(
    text: &str,
    mut suggestion: impl FnMut(&Suggestion) -> Option<String>,
) -> String {
    let parser = Parser::new_ext(text, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH);
    let mut dropped_links: Vec<bool> = Vec::new();
    let mut events: Vec<Event<'_>> = Vec::new();
    // A fenced block being read: its info string, the index of its start
    // event, and its text.
    let mut fence: Option<(CowStr<'_>, usize, String)> = None;
    for (event, range) in parser.into_offset_iter() {
        let event = match event {
            Event::Html(raw) | Event::InlineHtml(raw) => Event::Text(raw),
            Event::Start(Tag::Image { .. }) => {
                dropped_links.push(true);
                continue;
            }
            Event::End(TagEnd::Image) => {
                dropped_links.pop();
                continue;
            }
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            }) => {
                let safe = dest_url.starts_with("https://") || dest_url.starts_with("http://");
                dropped_links.push(!safe);
                if !safe {
                    continue;
                }
                Event::Start(Tag::Link {
                    link_type: if link_type == LinkType::Email {
                        LinkType::Inline
                    } else {
                        link_type
                    },
                    dest_url,
                    title,
                    id,
                })
            }
            Event::End(TagEnd::Link) => match dropped_links.pop() {
                Some(false) => Event::End(TagEnd::Link),
                _ => continue,
            },
            Event::FootnoteReference(name) => Event::Text(CowStr::from(format!("[^{name}]"))),
            other => other,
        };
        if let Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) = &event {
            fence = Some((info.clone(), events.len(), String::new()));
        } else if let (Event::Text(t), Some((_, _, content))) = (&event, fence.as_mut()) {
            content.push_str(t);
        } else if matches!(event, Event::End(TagEnd::CodeBlock)) {
            if let Some((info, start, content)) = fence.take() {
                let block = text.get(range).unwrap_or_default();
                if let Some(html) = as_suggestion(&info, &content)
                    .filter(|_| closed(block))
                    .and_then(|s| suggestion(&s))
                {
                    events.truncate(start);
                    events.push(Event::Html(CowStr::from(html)));
                    continue;
                }
            }
        }
        events.push(event);
    }
    let mut out = String::new();
    html::push_html(&mut out, events.into_iter());
    out
}

/// Whether the fenced block whose source is `block` ends with its closing
/// fence: one left open runs to the end of the text in CommonMark (a body
/// the run cut short, say), and Shepherd does not apply such a suggestion
/// ([`shepherd_core::suggestion`]), so the page does not draw it as one.
fn closed(block: &str) -> bool {
    let fence = |line: &str| {
        let line = line.trim();
        let ch = line.chars().next().filter(|c| matches!(c, '`' | '~'))?;
        let run = line.chars().take_while(|c| *c == ch).count();
        Some((ch, run, line.chars().count()))
    };
    let mut lines = block.trim_end().lines();
    let (Some(first), Some(last)) = (lines.next(), lines.next_back()) else {
        return false;
    };
    match (fence(first), fence(last)) {
        (Some((ch, open, _)), Some((close_ch, close, len))) => {
            ch == close_ch && close >= open && close == len
        }
        _ => false,
    }
}

/// The suggestion a fenced code block is, read by Shepherd's own fence
/// parser (the one that applies suggestions) from the block written again
/// with a tilde fence longer than any run of tildes in it.
fn as_suggestion(info: &str, content: &str) -> Option<Suggestion> {
    if !info.trim_start().starts_with("suggestion") {
        return None;
    }
    let longest = content.split(|c| c != '~').map(str::len).max().unwrap_or(0);
    let fence = "~".repeat(longest.max(2) + 1);
    let newline = if content.is_empty() || content.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    let block = format!("{fence}{}\n{content}{newline}{fence}\n", info.trim());
    extract_suggestions(&block).into_iter().next()
}

#[cfg(test)]
mod tests {
    use shepherd_core::suggestion::Suggestion;

    use super::to_html;

    #[test]
    fn raw_html_is_text() {
        let out = to_html("a <script>alert(1)</script> b\n\n<img src=x onerror=alert(2)>\n");
        assert!(!out.contains("<script"), "{out}");
        assert!(!out.contains("<img"), "{out}");
        assert!(out.contains("&lt;script&gt;"), "{out}");
    }

    #[test]
    fn only_http_links_are_links() {
        let out =
            to_html("[x](javascript:alert(1)) [y](https://example.com/a) ![i](http://e/i.png)");
        assert!(!out.contains("javascript:"), "{out}");
        assert!(
            out.contains(r#"<a href="https://example.com/a">y</a>"#),
            "{out}"
        );
        assert!(!out.contains("<img"), "{out}");
        assert!(out.contains('x'), "{out}");
    }

    #[test]
    fn suggestion_blocks_are_what_the_caller_makes_of_them() {
        let body = "Stop on failure:\n\n```suggestion\n    check || return 1\n```\n\n```sh\nls\n```\n\n~~~suggestion:-1+0\na\nb\n~~~\n";
        let mut seen = Vec::new();
        let out = super::to_html_with(body, |s| {
            seen.push(s.clone());
            Some(format!("<div class=\"diff\">{}</div>", seen.len()))
        });
        assert_eq!(
            seen,
            vec![
                Suggestion::Range {
                    lines: vec!["    check || return 1".into()]
                },
                Suggestion::Relative {
                    above: 1,
                    below: 0,
                    lines: vec!["a".into(), "b".into()]
                },
            ]
        );
        assert!(out.contains("<div class=\"diff\">1</div>"), "{out}");
        assert!(out.contains("<div class=\"diff\">2</div>"), "{out}");
        assert!(!out.contains("return 1"), "the block was replaced: {out}");
        assert!(out.contains("<code class=\"language-sh\">ls"), "{out}");
        assert!(out.contains("<p>Stop on failure:</p>"), "{out}");
        // A block the text leaves open (a body cut short) is code, not a
        // suggestion.
        let out = super::to_html_with("```suggestion\nhalf", |_| Some("diff".into()));
        assert!(!out.contains("diff"), "{out}");
        assert!(out.contains("half"), "{out}");
        let out = super::to_html_with("````suggestion\na\n```\n", |_| Some("diff".into()));
        assert!(!out.contains("diff"), "{out}");
        // Declined: the block stays a code block, its text escaped.
        let out = super::to_html_with("```suggestion\n<b>x</b>\n```\n", |_| None);
        assert!(out.contains("&lt;b&gt;x&lt;/b&gt;"), "{out}");
    }

    #[test]
    fn tables_render() {
        let out = to_html("| a | b |\n|---|---|\n| 1 | 2 |\n");
        assert!(out.contains("<table>"), "{out}");
    }
}
