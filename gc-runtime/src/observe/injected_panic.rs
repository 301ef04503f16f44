//! Panics tests ask the collector to raise, to check that a broken invariant inside the
//! collector ends the process with a message instead of hanging its mutators.

use std::sync::atomic::{AtomicU8, Ordering};

/// Where a test wants the collector to panic.
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum InjectedPanic {
    /// The driver, inside its next pause (every mutator stopped).
    Driver = 1,
    /// A GC mark worker thread (not the driver), in the next parallel marking.
    MarkWorker = 2,
}

/// The one pending request (0: none).
#[derive(Default)]
pub(crate) struct InjectedPanics(AtomicU8);

impl InjectedPanics {
    pub(crate) fn request(&self, at: InjectedPanic) {
        self.0.store(at as u8, Ordering::Release);
    }

    /// True (once) if a test asked for a panic at `at`.
    pub(crate) fn take(&self, at: InjectedPanic) -> bool {
        self.0
            .compare_exchange(at as u8, 0, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
    }
}
