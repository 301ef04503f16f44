//! A full cycle's reader of the remembered bits under the objects it copies: the question
//! `Generations::original_remembered` answers for one object, asked object after object
//! by a GC worker publishing a batch of copies from one from-page. (ZGC has no counterpart:
//! its full collection is an old and a young collection of their own, and its old relocation
//! reads every copy's fields for young pointers; here a full cycle's copy needs reading only
//! where its original has a remembered slot.)
//!
//! One bitmap word covers 64 slots (512 bytes of heap, about ten small objects), and a
//! batch's objects lie next to each other on their page, so the reader keeps the word it
//! read last and answers the objects under it without reading the bitmap again. That is
//! sound for as long as the reader lives because the bits under a retained from-page do not
//! change during relocation: after Pause Relocate Start no mutator stores into a from-page
//! object (its barrier hands out the copy), every store before that pause set its bit before
//! it, and only freeing or compacting the page clears them, which its retention rules out.

use gc_core::{Offset, RememberedSet, RemsetIndex, GRANULE_SIZE, HEADER_SIZE, REMSET_WORD_BYTES};
use std::sync::OnceLock;

/// Slots per bitmap word.
const WORD_SLOTS: u64 = 64;
/// Bitmap words per granule (each granule has a set of its own).
const GRANULE_WORDS: u64 = GRANULE_SIZE / REMSET_WORD_BYTES / WORD_SLOTS;

/// See the module documentation. Made by `Generations::original_bits` for one batch of
/// copies out of one retained from-page, and dropped before the page is released.
pub(crate) struct OriginalBits<'g> {
    /// The heap's remembered sets, one per granule from `start` (none yet: no bit).
    remsets: &'g [OnceLock<RememberedSet>],
    start: Offset,
    /// The bitmap the bits are read from: the one current since the cycle's Pause Mark Start.
    index: RemsetIndex,
    /// The bitmap word read last: its number counted from the heap's start, and its bits.
    last: Option<(u64, u64)>,
}

impl<'g> OriginalBits<'g> {
    pub(super) fn new(
        remsets: &'g [OnceLock<RememberedSet>],
        start: Offset,
        index: RemsetIndex,
    ) -> Self {
        OriginalBits {
            remsets,
            start,
            index,
            last: None,
        }
    }

    /// True if a slot of the object at `from` (`size` bytes, its header included) is
    /// remembered: its copy may hold a young pointer (see
    /// `Generations::original_remembered`).
    pub(crate) fn any(&mut self, from: Offset, size: u64) -> bool {
        let base = self.start.raw();
        let first = (from.raw() + HEADER_SIZE - base) / REMSET_WORD_BYTES;
        let end = (from.raw() + size - base).div_ceil(REMSET_WORD_BYTES);
        if first >= end {
            return false;
        }
        (first / WORD_SLOTS..=(end - 1) / WORD_SLOTS).any(|n| {
            let lo = first.max(n * WORD_SLOTS) - n * WORD_SLOTS;
            let hi = end.min((n + 1) * WORD_SLOTS) - n * WORD_SLOTS;
            // Bits lo..hi of the word (hi - lo is 1 to 64).
            let mask = (u64::MAX >> (WORD_SLOTS - (hi - lo))) << lo;
            self.word(n) & mask != 0
        })
    }

    /// Bitmap word `n`, counting from the heap's start.
    fn word(&mut self, n: u64) -> u64 {
        match self.last {
            Some((at, bits)) if at == n => bits,
            _ => {
                let bits = self.remsets[(n / GRANULE_WORDS) as usize]
                    .get()
                    .map_or(0, |set| {
                        set.bitmap_word(self.index, (n % GRANULE_WORDS) as usize)
                    });
                self.last = Some((n, bits));
                bits
            }
        }
    }
}
