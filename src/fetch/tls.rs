//! The rustls client configuration: Mozilla's root store (webpki-roots), HTTP/1.1 ALPN.
//!
//! Roots are compiled in so a crawl behaves the same on every machine, whatever its system
//! store holds.

use std::sync::Arc;

use rustls::ClientConfig;

/// Builds the shared TLS configuration.
pub fn client_config() -> Arc<ClientConfig> {
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("ring supports the default TLS versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Arc::new(config)
}
