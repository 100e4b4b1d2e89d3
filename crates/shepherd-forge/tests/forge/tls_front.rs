//! A private CA made at test time (rcgen) and an HTTPS front (rustls) on
//! 127.0.0.1:0 that passes each connection on to a plain HTTP server (a
//! scripted responder, the emulator), counting the connections it accepts.
//!
//! Shared with the CLI tests (`crates/shepherd/tests/cli`), which include
//! this file by path.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair, KeyUsagePurpose};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;

/// A CA and a server certificate it signed.
pub struct Pki {
    /// The CA's certificate, PEM: what a client must trust.
    pub ca_pem: String,
    cert: CertificateDer<'static>,
    key: PrivatePkcs8KeyDer<'static>,
}

impl Pki {
    /// A new CA, and a certificate for `names` (`127.0.0.1`, `localhost`:
    /// IP addresses become IP SANs) signed by it.
    pub fn new(names: &[&str]) -> Pki {
        let ca_key = KeyPair::generate().unwrap();
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "Shepherd test CA");
        ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let ca = ca_params.self_signed(&ca_key).unwrap();

        let key = KeyPair::generate().unwrap();
        let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
        let mut params = CertificateParams::new(names).unwrap();
        params
            .distinguished_name
            .push(DnType::CommonName, "shepherd test server");
        let cert = params.signed_by(&key, &ca, &ca_key).unwrap();
        Pki {
            ca_pem: ca.pem(),
            cert: cert.der().clone(),
            key: PrivatePkcs8KeyDer::from(key.serialize_der()),
        }
    }

    /// For the usual test server: `127.0.0.1` and `localhost`.
    pub fn local() -> Pki {
        Pki::new(&["127.0.0.1", "localhost"])
    }

    /// Writes the CA's certificate to `path` (for `SSL_CERT_FILE`, `ca_file`).
    pub fn write_ca(&self, path: &Path) {
        std::fs::write(path, &self.ca_pem).unwrap();
    }
}

/// A running HTTPS front; dropped with the test's runtime.
pub struct TlsFront {
    pub addr: SocketAddr,
    connections: Arc<AtomicUsize>,
}

impl TlsFront {
    /// Serves HTTPS with `pki`'s server certificate on 127.0.0.1:0, passing
    /// every connection on to the plain HTTP server at `upstream`.
    pub async fn start(pki: &Pki, upstream: SocketAddr) -> TlsFront {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        TlsFront::start_on(pki, listener, upstream)
    }

    /// As [`TlsFront::start`], on a listener bound beforehand (so that the
    /// upstream can be told the front's address before it starts).
    pub fn start_on(pki: &Pki, listener: TcpListener, upstream: SocketAddr) -> TlsFront {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(
                vec![pki.cert.clone()],
                PrivateKeyDer::Pkcs8(pki.key.clone_key()),
            )
            .unwrap();
        let acceptor = TlsAcceptor::from(Arc::new(config));
        let addr = listener.local_addr().unwrap();
        let connections = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&connections);
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                counter.fetch_add(1, Ordering::SeqCst);
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    // A client that refuses the certificate ends the handshake.
                    let Ok(mut tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let Ok(mut plain) = TcpStream::connect(upstream).await else {
                        return;
                    };
                    let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
                });
            }
        });
        TlsFront { addr, connections }
    }

    /// `https://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("https://{}", self.addr)
    }

    /// How many TCP connections the front accepted.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}
