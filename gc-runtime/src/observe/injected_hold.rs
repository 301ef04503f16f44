//! A point where a test holds a thread of the collector's protocol on purpose, to open a
//! window that a preempted thread opens by chance on a loaded machine (the injected
//! counterpart of a scheduler's delay; HotSpot's tests reach such windows with WhiteBox
//! breakpoints). One hold point exists: a weak upgrade between Pause Mark End and Pause
//! Relocate Start, after it read its slot and before it tests the referent's liveness
//! (`barrier_policy::load_weak`).

use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// A hook run once, by the next thread that reaches the hold point (see the module
/// documentation). Unarmed, the point costs one relaxed load.
#[derive(Default)]
pub(crate) struct InjectedHold {
    armed: AtomicBool,
    hook: Mutex<Option<Box<dyn FnOnce() + Send>>>,
}

impl InjectedHold {
    /// Run `hook` at the next pass of the hold point.
    pub(crate) fn arm(&self, hook: Box<dyn FnOnce() + Send>) {
        *self.hook.lock() = Some(hook);
        self.armed.store(true, Ordering::Release);
    }

    /// The hold point: run the hook if one is armed (once; a racing second thread passes).
    #[inline]
    pub(crate) fn pass(&self) {
        if self.armed.load(Ordering::Relaxed) {
            self.run();
        }
    }

    #[cold]
    fn run(&self) {
        let hook = self.hook.lock().take();
        self.armed.store(false, Ordering::Relaxed);
        if let Some(hook) = hook {
            hook();
        }
    }
}
