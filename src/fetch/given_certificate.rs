//! A server's own certificate given with `--ca-certificate`: self-signed, or issued by an
//! authority the crawl does not know. A self-signed certificate is its own authority, and most
//! are made with `openssl req -x509`, which marks them as one (`basicConstraints CA:TRUE`).
//! webpki, rustls's verifier, refuses an authority's certificate as a server's
//! (`CaUsedAsEndEntity`), and a certificate whose issuer it does not know (`UnknownIssuer`: a
//! server's own certificate from an intranet authority, exported from a browser), where wget
//! and curl (OpenSSL, with partial chains) accept the file as the authority of the very
//! certificate the server shows. So when that is the only fault and the server's certificate
//! is, byte for byte, one the operator gave, it is accepted: for the names it carries
//! (checked here) and within its dates (webpki checks them before the issuer and the
//! constraint it failed on). Everything else is webpki's verdict over Mozilla's roots and the
//! given authorities.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{verify_server_name, WebPkiServerVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{CertificateError, DigitallySignedStruct, SignatureScheme};

/// webpki's verifier, and the certificates of `--ca-certificate` a server may show as they are.
#[derive(Debug)]
pub(super) struct GivenCertificates {
    pub(super) roots: Arc<WebPkiServerVerifier>,
    pub(super) given: Vec<CertificateDer<'static>>,
}

impl ServerCertVerifier for GivenCertificates {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let verdict =
            self.roots
                .verify_server_cert(end_entity, intermediates, server_name, ocsp, now);
        match verdict {
            Err(e) if pinned_fault(&e) && self.given.iter().any(|c| c == end_entity) => {
                verify_server_name(&ParsedCertificate::try_from(end_entity)?, server_name)?;
                Ok(ServerCertVerified::assertion())
            }
            verdict => verdict,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.roots.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.roots.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.roots.supported_verify_schemes()
    }
}

/// True when webpki refused a certificate for a fault that giving that very certificate
/// answers: being an authority's (a self-signed certificate made with `openssl req -x509`), or
/// having an issuer the crawl does not know (a server's own certificate from an intranet
/// authority, exported from a browser or `openssl s_client`, which wget's and curl's OpenSSL
/// accept as a partial chain). webpki checks a certificate's dates and constraints before it
/// looks for its issuer, so an unknown issuer is the only fault left.
fn pinned_fault(e: &rustls::Error) -> bool {
    match e {
        rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer) => true,
        rustls::Error::InvalidCertificate(CertificateError::Other(other)) => matches!(
            other.0.downcast_ref::<webpki::Error>(),
            Some(webpki::Error::CaUsedAsEndEntity)
        ),
        _ => false,
    }
}
