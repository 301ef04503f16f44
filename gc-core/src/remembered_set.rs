//! A remembered set: the slots of a stretch of old memory that may point into the young generation
//! (ZGC's `ZRememberedSet`), the piece of a generational collector that lets a young
//! collection find the old-to-young pointers without tracing the old generation.
//!
//! One bit per 8-byte word of the page says "this word is a slot that held a young pointer
//! when a store put it there". There are two bitmaps, *current* and *previous*, and which one
//! is current is a process-wide [`RemsetIndex`] the collector flips at a young collection's
//! Pause Mark Start (the runtime keeps one set per 2 MiB granule, so a page's set is its
//! granules' sets, and flips at a full cycle's Pause Mark Start too, when nothing is young
//! and the bitmap's contents are stale):
//!
//! - the **store barrier** sets bits in the current bitmap ([`RememberedSet::remember`]): a
//!   load first, so a slot stored to over and over costs one read after its first store, and a
//!   `fetch_or` only for a bit not yet set;
//! - the **young collection** walks the previous bitmap — the stores of the whole last
//!   interval between two flips — and takes every bit it visits
//!   ([`RememberedSet::drain_previous`] swaps each word with 0), so the bitmap is empty again
//!   when the next flip makes it current. A slot that still points young after the young
//!   collection is remembered again, in the current bitmap, by the scanner itself.
//!
//! The flip happens inside a pause, and a store barrier runs between safepoints, so no barrier
//! can read the index before a flip and set its bit after it: every bit a barrier sets lands
//! in a bitmap that is current for the whole interval the barrier ran in. Scanning the
//! previous bitmap and setting bits in the current one touch different words, so the two run
//! concurrently without a lock; two barriers (or a barrier and the scanner re-remembering)
//! setting bits of one word meet only in `fetch_or`s, which commute.
//!
//! The map costs one bit per word per bitmap: 2/64 of the page (3.1%). It is generic over
//! [`AtomicWord`] so the loom models check this code itself.

use crate::side_arena::{SideArena, WordArray};
use crate::sync::AtomicWord;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Bytes of heap per remembered-set bit: one bit per 8-byte word (a slot is one word).
pub const REMSET_WORD_BYTES: u64 = 8;

/// Which of a remembered set's two bitmaps is current (0 or 1). The collector keeps one for
/// the whole heap and flips it at every young collection's Pause Mark Start; the other bitmap
/// is then *previous*, the one the young collection scans.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct RemsetIndex(u8);

impl RemsetIndex {
    /// The index that is current before any flip.
    pub const FIRST: RemsetIndex = RemsetIndex(0);

    /// The index after one flip: the previous bitmap becomes current.
    pub fn flipped(self) -> RemsetIndex {
        RemsetIndex(self.0 ^ 1)
    }

    /// The bitmap that is not current: the stores of the last interval, to scan.
    pub fn previous(self) -> RemsetIndex {
        self.flipped()
    }

    fn slot(self) -> usize {
        self.0 as usize
    }
}

/// The two bitmaps of one page's remembered set (see the module documentation).
pub struct RememberedSet<W: AtomicWord = AtomicU64> {
    bitmaps: [WordArray<W>; 2],
    /// Words of heap the set covers (its bits per bitmap).
    words: usize,
}

impl<W: AtomicWord> RememberedSet<W> {
    /// An empty set covering a page of `page_bytes` bytes (a multiple of 8; one bit per word).
    pub fn new(page_bytes: u64) -> Self {
        Self::new_in(page_bytes, None)
    }

    /// Words of each bitmap of a set covering `page_bytes` bytes (the slot size of an arena
    /// the bitmaps can come from).
    pub fn bitmap_words(page_bytes: u64) -> usize {
        ((page_bytes / REMSET_WORD_BYTES) as usize)
            .div_ceil(64)
            .max(1)
    }

    /// An empty set covering `page_bytes` bytes whose bitmaps are slots of `arena` when it
    /// has slots of [`Self::bitmap_words`] free (see [`crate::side_arena`]), else boxes.
    pub fn new_in(page_bytes: u64, arena: Option<&Arc<SideArena>>) -> Self {
        debug_assert!(page_bytes.is_multiple_of(REMSET_WORD_BYTES));
        let words = (page_bytes / REMSET_WORD_BYTES) as usize;
        let bitmap_words = Self::bitmap_words(page_bytes);
        RememberedSet {
            bitmaps: [
                W::zeroed_array(bitmap_words, arena),
                W::zeroed_array(bitmap_words, arena),
            ],
            words,
        }
    }

    /// Words of heap the set covers: `word` arguments are below this.
    pub fn words(&self) -> usize {
        self.words
    }

    /// Bytes the two bitmaps take (for memory reports).
    pub fn footprint_bytes(&self) -> u64 {
        (self.bitmaps[0].len() * 2 * std::mem::size_of::<u64>()) as u64
    }

    #[inline(always)]
    fn bit(&self, index: RemsetIndex, word: usize) -> (&W, u64) {
        assert!(
            word < self.words,
            "word {word} beyond the {} the set covers",
            self.words
        );
        (&self.bitmaps[index.slot()][word / 64], 1u64 << (word % 64))
    }

    /// The store barrier's part: remember the slot at word `word` of the page in the bitmap
    /// `current`. Returns true if this call set the bit (false: it was already remembered).
    /// A plain load first: a slot already remembered costs no atomic read-modify-write.
    #[inline]
    pub fn remember(&self, current: RemsetIndex, word: usize) -> bool {
        let (w, mask) = self.bit(current, word);
        if w.load(Ordering::Relaxed) & mask != 0 {
            return false;
        }
        // Relaxed: the bit is read by a scan that starts after a pause (the flip), whose
        // synchronization orders every barrier before it with the scan.
        w.fetch_or(mask, Ordering::Relaxed) & mask == 0
    }

    /// True if the slot at word `word` is remembered in bitmap `index` (the verifier's
    /// question: a slot holding a young pointer must be).
    pub fn is_remembered(&self, index: RemsetIndex, word: usize) -> bool {
        let (w, mask) = self.bit(index, word);
        w.load(Ordering::Relaxed) & mask != 0
    }

    /// Bitmap word `n` of bitmap `index`: the bits of words `64 * n .. 64 * n + 64` (`n`
    /// below `words().div_ceil(64)`). A full cycle's copier reads it for the objects it
    /// copied, to ask whether their slots are remembered (see the runtime's
    /// `Generations::original_remembered`).
    #[inline]
    pub fn bitmap_word(&self, index: RemsetIndex, n: usize) -> u64 {
        self.bitmaps[index.slot()][n].load(Ordering::Relaxed)
    }

    /// The young collection's part: call `f` with every word remembered in the bitmap that is
    /// not `current`, in increasing order, and clear that bitmap as it goes (each bitmap word
    /// is swapped with 0 before its bits are visited). `f` may remember slots again in
    /// `current` — of this set or any other — concurrently with mutators doing the same.
    /// Returns the number of words visited.
    pub fn drain_previous(&self, current: RemsetIndex, mut f: impl FnMut(usize)) -> u64 {
        let mut visited = 0;
        for (i, w) in self.bitmaps[current.previous().slot()].iter().enumerate() {
            if w.load(Ordering::Relaxed) == 0 {
                continue;
            }
            let mut bits = w.swap(0, Ordering::Relaxed);
            while bits != 0 {
                let b = bits.trailing_zeros() as usize;
                f(i * 64 + b);
                visited += 1;
                bits &= bits - 1;
            }
        }
        visited
    }

    /// Words remembered in bitmap `index` (for statistics and the verifier).
    pub fn count(&self, index: RemsetIndex) -> u64 {
        self.bitmaps[index.slot()]
            .iter()
            .map(|w| w.load(Ordering::Relaxed).count_ones() as u64)
            .sum()
    }

    /// Forget everything in bitmap `index` (a full collection, which promotes every
    /// survivor, forgets the interval before its Pause Mark Start this way, concurrently
    /// with barriers setting bits in the other bitmap).
    pub fn clear_bitmap(&self, index: RemsetIndex) {
        for w in self.bitmaps[index.slot()].iter() {
            if w.load(Ordering::Relaxed) != 0 {
                w.store(0, Ordering::Relaxed);
            }
        }
    }

    /// Forget everything in both bitmaps: the page was freed, or its objects are young again
    /// (a page reused for allocation has no old slots). Only words with a bit are written:
    /// most of a freed young page's set is zero, and a store would dirty its 64 KiB.
    pub fn clear(&self) {
        for bitmap in &self.bitmaps {
            for w in bitmap.iter() {
                if w.load(Ordering::Relaxed) != 0 {
                    w.store(0, Ordering::Relaxed);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remember_sets_each_bit_once_in_the_current_bitmap() {
        let set: RememberedSet = RememberedSet::new(64 << 10);
        let cur = RemsetIndex::FIRST;
        assert_eq!(set.words(), 8192);
        assert!(set.remember(cur, 5));
        assert!(!set.remember(cur, 5));
        assert!(set.remember(cur, 8191));
        assert!(set.is_remembered(cur, 5));
        assert!(!set.is_remembered(cur.previous(), 5));
        assert_eq!(set.count(cur), 2);
        assert_eq!(set.count(cur.previous()), 0);
    }

    #[test]
    fn after_a_flip_the_scan_sees_the_last_interval_and_empties_it() {
        let set: RememberedSet = RememberedSet::new(4096);
        let mut cur = RemsetIndex::FIRST;
        for w in [3, 64, 65, 511] {
            set.remember(cur, w);
        }
        cur = cur.flipped();
        // A store after the flip goes to the new current bitmap, not into the scan.
        set.remember(cur, 7);
        let mut seen = vec![];
        // The scanner re-remembers the slot that still points young.
        let visited = set.drain_previous(cur, |w| {
            seen.push(w);
            if w == 64 {
                set.remember(cur, w);
            }
        });
        assert_eq!(seen, vec![3, 64, 65, 511]);
        assert_eq!(visited, 4);
        assert_eq!(
            set.count(cur.previous()),
            0,
            "the scan empties what it scans"
        );
        assert_eq!(set.count(cur), 2);
        assert!(set.is_remembered(cur, 7) && set.is_remembered(cur, 64));
        // The next flip scans exactly what was remembered since the last one.
        cur = cur.flipped();
        let mut seen = vec![];
        set.drain_previous(cur, |w| seen.push(w));
        assert_eq!(seen, vec![7, 64]);
    }

    #[test]
    fn clear_forgets_both_bitmaps() {
        let set: RememberedSet = RememberedSet::new(4096);
        set.remember(RemsetIndex::FIRST, 1);
        set.remember(RemsetIndex::FIRST.flipped(), 2);
        set.clear_bitmap(RemsetIndex::FIRST.flipped());
        assert_eq!(set.count(RemsetIndex::FIRST), 1);
        assert_eq!(set.count(RemsetIndex::FIRST.flipped()), 0);
        set.remember(RemsetIndex::FIRST.flipped(), 2);
        set.clear();
        assert_eq!(set.count(RemsetIndex::FIRST), 0);
        assert_eq!(set.count(RemsetIndex::FIRST.flipped()), 0);
    }

    proptest::proptest! {
        /// `bitmap_word` holds the bits `is_remembered` reads, word by word, in the bitmap
        /// they were set in only.
        #[test]
        fn bitmap_words_hold_each_remembered_word(
            words in proptest::collection::vec(0usize..1024, 0..12),
        ) {
            let set: RememberedSet = RememberedSet::new(1024 * REMSET_WORD_BYTES);
            let cur = RemsetIndex::FIRST;
            for &w in &words {
                set.remember(cur, w);
            }
            for w in 0..1024 {
                let bit = set.bitmap_word(cur, w / 64) >> (w % 64) & 1 == 1;
                proptest::prop_assert_eq!(bit, set.is_remembered(cur, w));
            }
            for n in 0..16 {
                proptest::prop_assert_eq!(set.bitmap_word(cur.previous(), n), 0);
            }
        }
    }

    proptest::proptest! {
        /// Against a model (a set of words per bitmap): any sequence of barrier stores, flips
        /// and scans (the scan re-remembering some words) leaves the bitmaps holding exactly
        /// the model's sets, and every scan visits exactly the previous interval's words.
        #[test]
        fn matches_a_model_of_two_sets(ops in proptest::collection::vec((0u8..3, 0usize..1024), 1..200)) {
            use std::collections::BTreeSet;
            let set: RememberedSet = RememberedSet::new(8192);
            let mut cur = RemsetIndex::FIRST;
            let mut model = [BTreeSet::new(), BTreeSet::new()];
            for (op, w) in ops {
                match op {
                    0 => {
                        let new = set.remember(cur, w);
                        proptest::prop_assert_eq!(new, model[cur.slot()].insert(w));
                    }
                    1 => cur = cur.flipped(),
                    _ => {
                        // Scan; the words divisible by the operand's low bits "still point
                        // young" and are remembered again.
                        let keep = w % 4 + 1;
                        let mut seen = vec![];
                        set.drain_previous(cur, |x| {
                            seen.push(x);
                            if x % keep == 0 {
                                set.remember(cur, x);
                            }
                        });
                        let prev: Vec<usize> = std::mem::take(&mut model[cur.previous().slot()])
                            .into_iter()
                            .collect();
                        proptest::prop_assert_eq!(&seen, &prev);
                        model[cur.slot()].extend(prev.into_iter().filter(|x| x % keep == 0));
                    }
                }
                for i in [cur, cur.previous()] {
                    proptest::prop_assert_eq!(set.count(i), model[i.slot()].len() as u64);
                }
            }
            for i in [cur, cur.previous()] {
                for &w in &model[i.slot()] {
                    proptest::prop_assert!(set.is_remembered(i, w));
                }
            }
        }
    }

    #[test]
    #[should_panic(expected = "beyond")]
    fn a_word_outside_the_page_is_refused() {
        let set: RememberedSet = RememberedSet::new(4096);
        set.remember(RemsetIndex::FIRST, 512);
    }
}
