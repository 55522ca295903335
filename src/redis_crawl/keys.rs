//! The Redis key layout of one shared crawl. Every key carries a hash tag (the part in braces),
//! so every script touches one hash slot and the layout works on Redis Cluster unchanged.
//!
//! | key | type | holds |
//! |---|---|---|
//! | `trawl:{C}:meta` | HASH | `options` (what joining workers must match), `shards`, `created`, `seeded`, `finished`, `marked` (every shard's `made` written), `lost` (a worker found part of the crawl gone) |
//! | `trawl:{C}:scope` | SET | seed URLs (and redirect targets of seeds) that define the scope |
//! | `trawl:{C}:permits` | HASH | URL fingerprint -> `r` (reserved) / `c` (committed), `--max-pages` |
//! | `trawl:{C}:budget` | HASH | `committed`: pages archived and saved under the budget |
//! | `trawl:{C}:workers` | HASH | worker id -> heartbeat JSON (state, rates, last seen) |
//! | `trawl:{C}:worker:W` | HASH | worker W's saved blobs (its counters, its replay point) |
//! | `trawl:{C}:stop` | STRING | set by `trawl stop`: every worker stops gracefully |
//! | `trawl:{C}:changes` | LIST | console changes (pause, excludes, delay, host drops) as `TOKEN TAB JSON`, in order |
//! | `trawl:{C/k}:ready` | ZSET | host -> due time (ms) when free, lease expiry (ms) when held |
//! | `trawl:{C/k}:owner` | HASH | host -> lease token `WORKER#EPOCH` |
//! | `trawl:{C/k}:stat` | HASH | `queued`, `seen`: the shard's counts, for `trawl status`; `made`: the shard's marker, gone when Redis lost the shard |
//! | `trawl:{C/k}:q:HOST` | LIST | queued entries `url TAB depth TAB redirects TAB attempt [TAB requisite TAB sitemap]` (`--order bfs`) |
//! | `trawl:{C/k}:z:HOST` | ZSET | the same entries by score `rank * 2^20 + arrival` (other orders) |
//! | `trawl:{C/k}:f:HOST` | HASH | url -> entry: handed to the owner, not yet acknowledged |
//! | `trawl:{C/k}:seen:HOST` | SET | 12-byte URL fingerprints ever queued for the host |
//! | `trawl:{C/k}:host:HOST` | HASH | `next` (ms), `pages`, `rb:ORIGIN` -> robots.txt (`A` + text or `N`), `rt:ORIGIN` -> when it was fetched (ms) |
//!
//! A host lives in shard `k = crc32(host) % shards`; its queue, seen set, record and the
//! shard's ready set and owner table share the slot `{C/k}`, which is what makes admission,
//! claiming and release atomic without any cross-slot protocol.

/// Shards per crawl, fixed when the crawl is created (stored in `meta`).
pub const DEFAULT_SHARDS: u32 = 64;

/// The keys of crawl `C`.
#[derive(Debug, Clone)]
pub struct Keys {
    crawl: String,
    shards: u32,
}

impl Keys {
    /// Keys of crawl `crawl_id` spread over `shards` shards.
    pub fn new(crawl_id: &str, shards: u32) -> Self {
        Keys {
            crawl: crawl_id.to_string(),
            shards: shards.max(1),
        }
    }

    /// The crawl id.
    pub fn crawl_id(&self) -> &str {
        &self.crawl
    }

    /// Number of shards.
    pub fn shards(&self) -> u32 {
        self.shards
    }

    /// A crawl-wide key, e.g. `meta`.
    pub fn crawl(&self, name: &str) -> String {
        format!("trawl:{{{}}}:{name}", self.crawl)
    }

    /// The key holding worker `worker`'s saved blobs.
    pub fn worker(&self, worker: &str) -> String {
        format!("trawl:{{{}}}:worker:{worker}", self.crawl)
    }

    /// The shard of a host.
    pub fn shard_of(&self, host: &str) -> u32 {
        crc32(host.as_bytes()) % self.shards
    }

    /// The key prefix of shard `k` (scripts append `:ready`, `:q:HOST`, ...).
    pub fn shard(&self, k: u32) -> String {
        format!("trawl:{{{}/{k}}}", self.crawl)
    }

    /// The part of every shard prefix before the shard number (`trawl:{C/`): scripts that run
    /// over all shards on a single server append `k}`.
    pub fn shard_base(&self) -> String {
        format!("trawl:{{{}/", self.crawl)
    }

    /// The counts and marker of shard `k`.
    pub fn stat(&self, k: u32) -> String {
        format!("{}:stat", self.shard(k))
    }

    /// The ready set of shard `k` (the key scripts are routed by).
    pub fn ready(&self, k: u32) -> String {
        format!("{}:ready", self.shard(k))
    }
}

/// CRC-32 (IEEE), bitwise: a stable host-to-shard map that any client can recompute.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = (crc >> 1) ^ (0xEDB8_8320 & (crc & 1).wrapping_neg());
        }
    }
    !crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_share_a_slot_per_shard() {
        let k = Keys::new("c1", 64);
        // Python: zlib.crc32(b"example.org") % 64
        assert_eq!(crc32(b"example.org"), 0xa059_32df);
        assert_eq!(k.shard_of("example.org"), 0xa059_32df % 64);
        assert_eq!(k.ready(3), "trawl:{c1/3}:ready");
        assert_eq!(format!("{}3}}", k.shard_base()), k.shard(3));
        assert_eq!(k.crawl("meta"), "trawl:{c1}:meta");
        assert_eq!(k.worker("w"), "trawl:{c1}:worker:w");
    }
}
