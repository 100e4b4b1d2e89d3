//! TLS trust: which roots a client trusts, and telling a certificate failure
//! from other network errors.
//!
//! Roots are the system's trust store (read by `rustls-native-certs`, which
//! honours `SSL_CERT_FILE` and `SSL_CERT_DIR`: when either is set, only what
//! they name), plus the certificates of `[forge] ca_file`. A machine whose
//! store holds no certificate at all (a bare container), with neither
//! variable set, falls back to the Mozilla roots compiled in, so github.com
//! and gitlab.com still work there.
//! TLS is rustls throughout: no OpenSSL, at build or run time.
//!
//! A certificate the client does not trust (unknown issuer, expired, another
//! name) is not a network error: it will fail the same way on every attempt,
//! so it is reported as [`ForgeError::Certificate`] and never retried.

use std::error::Error as StdError;
use std::path::Path;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use rustls::CertificateError;

use crate::error::{ForgeError, Result};

/// Sets the roots of `builder`: the system's store (or the built-in roots
/// when it is empty) plus every certificate of `ca_file`. A `ca_file` that
/// cannot be read, or holds no usable certificate, is an error naming it.
pub(crate) fn with_roots(
    builder: reqwest::ClientBuilder,
    ca_file: Option<&Path>,
) -> Result<reqwest::ClientBuilder> {
    let native = rustls_native_certs::load_native_certs();
    for error in &native.errors {
        // A named SSL_CERT_FILE that is missing shows here (with its path).
        tracing::warn!("reading the system's trust store: {error}");
    }
    // Only a store that is simply absent falls back: a bundle the user named
    // is what they asked for, even when it is empty or missing.
    let named = ["SSL_CERT_FILE", "SSL_CERT_DIR"]
        .iter()
        .any(|var| std::env::var_os(var).is_some_and(|v| !v.is_empty()));
    let built_in = native.certs.is_empty() && !named;
    if built_in {
        tracing::debug!("the system's trust store has no certificate; using the built-in roots");
    }
    let mut builder = builder
        .tls_built_in_native_certs(!built_in)
        .tls_built_in_webpki_certs(built_in);
    if let Some(path) = ca_file {
        for der in read_ca_file(path)? {
            let cert =
                reqwest::Certificate::from_der(der.as_ref()).map_err(|err| ForgeError::CaFile {
                    path: path.display().to_string(),
                    reason: err.to_string(),
                })?;
            builder = builder.add_root_certificate(cert);
        }
        tracing::debug!(ca_file = %path.display(), "trusting the certificates of ca_file");
    }
    Ok(builder)
}

/// The certificates of a PEM file, each checked to be usable as a root.
fn read_ca_file(path: &Path) -> Result<Vec<CertificateDer<'static>>> {
    let error = |reason: String| ForgeError::CaFile {
        path: path.display().to_string(),
        reason,
    };
    let bytes = std::fs::read(path).map_err(|err| error(err.to_string()))?;
    let certs = CertificateDer::pem_slice_iter(&bytes)
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|err| error(format!("not a PEM file: {err}")))?;
    if certs.is_empty() {
        return Err(error(
            "it holds no PEM certificate (`-----BEGIN CERTIFICATE-----`)".to_owned(),
        ));
    }
    let mut check = rustls::RootCertStore::empty();
    for (n, cert) in certs.iter().enumerate() {
        check
            .add(cert.clone())
            .map_err(|err| error(format!("certificate {} is not usable: {err}", n + 1)))?;
    }
    Ok(certs)
}

/// The certificate failure behind `error`, if it is one: the rustls error is
/// somewhere down the source chain (reqwest, hyper, an `io::Error` holding it).
pub(crate) fn certificate_failure<'a>(
    error: &'a (dyn StdError + 'static),
) -> Option<&'a CertificateError> {
    let mut next = Some(error);
    while let Some(error) = next {
        if let Some(rustls::Error::InvalidCertificate(cert)) = error.downcast_ref::<rustls::Error>()
        {
            return Some(cert);
        }
        // `io::Error::source` skips the error it wraps (which may be another
        // `io::Error`): step into it instead.
        next = match error
            .downcast_ref::<std::io::Error>()
            .and_then(std::io::Error::get_ref)
        {
            Some(inner) => Some(inner as &(dyn StdError + 'static)),
            None => error.source(),
        };
    }
    None
}

/// What went wrong with the certificate, and what to do, in words.
pub(crate) fn describe(error: &CertificateError) -> (String, &'static str) {
    const CA_HINT: &str = "set SSL_CERT_FILE or [forge] ca_file to your CA";
    match error {
        CertificateError::UnknownIssuer => ("unknown issuer".to_owned(), CA_HINT),
        CertificateError::Expired | CertificateError::ExpiredContext { .. } => (
            "expired".to_owned(),
            "the server's certificate must be renewed (or this machine's clock is wrong)",
        ),
        CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
            ("not valid yet".to_owned(), "check this machine's clock")
        }
        CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => (
            "issued for another name".to_owned(),
            "check the host in the URL against the names of the server's certificate",
        ),
        CertificateError::Revoked => (
            "revoked".to_owned(),
            "the server's certificate must be replaced",
        ),
        other => (format!("{other:?}"), CA_HINT),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;

    /// An error wrapping another, as reqwest and hyper wrap theirs.
    #[derive(Debug)]
    struct Wrapper(Box<dyn StdError + Send + Sync>);

    impl std::fmt::Display for Wrapper {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("error sending request")
        }
    }

    impl StdError for Wrapper {
        fn source(&self) -> Option<&(dyn StdError + 'static)> {
            Some(&*self.0)
        }
    }

    #[test]
    fn a_certificate_error_is_found_inside_an_io_error() {
        let io = std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer),
        );
        // As hyper-util wraps it: an `io::Error` holding an `io::Error`.
        let outer = std::io::Error::other(io);
        let chain = Wrapper(Box::new(Wrapper(Box::new(outer))));
        assert_eq!(
            certificate_failure(&chain),
            Some(&CertificateError::UnknownIssuer)
        );
        let (reason, hint) = describe(&CertificateError::UnknownIssuer);
        assert_eq!(reason, "unknown issuer");
        assert!(
            hint.contains("SSL_CERT_FILE") && hint.contains("ca_file"),
            "{hint}"
        );
    }

    #[test]
    fn other_errors_are_not_certificate_failures() {
        let refused = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        assert!(certificate_failure(&Wrapper(Box::new(refused))).is_none());
        // A TLS error that is not about the certificate (a plain HTTP server).
        let io = std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            rustls::Error::General("corrupt message".into()),
        );
        assert!(certificate_failure(&Wrapper(Box::new(io))).is_none());
    }

    #[test]
    fn a_ca_file_that_is_missing_or_not_pem_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.pem");
        let err = read_ca_file(&missing).unwrap_err().to_string();
        assert!(err.contains("missing.pem"), "{err}");

        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "just text\n").unwrap();
        let err = read_ca_file(&empty).unwrap_err().to_string();
        assert!(
            err.contains("empty.pem") && err.contains("no PEM certificate"),
            "{err}"
        );

        let garbage = dir.path().join("garbage.pem");
        std::fs::write(
            &garbage,
            "-----BEGIN CERTIFICATE-----\naGVsbG8gd29ybGQ=\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        let err = read_ca_file(&garbage).unwrap_err().to_string();
        assert!(
            err.contains("garbage.pem") && err.contains("not usable"),
            "{err}"
        );
    }
}
