//! The SSRF guard: which resolved addresses a crawl may connect to.
//!
//! Checked on the address actually connected to (after DNS), so a public name that resolves
//! to a private address (DNS rebinding) is refused too. By default loopback, private (RFC 1918,
//! CGNAT, unique local), link-local (incl. 169.254.169.254), multicast, broadcast, reserved and
//! unspecified addresses are refused. `--allow-private` allows everything. A seed that is itself
//! an IP literal of a refused class (e.g. `http://127.0.0.2:8000/`) states the user's intent to
//! crawl exactly that address and port, so that one socket address is allowed (and a note is
//! logged): a page there that links to `http://127.0.0.1:6379/` or `http://localhost:9200/`
//! still cannot make the crawler talk to other local services. Host names never unlock anything.

use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, RwLock};

/// Address classes the guard refuses by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AddressClass {
    /// 127.0.0.0/8, ::1.
    Loopback,
    /// 10/8, 172.16/12, 192.168/16, 100.64/10 (CGNAT), fc00::/7.
    Private,
    /// 169.254/16 (incl. cloud metadata), fe80::/10.
    LinkLocal,
    /// 224/4, ff00::/8, 255.255.255.255.
    Multicast,
    /// 0/8, ::, 240/4 and other never-routable ranges.
    Unroutable,
}

impl AddressClass {
    /// The class of a non-public address, or `None` for a public one.
    pub fn of(ip: IpAddr) -> Option<AddressClass> {
        match ip {
            IpAddr::V4(v4) => class_v4(v4),
            IpAddr::V6(v6) => class_v6(v6),
        }
    }

    /// A word for messages.
    pub fn name(self) -> &'static str {
        match self {
            AddressClass::Loopback => "loopback",
            AddressClass::Private => "private",
            AddressClass::LinkLocal => "link-local",
            AddressClass::Multicast => "multicast",
            AddressClass::Unroutable => "unroutable",
        }
    }
}

fn class_v4(ip: Ipv4Addr) -> Option<AddressClass> {
    let o = ip.octets();
    if ip.is_loopback() {
        Some(AddressClass::Loopback)
    } else if ip.is_private() || (o[0] == 100 && (64..128).contains(&o[1])) {
        Some(AddressClass::Private)
    } else if ip.is_link_local() {
        Some(AddressClass::LinkLocal)
    } else if ip.is_multicast() || ip.is_broadcast() {
        Some(AddressClass::Multicast)
    } else if o[0] == 0 || o[0] >= 240 {
        Some(AddressClass::Unroutable)
    } else {
        None
    }
}

fn class_v6(ip: Ipv6Addr) -> Option<AddressClass> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return class_v4(v4);
    }
    let s = ip.segments();
    // NAT64 (64:ff9b::/96) embeds an IPv4 address.
    if s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0] {
        let v4 = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
        return class_v4(v4);
    }
    if ip.is_loopback() {
        Some(AddressClass::Loopback)
    } else if ip.is_unspecified() {
        Some(AddressClass::Unroutable)
    } else if (s[0] & 0xfe00) == 0xfc00 {
        Some(AddressClass::Private)
    } else if (s[0] & 0xffc0) == 0xfe80 {
        Some(AddressClass::LinkLocal)
    } else if ip.is_multicast() {
        Some(AddressClass::Multicast)
    } else {
        None
    }
}

/// The connect-time address policy of a crawl. Clones share the allowed addresses: seeds read
/// from a stream as the crawl runs unlock theirs for the fetcher too.
#[derive(Debug, Clone, Default)]
pub struct AddressGuard {
    allow_all: bool,
    /// Socket addresses of IP-literal seeds, allowed whatever their class.
    allowed: Arc<RwLock<HashSet<SocketAddr>>>,
}

impl AddressGuard {
    /// A guard; `allow_private` turns it off.
    pub fn new(allow_private: bool) -> Self {
        AddressGuard {
            allow_all: allow_private,
            allowed: Arc::default(),
        }
    }

    /// Allows the socket address of an IP-literal seed; returns its class when it was
    /// refused before.
    pub fn allow_seed_literal(&self, addr: SocketAddr) -> Option<AddressClass> {
        let class = AddressClass::of(addr.ip())?;
        if self.allow_all {
            return None;
        }
        let mut allowed = self.allowed.write().unwrap_or_else(|e| e.into_inner());
        allowed.insert(addr).then_some(class)
    }

    fn is_allowed(&self, addr: SocketAddr) -> bool {
        let allowed = self.allowed.read().unwrap_or_else(|e| e.into_inner());
        allowed.contains(&addr)
    }

    /// `Err(class)` when connecting to `addr` is refused.
    pub fn check(&self, addr: SocketAddr) -> Result<(), AddressClass> {
        match AddressClass::of(addr.ip()) {
            Some(class) if !self.allow_all && !self.is_allowed(addr) => Err(class),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(s: &str) -> Option<AddressClass> {
        AddressClass::of(s.parse().unwrap())
    }

    #[test]
    fn classifies_special_ranges() {
        use AddressClass::*;
        for (ip, want) in [
            ("127.0.0.1", Some(Loopback)),
            ("127.9.8.7", Some(Loopback)),
            ("::1", Some(Loopback)),
            ("::ffff:127.0.0.1", Some(Loopback)),
            ("10.1.2.3", Some(Private)),
            ("172.16.0.1", Some(Private)),
            ("172.31.255.255", Some(Private)),
            ("192.168.1.1", Some(Private)),
            ("100.64.0.1", Some(Private)),
            ("fd00::1", Some(Private)),
            ("169.254.169.254", Some(LinkLocal)),
            ("fe80::1", Some(LinkLocal)),
            ("224.0.0.1", Some(Multicast)),
            ("255.255.255.255", Some(Multicast)),
            ("ff02::1", Some(Multicast)),
            ("0.0.0.0", Some(Unroutable)),
            ("::", Some(Unroutable)),
            ("64:ff9b::a00:1", Some(Private)),
            ("8.8.8.8", None),
            ("172.32.0.1", None),
            ("100.128.0.1", None),
            ("2606:4700::1111", None),
        ] {
            assert_eq!(class(ip), want, "{ip}");
        }
    }

    fn addr(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn default_refuses_and_seed_literal_unlocks_only_its_address_and_port() {
        let g = AddressGuard::new(false);
        assert_eq!(g.check(addr("127.0.0.1:80")), Err(AddressClass::Loopback));
        assert_eq!(g.check(addr("93.184.216.34:80")), Ok(()));
        assert_eq!(
            g.allow_seed_literal(addr("127.0.0.2:8000")),
            Some(AddressClass::Loopback)
        );
        assert_eq!(g.allow_seed_literal(addr("127.0.0.2:8000")), None);
        assert_eq!(g.check(addr("127.0.0.2:8000")), Ok(()));
        assert_eq!(g.check(addr("127.0.0.2:6379")), Err(AddressClass::Loopback));
        assert_eq!(g.check(addr("127.0.0.1:8000")), Err(AddressClass::Loopback));
        assert_eq!(g.check(addr("[::1]:8000")), Err(AddressClass::Loopback));
        assert_eq!(
            g.check(addr("169.254.169.254:80")),
            Err(AddressClass::LinkLocal)
        );
        assert!(AddressGuard::new(true)
            .check(addr("169.254.169.254:80"))
            .is_ok());
    }
}
