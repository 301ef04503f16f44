//! Per-page live map: the off-heap mark bitmap (ZGC's `ZLiveMap`).
//!
//! Two bits per object slot (an aligned position in the page): bit `2i` is *marked* (strong or
//! finalizable), bit `2i+1` is *strong*. Live objects and live bytes are counted as objects are
//! first marked ([`LiveMap::mark`]), or by a tracer that marks with [`LiveMap::mark_strong`]
//! and adds its per-page sums later ([`LiveMap::add_live`]). The map is reset lazily: it carries the sequence number of the cycle it was
//! last cleared in, and the first marker of a new cycle clears it, so Pause Mark Start does no
//! per-page work. A dropped page's map is reused for a new page
//! ([`crate::live_map_pool`]): it keeps its old bits but is made to belong to no cycle
//! ([`LiveMap::forget_cycle`]), and the first marker of a cycle clears it like any other.

use crate::side_arena::{SideArena, WordArray};
use crate::sync::AtomicWord;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

const RESETTING: u64 = 1 << 63;
/// The sequence number of a recycled map: no cycle's (cycles count up from 1 and never get
/// near it), so no query sees its old marks and every cycle's first marker clears it.
const RECYCLED: u64 = RESETTING - 1;

/// The result of marking one object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MarkResult {
    /// This call set the marked bit: the object's bytes were added to the live counts.
    pub newly_marked: bool,
    /// This call set the strong bit: the marker that gets this must trace the object strongly.
    pub newly_strong: bool,
}

/// A mark bitmap for one page (`repr(C)`: its fields first in a [`crate::Page`]'s first
/// cache line, see there).
#[repr(C)]
pub struct LiveMap<W: AtomicWord = AtomicU64> {
    bits: WordArray<W>,
    /// Sequence number of the cycle this map belongs to (`RESETTING` while being cleared).
    seqnum: W,
    live_objects: W,
    live_bytes: W,
}

impl<W: AtomicWord> LiveMap<W> {
    /// A map for `slots` object positions, belonging to no cycle yet (seqnum 0).
    pub fn new(slots: usize) -> Self {
        Self::new_in(slots, None)
    }

    /// Words of the bits of a map for `slots` object positions (the slot size of an arena
    /// the bits can come from).
    pub fn words_for(slots: usize) -> usize {
        (slots * 2).div_ceil(64).max(1)
    }

    /// A map for `slots` object positions, belonging to no cycle yet, whose bits are a slot
    /// of `arena` when it has slots of [`Self::words_for`] free (see
    /// [`crate::side_arena`]), else a box.
    pub fn new_in(slots: usize, arena: Option<&Arc<SideArena>>) -> Self {
        LiveMap {
            bits: W::zeroed_array(Self::words_for(slots), arena),
            seqnum: W::new_word(0),
            live_objects: W::new_word(0),
            live_bytes: W::new_word(0),
        }
    }

    /// Number of object positions the map covers.
    pub fn slots(&self) -> usize {
        self.bits.len() * 32
    }

    /// Number of object positions a map made for `slots` positions covers (whole words).
    pub fn slots_for(slots: usize) -> usize {
        Self::words_for(slots) * 32
    }

    /// A map that covers no position (holds no memory), to leave behind when a map is moved
    /// out of its page.
    pub fn empty() -> Self {
        LiveMap {
            bits: WordArray::default(),
            seqnum: W::new_word(RECYCLED),
            live_objects: W::new_word(0),
            live_bytes: W::new_word(0),
        }
    }

    /// Make the map, reused for a new page, belong to no cycle: it keeps its old bits and
    /// counts, which no query of any cycle sees, and the first marker of a cycle clears them.
    /// (`&mut`: no other thread holds the map.)
    pub fn forget_cycle(&mut self) {
        self.seqnum.store(RECYCLED, Ordering::Relaxed);
    }

    /// True if the map holds marks of cycle `seqnum`.
    #[inline]
    pub fn is_current(&self, seqnum: u64) -> bool {
        self.seqnum.load(Ordering::Acquire) == seqnum
    }

    /// Make the map belong to cycle `seqnum`, clearing it if it belonged to an older one.
    #[inline]
    fn ensure_current(&self, seqnum: u64) {
        debug_assert!(seqnum != 0 && seqnum != RECYCLED && seqnum & RESETTING == 0);
        loop {
            let cur = self.seqnum.load(Ordering::Acquire);
            if cur == seqnum {
                return;
            }
            if cur & RESETTING == 0
                && self
                    .seqnum
                    .compare_exchange(cur, RESETTING, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            {
                for w in self.bits.iter() {
                    w.store(0, Ordering::Relaxed);
                }
                self.live_objects.store(0, Ordering::Relaxed);
                self.live_bytes.store(0, Ordering::Relaxed);
                // Release: the cleared bits happen-before any mark of the new cycle.
                self.seqnum.store(seqnum, Ordering::Release);
                return;
            }
            // Another marker is clearing (a few microseconds at most).
            std::hint::spin_loop();
            std::thread::yield_now();
        }
    }

    /// Mark position `index` in cycle `seqnum`; `strong` marks strongly, else finalizably.
    /// `size` is added to the live bytes the first time the object is marked.
    #[inline]
    pub fn mark(&self, seqnum: u64, index: usize, strong: bool, size: u64) -> MarkResult {
        self.ensure_current(seqnum);
        let bit = (index * 2) % 64;
        let word = &self.bits[index * 2 / 64];
        let mask = if strong { 0b11 << bit } else { 0b01 << bit };
        let old = word.fetch_or(mask, Ordering::AcqRel);
        let newly_marked = old & (1 << bit) == 0;
        let newly_strong = strong && old & (0b10 << bit) == 0;
        if newly_marked {
            self.live_objects.fetch_add(1, Ordering::Relaxed);
            // The collector's tracers mark with size 0 and add the bytes when they trace the
            // object: no atomic add of nothing on the marking path.
            if size != 0 {
                self.live_bytes.fetch_add(size, Ordering::Relaxed);
            }
        }
        MarkResult {
            newly_marked,
            newly_strong,
        }
    }

    /// Mark position `index` strongly in cycle `seqnum`, without counting it: true if this
    /// call set the strong bit (the caller must then trace the object, and count it with
    /// [`Self::add_live`] when it does). A collector's tracer counts what it traces per page
    /// in a private cache instead of one locked add per object on this map's counters, a
    /// cache line every marker of the page would write.
    ///
    /// One read of the sequence number; a word already strongly marked is only read (a
    /// locked read-modify-write takes the line exclusive even when it changes nothing).
    #[inline]
    pub fn mark_strong(&self, seqnum: u64, index: usize) -> bool {
        if !self.is_current(seqnum) {
            self.ensure_current(seqnum);
        }
        let bit = (index * 2) % 64;
        let word = &self.bits[index * 2 / 64];
        if word.load(Ordering::Acquire) & (0b10 << bit) != 0 {
            return false;
        }
        word.fetch_or(0b11 << bit, Ordering::AcqRel) & (0b10 << bit) == 0
    }

    /// The address of the word holding position `index`'s bits, for a prefetch: a marker that
    /// will mark the position soon fetches the word into the cache first.
    #[inline]
    pub fn word_addr(&self, index: usize) -> *const u8 {
        self.bits
            .get(index * 2 / 64)
            .map_or(std::ptr::null(), |w| w as *const W as *const u8)
    }

    /// True if position `index` is marked (strongly or finalizably) in cycle `seqnum`.
    #[inline]
    pub fn is_marked(&self, seqnum: u64, index: usize) -> bool {
        self.is_current(seqnum)
            && self.bits[index * 2 / 64].load(Ordering::Acquire) >> ((index * 2) % 64) & 1 != 0
    }

    /// True if position `index` is strongly marked in cycle `seqnum`.
    #[inline]
    pub fn is_strongly_marked(&self, seqnum: u64, index: usize) -> bool {
        self.is_current(seqnum)
            && self.bits[index * 2 / 64].load(Ordering::Acquire) >> ((index * 2) % 64) & 2 != 0
    }

    /// Live objects counted in cycle `seqnum` (0 if the map is from another cycle).
    pub fn live_objects(&self, seqnum: u64) -> u64 {
        if self.is_current(seqnum) {
            self.live_objects.load(Ordering::Acquire)
        } else {
            0
        }
    }

    /// Add `objects` live objects of `bytes` bytes in all to the counts of cycle `seqnum`
    /// (for markers that mark with [`Self::mark_strong`] and count objects when they trace
    /// them).
    #[inline]
    pub fn add_live(&self, seqnum: u64, objects: u64, bytes: u64) {
        debug_assert!(
            self.is_current(seqnum),
            "live objects added to a map of another cycle"
        );
        let _ = seqnum;
        self.live_objects.fetch_add(objects, Ordering::Relaxed);
        self.live_bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Live bytes counted in cycle `seqnum` (0 if the map is from another cycle).
    pub fn live_bytes(&self, seqnum: u64) -> u64 {
        if self.is_current(seqnum) {
            self.live_bytes.load(Ordering::Acquire)
        } else {
            0
        }
    }

    /// Call `f` with every marked position of cycle `seqnum`, in increasing order.
    pub fn for_each_marked(&self, seqnum: u64, mut f: impl FnMut(usize)) {
        if !self.is_current(seqnum) {
            return;
        }
        for (wi, w) in self.bits.iter().enumerate() {
            // Keep only the "marked" bit of each pair.
            let mut v = w.load(Ordering::Acquire) & 0x5555_5555_5555_5555;
            while v != 0 {
                let b = v.trailing_zeros() as usize;
                f(wi * 32 + b / 2);
                v &= v - 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mark_counts_once_and_resets_lazily() {
        let m: LiveMap = LiveMap::new(1000);
        let r = m.mark(1, 10, true, 32);
        assert!(r.newly_marked && r.newly_strong);
        let r = m.mark(1, 10, true, 32);
        assert!(!r.newly_marked && !r.newly_strong);
        let r = m.mark(1, 11, false, 16);
        assert!(r.newly_marked && !r.newly_strong);
        let r = m.mark(1, 11, true, 16);
        assert!(!r.newly_marked && r.newly_strong);
        assert_eq!(m.live_objects(1), 2);
        assert_eq!(m.live_bytes(1), 48);
        let mut seen = vec![];
        m.for_each_marked(1, |i| seen.push(i));
        assert_eq!(seen, vec![10, 11]);
        // A new cycle sees nothing until it marks, then only its own marks.
        assert!(!m.is_marked(2, 10));
        assert_eq!(m.live_bytes(2), 0);
        m.mark(2, 999, true, 8);
        assert!(!m.is_marked(2, 10));
        assert!(m.is_marked(2, 999));
        assert_eq!(m.live_objects(2), 1);
    }

    /// `mark_strong` sets both bits once, counts nothing, and clears a map of an older cycle
    /// first; `add_live` adds to both counts.
    #[test]
    fn mark_strong_marks_once_and_counts_nothing() {
        let m: LiveMap = LiveMap::new(1000);
        m.mark(1, 5, true, 8);
        assert!(m.mark_strong(2, 7), "first strong mark of cycle 2");
        assert!(
            !m.mark_strong(2, 7),
            "second strong mark of the same position"
        );
        assert!(!m.is_marked(2, 5), "cycle 1's mark cleared");
        assert!(m.is_strongly_marked(2, 7));
        assert_eq!((m.live_objects(2), m.live_bytes(2)), (0, 0));
        m.add_live(2, 2, 48);
        assert_eq!((m.live_objects(2), m.live_bytes(2)), (2, 48));
        // A finalizable mark is made strong by mark_strong, once.
        m.mark(2, 9, false, 0);
        assert!(m.mark_strong(2, 9));
        assert!(!m.mark_strong(2, 9));
        assert_eq!(m.live_objects(2), 3, "only `mark` counted");
    }
}
