//! The byte layout of the crawl database's rows: queue keys and values, seen-set keys, host
//! rows and robots.txt rows. The one place it is defined. Keys are big-endian so byte order is
//! the order the frontier wants (per host, lowest depth first, then oldest).

use std::borrow::Cow;
use std::time::{Duration, UNIX_EPOCH};

use crate::frontier::storage::{Fingerprint, QueuedUrl, SavedHost};
use crate::url_rules::referrer::{restored, stored};

/// A queue key: host id, depth, sequence number.
pub type QueueKey = [u8; 16];
/// A seen-set key: host id and a URL fingerprint.
pub type SeenKey = [u8; 16];

/// The queue key of a URL: host id, depth, enqueue sequence number.
pub fn queue_key(host: u32, depth: u32, seq: u64) -> QueueKey {
    let mut k = [0u8; 16];
    k[..4].copy_from_slice(&host.to_be_bytes());
    k[4..8].copy_from_slice(&depth.to_be_bytes());
    k[8..].copy_from_slice(&seq.to_be_bytes());
    k
}

/// The depth stored in a queue key.
pub fn key_depth(key: &QueueKey) -> u32 {
    u32::from_be_bytes(key[4..8].try_into().expect("4 bytes"))
}

/// The sequence number stored in a queue key.
pub fn key_seq(key: &QueueKey) -> u64 {
    u64::from_be_bytes(key[8..].try_into().expect("8 bytes"))
}

/// The host id of a queue key.
pub fn key_host(key: &QueueKey) -> u32 {
    u32::from_be_bytes(key[..4].try_into().expect("4 bytes"))
}

/// The first and last queue keys of a host.
pub fn host_range(host: u32) -> (QueueKey, QueueKey) {
    (queue_key(host, 0, 0), queue_key(host, u32::MAX, u64::MAX))
}

/// The seen-set key of a URL: its host id (so one host's URLs sit together on disk) and its
/// fingerprint.
pub fn seen_key(host: u32, fp: &Fingerprint) -> SeenKey {
    let mut k = [0u8; 16];
    k[..4].copy_from_slice(&host.to_be_bytes());
    k[4..].copy_from_slice(fp);
    k
}

/// Encodes a queue value: redirects, attempt (u32 LE each), URL (the depth is in the key).
/// A URL on host `host_name` (the key's host id names it) is stored without its
/// `scheme://host` prefix, after a marker byte for the scheme. Optional parts go between,
/// each after a marker byte no URL starts with: the `Referer` (the length of the start it
/// shares with the URL and the length of the rest, u16 LE each, then the rest), the requisite
/// hops, the depth.
pub fn encode_queued(entry: &QueuedUrl, host_name: Option<&str>) -> Vec<u8> {
    let mut v = Vec::with_capacity(13 + entry.url.len());
    v.extend_from_slice(&entry.redirects.to_le_bytes());
    v.extend_from_slice(&entry.attempt.to_le_bytes());
    if let Some(referer) = entry.referer.as_deref() {
        let (shared, rest) = stored(referer, &entry.url);
        // (A `Referer` is at most 4,096 bytes; a longer one is not kept.)
        if let (Ok(shared), Ok(len)) = (u16::try_from(shared), u16::try_from(rest.len())) {
            v.push(REFERER);
            v.extend_from_slice(&shared.to_le_bytes());
            v.extend_from_slice(&len.to_le_bytes());
            v.extend_from_slice(rest.as_bytes());
        }
    }
    if entry.requisite > 0 {
        v.push(REQUISITE);
        v.push(entry.requisite);
    }
    if entry.rank != entry.depth {
        // The key holds the rank (`--order`): the depth goes in the value, after a marker
        // byte no URL starts with. Under bfs the layout is the original one.
        v.push(RANKED);
        v.extend_from_slice(&entry.depth.to_le_bytes());
    }
    match host_name.and_then(|name| without_origin(&entry.url, name)) {
        Some((marker, rest)) => {
            v.push(marker);
            v.extend_from_slice(rest.as_bytes());
        }
        None => v.extend_from_slice(entry.url.as_bytes()),
    }
    v
}

/// Marks a queue value whose depth differs from its key's rank.
const RANKED: u8 = 0xff;
/// Marks a page requisite's hop count (`--page-requisites`), before any rank marker.
const REQUISITE: u8 = 0xfe;
/// Marks a URL stored without its `http://` and host name.
const HTTP_ON_HOST: u8 = 0xfd;
/// Marks a URL stored without its `https://` and host name.
const HTTPS_ON_HOST: u8 = 0xfc;
/// Marks a `Referer`, before any other marker.
const REFERER: u8 = 0xfb;

/// A queue value's `Referer` as stored: the length it shares with the URL, and the rest.
type StoredReferer<'b> = Option<(usize, &'b [u8])>;

/// The `Referer` part of a queue value after its fixed 8 bytes, and the rest of the value.
fn referer_part(rest: &[u8]) -> Option<(StoredReferer<'_>, &[u8])> {
    if rest.first() != Some(&REFERER) {
        return Some((None, rest));
    }
    let number = |at: usize| {
        Some(usize::from(u16::from_le_bytes(
            rest.get(at..at + 2)?.try_into().ok()?,
        )))
    };
    let (shared, len) = (number(1)?, number(3)?);
    let text = rest.get(5..5 + len)?;
    Some((Some((shared, text)), &rest[5 + len..]))
}

/// The `Referer` of a queue value's `Referer` part, for its URL `url`.
fn referer_of(part: StoredReferer<'_>, url: &str) -> Option<Option<Box<str>>> {
    let Some((shared, text)) = part else {
        return Some(None);
    };
    Some(Some(restored(
        url,
        shared,
        std::str::from_utf8(text).ok()?,
    )?))
}

/// The scheme marker and the rest of `url` when it starts with `http(s)://name` followed by a
/// port, path, query or nothing. (No UTF-8 text holds the marker bytes.)
fn without_origin<'u>(url: &'u str, name: &str) -> Option<(u8, &'u str)> {
    let (marker, after) = if let Some(after) = url.strip_prefix("http://") {
        (HTTP_ON_HOST, after)
    } else {
        (HTTPS_ON_HOST, url.strip_prefix("https://")?)
    };
    let rest = after.strip_prefix(name)?;
    matches!(rest.bytes().next(), None | Some(b':' | b'/' | b'?' | b'#')).then_some((marker, rest))
}

/// The transclusion hops and the rest of a queue value after its fixed 8 bytes.
fn requisite_part(rest: &[u8]) -> Option<(u8, &[u8])> {
    match rest.first() {
        Some(&REQUISITE) => Some((*rest.get(1)?, rest.get(2..)?)),
        _ => Some((0, rest)),
    }
}

/// The URL of a queue value's URL part, its host name restored from `host_name`.
fn url_part<'b>(part: &'b [u8], host_name: Option<&str>) -> Option<Cow<'b, str>> {
    let scheme = match part.first() {
        Some(&HTTP_ON_HOST) => "http://",
        Some(&HTTPS_ON_HOST) => "https://",
        _ => return std::str::from_utf8(part).ok().map(Cow::Borrowed),
    };
    let rest = std::str::from_utf8(&part[1..]).ok()?;
    Some(Cow::Owned(format!("{scheme}{}{rest}", host_name?)))
}

/// Decodes a queue value stored under `key` (whose host is named `host_name`); `None` for
/// bytes this layout did not produce.
pub fn decode_queued(key: &QueueKey, bytes: &[u8], host_name: Option<&str>) -> Option<QueuedUrl> {
    if bytes.len() < 8 {
        return None;
    }
    let rank = key_depth(key);
    let (referer, rest) = referer_part(&bytes[8..])?;
    let (requisite, rest) = requisite_part(rest)?;
    let (depth, url) = match rest.first() {
        Some(&RANKED) => (
            u32::from_le_bytes(rest.get(1..5)?.try_into().ok()?),
            rest.get(5..)?,
        ),
        _ => (rank, rest),
    };
    let url = url_part(url, host_name)?.into_owned();
    Some(QueuedUrl {
        referer: referer_of(referer, &url)?,
        url,
        depth,
        rank,
        requisite,
        redirects: u32::from_le_bytes(bytes[..4].try_into().ok()?),
        attempt: u32::from_le_bytes(bytes[4..8].try_into().ok()?),
        sitemap: 0,
    })
}

/// The URL of an encoded queue value, without decoding the rest; `None` when unreadable.
pub fn queued_url<'b>(bytes: &'b [u8], host_name: Option<&str>) -> Option<Cow<'b, str>> {
    let (_, rest) = referer_part(bytes.get(8..)?)?;
    let (_, rest) = requisite_part(rest)?;
    let part = match rest.first() {
        Some(&RANKED) => rest.get(5..)?,
        _ => rest,
    };
    url_part(part, host_name)
}

/// Encodes a host row: queued (u64 LE), next-allowed in ms since the epoch (u64 LE), name;
/// then, if it has backlinks (`--order backlinks`), a byte no UTF-8 name holds and their count
/// (u64 LE).
pub fn encode_host(host: &SavedHost) -> Vec<u8> {
    let ms = host
        .next_allowed
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis() as u64;
    let mut v = Vec::with_capacity(16 + host.name.len());
    v.extend_from_slice(&host.queued.to_le_bytes());
    v.extend_from_slice(&ms.to_le_bytes());
    v.extend_from_slice(host.name.as_bytes());
    if host.backlinks > 0 {
        v.push(HOST_BACKLINKS);
        v.extend_from_slice(&host.backlinks.to_le_bytes());
    }
    v
}

/// Marks the backlink count after a host row's name.
const HOST_BACKLINKS: u8 = 0xff;

/// Decodes a host row; `None` for bytes this layout did not produce.
pub fn decode_host(bytes: &[u8]) -> Option<SavedHost> {
    if bytes.len() < 16 {
        return None;
    }
    let ms = u64::from_le_bytes(bytes[8..16].try_into().ok()?);
    let rest = &bytes[16..];
    let (name, backlinks) = match rest.iter().position(|&b| b == HOST_BACKLINKS) {
        Some(at) => (
            &rest[..at],
            u64::from_le_bytes(rest.get(at + 1..at + 9)?.try_into().ok()?),
        ),
        None => (rest, 0),
    };
    Some(SavedHost {
        queued: u64::from_le_bytes(bytes[..8].try_into().ok()?),
        next_allowed: UNIX_EPOCH + Duration::from_millis(ms),
        name: String::from_utf8(name.to_vec()).ok()?,
        backlinks,
    })
}

/// Encodes a robots.txt row: host id (u32 LE), then 1 and the text, or 0 for allow-all.
pub fn encode_robots(host: u32, text: Option<&[u8]>) -> Vec<u8> {
    let mut v = Vec::with_capacity(5 + text.map_or(0, <[u8]>::len));
    v.extend_from_slice(&host.to_le_bytes());
    match text {
        Some(t) => {
            v.push(1);
            v.extend_from_slice(t);
        }
        None => v.push(0),
    }
    v
}

/// Decodes a robots.txt row into host id and text (`None` for allow-all).
pub fn decode_robots(bytes: &[u8]) -> Option<(u32, Option<&[u8]>)> {
    let host = u32::from_le_bytes(bytes.get(..4)?.try_into().ok()?);
    match bytes.get(4)? {
        0 => Some((host, None)),
        1 => Some((host, Some(&bytes[5..]))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontier::storage::fingerprint;

    #[test]
    fn keys_order_by_host_then_depth_then_seq() {
        let mut keys = vec![
            queue_key(2, 0, 1),
            queue_key(1, 1, 0),
            queue_key(1, 0, 300),
            queue_key(1, 0, 2),
        ];
        keys.sort();
        assert_eq!(
            keys,
            vec![
                queue_key(1, 0, 2),
                queue_key(1, 0, 300),
                queue_key(1, 1, 0),
                queue_key(2, 0, 1)
            ]
        );
        assert_eq!(key_depth(&queue_key(9, 7, 1)), 7);
        let fp = fingerprint("http://a.org/x");
        assert_ne!(seen_key(1, &fp), seen_key(2, &fp));
        let (lo, hi) = host_range(1);
        assert!(lo <= queue_key(1, 0, 0) && queue_key(1, 9, 9) <= hi && hi < queue_key(2, 0, 0));
    }

    #[test]
    fn urls_on_their_host_are_stored_without_scheme_and_host() {
        let key = queue_key(1, 0, 1);
        let entry = |url: &str| QueuedUrl {
            url: url.into(),
            ..QueuedUrl::default()
        };
        for (url, name, saved) in [
            ("http://a.org/x?q", "a.org", 1 + 4),
            ("https://a.org:8443/", "a.org", 1 + 6),
            ("http://[::1]:80/", "[::1]", 1 + 4),
            // Not on that host: kept whole.
            ("http://a.org.evil/x", "a.org", 19),
            ("http://b.org/x", "a.org", 14),
            ("ftp://a.org/x", "a.org", 13),
        ] {
            let bytes = encode_queued(&entry(url), Some(name));
            assert_eq!(bytes.len(), 8 + saved, "{url}");
            assert_eq!(decode_queued(&key, &bytes, Some(name)), Some(entry(url)));
            assert_eq!(queued_url(&bytes, Some(name)).unwrap(), url);
        }
        // A row written before the compact form (a whole URL) reads the same with a name.
        let old = encode_queued(&entry("http://a.org/x"), None);
        assert_eq!(
            decode_queued(&key, &old, Some("a.org")),
            Some(entry("http://a.org/x"))
        );
        // A compact row whose host name is unknown is unreadable, not misread.
        let compact = encode_queued(&entry("http://a.org/x"), Some("a.org"));
        assert_eq!(decode_queued(&key, &compact, None), None);
    }

    #[test]
    fn a_referer_is_kept_as_what_it_shares_with_the_url_and_the_rest() {
        let page = QueuedUrl {
            url: "http://a.org:8080/docs/p?x".into(),
            rank: 4,
            depth: 2,
            requisite: 1,
            ..QueuedUrl::default()
        };
        let key = queue_key(1, 4, 3);
        for (referer, kept) in [
            ("http://a.org:8080/docs/", ""),
            ("http://a.org:8080/docs/index.html?q=1", "index.html?q=1"),
            ("http://a.org/", "/"),
            ("https://b.org/", "s://b.org/"),
        ] {
            let e = QueuedUrl {
                referer: Some(referer.into()),
                ..page.clone()
            };
            for name in [None, Some("a.org")] {
                let bytes = encode_queued(&e, name);
                assert_eq!(
                    bytes.len(),
                    encode_queued(&page, name).len() + 5 + kept.len(),
                    "{referer}"
                );
                assert_eq!(decode_queued(&key, &bytes, name), Some(e.clone()));
                assert_eq!(queued_url(&bytes, name).unwrap(), e.url);
            }
        }
        // A value cut inside its Referer is unreadable, not misread.
        let e = QueuedUrl {
            referer: Some("https://b.org/".into()),
            ..page.clone()
        };
        let bytes = encode_queued(&e, None);
        assert_eq!(decode_queued(&key, &bytes[..14], None), None);
    }

    #[test]
    fn rows_round_trip() {
        let v = QueuedUrl {
            url: "http://a.org/ü".into(),
            depth: 3,
            rank: 3,
            requisite: 0,
            redirects: 2,
            attempt: 1,
            sitemap: 0,
            referer: None,
        };
        let key = queue_key(1, 3, 9);
        assert_eq!(
            decode_queued(&key, &encode_queued(&v, None), None),
            Some(v.clone())
        );
        assert_eq!(queued_url(&encode_queued(&v, None), None).unwrap(), v.url);
        // Ranked by --order: the key holds the rank, the value the depth.
        let ranked = QueuedUrl {
            rank: 7,
            ..v.clone()
        };
        let key = queue_key(1, 7, 10);
        assert_eq!(
            decode_queued(&key, &encode_queued(&ranked, None), None),
            Some(ranked.clone())
        );
        assert_eq!(
            queued_url(&encode_queued(&ranked, None), None).unwrap(),
            v.url
        );
        // A page requisite, ranked or not.
        let requisites = [
            QueuedUrl {
                requisite: 2,
                ..ranked.clone()
            },
            QueuedUrl {
                requisite: 1,
                ..v.clone()
            },
        ];
        for r in requisites {
            let key = queue_key(1, r.rank, 11);
            for name in [None, Some("a.org")] {
                let bytes = encode_queued(&r, name);
                assert_eq!(decode_queued(&key, &bytes, name), Some(r.clone()));
                assert_eq!(queued_url(&bytes, name).unwrap(), v.url);
            }
        }
        let h = SavedHost {
            queued: 12,
            next_allowed: UNIX_EPOCH + Duration::from_millis(1_700_000_000_123),
            name: "a.org".into(),
            backlinks: 0,
        };
        assert_eq!(decode_host(&encode_host(&h)), Some(h.clone()));
        // A row from before backlinks ends with the name.
        assert_eq!(encode_host(&h).len(), 16 + 5);
        let linked = SavedHost {
            backlinks: 1 << 40,
            ..h
        };
        assert_eq!(decode_host(&encode_host(&linked)), Some(linked));
        assert_eq!(key_seq(&queue_key(1, 2, 77)), 77);
        assert_eq!(
            decode_robots(&encode_robots(3, Some(b"User-agent: *"))),
            Some((3, Some(&b"User-agent: *"[..])))
        );
        assert_eq!(decode_robots(&encode_robots(3, None)), Some((3, None)));
        assert_eq!(decode_queued(&key, b"short", None), None);
    }
}
