//! Mutators: threads attached to a heap (HotSpot's `JavaThread`, as far as the GC sees it).
//! A mutator allocates through the heap's object allocator (`object_allocator`: its pages,
//! page refills, pacing delays, allocation stalls), which it hands its own allocation state
//! and itself as the thread that blocks and waits.
//!
//! A mutator owns its local-handle stack, its allocation state (a private small page, bump
//! allocated without atomic read-modify-write), its mark buffer (objects its barriers marked
//! during Concurrent Mark, handed to the GC workers in batches) and its copy of the bad mask,
//! refreshed whenever it leaves a safepoint or the blocked state. Dropping the [`Mutator`]
//! detaches it, also while unwinding from a panic.
//!
//! A mutator touches the heap only inside a scope ([`Mutator::scope`]); outside every scope it
//! counts as *blocked*, like a HotSpot thread "in native": pauses do not wait for it. It is
//! attached blocked, its outermost scope makes it running on entry and blocked again on exit,
//! and dropping it makes it running once more, to hand its mark buffer over, before it
//! detaches. So an attached mutator that sits idle between two scopes (an interpreter waiting
//! for input) holds up no pause, and neither does one lost with `mem::forget` (which no scope
//! can borrow at that moment); a forgotten mutator stays registered, and its thread cannot
//! attach to that heap again.
//!
//! Each thread keeps a registry of its mutators, one per heap. It refuses a second attach to
//! the same heap and [`crate::Heap::collect`] on it, decides whether dropping a `Heap` may
//! wait for its driver, and tells a wait at one heap (a park at its safepoint, a wait for one
//! of its cycles) which of the thread's mutators of other heaps to mark as waiting elsewhere,
//! so that those heaps' pauses give way instead of waiting on the waiting thread (see
//! `safepoint`).

use crate::config::Mode;
use crate::context::Generations;
use crate::heap::HeapInner;
use crate::heap::MutatorSlowPath;
use crate::heap::{AllocatingThread, MutatorAllocation};
use crate::observe::GcCause;
use crate::roots::HandleStack;
use crate::roots::MutatorShared;
use crate::threads::{self, OtherHeaps, Safepoint, ThreadState, ThreadStateCell};
use gc_core::{AllocError, ColoredPtr, ColoredSlot, Offset, SlowPath};
use std::cell::{Cell, RefCell};
use std::marker::PhantomData;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// One of the calling thread's mutators, as its registry keeps it.
struct Attached {
    heap: Arc<HeapInner>,
    shared: Arc<MutatorShared>,
}

thread_local! {
    /// The calling thread's mutators, at most one per heap.
    static THREAD_MUTATORS: RefCell<Vec<Attached>> = const { RefCell::new(Vec::new()) };
}

/// True if the calling thread has a mutator of heap `heap_id` (forgotten ones included).
pub(super) fn thread_has_mutator(heap_id: u64) -> bool {
    THREAD_MUTATORS
        .try_with(|r| r.borrow().iter().any(|a| a.heap.id() == heap_id))
        .unwrap_or(false)
}

/// True if the calling thread is inside a scope of any heap's mutator (outside a blocking
/// region): pauses of that heap wait for the thread while it waits for anything else.
pub(super) fn thread_is_running_a_mutator() -> bool {
    THREAD_MUTATORS
        .try_with(|r| {
            r.borrow()
                .iter()
                .any(|a| a.shared.thread.get() == ThreadState::Running)
        })
        .unwrap_or(false)
}

/// The calling thread's mutators of heaps other than `heap_id`, for a wait at that heap.
struct OtherHeapsOfThisThread {
    heap_id: u64,
}

impl OtherHeaps for OtherHeapsOfThisThread {
    fn for_each(&self, f: &mut dyn FnMut(&Safepoint, &ThreadStateCell)) {
        // During thread-local destruction (a mutator kept in a thread-local) the registry is
        // gone: then the thread has no other mutator to mark.
        let _ = THREAD_MUTATORS.try_with(|r| {
            for a in r.borrow().iter().filter(|a| a.heap.id() != self.heap_id) {
                f(a.heap.safepoint(), &a.shared.thread);
            }
        });
    }
}

/// A wait of the calling thread for a GC cycle of `heap` (an allocation stall, a requested
/// collection): for as long as it lasts, the thread's running mutators of other heaps say so,
/// and those heaps' pauses give way (see `safepoint`).
pub(super) struct CycleWait<'h> {
    heap: &'h HeapInner,
    ticket: u64,
    others: OtherHeapsOfThisThread,
    /// The thread has running mutators of other heaps: the wait can be part of a cycle of
    /// waits.
    crosses: bool,
}

impl<'h> CycleWait<'h> {
    pub(super) fn begin(heap: &'h HeapInner) -> Self {
        let ticket = threads::next_ticket();
        let others = OtherHeapsOfThisThread { heap_id: heap.id() };
        let crosses = threads::begin_cycle_wait(ticket, &others);
        CycleWait {
            heap,
            ticket,
            others,
            crosses,
        }
    }

    /// True if the wait must end now, unsatisfied: the heap's pause gives way to an older
    /// wait of another thread for a cycle of a heap this thread runs in, so neither cycle
    /// can complete while both threads wait.
    pub(super) fn must_give_up(&self) -> bool {
        self.crosses
            && self
                .heap
                .safepoint()
                .gave_way_to_an_older_cycle_wait(self.ticket)
    }
}

impl Drop for CycleWait<'_> {
    fn drop(&mut self) {
        threads::end_cycle_wait(self.ticket, &self.others);
    }
}

/// The slow path of a mutator's barrier is the mutator itself, passed as the pointer the fast path
/// already holds: the fast path builds nothing and stores nothing (the
/// heap and the shared part are looked up only on a bad pointer).
impl SlowPath for Mutator {
    #[inline]
    fn make_good(&self, ptr: ColoredPtr) -> ColoredPtr {
        MutatorSlowPath {
            heap: &self.heap,
            shared: &self.shared,
        }
        .make_good(ptr)
    }
}

/// Out of memory: the heap could not satisfy an allocation even after a full GC cycle.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct OutOfMemory(pub AllocError);

/// Why a thread could not attach.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AttachError {
    #[error("this thread already has a mutator on this heap: use that one")]
    AlreadyAttached,
    #[error("mapping the local-handle stack failed: {0}")]
    HandleStack(String),
}

/// A thread attached to a heap. Not `Send`: it belongs to the thread that attached.
///
/// It reads and writes the heap only inside a scope ([`Mutator::scope`]); outside every scope
/// it counts as blocked, so the collector never waits for it there (see the module
/// documentation). A thread may have one mutator per heap, and be inside scopes of several
/// heaps at once.
pub struct Mutator {
    pub(super) heap: Arc<HeapInner>,
    pub(super) shared: Arc<MutatorShared>,
    pub(super) bad_mask: Cell<u64>,
    /// The heap layout's offset mask (fixed for the heap's life), kept here so that
    /// [`crate::ObjRef::same`] compares two differently colored pointers without reaching
    /// the layout through the heap.
    pub(super) offset_mask: u64,
    /// The heap's page ages and remembered set if `HeapConfig::track_generations` is on,
    /// kept here so the store barrier's test when it is off is one load of the mutator.
    generations: Option<Arc<Generations>>,
    /// Safepoint polls made (see [`crate::Scope::polls`]).
    polls: Cell<u64>,
    /// Its small page and allocation counters (the allocator's per-thread state).
    allocation: MutatorAllocation,
    _not_send: PhantomData<*const ()>,
}

impl Mutator {
    pub(super) fn attach(heap: &Arc<HeapInner>, name: &str) -> Result<Mutator, AttachError> {
        if thread_has_mutator(heap.id()) {
            return Err(AttachError::AlreadyAttached);
        }
        let handles = HandleStack::new(heap.config().handle_capacity)
            .map_err(|e| AttachError::HandleStack(e.to_string()))?;
        let shared = Arc::new(MutatorShared::new(name, handles));
        THREAD_MUTATORS.with(|r| {
            r.borrow_mut().push(Attached {
                heap: heap.clone(),
                shared: shared.clone(),
            })
        });
        let m = Mutator {
            heap: heap.clone(),
            shared,
            // Set when the mutator leaves the blocked state (its first scope).
            bad_mask: Cell::new(0),
            offset_mask: heap.layout().offset_mask(),
            generations: heap.generations().cloned(),
            polls: Cell::new(0),
            allocation: MutatorAllocation::default(),
            _not_send: PhantomData,
        };
        // Registered, and left blocked: pauses do not wait for it until its first scope.
        heap.safepoint().attach(&m.shared.thread, || {
            heap.roots().add_mutator(m.shared.clone())
        });
        Ok(m)
    }

    /// The store barrier, after this mutator stored `p` into the heap word at `slot` (a
    /// reference or value slot (`is_value`) of an object, not a root): with the generational bookkeeping
    /// on, an old holder receiving a young value remembers the slot (see
    /// `context::generations`); off, one load and a branch. No safepoint lies between the
    /// store and this call, so the slot's bit is set before any pause can look for it.
    #[inline(always)]
    pub(super) fn store_barrier(&self, slot: *const u64, p: ColoredPtr, is_value: bool) {
        if let Some(g) = &self.generations {
            let mask = self.offset_mask;
            g.store_barrier(Offset::from_raw(slot as u64 & mask), p, mask, is_value);
        }
    }

    /// True if `p` may be stored by this mutator: good, or null, or (while a minor cycle
    /// marks) a Remapped pointer to an old object, the form a minor hands old objects out in
    /// (see `mark::marker`). For debug assertions.
    pub(super) fn storable(&self, p: ColoredPtr) -> bool {
        let layout = self.heap.layout();
        p.raw() & self.bad_mask.get() == 0
            || (layout.color(p) == gc_core::Color::REMAPPED
                && self
                    .generations
                    .as_ref()
                    .is_some_and(|g| g.is_old(layout.offset(p))))
    }

    /// True if the heap keeps page ages and a remembered set (the store barrier's first test).
    #[inline(always)]
    pub(super) fn tracks_generations(&self) -> bool {
        self.generations.is_some()
    }

    /// The thread's name as given at attach.
    pub fn name(&self) -> &str {
        &self.shared.name
    }

    fn refresh(&self) {
        self.bad_mask.set(self.heap.state().bad_mask());
    }

    fn others(&self) -> OtherHeapsOfThisThread {
        OtherHeapsOfThisThread {
            heap_id: self.heap.id(),
        }
    }

    /// Safepoint polls this mutator made.
    pub(super) fn polls(&self) -> u64 {
        self.polls.get()
    }

    /// Become running: waits while a pause is in progress, then refreshes the bad mask.
    pub(super) fn leave_blocked(&self) {
        self.heap
            .safepoint()
            .leave_blocked(&self.shared.thread, &self.others());
        self.refresh();
    }

    pub(super) fn enter_blocked(&self) {
        self.heap.safepoint().enter_blocked(&self.shared.thread);
    }

    /// Safepoint poll: parks here while a pause is in progress.
    #[inline]
    pub(super) fn poll(&self) {
        self.polls.set(self.polls.get() + 1);
        if self
            .heap
            .safepoint()
            .poll(&self.shared.thread, &self.others())
        {
            self.refresh();
        }
    }

    /// Run `f` as a blocked thread (sleep, I/O): pauses do not wait for it; on the way out it
    /// waits while a pause is in progress.
    pub(super) fn blocking<R>(&self, f: impl FnOnce() -> R) -> R {
        struct Leave<'a>(&'a Mutator);
        impl Drop for Leave<'_> {
            fn drop(&mut self) {
                self.0.leave_blocked();
            }
        }
        self.enter_blocked();
        let _leave = Leave(self);
        f()
    }

    /// Run `f`, one chunk of bulk work that reads and writes no heap memory (a large
    /// object's zeroing on its unpublished page, a direct buffer's copy), as a blocked thread:
    /// a pause does not wait for it, and one in progress is waited out when it ends, a
    /// safepoint check counted as one of the polls.
    pub(super) fn blocked_chunk<R>(&self, f: impl FnOnce() -> R) -> R {
        self.polls.set(self.polls.get() + 1);
        self.blocking(f)
    }

    /// The barrier load of a reference slot.
    #[inline(always)]
    pub(super) fn load_slot(&self, slot: &ColoredSlot) -> ColoredPtr {
        self.load_slot_masked(slot, self.bad_mask.get())
    }

    /// The barrier load of a reference slot, with `bad_mask` the mutator's bad mask read
    /// earlier in the same safepoint-free stretch (it changes only at a safepoint or when the
    /// mutator leaves the blocked state).
    #[inline(always)]
    pub(super) fn load_slot_masked(&self, slot: &ColoredSlot, bad_mask: u64) -> ColoredPtr {
        gc_core::load_barrier(slot, bad_mask, self)
    }

    /// Adds the bytes this mutator allocated since the last flush to the heap's count.
    pub(super) fn count_allocated(&self) {
        self.allocation.count_allocated(&*self.heap);
    }

    /// Allocate an object; returns its good-colored pointer. Polls for a safepoint first.
    pub(super) fn alloc(
        &mut self,
        shape: u32,
        n_refs: u32,
        n_values: u32,
        n_bytes: u64,
    ) -> Result<ColoredPtr, OutOfMemory> {
        self.poll();
        MutatorAllocation::alloc(self, shape, n_refs, n_values, n_bytes).map_err(OutOfMemory)
    }

    /// The allocation fast path (see `MutatorAllocation::alloc_fast`): a small object on the
    /// private page, or `None` where [`Mutator::alloc`] would refill, pace or stall. Neither
    /// polls nor blocks, so it needs only a shared borrow.
    #[inline(always)]
    pub(super) fn alloc_fast(
        &self,
        shape: u32,
        n_refs: u32,
        n_values: u32,
        n_bytes: u64,
    ) -> Option<ColoredPtr> {
        self.allocation
            .alloc_fast(&*self.heap, shape, n_refs, n_values, n_bytes)
    }

    /// Ask for a GC cycle and wait for it as a blocked thread. Returns early, the cycle not
    /// yet completed, if the wait must give up (see [`CycleWait::must_give_up`]).
    pub(super) fn collect(&mut self, cause: &str) {
        self.collect_for(GcCause::Explicit(cause.to_string()));
    }

    /// Request a cycle for `cause` and wait (as a blocked thread) until a cycle that started
    /// after the request has completed. Returns false if none completed: an `epsilon` heap,
    /// a heap shutting down, or a wait that had to give way (see `CycleWait`).
    pub(super) fn collect_for(&mut self, cause: GcCause) -> bool {
        if self.heap.config().mode == Mode::Epsilon {
            return false;
        }
        let heap = self.heap.clone();
        let cycle_wait = CycleWait::begin(&heap);
        let control = heap.control();
        self.blocking(|| {
            let n = control.request(cause);
            control.wait_for_cycle(n, || cycle_wait.must_give_up())
        })
    }
}

/// The object allocator sees a mutator as the thread it allocates on.
impl AllocatingThread for Mutator {
    type Heap = HeapInner;

    #[inline]
    fn heap(&self) -> &HeapInner {
        &self.heap
    }

    #[inline]
    fn allocation(&mut self) -> &mut MutatorAllocation {
        &mut self.allocation
    }

    fn name(&self) -> &str {
        &self.shared.name
    }

    fn blocking<R>(&self, f: impl FnOnce() -> R) -> R {
        Mutator::blocking(self, f)
    }

    fn zeroing_chunk(&self, f: impl FnOnce()) {
        self.blocked_chunk(f)
    }

    fn waiting_for_cycles<R>(&self, f: impl FnOnce(&dyn Fn() -> bool) -> R) -> R {
        let cycle_wait = CycleWait::begin(&self.heap);
        f(&|| cycle_wait.must_give_up())
    }
}

impl Drop for Mutator {
    fn drop(&mut self) {
        // Outside every scope the mutator is blocked; it becomes running (waiting out a pause
        // in progress) so that its handles are dropped and its mark buffer handed over while
        // it runs (see `Safepoint::detach`): a buffer reaching the mark queue after Pause Mark
        // End found the queue empty would never be traced.
        debug_assert_eq!(self.shared.scope_depth.load(Ordering::Relaxed), 0);
        self.count_allocated();
        self.leave_blocked();
        let heap = &self.heap;
        let shared = &self.shared;
        heap.safepoint().detach(
            &shared.thread,
            || {
                shared.handles.truncate(0);
                heap.flush_mark_buffer(shared);
            },
            || heap.roots().remove_mutator(shared),
        );
        let _ = THREAD_MUTATORS.try_with(|r| {
            r.borrow_mut()
                .retain(|a| !Arc::ptr_eq(&a.shared, &self.shared))
        });
    }
}

/// Minor cycles need the generational bookkeeping and the concurrent cycle's phases: an
/// error saying what to change otherwise.
pub(super) fn minor_allowed(config: &crate::HeapConfig) -> Result<(), String> {
    if !config.mode.is_concurrent() {
        return Err(format!(
            "a minor cycle runs only in the concurrent and generational modes, not {}: \
             create the heap with Mode::Generational, or Mode::Concurrent with \
             HeapConfig::track_generations(true)",
            config.mode
        ));
    }
    if !config.tracks_generations() {
        return Err(
            "a minor cycle needs page ages and a remembered set: create the heap \
                    with Mode::Generational, or with HeapConfig::track_generations(true)"
                .into(),
        );
    }
    Ok(())
}
