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
