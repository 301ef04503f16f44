//! A mutator's mark buffer (ZGC's per-thread mark stacks, `ZMarkThreadLocalStacks`): the
//! objects the mutator's barriers marked during Concurrent Mark, handed to the GC workers in
//! batches of up to [`MARK_BUFFER_FLUSH`] — the whole buffer moves, and an empty one takes its
//! place — by the mutator when a batch is full, by the GC workers when they run out of work,
//! and by the mutator when it detaches.
//!
//! Pause Mark End must know that no buffer holds work, and must know it without visiting the
//! mutators (a loop over threads in a pause grows with the threads). So the heap's
//! [`BufferedWork`] counts the buffers that hold entries: a buffer that becomes non-empty adds
//! one, a flush that empties it takes one away, both under the buffer's lock. At a safepoint no
//! mutator is inside a barrier and no GC worker flushes (the driver, which runs the pause, is
//! the only flusher while it runs), so there the count is exact: zero means every buffer is
//! empty, and the pause reads one word.

use crate::observe::Activity;
use crate::threads::ThreadStateCell;
use gc_core::Offset;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Mark-buffer entries a mutator collects before handing them to the GC workers.
pub(crate) const MARK_BUFFER_FLUSH: usize = 256;

/// How many mutators' mark buffers hold entries (see the module documentation).
#[derive(Default)]
pub(crate) struct BufferedWork {
    non_empty: AtomicU64,
}

impl BufferedWork {
    /// True if some mutator's buffer holds entries. Exact at a safepoint; elsewhere a
    /// snapshot.
    pub(crate) fn any(&self) -> bool {
        self.non_empty.load(Ordering::SeqCst) != 0
    }
}

/// Where full buffers go: the GC workers' queue and the heap's count of buffers holding work
/// (`Mark`, which the buffers' owners, the mutators, must not depend on).
pub(crate) trait MarkSink {
    /// Queue the entries of the non-empty `batch` for the GC workers, leaving an empty
    /// buffer in its place.
    fn hand_over(&self, batch: &mut Vec<Offset>);
    /// The heap's count of buffers holding work.
    fn buffered(&self) -> &BufferedWork;
}

/// One mutator's mark buffer.
#[derive(Default)]
pub(crate) struct MarkBuffer {
    entries: Mutex<Vec<Offset>>,
}

impl MarkBuffer {
    /// Add an object the mutator's barrier marked; hand the batch over when it is full.
    /// `thread` is the owner's state: while a GC worker flushing the buffer holds its lock,
    /// the owner's activity word says it waits for it (the safepoint timeout's report).
    pub(crate) fn push(&self, off: Offset, mark: &dyn MarkSink, thread: &ThreadStateCell) {
        let mut b = match self.entries.try_lock() {
            Some(b) => b,
            None => {
                thread.set_doing(Activity::MarkBufferLock);
                let b = self.entries.lock();
                thread.set_doing(Activity::Code);
                b
            }
        };
        if b.is_empty() {
            mark.buffered().non_empty.fetch_add(1, Ordering::SeqCst);
        }
        b.push(off);
        if b.len() >= MARK_BUFFER_FLUSH {
            Self::hand_over(&mut b, mark);
        }
    }

    /// Move the entries to the GC workers' queue; returns how many moved.
    pub(crate) fn flush(&self, mark: &dyn MarkSink) -> u64 {
        let mut b = self.entries.lock();
        let n = b.len() as u64;
        if n != 0 {
            Self::hand_over(&mut b, mark);
        }
        n
    }

    /// Bytes the buffer has allocated (for memory reports).
    pub(crate) fn capacity_bytes(&self) -> u64 {
        (self.entries.lock().capacity() * std::mem::size_of::<Offset>()) as u64
    }

    /// Empty the non-empty buffer `b` (locked) into the queue: its entries are queued before
    /// the count drops, so a zero count never hides work.
    fn hand_over(b: &mut Vec<Offset>, mark: &dyn MarkSink) {
        debug_assert!(!b.is_empty());
        mark.hand_over(b);
        debug_assert!(b.is_empty());
        mark.buffered().non_empty.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A queue of entries and the count.
    #[derive(Default)]
    struct Sink {
        queued: Mutex<Vec<Offset>>,
        buffered: BufferedWork,
    }

    impl MarkSink for Sink {
        fn hand_over(&self, batch: &mut Vec<Offset>) {
            self.queued.lock().append(batch);
        }
        fn buffered(&self) -> &BufferedWork {
            &self.buffered
        }
    }

    #[test]
    fn the_count_follows_the_buffers_that_hold_entries() {
        let mark = Sink::default();
        let (a, b) = (MarkBuffer::default(), MarkBuffer::default());
        assert!(!mark.buffered().any());
        a.push(Offset::from_raw(64), &mark, &ThreadStateCell::new_blocked());
        a.push(
            Offset::from_raw(128),
            &mark,
            &ThreadStateCell::new_blocked(),
        );
        assert_eq!(mark.buffered().non_empty.load(Ordering::SeqCst), 1);
        b.push(
            Offset::from_raw(192),
            &mark,
            &ThreadStateCell::new_blocked(),
        );
        assert_eq!(mark.buffered().non_empty.load(Ordering::SeqCst), 2);
        assert_eq!(a.flush(&mark), 2);
        assert_eq!(a.flush(&mark), 0);
        assert!(mark.buffered().any());
        assert_eq!(b.flush(&mark), 1);
        assert!(!mark.buffered().any());
        assert_eq!(mark.queued.lock().len(), 3, "the entries went to the queue");
    }

    #[test]
    fn a_full_batch_is_handed_over_by_the_push_that_fills_it() {
        let mark = Sink::default();
        let a = MarkBuffer::default();
        for i in 0..MARK_BUFFER_FLUSH as u64 {
            a.push(
                Offset::from_raw(64 * (i + 1)),
                &mark,
                &ThreadStateCell::new_blocked(),
            );
        }
        assert!(
            !mark.buffered().any(),
            "the last push handed the batch over"
        );
        assert_eq!(a.flush(&mark), 0);
        a.push(Offset::from_raw(64), &mark, &ThreadStateCell::new_blocked());
        assert!(mark.buffered().any());
    }

    #[test]
    fn racing_pushes_and_flushes_leave_the_count_exact() {
        let mark = Sink::default();
        let bufs: Vec<MarkBuffer> = (0..4).map(|_| MarkBuffer::default()).collect();
        std::thread::scope(|s| {
            for b in &bufs {
                let mark = &mark;
                s.spawn(move || {
                    for i in 0..10_000u64 {
                        b.push(
                            Offset::from_raw(64 * (i + 1)),
                            mark as &dyn MarkSink,
                            &ThreadStateCell::new_blocked(),
                        );
                    }
                });
            }
            s.spawn(|| {
                for _ in 0..2_000 {
                    for b in &bufs {
                        b.flush(&mark);
                    }
                }
            });
        });
        let held = bufs.iter().filter(|b| !b.entries.lock().is_empty()).count() as u64;
        assert_eq!(mark.buffered().non_empty.load(Ordering::SeqCst), held);
        for b in &bufs {
            b.flush(&mark);
        }
        assert!(!mark.buffered().any());
    }
}
