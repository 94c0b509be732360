//! The YAML layer's hashers: [`FastHasher`] for the parser's short-key tables (mapping
//! keys, key sharing), and [`IdHasher`] for the emitter's table of node addresses.
//!
//! [`FastHasher`]: word-at-a-time multiply-rotate hashing (the scheme of rustc's `FxHasher`),
//! several times faster than the standard SipHash on short keys. It is not resistant to
//! chosen collisions, so callers use it only on bounded tables (a fixed-size cache, mappings
//! up to [`SMALL_TABLE`] entries) and fall back to the standard hasher beyond.

use std::hash::{BuildHasherDefault, Hasher};

/// Largest table the fast hasher is used for; a mapping of hostile colliding keys this size
/// costs at most about half a million key comparisons.
pub(crate) const SMALL_TABLE: usize = 1024;

const K: u64 = 0xf135_7aea_2e62_a9c5;

/// See the module docs.
#[derive(Default, Clone, Copy)]
pub(crate) struct FastHasher(u64);

/// Builds [`FastHasher`]s.
pub(crate) type FastBuild = BuildHasherDefault<FastHasher>;

impl FastHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(26) ^ word).wrapping_mul(K);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn finish(&self) -> u64 {
        // Fold the high bits down (hashbrown takes buckets from the low bits) and mix once
        // more (a murmur-style finaliser): the parser's scalar cache takes a slot, two
        // `seen` places and a tag from different bit ranges of one hash, which the
        // multiply-rotate state alone leaves correlated.
        let x = self.0 ^ (self.0 >> 32);
        let x = x.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        x ^ (x >> 29)
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            self.add(tail_word(rest));
        }
    }

    #[inline]
    fn write_u8(&mut self, v: u8) {
        self.add(u64::from(v));
    }

    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.add(v);
    }

    #[inline]
    fn write_usize(&mut self, v: usize) {
        self.add(v as u64);
    }
}

/// The bytes of `rest` (1 to 7 of them) as one little-endian word, without a variable-length
/// copy: two overlapping fixed-size loads.
#[inline]
fn tail_word(rest: &[u8]) -> u64 {
    let n = rest.len();
    let at = |i: usize| u64::from(rest.get(i).copied().unwrap_or(0));
    if n >= 4 {
        let lo = rest
            .first_chunk::<4>()
            .map_or(0, |b| u32::from_le_bytes(*b));
        let hi = rest
            .get(n - 4..)
            .and_then(|b| b.first_chunk::<4>())
            .map_or(0, |b| u32::from_le_bytes(*b));
        // `hi` holds bytes n-4..n; its top n-4 bytes are bytes 4..n
        u64::from(lo) | ((u64::from(hi) >> (8 * (8 - n))) << 32)
    } else {
        at(0) | (at(n / 2) << 8) | (at(n - 1) << 16)
    }
}

/// Identity hasher for node addresses (aligned pointers, mixed so the low bits vary).
/// It need not resist chosen keys: the keys are this process's own addresses.
#[derive(Default)]
pub(crate) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn write_usize(&mut self, v: usize) {
        let h = (v as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = h ^ (h >> 29);
    }
}

/// Builds [`IdHasher`]s.
pub(crate) type IdBuild = BuildHasherDefault<IdHasher>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{BuildHasher, Hash};

    fn h<T: Hash>(v: T) -> u64 {
        FastBuild::default().hash_one(v)
    }

    #[test]
    fn distinct_short_keys_hash_apart() {
        let keys: Vec<String> = (0..10_000).map(|i| format!("k{i:04}")).collect();
        let mut hashes: Vec<u64> = keys.iter().map(|k| h(k.as_str())).collect();
        hashes.sort_unstable();
        hashes.dedup();
        assert_eq!(hashes.len(), keys.len());
        // the prefix-free str encoding keeps "ab"+"c" apart from "a"+"bc"
        assert_ne!(h(("ab", "c")), h(("a", "bc")));
    }

    #[test]
    fn tail_word_is_the_bytes_in_order() {
        for n in 1..8usize {
            let bytes: Vec<u8> = (1..=n as u8).collect();
            let got = tail_word(&bytes);
            assert_eq!(got & 0xff, 1, "{n} bytes: first byte lowest");
            if n >= 4 {
                let mut w = [0u8; 8];
                w[..n].copy_from_slice(&bytes);
                assert_eq!(got, u64::from_le_bytes(w), "{n} bytes");
            }
        }
        // below 4 bytes the word is not the plain bytes, but still tells every text apart
        for n in 1..4usize {
            let alphabet = [0u8, 1, 2, 255];
            let mut words = std::collections::HashSet::new();
            let total = alphabet.len().pow(n as u32);
            for code in 0..total {
                let text: Vec<u8> = (0..n)
                    .map(|i| alphabet[code / alphabet.len().pow(i as u32) % alphabet.len()])
                    .collect();
                words.insert(tail_word(&text));
            }
            assert_eq!(words.len(), total, "{n} bytes");
        }
    }
}
