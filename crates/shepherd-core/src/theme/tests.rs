use super::markdown::Parsed;
use super::prose::words;
use super::weights::{HEADLINE, MAX_MATCHES_PER_RULE};
use super::*;

/// Per-theme scores, indexed by [`Theme`]'s declaration order, in units of
/// a rule weight times its place's multiplier.
fn theme_scores(comment: &str, suggestion: Option<&str>) -> [u32; 14] {
    Parsed::new(comment, suggestion).scores()
}

/// Each comment (with no suggestion) gets its theme; a miss shows the
/// comment's scores.
fn assert_themes<'a>(cases: impl IntoIterator<Item = (&'a str, Theme)>) {
    for (comment, expected) in cases {
        assert_eq!(
            classify_theme(comment, None),
            expected,
            "{comment:?}: {:?}",
            theme_scores(comment, None)
        );
    }
}

/// (expected theme, comment, suggestion): review comments as bots and
/// people write them, at least four per theme.
const CASES: &[(Theme, &str, Option<&str>)] = &[
    // error-handling
    (
        Theme::ErrorHandling,
        "_⚠️ Potential issue_\n\n**Handle the error from `fs.readFile` instead of ignoring it.**\n\nIf the config file is missing, `err` is silently ignored and `data` is `undefined`, which crashes later in `JSON.parse`. Propagate the error to the caller.\n\n<details>\n<summary>🤖 Prompt for AI Agents</summary>\n\n```\nIn src/config/load.ts around lines 12 to 18, handle the error instead of ignoring it.\n```\n\n</details>",
        None,
    ),
    (
        Theme::ErrorHandling,
        "Using `.unwrap()` here will panic if the environment variable is not set. Consider returning a `Result` and using `?` to propagate the error.",
        Some("let port = env::var(\"PORT\")?;"),
    ),
    (
        Theme::ErrorHandling,
        "this swallows the exception, at least rethrow it",
        None,
    ),
    (
        Theme::ErrorHandling,
        "Empty catch block. If `JSON.parse` throws we lose the error entirely.",
        None,
    ),
    (
        Theme::ErrorHandling,
        "`fetchUser` returns a promise that is never awaited, so a rejection here becomes an unhandled rejection and kills the process on Node 15+.",
        None,
    ),
    (
        Theme::ErrorHandling,
        "err is assigned but never checked here",
        Some("if err != nil {\n\treturn fmt.Errorf(\"open config: %w\", err)\n}"),
    ),
    // validation
    (
        Theme::Validation,
        "_⚠️ Potential issue_\n\n**Validate `page` and `limit` query parameters.**\n\n`parseInt` returns `NaN` for non-numeric input and negative values are passed straight to the query. Reject values outside 1..=100 with a 400.",
        None,
    ),
    (
        Theme::Validation,
        "What happens if `items` is empty? `items[0]` will be undefined here.",
        None,
    ),
    (
        Theme::Validation,
        "nit: should we check that the email is well-formed before saving it?",
        None,
    ),
    (
        Theme::Validation,
        "The function does not validate that `start` is less than or equal to `end`. An inverted range would produce a negative duration.",
        None,
    ),
    (
        Theme::Validation,
        "Missing bounds check on `idx`: an out-of-range index from the request body will panic.",
        None,
    ),
    (
        Theme::Validation,
        "`amount` comes straight from the form; reject zero and negative amounts before creating the charge.",
        None,
    ),
    // type-safety
    (
        Theme::TypeSafety,
        "Avoid `as any` here, it defeats the type checker. Type the response as `ApiResponse<User>` instead.",
        None,
    ),
    (
        Theme::TypeSafety,
        "Casting `u64` to `u32` silently truncates large values. Use `u32::try_from(len)` and handle the overflow.",
        Some("let len = u32::try_from(len)?;"),
    ),
    (
        Theme::TypeSafety,
        "This should be an enum rather than a stringly-typed `status: string`; a typo like `'actve'` compiles fine today.",
        None,
    ),
    (
        Theme::TypeSafety,
        "`// @ts-ignore` hides a real type error: `user` may be undefined here.",
        None,
    ),
    (
        Theme::TypeSafety,
        "prefer a newtype for UserId so we can't mix it up with OrderId",
        None,
    ),
    (
        Theme::TypeSafety,
        "`data` is annotated as `dict` but callers pass a list; mypy would flag this if the module weren't excluded. Use a TypedDict.",
        None,
    ),
    // naming
    (
        Theme::Naming,
        "nit: `data` is a very generic name. Something like `pendingInvoices` would be more descriptive.",
        None,
    ),
    (
        Theme::Naming,
        "Rename `doStuff` to describe what it actually does, e.g. `syncInventory`.",
        None,
    ),
    (
        Theme::Naming,
        "The function name `getUser` is misleading: it creates the user when missing. `getOrCreateUser`?",
        None,
    ),
    (
        Theme::Naming,
        "Boolean names should read as predicates: `isEnabled` rather than `enabled`.",
        None,
    ),
    (
        Theme::Naming,
        "Use snake_case for Python function names (`loadConfig` -> `load_config`).",
        None,
    ),
    (
        Theme::Naming,
        "`tmp2` is not a meaningful variable name",
        None,
    ),
    (
        Theme::Naming,
        "_🧹 Nitpick (assertive)_\n\n**Inconsistent naming: `user_id` vs `userId`.**\n\nThe rest of the module uses camelCase; rename the field for consistency.",
        None,
    ),
    // performance
    (
        Theme::Performance,
        "This runs a query per order inside the loop, a classic N+1. Fetch all line items in one query with `WHERE order_id = ANY($1)`.",
        None,
    ),
    (
        Theme::Performance,
        "`Regex::new` is compiled on every call. Hoist it into a `LazyLock` static.",
        None,
    ),
    (
        Theme::Performance,
        "Unnecessary `.clone()` of the whole vector; borrow it instead.",
        None,
    ),
    (
        Theme::Performance,
        "Using `Array.includes` inside `filter` makes this O(n*m). Converting `allowedIds` to a `Set` first would make lookups O(1) and improve performance for large lists.",
        None,
    ),
    (
        Theme::Performance,
        "`sorted()` on every request for a list that never changes is wasteful, cache it at startup.",
        None,
    ),
    (
        Theme::Performance,
        "This re-renders the whole table on every keystroke. Memoize `rows`.",
        Some("const rows = useMemo(() => buildRows(data), [data]);"),
    ),
    // testing
    (
        Theme::Testing,
        "Can you add a unit test for the empty-input case?",
        None,
    ),
    (
        Theme::Testing,
        "This test is flaky: it depends on wall-clock time. Inject a fake clock.",
        None,
    ),
    (
        Theme::Testing,
        "_🛠️ Refactor suggestion_\n\n**Add test coverage for the retry path.**\n\nNone of the new tests exercise `retryWithBackoff` when the server returns 503. Consider adding a test with a mocked transport.",
        None,
    ),
    (
        Theme::Testing,
        "The assertion only checks that no exception was thrown; assert on the returned value too.",
        None,
    ),
    (
        Theme::Testing,
        "Snapshot needs updating after the header change (`cargo insta review`).",
        None,
    ),
    (
        Theme::Testing,
        "please use a pytest fixture instead of setting up the db in each test",
        None,
    ),
    // security
    (
        Theme::Security,
        "_⚠️ Potential issue_\n\n**SQL injection: `name` is interpolated into the query string.**\n\nUse a parameterized query (`db.query('SELECT * FROM users WHERE name = $1', [name])`).",
        None,
    ),
    (
        Theme::Security,
        "Don't log the raw token, this leaks credentials into our log aggregator.",
        None,
    ),
    (
        Theme::Security,
        "`innerHTML` with user-controlled content is an XSS vector; use `textContent`.",
        None,
    ),
    (
        Theme::Security,
        "Compare the HMAC with a constant-time comparison, otherwise this is open to timing attacks.",
        None,
    ),
    (
        Theme::Security,
        "The API key is hardcoded here and will end up in the repo. Read it from the environment or the secret manager.",
        None,
    ),
    (
        Theme::Security,
        "path comes from the request: `../` lets an attacker read arbitrary files (path traversal).",
        None,
    ),
    (
        Theme::Security,
        "**Reject path traversal in `name` before joining paths.**\n\nA crafted value like `../../x` escapes the root. Validate the id format.",
        None,
    ),
    (
        Theme::Security,
        "needs an auth check, anyone can hit this endpoint",
        None,
    ),
    // documentation
    (
        Theme::Documentation,
        "Please add a doc comment explaining what `ttl` is measured in (seconds? ms?).",
        None,
    ),
    (
        Theme::Documentation,
        "README still says `npm run start`, but the script was renamed to `dev`.",
        None,
    ),
    (
        Theme::Documentation,
        "The docstring says this returns `None` on failure, but it raises `ValueError` now. Update the docstring.",
        None,
    ),
    (
        Theme::Documentation,
        "typo: 'recieve' -> 'receive' in the comment above",
        None,
    ),
    (
        Theme::Documentation,
        "_🧹 Nitpick_\n\n**Document the new `--dry-run` flag in the CLI help text and CHANGELOG.**",
        None,
    ),
    (
        Theme::Documentation,
        "The `# Errors` section of the rustdoc is missing the timeout case.",
        None,
    ),
    // style
    (Theme::Style, "nit: trailing whitespace", None),
    (
        Theme::Style,
        "Run `cargo fmt`; the indentation in this match is off.",
        None,
    ),
    (
        Theme::Style,
        "This nesting is getting deep; an early return for the error case would read better.",
        None,
    ),
    (
        Theme::Style,
        "Unused import `HashMap` (clippy will flag this).",
        None,
    ),
    (
        Theme::Style,
        "Prefer `if let Some(x)` over `match` with a `None => {}` arm; it's the idiomatic form.",
        None,
    ),
    (
        Theme::Style,
        "Mixed tabs and spaces in this file, please run prettier.",
        None,
    ),
    // architecture
    (
        Theme::Architecture,
        "_🛠️ Refactor suggestion_\n\n**Move the pricing rules out of the HTTP handler.**\n\nThe handler now mixes request parsing, business logic and persistence. Extracting a `PricingService` would keep the layers separate and make the rules testable without HTTP.",
        None,
    ),
    (
        Theme::Architecture,
        "This module now depends on `ui/`, which creates a circular dependency between core and ui.",
        None,
    ),
    (
        Theme::Architecture,
        "The god object `AppState` keeps growing; can we split it by responsibility?",
        None,
    ),
    (
        Theme::Architecture,
        "Tight coupling between the parser and the database layer here. Consider introducing a trait so the parser doesn't know about Postgres.",
        None,
    ),
    (
        Theme::Architecture,
        "Same logic is duplicated in three controllers; it belongs in one place.",
        None,
    ),
    (
        Theme::Architecture,
        "Why does the CLI layer talk to the HTTP client directly? That bypasses the abstraction we built in `forge/`.",
        None,
    ),
    // concurrency
    (
        Theme::Concurrency,
        "_⚠️ Potential issue_\n\n**Race condition on `cache`.**\n\nTwo requests can both miss and both insert; the check-then-set isn't atomic. Use `entry()` or hold the lock across both operations.",
        None,
    ),
    (
        Theme::Concurrency,
        "Holding the `MutexGuard` across `.await` can deadlock (and makes the future `!Send`).",
        None,
    ),
    (
        Theme::Concurrency,
        "`counter` is shared between goroutines without synchronization.",
        None,
    ),
    (
        Theme::Concurrency,
        "This isn't thread-safe: `HashMap` behind an `Rc` is shared across worker threads.",
        None,
    ),
    (
        Theme::Concurrency,
        "Two pods can run this migration simultaneously; take an advisory lock first.",
        None,
    ),
    (
        Theme::Concurrency,
        "These three awaits run sequentially even though they are independent. Use `Promise.all` to run them concurrently.",
        None,
    ),
    // resource-management
    (
        Theme::ResourceManagement,
        "The file handle is never closed if `parse` throws. Use a `with` block.",
        None,
    ),
    (
        Theme::ResourceManagement,
        "`setInterval` is never cleared when the component unmounts, so it leaks.",
        None,
    ),
    (
        Theme::ResourceManagement,
        "Connections from the pool are not released on the error path; under load we'll exhaust the pool.",
        None,
    ),
    (
        Theme::ResourceManagement,
        "Use `defer resp.Body.Close()` right after the error check, otherwise the body leaks.",
        None,
    ),
    (
        Theme::ResourceManagement,
        "This temp dir is never cleaned up; use `tempfile::TempDir` so it's removed on drop.",
        None,
    ),
    (
        Theme::ResourceManagement,
        "The event listener added in `mount` is never removed, leaking a closure per re-mount.",
        None,
    ),
    // logging
    (
        Theme::Logging,
        "Please log the underlying error here before returning 500, otherwise we have nothing to debug with.",
        None,
    ),
    (
        Theme::Logging,
        "Leftover `console.log`, remove before merging.",
        None,
    ),
    (
        Theme::Logging,
        "This runs per request at `info` level and will flood the logs; `debug` is more appropriate.",
        None,
    ),
    (
        Theme::Logging,
        "Use `tracing::warn!` instead of `eprintln!` so it ends up in the structured logs.",
        None,
    ),
    (
        Theme::Logging,
        "Missing log line when the retry gives up.",
        None,
    ),
    (
        Theme::Logging,
        "use the request-scoped logger so the request id is attached",
        None,
    ),
    // other
    (Theme::Other, "LGTM 👍", None),
    (
        Theme::Other,
        "Why was this file moved? Was that intentional?",
        None,
    ),
    (Theme::Other, "Thanks! Can you rebase on main?", None),
    (
        Theme::Other,
        "This change looks unrelated to the PR, maybe split it into a separate one?",
        None,
    ),
    (
        Theme::Other,
        "Is this behaviour intended? I thought we agreed on the opposite last week.",
        None,
    ),
    (
        Theme::Other,
        "Could you add a screenshot of the new settings page?",
        None,
    ),
];

#[test]
fn classifies_every_realistic_comment() {
    let failures: Vec<String> = CASES
        .iter()
        .filter_map(|&(expected, comment, suggestion)| {
            let got = classify_theme(comment, suggestion);
            (got != expected).then(|| {
                format!(
                    "expected {expected}, got {got} (scores {:?}) for {comment:?}",
                    theme_scores(comment, suggestion)
                )
            })
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The four `src/auth/` threads of the demo scenario
/// (`examples/scenarios/demo`): shell error paths in an authentication
/// module, whose words (`password`, `token`, `logged in`) must not
/// outweigh what they ask for (stop when a command fails).
const DEMO_AUTH: &[(&str, &str)] = &[
    (
        "The result of `password_check` is ignored: a wrong password still opens a session. Stop on failure:\n\n```suggestion\n    password_check \"$1\" \"$2\" || return 1\n```",
        "    password_check \"$1\" \"$2\" || return 1",
    ),
    (
        "If the session file cannot be written (no `$SESSION_DIR`, a full disk), the id is still printed and the caller believes the user is logged in.\n\n```suggestion\n    echo \"$1\" > \"$SESSION_DIR/$id\" || return 1\n```",
        "    echo \"$1\" > \"$SESSION_DIR/$id\" || return 1",
    ),
    (
        "If `/dev/urandom` cannot be read, `seed` is empty and every token is `user-`: a guessable session id. Stop there; a fallback can come later:\n\n```suggestion\n    seed=$(od -An -N4 -tu4 /dev/urandom) || return 1\n    # TODO: fall back to another entropy source when /dev/urandom is missing\n```",
        "    seed=$(od -An -N4 -tu4 /dev/urandom) || return 1\n    # TODO: fall back to another entropy source when /dev/urandom is missing",
    ),
    (
        "When `$AUTH_DB` cannot be read, `grep` fails, `expected` is empty, and an unknown user with an empty password gets in. Fail closed:\n\n```suggestion\n    [ -r \"$AUTH_DB\" ] || { echo \"password_check: cannot read $AUTH_DB\" >&2; return 2; }\n    expected=$(grep \"^$1:\" \"$AUTH_DB\" | cut -d: -f2)\n    [ -n \"$expected\" ] && [ \"$2\" = \"$expected\" ]\n```",
        "    [ -r \"$AUTH_DB\" ] || { echo \"password_check: cannot read $AUTH_DB\" >&2; return 2; }\n    expected=$(grep \"^$1:\" \"$AUTH_DB\" | cut -d: -f2)\n    [ -n \"$expected\" ] && [ \"$2\" = \"$expected\" ]",
    ),
];

#[test]
fn the_demo_auth_threads_are_error_handling_with_or_without_the_suggestion() {
    for &(comment, suggestion) in DEMO_AUTH {
        for s in [Some(suggestion), None] {
            assert_eq!(
                classify_theme(comment, s),
                Theme::ErrorHandling,
                "scores {:?} for {comment:?}",
                theme_scores(comment, s)
            );
        }
    }
}

#[test]
fn shell_failure_checks_are_error_handling() {
    for code in [
        "cp \"$src\" \"$dst\" || exit 1",
        "cd \"$dir\" || return",
        "set -e",
    ] {
        assert_eq!(
            classify_theme("", Some(code)),
            Theme::ErrorHandling,
            "{code}"
        );
    }
}

#[test]
fn table_covers_every_theme_at_least_four_times() {
    assert!(CASES.len() >= 60, "only {} cases", CASES.len());
    for theme in Theme::ALL {
        let n = CASES.iter().filter(|c| c.0 == theme).count();
        assert!(n >= 4, "{theme} has only {n} cases");
    }
}

#[test]
fn classification_is_case_insensitive() {
    for &(expected, comment, suggestion) in CASES {
        let upper = comment.to_uppercase();
        let upper_suggestion = suggestion.map(str::to_uppercase);
        assert_eq!(
            classify_theme(&upper, upper_suggestion.as_deref()),
            expected,
            "{upper:?}"
        );
    }
}

#[test]
fn classification_is_deterministic() {
    let first: Vec<Theme> = CASES
        .iter()
        .map(|&(_, c, s)| classify_theme(c, s))
        .collect();
    for _ in 0..3 {
        let again: Vec<Theme> = CASES
            .iter()
            .rev()
            .map(|&(_, c, s)| classify_theme(c, s))
            .rev()
            .collect();
        assert_eq!(first, again);
    }
}

#[test]
fn words_match_at_boundaries_not_inside_other_words() {
    // `log` must not match `login`, `catalog` or `blog`.
    assert_eq!(
        classify_theme(
            "The login and catalog pages link to the blog in `src/auth/login.ts`.",
            None
        ),
        Theme::Other
    );
    assert_eq!(classify_theme("log this", None), Theme::Logging);
}

#[test]
fn suggestion_code_alone_gives_signals() {
    assert_eq!(
        classify_theme(
            "Consider this instead:",
            Some("let guard = state.lock().unwrap();\nlet counter = Arc::new(Mutex::new(0));")
        ),
        Theme::Concurrency
    );
    assert_eq!(
        classify_theme(
            "Suggested change:",
            Some("#[test]\nfn parses_empty() {\n    assert_eq!(parse(\"\"), None);\n}")
        ),
        Theme::Testing
    );
    assert_eq!(
        classify_theme("See below.", Some("log::warn!(\"retrying {attempt}\");")),
        Theme::Logging
    );
    assert_eq!(
        classify_theme(
            "Alternatively:",
            Some("let f = File::open(p).expect(\"open\");")
        ),
        Theme::ErrorHandling
    );
    // Without the suggestion these say nothing.
    assert_eq!(classify_theme("Consider this instead:", None), Theme::Other);
}

#[test]
fn fenced_code_in_the_comment_is_code_not_prose() {
    let body =
        "Suggested change:\n\n```suggestion\nlet conn = pool.get().await?;\ndrop(conn);\n```\n";
    // `drop(` counts as a code signal, the words in the fence do not.
    assert_eq!(classify_theme(body, None), Theme::ResourceManagement);
    let scores = theme_scores(body, None);
    assert_eq!(scores[Theme::Performance.index()], 0, "`pool` is not prose");
}

#[test]
fn collapsed_details_and_links_are_ignored() {
    let body = "_⚠️ Potential issue_\n\n**Propagate the error instead of discarding it.**\n\n<details>\n<summary>📝 Committable suggestion</summary>\n\n‼️ **IMPORTANT**\nCarefully review the code before committing. Ensure that it accurately replaces the highlighted code, contains no missing lines, and has no issues with indentation. Thoroughly test & benchmark the code.\n\n</details>\n\n<!-- fingerprinting:phantom:triton:style -->\n[Learn more](https://docs.example.com/style/logging)";
    assert_eq!(classify_theme(body, None), Theme::ErrorHandling);
    let scores = theme_scores(body, None);
    assert_eq!(scores[Theme::Style.index()], 0);
    assert_eq!(scores[Theme::Testing.index()], 0);
    assert_eq!(scores[Theme::Documentation.index()], 0);
}

#[test]
fn a_single_weak_word_is_other() {
    assert_eq!(classify_theme("Can you explain this?", None), Theme::Other);
    assert_eq!(classify_theme("", None), Theme::Other);
    assert_eq!(classify_theme("", Some("")), Theme::Other);
}

#[test]
fn ties_follow_the_fixed_order() {
    // `secret` (security, 3) against `log` (logging, 3): security comes first.
    assert_eq!(classify_theme("secret log", None), Theme::Security);
    assert_eq!(classify_theme("log secret", None), Theme::Security);
    // `test` (testing, 3) against `naming` (naming, 3): testing comes first.
    assert_eq!(classify_theme("naming test", None), Theme::Testing);
    let mut seen = TIE_BREAK.to_vec();
    seen.sort();
    assert_eq!(seen, Theme::ALL.to_vec(), "every theme appears once");
}

#[test]
fn one_repeated_word_counts_at_most_twice() {
    let repeated = "log ".repeat(50);
    assert_eq!(
        theme_scores(&repeated, None)[Theme::Logging.index()],
        3 * HEADLINE * MAX_MATCHES_PER_RULE
    );
}

/// The traps of issue 18: a word in another sense is not the theme.
#[test]
fn word_senses_are_guarded() {
    let cases = [
        // a discussion thread, not a thread of execution
        ("Please reply in this thread once the threads above are resolved.", Theme::Other),
        // a session, not a log
        (
            "The user stays logged in after the password change; revoke the session token.",
            Theme::Security,
        ),
        // the DOM, not documentation
        (
            "`document.querySelector` runs before the DOM is ready, so it returns `null` and the handler crashes.",
            Theme::ErrorHandling,
        ),
        // fault injection in a test plan, not an injection attack
        (
            "Add a test that uses fault injection to simulate a full disk.",
            Theme::Testing,
        ),
        // a runtime assert, not a test
        (
            "`assert!(len > 0)` panics on empty input from the network; return an error instead.",
            Theme::ErrorHandling,
        ),
    ];
    assert_themes(cases);
}

#[test]
fn string_literals_in_code_spans_say_nothing() {
    let comment = "Rename the metric `'error_tracking'` to something shorter.";
    assert_eq!(classify_theme(comment, None), Theme::Naming);
    assert_eq!(theme_scores(comment, None)[Theme::ErrorHandling.index()], 0);
}

#[test]
fn compound_identifiers_are_read_inside() {
    assert_themes([
        (
            "Careful: `RWMutex` is held while `RLocking` again here.",
            Theme::Concurrency,
        ),
        (
            "A `TypedDict` would make these keys checked.",
            Theme::TypeSafety,
        ),
        ("markdownlint flags this line (MD013).", Theme::Style),
    ]);
}

#[test]
fn chinese_japanese_korean_and_russian_comments_get_themes() {
    assert_themes([
        (
            "这里缺少错误处理，读取失败时会直接崩溃。",
            Theme::ErrorHandling,
        ),
        ("この関数にテストを追加してください。", Theme::Testing),
        ("이 변수 이름이 너무 모호합니다.", Theme::Naming),
        ("удали лишние пробелы", Theme::Style),
    ]);
}

#[test]
fn more_languages_get_the_common_themes() {
    assert_themes([
        ("这里的注释写错了", Theme::Documentation),
        ("这段代码有点冗余，可以简化一下", Theme::Style),
        ("建议把这部分逻辑抽离出来复用", Theme::Architecture),
        ("このコメントは古いです", Theme::Documentation),
        ("この変数名を見直してください", Theme::Naming),
        ("오타가 있습니다", Theme::Documentation),
        ("불필요한 코드는 삭제해 주세요", Theme::Style),
        ("Опечатка в слове", Theme::Documentation),
        ("Falta documentar este parámetro.", Theme::Documentation),
        ("Bitte den Kommentar aktualisieren.", Theme::Documentation),
        ("Faltan pruebas para este caso.", Theme::Testing),
        ("Isso pode gerar um problema de segurança.", Theme::Security),
    ]);
}

#[test]
fn everyday_review_wording_for_text_layout_and_structure() {
    assert_themes([
        ("This sentence is hard to parse.", Theme::Documentation),
        ("Missing period at the end.", Theme::Documentation),
        ("Please reword this paragraph.", Theme::Documentation),
        ("Can we make this a constant?", Theme::Style),
        ("I'd inline this variable.", Theme::Style),
        ("Wrap at 80 columns please.", Theme::Style),
        (
            "This could be a `match` instead of the if/else chain.",
            Theme::Style,
        ),
        ("Extract this into a function.", Theme::Architecture),
        ("Can this be private?", Theme::Architecture),
    ]);
}

#[test]
fn a_suggestion_that_only_rewrites_prose_is_documentation() {
    let only_prose =
        "```suggestion\n/// Returns the parsed config, or an error when the file is missing.\n```";
    assert_eq!(classify_theme(only_prose, None), Theme::Documentation);
    let only_code = "```suggestion\nlet config = parse(&text).unwrap_or_default();\n```";
    assert_ne!(classify_theme(only_code, None), Theme::Documentation);
}

#[test]
fn sed_and_arrow_corrections_are_documentation() {
    assert_eq!(
        classify_theme("s/recieve/receive/", None),
        Theme::Documentation
    );
    assert_eq!(
        classify_theme("recieve -> receive", None),
        Theme::Documentation
    );
    // A path is no correction.
    assert_eq!(classify_theme("see src/auth/login.ts", None), Theme::Other);
    // The words corrected are the text's, not the reviewer's: `log`
    // here is a word of the documentation, not a log statement.
    assert_eq!(
        classify_theme("Please write log -> `log` in the guide.", None),
        Theme::Documentation
    );
}

#[test]
fn code_fenced_inside_a_quote_is_code() {
    let quoted = "I thought this was the idiom:\n\n> ```kotlin\n> data?.let {\n>     // run if not null, validate nothing\n> }\n> ```";
    let parsed = Parsed::new(quoted, None);
    assert!(parsed.code.contains("data?.let"), "{:?}", parsed.code);
    assert!(
        parsed
            .sentences
            .iter()
            .all(|(s, _)| !s.contains("validate")),
        "{:?}",
        parsed.sentences
    );
}

#[test]
fn words_are_cut_where_latin_meets_cjk_script() {
    assert_eq!(
        words("optional을 써주시는게"),
        ["optional", "을", "써주시는게"]
    );
    assert_eq!(words("logを出す"), ["log", "を出す"]);
    // Latin letters with diacritics stay one word.
    assert_eq!(words("validação"), ["validação"]);
}

#[test]
fn approvals_and_process_remarks_are_other() {
    assert_themes(
        [
            "LGTM, thanks! Nice work on the atomics.",
            "Thank you very much! These type annotations are very useful!",
            "Please rebase on main, there are merge conflicts.",
            "This PR has several unrelated changes; please split them into separate PRs.",
        ]
        .map(|comment| (comment, Theme::Other)),
    );
    assert_eq!(classify_theme("Good catch, thanks!", None), Theme::Other);
    // An approval that still asks for something is not only an approval.
    assert_eq!(
        classify_theme(
            "LGTM, but please rename `tmp` to something descriptive.",
            None
        ),
        Theme::Naming
    );
}

#[test]
fn a_bot_title_and_a_request_weigh_more_than_an_aside() {
    // The title asks for validation; the body mentions an error on the way.
    let bot = "_⚠️ Potential issue_ | _🟡 Minor_\n\n**Reject negative timeouts.**\n\nOtherwise the request fails with an error later.";
    assert_eq!(classify_theme(bot, None), Theme::Validation);
    // The request is the second sentence.
    let human = "The docstring says this returns `None` on failure. Update the docstring.";
    assert_eq!(classify_theme(human, None), Theme::Documentation);
}

#[test]
fn comments_on_documentation_files_lean_to_documentation() {
    let comment = "This sentence is hard to follow, maybe split it.";
    assert_eq!(
        classify_theme_at(comment, None, Some("docs/guide.md")),
        Theme::Documentation
    );
    assert!(is_doc_file("README.md"));
    assert!(is_doc_file("docs/api/index.html"));
    assert!(!is_doc_file("src/docstring.rs"));
    // A strong theme still wins on a documentation file.
    assert_eq!(
        classify_theme_at(
            "Hardcoded password in the example config.",
            None,
            Some("README.md")
        ),
        Theme::Security
    );
}

#[test]
fn display_from_str_and_serde_agree() {
    for theme in Theme::ALL {
        let s = theme.to_string();
        assert_eq!(s.parse::<Theme>(), Ok(theme));
        let json = serde_json::to_string(&theme).unwrap();
        assert_eq!(json, format!("\"{s}\""));
        assert_eq!(serde_json::from_str::<Theme>(&json).unwrap(), theme);
    }
    assert_eq!(
        serde_json::to_string(&Theme::ResourceManagement).unwrap(),
        "\"resource-management\""
    );
}

#[test]
fn from_str_is_lenient_about_case_and_separators() {
    assert_eq!(" Error Handling ".parse(), Ok(Theme::ErrorHandling));
    assert_eq!("type_safety".parse(), Ok(Theme::TypeSafety));
    assert_eq!("RESOURCE-MANAGEMENT".parse(), Ok(Theme::ResourceManagement));
    let err = "bugs".parse::<Theme>().unwrap_err();
    assert_eq!(err.value, "bugs");
    assert!(err.to_string().starts_with("unknown theme `bugs`"));
    assert!(serde_json::from_str::<Theme>("\"Error Handling\"").is_err());
}

#[test]
fn theme_index_matches_all_order() {
    for (i, theme) in Theme::ALL.into_iter().enumerate() {
        assert_eq!(theme.index(), i);
    }
}

/// Where a CommonMark parser (pulldown-cmark 0.12) splits a comment otherwise
/// than this line splitter does, the splitter's reading is kept (issue 29.6):
/// these cases pin it, so a swap of parsers cannot change a theme unseen.
#[test]
fn splits_a_commonmark_parser_would_change() {
    // A lone backtick opens code to the end of the line (CommonMark: a literal `).
    let lone = Parsed::new("Please handle `unwrap here", None);
    assert!(lone.code.contains("unwrap here"), "{}", lone.code);
    // Any fence line closes an open fence (CommonMark: only as long a fence of
    // the same character), so the prose after it is read.
    let short = Parsed::new("````\nlet x = 1;\n```\nhandle the error", None);
    assert!(
        short
            .sentences
            .iter()
            .any(|(s, _)| s.trim() == "handle the error"),
        "{:?}",
        short.sentences
    );
    // A line indented four spaces is prose (CommonMark: an indented code block).
    let indented = Parsed::new("Look:\n\n    handle the error", None);
    assert!(
        indented
            .sentences
            .iter()
            .any(|(s, _)| s.trim() == "handle the error"),
        "{:?}",
        indented.sentences
    );
}
