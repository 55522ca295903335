//! The byte layout of the frontier's records in the store: queue keys and values, seen-set
//! keys, host records and robots.txt records. Keys are big-endian so byte order is the order the
//! frontier wants (per host, lowest depth first, then oldest).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sha1::{Digest, Sha1};

use crate::store::{QueueKey, SeenKey};

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

/// The seen-set key of a URL: its host id (so one host's URLs sit together on disk) and 96
/// bits of the SHA-1 of the canonical URL (collisions within one host are out of reach).
pub fn seen_key(host: u32, url: &str) -> SeenKey {
    let digest = Sha1::digest(url.as_bytes());
    let mut k = [0u8; 16];
    k[..4].copy_from_slice(&host.to_be_bytes());
    k[4..].copy_from_slice(&digest[..12]);
    k
}

/// A queued URL's fields besides its key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueValue {
    /// Redirect hops that led here.
    pub redirects: u32,
    /// Failed attempts so far.
    pub attempt: u32,
    /// The canonical URL.
    pub url: String,
}

impl QueueValue {
    /// Encodes as redirects, attempt (u32 LE each), URL bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(8 + self.url.len());
        v.extend_from_slice(&self.redirects.to_le_bytes());
        v.extend_from_slice(&self.attempt.to_le_bytes());
        v.extend_from_slice(self.url.as_bytes());
        v
    }

    /// Decodes; `None` for bytes this layout did not produce.
    pub fn decode(bytes: &[u8]) -> Option<QueueValue> {
        if bytes.len() < 8 {
            return None;
        }
        Some(QueueValue {
            redirects: u32::from_le_bytes(bytes[..4].try_into().ok()?),
            attempt: u32::from_le_bytes(bytes[4..8].try_into().ok()?),
            url: String::from_utf8(bytes[8..].to_vec()).ok()?,
        })
    }

    /// The URL part of an encoded value, without decoding the rest.
    pub fn url_of(bytes: &[u8]) -> &[u8] {
        bytes.get(8..).unwrap_or_default()
    }
}

/// What is saved of a host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostRecord {
    /// URLs queued for it in the store.
    pub queued: u64,
    /// When it may be fetched again, as wall-clock time (an `Instant` does not survive a
    /// restart).
    pub next_allowed: SystemTime,
    /// The politeness key (host name).
    pub name: String,
}

impl HostRecord {
    /// Encodes as queued (u64 LE), next-allowed in ms since the epoch (u64 LE), name.
    pub fn encode(&self) -> Vec<u8> {
        let ms = self
            .next_allowed
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_millis() as u64;
        let mut v = Vec::with_capacity(16 + self.name.len());
        v.extend_from_slice(&self.queued.to_le_bytes());
        v.extend_from_slice(&ms.to_le_bytes());
        v.extend_from_slice(self.name.as_bytes());
        v
    }

    /// Decodes; `None` for bytes this layout did not produce.
    pub fn decode(bytes: &[u8]) -> Option<HostRecord> {
        if bytes.len() < 16 {
            return None;
        }
        let ms = u64::from_le_bytes(bytes[8..16].try_into().ok()?);
        Some(HostRecord {
            queued: u64::from_le_bytes(bytes[..8].try_into().ok()?),
            next_allowed: UNIX_EPOCH + Duration::from_millis(ms),
            name: String::from_utf8(bytes[16..].to_vec()).ok()?,
        })
    }
}

/// Encodes a robots.txt record: host id (u32 LE), then 1 and the text, or 0 for allow-all.
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

/// Decodes a robots.txt record into host id and text (`None` for allow-all).
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
        assert_ne!(seen_key(1, "http://a.org/x"), seen_key(2, "http://a.org/x"));
    }

    #[test]
    fn records_round_trip() {
        let v = QueueValue {
            redirects: 2,
            attempt: 1,
            url: "http://a.org/ü".into(),
        };
        assert_eq!(QueueValue::decode(&v.encode()), Some(v.clone()));
        assert_eq!(QueueValue::url_of(&v.encode()), v.url.as_bytes());
        let h = HostRecord {
            queued: 12,
            next_allowed: UNIX_EPOCH + Duration::from_millis(1_700_000_000_123),
            name: "a.org".into(),
        };
        assert_eq!(HostRecord::decode(&h.encode()), Some(h));
        assert_eq!(
            decode_robots(&encode_robots(3, Some(b"User-agent: *"))),
            Some((3, Some(&b"User-agent: *"[..])))
        );
        assert_eq!(decode_robots(&encode_robots(3, None)), Some((3, None)));
        assert_eq!(QueueValue::decode(b"short"), None);
    }
}
