//! The atomic word the racy protocols are written against.
//!
//! The forwarding insert, the self-healing CAS and live-map marking are generic over
//! [`AtomicWord`] so the *same code* runs in the collector (with `std`'s `AtomicU64`) and under
//! the loom model checker (with `loom`'s `AtomicU64`, see `tests/loom_models.rs`). This is the
//! small `sync` indirection the project's model-checking tests rely on. The generation map's
//! age bytes and young tag are generic over [`AtomicByte`] the same way (std's `AtomicU8`, or
//! loom's in the runtime's models of in-place promotion, relocation and a full cycle's flip
//! against a store).

use crate::side_arena::{SideArena, WordArray};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;

/// An 8-bit atomic cell: an age byte of `GenerationMap`.
pub trait AtomicByte: Send + Sync {
    /// A new cell holding `v`.
    fn new_byte(v: u8) -> Self;
    fn load(&self, order: Ordering) -> u8;
    fn store(&self, v: u8, order: Ordering);
    fn compare_exchange(
        &self,
        current: u8,
        new: u8,
        success: Ordering,
        failure: Ordering,
    ) -> Result<u8, u8>;
}

/// The methods [`AtomicByte`] and [`AtomicWord`] share, for an atomic `$a` of `$int` with the
/// std atomics' methods (std's and loom's): each forwards to the atomic's own.
macro_rules! load_store_cas {
    ($a:ty, $int:ty) => {
        #[inline(always)]
        fn load(&self, order: Ordering) -> $int {
            <$a>::load(self, order)
        }
        #[inline(always)]
        fn store(&self, v: $int, order: Ordering) {
            <$a>::store(self, v, order)
        }
        #[inline(always)]
        fn compare_exchange(
            &self,
            current: $int,
            new: $int,
            success: Ordering,
            failure: Ordering,
        ) -> Result<$int, $int> {
            <$a>::compare_exchange(self, current, new, success, failure)
        }
    };
}

/// `AtomicByte` for an 8-bit atomic with the std atomics' methods (std's and loom's).
macro_rules! impl_atomic_byte {
    ($a:ty) => {
        impl AtomicByte for $a {
            #[inline(always)]
            fn new_byte(v: u8) -> Self {
                <$a>::new(v)
            }
            load_store_cas!($a, u8);
        }
    };
}

impl_atomic_byte!(AtomicU8);

/// A 64-bit atomic cell.
pub trait AtomicWord: Send + Sync {
    /// A new cell holding `v`.
    fn new_word(v: u64) -> Self;
    fn load(&self, order: Ordering) -> u64;
    fn store(&self, v: u64, order: Ordering);
    fn compare_exchange(
        &self,
        current: u64,
        new: u64,
        success: Ordering,
        failure: Ordering,
    ) -> Result<u64, u64>;
    fn swap(&self, v: u64, order: Ordering) -> u64;
    fn fetch_or(&self, v: u64, order: Ordering) -> u64;
    fn fetch_add(&self, v: u64, order: Ordering) -> u64;

    /// `n` cells holding 0. The default writes each; std's atomics override it with memory
    /// the allocator hands out zeroed, which for a large array is fresh pages nobody has
    /// touched: making one costs no page fault (see `ForwardingEntries::new`).
    fn zeroed_words(n: usize) -> Box<[Self]>
    where
        Self: Sized,
    {
        (0..n).map(|_| Self::new_word(0)).collect()
    }

    /// `n` cells holding 0 as a [`WordArray`]: a slot of `arena` where the cell is std's
    /// `AtomicU64` and the arena has a free slot of `n` words, else a box
    /// ([`Self::zeroed_words`]).
    fn zeroed_array(n: usize, arena: Option<&Arc<SideArena>>) -> WordArray<Self>
    where
        Self: Sized,
    {
        let _ = arena;
        WordArray::from(Self::zeroed_words(n))
    }
}

/// `AtomicWord` for a 64-bit atomic with the std atomics' methods (std's and loom's).
macro_rules! impl_atomic_word {
    ($a:ty $(, $extra:item)*) => {
        impl AtomicWord for $a {
            $($extra)*
            #[inline(always)]
            fn new_word(v: u64) -> Self {
                <$a>::new(v)
            }
            load_store_cas!($a, u64);
            #[inline(always)]
            fn swap(&self, v: u64, order: Ordering) -> u64 {
                <$a>::swap(self, v, order)
            }
            #[inline(always)]
            fn fetch_or(&self, v: u64, order: Ordering) -> u64 {
                <$a>::fetch_or(self, v, order)
            }
            #[inline(always)]
            fn fetch_add(&self, v: u64, order: Ordering) -> u64 {
                <$a>::fetch_add(self, v, order)
            }
        }
    };
}

impl_atomic_word!(
    AtomicU64,
    fn zeroed_words(n: usize) -> Box<[AtomicU64]> {
        // `vec![0; n]` of an integer asks the allocator for zeroed memory (`calloc`: for a
        // large array, fresh untouched pages) instead of writing the zeros.
        let zeroed: Box<[u64]> = vec![0u64; n].into_boxed_slice();
        // SAFETY: `AtomicU64` has the same size and bit validity as `u64` (std documents it),
        // and the same alignment on the targets this crate builds for (asserted below), so the
        // allocation of `[u64]` is a valid `[AtomicU64]` of the same length, each cell holding
        // 0, and freeing it through the new box uses the layout it was allocated with. The
        // `u64` box is consumed: no other reference to the memory exists.
        unsafe { Box::from_raw(Box::into_raw(zeroed) as *mut [AtomicU64]) }
    },
    fn zeroed_array(n: usize, arena: Option<&Arc<SideArena>>) -> WordArray<AtomicU64> {
        arena
            .filter(|a| a.slot_words() == n)
            .and_then(|a| a.carve())
            .unwrap_or_else(|| WordArray::from(Self::zeroed_words(n)))
    }
);
const _: () = assert!(std::mem::align_of::<AtomicU64>() == std::mem::align_of::<u64>());

/// loom's atomics as an [`AtomicWord`] and an [`AtomicByte`], for model-checking the code written against it (the
/// `loom` feature, which this crate's and the runtime's tests turn on).
#[cfg(feature = "loom")]
pub mod loom {
    use super::{AtomicByte, AtomicWord};
    use loom::sync::atomic::{AtomicU64, AtomicU8};
    use std::sync::atomic::Ordering;

    /// loom's `AtomicU64` as an atomic word.
    pub type LoomWord = AtomicU64;

    /// loom's `AtomicU8` as an atomic byte (a `GenerationMap<LoomByte>`'s age bytes).
    pub type LoomByte = AtomicU8;

    impl_atomic_word!(AtomicU64);
    impl_atomic_byte!(AtomicU8);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Words for a slot of whole pages on any system (64 KiB).
    const SLOT: usize = 8192;

    #[test]
    fn a_zeroed_array_takes_an_arena_slot_only_of_its_size() {
        let arena = SideArena::new(SLOT, 1).unwrap();
        let other = AtomicU64::zeroed_array(SLOT * 2, Some(&arena));
        assert!(!other.in_arena() && other.len() == SLOT * 2);
        let fits = AtomicU64::zeroed_array(SLOT, Some(&arena));
        assert!(fits.in_arena() && fits.len() == SLOT);
        let full = AtomicU64::zeroed_array(SLOT, Some(&arena));
        assert!(!full.in_arena(), "the arena is full: a box");
        assert!(full.iter().all(|w| w.load(Ordering::Relaxed) == 0));
        let no_arena = AtomicU64::zeroed_array(SLOT, None);
        assert!(!no_arena.in_arena());
        let empty: WordArray = WordArray::default();
        assert!(empty.is_empty() && !empty.in_arena());
    }
}
