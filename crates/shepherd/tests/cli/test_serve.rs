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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_in_the_dashboard_resumes_the_run_with_shepherd_resume() {
    let Demo { emu, api, sh } = Demo::start().await;
    let (code, out, err) = sh.run_pr(&api, "prompt", &[]);
    assert_eq!(code, 3, "{out}\n{err}");
    let run = sh.latest_run(&api);

    let mut child = sh
        .run_cmd(&api, &["serve", "--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("shepherd serve starts");
    let stdout = child.stdout.take().unwrap();
    let serving = Serving(child);
    let mut lines = BufReader::new(stdout).lines();
    let url = loop {
        let line = lines.next().expect("a line").expect("stdout");
        if let Some(url) = line.strip_prefix("Open: ") {
            break url.to_owned();
        }
    };
    let (base, secret) = url
        .split_once("/?token=")
        .expect("the URL carries the secret");
    assert!(base.starts_with("http://127.0.0.1:"), "{url}");
    let port = base.rsplit(':').next().unwrap();
    let cookie = format!("shepherd_serve_{port}={secret}");
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();

    // Without the secret: nothing.
    let r = http.get(format!("{base}/")).send().await.unwrap();
    assert_eq!(r.status(), 403);
    // The printed URL opens the session.
    let r = http.get(&url).send().await.unwrap();
    assert_eq!(r.status(), 303);
    let page = get_page(&http, format!("{base}/runs/{run}"), &cookie).await;
    assert!(page.contains("Approve and resume"), "{page}");
    // The first pending item's row, and a reply for it.
    let at = page.find("name=\"item-").expect("an editable row") + "name=\"item-".len();
    let (index, rest) = page[at..].split_once('"').unwrap();
    let rest = rest.strip_prefix(" value=\"").expect("the item's id");
    let item = &rest[..rest.find('"').unwrap()];
    let (item_field, reply_field) = (format!("item-{index}"), format!("reply-{index}"));
    let reply = "Edited in the dashboard of the shepherd binary.";
    let r = http
        .post(format!("{base}/runs/{run}/approve"))
        .header("cookie", &cookie)
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
        let live = get_page(&http, format!("{base}/runs/{run}/live"), &cookie).await;
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
    drop(serving);
}
