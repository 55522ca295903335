//! A bounded memory cache in front of the on-disk seen set, so the links every page repeats
//! (navigation, footers) are answered without a B-tree lookup.
//!
//! Two generations of fingerprints: lookups check both, inserts go to the current one, and when
//! it is full the older generation is dropped. Recently offered URLs stay cached; memory is at
//! most two generations of 16-byte keys.
//!
//! A key is the URL's fingerprint alone, not its host's id with it as on disk: the fingerprint
//! is of the whole canonical URL, host included, so it names the same URL, and a page's links
//! on other hosts are then answered without looking their hosts' ids up (a hash of the name and
//! a read of the stored name per link, which misses the CPU caches: 2.45 us per page of small
//! pages; docs/PERFORMANCE.md).

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

use super::storage::Fingerprint;

/// Hashes a key that is already uniformly random (96 bits of SHA-1) by folding it to 64 bits:
/// SipHash would spend time making random bits random (it showed at ~1.5% of a crawl's samples
/// on small pages).
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

    /// True when the URL with fingerprint `fp` is cached (it was seen).
    pub fn contains(&self, fp: &Fingerprint) -> bool {
        let k = key(fp);
        self.current.contains(&k) || self.previous.contains(&k)
    }

    /// Records that the URL with fingerprint `fp` was seen.
    pub fn insert(&mut self, fp: &Fingerprint) {
        if self.current.len() >= self.generation {
            self.previous = std::mem::take(&mut self.current);
            self.current.reserve(self.generation);
        }
        self.current.insert(key(fp));
    }
}

fn key(fp: &Fingerprint) -> u128 {
    let mut k = [0u8; 16];
    k[4..].copy_from_slice(fp);
    u128::from_be_bytes(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(n: u8) -> Fingerprint {
        [n; 12]
    }

    #[test]
    fn keeps_the_last_generation_and_forgets_older_ones() {
        let mut c = SeenCache::new(2);
        c.insert(&k(1));
        c.insert(&k(2));
        c.insert(&k(3)); // 1, 2 become the previous generation
        assert!(c.contains(&k(1)) && c.contains(&k(3)));
        c.insert(&k(4));
        c.insert(&k(5)); // 3, 4 previous; 1, 2 forgotten
        assert!(!c.contains(&k(1)) && !c.contains(&k(2)));
        assert!(c.contains(&k(3)) && c.contains(&k(4)) && c.contains(&k(5)));
    }

    #[test]
    fn a_key_is_the_whole_fingerprint() {
        let mut c = SeenCache::new(8);
        let mut fp = k(7);
        c.insert(&fp);
        for i in 0..fp.len() {
            fp[i] ^= 1;
            assert!(!c.contains(&fp), "byte {i} is part of the key");
            fp[i] ^= 1;
        }
        assert!(c.contains(&fp));
    }
}
