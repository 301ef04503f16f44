//! Mutators' full mark buffers, handed to the GC workers whole (ZGC publishes a thread's full
//! mark stack the same way, as one unit on a stripe's list, `ZMarkStackList`).
//!
//! A mutator's buffer used to be emptied into the workers' shared queue one entry at a time;
//! that queue allocates a block for every few dozen entries on the thread that pushes, and the
//! worker that empties a block frees it into its own thread cache, so the mutator kept
//! allocating new ones — and a `malloc` that grows a thread's arena changes the process's
//! mappings, waiting behind every other thread's page fault while the mutator counts as
//! running. Now a full buffer moves as one vector: the mutator swaps it for a spare one (an
//! emptied buffer a worker gave back), a lock and two pointer moves per batch. A worker takes
//! a batch whole, moves its entries onto its own stack (where the others can steal them) and
//! gives the vector back as a spare.
//!
//! So that the mutator allocates no buffer even when it fills them faster than the workers
//! empty them, the collector keeps spares for the largest backlog seen: every buffer a
//! mutator had to allocate because no spare was left (a *miss*) raises the number kept (up
//! to [`MAX_KEPT`]), and at the start of each Concurrent Mark the driver tops the spares up to
//! it ([`MarkBatches::prepare`]), on its own thread. The number kept starts at a floor that
//! follows the heap's size (buffers of a 1024th of it), so even the first cycles' backlogs
//! find spares: a mutator grows its `malloc` arena at most once, for a backlog beyond every
//! earlier one.
//!
//! Marking's end counts on this queue as on the shared one: a batch is queued before the
//! mutator's buffer counts as empty, and a worker takes a batch only while it counts as busy,
//! so "every worker idle, every queue empty and no buffer holding work" still means no work
//! is left anywhere.

use gc_core::Offset;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Spares kept before any miss.
const MIN_KEPT: usize = 64;
/// The most spares kept, however large the backlog (8 MiB of 256-entry buffers).
pub(super) const MAX_KEPT: usize = 4096;

/// The queue of full batches and the spare buffers (see the module documentation).
#[derive(Default)]
pub(super) struct MarkBatches {
    full: Mutex<Vec<Vec<Offset>>>,
    spares: Mutex<Vec<Vec<Offset>>>,
    /// Batches in `full` (read without the lock by the termination tests).
    queued: AtomicUsize,
    /// Buffers `put` allocated because no spare was left, in all.
    missed: AtomicUsize,
    /// How many spares are kept ([`MIN_KEPT`] plus every miss, up to [`MAX_KEPT`]).
    kept: AtomicUsize,
}

impl MarkBatches {
    /// Queue the entries of the non-empty `batch`, leaving in its place an empty buffer with
    /// room for `capacity` entries (a spare if one is kept).
    pub(super) fn put(&self, batch: &mut Vec<Offset>, capacity: usize) {
        debug_assert!(!batch.is_empty());
        let spare = self.spares.lock().pop();
        let mut fresh = spare.unwrap_or_else(|| {
            self.missed.fetch_add(1, Ordering::Relaxed);
            let _ = self
                .kept
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |k| {
                    Some((k.max(MIN_KEPT) + 1).min(MAX_KEPT))
                });
            Vec::with_capacity(capacity)
        });
        std::mem::swap(batch, &mut fresh);
        let mut full = self.full.lock();
        full.push(fresh);
        // Under the lock: `queued` is never below the batches a taker can find.
        self.queued.fetch_add(1, Ordering::SeqCst);
    }

    /// A queued batch, if any.
    pub(super) fn take(&self) -> Option<Vec<Offset>> {
        if self.is_empty() {
            return None;
        }
        let mut full = self.full.lock();
        let batch = full.pop()?;
        self.queued.fetch_sub(1, Ordering::SeqCst);
        Some(batch)
    }

    /// Keep an emptied batch's buffer for a later [`Self::put`] (freed if enough are kept).
    pub(super) fn recycle(&self, mut batch: Vec<Offset>) {
        batch.clear();
        let mut spares = self.spares.lock();
        if spares.len() < self.kept() {
            spares.push(batch);
        }
    }

    /// How many spares are kept now.
    fn kept(&self) -> usize {
        self.kept.load(Ordering::Relaxed).max(MIN_KEPT)
    }

    /// Before a cycle's marking (the driver, at Concurrent Mark Roots): keep at least `floor`
    /// spares (up to [`MAX_KEPT`]), and allocate spares with room for `capacity` entries up to
    /// the number kept, here rather than on a mutator. Returns how many it allocated.
    pub(super) fn prepare(&self, capacity: usize, floor: usize) -> usize {
        let _ = self.kept.fetch_max(floor.min(MAX_KEPT), Ordering::Relaxed);
        let kept = self.kept();
        let have = self.spares.lock().len();
        let new: Vec<Vec<Offset>> = (have..kept).map(|_| Vec::with_capacity(capacity)).collect();
        let n = new.len();
        self.spares.lock().extend(new);
        n
    }

    /// Buffers `put` had to allocate because no spare was left, in all.
    #[cfg(test)]
    fn misses(&self) -> usize {
        self.missed.load(Ordering::Relaxed)
    }

    /// True if no batch is queued.
    pub(super) fn is_empty(&self) -> bool {
        self.queued.load(Ordering::SeqCst) == 0
    }

    /// Bytes the queued batches and the spares hold (for memory reports).
    pub(super) fn footprint_bytes(&self) -> u64 {
        let entry = std::mem::size_of::<Offset>();
        let full: usize = self.full.lock().iter().map(|b| b.capacity()).sum();
        let spare: usize = self.spares.lock().iter().map(|b| b.capacity()).sum();
        ((full + spare) * entry) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offs(range: std::ops::Range<u64>) -> Vec<Offset> {
        range.map(|i| Offset::from_raw(64 * (i + 1))).collect()
    }

    #[test]
    fn a_batch_moves_whole_and_its_buffer_comes_back_as_a_spare() {
        let q = MarkBatches::default();
        assert!(q.is_empty() && q.take().is_none());
        let mut b = offs(0..5);
        q.put(&mut b, 8);
        assert!(
            b.is_empty() && b.capacity() >= 8,
            "a fresh buffer in its place"
        );
        assert!(!q.is_empty());
        let got = q.take().unwrap();
        assert_eq!(got, offs(0..5));
        assert!(q.is_empty() && q.take().is_none());
        let ptr = got.as_ptr();
        q.recycle(got);
        let mut c = offs(5..7);
        q.put(&mut c, 8);
        assert_eq!(c.as_ptr(), ptr, "the spare replaced the full buffer");
        assert_eq!(q.take().unwrap(), offs(5..7));
    }

    #[test]
    fn keeps_a_bounded_number_of_spares() {
        let q = MarkBatches::default();
        for _ in 0..MIN_KEPT + 10 {
            q.recycle(Vec::with_capacity(4));
        }
        assert_eq!(q.spares.lock().len(), MIN_KEPT);
        assert_eq!(q.footprint_bytes(), (MIN_KEPT * 4 * 8) as u64);
    }

    /// A backlog that outran the spares once is met by spares the next time: the misses of
    /// one cycle are allocated by `prepare` before the next, and a burst of the same size
    /// then allocates nothing on the thread that puts.
    #[test]
    fn spares_grow_to_the_backlog_seen() {
        let q = MarkBatches::default();
        assert_eq!(q.prepare(8, 0), MIN_KEPT, "the first spares");
        let burst = |q: &MarkBatches| {
            for i in 0..MIN_KEPT as u64 + 100 {
                let mut b = offs(i..i + 1);
                q.put(&mut b, 8);
            }
            while let Some(b) = q.take() {
                q.recycle(b);
            }
        };
        burst(&q);
        assert_eq!(q.misses(), 100, "the spares ran out after {MIN_KEPT}");
        assert_eq!(q.kept(), MIN_KEPT + 100);
        assert_eq!(
            q.prepare(8, 0),
            0,
            "every buffer came back: none to allocate"
        );
        assert_eq!(q.prepare(8, MIN_KEPT + 110), 10, "a higher floor: ten more");
        burst(&q);
        assert_eq!(q.misses(), 100, "the second burst found a spare every time");
        // A backlog far beyond the bound: the spares stop growing at it.
        for i in 0..(MAX_KEPT + 500) as u64 {
            q.put(&mut offs(i..i + 1), 8);
        }
        while let Some(b) = q.take() {
            q.recycle(b);
        }
        assert_eq!(q.kept(), MAX_KEPT, "bounded however large the backlog");
        assert_eq!(q.spares.lock().len(), MAX_KEPT);
    }

    #[test]
    fn racing_puts_and_takes_lose_no_entry() {
        let q = MarkBatches::default();
        let taken = Mutex::new(Vec::new());
        std::thread::scope(|s| {
            for t in 0..3u64 {
                let q = &q;
                s.spawn(move || {
                    let mut b = Vec::new();
                    for i in 0..3000 {
                        b.push(Offset::from_raw(64 * (t * 10_000 + i + 1)));
                        if b.len() == 16 {
                            q.put(&mut b, 16);
                        }
                    }
                    if !b.is_empty() {
                        q.put(&mut b, 16);
                    }
                });
            }
            s.spawn(|| {
                for _ in 0..20_000 {
                    if let Some(b) = q.take() {
                        taken.lock().extend_from_slice(&b);
                        q.recycle(b);
                    }
                }
            });
        });
        let mut all = taken.into_inner();
        while let Some(b) = q.take() {
            all.extend_from_slice(&b);
        }
        all.sort();
        all.dedup();
        assert_eq!(all.len(), 9000);
        assert!(q.is_empty());
    }
}
