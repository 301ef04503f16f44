//! A GC worker's mark stack: private entries, published to the other workers in batches (the
//! idea of ZGC's mark stripes, where a worker pushes to and pops from its own stacks and hands
//! whole stacks to the shared stripes).
//!
//! Work stealing needs a deque the other workers can take from, and its owner's every pop
//! from such a deque is a fenced operation (`crossbeam-deque`'s LIFO pop: a store, a full
//! fence and a reload, so that a thief and the owner never both take the last entry). Tracing
//! pops once per object. Here the worker's entries live in a plain private stack, and only a
//! batch of them at a time is moved to the worker's stealable deque, when that deque is empty
//! and the private stack holds enough to share ([`MarkStack::publish`], which the worker calls
//! every [`PUBLISH_EVERY`] objects it traces). The batch is the oldest entries: nearest the
//! roots, the likeliest to lead to much more work.
//!
//! Termination is unchanged: a worker goes idle only when its private stack and its deque are
//! both empty (a pop found nothing), so work held privately keeps its owner busy, and the
//! phase cannot end while a worker is busy. A worker that leaves a running phase hands back
//! both ([`MarkStack::hand_back`]) before it counts idle.

use crossbeam_deque::Worker;
use gc_core::Offset;
use std::collections::VecDeque;

/// Objects a worker traces between two calls of [`MarkStack::publish`].
pub(super) const PUBLISH_EVERY: u64 = 32;
/// Private entries below which nothing is published (too little to be worth a steal).
const PUBLISH_MIN: usize = 64;
/// Entries moved to the stealable deque at a time.
const BATCH: usize = 32;

/// A worker's mark stack. See the module documentation.
pub(super) struct MarkStack {
    /// Entries only this worker sees; the newest at the back.
    private: VecDeque<Offset>,
    /// Entries the other workers may steal (through its stealer); filled by batches and by
    /// this worker's steals from the global queue.
    shared: Worker<Offset>,
    /// Batches published so far.
    published: u64,
}

impl MarkStack {
    /// A stack whose stealable part is `shared` (the other workers hold its stealer).
    pub(super) fn new(shared: Worker<Offset>) -> Self {
        MarkStack {
            private: VecDeque::with_capacity(1024),
            shared,
            published: 0,
        }
    }

    /// Push an entry (private).
    #[inline]
    pub(super) fn push(&mut self, o: Offset) {
        self.private.push_back(o);
    }

    /// The newest private entry, else one from the stealable deque.
    #[inline]
    pub(super) fn pop(&mut self) -> Option<Offset> {
        self.private.pop_back().or_else(|| self.shared.pop())
    }

    /// The stealable deque, for steals from the global queue into it.
    pub(super) fn shared(&self) -> &Worker<Offset> {
        &self.shared
    }

    /// If the stealable deque is empty (the others took it, or there was nothing) and the
    /// private stack holds at least `PUBLISH_MIN` entries, move its oldest `BATCH` entries
    /// there. Returns true if it did.
    #[inline]
    pub(super) fn publish(&mut self) -> bool {
        if self.private.len() < PUBLISH_MIN || !self.shared.is_empty() {
            return false;
        }
        for o in self.private.drain(..BATCH) {
            self.shared.push(o);
        }
        self.published += 1;
        true
    }

    /// Batches published since the last call.
    pub(super) fn take_published(&mut self) -> u64 {
        std::mem::take(&mut self.published)
    }

    /// True if neither part holds an entry.
    pub(super) fn is_empty(&self) -> bool {
        self.private.is_empty() && self.shared.is_empty()
    }

    /// Give every entry, private and stealable, to `sink` (a worker that leaves).
    pub(super) fn hand_back(&mut self, mut sink: impl FnMut(Offset)) {
        while let Some(o) = self.pop() {
            sink(o);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossbeam_deque::Steal;

    fn off(i: u64) -> Offset {
        Offset::from_raw(i * 8)
    }

    /// Entries are popped newest first; a batch goes to the stealable deque only when it is
    /// empty and the private part holds `PUBLISH_MIN`; the batch is the oldest entries; a
    /// thief sees exactly the published ones; a hand-back gives every entry left, once.
    #[test]
    fn batches_are_published_oldest_first_and_nothing_is_lost() {
        let mut s = MarkStack::new(Worker::new_lifo());
        let thief = s.shared().stealer();
        for i in 0..PUBLISH_MIN as u64 - 1 {
            s.push(off(i));
        }
        assert!(!s.publish(), "below PUBLISH_MIN");
        assert!(thief.is_empty());
        s.push(off(PUBLISH_MIN as u64 - 1));
        assert!(s.publish());
        assert!(!s.publish(), "the deque still holds the first batch");
        let mut stolen = Vec::new();
        while let Steal::Success(o) = thief.steal() {
            stolen.push(o.raw() / 8);
        }
        stolen.sort_unstable();
        assert_eq!(stolen, (0..BATCH as u64).collect::<Vec<_>>(), "the oldest");
        assert_eq!(s.pop(), Some(off(PUBLISH_MIN as u64 - 1)), "newest first");
        for i in 100..200 {
            s.push(off(i));
        }
        assert!(s.publish());
        assert_eq!(s.take_published(), 2);
        let mut rest = Vec::new();
        s.hand_back(|o| rest.push(o.raw() / 8));
        assert!(s.is_empty());
        rest.sort_unstable();
        let mut want: Vec<u64> = (BATCH as u64..PUBLISH_MIN as u64 - 1).collect();
        want.extend(100..200);
        assert_eq!(rest, want, "every entry not stolen, once");
    }
}
