//! Name resolution: `--resolve` pins first, then hickory's async resolver with its TTL cache;
//! IP literals skip DNS.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use hickory_resolver::TokioResolver;
use url::{Host, Url};

use super::error::FetchError;
use super::pins::{pinned, Pin};

/// A shared, caching resolver, behind the `--resolve` pins.
#[derive(Clone)]
pub struct Dns {
    resolver: Option<TokioResolver>,
    pins: Arc<[Pin]>,
}

impl Dns {
    /// Reads the system configuration (/etc/resolv.conf, /etc/hosts). Without one, only IP
    /// literals resolve and host names fail with a DNS error.
    pub fn from_system() -> Self {
        let resolver = TokioResolver::builder_tokio()
            .ok()
            .and_then(|b| b.build().ok());
        Dns {
            resolver,
            pins: Arc::from(Vec::new()),
        }
    }

    /// Answers pinned names from `pins` before asking DNS.
    pub fn with_pins(mut self, pins: Vec<Pin>) -> Self {
        self.pins = Arc::from(pins);
        self
    }

    /// The socket addresses for the URL's host and port.
    pub async fn resolve(&self, url: &Url) -> Result<Vec<SocketAddr>, FetchError> {
        let port = url.port_or_known_default().unwrap_or(80);
        let ips: Vec<IpAddr> = match url.host() {
            Some(Host::Ipv4(ip)) => vec![IpAddr::V4(ip)],
            Some(Host::Ipv6(ip)) => vec![IpAddr::V6(ip)],
            Some(Host::Domain(name)) if pinned(&self.pins, name, port).is_some() => {
                pinned(&self.pins, name, port).unwrap_or_default().to_vec()
            }
            Some(Host::Domain(name)) => {
                let resolver = self
                    .resolver
                    .as_ref()
                    .ok_or_else(|| FetchError::Dns("no resolver configuration".into()))?;
                let lookup = resolver
                    .lookup_ip(name)
                    .await
                    .map_err(|e| FetchError::Dns(e.to_string()))?;
                lookup.iter().collect()
            }
            None => return Err(FetchError::Dns("URL has no host".into())),
        };
        if ips.is_empty() {
            return Err(FetchError::Dns("no addresses".into()));
        }
        Ok(ips
            .into_iter()
            .map(|ip| SocketAddr::new(ip, port))
            .collect())
    }
}
