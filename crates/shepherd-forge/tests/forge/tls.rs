//! TLS against an HTTPS front signed by a private CA made at test time: the
//! CA of `ca_file` is trusted, and a certificate that is not trusted is named
//! as such and never retried.

use serde_json::Value;
use shepherd_core::model::RepoRef;
use shepherd_forge::{ClientConfig, Forge, ForgeError, GitHubClient, GitHubEndpoints, Token};

use crate::support::{fast_config, Reply, Responder, SECRET};
use crate::tls_front::{Pki, TlsFront};

fn pr_state_ok() -> Reply {
    let fixture: Value =
        serde_json::from_str(include_str!("../fixtures/pull_request_state.json")).unwrap();
    Reply::json(200, fixture)
}

fn client(url: &str, config: ClientConfig) -> Result<GitHubClient, ForgeError> {
    let repo = RepoRef {
        host: "127.0.0.1".into(),
        owner: "octo-org".into(),
        name: "widgets".into(),
    };
    let endpoints = GitHubEndpoints::from_api_url(url).unwrap();
    GitHubClient::with_config(repo, endpoints, Token::new(SECRET), config)
}

/// `fast_config` (4 attempts) trusting `ca_file`.
fn config_with(ca_file: Option<&std::path::Path>) -> ClientConfig {
    ClientConfig {
        ca_file: ca_file.map(ToOwned::to_owned),
        ..fast_config()
    }
}

#[tokio::test]
async fn a_server_signed_by_the_ca_file_is_reached() {
    let server = Responder::start(vec![pr_state_ok()]).await;
    let pki = Pki::local();
    let front = TlsFront::start(&pki, server.addr).await;
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("corp-ca.pem");
    pki.write_ca(&ca);

    let client = client(&front.url(), config_with(Some(&ca))).unwrap();
    let pr = client.pull_request(42).await.unwrap();
    assert_eq!(pr.number, 42);
    assert_eq!(server.count(), 1, "{:?}", server.lines());
    assert_eq!(front.connections(), 1);
}

#[tokio::test]
async fn an_unknown_issuer_is_named_and_not_retried() {
    let server = Responder::start(vec![pr_state_ok()]).await;
    let pki = Pki::local();
    let front = TlsFront::start(&pki, server.addr).await;

    // Four attempts allowed; none but the first is made.
    let client = client(&front.url(), config_with(None)).unwrap();
    let err = client.pull_request(42).await.unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, ForgeError::Certificate { .. }), "{err:?}");
    assert!(
        text.starts_with(&format!(
            "TLS certificate of {} not trusted: unknown issuer; set SSL_CERT_FILE or [forge] ca_file to your CA",
            front.url()
        )),
        "{text}"
    );
    assert!(text.contains("GraphQL"), "names the request: {text}");
    assert!(!text.contains(SECRET), "{text}");
    assert!(!err.is_transient());
    assert_eq!(
        front.connections(),
        1,
        "a certificate failure is not retried"
    );
    assert_eq!(server.count(), 0);
}

#[tokio::test]
async fn a_certificate_for_another_name_is_named() {
    let server = Responder::start(vec![pr_state_ok()]).await;
    let pki = Pki::new(&["git.corp.example"]);
    let front = TlsFront::start(&pki, server.addr).await;
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("corp-ca.pem");
    pki.write_ca(&ca);

    let client = client(&front.url(), config_with(Some(&ca))).unwrap();
    let err = client.pull_request(42).await.unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("not trusted: issued for another name"),
        "{text}"
    );
    assert_eq!(
        front.connections(),
        1,
        "a certificate failure is not retried"
    );
}

#[tokio::test]
async fn a_ca_file_that_cannot_be_used_fails_before_any_request() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing-ca.pem");
    let err = client("https://127.0.0.1:9", config_with(Some(&missing))).unwrap_err();
    assert!(matches!(err, ForgeError::CaFile { .. }), "{err:?}");
    assert!(err.to_string().contains("missing-ca.pem"), "{err}");

    let not_pem = dir.path().join("notes.txt");
    std::fs::write(&not_pem, "not a certificate\n").unwrap();
    let err = client("https://127.0.0.1:9", config_with(Some(&not_pem))).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("notes.txt") && text.contains("no PEM certificate"),
        "{text}"
    );
}
