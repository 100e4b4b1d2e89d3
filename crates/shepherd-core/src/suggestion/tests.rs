#![allow(clippy::unwrap_used)] // a panic is how a test fails

use super::apply::Lines;
use super::*;
use crate::marker::Marker;
use crate::model::{Comment, DiffSide, ForgeKind, ReviewThread, SubjectType};
use proptest::prelude::*;

fn range(lines: &[&str]) -> Suggestion {
    Suggestion::Range {
        lines: lines.iter().map(|l| (*l).to_owned()).collect(),
    }
}

fn site(start_line: u32, end_line: u32) -> SuggestionSite {
    SuggestionSite {
        path: "src/lib.rs".to_owned(),
        side: DiffSide::Right,
        start_line,
        end_line,
    }
}

fn strings(lines: &[&str]) -> Vec<String> {
    lines.iter().map(|l| (*l).to_owned()).collect()
}

// ---- extraction -------------------------------------------------------

/// Where a CommonMark parser (pulldown-cmark 0.12) reads a body otherwise
/// than this fence parser does, the fence parser's reading is kept (issue 29.6):
/// these cases pin it, so a swap of parsers cannot change it unseen.
#[test]
fn fence_readings_a_commonmark_parser_would_change() {
    let cases: &[(&str, &str, Vec<Suggestion>)] = &[
        // CommonMark: an HTML block runs to the next blank line, so the fence is HTML.
        (
            "fence right after <details>",
            "<details>\n```suggestion\nx\n```\n</details>",
            vec![range(&["x"])],
        ),
        // CommonMark: a fence in a list item (the parser reads top-level lines only).
        (
            "fence opening a list item",
            "- ```suggestion\n  x\n  ```",
            vec![],
        ),
        (
            "fence indented four in a list item",
            "- a\n\n    ```suggestion\n    x\n    ```",
            vec![],
        ),
        // CommonMark decodes entities in the info string.
        (
            "entity in the info string",
            "```suggestion&#58;-1+2\nx\n```",
            vec![],
        ),
        // CommonMark expands a tab to the fence's indent; content is kept verbatim here.
        (
            "tab after an indented fence",
            "  ```suggestion\n\tx\n  ```",
            vec![range(&["\tx"])],
        ),
    ];
    for (name, body, want) in cases {
        assert_eq!(&extract_suggestions(body), want, "{name}");
    }
}

#[test]
fn extraction_table() {
    let cases: &[(&str, &str, Vec<Suggestion>)] = &[
        ("single line", "Try:\n```suggestion\nlet x = 1;\n```\n", vec![range(&["let x = 1;"])]),
        ("multi-line", "```suggestion\na\n  b\n\tc  \n```", vec![range(&["a", "  b", "\tc  "])]),
        ("empty block deletes", "```suggestion\n```", vec![range(&[])]),
        ("blank line kept", "```suggestion\n\n```", vec![range(&[""])]),
        ("crlf body", "x\r\n```suggestion\r\nfoo\r\nbar\r\n```\r\n", vec![range(&["foo", "bar"])]),
        ("four backticks hold a fence", "````suggestion\n```rust\nx\n```\n````", vec![range(&["```rust", "x", "```"])]),
        ("tilde fence", "~~~suggestion\ny\n~~~", vec![range(&["y"])]),
        ("longer closing fence", "```suggestion\ny\n`````", vec![range(&["y"])]),
        ("closing fence with trailing spaces", "```suggestion\ny\n```  \t", vec![range(&["y"])]),
        ("tilde does not close backticks", "```suggestion\n~~~\n```", vec![range(&["~~~"])]),
        ("shorter fence does not close", "````suggestion\n```\n````", vec![range(&["```"])]),
        ("info string with spaces around", "```  suggestion \nz\n```", vec![range(&["z"])]),
        ("indented fence strips its indent", "  ```suggestion\n    a\n b\nc\n  ```", vec![range(&["  a", "b", "c"])]),
        ("two blocks", "```suggestion\na\n```\ntext\n```suggestion\nb\n```", vec![range(&["a"]), range(&["b"])]),
        ("inside a backtick fence", "````md\n```suggestion\nx\n```\n````", vec![]),
        ("inside a tilde fence", "~~~\n```suggestion\nx\n```\n~~~", vec![]),
        ("after a nested fence", "````md\n```suggestion\nx\n```\n````\n```suggestion\nreal\n```", vec![range(&["real"])]),
        ("other language", "```rust\nx\n```", vec![]),
        ("not exactly suggestion", "```suggestions\nx\n```\n```Suggestion\nx\n```\n```suggestion rust\nx\n```", vec![]),
        ("indented code block is not a fence", "    ```suggestion\n    x\n    ```", vec![]),
        ("quoted suggestion is not a block", "> ```suggestion\n> x\n> ```", vec![]),
        ("unclosed block ignored", "```suggestion\nx\ny", vec![]),
        ("inline backticks are not a fence", "```suggestion```\nx\n```", vec![]),
        ("two backticks are not a fence", "``suggestion\nx\n``", vec![]),
        ("gitlab form", "```suggestion:-2+1\na\nb\n```", vec![Suggestion::Relative { above: 2, below: 1, lines: strings(&["a", "b"]) }]),
        ("gitlab zero offsets", "```suggestion:-0+0\n```", vec![Suggestion::Relative { above: 0, below: 0, lines: vec![] }]),
        ("gitlab malformed", "```suggestion:-a+1\nx\n```\n```suggestion:+1-2\nx\n```\n```suggestion:-1\nx\n```\n```suggestion:-+\nx\n```", vec![]),
        ("gitlab overflow", "```suggestion:-99999999999+0\nx\n```", vec![]),
    ];
    for (name, body, want) in cases {
        assert_eq!(&extract_suggestions(body), want, "{name}");
    }
}

// ---- diff hunks ------------------------------------------------------

const HUNK: &str = "@@ -10,6 +10,7 @@ fn main() {\n context10\n-removed\n+added11\n+added12\n context13\n\\ No newline at end of file";

#[test]
fn hunk_lines_of_a_range() {
    assert_eq!(
        anchored_lines_from_diff_hunk(HUNK, 11, 13),
        Some(strings(&["added11", "added12", "context13"]))
    );
    assert_eq!(
        anchored_lines_from_diff_hunk(HUNK, 10, 10),
        Some(strings(&["context10"]))
    );
    assert_eq!(
        anchored_lines_from_diff_hunk(HUNK, 12, 12),
        Some(strings(&["added12"]))
    );
}

#[test]
fn hunk_refuses_what_it_does_not_show() {
    assert_eq!(
        anchored_lines_from_diff_hunk(HUNK, 13, 14),
        None,
        "beyond the hunk"
    );
    assert_eq!(
        anchored_lines_from_diff_hunk(HUNK, 9, 10),
        None,
        "before the hunk"
    );
    assert_eq!(
        anchored_lines_from_diff_hunk(HUNK, 12, 11),
        None,
        "reversed"
    );
    assert_eq!(anchored_lines_from_diff_hunk(HUNK, 0, 1), None, "line 0");
    assert_eq!(
        anchored_lines_from_diff_hunk(" context\n+x", 1, 1),
        None,
        "no header"
    );
    assert_eq!(
        anchored_lines_from_diff_hunk("@@ -1 +x @@\n+a", 1, 1),
        None,
        "bad header"
    );
    assert_eq!(
        anchored_lines_from_diff_hunk("@@ -1 +1 @@\n*a", 1, 1),
        None,
        "bad line"
    );
}

#[test]
fn hunk_header_without_counts_and_crlf_lines() {
    let hunk = "@@ -1 +1 @@\n-old\r\n+new\r\n";
    assert_eq!(
        anchored_lines_from_diff_hunk(hunk, 1, 1),
        Some(strings(&["new"]))
    );
    let two = "@@ -1,2 +1,2 @@\n a\n\n b";
    assert_eq!(
        anchored_lines_from_diff_hunk(two, 1, 3),
        Some(strings(&["a", "", "b"]))
    );
}

// ---- applying --------------------------------------------------------

#[test]
fn apply_table() {
    struct Case {
        name: &'static str,
        file: &'static str,
        start: u32,
        end: u32,
        anchor: &'static [&'static str],
        suggestion: Suggestion,
        want: &'static str,
    }
    let cases = [
        Case {
            name: "single line",
            file: "a\nb\nc\n",
            start: 2,
            end: 2,
            anchor: &["b"],
            suggestion: range(&["B"]),
            want: "a\nB\nc\n",
        },
        Case {
            name: "multi-line",
            file: "a\nb\nc\nd\n",
            start: 2,
            end: 3,
            anchor: &["b", "c"],
            suggestion: range(&["X"]),
            want: "a\nX\nd\n",
        },
        Case {
            name: "deletion",
            file: "a\nb\nc\n",
            start: 2,
            end: 2,
            anchor: &["b"],
            suggestion: range(&[]),
            want: "a\nc\n",
        },
        Case {
            name: "insert more lines",
            file: "a\nb\nc\n",
            start: 2,
            end: 2,
            anchor: &["b"],
            suggestion: range(&["b1", "b2", "b3"]),
            want: "a\nb1\nb2\nb3\nc\n",
        },
        Case {
            name: "first line",
            file: "a\nb\n",
            start: 1,
            end: 1,
            anchor: &["a"],
            suggestion: range(&["A"]),
            want: "A\nb\n",
        },
        Case {
            name: "whole file",
            file: "a\nb\n",
            start: 1,
            end: 2,
            anchor: &["a", "b"],
            suggestion: range(&["z"]),
            want: "z\n",
        },
        Case {
            name: "delete whole file",
            file: "a\nb\n",
            start: 1,
            end: 2,
            anchor: &["a", "b"],
            suggestion: range(&[]),
            want: "",
        },
        Case {
            name: "crlf kept",
            file: "a\r\nb\r\nc\r\n",
            start: 2,
            end: 2,
            anchor: &["b"],
            suggestion: range(&["x", "y"]),
            want: "a\r\nx\r\ny\r\nc\r\n",
        },
        Case {
            name: "crlf anchor from a crlf hunk",
            file: "a\r\nb\r\n",
            start: 1,
            end: 1,
            anchor: &["a\r"],
            suggestion: range(&["A"]),
            want: "A\r\nb\r\n",
        },
        Case {
            name: "mixed endings keep local ones",
            file: "a\nb\r\nc\n",
            start: 2,
            end: 2,
            anchor: &["b"],
            suggestion: range(&["x", "y"]),
            want: "a\nx\r\ny\nc\n",
        },
        Case {
            name: "no trailing newline, last line",
            file: "a\nb",
            start: 2,
            end: 2,
            anchor: &["b"],
            suggestion: range(&["x", "y"]),
            want: "a\nx\ny",
        },
        Case {
            name: "no trailing newline, middle",
            file: "a\nb\nc",
            start: 1,
            end: 1,
            anchor: &["a"],
            suggestion: range(&["x"]),
            want: "x\nb\nc",
        },
        Case {
            name: "no trailing newline, delete last",
            file: "a\nb",
            start: 2,
            end: 2,
            anchor: &["b"],
            suggestion: range(&[]),
            want: "a",
        },
        Case {
            name: "crlf, no trailing newline, insert",
            file: "a\r\nb",
            start: 2,
            end: 2,
            anchor: &["b"],
            suggestion: range(&["x", "y"]),
            want: "a\r\nx\r\ny",
        },
        Case {
            name: "trailing newline kept after deleting last",
            file: "a\nb\n",
            start: 2,
            end: 2,
            anchor: &["b"],
            suggestion: range(&[]),
            want: "a\n",
        },
        Case {
            name: "single line file without newline",
            file: "a",
            start: 1,
            end: 1,
            anchor: &["a"],
            suggestion: range(&["b", "c"]),
            want: "b\nc",
        },
        Case {
            name: "blank replacement line",
            file: "a\nb\n",
            start: 1,
            end: 1,
            anchor: &["a"],
            suggestion: range(&[""]),
            want: "\nb\n",
        },
        Case {
            name: "gitlab relative",
            file: "1\n2\n3\n4\n5\n",
            start: 3,
            end: 3,
            anchor: &["2", "3", "4"],
            suggestion: Suggestion::Relative {
                above: 1,
                below: 1,
                lines: strings(&["x"]),
            },
            want: "1\nx\n5\n",
        },
        Case {
            name: "gitlab relative zero",
            file: "1\n2\n",
            start: 2,
            end: 2,
            anchor: &["2"],
            suggestion: Suggestion::Relative {
                above: 0,
                below: 0,
                lines: strings(&[]),
            },
            want: "1\n",
        },
    ];
    for c in cases {
        let anchor = strings(c.anchor);
        let got = apply_suggestion(c.file, &site(c.start, c.end), &anchor, &c.suggestion);
        assert_eq!(got.as_deref(), Ok(c.want), "{}", c.name);
    }
}

#[test]
fn apply_refusals() {
    let file = "a\nb\nc\n";
    let err = |s: &SuggestionSite, anchor: &[&str], sugg: &Suggestion| {
        apply_suggestion(file, s, &strings(anchor), sugg).unwrap_err()
    };
    let path = "src/lib.rs".to_owned();
    assert_eq!(
        err(&site(2, 2), &["B"], &range(&["x"])),
        SuggestionError::Mismatch {
            path: path.clone(),
            start_line: 2,
            end_line: 2,
            line: 2
        }
    );
    assert_eq!(
        err(&site(1, 3), &["a", "b", "C"], &range(&["x"])),
        SuggestionError::Mismatch {
            path: path.clone(),
            start_line: 1,
            end_line: 3,
            line: 3
        }
    );
    assert_eq!(
        err(&site(1, 2), &["a"], &range(&["x"])),
        SuggestionError::AnchorLength {
            path: path.clone(),
            start_line: 1,
            end_line: 2,
            anchor_lines: 1,
            range_lines: 2
        }
    );
    assert_eq!(
        err(&site(3, 4), &["c", ""], &range(&["x"])),
        SuggestionError::OutOfBounds {
            path: path.clone(),
            start_line: 3,
            end_line: 4,
            file_lines: 3
        }
    );
    assert_eq!(
        err(&site(3, 2), &[], &range(&["x"])),
        SuggestionError::InvalidRange {
            path: path.clone(),
            start_line: 3,
            end_line: 2
        }
    );
    assert_eq!(
        err(&site(0, 1), &["a"], &range(&["x"])),
        SuggestionError::InvalidRange {
            path: path.clone(),
            start_line: 0,
            end_line: 1
        }
    );
    let mut left = site(1, 1);
    left.side = DiffSide::Left;
    assert_eq!(
        err(&left, &["a"], &range(&["x"])),
        SuggestionError::LeftSide {
            path: path.clone(),
            start_line: 1,
            end_line: 1
        }
    );
    let above = Suggestion::Relative {
        above: 2,
        below: 0,
        lines: vec![],
    };
    assert_eq!(
        err(&site(1, 1), &["a"], &above),
        SuggestionError::OutOfBounds {
            path: path.clone(),
            start_line: 0,
            end_line: 1,
            file_lines: 3
        }
    );
    let below = Suggestion::Relative {
        above: 0,
        below: 1,
        lines: vec![],
    };
    assert_eq!(
        err(&site(3, 3), &["c", ""], &below),
        SuggestionError::OutOfBounds {
            path: path.clone(),
            start_line: 3,
            end_line: 4,
            file_lines: 3
        }
    );
    // Whitespace counts: a reindented line is a change.
    assert!(matches!(
        err(&site(2, 2), &[" b"], &range(&["x"])),
        SuggestionError::Mismatch { .. }
    ));
    // An empty file has no lines to anchor to.
    assert!(matches!(
        apply_suggestion("", &site(1, 1), &strings(&[""]), &range(&["x"])),
        Err(SuggestionError::OutOfBounds { file_lines: 0, .. })
    ));
}

#[test]
fn errors_name_path_and_lines() {
    let e = SuggestionError::Mismatch {
        path: "src/a.rs".into(),
        start_line: 3,
        end_line: 5,
        line: 4,
    };
    assert_eq!(
        e.to_string(),
        "src/a.rs:3-5: line 4 no longer matches what the reviewer saw"
    );
    let e = SuggestionError::Ambiguous {
        path: "src/a.rs".into(),
        count: 2,
    };
    assert!(e
        .to_string()
        .starts_with("src/a.rs: thread has 2 different suggestion blocks"));
}

// ---- threads ---------------------------------------------------------

/// The account Shepherd runs as.
const VIEWER: &str = "shep";

fn comment(id: &str, body: &str, hunk: Option<&str>) -> Comment {
    comment_by("rev", id, body, hunk)
}

fn comment_by(login: &str, id: &str, body: &str, hunk: Option<&str>) -> Comment {
    let built = crate::testing::comment(id, login, body);
    match hunk {
        Some(hunk) => built.hunk(hunk).build(),
        None => built.build(),
    }
}

const THREAD_HUNK: &str =
    "@@ -1,3 +1,4 @@\n fn f() {\n-    old();\n+    let a = 1;\n+    let b = 2;";

fn thread(comments: Vec<Comment>) -> ReviewThread {
    crate::testing::thread("PRRT_1")
        .path("src/f.rs")
        .current(Some(12), Some(13))
        .original(Some(2), Some(3))
        .comments(comments)
        .build()
}

#[test]
fn thread_edit_uses_original_lines_as_anchor_and_current_lines_as_site() {
    let t = thread(vec![comment(
        "C1",
        "```suggestion\n    let (a, b) = (1, 2);\n```",
        Some(THREAD_HUNK),
    )]);
    let edit = SuggestionEdit::from_thread(&t, VIEWER).unwrap();
    assert_eq!(edit.comment_id, "C1");
    assert_eq!(
        edit.site,
        SuggestionSite {
            path: "src/f.rs".into(),
            side: DiffSide::Right,
            start_line: 12,
            end_line: 13
        }
    );
    assert_eq!(edit.anchor, strings(&["    let a = 1;", "    let b = 2;"]));
    let mut file: String = (1..=11).map(|i| format!("l{i}\n")).collect();
    file.push_str("    let a = 1;\n    let b = 2;\n}\n");
    let out = edit.apply(&file).unwrap();
    assert!(out.ends_with("l11\n    let (a, b) = (1, 2);\n}\n"), "{out}");
    // Someone changed the lines meanwhile: refused.
    let changed = file.replace("let b = 2", "let b = 3");
    assert!(matches!(
        edit.apply(&changed),
        Err(SuggestionError::Mismatch { line: 13, .. })
    ));
}

#[test]
fn thread_refusals() {
    let ok = || {
        thread(vec![comment(
            "C1",
            "```suggestion\nx\n```",
            Some(THREAD_HUNK),
        )])
    };
    let kind = |t: &ReviewThread| SuggestionEdit::from_thread(t, VIEWER).unwrap_err();

    let mut t = ok();
    t.is_outdated = true;
    assert!(matches!(kind(&t), SuggestionError::Outdated { .. }));
    let mut t = ok();
    t.line = None;
    assert!(matches!(kind(&t), SuggestionError::Outdated { .. }));
    let mut t = ok();
    t.diff_side = DiffSide::Left;
    assert!(matches!(kind(&t), SuggestionError::LeftSide { .. }));
    let mut t = ok();
    t.subject_type = SubjectType::File;
    assert!(matches!(kind(&t), SuggestionError::NotOnLines { .. }));
    let mut t = ok();
    t.start_line = Some(14);
    assert!(matches!(kind(&t), SuggestionError::InvalidRange { .. }));
    let mut t = ok();
    t.comments[0].diff_hunk = None;
    assert!(matches!(
        kind(&t),
        SuggestionError::AnchorUnavailable { .. }
    ));
    let mut t = ok();
    t.original_start_line = Some(1); // 3 original lines for 2 current ones
    assert!(matches!(
        kind(&t),
        SuggestionError::AnchorUnavailable { .. }
    ));
    let mut t = ok();
    t.comments[0].body = "no block here".into();
    assert!(matches!(kind(&t), SuggestionError::NoSuggestion { .. }));
    // GitLab's relative form is not a GitHub suggestion.
    let mut t = ok();
    t.comments[0].body = "```suggestion:-1+0\nx\n```".into();
    assert!(matches!(kind(&t), SuggestionError::NoSuggestion { .. }));
    // Two different blocks in one comment, or across comments: ambiguous.
    let mut t = ok();
    t.comments[0].body = "```suggestion\nx\n```\n```suggestion\ny\n```".into();
    assert_eq!(
        kind(&t),
        SuggestionError::Ambiguous {
            path: "src/f.rs".into(),
            count: 2
        }
    );
    let mut t = ok();
    t.comments.push(comment(
        "C2",
        "or\n```suggestion\ny\n```",
        Some(THREAD_HUNK),
    ));
    assert_eq!(
        kind(&t),
        SuggestionError::Ambiguous {
            path: "src/f.rs".into(),
            count: 2
        }
    );
}

#[test]
fn thread_repeats_and_own_replies_do_not_make_ambiguity() {
    let mut t = thread(vec![comment(
        "C1",
        "```suggestion\nx\n```",
        Some(THREAD_HUNK),
    )]);
    t.comments.push(comment(
        "C2",
        "same again\n```suggestion\nx\n```",
        Some(THREAD_HUNK),
    ));
    let own = Marker::new("PRRT_1", 1, false).append_to("Quoting:\n```suggestion\nother\n```");
    t.comments
        .push(comment_by(VIEWER, "C3", &own, Some(THREAD_HUNK)));
    let edit = SuggestionEdit::from_thread(&t, VIEWER).unwrap();
    assert_eq!(edit.comment_id, "C1");
    assert_eq!(edit.suggestion, range(&["x"]));
    // The same comment by anyone else is an ordinary comment: a marker
    // pasted in it does not hide its suggestion.
    t.comments.pop();
    t.comments.push(comment("C3", &own, Some(THREAD_HUNK)));
    assert_eq!(
        SuggestionEdit::from_thread(&t, VIEWER),
        Err(SuggestionError::Ambiguous {
            path: "src/f.rs".into(),
            count: 2
        })
    );
}

#[test]
fn one_line_thread_without_start_line() {
    let mut t = thread(vec![comment("C1", "```suggestion\n```", Some(THREAD_HUNK))]);
    t.start_line = None;
    t.original_start_line = None;
    let edit = SuggestionEdit::from_thread(&t, VIEWER).unwrap();
    assert_eq!((edit.site.start_line, edit.site.end_line), (13, 13));
    assert_eq!(edit.anchor, strings(&["    let b = 2;"]));
    assert!(edit.suggestion.is_deletion());
}

// ---- GitLab ------------------------------------------------------------

/// `l1` … `l12`, one per line.
fn twelve() -> String {
    (1..=12).map(|i| format!("l{i}\n")).collect()
}

/// A GitLab thread (no diff hunk) on `src/f.rs`, lines `start..=line`.
fn gitlab_thread(start: Option<u32>, line: u32, bodies: &[&str]) -> ReviewThread {
    crate::testing::thread("0123456789abcdef0123456789abcdef01234567")
        .path("src/f.rs")
        .range(start, line)
        .comments(
            bodies
                .iter()
                .enumerate()
                .map(|(i, body)| comment(&format!("{}", 100 + i), body, None)),
        )
        .build()
}

#[test]
fn gitlab_ranges_are_relative_to_the_commented_line() {
    // (case, start_line, line, body, replaced range, file afterwards: the
    // lines of l1..l12 kept, with the new text where the range was)
    type Case = (
        &'static str,
        Option<u32>,
        u32,
        &'static str,
        (u32, u32),
        &'static str,
    );
    let cases: &[Case] = &[
        (
            "single line -0+0",
            None,
            10,
            "```suggestion:-0+0\nX\n```",
            (10, 10),
            "l9 X l11",
        ),
        (
            "plain block is -0+0",
            None,
            10,
            "```suggestion\nX\n```",
            (10, 10),
            "l9 X l11",
        ),
        (
            "plain block on a multi-line thread: the commented line",
            Some(8),
            10,
            "```suggestion\nX\n```",
            (10, 10),
            "l9 X l11",
        ),
        (
            "multi-line -2+0",
            Some(8),
            10,
            "```suggestion:-2+0\nX\nY\n```",
            (8, 10),
            "l7 X Y l11",
        ),
        (
            "-2+0 on a one-line thread",
            None,
            10,
            "```suggestion:-2+0\nX\n```",
            (8, 10),
            "l7 X l11",
        ),
        (
            "lines below +1",
            None,
            10,
            "```suggestion:-0+1\nX\n```",
            (10, 11),
            "l9 X l12",
        ),
        (
            "above and below -1+2",
            None,
            10,
            "```suggestion:-1+2\nX\n```",
            (9, 12),
            "l8 X",
        ),
        (
            "deletion",
            None,
            10,
            "```suggestion:-0+0\n```",
            (10, 10),
            "l9 l11",
        ),
        (
            "first line",
            None,
            1,
            "```suggestion:-0+0\nX\n```",
            (1, 1),
            "X l2",
        ),
    ];
    for (name, start, line, body, range, around) in cases {
        let t = gitlab_thread(*start, *line, &[body]);
        let edit = SuggestionEdit::from_gitlab_thread(&t, VIEWER, Some(&twelve()))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(edit.effective_range().unwrap(), *range, "{name}");
        assert_eq!(edit.comment_id, "100", "{name}");
        assert!(!edit.anchor_pending, "{name}");
        let want: Vec<String> = (range.0..=range.1).map(|i| format!("l{i}")).collect();
        assert_eq!(edit.anchor, want, "{name}: the head's lines of the range");
        let out = edit.apply(&twelve()).unwrap();
        let words = out.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(words.contains(around), "{name}: {words}");
        let kept = 12 - (range.1 - range.0 + 1) as usize;
        let added = edit.suggestion.lines().len();
        assert_eq!(out.lines().count(), kept + added, "{name}: {out}");
        // The same through the forge-dispatching constructor.
        let same = SuggestionEdit::from_thread_with(&t, ForgeKind::GitLab, VIEWER, Some(&twelve()));
        assert_eq!(same, Ok(edit), "{name}");
    }
}

#[test]
fn gitlab_refusals() {
    let file = twelve();
    let edit = |t: &ReviewThread| SuggestionEdit::from_gitlab_thread(t, VIEWER, Some(&file));
    let block = "```suggestion:-1+0\nX\n```";
    type Case = (&'static str, ReviewThread, fn(&SuggestionError) -> bool);
    let cases: Vec<Case> = vec![
        (
            "outdated",
            {
                let mut t = gitlab_thread(None, 10, &[block]);
                t.is_outdated = true;
                t
            },
            |e| matches!(e, SuggestionError::Outdated { .. }),
        ),
        (
            "no line on the head",
            {
                let mut t = gitlab_thread(None, 10, &[block]);
                t.line = None;
                t
            },
            |e| matches!(e, SuggestionError::Outdated { .. }),
        ),
        (
            "left side",
            {
                let mut t = gitlab_thread(None, 10, &[block]);
                t.diff_side = DiffSide::Left;
                t
            },
            |e| matches!(e, SuggestionError::LeftSide { .. }),
        ),
        (
            "file thread",
            {
                let mut t = gitlab_thread(None, 10, &[block]);
                t.subject_type = SubjectType::File;
                t
            },
            |e| matches!(e, SuggestionError::NotOnLines { .. }),
        ),
        (
            "reversed range",
            gitlab_thread(Some(11), 10, &[block]),
            |e| matches!(e, SuggestionError::InvalidRange { .. }),
        ),
        (
            "no block",
            gitlab_thread(None, 10, &["Please rename this."]),
            |e| matches!(e, SuggestionError::NoSuggestion { .. }),
        ),
        (
            "two different blocks",
            gitlab_thread(None, 10, &[block, "```suggestion:-0+0\nY\n```"]),
            |e| matches!(e, SuggestionError::Ambiguous { count: 2, .. }),
        ),
        (
            "above line 1",
            gitlab_thread(None, 2, &["```suggestion:-2+0\nX\n```"]),
            |e| {
                matches!(
                    e,
                    SuggestionError::InvalidRange {
                        start_line: 0,
                        end_line: 2,
                        ..
                    }
                )
            },
        ),
        (
            "below the end of the file",
            gitlab_thread(None, 10, &["```suggestion:-0+3\nX\n```"]),
            |e| {
                matches!(
                    e,
                    SuggestionError::OutOfBounds {
                        start_line: 10,
                        end_line: 13,
                        file_lines: 12,
                        ..
                    }
                )
            },
        ),
    ];
    for (name, t, want) in cases {
        let err = edit(&t).expect_err(name);
        assert!(want(&err), "{name}: {err:?}");
    }
    // A repeat, and Shepherd's own reply quoting another block, are not
    // a second suggestion.
    let own = Marker::new("d", 1, false).append_to("```suggestion:-0+0\nZ\n```");
    let mut t = gitlab_thread(None, 10, &[block, block, &own]);
    let pasted = t.clone();
    if let Some(c) = t.comments.last_mut() {
        c.author = comment_by(VIEWER, "x", "", None).author;
    }
    assert_eq!(edit(&t).unwrap().suggestion.lines(), ["X"]);
    // Pasted by someone else, the marker hides nothing.
    assert!(matches!(
        edit(&pasted),
        Err(SuggestionError::Ambiguous { count: 2, .. })
    ));
}

#[test]
fn gitlab_lines_that_changed_after_the_head_are_refused() {
    let t = gitlab_thread(Some(8), 10, &["```suggestion:-2+0\nX\n```"]);
    let edit = SuggestionEdit::from_gitlab_thread(&t, VIEWER, Some(&twelve())).unwrap();
    // Someone changed a line of the range.
    let changed = twelve().replace("l9\n", "l9 changed\n");
    assert_eq!(
        edit.apply(&changed),
        Err(SuggestionError::Mismatch {
            path: "src/f.rs".into(),
            start_line: 8,
            end_line: 10,
            line: 9
        })
    );
    // An earlier fix added a line above: the range moved.
    let shifted = format!("l0\n{}", twelve());
    assert!(matches!(
        edit.apply(&shifted),
        Err(SuggestionError::Mismatch { line: 8, .. })
    ));
    // The head itself applies.
    assert!(edit.apply(&twelve()).is_ok());
}

#[test]
fn gitlab_anchor_pending_until_pinned() {
    let t = gitlab_thread(None, 10, &["```suggestion:-1+0\nX\n```"]);
    let pending = SuggestionEdit::from_gitlab_thread(&t, VIEWER, None).unwrap();
    assert!(pending.anchor_pending && pending.anchor.is_empty());
    assert_eq!(
        pending.apply(&twelve()),
        Err(SuggestionError::AnchorPending {
            path: "src/f.rs".into(),
            start_line: 9,
            end_line: 10
        })
    );
    let json = serde_json::to_value(&pending).unwrap();
    assert_eq!(json["anchor_pending"], true);
    let pinned = pending.pinned(&twelve()).unwrap();
    assert_eq!(pinned.anchor, strings(&["l9", "l10"]));
    assert!(!serde_json::to_value(&pinned)
        .unwrap()
        .as_object()
        .unwrap()
        .contains_key("anchor_pending"));
    assert_eq!(pinned.pinned("other\n").unwrap(), pinned, "pinned once");
    assert!(pinned.apply(&twelve()).unwrap().contains("l8\nX\nl11\n"));
    // A file too short for the range is refused when pinned.
    assert!(matches!(
        pending.pinned("l1\n"),
        Err(SuggestionError::OutOfBounds { file_lines: 1, .. })
    ));
}

#[test]
fn each_forge_reads_its_own_syntax() {
    // GitHub ignores GitLab's form and needs its diff hunk.
    let gitlab_form = thread(vec![comment(
        "C1",
        "```suggestion:-1+0\nx\n```",
        Some(THREAD_HUNK),
    )]);
    assert!(matches!(
        SuggestionEdit::from_thread_with(&gitlab_form, ForgeKind::GitHub, VIEWER, Some("f")),
        Err(SuggestionError::NoSuggestion { .. })
    ));
    // The same plain block: GitHub replaces the thread's range, GitLab
    // the commented line.
    let plain = thread(vec![comment(
        "C1",
        "```suggestion\nx\n```",
        Some(THREAD_HUNK),
    )]);
    let github = SuggestionEdit::from_thread_with(&plain, ForgeKind::GitHub, VIEWER, None).unwrap();
    assert_eq!(github.effective_range().unwrap(), (12, 13));
    let file: String = (1..=13).map(|i| format!("l{i}\n")).collect();
    let gitlab =
        SuggestionEdit::from_thread_with(&plain, ForgeKind::GitLab, VIEWER, Some(&file)).unwrap();
    assert_eq!(gitlab.effective_range().unwrap(), (13, 13));
    assert_eq!(gitlab.anchor, strings(&["l13"]));
}

// ---- properties ------------------------------------------------------

fn file_strategy() -> impl Strategy<Value = (Vec<String>, bool, bool)> {
    (
        prop::collection::vec("[a-z \t{}();]{0,8}", 1..12),
        any::<bool>(), // crlf
        any::<bool>(), // trailing newline
    )
        // Without a trailing newline, a last empty line is no line at all.
        .prop_map(|(lines, crlf, trailing)| {
            let trailing = trailing || lines.last().is_some_and(String::is_empty);
            (lines, crlf, trailing)
        })
}

fn render(lines: &[String], crlf: bool, trailing: bool) -> String {
    let eol = if crlf { "\r\n" } else { "\n" };
    let mut s = lines.join(eol);
    if trailing {
        s.push_str(eol);
    }
    s
}

proptest! {
    #[test]
    fn applying_the_current_lines_is_the_identity(
        (lines, crlf, trailing) in file_strategy(),
        a in any::<prop::sample::Index>(),
        b in any::<prop::sample::Index>(),
    ) {
        let file = render(&lines, crlf, trailing);
        let (i, j) = (a.index(lines.len()), b.index(lines.len()));
        let (first, last) = (i.min(j), i.max(j));
        let current = lines[first..=last].to_vec();
        let s = site(first as u32 + 1, last as u32 + 1);
        let out = apply_suggestion(&file, &s, &current, &Suggestion::Range { lines: current.clone() });
        prop_assert_eq!(out, Ok(file));
    }

    #[test]
    fn line_count_after_is_before_minus_range_plus_suggestion(
        (lines, crlf, trailing) in file_strategy(),
        a in any::<prop::sample::Index>(),
        b in any::<prop::sample::Index>(),
        new in prop::collection::vec("[a-z ]{0,6}", 0..6),
    ) {
        let file = render(&lines, crlf, trailing);
        let (i, j) = (a.index(lines.len()), b.index(lines.len()));
        let (first, last) = (i.min(j), i.max(j));
        let current = lines[first..=last].to_vec();
        let s = site(first as u32 + 1, last as u32 + 1);
        let out = apply_suggestion(&file, &s, &current, &Suggestion::Range { lines: new.clone() }).unwrap();
        let after = Lines::parse(&out);
        let mut want = lines[..first].to_vec();
        want.extend(new.iter().cloned());
        want.extend(lines[last + 1..].iter().cloned());
        // Without a trailing newline, an empty last line is no line at all
        // ("a" + "\n" + ""): the one case where the count drops by one.
        let absorbed = !trailing && want.last().is_some_and(String::is_empty);
        prop_assert_eq!(
            after.lines.len() + usize::from(absorbed),
            lines.len() - current.len() + new.len()
        );
        if absorbed {
            want.pop();
        }
        prop_assert_eq!(after.lines.iter().map(|(l, _)| l.to_string()).collect::<Vec<_>>(), want.clone());
        if !want.is_empty() {
            prop_assert_eq!(after.has_trailing_newline(), trailing || absorbed);
            // A one-line file without a newline has no style: LF then.
            let eol = if crlf && (lines.len() > 1 || trailing) { "\r\n" } else { "\n" };
            prop_assert!(after.lines.iter().all(|(_, e)| e.is_empty() || *e == eol));
        }
    }

    #[test]
    fn a_changed_line_is_refused(
        (lines, crlf, trailing) in file_strategy(),
        a in any::<prop::sample::Index>(),
    ) {
        let file = render(&lines, crlf, trailing);
        let i = a.index(lines.len());
        let seen = vec![format!("{}~", lines[i])];
        let s = site(i as u32 + 1, i as u32 + 1);
        let out = apply_suggestion(&file, &s, &seen, &range(&["x"]));
        let is_mismatch = matches!(out, Err(SuggestionError::Mismatch { .. }));
        prop_assert!(is_mismatch);
    }

    #[test]
    fn extraction_never_panics(body in "(```|~~~|suggestion|:-1\\+2|\n|\r| |x|`){0,40}") {
        let _ = extract_suggestions(&body);
    }

    #[test]
    fn a_rendered_block_round_trips(
        new in prop::collection::vec("[a-z ~]{0,6}", 0..6),
        crlf in any::<bool>(),
    ) {
        let eol = if crlf { "\r\n" } else { "\n" };
        let mut body = format!("Please:{eol}```suggestion{eol}");
        for l in &new {
            body.push_str(l);
            body.push_str(eol);
        }
        body.push_str("```");
        prop_assert_eq!(extract_suggestions(&body), vec![Suggestion::Range { lines: new }]);
    }
}
