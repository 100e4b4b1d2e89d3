//! The dashboard over HTTP: the secret, the checks on state-changing
//! requests, the pages, the artifacts, live updates, and an approval that
//! resumes the run to convergence.

use std::time::Duration;

use shepherd_engine::{ApprovalState, RunStatus};

use crate::common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_without_the_secret_are_refused_and_change_nothing() {
    let p = paused().await;
    let pending = p.pending();
    assert!(!pending.is_empty(), "the run awaits approval");
    let approve = p.url(&format!("/runs/{}/approve", p.run_id));
    let item = pending[0].clone();
    let form = [
        ("action", "approve-resume"),
        ("item-0", item.as_str()),
        ("reply-0", "forged"),
    ];

    let cookie = p.cookie();
    let wrong_cookie = format!("{}=0000", p.server.cookie_name());
    let secret = p.server.secret();
    let mut with_csrf = form.to_vec();
    with_csrf.push(("csrf", secret));
    let reject = p.url(&format!("/runs/{}/reject", p.run_id));
    let resume = p.url(&format!("/runs/{}/resume", p.run_id));
    let wrong = [("csrf", "wrong")];
    for (what, url, headers, form) in [
        ("no cookie, no form secret", &approve, vec![], &form[..]),
        (
            "the form's secret alone (no cookie)",
            &approve,
            vec![],
            &with_csrf[..],
        ),
        // A cross-site form would carry the cookie, were it not SameSite=Strict.
        (
            "the cookie alone",
            &approve,
            vec![("cookie", cookie.as_str())],
            &form[..],
        ),
        (
            "both, from another origin",
            &approve,
            vec![
                ("cookie", cookie.as_str()),
                ("origin", "http://evil.example"),
            ],
            &with_csrf[..],
        ),
        (
            "a wrong secret",
            &approve,
            vec![("cookie", wrong_cookie.as_str())],
            &[("csrf", "0000"), ("action", "approve")][..],
        ),
        // Reject and resume are guarded the same way.
        (
            "reject",
            &reject,
            vec![("cookie", cookie.as_str())],
            &wrong[..],
        ),
        (
            "resume",
            &resume,
            vec![("cookie", cookie.as_str())],
            &wrong[..],
        ),
    ] {
        let mut request = p.client.post(url).form(form);
        for (name, value) in headers {
            request = request.header(name, value);
        }
        assert_eq!(request.send().await.unwrap().status(), 403, "{what}");
    }

    // Nothing changed: every approval still pending, the run paused,
    // nothing resumed, nothing posted.
    assert_eq!(p.pending(), pending);
    assert!(p
        .approvals()
        .iter()
        .all(|a| a.reply_override.is_none() && a.approver.is_none()));
    let store = shepherd_engine::Store::open_in(&p.state_dir()).unwrap();
    assert_eq!(store.get_run(&p.run_id).unwrap().status, RunStatus::Paused);
    assert_eq!(p.resumer.count(), 0);
    assert_eq!(p.marker_replies(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_printed_url_opens_a_session_and_reads_need_it() {
    let p = paused().await;
    // Without the secret: refused.
    let r = p.client.get(p.url("/")).send().await.unwrap();
    assert_eq!(r.status(), 403);
    let r = p.client.get(p.url("/?token=nope")).send().await.unwrap();
    assert_eq!(r.status(), 403);
    // The printed URL: a cookie, and the same page without the secret.
    let r = p.client.get(p.server.url()).send().await.unwrap();
    assert_eq!(r.status(), 303);
    assert_eq!(r.headers()["location"], "/");
    let cookie = r.headers()["set-cookie"].to_str().unwrap().to_owned();
    assert!(cookie.starts_with(&p.cookie()), "{cookie}");
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    // `//host` does not redirect to another site.
    let r = p
        .client
        .get(format!(
            "{}//evil.example/?token={}",
            p.server.base_url(),
            p.server.secret()
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["location"], "/");
    // A Host that is not loopback (DNS rebinding) is refused, secret or not.
    let r = p
        .client
        .get(p.url("/"))
        .header("host", "evil.example")
        .header("cookie", p.cookie())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    // With the cookie: the runs list, with its security headers.
    let r = p.get("/").await;
    assert_eq!(r.status(), 200);
    let csp = r.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        csp.contains("script-src 'self'") && csp.contains("default-src 'none'"),
        "{csp}"
    );
    assert_eq!(r.headers()["x-content-type-options"], "nosniff");
    let body = r.text().await.unwrap();
    assert!(body.contains(&p.run_id), "{body}");
    assert!(
        !body.contains(p.server.secret()),
        "the list carries no secret"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_show_the_run_with_forge_text_escaped() {
    let p = paused().await;
    // The list, and its filters.
    let (_, list) = p.page("/").await;
    assert!(
        list.contains(&p.run_id) && list.contains("paused"),
        "{list}"
    );
    let (_, list) = p.page("/?status=converged").await;
    assert!(
        !list.contains(&format!("data-run=\"{}\"", p.run_id)),
        "{list}"
    );
    let (_, list) = p.page("/?status=paused&repo=demo%2Fauthkit").await;
    assert!(
        list.contains(&format!("data-run=\"{}\"", p.run_id)),
        "{list}"
    );
    let (_, list) = p.page("/?repo=other%2Frepo").await;
    assert!(
        !list.contains(&format!("data-run=\"{}\"", p.run_id)),
        "{list}"
    );

    let (status, page) = p.page(&format!("/runs/{}", p.run_id)).await;
    assert_eq!(status, 200);
    // The approval table: every reply-only item, editable, with its excerpt.
    for id in p.pending() {
        assert!(page.contains("name=\"orig-decision-"), "{page}");
        assert!(
            page.contains(&format!("data-item=\"{id}\"")),
            "{id}: {page}"
        );
    }
    // The markup comment is text: escaped, never a tag.
    assert!(
        page.contains("&lt;script&gt;window.__pwned = 1&lt;/script&gt;"),
        "{page}"
    );
    assert!(page.contains("&lt;img src=x onerror="), "{page}");
    assert!(!page.contains("<script>window"), "{page}");
    assert!(!page.contains("<img"), "{page}");
    // Path and line, a link to the forge, the timeline with durations,
    // the report.
    assert!(page.contains("src/auth/login.sh:2"), "{page}");
    assert!(
        page.contains("/demo/authkit/pull/42#discussion_r"),
        "{page}"
    );
    for stage in ["pr-state", "threads", "triage", "cluster", "approval"] {
        assert!(
            page.contains(&format!("data-stage=\"{stage}\"")),
            "{stage}: {page}"
        );
    }
    assert!(page.contains(" ms<") || page.contains(" s<"), "{page}");
    assert!(page.contains("id=\"report\""), "{page}");
    assert!(page.contains("Approve and resume"), "{page}");

    // The live part alone.
    let (status, live) = p.page(&format!("/runs/{}/live", p.run_id)).await;
    assert_eq!(status, 200);
    assert!(live.starts_with("<div id=\"live\">"), "{live}");
    assert!(live.contains("data-status=\"paused\""), "{live}");

    // Artifacts, as text; nothing outside the run directory or in its worktree.
    let (status, triage) = p
        .page(&format!("/runs/{}/files/rounds/1/triage.json", p.run_id))
        .await;
    assert_eq!(status, 200);
    assert!(triage.contains("needs-human"), "{triage}");
    let (status, threads) = p
        .page(&format!("/runs/{}/files/rounds/1/threads.json", p.run_id))
        .await;
    assert_eq!(status, 200);
    assert!(threads.contains("&lt;script&gt;"), "{threads}");
    for bad in [
        "files/worktree/README.md",
        "files/..%2F..%2Fstate.db",
        "files/rounds/1/..%2F..%2Frun.json",
        "files/.hidden",
        "files/rounds/x/triage.json",
    ] {
        let (status, _) = p.page(&format!("/runs/{}/{bad}", p.run_id)).await;
        assert_eq!(status, 404, "{bad}");
    }
    let (status, _) = p.page("/runs/no-such-run").await;
    assert_eq!(status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_updates_say_when_a_run_changes() {
    let p = paused().await;
    let r = p.get(&format!("/runs/{}/events", p.run_id)).await;
    assert_eq!(r.status(), 200);
    assert!(r.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/event-stream"));
    let mut r = r;
    let mut seen = String::new();
    let first = tokio::time::timeout(Duration::from_secs(5), r.chunk())
        .await
        .expect("a first event")
        .unwrap()
        .unwrap();
    seen.push_str(&String::from_utf8_lossy(&first));
    assert!(seen.contains("event: change"), "{seen}");
    // A change of the run (here: a rejection) is the next event.
    let reject = p.post(&format!("/runs/{}/reject", p.run_id), &[]).await;
    assert_eq!(reject.status(), 303);
    let next = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            let chunk = r.chunk().await.unwrap().unwrap();
            let text = String::from_utf8_lossy(&chunk).into_owned();
            if text.contains("event: change") {
                return text;
            }
        }
    })
    .await
    .expect("an event after the change");
    assert!(next.contains("failed"), "{next}");
    assert!(p.pending().is_empty());
    assert!(p
        .approvals()
        .iter()
        .all(|a| a.state == ApprovalState::Rejected));
    assert_eq!(p.marker_replies(), 0, "a rejection posts nothing");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_decision_without_its_reply_is_refused_as_by_the_cli() {
    let p = paused().await;
    let id = p.thread_with("<script>");
    let r = p
        .post(
            &format!("/runs/{}/approve", p.run_id),
            &[
                ("action", "approve-resume"),
                ("item-0", id.as_str()),
                ("decision-0", "invalid"),
                ("orig-decision-0", "needs-human"),
                ("reply-0", ""),
                ("orig-reply-0", "x"),
            ],
        )
        .await;
    assert_eq!(r.status(), 409);
    let page = r.text().await.unwrap();
    assert!(page.contains("class=\"error\""), "{page}");
    assert!(page.contains(&id) && page.contains("reply"), "{page}");
    // The engine's check refused it before anything was recorded.
    assert!(p.pending().contains(&id));
    assert_eq!(p.resumer.count(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_over_http_resumes_the_run_with_the_edited_reply() {
    let p = paused().await;
    let id = p.thread_with("<script>");
    let reply = "Edited from the dashboard: a maintainer will look at this.";
    let r = p
        .post(
            &format!("/runs/{}/approve", p.run_id),
            &[
                ("action", "approve-resume"),
                ("item-0", id.as_str()),
                ("decision-0", "needs-human"),
                ("orig-decision-0", "needs-human"),
                ("reply-0", reply),
                ("orig-reply-0", "drafted"),
            ],
        )
        .await;
    assert_eq!(r.status(), 303, "{}", r.text().await.unwrap());
    let approval = p.approvals().into_iter().find(|a| a.item_id == id).unwrap();
    assert_eq!(approval.reply_override.as_deref(), Some(reply));
    assert_eq!(approval.approver.as_deref(), Some("tester"));
    assert!(p.pending().is_empty(), "every item approved");
    let outcome = p.resumer.outcome().await;
    assert_eq!(outcome.status, RunStatus::HandedOff, "{:?}", outcome.reason);
    let comments = p.comments_of(&id);
    assert!(comments.iter().any(|c| c.contains(reply)), "{comments:?}");
    // The page says so.
    let (_, page) = p.page(&format!("/runs/{}", p.run_id)).await;
    assert!(page.contains("data-status=\"handed-off\""), "{page}");
    assert!(!page.contains("Approve and resume"), "{page}");
}

/// Issue 28.7: a resume that failed after it started (its words in the
/// run directory's `resume-failed.txt`) is shown on the run's page, as
/// text, while the run can be resumed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resume_that_failed_later_is_shown_on_the_run_page() {
    let p = paused().await;
    let dir = p.state_dir().run_dir(&p.run_id).unwrap();
    let (_, page) = p.page(&format!("/runs/{}", p.run_id)).await;
    assert!(!page.contains("resume-failure"), "{page}");
    std::fs::write(
        dir.join(shepherd_serve::RESUME_FAILURE_FILE),
        "`shepherd resume` exited 1:\nerror: the forge <said> no",
    )
    .unwrap();
    let (status, page) = p.page(&format!("/runs/{}", p.run_id)).await;
    assert_eq!(status, 200);
    assert!(
        page.contains(
            "id=\"resume-failure\" role=\"alert\">The last resume failed:\n`shepherd resume` \
             exited 1:\nerror: the forge &lt;said&gt; no</p>"
        ),
        "{page}"
    );
}

/// The thread whose first comment contains `text`: its id and its row of
/// the approval table (from its `data-item` to the row's end).
fn approval_row<'a>(page: &'a str, id: &str) -> &'a str {
    let start = page
        .find(&format!("<tr class=\"item\" data-item=\"{id}\""))
        .unwrap_or_else(|| panic!("no row of {id}: {page}"));
    let rest = &page[start..];
    &rest[..rest
        .find("</tr>\n")
        .or_else(|| rest.find("<tr class=\"item\""))
        .unwrap_or(rest.len())]
}

/// Issue 28.8: each thread shows the lines around its place, read from
/// the repository the run cloned at the PR head the round saw, the line
/// itself marked; its suggestion block is drawn as the line it removes and
/// the lines it adds. Code and comments are escaped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_thread_shows_its_code_and_its_suggestion_as_a_diff() {
    let p = paused().await;
    let dir = p.state_dir().run_dir(&p.run_id).unwrap();
    let pr_state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("rounds/1/pr-state.json")).unwrap())
            .unwrap();
    let head = pr_state["pr"]["head_sha"].as_str().unwrap().to_owned();
    let (status, page) = p.page(&format!("/runs/{}", p.run_id)).await;
    assert_eq!(status, 200);

    // src/auth/login.sh:5 (the demo): `password_check "$1" "$2"`, with a
    // suggestion that adds `|| return 1`.
    let id = p.thread_with("The result of `password_check` is ignored");
    let row = approval_row(&page, &id);
    assert!(
        row.contains(&format!(
            "src/auth/login.sh at <code>{}</code>",
            &head[..10]
        )),
        "{row}"
    );
    assert!(
        row.contains(
            "<tr class=\"mark\" data-line=\"5\"><td class=\"ln\">5</td><td class=\"src\">    \
             password_check &quot;$1&quot; &quot;$2&quot;</td></tr>"
        ),
        "{row}"
    );
    for (n, text) in [(2, ""), (4, "login() {"), (7, "}")] {
        assert!(
            row.contains(&format!(
                "<tr data-line=\"{n}\"><td class=\"ln\">{n}</td><td class=\"src\">{text}</td></tr>"
            )),
            "line {n}: {row}"
        );
    }
    assert!(row.contains("Suggested change to line 5"), "{row}");
    assert!(
        row.contains(
            "<tr class=\"del\"><td class=\"ln\">5</td><td class=\"sign\">-</td><td class=\"src\">    \
             password_check &quot;$1&quot; &quot;$2&quot;</td></tr>"
        ),
        "{row}"
    );
    assert!(
        row.contains(
            "<tr class=\"add\"><td class=\"ln\"></td><td class=\"sign\">+</td><td class=\"src\">    \
             password_check &quot;$1&quot; &quot;$2&quot; || return 1</td></tr>"
        ),
        "{row}"
    );
    // The prose around it is Markdown: inline code, no fence left.
    assert!(row.contains("<code>password_check</code>"), "{row}");
    assert!(!row.contains("```"), "{row}");

    // The thread whose comment is markup: its code (line 2 of login.sh)
    // shown, its markup text.
    let markup = p.thread_with("<script>");
    let row = approval_row(&page, &markup);
    assert!(row.contains("<tr class=\"mark\" data-line=\"2\">"), "{row}");
    assert!(
        row.contains("&lt;script&gt;window.__pwned = 1&lt;/script&gt;"),
        "{row}"
    );

    // The same in the threads table.
    let threads = &page[page.find("id=\"threads\"").unwrap()..];
    assert!(
        threads.contains(&format!(
            "src/auth/login.sh at <code>{}</code>",
            &head[..10]
        )),
        "{threads}"
    );
    assert!(threads.contains("Suggested change to line 5"), "{threads}");
}

/// Issue 28.9: top-level items are named as a person names them, items
/// that wait for a decision come first, the Why column's backticks are
/// code, and a finished run opens on its outcome, its approvals folded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn decisions_come_first_and_items_are_named_as_people_name_them() {
    let p = paused().await;
    let (_, page) = p.page(&format!("/runs/{}", p.run_id)).await;
    // The engine's reason names the commands in backticks: code.
    let approve = format!("<code>shepherd approve {}</code>", p.run_id);
    assert!(page.contains(&approve), "{page}");
    let (_, list) = p.page("/").await;
    assert!(list.contains(&approve), "{list}");
    assert!(!list.contains("`shepherd approve"), "{list}");
    assert!(page.contains(">review summary<"), "{page}");
    assert!(page.contains(">PR comment<"), "{page}");
    assert!(!page.contains(">review-body<"), "{page}");
    assert!(!page.contains(">issue-comment<"), "{page}");

    // The approval table: pending rows, then the others.
    let approval = &page[page.find("id=\"approval\"").unwrap()..page.find("id=\"live\"").unwrap()];
    let rows: Vec<bool> = approval
        .match_indices("<tr class=\"item\"")
        .map(|(at, _)| {
            let tag = &approval[at..at + approval[at..].find('>').unwrap()];
            tag.contains("data-pending")
        })
        .collect();
    assert!(rows.contains(&true) && rows.contains(&false), "{rows:?}");
    let first_done = rows.iter().position(|pending| !pending).unwrap();
    assert!(
        rows[first_done..].iter().all(|pending| !pending),
        "{rows:?}"
    );
    // The threads table: the same items that wait for a decision first.
    let threads = &page[page.find("id=\"threads\"").unwrap()..];
    let standings: Vec<&str> = threads
        .match_indices("data-standing=\"")
        .map(|(at, m)| {
            let rest = &threads[at + m.len()..];
            &rest[..rest.find('"').unwrap()]
        })
        .collect();
    assert_eq!(standings.first(), Some(&"decision"), "{standings:?}");
    let mut sorted = standings.clone();
    sorted.sort_by_key(|s| ["decision", "open", "done"].iter().position(|x| x == s));
    assert_eq!(standings, sorted);

    // Approved and resumed to its end: the page opens on the outcome.
    let r = p
        .post(
            &format!("/runs/{}/approve", p.run_id),
            &[("action", "approve-resume")],
        )
        .await;
    assert_eq!(r.status(), 303, "{}", r.text().await.unwrap());
    let outcome = p.resumer.outcome().await;
    assert_eq!(outcome.status, RunStatus::HandedOff);
    let (_, page) = p.page(&format!("/runs/{}", p.run_id)).await;
    let at = |needle: &str| {
        page.find(needle)
            .unwrap_or_else(|| panic!("no {needle}: {page}"))
    };
    assert!(at("id=\"report\"") < at("id=\"timeline\""), "{page}");
    assert!(at("id=\"report\"") < at("id=\"threads\""), "{page}");
    // Its approvals, decided, folded below the threads.
    assert!(
        page.contains("<details id=\"approval\" data-key=\"approval\">"),
        "{page}"
    );
    assert!(at("id=\"threads\"") < at("id=\"approval\""), "{page}");
    assert!(page.contains("Approval (round 1): decided"), "{page}");
    // A finished run's threads: none waits for a decision any more.
    assert!(!page.contains("data-standing=\"decision\""), "{page}");

    // A reason that quotes a command: code, on the run and in the list.
    let mut store = shepherd_engine::Store::open_in(&p.state_dir()).unwrap();
    let reason = "`sh verify.sh` failed: see <verify.log>";
    store
        .set_run_status(
            &p.run_id,
            RunStatus::Failed,
            Some(reason),
            shepherd_engine::Timestamp::now(),
        )
        .unwrap();
    let shown = "<code>sh verify.sh</code> failed: see &lt;verify.log&gt;";
    let (_, page) = p.page(&format!("/runs/{}", p.run_id)).await;
    assert!(
        page.contains(&format!("<dd id=\"reason\">{shown}</dd>")),
        "{page}"
    );
    let (_, list) = p.page("/").await;
    assert!(
        list.contains(&format!(
            "<td class=\"reason\" data-label=\"Why\">{shown}</td>"
        )),
        "{list}"
    );
}

/// Issue 28.8 and 28.9 on GitLab: top-level notes are "MR comment"s, and
/// GitLab's `suggestion:-N+M` (the demo's two-line suggestion, as
/// `Scenario::into_gitlab` writes it) is drawn over the lines it names.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gitlab_run_names_mr_comments_and_draws_gitlab_suggestions() {
    let p = paused_on(shepherd_core::ForgeKind::GitLab).await;
    let (status, page) = p.page(&format!("/runs/{}", p.run_id)).await;
    assert_eq!(status, 200);
    assert!(page.contains(">MR comment<"), "{page}");
    assert!(!page.contains(">PR comment<"), "{page}");
    // Its row of the approval table (GitLab's ids are discussion ids: by place).
    let approval = &page[..page.find("id=\"live\"").unwrap()];
    let row = &approval[approval
        .find(">src/auth/password.sh:6<")
        .expect("the thread")..];
    let row = &row[..row.find("<tr class=\"item\"").unwrap_or(row.len())];
    assert!(row.contains("Suggested change to lines 5–6"), "{row}");
    for (n, text) in [
        (
            5,
            "    expected=$(grep &quot;^$1:&quot; &quot;$AUTH_DB&quot; | cut -d: -f2)",
        ),
        (6, "    [ &quot;$2&quot; = &quot;$expected&quot; ]"),
    ] {
        assert!(
            row.contains(&format!(
                "<tr class=\"del\"><td class=\"ln\">{n}</td><td class=\"sign\">-</td>\
                 <td class=\"src\">{text}</td></tr>"
            )),
            "line {n}: {row}"
        );
    }
    assert_eq!(row.matches("class=\"add\"").count(), 3, "{row}");
    assert!(!row.contains("records only the last"), "{row}");
}
