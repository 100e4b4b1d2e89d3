//! `shepherd serve`: the binary prints a URL carrying its secret, serves
//! the state directory, and an approval from the dashboard resumes the run
//! with this binary's own `shepherd resume`.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::common::{shepherd_replies, Demo};

/// Kills the dashboard when the test ends, however it ends.
struct Serving(Child);

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The dashboard's page at `url`, with the session `cookie`.
async fn get_page(http: &reqwest::Client, url: String, cookie: &str) -> String {
    http.get(url)
        .header("cookie", cookie)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

/// `shepherd serve` started, with what it printed before its URL, and an
/// HTTP client that follows no redirect.
struct Dashboard {
    serving: Serving,
    /// Its lines up to the `Open:` line.
    said: String,
    base: String,
    url: String,
    secret: String,
    cookie: String,
    http: reqwest::Client,
}

impl Dashboard {
    fn start(mut cmd: std::process::Command) -> Dashboard {
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("shepherd serve starts");
        let stdout = child.stdout.take().unwrap();
        let serving = Serving(child);
        let mut said = String::new();
        let mut lines = BufReader::new(stdout).lines();
        let url = loop {
            let line = lines.next().expect("a line").expect("stdout");
            said.push_str(&line);
            said.push('\n');
            if let Some(url) = line.strip_prefix("Open: ") {
                break url.to_owned();
            }
        };
        // Keep reading what it says next (a closed pipe would end it).
        std::thread::spawn(move || lines.for_each(drop));
        let (base, secret) = url
            .split_once("/?token=")
            .map(|(b, s)| (b.to_owned(), s.to_owned()))
            .expect("the URL carries the secret");
        assert!(base.starts_with("http://127.0.0.1:"), "{url}");
        let port = base.rsplit(':').next().unwrap();
        let cookie = format!("shepherd_serve_{port}={secret}");
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        Dashboard {
            serving,
            said,
            base,
            url,
            secret,
            cookie,
            http,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_in_the_dashboard_resumes_the_run_with_shepherd_resume() {
    let Demo { emu, api, sh } = Demo::start().await;
    let (code, out, err) = sh.run_pr(&api, "prompt", &[]);
    assert_eq!(code, 3, "{out}\n{err}");
    let run = sh.latest_run(&api);

    let d = Dashboard::start(sh.run_cmd(&api, &["serve", "--port", "0"]));
    let base = d.base.as_str();
    let secret = d.secret.as_str();
    // It says which forge tokens a resume from it has: the paused run's
    // host's (`--repo` names a repository without a host: the API URL's,
    // the emulator's), from the environment.
    let host = crate::common::host_of(&api);
    assert!(
        d.said
            .contains(&format!("  {host} (GitHub): from $GITHUB_TOKEN\n")),
        "{}",
        d.said
    );
    assert!(!d.said.contains(crate::common::DEV_TOKEN), "{}", d.said);
    // Without the secret: nothing.
    let r = d.http.get(format!("{base}/")).send().await.unwrap();
    assert_eq!(r.status(), 403);
    // The printed URL opens the session.
    let r = d.http.get(&d.url).send().await.unwrap();
    assert_eq!(r.status(), 303);
    let page = get_page(&d.http, format!("{base}/runs/{run}"), &d.cookie).await;
    assert!(page.contains("Approve and resume"), "{page}");
    // The first pending item's row, and a reply for it.
    let at = page.find("name=\"item-").expect("an editable row") + "name=\"item-".len();
    let (index, rest) = page[at..].split_once('"').unwrap();
    let rest = rest.strip_prefix(" value=\"").expect("the item's id");
    let item = &rest[..rest.find('"').unwrap()];
    let (item_field, reply_field) = (format!("item-{index}"), format!("reply-{index}"));
    let reply = "Edited in the dashboard of the shepherd binary.";
    let r = d
        .http
        .post(format!("{base}/runs/{run}/approve"))
        .header("cookie", &d.cookie)
        .header("origin", base)
        .form(&[
            ("csrf", secret),
            ("action", "approve-resume"),
            (item_field.as_str(), item),
            (reply_field.as_str(), reply),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303, "{}", r.text().await.unwrap());

    // `shepherd resume` (run by the dashboard) drives the run to its end.
    let started = Instant::now();
    let live = loop {
        let live = get_page(&d.http, format!("{base}/runs/{run}/live"), &d.cookie).await;
        if live.contains("data-status=\"handed-off\"") || live.contains("data-status=\"failed\"") {
            break live;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the run did not end: {live}"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    let log = std::fs::read_to_string(sh.state_dir().join("runs").join(&run).join("resume.log"))
        .unwrap_or_default();
    assert!(live.contains("data-status=\"handed-off\""), "{live}\n{log}");
    let replies = shepherd_replies(&emu, 42);
    assert!(replies.iter().any(|r| r == item), "{replies:?}");
    let state = emu.state_json().to_string();
    assert!(state.contains(reply), "the edited reply is on the forge");
    drop(d.serving);
}

/// Issue 28.7: started without a token, `serve` says so at start, and
/// "Approve and resume" fails on the page, in words, with what to do (the
/// approval is kept, the run stays paused); a resume that fails later
/// shows its words on the run's page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resume_that_fails_says_why_on_the_page() {
    let Demo { emu: _emu, api, sh } = Demo::start().await;
    let (code, out, err) = sh.run_pr(&api, "prompt", &[]);
    assert_eq!(code, 3, "{out}\n{err}");
    let run = sh.latest_run(&api);

    let mut cmd = sh.run_cmd(&api, &["serve", "--port", "0"]);
    cmd.env_remove("GITHUB_TOKEN");
    let d = Dashboard::start(cmd);
    // The run is on the API URL's host (`--repo` names none): the emulator's,
    // and `status` lists it there, never as github.com (issue 28.6).
    let host = crate::common::host_of(&api);
    let (code, listed, err) = sh.run_at(&api, &["status"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        listed.contains(&format!("github:{host}/demo/authkit#42  ")),
        "{listed}"
    );
    assert!(!listed.contains("github.com"), "{listed}");
    assert!(
        d.said.contains(&format!(
            "  {host} (GitHub): none: no token for {host}: set one of "
        )),
        "{}",
        d.said
    );

    let r = d
        .http
        .post(format!("{}/runs/{run}/approve", d.base))
        .header("cookie", &d.cookie)
        .header("origin", &d.base)
        .form(&[("csrf", d.secret.as_str()), ("action", "approve-resume")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 500);
    let page = r.text().await.unwrap();
    let alert = page
        .split("role=\"alert\">")
        .nth(1)
        .and_then(|rest| rest.split("</p>").next())
        .unwrap_or_else(|| panic!("an alert on the page: {page}"));
    for words in [
        "approved, but the resume did not start: `shepherd resume` exited 1",
        &format!("error: no token for {host}: set one of "),
        "GITHUB_TOKEN",
        "the environment `shepherd serve` was started with",
    ] {
        assert!(alert.contains(words), "{words}: {alert}");
    }
    // The approval is kept; the run waits to be resumed.
    let (_, out, _) = sh.run_at(&api, &["status", &run, "--json"]);
    let status: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(status["run"]["status"], "paused", "{status:#}");
    assert_eq!(
        status["pending_approvals"].as_array().map(Vec::len),
        Some(0)
    );

    // "Resume the run": the same words, as this action's failure.
    let r = d
        .http
        .post(format!("{}/runs/{run}/resume", d.base))
        .header("cookie", &d.cookie)
        .header("origin", &d.base)
        .form(&[("csrf", d.secret.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 500);
    let page = r.text().await.unwrap();
    assert!(
        page.contains("the resume did not start: `shepherd resume` exited 1"),
        "{page}"
    );
    assert!(page.contains("no token for"), "{page}");
    drop(d.serving);
}
