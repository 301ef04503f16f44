//! Where a test makes the GC workers' target swing on purpose: every parallel phase's crew
//! then grows and shrinks while it runs, many times per phase, so the paths by which a worker
//! joins a running phase and leaves it (handing its work back) are taken far more often than
//! mutators that start and stop waiting would take them (HotSpot's tests force such paths
//! with WhiteBox and stress flags, such as `ZStressRelocateInPlace`).

use std::sync::atomic::{AtomicU64, Ordering};

/// The swing: off (0), or the number of target reads after which it flips.
#[derive(Default)]
pub(crate) struct InjectedCrewSwing {
    every: AtomicU64,
    reads: AtomicU64,
}

impl InjectedCrewSwing {
    /// From now on, the target flips between the boosted and the normal count every `every`
    /// reads (0: off).
    pub(crate) fn set(&self, every: u64) {
        self.every.store(every, Ordering::Relaxed);
    }

    /// True while a swing is on.
    pub(crate) fn is_on(&self) -> bool {
        self.every.load(Ordering::Relaxed) != 0
    }

    /// The target to use instead of the collector's own, if a swing is on: `boosted` for
    /// `every` reads, then `normal` for as many, and so on. Off, one relaxed load.
    #[inline]
    pub(crate) fn target(&self, normal: usize, boosted: usize) -> Option<usize> {
        let every = self.every.load(Ordering::Relaxed);
        if every == 0 {
            return None;
        }
        let n = self.reads.fetch_add(1, Ordering::Relaxed);
        Some(if (n / every).is_multiple_of(2) {
            boosted
        } else {
            normal
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_by_default_then_it_flips_every_n_reads() {
        let s = InjectedCrewSwing::default();
        assert_eq!(s.target(1, 2), None);
        s.set(2);
        let seen: Vec<_> = (0..6).map(|_| s.target(1, 2).unwrap()).collect();
        assert_eq!(seen, vec![2, 2, 1, 1, 2, 2]);
    }
}
