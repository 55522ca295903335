//! The rustls client configuration: Mozilla's root store (webpki-roots) with the authorities
//! of `--ca-certificate` (and a server's own certificate given there:
//! `given_certificate.rs`), HTTP/1.1 ALPN, and an `--insecure` mode that accepts any
//! certificate; and the names of a session's protocol and cipher suite for the WARC records.
//!
//! Roots are compiled in so a crawl behaves the same on every machine, whatever its system
//! store holds; an intranet's own authority is added with `--ca-certificate` (wget's name).
//! Archivists often need `--insecure`: expired and self-signed certificates are part of the
//! web they are preserving. Even then, handshake signatures are still verified.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CipherSuite, ClientConfig, DigitallySignedStruct, ProtocolVersion, SignatureScheme};

use super::given_certificate::GivenCertificates;
use crate::exchange::TlsSession;

/// The protocol and cipher suite `connection` negotiated, named as WARC-Protocol and
/// WARC-Cipher-Suite write them (`None` before the handshake ended).
pub fn session_of(connection: &rustls::ClientConnection) -> Option<TlsSession> {
    let protocol = match connection.protocol_version()? {
        ProtocolVersion::TLSv1_3 => "tls/1.3",
        ProtocolVersion::TLSv1_2 => "tls/1.2",
        ProtocolVersion::TLSv1_1 => "tls/1.1",
        ProtocolVersion::TLSv1_0 => "tls/1.0",
        _ => "tls",
    };
    let suite = connection.negotiated_cipher_suite()?.suite();
    Some(TlsSession {
        protocol,
        cipher_suite: iana_name(suite),
    })
}

/// The IANA registry's name of a cipher suite: rustls spells the TLS 1.3 ones `TLS13_...`
/// where the registry (and OpenSSL, Heritrix, Common Crawl) write `TLS_...`.
fn iana_name(suite: CipherSuite) -> &'static str {
    match suite {
        CipherSuite::TLS13_AES_128_GCM_SHA256 => "TLS_AES_128_GCM_SHA256",
        CipherSuite::TLS13_AES_256_GCM_SHA384 => "TLS_AES_256_GCM_SHA384",
        CipherSuite::TLS13_CHACHA20_POLY1305_SHA256 => "TLS_CHACHA20_POLY1305_SHA256",
        CipherSuite::TLS13_AES_128_CCM_SHA256 => "TLS_AES_128_CCM_SHA256",
        CipherSuite::TLS13_AES_128_CCM_8_SHA256 => "TLS_AES_128_CCM_8_SHA256",
        other => other.as_str().unwrap_or("unknown"),
    }
}

/// Which server certificates a crawl accepts.
#[derive(Debug, Clone)]
pub enum Trust {
    /// Any (`--insecure`).
    Any,
    /// Those that chain to Mozilla's roots or to these authorities (`--ca-certificate`).
    Roots(Vec<CertificateDer<'static>>),
}

impl Trust {
    /// The trust `--insecure` and `--ca-certificate FILE` ask for; an error names a file that
    /// cannot be read or holds no certificate usable as an authority.
    pub fn from_args(insecure: bool, ca_file: Option<&std::path::Path>) -> Result<Self, String> {
        let Some(path) = ca_file.filter(|_| !insecure) else {
            return Ok(if insecure {
                Trust::Any
            } else {
                Trust::Roots(Vec::new())
            });
        };
        let problem = |what: String| format!("--ca-certificate {}: {what}", path.display());
        let certs = CertificateDer::pem_file_iter(path)
            .map_err(|e| problem(e.to_string()))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| problem(e.to_string()))?;
        let (usable, _) = rustls::RootCertStore::empty().add_parsable_certificates(certs.clone());
        if usable == 0 {
            return Err(problem("no PEM certificate usable as an authority".into()));
        }
        Ok(Trust::Roots(certs))
    }
}

/// The shared TLS configuration, and the verifier in it (for a host whose name rustls
/// refuses, `stand_in_name.rs`).
pub struct TlsClient {
    /// The configuration every connection uses.
    pub config: Arc<ClientConfig>,
    /// Its certificate verifier.
    pub(super) verifier: Arc<dyn ServerCertVerifier>,
}

/// Builds the shared TLS configuration.
pub fn client_config(trust: &Trust) -> TlsClient {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .expect("ring supports the default TLS versions");
    let verifier: Arc<dyn ServerCertVerifier> = match trust {
        Trust::Any => Arc::new(AcceptAnyCertificate(provider)),
        Trust::Roots(extra) => {
            let mut roots = rustls::RootCertStore {
                roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
            };
            roots.add_parsable_certificates(extra.iter().cloned());
            let roots = WebPkiServerVerifier::builder_with_provider(roots.into(), provider)
                .build()
                .expect("the roots hold Mozilla's at least");
            match extra.is_empty() {
                true => roots,
                false => Arc::new(GivenCertificates {
                    roots,
                    given: extra.clone(),
                }),
            }
        }
    };
    let mut config = builder
        .dangerous()
        .with_custom_certificate_verifier(verifier.clone())
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    TlsClient {
        config: Arc::new(config),
        verifier,
    }
}

/// Accepts any server certificate (`--insecure`), and the handshake signature made with its
/// key even where the key is one webpki refuses (RSA under 2,048 bits, as old printers, UPSes
/// and NASes carry): a signature by the key of a certificate nobody checks proves nothing the
/// certificate did not, and `curl -k` and `wget --no-check-certificate` reach such devices.
#[derive(Debug)]
struct AcceptAnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AcceptAnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let checked = verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        );
        Ok(checked.unwrap_or_else(|_| HandshakeSignatureValid::assertion()))
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let checked = verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        );
        Ok(checked.unwrap_or_else(|_| HandshakeSignatureValid::assertion()))
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
