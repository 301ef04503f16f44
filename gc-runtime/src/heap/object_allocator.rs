//! Object allocation (ZGC's `ZObjectAllocator`): where a mutator's objects go and what it waits
//! for when memory is short. Small objects are bump-allocated without atomic read-modify-write
//! on the mutator's private small page ([`MutatorAllocation`], the state each mutator keeps),
//! medium ones with a CAS on the medium page all mutators share ([`ObjectAllocator`], the
//! heap's state, which also counts the bytes allocated), large ones on a page of their own.
//!
//! Only a page refill leaves the fast path. A new page is taken as a blocked thread (a pause
//! need not wait for it); one that had to be committed and mapped, not handed out from the
//! page cache, can take milliseconds and is recorded as a mutator wait. While a cycle runs,
//! every quantum of bytes allocated asks the pacer for a short delay (the rule is `pacer`'s);
//! when the heap is full anyway the mutator stalls for a GC cycle, and fails with
//! out-of-memory only if a whole cycle that started after its request did not help. Every
//! wait is one call on the heap's event sink, which logs and records it.
//!
//! A large object is zeroed [`BULK_CHUNK`] bytes at a time, each chunk as a blocked thread
//! (ZGC clears large arrays in segments for the same reason): zeroing hundreds of megabytes
//! in one go while running would hold every pause for as long. Its page stays unpublished
//! until the zeroing is done — registered nowhere the collector looks, no object on it handed
//! out — so no pause can see, mark, verify or free the half-zeroed object, and none need wait
//! for the chunk being zeroed; the end of each chunk waits out a pause in progress (a
//! safepoint check), and if a Pause Mark Start ran meanwhile, the page is restamped with the
//! current cycle before it is registered, as if it had been taken just then. Memory fresh
//! from the file (committed, never handed out to a page: `Page::take_zeroed`) is zero
//! already and is not zeroed again; memory from the page cache is. Skipping it saves the
//! clearing and, while cycles run, a second round of page faults: memory zeroed through one
//! view and then written through another, after a flip, was faulted in twice.
//!
//! The allocator knows the allocating thread only as an [`AllocatingThread`]: its allocation
//! state, its heap, its name, how it blocks, how it waits for cycles (the embedding API's
//! mutator, which owns the thread's safepoint state and its registry of other heaps); and the
//! heap only as an [`AllocationHeap`], the parts of it an allocation reads. Both are generic
//! parameters, so the fast path is compiled for the mutator and reads everything through the
//! one mutator pointer.

use super::pacer::PacingDecision;
use super::pacing_floor::HeldTimes;
use crate::config::{HeapConfig, Mode};
use crate::context::{GcContext, StallRequest};
use crate::observe::GcEvents;
use gc_core::{
    object_size_with_values, AllocError, ColoredPtr, Object, ObjectHeader, Offset, Page, PageKind,
    HEADER_SIZE,
};
use parking_lot::Mutex;
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Bytes a mutator allocates before it adds them to the heap's shared count.
const COUNT_BATCH: u64 = 64 << 10;

/// Bytes of bulk work on one large object or buffer between two safepoint checks: a large
/// object's zeroing here, the embedding API's chunked byte copies of objects
/// (`Scope::read_bytes`, ...) and of direct buffers. At a few GB/s (page faults of fresh
/// memory included), tens of microseconds.
pub(crate) const BULK_CHUNK: usize = 128 << 10;

/// The heap's shared allocation state: the medium page all mutators bump-allocate into with a
/// CAS, and the count of bytes allocated.
#[derive(Default)]
pub(crate) struct ObjectAllocator {
    /// The medium page mutators share.
    shared_medium: Mutex<Option<Arc<Page>>>,
    allocated: AtomicU64,
}

impl ObjectAllocator {
    /// `size` bytes on the shared medium page, if it was born with `seqnum` (a page from
    /// before the last Pause Mark Start is retired) and has room.
    fn alloc_medium(&self, size: u64, seqnum: u64) -> Option<Offset> {
        let shared = self.shared_medium.lock();
        shared
            .as_ref()
            .filter(|p| p.seqnum() == seqnum)
            .and_then(|p| p.alloc_shared(size))
    }

    /// Make `page` the shared medium page. If another thread installed one meanwhile, that
    /// page keeps only what was allocated on it so far.
    fn install_medium(&self, page: Arc<Page>) {
        *self.shared_medium.lock() = Some(page);
    }

    /// Count `size` allocated bytes.
    #[inline]
    fn count(&self, size: u64) {
        self.allocated.fetch_add(size, Ordering::Relaxed);
    }

    /// Bytes mutators allocated since the heap was created.
    pub(crate) fn allocated(&self) -> u64 {
        self.allocated.load(Ordering::Relaxed)
    }
}

/// What an allocation reads of the heap (`HeapInner` is the one heap): its settings, the
/// collector's context (phase state, pages, cycle requests), the pacer's decision, the event
/// sink and the shared allocation state.
pub(crate) trait AllocationHeap {
    fn config(&self) -> &HeapConfig;
    fn cx(&self) -> &GcContext;
    /// How long to delay a mutator that allocated `bytes` since its last check, if at all
    /// (the pacer's `delay_for`), given the delays `held` it was held by recently.
    fn pacing_delay(&self, bytes: u64, held: &HeldTimes) -> Option<PacingDecision>;
    /// A pacing delay of `imposed` began at `start` (the pacer's floor counts it in `held`).
    fn record_pacing(&self, held: &mut HeldTimes, start: Instant, imposed: Duration);
    fn events(&self) -> &GcEvents;
    fn shared(&self) -> &ObjectAllocator;
}

/// The thread an allocation runs on, as the allocator needs it.
pub(crate) trait AllocatingThread {
    type Heap: AllocationHeap;

    /// The heap it allocates in.
    fn heap(&self) -> &Self::Heap;

    /// Its own allocation state.
    fn allocation(&mut self) -> &mut MutatorAllocation;

    /// Its name in records and the log.
    fn name(&self) -> &str;

    /// Run `f` as a blocked thread (pauses do not wait for it); on the way out, wait while a
    /// pause is in progress.
    fn blocking<R>(&self, f: impl FnOnce() -> R) -> R;

    /// Run `f`, a chunk of a large object's zeroing, as a blocked thread: a pause does not
    /// wait for it, and one in progress is waited out when it ends (a safepoint check: the
    /// mutator counts it as one of its polls).
    fn zeroing_chunk(&self, f: impl FnOnce());

    /// Run `f`, a wait for GC cycles of this heap; the test `f` is given says the wait must
    /// end now, unsatisfied (it would wait for ever on a thread waiting for it at another
    /// heap).
    fn waiting_for_cycles<R>(&self, f: impl FnOnce(&dyn Fn() -> bool) -> R) -> R;
}

/// A mutator's own allocation state (ZGC's per-thread small page): its private small page,
/// the bytes allocated since its last pacing decision, and the bytes not yet added to the
/// heap's count.
#[derive(Default)]
pub(crate) struct MutatorAllocation {
    small: Option<Arc<Page>>,
    /// Bytes allocated since the last pacing decision (see `pacer`). A cell: the fast path
    /// ([`MutatorAllocation::alloc_fast`]) adds to it through a shared borrow.
    unpaced: Cell<u64>,
    /// The pacing delays of the floor's last window (see `pacing_floor`).
    held: HeldTimes,
    /// Bytes allocated and not yet added to the heap's shared count (one atomic add per
    /// [`COUNT_BATCH`] bytes instead of one per object; flushed also when the outermost scope
    /// ends and at detach).
    uncounted: Cell<u64>,
}

impl MutatorAllocation {
    /// Adds the bytes this mutator allocated since the last flush to the heap's count.
    pub(crate) fn count_allocated(&self, heap: &impl AllocationHeap) {
        let uncounted = self.uncounted.replace(0);
        if uncounted != 0 {
            heap.shared().count(uncounted);
        }
    }

    /// Allocate and initialize an object on `thread` (`n_values` value slots between its
    /// reference slots and raw bytes, see `gc_core::value`); returns its good-colored pointer.
    #[inline]
    pub(crate) fn alloc<T: AllocatingThread>(
        thread: &mut T,
        shape: u32,
        n_refs: u32,
        n_values: u32,
        n_bytes: u64,
    ) -> Result<ColoredPtr, AllocError> {
        let size = object_size_with_values(n_refs as u64, n_values as u64, n_bytes)?;
        // Pacing: one decision per quantum allocated (an object larger than a quantum is one
        // of its own size), before the allocation that completes it.
        let quantum = thread.heap().config().pacing.quantum;
        let a = thread.allocation();
        let unpaced = a.unpaced.get() + size;
        if unpaced >= quantum {
            a.unpaced.set(0);
            pace(thread, unpaced);
        } else {
            a.unpaced.set(unpaced);
        }
        let heap = thread.heap();
        let sizes = *heap.cx().pages.sizes();
        if size > sizes.object_max {
            return Err(AllocError::ObjectTooLarge {
                size,
                max: sizes.object_max,
            });
        }
        let header = ObjectHeader {
            shape,
            n_refs,
            n_bytes,
            n_values,
        };
        let (offset, zeroed) = match sizes.kind_for(size) {
            PageKind::Small => (Self::alloc_small(thread, size)?, false),
            PageKind::Medium => (alloc_medium(thread, size)?, false),
            PageKind::Large => {
                let page_size = sizes.page_size(PageKind::Large, size);
                (alloc_large(thread, size, page_size)?, true)
            }
        };
        let heap = thread.heap();
        let layout = heap.cx().layout();
        let good_color = heap.cx().state.good();
        // Initialized through the view of the color the object is handed out with: that is
        // the view the mutator goes on to use it through, so fresh memory is faulted in once,
        // in that view, and not again in a second one (gc-core's `view_populate`).
        let addr = layout.address(offset, good_color.view());
        if zeroed {
            // SAFETY: `offset..offset+size` was bump-allocated on a mapped large page that is
            // ours alone, and `alloc_large` zeroed everything after the header.
            unsafe { Object::init_over_zeroed(addr, header) };
        } else {
            // SAFETY: `offset..offset+size` was just bump-allocated on a mapped page and is
            // ours.
            unsafe { Object::init(addr, header) };
        }
        let good = layout.good(offset, good_color);
        let a = thread.allocation();
        let uncounted = a.uncounted.get() + size;
        if uncounted >= COUNT_BATCH {
            a.uncounted.set(0);
            thread.heap().shared().count(uncounted);
        } else {
            a.uncounted.set(uncounted);
        }
        Ok(good)
    }

    /// The allocation fast path, through a shared borrow: a small object bump-allocated on the
    /// mutator's private small page and zeroed, or `None` where [`MutatorAllocation::alloc`]
    /// would do more than that — the page is missing, full or retired (a refill), the pacing
    /// quantum is complete (a pacing decision), the object is not small or its size is
    /// invalid. Nothing changes on `None`; the caller takes the slow path.
    ///
    /// It neither polls nor blocks, so it may run where no safepoint can happen (the embedding
    /// API's `Scope::alloc_fresh`, under a shared borrow of the scope): the page was born in
    /// the current cycle (its sequence number is checked, as the slow path checks it), so the
    /// object counts as allocated since Mark Start — live for this cycle's marking, on a page
    /// no relocation set of this cycle holds — exactly as an object from the slow path.
    #[inline(always)]
    pub(crate) fn alloc_fast(
        &self,
        heap: &impl AllocationHeap,
        shape: u32,
        n_refs: u32,
        n_values: u32,
        n_bytes: u64,
    ) -> Option<ColoredPtr> {
        let size = object_size_with_values(n_refs as u64, n_values as u64, n_bytes).ok()?;
        let cx = heap.cx();
        if size > cx.pages.sizes().small_object_max {
            return None;
        }
        let unpaced = self.unpaced.get() + size;
        if unpaced >= heap.config().pacing.quantum {
            return None;
        }
        let page = self.small.as_ref()?;
        if page.seqnum() != cx.state.seqnum() {
            return None;
        }
        let offset = page.alloc_private(size)?;
        self.unpaced.set(unpaced);
        // Through the good color's view, as in `MutatorAllocation::alloc`.
        let good_color = cx.state.good();
        let addr = cx.layout().address(offset, good_color.view());
        let header = ObjectHeader {
            shape,
            n_refs,
            n_values,
            n_bytes,
        };
        // SAFETY: `offset..offset+size` was just bump-allocated on the mutator's private small
        // page, which is mapped (the mutator holds it) and ours alone.
        unsafe { Object::init(addr, header) };
        let uncounted = self.uncounted.get() + size;
        if uncounted >= COUNT_BATCH {
            self.uncounted.set(0);
            heap.shared().count(uncounted);
        } else {
            self.uncounted.set(uncounted);
        }
        Some(cx.layout().good(offset, good_color))
    }

    #[inline]
    fn alloc_small<T: AllocatingThread>(thread: &mut T, size: u64) -> Result<Offset, AllocError> {
        let seq = thread.heap().cx().state.seqnum();
        if let Some(p) = &thread.allocation().small {
            // A page from before the last Pause Mark Start is retired: never allocate into it.
            if p.seqnum() == seq {
                if let Some(off) = p.alloc_private(size) {
                    return Ok(off);
                }
            }
        }
        thread.allocation().small = None;
        let small = thread.heap().cx().pages.sizes().small;
        let page = page_stalling(thread, PageKind::Small, small, Publish::Now)?;
        let off = page
            .alloc_private(size)
            .expect("a fresh small page fits a small object");
        thread.allocation().small = Some(page);
        Ok(off)
    }
}

/// A large object of `size` bytes on a page of its own of `page_size` bytes, everything after
/// its header zeroed [`BULK_CHUNK`] bytes at a time, each chunk as a blocked thread, unless the
/// page's memory is fresh from the file (zero, [`Page::take_zeroed`]); its page is registered
/// (published to the collector) only then, born in the current cycle.
#[cold]
#[inline(never)]
fn alloc_large(
    thread: &impl AllocatingThread,
    size: u64,
    page_size: u64,
) -> Result<Offset, AllocError> {
    let page = page_stalling(thread, PageKind::Large, page_size, Publish::Later)?;
    let offset = page
        .alloc_private(size)
        .expect("a large page holds its object");
    let base = thread
        .heap()
        .cx()
        .layout()
        .address(offset, thread.heap().cx().state.good().view())
        .as_ptr::<u8>();
    // Memory fresh from the file is zero already: only reused memory is zeroed.
    let mut at = if page.take_zeroed() {
        size
    } else {
        HEADER_SIZE
    };
    while at < size {
        let n = (BULK_CHUNK as u64).min(size - at);
        let chunk = base.wrapping_add(at as usize);
        thread.zeroing_chunk(|| {
            // SAFETY: `offset..offset + size` lies on `page`, which is mapped (taken, not
            // freed) and known to no other thread: unregistered, so no collector reads,
            // relocates or frees it, pause or not, and no object on it was handed out;
            // `chunk..chunk + n` lies inside it. Large pages' addresses never change, so
            // `base` stays valid from one chunk to the next.
            unsafe { std::ptr::write_bytes(chunk, 0, n as usize) };
        });
        at += n;
    }
    // No poll from here until the object is rooted: no Pause Mark Start comes between this
    // read of the cycle and the page's registration.
    let cx = thread.heap().cx();
    let seqnum = cx.state.seqnum();
    if page.seqnum() != seqnum {
        // SAFETY: the page is not registered yet and nothing on it was handed out (above).
        unsafe { page.restamp(seqnum) };
    }
    cx.pages.register(&page);
    Ok(offset)
}

fn alloc_medium(thread: &impl AllocatingThread, size: u64) -> Result<Offset, AllocError> {
    let heap = thread.heap();
    let seq = heap.cx().state.seqnum();
    if let Some(off) = heap.shared().alloc_medium(size, seq) {
        return Ok(off);
    }
    // The shared page is full (or retired): take a new one.
    let medium = heap
        .cx()
        .pages
        .sizes()
        .medium
        .expect("medium pages enabled");
    let page = page_stalling(thread, PageKind::Medium, medium, Publish::Now)?;
    let off = page
        .alloc_shared(size)
        .expect("a fresh medium page fits a medium object");
    heap.shared().install_medium(page);
    Ok(off)
}

/// When a page taken for a mutator is registered (published to the collector).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Publish {
    /// At once: a small or medium page, whose objects are initialized one at a time.
    Now,
    /// By the caller, once its object is initialized: a large page, zeroed a chunk at a time
    /// as a blocked thread, handed back unregistered whatever cycle it was born in.
    Later,
}

/// Take a new page (without stalling). One that took `PAGE_ALLOCATION_RECORD_MIN` or longer
/// (memory committed and mapped, not a page from the cache) is recorded as a mutator wait if
/// `record` (not inside a stall, which is recorded as a whole).
fn take_page(
    thread: &impl AllocatingThread,
    kind: PageKind,
    size: u64,
    record: bool,
    publish: Publish,
) -> Result<Arc<Page>, AllocError> {
    let events = thread.heap().events();
    let began = events.begin();
    let page = take_page_unrecorded(thread, kind, size, publish);
    if record {
        events.page_allocation(thread.name(), began);
    }
    page
}

/// Take a new page. Committing and mapping memory can take a millisecond (page faults,
/// `fallocate`), so it runs as a blocked thread: a pause need not wait for it. A Pause Mark
/// Start may run meanwhile; a page born before it must never receive this cycle's objects
/// (they would be neither marked nor "allocated since Mark Start"), so such a page is given
/// back and another taken. A page taken to [`Publish::Later`] is handed back unregistered at
/// once: its taker registers it, restamped with the cycle of that moment.
fn take_page_unrecorded(
    thread: &impl AllocatingThread,
    kind: PageKind,
    size: u64,
    publish: Publish,
) -> Result<Arc<Page>, AllocError> {
    let cx = thread.heap().cx();
    let (pages, state) = (&cx.pages, &cx.state);
    loop {
        // The page is registered in `pages` only here, running again, and only if no Pause
        // Mark Start ran while we were blocked: an object allocated on a page born before
        // the current cycle would be neither marked nor "allocated since mark start", and a
        // stale page registered while blocked could be freed as empty by Concurrent Select
        // Relocation Set before we free it here (a double free).
        let page = thread.blocking(|| pages.new_mutator_page(kind, size, state.seqnum()))?;
        if publish == Publish::Later {
            return Ok(page);
        }
        if page.seqnum() == state.seqnum() {
            pages.register(&page);
            return Ok(page);
        }
        pages.free_unregistered(&page);
    }
}

/// True if the live data the last completed cycle found leaves room for `size` more bytes of
/// mutator pages: a stalled allocation that still failed lost what that cycle freed to other
/// threads, and should wait for another cycle rather than fail.
fn last_cycle_left_room_for(heap: &impl AllocationHeap, size: u64) -> bool {
    let live = heap.events().last_cycle_live_bytes();
    live.is_some_and(|l| heap.cx().pages.room_after(l, size))
}

/// Take a page; when the heap is full, stall (as a blocked thread) for a GC cycle, and fail
/// with out-of-memory if a whole cycle that started after the request did not help. (Pacing,
/// which should make stalls rare, happens per quantum allocated, in `alloc`.)
#[cold]
#[inline(never)]
fn page_stalling(
    thread: &impl AllocatingThread,
    kind: PageKind,
    size: u64,
    publish: Publish,
) -> Result<Arc<Page>, AllocError> {
    let heap = thread.heap();
    match take_page(thread, kind, size, true, publish) {
        Ok(p) => return Ok(p),
        Err(AllocError::OutOfMemory { .. }) if heap.config().mode != Mode::Epsilon => {}
        Err(e) => return Err(e),
    }
    let began = heap.events().begin();
    let control = &heap.cx().control;
    let result = thread.waiting_for_cycles(|must_give_up| {
        control.begin_stall();
        // The cycle that starts after this request must complete before we give up; until
        // then retry whenever a page is freed (or every 10 ms). Made while a cycle runs, the
        // request waits for that cycle's end, which may make room (`StallRequest`).
        let mut req = StallRequest::default();
        control.request_stall(&mut req);
        let mut extra_cycles = 0;
        let mut minor_retries = 0;
        let result = loop {
            let progress = control.stall_progress(req.target);
            match take_page(thread, kind, size, false, publish) {
                Ok(p) => break Some(Ok(p)),
                Err(AllocError::OutOfMemory { .. }) => {}
                Err(e) => break Some(Err(e)),
            }
            if progress.shutdown || must_give_up() {
                break None;
            }
            if progress.done && progress.last_minor && minor_retries < 16 {
                // The cycle that completed was a minor (the stall's request came in after the
                // driver had taken a minor request, but before that cycle began): it frees
                // only empty young pages and says nothing of the heap's live data. Ask again:
                // a stall's request replaces a pending minor one, so the next cycle is a major
                // (a few times at most: a minor may also complete after the major we waited
                // for, before we look).
                minor_retries += 1;
                control.request_stall(&mut req);
                continue;
            }
            if progress.done {
                // Fail only if the completed cycle freed nothing for us. If it left room for
                // this request and other threads took it first, wait for another cycle (a
                // few at most), instead of reporting out-of-memory with a heap that is
                // mostly garbage.
                if extra_cycles < 4 && last_cycle_left_room_for(heap, size) {
                    extra_cycles += 1;
                    control.request_stall(&mut req);
                    continue;
                }
                break None;
            }
            thread.blocking(|| control.stall_wait(&mut req, progress.completed));
        };
        control.end_stall(&req);
        result
    });
    let failed = !matches!(result, Some(Ok(_)));
    heap.events().allocation_stall(thread.name(), began, failed);
    match result {
        Some(r) => r,
        None => {
            let u = heap.cx().pages.usage();
            Err(AllocError::OutOfMemory {
                requested: size,
                used: u.used,
                capacity: u.capacity,
            })
        }
    }
}

/// The pacing delay for `bytes` allocated, if the pacer asks for one: slept as a blocked
/// thread (pauses do not wait for it), recorded (the time held, and the delay imposed) and
/// logged.
#[cold]
#[inline(never)]
fn pace(thread: &mut impl AllocatingThread, bytes: u64) {
    let mut held = std::mem::take(&mut thread.allocation().held);
    let heap = thread.heap();
    let Some(decision) = heap.pacing_delay(bytes, &held) else {
        thread.allocation().held = held;
        return;
    };
    let delay = decision.delay;
    let began = heap.events().begin();
    heap.record_pacing(&mut held, began.at(), delay);
    thread.blocking(|| crate::threads::sleep_precisely(delay));
    heap.events()
        .pacing(thread.name(), began, delay, decision.beyond_floor);
    thread.allocation().held = held;
}
