//! The dashboard in a real headless Chromium (one launch): a run paused
//! for approval is opened from the printed URL, a comment holding
//! `<script>` and `<img onerror>` shows as text and runs nothing, one
//! decision is changed and one reply edited, the run is approved and
//! resumed from the page, and the page follows it to convergence. The
//! emulator's final state then shows the edited reply posted and the
//! changed decision is what the honesty gate checked.
//!
//! The runs list, the paused and the finished page are each laid out at a
//! laptop's width (1366×768) and a phone's (390×844), checked for
//! horizontal overflow and kept as screenshots (their paths are printed).

use std::path::{Path, PathBuf};
use std::time::Duration;

use fantoccini::Locator;
use shepherd_engine::RunStatus;

use crate::browser::{Driver, Session};
use crate::common::*;

/// Where the screenshots go: `$SHEPHERD_SCREENSHOTS`, else
/// `target/tmp/serve-screenshots/`.
fn screenshots() -> PathBuf {
    let dir = std::env::var_os("SHEPHERD_SCREENSHOTS")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("serve-screenshots"));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The widths the pages are checked at: a laptop's and a phone's.
const WIDTHS: [(&str, u32, u32, bool); 2] =
    [("laptop", 1366, 768, false), ("phone", 390, 844, true)];

/// The elements wider than the viewport, innermost first (to say what
/// overflows when the page does).
const OVERFLOWING: &str = "const w = document.documentElement.clientWidth; \
    return Array.from(document.querySelectorAll('main *')) \
    .filter(e => e.getBoundingClientRect().right > w + 1) \
    .reverse().slice(0, 8) \
    .map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right)) \
    .join('\\n');";

/// At each of [`WIDTHS`]: the page does not overflow horizontally, and a
/// full-page screenshot `NAME-WIDTH.png`; then back to the laptop's.
async fn at_each_width(s: &Session, shots: &Path, name: &str) {
    for (label, width, height, mobile) in WIDTHS {
        s.viewport(width, height, mobile).await;
        s.screenshot(shots, &format!("{name}-{label}.png")).await;
        // A phone's browser widens its layout viewport (`innerWidth`) to
        // a page that overflows: compare with the device's width too.
        let (page, view) = s.widths().await;
        assert!(
            page <= view && page <= u64::from(width),
            "{name} at {label} width: the page is {page} px wide in a {view} px viewport \
             ({width} px device)\n{}",
            s.js(OVERFLOWING).await
        );
    }
    s.viewport(1366, 768, false).await;
}

/// `window.__pwned`, which the comment's markup would set if it ran.
async fn pwned(s: &Session) -> serde_json::Value {
    s.js("return window.__pwned === undefined ? null : window.__pwned;")
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approver_edits_changes_and_approves_in_a_real_browser() {
    let driver = Driver::start();
    let p = paused().await;

    let script_item = p.thread_with("<script>");
    let pending = p.pending();
    // Two other reply-only items: one gets a new decision, one a new reply.
    // (The changed one a review thread, so that resolving it means something.)
    let others: Vec<&String> = pending.iter().filter(|i| **i != script_item).collect();
    let change = (*others
        .iter()
        .find(|i| i.starts_with("PRRT_"))
        .expect("a pending review thread"))
    .clone();
    let edit = (*others
        .iter()
        .find(|i| **i != &change)
        .expect("another pending item"))
    .clone();
    let change_reply = "Reviewed: this does not apply to the code on this branch.";
    let edit_reply = "Edited in the browser: a maintainer decides this one.";
    let shots = screenshots();
    let run_id = p.run_id.clone();

    let s = driver.session().await;
    let c = &s.client;

    // The printed URL: the secret becomes a cookie, the page is the runs list.
    c.goto(&p.server.url()).await.unwrap();
    let at = c.current_url().await.unwrap();
    assert!(
        !at.as_str().contains("token="),
        "the secret left the URL: {at}"
    );
    assert_eq!(at.path(), "/");
    let row = format!("tr[data-run=\"{run_id}\"]");
    s.wait_for(&row, 10).await;
    assert_eq!(s.text(&format!("{row} [data-status]")).await, "paused");
    at_each_width(&s, &shots, "runs").await;

    c.find(Locator::Css(&format!("{row} a")))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    s.wait_for("#approval", 10).await;
    assert_eq!(
        c.current_url().await.unwrap().path(),
        format!("/runs/{run_id}")
    );
    s.viewport(1366, 768, false).await;

    // What waits for a decision comes first, in both tables.
    let pending = s
        .js("return Array.from(document.querySelectorAll('#approval tr[data-item]')).map(r => r.hasAttribute('data-pending'));")
        .await;
    let pending: Vec<bool> = serde_json::from_value(pending).unwrap();
    assert!(
        pending.first() == Some(&true) && pending.contains(&false),
        "{pending:?}"
    );
    assert!(
        pending.windows(2).all(|w| w[0] || !w[1]),
        "pending rows after decided ones: {pending:?}"
    );
    let standings = s
        .js("return Array.from(document.querySelectorAll('#threads tr[data-standing]')).map(r => r.dataset.standing);")
        .await;
    let standings: Vec<String> = serde_json::from_value(standings).unwrap();
    assert_eq!(
        standings.first().map(String::as_str),
        Some("decision"),
        "{standings:?}"
    );
    // Top-level items by the names people use.
    let text = s.text("main").await;
    for label in ["review summary", "PR comment"] {
        assert!(text.contains(label), "no {label:?} on the page");
    }
    for raw in ["review-body", "issue-comment"] {
        assert!(!text.contains(raw), "{raw:?} on the page");
    }
    // The code of login.sh:5 around its line, and its suggestion as a diff.
    let suggested = p.thread_with("The result of `password_check` is ignored");
    let row = format!("#approval tr[data-item=\"{suggested}\"]");
    let marked = s.text(&format!("{row} .code tr.mark")).await;
    assert!(marked.contains("password_check \"$1\" \"$2\""), "{marked}");
    let removed = s.text(&format!("{row} .suggestion tr.del")).await;
    assert!(
        removed.contains("password_check \"$1\" \"$2\""),
        "{removed}"
    );
    assert!(!removed.contains("return 1"), "{removed}");
    let added = s.text(&format!("{row} .suggestion tr.add")).await;
    assert!(
        added.contains("password_check \"$1\" \"$2\" || return 1"),
        "{added}"
    );

    at_each_width(&s, &shots, "run-paused").await;

    // Markup in a comment is text: shown, no element made of it, nothing ran.
    let excerpt_css = format!("#approval tr[data-item=\"{script_item}\"] td.excerpt");
    let excerpt = c.find(Locator::Css(&excerpt_css)).await.unwrap();
    assert!(
        excerpt.is_displayed().await.unwrap(),
        "the excerpt is visible"
    );
    let text = excerpt.text().await.unwrap();
    assert!(
        text.contains("<script>window.__pwned = 1</script>"),
        "the script as text: {text}"
    );
    assert!(
        text.contains("<img src=x onerror=\"window.__pwned = 2\">"),
        "the img as text: {text}"
    );
    let made = excerpt.find_all(Locator::Css("script, img")).await.unwrap();
    assert!(
        made.is_empty(),
        "elements made of the comment: {}",
        made.len()
    );
    let everywhere = s
        .js("return document.querySelectorAll('main script, main img').length;")
        .await;
    assert_eq!(
        everywhere, 0,
        "no script or img element in the page's content"
    );
    assert_eq!(
        pwned(&s).await,
        serde_json::Value::Null,
        "the comment's script ran"
    );

    // A needs-human draft nobody edits is held, and the page says so.
    let held = s
        .text(&format!("#approval tr[data-item=\"{script_item}\"] .held"))
        .await;
    assert!(held.contains("not posted"), "{held}");

    // Change one decision (with the reply it needs) and edit one reply.
    let change_row = format!("#approval tr[data-item=\"{change}\"]");
    c.find(Locator::Css(&format!("{change_row} select")))
        .await
        .unwrap()
        .select_by_value("invalid")
        .await
        .unwrap();
    let textarea = c
        .find(Locator::Css(&format!("{change_row} textarea")))
        .await
        .unwrap();
    textarea.clear().await.unwrap();
    textarea.send_keys(change_reply).await.unwrap();
    let textarea = c
        .find(Locator::Css(&format!(
            "#approval tr[data-item=\"{edit}\"] textarea"
        )))
        .await
        .unwrap();
    textarea.clear().await.unwrap();
    textarea.send_keys(edit_reply).await.unwrap();
    // Neither is held any more, and the page stops saying so.
    for item in [&change, &edit] {
        let note = c
            .find(Locator::Css(&format!(
                "#approval tr[data-item=\"{item}\"] .held"
            )))
            .await
            .unwrap();
        assert!(!note.is_displayed().await.unwrap(), "{item} shown held");
    }
    s.screenshot_of("#approval", &shots, "approval.png").await;

    // Approve and resume: the form posts, the server redirects to the run.
    s.js("window.__before = true; return null;").await;
    c.find(Locator::Css("#approve-resume"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let started = std::time::Instant::now();
    // An error here is the old document going away: still navigating.
    while c
        .execute("return window.__before === true;", vec![])
        .await
        .map_or(true, |v| v == true)
    {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the approval form did not navigate"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    s.wait_for("#live", 10).await;
    let at = c.current_url().await.unwrap();
    let errors = c.find_all(Locator::Css(".error")).await.unwrap();
    let mut refused = Vec::new();
    for e in &errors {
        refused.push(e.text().await.unwrap());
    }
    assert!(
        at.path() == format!("/runs/{run_id}") && refused.is_empty(),
        "the approval was refused: {at}: {refused:?}"
    );
    assert_eq!(p.resumer.count(), 1, "one resume started from the page");

    // From here the page is never reloaded: the live part follows the run.
    s.js("window.__sameDocument = true; return null;").await;
    let converged = c
        .wait()
        .at_most(Duration::from_secs(120))
        .for_element(Locator::Css("#live #status [data-status=\"handed-off\"]"))
        .await;
    if let Err(e) = converged {
        let live = s.text("main").await;
        panic!(
            "the page did not show the run handed off: {e}\n{}",
            &live[..live.len().min(4000)]
        );
    }
    assert_eq!(
        s.js("return window.__sameDocument === true;").await,
        true,
        "the page was reloaded"
    );
    let version = s
        .js("return Number(document.getElementById('live').dataset.version || 0);")
        .await;
    assert!(
        version.as_u64().unwrap_or(0) >= 1,
        "live updates: {version}"
    );
    let edited = s
        .text(&format!("#threads tr[data-item=\"{edit}\"] pre.reply"))
        .await;
    assert!(edited.contains(edit_reply), "the threads table: {edited}");
    // A finished run opens on its outcome: the report first, the
    // approvals it was given folded.
    assert_eq!(
        s.js("return document.querySelector('#live h2').textContent;")
            .await,
        "Report"
    );
    assert_eq!(
        s.js("return document.querySelectorAll('#approval').length === 1 && !document.getElementById('approval').open;")
            .await,
        true,
        "the decided approvals are one folded section"
    );
    let standings = s
        .js("return Array.from(document.querySelectorAll('#threads tr[data-standing]')).map(r => r.dataset.standing);")
        .await;
    let standings: Vec<String> = serde_json::from_value(standings).unwrap();
    let rank = |s: &String| ["decision", "open", "done"].iter().position(|x| x == s);
    assert!(
        standings.windows(2).all(|w| rank(&w[0]) <= rank(&w[1])),
        "{standings:?}"
    );
    assert!(!standings.iter().any(|s| s == "decision"), "{standings:?}");

    // An event with a long payload, in the open (last) round: it wraps in
    // its box instead of widening the page.
    let long = "x".repeat(600);
    {
        let mut store = shepherd_engine::Store::open_in(&p.state_dir()).unwrap();
        let round = store.rounds(&run_id).unwrap().last().unwrap().number;
        store
            .append_event(
                &run_id,
                Some(round),
                "note",
                &serde_json::json!({ "detail": long }),
                shepherd_engine::Timestamp::now(),
            )
            .unwrap();
    }
    c.wait()
        .at_most(Duration::from_secs(10))
        .for_element(Locator::XPath(&format!(
            "//ul[@class='events']//code[contains(., '{long}')]"
        )))
        .await
        .expect("the event shows");
    at_each_width(&s, &shots, "run-finished").await;
    s.screenshot_of("#threads", &shots, "threads.png").await;

    // No dialog opened, and still nothing of the comment ran.
    assert!(c.get_alert_text().await.is_err(), "a dialog opened");
    assert_eq!(
        pwned(&s).await,
        serde_json::Value::Null,
        "the comment's script ran"
    );
    s.close().await;
    eprintln!("screenshots in {}", shots.display());

    // The run the page watched ended: handed off (the builtin agent leaves items for a person).
    let outcome = p.resumer.outcome().await;
    assert_eq!(outcome.status, RunStatus::HandedOff, "{:?}", outcome.reason);

    // The edited reply was posted as typed; the changed decision's reply
    // too, and as `invalid` (resolved after approval) its thread resolved.
    let bodies = p.bodies();
    let posted: Vec<&String> = bodies.iter().filter(|b| b.contains(edit_reply)).collect();
    assert_eq!(posted.len(), 1, "{bodies:#?}");
    assert!(posted[0].contains(&format!("item={edit}")), "{}", posted[0]);
    let changed = p.comments_of(&change);
    assert!(
        changed.iter().any(|c| c.contains(change_reply)),
        "{changed:?}"
    );
    assert!(p.resolved(&change), "an approved `invalid` is resolved");
    // What the page said was held was not posted.
    assert_eq!(
        p.comments_of(&script_item).len(),
        1,
        "the held reply was posted"
    );
    if edit.starts_with("PRRT_") {
        assert!(!p.resolved(&edit), "a needs-human thread stays open");
    }

    // The gate checked the approver's decision.
    let gate: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            p.state_dir()
                .run_dir(&p.run_id)
                .unwrap()
                .join("rounds/1/gate.json"),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(gate["approved"][&change], "invalid", "{gate}");
    assert_eq!(gate["approved"][&edit], "needs-human", "{gate}");
    assert_eq!(gate["verdict"]["passed"], true, "{gate}");
    assert!(
        gate["verdict"]["authorized"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| *a == change.as_str()),
        "{gate}"
    );
}
