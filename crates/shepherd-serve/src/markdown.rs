//! Markdown (the run report) to HTML, safely: the report quotes forge text
//! (titles, paths, reasons), so raw HTML in it is shown as text, images are
//! not loaded, and a link is kept only when it is `http(s)://` (anything
//! else, `javascript:` included, becomes its text).

use pulldown_cmark::{html, CowStr, Event, LinkType, Options, Parser, Tag, TagEnd};

/// `text` (Markdown) as HTML safe to embed in a page.
pub fn to_html(text: &str) -> String {
    let parser = Parser::new_ext(text, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH);
    let mut dropped_links: Vec<bool> = Vec::new();
    let events = parser.filter_map(|event| match event {
        Event::Html(raw) | Event::InlineHtml(raw) => Some(Event::Text(raw)),
        Event::Start(Tag::Image { .. }) => {
            dropped_links.push(true);
            None
        }
        Event::End(TagEnd::Image) => {
            dropped_links.pop();
            None
        }
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => {
            let safe = dest_url.starts_with("https://") || dest_url.starts_with("http://");
            dropped_links.push(!safe);
            safe.then(|| {
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
            })
        }
        Event::End(TagEnd::Link) => match dropped_links.pop() {
            Some(false) => Some(Event::End(TagEnd::Link)),
            _ => None,
        },
        Event::FootnoteReference(name) => Some(Event::Text(CowStr::from(format!("[^{name}]")))),
        other => Some(other),
    });
    let mut out = String::new();
    html::push_html(&mut out, events);
    out
}

#[cfg(test)]
mod tests {
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
    fn tables_render() {
        let out = to_html("| a | b |\n|---|---|\n| 1 | 2 |\n");
        assert!(out.contains("<table>"), "{out}");
    }
}
