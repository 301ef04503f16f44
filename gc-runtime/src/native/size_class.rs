//! Size classes of the native buffer pool: powers of two from `min_class` (512 B by default) up
//! to the largest pooled size (a quarter of a chunk); a larger request is unpooled (one `mmap`
//! of its own, like Netty's "huge" allocations and jemalloc's large extents).
//!
//! It mirrors Netty's `SizeClasses` and jemalloc's bins, simplified to powers of two: a buffer
//! wastes less than half its capacity (internal fragmentation) and the class of a length is
//! one `next_power_of_two`.

/// The classes `min .. max`, both powers of two.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct SizeClasses {
    min_shift: u32,
    max_shift: u32,
}

impl SizeClasses {
    /// Classes from `min` to `max` bytes; both must be powers of two with `min <= max`
    /// (checked by `PoolConfig::validate`).
    pub(super) fn new(min: usize, max: usize) -> Self {
        debug_assert!(min.is_power_of_two() && max.is_power_of_two() && min <= max);
        SizeClasses {
            min_shift: min.trailing_zeros(),
            max_shift: max.trailing_zeros(),
        }
    }

    /// How many classes there are.
    pub(super) fn count(&self) -> usize {
        (self.max_shift - self.min_shift + 1) as usize
    }

    /// The slot size of class `class`.
    pub(super) fn size(&self, class: usize) -> usize {
        1 << (self.min_shift as usize + class)
    }

    /// The largest pooled length.
    pub(super) fn max_size(&self) -> usize {
        1 << self.max_shift
    }

    /// The class whose slots hold `len` bytes (the smallest that fits); `None` when `len` is
    /// too large to pool. `len` is at least 1.
    pub(super) fn class_of(&self, len: usize) -> Option<usize> {
        if len > self.max_size() {
            return None;
        }
        let shift = len.next_power_of_two().trailing_zeros().max(self.min_shift);
        Some((shift - self.min_shift) as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_length_gets_the_smallest_class_that_fits() {
        let c = SizeClasses::new(512, 512 << 10);
        assert_eq!(c.count(), 11);
        assert_eq!(c.class_of(1), Some(0));
        assert_eq!(c.class_of(512), Some(0));
        assert_eq!(c.class_of(513), Some(1));
        assert_eq!(c.size(1), 1024);
        assert_eq!(c.class_of(64 << 10), Some(7));
        assert_eq!(c.class_of((64 << 10) + 1), Some(8));
        assert_eq!(c.class_of(512 << 10), Some(10));
        assert_eq!(c.class_of((512 << 10) + 1), None);
        for len in [1, 100, 512, 777, 4096, 5000, 300_000] {
            let k = c.class_of(len).unwrap();
            assert!(c.size(k) >= len, "class {k} too small for {len}");
            assert!(
                k == 0 || c.size(k - 1) < len,
                "class {k} not the smallest for {len}"
            );
        }
    }
}
