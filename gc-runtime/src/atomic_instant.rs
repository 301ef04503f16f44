//! A moment threads read and write without a lock: an `Option<Instant>` kept in one atomic
//! word as the nanoseconds since a base instant. The pacer and the cycle monitor keep in these
//! the times a mutator reads on every paced allocation quantum (when the next quantum is due,
//! when the running cycle began), so that a mutator inside a scope never waits for a lock:
//! on a loaded machine the holder — the driver, another mutator, a meter — can be preempted
//! with the lock held, and the waiting mutator then sleeps for milliseconds in the middle of
//! an allocation, where no pause can stop it (the time to safepoint's worst case). ZGC keeps
//! such timestamps in plain atomics too.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// An `Option<Instant>` in an atomic word (see the module documentation). Instants before
/// the base read back as the base.
pub(crate) struct AtomicInstant {
    base: Instant,
    /// 0 for `None`, else the nanoseconds since `base` plus one.
    word: AtomicU64,
}

impl AtomicInstant {
    /// `None`, with `base` as the earliest instant it holds.
    pub(crate) fn new(base: Instant) -> Self {
        AtomicInstant {
            base,
            word: AtomicU64::new(0),
        }
    }

    fn encode(&self, t: Option<Instant>) -> u64 {
        t.map_or(0, |t| {
            let ns = t.saturating_duration_since(self.base).as_nanos();
            u64::try_from(ns).unwrap_or(u64::MAX - 1) + 1
        })
    }

    fn decode(&self, w: u64) -> Option<Instant> {
        (w != 0).then(|| self.base + Duration::from_nanos(w - 1))
    }

    pub(crate) fn load(&self) -> Option<Instant> {
        self.decode(self.word.load(Ordering::Acquire))
    }

    pub(crate) fn store(&self, t: Option<Instant>) {
        self.word.store(self.encode(t), Ordering::Release);
    }

    /// Replace `current` by `new`; on failure, the value found instead.
    pub(crate) fn compare_exchange(
        &self,
        current: Option<Instant>,
        new: Option<Instant>,
    ) -> Result<(), Option<Instant>> {
        self.word
            .compare_exchange(
                self.encode(current),
                self.encode(new),
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .map(|_| ())
            .map_err(|w| self.decode(w))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_instant_reads_back_as_stored() {
        let base = Instant::now();
        let a = AtomicInstant::new(base);
        assert_eq!(a.load(), None);
        let t = base + Duration::from_nanos(1_234_567);
        a.store(Some(t));
        assert_eq!(a.load(), Some(t));
        a.store(Some(base));
        assert_eq!(a.load(), Some(base), "the base itself is not None");
        let before = base.checked_sub(Duration::from_millis(1)).unwrap_or(base);
        a.store(Some(before));
        assert_eq!(a.load(), Some(base), "earlier instants read as the base");
        a.store(None);
        assert_eq!(a.load(), None);
    }

    #[test]
    fn compare_exchange_replaces_only_the_expected_value() {
        let base = Instant::now();
        let a = AtomicInstant::new(base);
        let t = base + Duration::from_micros(5);
        assert_eq!(a.compare_exchange(None, Some(t)), Ok(()));
        assert_eq!(a.compare_exchange(None, Some(base)), Err(Some(t)));
        assert_eq!(a.compare_exchange(Some(t), None), Ok(()));
        assert_eq!(a.load(), None);
    }
}
