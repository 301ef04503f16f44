//! The atomic word the racy protocols are written against.
//!
//! The forwarding insert, the self-healing CAS and live-map marking are generic over
//! [`AtomicWord`] so the *same code* runs in the collector (with `std`'s `AtomicU64`) and under
//! the loom model checker (with `loom`'s `AtomicU64`, see `tests/loom_models.rs`). This is the
//! small `sync` indirection the project's model-checking tests rely on.

use std::sync::atomic::{AtomicU64, Ordering};

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
    fn fetch_or(&self, v: u64, order: Ordering) -> u64;
    fn fetch_add(&self, v: u64, order: Ordering) -> u64;
}

impl AtomicWord for AtomicU64 {
    #[inline(always)]
    fn new_word(v: u64) -> Self {
        AtomicU64::new(v)
    }
    #[inline(always)]
    fn load(&self, order: Ordering) -> u64 {
        AtomicU64::load(self, order)
    }
    #[inline(always)]
    fn store(&self, v: u64, order: Ordering) {
        AtomicU64::store(self, v, order)
    }
    #[inline(always)]
    fn compare_exchange(
        &self,
        current: u64,
        new: u64,
        success: Ordering,
        failure: Ordering,
    ) -> Result<u64, u64> {
        AtomicU64::compare_exchange(self, current, new, success, failure)
    }
    #[inline(always)]
    fn fetch_or(&self, v: u64, order: Ordering) -> u64 {
        AtomicU64::fetch_or(self, v, order)
    }
    #[inline(always)]
    fn fetch_add(&self, v: u64, order: Ordering) -> u64 {
        AtomicU64::fetch_add(self, v, order)
    }
}

/// loom's atomics as an [`AtomicWord`], for model-checking the code written against it (the
/// `loom` feature, which this crate's and the runtime's tests turn on).
#[cfg(feature = "loom")]
pub mod loom {
    use super::AtomicWord;
    use loom::sync::atomic::AtomicU64;
    use std::sync::atomic::Ordering;

    /// loom's `AtomicU64` as an atomic word.
    pub struct LoomWord(AtomicU64);

    impl LoomWord {
        /// An unconditional exchange (a mutator's store racing a heal, in the models).
        pub fn swap(&self, v: u64, order: Ordering) -> u64 {
            self.0.swap(v, order)
        }
    }

    impl AtomicWord for LoomWord {
        fn new_word(v: u64) -> Self {
            LoomWord(AtomicU64::new(v))
        }
        fn load(&self, order: Ordering) -> u64 {
            self.0.load(order)
        }
        fn store(&self, v: u64, order: Ordering) {
            self.0.store(v, order)
        }
        fn compare_exchange(
            &self,
            current: u64,
            new: u64,
            success: Ordering,
            failure: Ordering,
        ) -> Result<u64, u64> {
            self.0.compare_exchange(current, new, success, failure)
        }
        fn fetch_or(&self, v: u64, order: Ordering) -> u64 {
            self.0.fetch_or(v, order)
        }
        fn fetch_add(&self, v: u64, order: Ordering) -> u64 {
            self.0.fetch_add(v, order)
        }
    }
}
