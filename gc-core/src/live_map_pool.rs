//! Recycled live maps of small pages: a dropped page's map kept for the next page (what ZGC
//! gets from its `ZPageCache`, which keeps freed `ZPage`s whole, live map included).
//!
//! A small page's live map is 64 KiB (two bits per 8-byte position of 2 MiB). Allocating one
//! per page put a 64 KiB `malloc` and its zeroing on a mutator's page allocation, and a
//! `malloc` that grows an arena changes the process's mappings, which waits for the
//! memory-map lock behind every page fault and `mprotect` of other threads. The pool hands out
//! the maps of dropped pages instead. A recycled map keeps its old bits but belongs to no
//! cycle ([`LiveMap::forget_cycle`]): no query of any cycle sees the old marks, and the first
//! marker of a cycle clears it, as it clears every map of an older cycle (the lazy reset) —
//! a new page's zeroed map was cleared there again anyway. Maps come back when a page's last
//! reference goes (`Drop for Page`), so no thread can still read a map the pool hands out.
//!
//! The maps the pool makes take their bits from a [`SideArena`] reserved for all of them at
//! once (as many slots as the pool keeps maps), so even the first map of a page, made on a
//! mutator, grows no `malloc` arena; only if the arena cannot be reserved, or is full, does a
//! map come from the global allocator.

use crate::live_map::LiveMap;
use crate::side_arena::SideArena;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Live maps of one size, kept for reuse.
pub struct LiveMapPool {
    /// Object positions of the maps kept.
    slots: usize,
    /// The most maps kept at once (as many as pages of that size fit in the heap).
    max: usize,
    free: Mutex<Vec<LiveMap>>,
    /// Where new maps' bits come from (`None`: the system refused the reservation).
    arena: Option<Arc<SideArena>>,
    created: AtomicU64,
    reused: AtomicU64,
}

impl LiveMapPool {
    /// A pool of maps for `slots` positions, keeping at most `max` of them, with an arena
    /// for the bits of `max` maps.
    pub fn new(slots: usize, max: usize) -> Self {
        LiveMapPool {
            slots,
            max,
            free: Mutex::new(Vec::new()),
            arena: SideArena::new(LiveMap::<AtomicU64>::words_for(slots), max),
            created: AtomicU64::new(0),
            reused: AtomicU64::new(0),
        }
    }

    /// Object positions of the maps the pool keeps.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// A map for the pool's slot count belonging to no cycle: a recycled one if the pool has
    /// one, else a new one.
    pub fn take(&self) -> LiveMap {
        let recycled = self.free.lock().pop();
        match recycled {
            Some(mut map) => {
                map.forget_cycle();
                self.reused.fetch_add(1, Ordering::Relaxed);
                map
            }
            None => {
                self.created.fetch_add(1, Ordering::Relaxed);
                LiveMap::new_in(self.slots, self.arena.as_ref())
            }
        }
    }

    /// Keep `map` for a later [`Self::take`], unless it is of another size or the pool is
    /// full (then it is freed).
    pub fn give_back(&self, map: LiveMap) {
        if map.slots() != LiveMap::<AtomicU64>::slots_for(self.slots) {
            return;
        }
        let mut free = self.free.lock();
        if free.len() < self.max {
            free.push(map);
        }
    }

    /// Maps allocated because the pool had none.
    pub fn created(&self) -> u64 {
        self.created.load(Ordering::Relaxed)
    }

    /// Maps handed out again.
    pub fn reused(&self) -> u64 {
        self.reused.load(Ordering::Relaxed)
    }

    /// The arena the pool's maps take their bits from, if it could be reserved.
    pub fn arena(&self) -> Option<&Arc<SideArena>> {
        self.arena.as_ref()
    }

    /// Bytes of the maps kept now.
    pub fn pooled_bytes(&self) -> u64 {
        let free = self.free.lock();
        free.iter().map(|m| m.slots() as u64 / 4).sum()
    }
}

impl Drop for LiveMapPool {
    /// The kept maps go with the pool: their arena need not zero them for reuse.
    fn drop(&mut self) {
        if let Some(a) = &self.arena {
            a.retire();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A recycled map shows none of its old marks or counts to any cycle, the one it was
    /// marked in included, and the first mark of a cycle clears it.
    #[test]
    fn a_recycled_map_forgets_its_marks() {
        let pool = LiveMapPool::new(1000, 4);
        let map = pool.take();
        assert_eq!(pool.created(), 1);
        map.mark(5, 10, true, 32);
        map.mark(5, 11, false, 16);
        pool.give_back(map);
        let map = pool.take();
        assert_eq!(
            (pool.created(), pool.reused()),
            (1, 1),
            "the map was reused"
        );
        for seq in [0, 1, 5, 6] {
            assert!(!map.is_marked(seq, 10) && !map.is_strongly_marked(seq, 10));
            assert!(!map.is_marked(seq, 11));
            assert_eq!((map.live_objects(seq), map.live_bytes(seq)), (0, 0));
            map.for_each_marked(seq, |i| panic!("stale mark {i} seen in cycle {seq}"));
        }
        // Marked again in the cycle of its old marks: only the new mark.
        assert!(map.mark_strong(5, 12));
        assert!(!map.is_marked(5, 10) && !map.is_marked(5, 11));
        let mut seen = vec![];
        map.for_each_marked(5, |i| seen.push(i));
        assert_eq!(seen, vec![12]);
    }

    /// Maps of whole pages of bits (a small page's are 64 KiB) come from the pool's arena, as
    /// many as it keeps; beyond that, from the global allocator.
    #[test]
    fn new_maps_take_their_bits_from_the_arena() {
        let slots = 4096 * 32; // 4096 words: whole pages
        let pool = LiveMapPool::new(slots, 2);
        let arena = pool
            .arena()
            .expect("an arena for maps of whole pages")
            .clone();
        let (a, b, c) = (pool.take(), pool.take(), pool.take());
        assert_eq!(
            arena.carved(),
            2,
            "two slots, for the two maps the pool keeps"
        );
        assert!(a.mark(1, 7, true, 16).newly_marked && c.mark(1, 7, true, 16).newly_marked);
        pool.give_back(a);
        pool.give_back(b);
        pool.give_back(c);
        assert_eq!(arena.carved(), 2, "the maps kept hold their slots");
        assert_eq!(
            LiveMapPool::new(1000, 2).arena().map(|_| ()),
            None,
            "not whole pages"
        );
    }

    #[test]
    fn keeps_maps_of_its_size_up_to_its_limit() {
        let pool = LiveMapPool::new(1000, 1);
        pool.give_back(LiveMap::new(64));
        assert_eq!(pool.pooled_bytes(), 0, "a map of another size is freed");
        pool.give_back(LiveMap::new(1000));
        pool.give_back(LiveMap::new(1000));
        assert_eq!(
            pool.pooled_bytes(),
            1024 / 4,
            "one map kept, the second freed"
        );
        let _ = pool.take();
        let _ = pool.take();
        assert_eq!((pool.created(), pool.reused()), (1, 1));
    }
}
