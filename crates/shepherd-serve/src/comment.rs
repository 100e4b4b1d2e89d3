//! An item as the tables show it: where it is (a file and line, or what
//! kind of top-level comment), the code around that place, and what its
//! comments say, their suggestion blocks drawn as the change they propose.
//!
//! Comment bodies and code are the PR's (untrusted): bodies go through
//! [`crate::markdown`] (raw HTML becomes text), code and every other
//! string through [`maud`]'s escaping.

use maud::{html, Markup, PreEscaped};
use shepherd_core::classify::ItemKind;
use shepherd_core::suggestion::Suggestion;
use shepherd_core::ForgeKind;

use crate::code::{short, Code};
use crate::view::ItemView;

/// Lines shown above and below a thread's line (GitHub's conversation view
/// shows the last four lines of the diff hunk above a comment; here a few
/// on each side, from the file itself).
const CONTEXT_LINES: u32 = 3;

/// What a kind of item is called on the page: a thread by its place,
/// else "review summary" (a review's body) or "PR comment" ("MR comment"
/// on GitLab: the forge's `request_abbrev`, upper-cased).
pub fn kind_label(kind: ItemKind, forge: ForgeKind) -> String {
    match kind {
        ItemKind::ReviewThread => "review thread".to_owned(),
        ItemKind::ReviewBody => "review summary".to_owned(),
        ItemKind::IssueComment => format!(
            "{} comment",
            forge.spec().request_abbrev.to_ascii_uppercase()
        ),
    }
}

/// The Comment cell: the code around the item's place, then its first
/// comment and, when there are more, its last.
pub fn cell(item: &ItemView, forge: ForgeKind) -> Markup {
    html! {
        (context(item))
        @if let Some(e) = &item.excerpt {
            div.comment {
                span.author { "@" (e.first.author.as_deref().unwrap_or("ghost")) }
                div.body { (body(&e.first.body, item, forge)) }
            }
            @if let Some(last) = &e.last {
                div.comment.last {
                    span.author { "… " (e.comments.saturating_sub(1)) " more; last @" (last.author.as_deref().unwrap_or("ghost")) }
                    div.body { (body(&last.body, item, forge)) }
                }
            }
        }
    }
}

/// The lines around a thread's line, the line itself marked.
fn context(item: &ItemView) -> Markup {
    let c = &item.classified;
    match (&item.code, c.line) {
        (Code::File(file), Some(line)) => {
            let first = line.saturating_sub(CONTEXT_LINES).max(1);
            let last = line.saturating_add(CONTEXT_LINES);
            html! {
                div.code {
                    div.code-head {
                        (c.path.as_deref().unwrap_or("")) " at " code { (short(&file.commit)) }
                        @if file.line(line).is_none() { " (line " (line) " is past the file's end)" }
                    }
                    table.lines {
                        @for n in first..=last {
                            @if let Some(text) = file.line(n) {
                                tr class=[(n == line).then_some("mark")] data-line=(n) { td.ln { (n) } td.src { (text) } }
                            }
                        }
                    }
                }
            }
        }
        (Code::Unavailable(why), _) => {
            html! { p.code-missing.muted { "Code not shown: " (why) "." } }
        }
        _ => html! {},
    }
}

/// A comment body: Markdown, each suggestion block drawn as a diff.
fn body(text: &str, item: &ItemView, forge: ForgeKind) -> Markup {
    PreEscaped(crate::markdown::to_html_with(text, |s| {
        suggestion(s, item, forge).map(Markup::into_string)
    }))
}

/// A suggestion block as the change it proposes: the lines it replaces
/// (from the file at the commit the run saw) removed, its lines added, as
/// the forges draw a "Suggested change". `None` where the forge itself
/// shows the block as plain code: on a top-level comment, and on GitHub
/// for GitLab's `suggestion:-N+M` form (see [`shepherd_core::suggestion`]).
fn suggestion(s: &Suggestion, item: &ItemView, forge: ForgeKind) -> Option<Markup> {
    if forge == ForgeKind::GitHub && !s.is_range() {
        return None;
    }
    let line = item.classified.line?;
    // GitHub replaces the comment's `startLine..=line`, GitLab's plain form
    // the commented line alone (`threads.json` keeps `start_line` since
    // issue 28.8; older runs have only `line`).
    let start = item.excerpt.as_ref().and_then(|e| e.start_line);
    let range = s.effective_range(start.unwrap_or(line).min(line), line);
    let removed: Option<Vec<(u32, &str)>> = match (&item.code, range) {
        (Code::File(file), Some((from, to))) => {
            (from..=to).map(|n| file.line(n).map(|t| (n, t))).collect()
        }
        _ => None,
    };
    Some(html! {
        div.suggestion {
            div.suggestion-head {
                "Suggested change"
                @match range {
                    Some((from, to)) if from == to => { " to line " (from) },
                    Some((from, to)) => { " to lines " (from) "–" (to) },
                    None => {},
                }
            }
            table.diff {
                @if let Some(lines) = &removed {
                    @for (n, text) in lines {
                        tr.del { td.ln { (n) } td.sign { "-" } td.src { (text) } }
                    }
                }
                @for text in s.lines() {
                    tr.add { td.ln {} td.sign { "+" } td.src { (text) } }
                }
            }
            @if removed.is_none() {
                p.muted.note { "The lines it replaces are not shown (the file at the run's commit is not at hand)." }
            } @else if forge == ForgeKind::GitHub && start.is_none() {
                p.muted.note { "On a comment on several lines it replaces the lines above too: this run recorded only the last." }
            }
        }
    })
}

/// `text` with its `` `code` `` spans as inline code: the reasons the
/// engine writes and triage's reasoning quote names that way (single
/// backticks, CommonMark's code span). The rest stays text: a Markdown
/// renderer would also read `__init__` or `*` as emphasis. An unpaired
/// backtick is text.
pub fn inline_code(text: &str) -> Markup {
    let parts: Vec<&str> = text.split('`').collect();
    let n = parts.len();
    html! {
        @for (i, part) in parts.iter().enumerate() {
            @if i % 2 == 1 && i + 1 < n {
                code { (part) }
            } @else if i % 2 == 1 {
                "`" (part)
            } @else {
                (part)
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)] // a panic is how a test fails
mod tests {
    use std::sync::Arc;

    use shepherd_core::classify::{Class, Classified};

    use super::*;
    use crate::code::FileAt;
    use crate::view::{CommentExcerpt, Excerpt};

    fn thread(line: u32, code: Code, body: &str) -> ItemView {
        ItemView {
            id: "PRRT_1".into(),
            classified: Classified {
                item_id: "PRRT_1".into(),
                kind: ItemKind::ReviewThread,
                class: Class::New,
                reason: String::new(),
                path: Some("src/<a>.sh".into()),
                line: Some(line),
                author: None,
                outdated: false,
                url: None,
                replied_round: None,
                waits_for_a_person: false,
            },
            excerpt: Some(Excerpt {
                comments: 1,
                first: CommentExcerpt {
                    author: Some("rev<i>".into()),
                    body: body.into(),
                },
                last: None,
                start_line: None,
            }),
            untrusted: false,
            triage: None,
            history: Vec::new(),
            code,
        }
    }

    fn file() -> Code {
        Code::File(Arc::new(FileAt {
            commit: "0123456789abcdef0123456789abcdef01234567".into(),
            lines: (1..=9).map(|n| format!("line {n} <b>&</b>")).collect(),
        }))
    }

    #[test]
    fn the_code_around_the_line_is_shown_escaped_with_the_line_marked() {
        let out = cell(
            &thread(5, file(), "a <script>x()</script>"),
            ForgeKind::GitHub,
        )
        .into_string();
        assert!(
            out.contains("src/&lt;a&gt;.sh at <code>0123456789</code>"),
            "{out}"
        );
        for n in 2..=8 {
            assert!(
                out.contains(&format!(
                    "<td class=\"src\">line {n} &lt;b&gt;&amp;&lt;/b&gt;</td>"
                )),
                "{n}: {out}"
            );
        }
        assert!(!out.contains(">line 1 "), "{out}");
        assert!(!out.contains(">line 9 "), "{out}");
        assert!(out.contains("<tr class=\"mark\" data-line=\"5\">"), "{out}");
        assert_eq!(out.matches("class=\"mark\"").count(), 1, "{out}");
        assert!(out.contains("@rev&lt;i&gt;"), "{out}");
        assert!(out.contains("&lt;script&gt;x()&lt;/script&gt;"), "{out}");
        assert!(!out.contains("<script"), "{out}");
    }

    #[test]
    fn a_suggestion_is_drawn_as_the_lines_it_removes_and_adds() {
        let body = "Fix it:\n\n```suggestion\nnew <i>4</i>\nnew 4b\n```\n";
        let out = cell(&thread(4, file(), body), ForgeKind::GitHub).into_string();
        assert!(out.contains("Suggested change to line 4"), "{out}");
        assert!(
            out.contains("<tr class=\"del\"><td class=\"ln\">4</td><td class=\"sign\">-</td><td class=\"src\">line 4 &lt;b&gt;&amp;&lt;/b&gt;</td></tr>"),
            "{out}"
        );
        assert!(
            out.contains("<tr class=\"add\"><td class=\"ln\"></td><td class=\"sign\">+</td><td class=\"src\">new &lt;i&gt;4&lt;/i&gt;</td></tr>"),
            "{out}"
        );
        assert!(out.contains("<td class=\"src\">new 4b</td>"), "{out}");
        assert_eq!(out.matches("class=\"del\"").count(), 1, "{out}");
        assert!(out.contains("this run recorded only the last"), "{out}");
        assert!(!out.contains("```"), "{out}");

        // A comment on lines 3 to 4 (its start recorded): both are replaced.
        let mut multi = thread(4, file(), body);
        if let Some(e) = multi.excerpt.as_mut() {
            e.start_line = Some(3);
        }
        let out = cell(&multi, ForgeKind::GitHub).into_string();
        assert!(out.contains("Suggested change to lines 3–4"), "{out}");
        assert_eq!(out.matches("class=\"del\"").count(), 2, "{out}");
        assert!(!out.contains("recorded only the last"), "{out}");

        // GitLab's relative form: the lines it names, no caveat.
        let body = "```suggestion:-1+1\nx\n```\n";
        let out = cell(&thread(4, file(), body), ForgeKind::GitLab).into_string();
        assert!(out.contains("Suggested change to lines 3–5"), "{out}");
        assert_eq!(out.matches("class=\"del\"").count(), 3, "{out}");
        assert!(!out.contains("records only the last"), "{out}");
        // The same block on GitHub is plain code, as GitHub shows it.
        let out = cell(&thread(4, file(), body), ForgeKind::GitHub).into_string();
        assert!(!out.contains("Suggested change"), "{out}");
        assert!(
            out.contains("<pre><code class=\"language-suggestion:-1+1\">x"),
            "{out}"
        );

        // Without the file: the added lines, and why no removed ones.
        let missing = Code::Unavailable("the file is not in the repository at 0123456789".into());
        let out = cell(
            &thread(4, missing, "```suggestion\ny\n```\n"),
            ForgeKind::GitHub,
        )
        .into_string();
        assert!(
            out.contains("Code not shown: the file is not in the repository at 0123456789."),
            "{out}"
        );
        assert!(out.contains("<td class=\"src\">y</td>"), "{out}");
        assert!(!out.contains("class=\"del\""), "{out}");
        assert!(out.contains("The lines it replaces are not shown"), "{out}");
    }

    #[test]
    fn top_level_items_are_named_as_the_forge_names_them() {
        assert_eq!(
            kind_label(ItemKind::ReviewBody, ForgeKind::GitHub),
            "review summary"
        );
        assert_eq!(
            kind_label(ItemKind::IssueComment, ForgeKind::GitHub),
            "PR comment"
        );
        assert_eq!(
            kind_label(ItemKind::IssueComment, ForgeKind::GitLab),
            "MR comment"
        );
    }

    #[test]
    fn backticks_become_inline_code() {
        let out = inline_code("`shepherd resume` failed: <x> `a` and ` alone").into_string();
        assert_eq!(
            out,
            "<code>shepherd resume</code> failed: &lt;x&gt; <code>a</code> and ` alone"
        );
        assert_eq!(inline_code("no code").into_string(), "no code");
    }
}
