//! A mark worker's cache of live objects and bytes per page (ZGC's `ZMarkCache`).
//!
//! Marking learns an object's size when it traces the object, and each page counts its live
//! objects (to size its forwarding table) and their bytes (for the relocation-set selection).
//! Adding them to the page's atomic counters object by object is a locked read-modify-write
//! per object on a cache line every marker of the page writes (in a profile of heap-churn's
//! marking, a fifth of the tracing function's samples fell right after the bytes' add). Objects
//! that are traced one after the other mostly lie on
//! the same few pages (allocation and relocation keep neighbours together), and a heap's
//! marking visits each of its pages many times over, so each worker sums its objects and bytes
//! per granule in a direct-mapped cache and adds a sum to the page's counters only when its
//! entry is evicted by another granule or the cache is flushed. The cache has 1,024 entries,
//! as many as the granules of 2 GiB of heap (16 KiB per worker): with 64, the trees of a 1 GiB
//! heap-churn heap, linked at random over its 512 granules, evicted sums often enough that a
//! profile put 8% of the tracing function's samples right after the locked add.
//!
//! The cache holds granule offsets and sums only, never page references, so it outlives a
//! repin of the worker's epoch guard; the worker looks each page up when it adds a sum. Every
//! worker flushes when it stops tracing, so the pages' counts are complete when marking ends,
//! before the relocation-set selection reads them (and frees a page whose count is 0).

use gc_core::{Offset, GRANULE_SIZE};

/// Entries of the cache (a power of two).
const ENTRIES: usize = 1024;

/// One granule's sums: the granule's index plus one (0: empty), its objects and bytes not yet
/// added. A granule of 2 MiB holds at most 2^17 objects (16 bytes each at least), so its
/// object count fits 32 bits; the bytes of a large object need 64.
#[derive(Clone, Copy, Default)]
struct Entry {
    key: u32,
    objects: u32,
    bytes: u64,
}

/// A mark worker's per-granule live sums. See the module documentation.
pub(super) struct LiveCache {
    entries: Box<[Entry]>,
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
            entries: vec![Entry::default(); ENTRIES].into_boxed_slice(),
        }
    }

    /// Counts one live object of `bytes` bytes at `off`. An evicted sum goes to `add`, with
    /// an offset in its granule (the granule's start).
    #[inline]
    pub(super) fn add(&mut self, off: Offset, bytes: u64, add: impl FnOnce(Offset, Live)) {
        let granule = off.raw() / GRANULE_SIZE;
        // Offsets lie below 2^43 (the colors sit above them): a granule index below 2^22.
        let key = granule as u32 + 1;
        let e = &mut self.entries[granule as usize % ENTRIES];
        if e.key != key {
            let old = std::mem::replace(
                e,
                Entry {
                    key,
                    ..Entry::default()
                },
            );
            if let Some((at, sum)) = old.sum() {
                add(at, sum);
            }
        }
        e.objects += 1;
        e.bytes += bytes;
    }

    /// Gives every sum to `add` (as [`Self::add`] does at eviction) and empties the cache.
    pub(super) fn flush(&mut self, mut add: impl FnMut(Offset, Live)) {
        for e in self.entries.iter_mut() {
            if let Some((at, sum)) = std::mem::take(e).sum() {
                add(at, sum);
            }
        }
    }
}

impl Entry {
    /// The granule's start and its sums, if the entry holds any.
    fn sum(self) -> Option<(Offset, Live)> {
        (self.key != 0 && self.objects != 0).then(|| {
            (
                Offset::from_raw(u64::from(self.key - 1) * GRANULE_SIZE),
                Live {
                    objects: u64::from(self.objects),
                    bytes: self.bytes,
                },
            )
        })
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
