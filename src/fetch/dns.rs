//! Name resolution: `--resolve` pins first, then hickory's async resolver with its TTL cache
//! (the system's configuration, or the `--dns-server` resolvers); IP literals skip DNS. The
//! addresses are those of the families asked for (`-4`, `-6`, `--prefer-family`).
//!
//! With `--dns-records` every lookup is noted for the archive once per name and TTL
//! ([`Dns::take_lookups`]); the crawl loop has them written as `dns:` records.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use hickory_resolver::config::{LookupIpStrategy, NameServerConfig, ResolverConfig, ResolverOpts};
use hickory_resolver::lookup_ip::LookupIp;
use hickory_resolver::net::runtime::TokioRuntimeProvider;
use hickory_resolver::net::{DnsError, NetError};
use hickory_resolver::proto::op::ResponseCode;
use hickory_resolver::proto::rr::RData;
use hickory_resolver::TokioResolver;
use url::{Host, Url};

use super::error::FetchError;
use super::pins::{pinned, Pin};
use crate::exchange::DnsLookup;

/// Names whose archived lookup is remembered; past this, expired ones are forgotten.
const MAX_REMEMBERED: usize = 100_000;
/// Lookups waiting to be written; past this, more are dropped (the writer is far behind).
const MAX_WAITING: usize = 10_000;
/// Shortest time before a name's lookup is archived again (a TTL of 0 is common).
const MIN_RECORD_TTL: Duration = Duration::from_secs(60);

/// Which of a name's addresses are used, in which order (wget's `-4`, `-6`,
/// `--prefer-family`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Families {
    /// Both, in the resolver's order (IPv6 first).
    #[default]
    Any,
    /// IPv4 addresses only.
    Ipv4Only,
    /// IPv6 addresses only.
    Ipv6Only,
    /// Both, IPv4 first.
    PreferIpv4,
    /// Both, IPv6 first.
    PreferIpv6,
}

impl Families {
    /// The queries the resolver makes for these families.
    fn strategy(self) -> LookupIpStrategy {
        match self {
            Families::Any | Families::PreferIpv6 => LookupIpStrategy::Ipv6AndIpv4,
            Families::PreferIpv4 => LookupIpStrategy::Ipv4AndIpv6,
            Families::Ipv4Only => LookupIpStrategy::Ipv4Only,
            Families::Ipv6Only => LookupIpStrategy::Ipv6Only,
        }
    }

    /// `ips` of the wanted families, the preferred one first (IP literals and `--resolve`
    /// pins too, which skip the resolver).
    fn apply(self, mut ips: Vec<IpAddr>) -> Vec<IpAddr> {
        match self {
            Families::Any => {}
            Families::Ipv4Only => ips.retain(IpAddr::is_ipv4),
            Families::Ipv6Only => ips.retain(IpAddr::is_ipv6),
            Families::PreferIpv4 => ips.sort_by_key(IpAddr::is_ipv6),
            Families::PreferIpv6 => ips.sort_by_key(IpAddr::is_ipv4),
        }
        ips
    }
}

/// A shared, caching resolver, behind the `--resolve` pins.
#[derive(Clone)]
pub struct Dns {
    resolver: Option<TokioResolver>,
    pins: Arc<[Pin]>,
    /// The one name server asked, when only one is configured.
    server: Option<IpAddr>,
    /// `--dns-records`: lookups to archive.
    log: Option<Arc<Mutex<LookupLog>>>,
    families: Families,
    /// wget's `--dns-timeout`: the longest a lookup may take, its retries included.
    timeout: Option<Duration>,
}

#[derive(Default)]
struct LookupLog {
    /// Until when each name's archived lookup holds (its TTL).
    archived_until: HashMap<String, Instant>,
    waiting: Vec<DnsLookup>,
}

impl Dns {
    /// Reads the system configuration (/etc/resolv.conf, /etc/hosts). Without one, only IP
    /// literals resolve and host names fail with a DNS error.
    pub fn from_system(families: Families) -> Self {
        match hickory_resolver::system_conf::read_system_conf() {
            Ok((config, options)) => Self::with_config(config, options, families),
            Err(_) => Dns {
                resolver: None,
                pins: Arc::from(Vec::new()),
                server: None,
                log: None,
                families,
                timeout: None,
            },
        }
    }

    /// Asks these name servers (UDP, then TCP for long answers) instead of the system's.
    pub fn from_servers(servers: &[SocketAddr], families: Families) -> Self {
        let configs: Vec<NameServerConfig> = servers
            .iter()
            .map(|addr| {
                let mut config = NameServerConfig::udp_and_tcp(addr.ip());
                for connection in &mut config.connections {
                    connection.port = addr.port();
                }
                config
            })
            .collect();
        Self::with_config(
            ResolverConfig::from_name_servers(configs),
            ResolverOpts::default(),
            families,
        )
    }

    fn with_config(config: ResolverConfig, mut options: ResolverOpts, families: Families) -> Self {
        options.ip_strategy = families.strategy();
        let server = single_server(config.name_servers());
        let resolver = TokioResolver::builder_with_config(config, TokioRuntimeProvider::default())
            .with_options(options)
            .build()
            .ok();
        Dns {
            resolver,
            pins: Arc::from(Vec::new()),
            server,
            log: None,
            families,
            timeout: None,
        }
    }

    /// Gives every lookup up after `timeout` (wget's `--dns-timeout`), where the resolver
    /// alone tries twice for 5 s each (resolv.conf's defaults, or its `options`).
    pub fn with_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.timeout = timeout;
        self
    }

    /// Answers pinned names from `pins` before asking DNS.
    pub fn with_pins(mut self, pins: Vec<Pin>) -> Self {
        self.pins = Arc::from(pins);
        self
    }

    /// Notes each lookup for the archive (`--dns-records`).
    pub fn recording(mut self) -> Self {
        self.log = Some(Arc::default());
        self
    }

    /// The lookups noted since the last call.
    pub fn take_lookups(&self) -> Vec<DnsLookup> {
        match &self.log {
            Some(log) => std::mem::take(&mut lock(log).waiting),
            None => Vec::new(),
        }
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
                let lookup = match self.timeout {
                    None => resolver.lookup_ip(name).await,
                    Some(limit) => tokio::time::timeout(limit, resolver.lookup_ip(name))
                        .await
                        .map_err(|_| {
                            FetchError::DnsUnavailable(format!("no answer in {limit:?}"))
                        })?,
                }
                .map_err(|e| lookup_error(&e))?;
                self.note(name, &lookup);
                lookup.iter().collect()
            }
            None => return Err(FetchError::Dns("URL has no host".into())),
        };
        let ips = self.families.apply(ips);
        if ips.is_empty() {
            return Err(FetchError::Dns(match self.families {
                Families::Ipv4Only => "no IPv4 address (-4)".into(),
                Families::Ipv6Only => "no IPv6 address (-6)".into(),
                _ => "no addresses".into(),
            }));
        }
        Ok(ips
            .into_iter()
            .map(|ip| SocketAddr::new(ip, port))
            .collect())
    }

    /// Keeps `lookup` for the archive unless `name`'s last archived one still holds.
    fn note(&self, name: &str, lookup: &LookupIp) {
        let Some(log) = &self.log else {
            return;
        };
        let records = lookup.as_lookup().answers();
        if records.is_empty() {
            return;
        }
        let now = Instant::now();
        let mut log = lock(log);
        let name = name.trim_end_matches('.').to_ascii_lowercase();
        if log
            .archived_until
            .get(&name)
            .is_some_and(|until| now < *until)
        {
            return;
        }
        if log.waiting.len() >= MAX_WAITING {
            return;
        }
        if log.archived_until.len() >= MAX_REMEMBERED {
            log.archived_until.retain(|_, until| now < *until);
        }
        let ttl = records.iter().map(|r| r.ttl).min().unwrap_or(0);
        let until = now + Duration::from_secs(u64::from(ttl)).max(MIN_RECORD_TTL);
        log.archived_until.insert(name.clone(), until);
        let answers = records
            .iter()
            .map(|r| {
                // Names as the wire has them (`xn--bcher-kva.test.`), as Heritrix writes
                // them and RFC 1035's master files hold them: hickory shows them in Unicode.
                let data = match &r.data {
                    RData::CNAME(target) => target.0.to_ascii(),
                    other => other.to_string(),
                };
                format!(
                    "{}\t{}\t{}\t{}\t{data}",
                    r.name.to_ascii(),
                    r.ttl,
                    r.dns_class,
                    r.record_type(),
                )
            })
            .collect();
        log.waiting.push(DnsLookup {
            name,
            date: SystemTime::now(),
            server: self.server,
            answers,
        });
    }
}

/// The address of the only name server configured, if only one is.
fn single_server(servers: &[NameServerConfig]) -> Option<IpAddr> {
    match servers {
        [one] => Some(one.ip),
        _ => None,
    }
}

fn lock(log: &Mutex<LookupLog>) -> std::sync::MutexGuard<'_, LookupLog> {
    log.lock().unwrap_or_else(|e| e.into_inner())
}

/// A failed lookup as a fetch error. An answer about the name (it has no such record, or does
/// not exist) lasts: [`FetchError::Dns`]. A resolver that did not answer, failed (SERVFAIL)
/// or could not be reached said nothing about the name: [`FetchError::DnsUnavailable`],
/// retried as a failed connect is, so a resolver outage of a minute does not fail every URL
/// whose name's lookup expired in it.
fn lookup_error(e: &NetError) -> FetchError {
    let passing = match e {
        NetError::Timeout | NetError::NoConnections | NetError::Busy | NetError::Io(_) => true,
        NetError::Dns(DnsError::ResponseCode(code)) => *code == ResponseCode::ServFail,
        _ => false,
    };
    match passing {
        true => FetchError::DnsUnavailable(e.to_string()),
        false => FetchError::Dns(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fetch::pins::parse_pin;

    async fn resolved(families: Families, url: &str) -> Result<Vec<SocketAddr>, FetchError> {
        let pin = parse_pin("both.test:80:[::1],127.0.0.9").unwrap();
        let dns = Dns::from_system(families).with_pins(vec![pin]);
        dns.resolve(&Url::parse(url).unwrap()).await
    }

    #[tokio::test]
    async fn families_choose_and_order_a_names_addresses() {
        let ips = |r: Result<Vec<SocketAddr>, FetchError>| {
            r.unwrap()
                .iter()
                .map(|a| a.ip().to_string())
                .collect::<Vec<_>>()
        };
        let name = "http://both.test/";
        assert_eq!(
            ips(resolved(Families::Any, name).await),
            ["::1", "127.0.0.9"]
        );
        assert_eq!(ips(resolved(Families::Ipv4Only, name).await), ["127.0.0.9"]);
        assert_eq!(ips(resolved(Families::Ipv6Only, name).await), ["::1"]);
        assert_eq!(
            ips(resolved(Families::PreferIpv4, name).await),
            ["127.0.0.9", "::1"]
        );
        assert_eq!(
            ips(resolved(Families::PreferIpv6, name).await),
            ["::1", "127.0.0.9"]
        );
        let refused = resolved(Families::Ipv4Only, "http://[::1]/").await;
        assert!(refused.unwrap_err().to_string().contains("-4"));
        let refused = resolved(Families::Ipv6Only, "http://127.0.0.1/").await;
        assert!(refused.unwrap_err().to_string().contains("-6"));
    }

    #[tokio::test]
    async fn a_name_server_that_never_answers_is_given_up_at_the_dns_timeout() {
        let silent = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let dns = Dns::from_servers(&[silent.local_addr().unwrap()], Families::Any)
            .with_timeout(Some(Duration::from_millis(300)));
        let url = Url::parse("http://never.answered.test/").unwrap();
        let error = dns.resolve(&url).await.unwrap_err().to_string();
        assert!(error.contains("no answer in 300ms"), "{error}");
    }
}
