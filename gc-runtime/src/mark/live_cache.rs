//! A mark worker's cache of live objects and bytes per page (ZGC's `ZMarkCache`).
//!
//! Marking learns an object's size when it traces the object, and each page counts its live
//! objects (to size its forwarding table) and their bytes (for the relocation-set selection).
//! Adding them to the page's atomic counters object by object is a locked read-modify-write
//! per object on a cache line every marker of the page writes (in a profile of heap-churn's
//! marking, a fifth of the tracing function's samples fell right after the bytes' add). Objects
//! that are traced one after the other mostly lie on
//! the same few pages (allocation and relocation keep neighbours together), so each worker
//! sums its objects and bytes per granule in a small direct-mapped cache and adds a sum to the page's
//! counters only when its entry is evicted by another granule or the cache is flushed.
//!
//! The cache holds granule offsets and sums only, never page references, so it outlives a
//! repin of the worker's epoch guard; the worker looks each page up when it adds a sum. Every
//! worker flushes when it stops tracing, so the pages' counts are complete when marking ends,
//! before the relocation-set selection reads them (and frees a page whose count is 0).

use gc_core::{Offset, GRANULE_SIZE};

/// Entries of the cache (a power of two).
const ENTRIES: usize = 64;

/// A mark worker's per-granule live sums. See the module documentation.
pub(super) struct LiveCache {
    /// Per entry: the granule's start offset plus one (0: empty), and the objects and bytes
    /// not yet added.
    entries: [(u64, Live); ENTRIES],
}

/// Live objects and their bytes, summed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Live {
    pub(super) objects: u64,
    pub(super) bytes: u64,
}

impl LiveCache {
    pub(super) fn new() -> Self {
        LiveCache {
            entries: [(0, Live::default()); ENTRIES],
        }
    }

    /// Counts one live object of `bytes` bytes at `off`. An evicted sum goes to `add`, with
    /// an offset in its granule (the granule's start).
    #[inline]
    pub(super) fn add(&mut self, off: Offset, bytes: u64, add: impl FnOnce(Offset, Live)) {
        let granule = off.raw() / GRANULE_SIZE;
        let key = granule * GRANULE_SIZE + 1;
        let e = &mut self.entries[granule as usize % ENTRIES];
        if e.0 != key {
            let (old, sum) = std::mem::replace(e, (key, Live::default()));
            if old != 0 && sum.objects != 0 {
                add(Offset::from_raw(old - 1), sum);
            }
        }
        e.1.objects += 1;
        e.1.bytes += bytes;
    }

    /// Gives every sum to `add` (as [`Self::add`] does at eviction) and empties the cache.
    pub(super) fn flush(&mut self, mut add: impl FnMut(Offset, Live)) {
        for e in &mut self.entries {
            let (key, sum) = std::mem::take(e);
            if key != 0 && sum.objects != 0 {
                add(Offset::from_raw(key - 1), sum);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sums of one granule are given once, at eviction or flush, to an offset of the granule;
    /// granules that share an entry are both counted; a flush empties the cache.
    #[test]
    fn sums_are_given_at_eviction_and_flush() {
        let mut given: Vec<(u64, u64, u64)> = Vec::new();
        let mut cache = LiveCache::new();
        let g = GRANULE_SIZE;
        let a = Offset::from_raw(3 * g + 512);
        let b = Offset::from_raw((3 + ENTRIES as u64) * g + 64);
        let c = Offset::from_raw(4 * g);
        for _ in 0..10 {
            cache.add(a, 100, |o, n| given.push((o.raw(), n.objects, n.bytes)));
            cache.add(c, 1, |o, n| given.push((o.raw(), n.objects, n.bytes)));
        }
        assert!(given.is_empty(), "summed, not given");
        cache.add(b, 7, |o, n| given.push((o.raw(), n.objects, n.bytes)));
        assert_eq!(given, vec![(3 * g, 10, 1000)], "b evicted a's sum");
        cache.flush(|o, n| given.push((o.raw(), n.objects, n.bytes)));
        given.sort_unstable();
        assert_eq!(
            given,
            vec![
                (3 * g, 10, 1000),
                (4 * g, 10, 10),
                ((3 + ENTRIES as u64) * g, 1, 7)
            ]
        );
        cache.flush(|_, _| panic!("a flush empties the cache"));
        // Granule 0 (offset 0) is a key like any other.
        cache.add(Offset::from_raw(8), 5, |_, _| panic!("nothing to evict"));
        let mut sum = Live::default();
        cache.flush(|o, n| {
            assert_eq!(o.raw(), 0);
            sum.objects += n.objects;
            sum.bytes += n.bytes;
        });
        assert_eq!(
            sum,
            Live {
                objects: 1,
                bytes: 5
            }
        );
    }
}
