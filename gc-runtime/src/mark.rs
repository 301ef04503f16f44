//! Marking (ZGC's `ZMark`): parallel GC workers trace the object graph from the roots with
//! work stealing (`crossbeam-deque`), while mutators' barriers mark what they load into their
//! own buffers, which are handed over in batches.
//!
//! Tracing an object applies the marking barrier to every slot: a bad pointer is made good
//! (remapped if stale) and healed in place; the target is marked in its page's live map, and
//! pushed if this worker marked it. Termination: a worker that finds no work goes idle; when
//! every worker is idle and every queue is empty, the phase ends. Pause Mark End then checks
//! the mutators' buffers; if they held work, marking resumes. A worker that panics never goes
//! idle: it marks the marking abandoned instead, so the others stop waiting for it and its
//! panic reaches the driver (which aborts the process) when the workers' scope ends.

use crate::cpu_time::thread_cpu_ns;
use crate::heap::{HeapInner, InjectedPanic};
use crossbeam_deque::{Injector, Steal, Stealer, Worker};
use gc_core::{Object, View};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// The global mark queue (roots and mutator buffers go here; workers steal from it).
#[derive(Default)]
pub(crate) struct MarkQueue {
    injector: Injector<u64>,
}

impl MarkQueue {
    pub(crate) fn push(&self, off: u64) {
        self.injector.push(off);
    }
    pub(crate) fn push_all(&self, offs: impl Iterator<Item = u64>) {
        for o in offs {
            self.injector.push(o);
        }
    }
    pub(crate) fn is_empty(&self) -> bool {
        self.injector.is_empty()
    }
}

/// Marks the marking abandoned if the worker holding it unwinds (see the module
/// documentation).
struct AbandonOnUnwind<'a>(&'a AtomicBool);

impl Drop for AbandonOnUnwind<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::SeqCst);
        }
    }
}

/// Objects in flight between the mark stack and tracing.
const PREFETCH_DEPTH: usize = 8;

#[inline(always)]
fn prefetch(addr: u64) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint; it never faults, even on an unmapped address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(addr as *const i8, std::arch::x86_64::_MM_HINT_T0)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = addr;
}

impl HeapInner {
    /// Trace one object: the marking barrier on each of its slots.
    fn trace_object(&self, off: u64, push: &mut dyn FnMut(u64)) {
        let layout = self.state.layout();
        let bad = self.state.bad_mask();
        let base = layout.view_base(View::Remapped);
        // SAFETY: `off` was marked, so it is a live object on a mapped page.
        let obj = unsafe { Object::from_addr(base | off) };
        // Account the object's bytes now that its header is at hand (marking counted it with
        // size 0).
        {
            let guard = crossbeam_epoch::pin();
            if let Some(page) = self.mem.page_table().get(off, &guard) {
                page.live_map()
                    .add_live_bytes(self.state.seqnum(), obj.size());
            }
        }
        let slots = obj.slots();
        for slot in slots {
            let p = slot.load(Ordering::Acquire);
            if p == 0 {
                continue;
            }
            let good = if p & bad != 0 {
                let g = self.make_good(p, push);
                gc_core::self_heal(slot, p, g, bad);
                g
            } else {
                // A good pointer stored by a mutator: its object is marked already, but mark
                // through it anyway (cheap: the live map says so at once).
                self.mark_object(layout.offset(p), push);
                p
            };
            debug_assert!(layout.is_good(good, self.state.good()));
        }
    }

    /// Move every mutator's mark buffer into the global queue; true if any held work.
    pub(crate) fn flush_mutator_buffers(&self) -> bool {
        let mut any = false;
        for m in self.mutators_snapshot() {
            let mut b = m.mark_buffer.lock();
            if !b.is_empty() {
                any = true;
                self.mark_queue.push_all(b.drain(..));
            }
        }
        any
    }

    /// Drain the mark queue with `threads` workers (the calling thread is one of them).
    /// Returns the CPU time the *other* workers used.
    pub(crate) fn mark_parallel(&self, threads: usize) -> u64 {
        let threads = threads.max(1);
        let workers: Vec<Worker<u64>> = (0..threads).map(|_| Worker::new_lifo()).collect();
        let stealers: Vec<Stealer<u64>> = workers.iter().map(|w| w.stealer()).collect();
        let idle = AtomicUsize::new(0);
        let abandoned = AtomicBool::new(false);
        let cpu = std::sync::atomic::AtomicU64::new(0);
        std::thread::scope(|s| {
            let mut workers = workers.into_iter();
            let first = workers.next().expect("at least one worker");
            for (i, w) in workers.enumerate() {
                let (stealers, idle, abandoned, cpu) = (&stealers, &idle, &abandoned, &cpu);
                std::thread::Builder::new()
                    .name(format!("gc-mark-{}", i + 1))
                    .spawn_scoped(s, move || {
                        let _abandon = AbandonOnUnwind(abandoned);
                        if self.take_injected_panic(InjectedPanic::MarkWorker) {
                            panic!("GC worker panic injected for a test");
                        }
                        let c0 = thread_cpu_ns();
                        self.mark_worker(w, stealers, idle, abandoned, threads);
                        cpu.fetch_add(thread_cpu_ns() - c0, Ordering::Relaxed);
                    })
                    .expect("spawning a GC mark worker");
            }
            // The calling thread's own CPU time is counted by its caller. If it panics, the
            // scope still waits for the other workers: they must stop waiting for it too.
            let _abandon = AbandonOnUnwind(&abandoned);
            self.mark_worker(first, &stealers, &idle, &abandoned, threads);
        });
        cpu.load(Ordering::Relaxed)
    }

    fn find_work(&self, local: &Worker<u64>, stealers: &[Stealer<u64>]) -> Option<u64> {
        if let Some(x) = local.pop() {
            return Some(x);
        }
        loop {
            let mut retry = false;
            match self.mark_queue.injector.steal_batch_and_pop(local) {
                Steal::Success(x) => return Some(x),
                Steal::Retry => retry = true,
                Steal::Empty => {}
            }
            for st in stealers {
                match st.steal() {
                    Steal::Success(x) => return Some(x),
                    Steal::Retry => retry = true,
                    Steal::Empty => {}
                }
            }
            if !retry {
                return None;
            }
        }
    }

    fn mark_worker(
        &self,
        local: Worker<u64>,
        stealers: &[Stealer<u64>],
        idle: &AtomicUsize,
        abandoned: &AtomicBool,
        n: usize,
    ) {
        // Stay pinned while tracing (the page-table lookups nest inside this pin) and repin
        // now and then so deferred frees can proceed.
        let mut guard = crossbeam_epoch::pin();
        let mut traced = 0u32;
        // A small FIFO between the mark stack and tracing: an object's header is prefetched
        // when it enters and traced when it leaves, so its cache miss overlaps with the work
        // on the objects before it (marking small objects is bound by memory latency).
        let base = self.state.layout().view_base(View::Remapped);
        let mut fifo = [0u64; PREFETCH_DEPTH];
        let (mut head, mut len) = (0usize, 0usize);
        loop {
            loop {
                let next = self.find_work(&local, stealers);
                if let Some(off) = next {
                    prefetch(base | off);
                    if len < PREFETCH_DEPTH {
                        fifo[(head + len) % PREFETCH_DEPTH] = off;
                        len += 1;
                        continue;
                    }
                    let oldest = std::mem::replace(&mut fifo[head], off);
                    head = (head + 1) % PREFETCH_DEPTH;
                    self.trace_object(oldest, &mut |o| local.push(o));
                } else if len > 0 {
                    let oldest = fifo[head];
                    head = (head + 1) % PREFETCH_DEPTH;
                    len -= 1;
                    self.trace_object(oldest, &mut |o| local.push(o));
                } else {
                    break;
                }
                traced = traced.wrapping_add(1);
                if traced.is_multiple_of(1024) {
                    guard.repin();
                }
            }
            // Idle: finish when everyone is idle and nothing is queued.
            idle.fetch_add(1, Ordering::SeqCst);
            loop {
                let queues_empty =
                    self.mark_queue.is_empty() && stealers.iter().all(|s| s.is_empty());
                if !queues_empty {
                    idle.fetch_sub(1, Ordering::SeqCst);
                    break;
                }
                if idle.load(Ordering::SeqCst) == n || abandoned.load(Ordering::SeqCst) {
                    return;
                }
                guard.repin();
                std::thread::sleep(Duration::from_micros(50));
            }
        }
    }
}
