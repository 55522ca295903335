//! A TLS server name for a host rustls refuses to name: a first label that begins or ends
//! with a hyphen (`foo-.tumblr.com`, `-fate-.tumblr.com`, `secure-login-.blogspot.com`),
//! which DNS, browsers, curl and wget take, and the sites behind them (https only) serve
//! under a wildcard certificate. rustls's `ServerName` follows the host-name rules of RFC
//! 1123 strictly and has no other constructor, so such a site was never fetched (found by an
//! exploratory crawl).
//!
//! The handshake sends a stand-in name in the same domain (`xfoo-x.tumblr.com`: the label
//! inside two letters), and the certificate is accepted only when it is valid for two such
//! stand-ins (`xfoo-x` and `yfoo-y`): that is, through a wildcard over the first label, which
//! covers the real name as browsers match it. A certificate for one exact name is refused, as
//! it names neither. The request's Host field carries the real name.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, SignatureScheme};

use super::tls::TlsClient;

impl TlsClient {
    /// The name to send for `host` and the configuration to reach it with; `Err` with
    /// rustls's word when `host` is no name a stand-in can help.
    pub fn for_host(&self, host: &str) -> Result<(ServerName<'static>, Arc<ClientConfig>), String> {
        let refused = match ServerName::try_from(host.to_string()) {
            Ok(name) => return Ok((name, self.config.clone())),
            Err(e) => e.to_string(),
        };
        let (first, rest) = host.split_once('.').ok_or_else(|| refused.clone())?;
        let stand_in = |c: char| ServerName::try_from(format!("{c}{first}{c}.{rest}")).ok();
        let hyphen_edged = first.starts_with('-') || first.ends_with('-');
        let (Some(name), Some(other), true) = (stand_in('x'), stand_in('y'), hyphen_edged) else {
            return Err(refused);
        };
        let mut config = (*self.config).clone();
        config
            .dangerous()
            .set_certificate_verifier(Arc::new(WildcardOnly {
                inner: self.verifier.clone(),
                other,
            }));
        Ok((name, Arc::new(config)))
    }
}

/// Accepts a certificate its inner verifier accepts for the stand-in name sent and for
/// `other`, the second stand-in.
#[derive(Debug)]
struct WildcardOnly {
    inner: Arc<dyn ServerCertVerifier>,
    other: ServerName<'static>,
}

impl ServerCertVerifier for WildcardOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.inner
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)?;
        self.inner
            .verify_server_cert(end_entity, intermediates, &self.other, ocsp, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}
