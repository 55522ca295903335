//! A bounded memory cache in front of the on-disk seen set, so the links every page repeats
//! (navigation, footers) are answered without a B-tree lookup.
//!
//! Two generations of fingerprints: lookups check both, inserts go to the current one, and when
//! it is full the older generation is dropped. Recently offered URLs stay cached; memory is at
//! most two generations of 16-byte keys.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

use super::storage::Fingerprint;

/// Hashes a key that is already uniformly random (96 bits of SHA-1 and a host id) by folding
/// it to 64 bits: SipHash would spend time making random bits random (it showed at ~1.5% of a
/// crawl's samples on small pages).
#[derive(Default)]
struct FoldHasher(u64);

impl Hasher for FoldHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = self.0.rotate_left(29) ^ u64::from_le_bytes(word);
        }
    }

    fn write_u128(&mut self, k: u128) {
        // The fingerprint bits vary most; the host id (top 32 bits) is mixed in too.
        self.0 = (k as u64) ^ ((k >> 64) as u64).rotate_left(17);
    }
}

type FoldSet = HashSet<u128, BuildHasherDefault<FoldHasher>>;

/// A two-generation set of recently seen fingerprints.
#[derive(Debug)]
pub struct SeenCache {
    current: FoldSet,
    previous: FoldSet,
    generation: usize,
}

impl SeenCache {
    /// A cache of up to `2 * generation` keys.
    pub fn new(generation: usize) -> Self {
        SeenCache {
            current: FoldSet::default(),
            previous: FoldSet::default(),
            generation: generation.max(1),
        }
    }

    /// True when the URL with fingerprint `fp` on host `host` is cached (it was seen).
    pub fn contains(&self, host: u32, fp: &Fingerprint) -> bool {
        let k = key(host, fp);
        self.current.contains(&k) || self.previous.contains(&k)
    }

    /// Records that the URL with fingerprint `fp` on host `host` was seen.
    pub fn insert(&mut self, host: u32, fp: &Fingerprint) {
        if self.current.len() >= self.generation {
            self.previous = std::mem::take(&mut self.current);
            self.current.reserve(self.generation);
        }
        self.current.insert(key(host, fp));
    }
}

fn key(host: u32, fp: &Fingerprint) -> u128 {
    let mut k = [0u8; 16];
    k[..4].copy_from_slice(&host.to_be_bytes());
    k[4..].copy_from_slice(fp);
    u128::from_be_bytes(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(n: u8) -> (u32, Fingerprint) {
        (u32::from(n), [n; 12])
    }

    #[test]
    fn keeps_the_last_generation_and_forgets_older_ones() {
        let mut c = SeenCache::new(2);
        c.insert(k(1).0, &k(1).1);
        c.insert(k(2).0, &k(2).1);
        c.insert(k(3).0, &k(3).1); // 1, 2 become the previous generation
        assert!(c.contains(k(1).0, &k(1).1) && c.contains(k(3).0, &k(3).1));
        c.insert(k(4).0, &k(4).1);
        c.insert(k(5).0, &k(5).1); // 3, 4 previous; 1, 2 forgotten
        assert!(!c.contains(k(1).0, &k(1).1) && !c.contains(k(2).0, &k(2).1));
        assert!(
            c.contains(k(3).0, &k(3).1)
                && c.contains(k(4).0, &k(4).1)
                && c.contains(k(5).0, &k(5).1)
        );
    }
}
