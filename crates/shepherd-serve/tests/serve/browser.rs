//! A real headless Chromium driven from Rust through WebDriver: Debian's
//! `chromium` and `chromium-driver` (`/usr/bin/chromedriver`), which
//! `cargo xtask test` installs by name when they are absent. The test starts its
//! own chromedriver on an ephemeral loopback port and talks to it with
//! [`fantoccini`] over plain HTTP (no TLS, no OpenSSL).
//!
//! Either executable missing fails the test, naming the Debian package to
//! install: never a silent skip.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::{json, Value};
use shepherd_test_tools::system;

/// The browser (Debian's `chromium`).
pub const CHROMIUM: &str = system::CHROMIUM;

/// Its WebDriver (Debian's `chromium-driver`).
pub const CHROMEDRIVER: &str = system::CHROMEDRIVER;

/// Chromium's flags: headless, nothing fetched from the network, a fresh
/// profile (`--user-data-dir` is added per session).
const ARGS: [&str; 10] = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--no-default-browser-check",
    "--window-size=1280,1600",
];

/// Checks both executables are there and of one major version, and says
/// which ran.
///
/// # Panics
///
/// When either is missing, or they do not match, naming the packages.
pub fn check_installed() {
    let found = system::require(system::chromium());
    eprintln!("browser: {}", found.version);
}

/// A chromedriver the test started; killed on drop.
pub struct Driver {
    child: Child,
    pub url: String,
    pub log: PathBuf,
    _profile: tempfile::TempDir,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Driver {
    /// Starts `/usr/bin/chromedriver --port=0` (it picks a free loopback
    /// port and says which on its first lines).
    pub fn start() -> Driver {
        check_installed();
        let profile = tempfile::tempdir().unwrap();
        let log = profile.path().join("chromedriver.log");
        let mut child = Command::new(CHROMEDRIVER)
            .arg("--port=0")
            .arg(format!("--log-path={}", log.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{CHROMEDRIVER} does not start: {e}"));
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let port = line
                    .strip_prefix("ChromeDriver was started successfully on port ")
                    .and_then(|rest| rest.trim_end_matches('.').parse::<u16>().ok());
                if let Some(port) = port {
                    let _ = tx.send(port);
                }
            }
        });
        let port = rx
            .recv_timeout(Duration::from_secs(20))
            .unwrap_or_else(|_| panic!("{CHROMEDRIVER} did not say its port in 20 s"));
        Driver {
            child,
            url: format!("http://127.0.0.1:{port}"),
            log,
            _profile: profile,
        }
    }

    /// A new browser session (its own fresh profile directory).
    pub async fn session(&self) -> Session {
        let profile = tempfile::tempdir().unwrap();
        let mut args: Vec<String> = ARGS.iter().map(|a| (*a).to_owned()).collect();
        args.push(format!("--user-data-dir={}", profile.path().display()));
        let caps = json!({
            "browserName": "chrome",
            "unhandledPromptBehavior": "ignore",
            "goog:chromeOptions": { "binary": CHROMIUM, "args": args },
        });
        let Value::Object(caps) = caps else {
            unreachable!("a JSON object literal")
        };
        let mut builder = ClientBuilder::new(HttpConnector::new());
        builder.capabilities(caps);
        let started = Instant::now();
        let client = loop {
            match builder.connect(&self.url).await {
                Ok(client) => break client,
                Err(e) if started.elapsed() > Duration::from_secs(30) => {
                    let log = std::fs::read_to_string(&self.log).unwrap_or_default();
                    let tail = &log[log.len().saturating_sub(4000)..];
                    panic!("no WebDriver session from {}: {e}\n{tail}", self.url)
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
            }
        };
        Session {
            client,
            _profile: profile,
        }
    }
}

/// A WebDriver session; [`Session::close`] ends it (and its browser).
pub struct Session {
    pub client: Client,
    _profile: tempfile::TempDir,
}

impl Session {
    pub async fn close(self) {
        let _ = self.client.close().await;
    }

    /// Runs `script` (a function body) in the page and returns its value.
    pub async fn js(&self, script: &str) -> Value {
        self.client.execute(script, vec![]).await.unwrap()
    }

    /// Waits up to `secs` for the element at `css`.
    pub async fn wait_for(&self, css: &str, secs: u64) -> fantoccini::elements::Element {
        self.client
            .wait()
            .at_most(Duration::from_secs(secs))
            .for_element(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("no {css} after {secs} s: {e}"))
    }

    /// The text of the element at `css`. The live region replaces its
    /// elements on each update: an element found just before an update is
    /// stale, and is found again (a few times at most).
    pub async fn text(&self, css: &str) -> String {
        let mut tries = 0;
        loop {
            let element = self
                .client
                .find(Locator::Css(css))
                .await
                .unwrap_or_else(|e| panic!("no {css}: {e}"));
            match element.text().await {
                Ok(text) => return text,
                Err(e) if tries < 5 && format!("{e:?}").contains("StaleElementReference") => {
                    tries += 1;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => panic!("the text of {css}: {e}"),
            }
        }
    }

    /// Lays the page out for a `width`×`height` viewport, as Chrome
    /// DevTools' device mode does (`Emulation.setDeviceMetricsOverride`;
    /// `mobile` also applies the page's `<meta name="viewport">`).
    pub async fn viewport(&self, width: u32, height: u32, mobile: bool) {
        let params = json!({
            "width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile,
        });
        self.cdp("Emulation.setDeviceMetricsOverride", params).await;
    }

    /// The page's width and the viewport's: the page overflows
    /// horizontally when the first is larger.
    pub async fn widths(&self) -> (u64, u64) {
        let w = self
            .js("return [document.documentElement.scrollWidth, window.innerWidth];")
            .await;
        (w[0].as_u64().unwrap(), w[1].as_u64().unwrap())
    }

    /// A PNG of the whole page (beyond the window) into `dir/name`.
    pub async fn screenshot(&self, dir: &Path, name: &str) {
        self.capture(
            dir,
            name,
            "return [0, 0, document.documentElement.scrollWidth, \
             document.documentElement.scrollHeight];",
        )
        .await;
    }

    /// A PNG of the element at `css` (all of it, beyond the window).
    pub async fn screenshot_of(&self, css: &str, dir: &Path, name: &str) {
        let rect = format!(
            "const e = document.querySelector({css:?}); const r = e.getBoundingClientRect(); \
             return [r.left + window.scrollX, r.top + window.scrollY, \
             Math.max(r.width, e.scrollWidth, \
             document.documentElement.scrollWidth - r.left - window.scrollX), Math.max(r.height, e.scrollHeight)];"
        );
        self.capture(dir, name, &rect).await;
    }

    /// One capture of the rectangle `rect` returns, by the browser itself
    /// (Chrome DevTools' `Page.captureScreenshot`, through chromedriver).
    async fn capture(&self, dir: &Path, name: &str, rect: &str) {
        let r = self.js(rect).await;
        let n = |i: usize| r[i].as_f64().unwrap_or_else(|| panic!("a rectangle: {r}"));
        let params = json!({
            "format": "png",
            "captureBeyondViewport": true,
            "clip": { "x": n(0), "y": n(1), "width": n(2), "height": n(3).min(12_000.0), "scale": 1 },
        });
        let reply = self.cdp("Page.captureScreenshot", params).await;
        let data = reply["data"].as_str().unwrap_or_else(|| panic!("{reply}"));
        let png = base64::engine::general_purpose::STANDARD
            .decode(data)
            .unwrap();
        assert!(png.starts_with(b"\x89PNG"), "a PNG");
        let path = dir.join(name);
        std::fs::write(&path, png).unwrap();
        eprintln!("screenshot: {}", path.display());
    }

    /// A Chrome DevTools command, through chromedriver's
    /// `POST /session/ID/goog/cdp/execute`.
    async fn cdp(&self, cmd: &str, params: Value) -> Value {
        self.client
            .issue_cmd(Cdp {
                cmd: cmd.to_owned(),
                params,
            })
            .await
            .unwrap_or_else(|e| panic!("{cmd}: {e}"))
    }
}

/// chromedriver's extension command for Chrome DevTools.
#[derive(Debug)]
struct Cdp {
    cmd: String,
    params: Value,
}

impl fantoccini::wd::WebDriverCompatibleCommand for Cdp {
    fn endpoint(
        &self,
        base_url: &url::Url,
        session_id: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        let session = session_id.unwrap_or_default();
        base_url.join(&format!("session/{session}/goog/cdp/execute"))
    }

    fn method_and_body(&self, _request_url: &url::Url) -> (http::Method, Option<String>) {
        let body = json!({ "cmd": self.cmd, "params": self.params });
        (http::Method::POST, Some(body.to_string()))
    }
}
