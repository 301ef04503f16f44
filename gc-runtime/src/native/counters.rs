//! The pool's hot counters, kept per thread (as jemalloc's tcache statistics are): each thread
//! that allocates or frees owns a [`Counts`] it alone writes, with a plain load and store
//! instead of a locked read-modify-write, and `PoolStats` sums every thread's counts. A
//! thread's counts are folded into the pool's retired counts when it exits; paths with no
//! thread-local state (a thread being torn down) write shared counts with `fetch_add`.
//!
//! Values wrap: a buffer allocated on one thread and freed on another adds to the first
//! thread's `used_bytes` and subtracts from the second's, and only the sum means something
//! (read as a signed number, clamped at zero while threads are mid-update).

use std::sync::atomic::{AtomicU64, Ordering};

/// Who writes a [`Counts`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Writer {
    /// Only the calling thread (the counts of its thread cache).
    Owner,
    /// Any thread.
    Shared,
}

/// Allocation counts of one thread (or of the shared fallback).
#[derive(Debug)]
pub(super) struct Counts {
    pub(super) allocs: Vec<AtomicU64>,
    pub(super) frees: Vec<AtomicU64>,
    pub(super) used_bytes: AtomicU64,
    pub(super) used_capacity: AtomicU64,
    pub(super) cached: AtomicU64,
}

/// Add `d` (wrapping; a subtraction is the wrapping add of its negation).
pub(super) fn add(w: Writer, a: &AtomicU64, d: u64) {
    match w {
        Writer::Owner => a.store(a.load(Ordering::Relaxed).wrapping_add(d), Ordering::Relaxed),
        Writer::Shared => {
            a.fetch_add(d, Ordering::Relaxed);
        }
    }
}

/// Subtract `d` (wrapping).
pub(super) fn sub(w: Writer, a: &AtomicU64, d: u64) {
    add(w, a, d.wrapping_neg());
}

/// A sum of [`Counts`].
#[derive(Clone, Debug, Default)]
pub(super) struct Totals {
    pub(super) allocs: Vec<u64>,
    pub(super) frees: Vec<u64>,
    pub(super) used_bytes: u64,
    pub(super) used_capacity: u64,
    pub(super) cached: u64,
}

impl Totals {
    /// The wrapped sums read as signed and clamped at zero.
    pub(super) fn clamped(mut self) -> Totals {
        let clamp = |v: &mut u64| *v = (*v as i64).max(0) as u64;
        self.allocs.iter_mut().for_each(clamp);
        self.frees.iter_mut().for_each(clamp);
        clamp(&mut self.used_bytes);
        clamp(&mut self.used_capacity);
        clamp(&mut self.cached);
        self
    }
}

impl Counts {
    pub(super) fn new(classes: usize) -> Counts {
        let v = || (0..classes).map(|_| AtomicU64::new(0)).collect();
        Counts {
            allocs: v(),
            frees: v(),
            used_bytes: AtomicU64::new(0),
            used_capacity: AtomicU64::new(0),
            cached: AtomicU64::new(0),
        }
    }

    /// Add these counts to `t`.
    pub(super) fn add_to(&self, t: &mut Totals) {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        if t.allocs.is_empty() {
            t.allocs = vec![0; self.allocs.len()];
            t.frees = vec![0; self.frees.len()];
        }
        for (k, a) in self.allocs.iter().enumerate() {
            t.allocs[k] = t.allocs[k].wrapping_add(get(a));
        }
        for (k, a) in self.frees.iter().enumerate() {
            t.frees[k] = t.frees[k].wrapping_add(get(a));
        }
        t.used_bytes = t.used_bytes.wrapping_add(get(&self.used_bytes));
        t.used_capacity = t.used_capacity.wrapping_add(get(&self.used_capacity));
        t.cached = t.cached.wrapping_add(get(&self.cached));
    }

    /// Move these counts into `into` (shared), leaving them zero. Called by the owner.
    pub(super) fn fold_into(&self, into: &Counts) {
        let mv = |from: &AtomicU64, to: &AtomicU64| {
            to.fetch_add(from.swap(0, Ordering::Relaxed), Ordering::Relaxed);
        };
        for (a, b) in self.allocs.iter().zip(&into.allocs) {
            mv(a, b);
        }
        for (a, b) in self.frees.iter().zip(&into.frees) {
            mv(a, b);
        }
        mv(&self.used_bytes, &into.used_bytes);
        mv(&self.used_capacity, &into.used_capacity);
        mv(&self.cached, &into.cached);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_of_two_threads_sum_through_wrapping_and_fold() {
        let (a, b, retired) = (Counts::new(2), Counts::new(2), Counts::new(2));
        add(Writer::Owner, &a.used_bytes, 100); // allocated on a
        sub(Writer::Owner, &b.used_bytes, 100); // freed on b
        add(Writer::Owner, &a.allocs[1], 1);
        add(Writer::Shared, &b.frees[1], 1);
        let mut t = Totals::default();
        a.add_to(&mut t);
        b.add_to(&mut t);
        assert_eq!((t.used_bytes, t.allocs[1], t.frees[1]), (0, 1, 1));
        // Only b read: -100, clamped.
        let mut half = Totals::default();
        b.add_to(&mut half);
        assert_eq!(half.clamped().used_bytes, 0);
        a.fold_into(&retired);
        let mut t = Totals::default();
        a.add_to(&mut t);
        assert_eq!(t.allocs[1], 0);
        retired.add_to(&mut t);
        assert_eq!((t.used_bytes, t.allocs[1]), (100, 1));
    }
}
