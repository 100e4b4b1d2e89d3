//! `shepherd threads` over HTTPS with a private CA (made at test time): the
//! CA is trusted from `SSL_CERT_FILE` or `[forge] ca_file`; without it the
//! error names the certificate and the server sees one connection only.

use std::path::Path;
use std::process::Output;

use shepherd_emulator::RunningEmulator;

use crate::common::{scenario, start, text, Shepherd, AUTHOR};
use crate::tls_front::{Pki, TlsFront};

/// The emulator (two threads) behind an HTTPS front whose certificate a CA
/// made now signed, and a Shepherd to run against it.
async fn https() -> (RunningEmulator, Pki, TlsFront, Shepherd) {
    let emu = start(scenario(2, 1)).await;
    let pki = Pki::local();
    let front = TlsFront::start(&pki, emu.addr()).await;
    (emu, pki, front, Shepherd::new())
}

/// A config file of `sh` naming `ca` as `[forge] ca_file`, as the variable
/// that points Shepherd to it.
fn ca_file_config(sh: &Shepherd, ca: &Path) -> Vec<(&'static str, String)> {
    let config = sh.cwd().join("config.toml");
    std::fs::write(
        &config,
        format!("[forge]\nca_file = \"{}\"\n", ca.display()),
    )
    .unwrap();
    vec![("SHEPHERD_CONFIG", config.display().to_string())]
}

/// `shepherd threads 7` at `api` with `env` (plus the author's token).
async fn threads(sh: Shepherd, api: String, env: Vec<(&'static str, String)>) -> Output {
    tokio::task::spawn_blocking(move || {
        let mut all: Vec<(&str, &str)> = vec![("GITHUB_TOKEN", AUTHOR)];
        all.extend(env.iter().map(|(k, v)| (*k, v.as_str())));
        sh.run(
            &["threads", "7", "--repo", "acme/widgets", "--api-url", &api],
            &all,
        )
    })
    .await
    .unwrap()
}

fn assert_items_listed(out: &Output) {
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    assert!(stdout.contains("3 items: 3 new"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn threads_over_https_trusts_the_ca_of_ssl_cert_file() {
    let (_emu, pki, front, sh) = https().await;
    let ca = sh.cwd().join("corp-ca.pem");
    pki.write_ca(&ca);

    let env = vec![("SSL_CERT_FILE", ca.display().to_string())];
    let out = threads(sh, front.url(), env).await;
    assert_items_listed(&out);
    assert!(front.connections() >= 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn threads_over_https_trusts_the_ca_of_forge_ca_file() {
    let (_emu, pki, front, sh) = https().await;
    let ca = sh.cwd().join("corp-ca.pem");
    pki.write_ca(&ca);
    let env = ca_file_config(&sh, &ca);
    let out = threads(sh, front.url(), env).await;
    assert_items_listed(&out);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_ca_the_certificate_is_named_and_not_retried() {
    let (_emu, _pki, front, sh) = https().await;

    let env = vec![("SHEPHERD_LOG", "debug".to_owned())];
    let out = threads(sh, front.url(), env).await;
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "TLS certificate of {} not trusted: unknown issuer; set SSL_CERT_FILE or [forge] ca_file to your CA",
            front.url()
        )),
        "{stderr}"
    );
    assert!(!stderr.contains("retrying"), "{stderr}");
    assert!(!stderr.contains(AUTHOR), "the token leaked: {stderr}");
    // A snapshot's first reads go out together (at most the client's four in
    // flight), each on its own connection; a retry would open more.
    assert!(
        (1..=4).contains(&front.connections()),
        "{} connections: {stderr}",
        front.connections()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ca_file_that_cannot_be_read_is_an_error_naming_it() {
    let (_emu, _pki, front, sh) = https().await;
    let missing = sh.cwd().join("no-such-ca.pem");
    let env = ca_file_config(&sh, &missing);
    let out = threads(sh, front.url(), env).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("cannot use the CA file {}", missing.display())),
        "{stderr}"
    );
    assert_eq!(front.connections(), 0, "no request before the error");
}
