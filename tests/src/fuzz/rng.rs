//! The fuzz targets' seeded random number generator: a splitmix64 sequence. Every case of a
//! fuzz target draws all its choices from one `Rng` made from the case's seed, so a seed
//! replays its case exactly (the input, not the collector's interleaving with it); a change
//! here changes what every recorded seed replays.

/// The splitmix64 finalizer: a bijective mix of 64 bits.
pub fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// A small deterministic generator (splitmix64).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// The generator of one case.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        splitmix(self.0)
    }

    /// Uniform in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    /// Uniform index into a collection of `n` items (0 when `n` is 0).
    pub fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }

    /// True with probability `per_mille` / 1000.
    pub fn chance(&mut self, per_mille: u64) -> bool {
        self.below(1000) < per_mille
    }

    /// One item of a non-empty slice.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.index(items.len())]
    }

    /// A number whose bit length is uniform (0 to 64 bits): small and huge values alike.
    pub fn wide(&mut self) -> u64 {
        let bits = self.below(65);
        if bits == 0 {
            0
        } else {
            self.next_u64() >> (64 - bits)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_replays_its_sequence_and_ranges_hold() {
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        for _ in 0..1000 {
            assert_eq!(a.next_u64(), b.next_u64());
            let r = a.range(3, 9);
            assert!((3..=9).contains(&r));
            assert_eq!(b.range(3, 9), r);
            let below = a.below(5);
            assert!(below < 5);
            assert_eq!(b.below(5), below);
        }
        assert_eq!(Rng::new(1).below(0), 0);
        let widths: std::collections::BTreeSet<u32> =
            (0..2000).map(|_| 64 - a.wide().leading_zeros()).collect();
        assert!(widths.contains(&0) && widths.contains(&64) && widths.len() > 50);
    }
}
