//! A bounded memory cache in front of the on-disk seen set, so the links every page repeats
//! (navigation, footers) are answered without a B-tree lookup.
//!
//! Two generations of fingerprints: lookups check both, inserts go to the current one, and when
//! it is full the older generation is dropped. Recently offered URLs stay cached; memory is at
//! most two generations of 16-byte keys.

use std::collections::HashSet;

use crate::store::SeenKey;

/// A two-generation set of recently seen fingerprints.
#[derive(Debug)]
pub struct SeenCache {
    current: HashSet<u128>,
    previous: HashSet<u128>,
    generation: usize,
}

impl SeenCache {
    /// A cache of up to `2 * generation` keys.
    pub fn new(generation: usize) -> Self {
        SeenCache {
            current: HashSet::new(),
            previous: HashSet::new(),
            generation: generation.max(1),
        }
    }

    /// True when `key` is cached (it was seen).
    pub fn contains(&self, key: &SeenKey) -> bool {
        let k = u128::from_be_bytes(*key);
        self.current.contains(&k) || self.previous.contains(&k)
    }

    /// Records that `key` was seen.
    pub fn insert(&mut self, key: &SeenKey) {
        if self.current.len() >= self.generation {
            self.previous = std::mem::take(&mut self.current);
            self.current.reserve(self.generation);
        }
        self.current.insert(u128::from_be_bytes(*key));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(n: u8) -> SeenKey {
        [n; 16]
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
}
