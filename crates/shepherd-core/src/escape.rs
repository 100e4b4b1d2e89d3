//! Escaping untrusted text (file paths, ids, titles, comment excerpts) for a
//! terminal and for Markdown.
//!
//! A path on a pull request is chosen by whoever pushed it: it can hold an
//! ESC (terminal escape sequences), a BEL, a carriage return that rewrites
//! the line, or a bidirectional control (U+202E RIGHT-TO-LEFT OVERRIDE) that
//! makes `txt.exe` read as `exe.txt`. [`visible`] turns every such character
//! into a visible escape (`\x1b`, `\u{202e}`), so what a person reads is
//! what the string holds; [`markdown`] does the same and also neutralises
//! Markdown and HTML syntax. Both are used by the report and by the CLI's
//! output: there is one definition of "unsafe".

/// Whether `c` must not reach a terminal or a document raw: C0 and C1
/// control characters (including ESC, BEL, CR, LF, TAB, DEL), the Unicode
/// bidirectional controls (U+061C, U+200E, U+200F, U+202A..U+202E,
/// U+2066..U+2069), the zero-width and invisible formatting characters that
/// hide or join text (U+200B..U+200D, U+2060..U+2064, U+FEFF), and the line
/// and paragraph separators (U+2028, U+2029).
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{2069}'
                | '\u{feff}'
        )
}

fn push_escape(out: &mut String, c: char) {
    let code = u32::from(c);
    if code < 0x80 {
        out.push_str(&format!("\\x{code:02x}"));
    } else {
        out.push_str(&format!("\\u{{{code:04x}}}"));
    }
}

/// `text` with every [unsafe](is_unsafe) character replaced by a visible
/// escape (`\x1b`, `\x07`, `\u{202e}`), and backslashes doubled so that an
/// escape cannot be forged. Text without such characters or backslashes
/// comes back unchanged.
pub fn visible(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\\' {
            out.push_str("\\\\");
        } else if is_unsafe(c) {
            push_escape(&mut out, c);
        } else {
            out.push(c);
        }
    }
    out
}

/// `text` safe inside Markdown prose: [unsafe](is_unsafe) characters as
/// visible escapes, and the characters that open HTML, links, emphasis,
/// code, tables or headings backslash-escaped.
pub fn markdown(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            // Rendered as `\\`, as [`visible`] shows it: an escape cannot be
            // forged.
            '\\' => out.push_str("\\\\\\\\"),
            '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '#' => {
                out.push('\\');
                out.push(c);
            }
            c if is_unsafe(c) => {
                // `\\x1b`: a literal backslash (escaped for Markdown), then
                // the code.
                out.push('\\');
                push_escape(&mut out, c);
            }
            c => out.push(c),
        }
    }
    out
}

/// `text` as a Markdown code span: [unsafe](is_unsafe) characters as visible
/// escapes, backticks (which would close the span) as `'`.
pub fn code_span(text: &str) -> String {
    format!("`{}`", visible(text).replace('`', "'"))
}

/// [`markdown`] of `text` on one line: line breaks become spaces (a
/// table cell, a list item), every other unsafe character a visible escape.
pub fn markdown_line(text: &str) -> String {
    markdown(&one_line(text))
}

/// [`code_span`] of `text` on one line: line breaks become spaces.
pub fn code_span_line(text: &str) -> String {
    code_span(&one_line(text))
}

fn one_line(text: &str) -> String {
    text.replace("\r\n", " ").replace(['\n', '\r'], " ")
}

/// Markdown that [`markdown`] and [`code_span`] built, for a terminal:
/// backslash escapes undone (`\#42` reads `#42`, a URL's `merge\_requests`
/// can be pasted) and `**bold**` markers dropped. Unsafe characters stay
/// the visible escapes [`visible`] gives them (a `\\` of the Markdown, a
/// literal backslash, reads `\`): nothing raw reaches the terminal that
/// the Markdown did not already hold.
pub fn terminal(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut chars = markdown.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek().is_some_and(char::is_ascii_punctuation) => {
                if let Some(next) = chars.next() {
                    out.push(next);
                }
            }
            '*' if chars.peek() == Some(&'*') => {
                chars.next();
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;

    /// Issue 13 point 9: the terminal reads what the Markdown renders.
    #[test]
    fn terminal_text_undoes_the_markdown_escapes() {
        let url = "https://gitlab.com/g/p/-/merge_requests/42";
        let md = format!(
            "- Status: **converged** ({})",
            markdown(&format!("#42 PRRT_x {url}"))
        );
        assert_eq!(
            terminal(&md),
            format!("- Status: converged (#42 PRRT_x {url})")
        );
        // A backslash and a control character stay visible escapes.
        assert_eq!(terminal(&markdown("a\\b\u{1b}")), "a\\\\b\\x1b");
        assert_eq!(visible("a\\b\u{1b}"), "a\\\\b\\x1b");
    }

    #[test]
    fn control_and_bidi_characters_become_visible_escapes() {
        for (raw, shown) in [
            ("src/a.rs", "src/a.rs"),
            ("src/\u{1b}[31mred.rs", "src/\\x1b[31mred.rs"),
            ("bell\u{07}.sh", "bell\\x07.sh"),
            ("a\rb\nc\td", "a\\x0db\\x0ac\\x09d"),
            ("del\u{7f}", "del\\x7f"),
            ("c1\u{9b}31m", "c1\\u{009b}31m"),
            ("src/\u{202e}txt.exe", "src/\\u{202e}txt.exe"),
            ("\u{2066}x\u{2069}", "\\u{2066}x\\u{2069}"),
            ("\u{200f}\u{061c}", "\\u{200f}\\u{061c}"),
            ("zero\u{200b}width\u{feff}", "zero\\u{200b}width\\u{feff}"),
            ("sep\u{2028}", "sep\\u{2028}"),
            ("naïve/日本.rs", "naïve/日本.rs"),
            // A literal backslash cannot forge an escape.
            ("a\\x1b", "a\\\\x1b"),
        ] {
            assert_eq!(visible(raw), shown, "{raw:?}");
        }
    }

    #[test]
    fn one_line_forms_turn_line_breaks_into_spaces() {
        assert_eq!(
            markdown_line("two *bugs*\nhere\r\n<b>"),
            "two \\*bugs\\* here \\<b\\>"
        );
        assert_eq!(
            code_span_line("cargo test `x`\nnext"),
            "`cargo test 'x' next`"
        );
        assert_eq!(markdown_line("esc\u{1b}"), "esc\\\\x1b");
    }

    #[test]
    fn no_escaped_output_holds_an_unsafe_character() {
        // Every character of the ranges that matter, one string each.
        let ranges = [0u32..0x100, 0x600..0x700, 0x2000..0x2100, 0xfe00..0xff00];
        for c in ranges.into_iter().flatten().filter_map(char::from_u32) {
            let raw = format!("p{c}q");
            for out in [visible(&raw), markdown(&raw), code_span(&raw)] {
                assert!(!out.chars().any(is_unsafe), "{raw:?} -> {out:?}");
            }
            if is_unsafe(c) {
                assert_ne!(visible(&raw), raw, "{c:?} is unsafe but unchanged");
            }
        }
    }

    #[test]
    fn markdown_neutralises_syntax_and_controls() {
        assert_eq!(markdown("Add *things*"), "Add \\*things\\*");
        assert_eq!(markdown("<b>|#"), "\\<b\\>\\|\\#");
        assert_eq!(markdown("a\u{1b}b"), "a\\\\x1bb");
        assert_eq!(markdown("x\u{202e}y"), "x\\\\u{202e}y");
        assert_eq!(markdown("two\nlines"), "two\\\\x0alines");
        assert_eq!(markdown("a\\x1b"), "a\\\\\\\\x1b");
        assert_eq!(code_span("a`b\u{7}"), "`a'b\\x07`");
    }
}
