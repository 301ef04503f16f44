//! Marking (ZGC's `ZMark`): parallel GC workers trace the object graph from the roots with
//! work stealing (`crossbeam-deque`), while mutators' barriers mark what they load into their
//! own buffers, which are handed over in batches.
//!
//! Tracing an object applies the marking barrier to every slot — its reference slots, and those
//! of its value slots that hold a pointer (`gc_core::value`; healed with their tag) —: a bad
//! pointer is made good (remapped if stale) and healed in place; the target is marked in its page's live map, and
//! pushed if this worker marked it. Termination: a worker that finds no work goes idle; when
//! every worker is idle and every queue is empty, the phase ends. Pause Mark End then checks
//! the mutators' buffers; if they held work, marking resumes. A worker that panics never goes
//! idle: it marks the marking abandoned instead, so the others stop waiting for it and its
//! panic reaches the driver (which aborts the process) when the workers' scope ends.
//!
//! In a minor (young-only) cycle marking follows young objects only: an object on an old page
//! is taken as live and neither marked nor traced, and a pointer to it is healed Remapped,
//! never in the minor's mark color ([`good_for`]); Concurrent Mark Roots also scans the
//! remembered set ([`Mark::scan_remembered`]).
//!
//! The subsystem owns the global mark queue. The live-map operations every phase needs —
//! [`mark_object`], [`is_live`] and the marking barrier [`mark_barrier`] (what the load
//! barrier's slow path does while marking) — are functions of the [`GcContext`], since they
//! touch only the pages' live maps and the forwarding index.

use super::live_cache::{Live, LiveCache};
use super::mark_batches::MarkBatches;
use crate::context::GcContext;
use crate::observe::{InjectedPanic, InjectedPanics};
use crate::roots::MutatorShared;
use crate::roots::Roots;
use crate::roots::{BufferedWork, MarkSink, MARK_BUFFER_FLUSH};
use crate::threads::{CrewTotals, Member, Turn, WorkerTarget};
use crossbeam_deque::{Injector, Steal, Stealer, Worker};
use gc_core::heap_epoch::HeapGuard;
use gc_core::{Address, AddressLayout, ColoredPtr, GoodColor, Object, Offset, ValueWord, View};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Marking: the global mark queue (roots and work a leaving worker gives back go here;
/// workers steal from it) and the mutators' full buffers.
#[derive(Default)]
pub(crate) struct Mark {
    queue: Injector<Offset>,
    /// Mutators' mark buffers, queued whole.
    batches: MarkBatches,
    /// Objects GC workers traced since [`Mark::take_traced`] last ran.
    traced: AtomicU64,
    /// Stale slots GC workers remapped since [`Mark::take_stale_remapped`] last ran.
    stale_remapped: AtomicU64,
    /// How many mutators' mark buffers hold entries.
    buffered: BufferedWork,
}

/// Adds a sum of a [`LiveCache`] to the live counts of the page holding `at`.
fn add_live(cx: &GcContext, at: Offset, sum: Live, guard: &HeapGuard) {
    // The objects summed were traced in this cycle, so their page is not freed before
    // marking ends: the lookup finds it.
    if let Some(page) = cx.page_table().get(at, guard) {
        page.live_map()
            .add_live(cx.state.seqnum(), sum.objects, sum.bytes);
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
const PREFETCH_DEPTH: usize = 16;
/// Targets in flight between being found in a slot and being marked (see [`MarkRing`]).
const MARK_RING_DEPTH: usize = 8;
/// Stale pointers in flight between being found in a slot and being remapped (see
/// [`MarkRing`]).
const STALE_RING_DEPTH: usize = 8;

#[inline(always)]
fn prefetch(addr: Address) {
    gc_core::prefetch(addr.raw() as *const u8)
}

/// The layout and colors of the marking, read once per traced object.
#[derive(Clone, Copy)]
struct TraceColors {
    layout: AddressLayout,
    bad: u64,
    mark: GoodColor,
    /// A minor cycle marks (old targets are healed to Remapped: [`good_for`]).
    minor: bool,
}

/// Which slot of a traced object: a reference slot, or a value slot holding a pointer.
#[derive(Clone, Copy)]
enum SlotIndex {
    Ref(usize),
    Value(usize),
}

/// Heal slot `slot` of `obj`, from which the bad pointer `bad` was read, to `good`: a
/// reference slot with the reference CAS, a value slot with the value CAS (tag included).
/// Returns true for a value slot (healed by this call or a racing one), for the counts.
#[inline(always)]
fn heal(obj: Object, slot: SlotIndex, bad: ColoredPtr, good: ColoredPtr, bad_mask: u64) -> bool {
    if bad == good {
        // A minor's Remapped pointer to an old object: nothing to write.
        return false;
    }
    match slot {
        SlotIndex::Ref(i) => {
            gc_core::self_heal(obj.ref_slot(i), bad, good, bad_mask);
            false
        }
        SlotIndex::Value(i) => {
            gc_core::self_heal_value(
                obj.value_slot(i),
                ValueWord::pointer(bad),
                ValueWord::pointer(good),
                bad_mask,
            );
            true
        }
    }
}

/// A slot of a traced object that held a stale pointer into a relocated page: the pointer
/// still to be remapped, healed into the slot and marked.
#[derive(Clone, Copy)]
struct StaleSlot {
    /// The traced object: marked in this cycle, so its page stays mapped until marking ends.
    obj: Object,
    /// Which of its slots.
    slot: SlotIndex,
    /// The stale pointer read from the slot.
    ptr: ColoredPtr,
}

/// A GC worker's targets found but not yet marked, in two stages, each a small FIFO that
/// overlaps a cache miss with the work on the entries ahead of it:
///
/// - **stale**: a pointer with the previous cycle's mark color into a page that was relocated
///   must be remapped through the page's forwarding table, whose entry is a random word of a
///   large table (profiled: the lookup waited on that load most of its time). Such a slot
///   enters with that entry prefetched and is remapped, healed and passed to the mark stage
///   `STALE_RING_DEPTH` stale slots later.
/// - **mark**: marking an object is a read-modify-write of one word of its page's live map, a
///   random word of a large bitmap: a cache miss per object. A target entering has that word
///   prefetched; it is marked when it leaves, `MARK_RING_DEPTH` targets later.
///
/// The ring is local to its worker and emptied ([`MarkRing::drain`], stale stage first)
/// before the worker looks for more work or goes idle, so marking ends with it empty: nothing
/// can be left unmarked in it when the workers terminate.
struct MarkRing {
    slots: [Offset; MARK_RING_DEPTH],
    head: usize,
    len: usize,
    stale: [Option<StaleSlot>; STALE_RING_DEPTH],
    stale_head: usize,
    stale_len: usize,
    /// Stale slots finished so far.
    stale_remapped: u64,
    /// Value slots healed so far, and of those the ones remapped to a moved object.
    value_heals: u64,
    value_moves: u64,
}

impl MarkRing {
    fn new() -> Self {
        MarkRing {
            slots: [Offset::ZERO; MARK_RING_DEPTH],
            head: 0,
            len: 0,
            stale: [None; STALE_RING_DEPTH],
            stale_head: 0,
            stale_len: 0,
            stale_remapped: 0,
            value_heals: 0,
            value_moves: 0,
        }
    }

    /// Take a stale slot in (its forwarding entry prefetched by the caller); when the stale
    /// stage is full, finish the oldest.
    #[inline]
    fn push_stale(
        &mut self,
        cx: &GcContext,
        stale: StaleSlot,
        guard: &HeapGuard,
        push: &mut dyn FnMut(Offset),
    ) {
        if self.stale_len < STALE_RING_DEPTH {
            self.stale[(self.stale_head + self.stale_len) % STALE_RING_DEPTH] = Some(stale);
            self.stale_len += 1;
            return;
        }
        let oldest = self.stale[self.stale_head].replace(stale);
        self.stale_head = (self.stale_head + 1) % STALE_RING_DEPTH;
        self.finish_stale(cx, oldest.expect("a full stage holds entries"), guard, push);
    }

    /// Remap a stale slot's pointer (its forwarding entry now in the cache), heal the slot and
    /// pass the target on to the mark stage.
    #[inline]
    fn finish_stale(
        &mut self,
        cx: &GcContext,
        stale: StaleSlot,
        guard: &HeapGuard,
        push: &mut dyn FnMut(Offset),
    ) {
        let layout = cx.layout();
        let mark = cx.state.good();
        let target = cx.remap_stale_in(stale.ptr, guard);
        if heal(
            stale.obj,
            stale.slot,
            stale.ptr,
            good_for(cx, target, mark),
            cx.state.bad_mask(),
        ) {
            self.value_heals += 1;
            self.value_moves += (target != layout.offset(stale.ptr)) as u64;
        }
        self.stale_remapped += 1;
        self.push(cx, target, guard, push);
    }

    /// Take `off` in (prefetching its live-map word); when full, mark the oldest target.
    #[inline]
    fn push(
        &mut self,
        cx: &GcContext,
        off: Offset,
        guard: &HeapGuard,
        push: &mut dyn FnMut(Offset),
    ) {
        if let Some(page) = cx.page_table().get(off, guard) {
            gc_core::prefetch(page.live_map().word_addr(page.index_of(off)));
        }
        if self.len < MARK_RING_DEPTH {
            self.slots[(self.head + self.len) % MARK_RING_DEPTH] = off;
            self.len += 1;
            return;
        }
        let oldest = std::mem::replace(&mut self.slots[self.head], off);
        self.head = (self.head + 1) % MARK_RING_DEPTH;
        mark_object_in(cx, oldest, guard, push);
    }

    /// Remap and mark every target still in the ring.
    fn drain(&mut self, cx: &GcContext, guard: &HeapGuard, push: &mut dyn FnMut(Offset)) {
        while self.stale_len > 0 {
            let stale = self.stale[self.stale_head].take();
            self.stale_head = (self.stale_head + 1) % STALE_RING_DEPTH;
            self.stale_len -= 1;
            self.finish_stale(cx, stale.expect("a queued stale slot"), guard, push);
        }
        while self.len > 0 {
            let off = self.slots[self.head];
            self.head = (self.head + 1) % MARK_RING_DEPTH;
            self.len -= 1;
            mark_object_in(cx, off, guard, push);
        }
    }
}

/// The marking barrier: the good (mark-colored) pointer for the bad pointer `ptr`, remapped if
/// stale; marks the object and passes it to `push` if this call marked it.
#[inline]
pub(crate) fn mark_barrier(
    cx: &GcContext,
    ptr: ColoredPtr,
    push: &mut dyn FnMut(Offset),
) -> ColoredPtr {
    debug_assert!(!ptr.is_null());
    if let Some(good) = minor_old_remapped(cx, ptr) {
        return good;
    }
    // One pin for the whole slow path.
    let guard = gc_core::heap_epoch::pin();
    let mark = cx.state.good();
    let off = cx.remap_stale_in(ptr, &guard);
    mark_object_in(cx, off, &guard, push);
    good_for(cx, off, mark)
}

/// The marking barrier's shortcut for the slow path a minor makes common: a Remapped
/// pointer to an old object, bad while a minor marks (see [`good_for`]). The full path would
/// pin an epoch, find no forwarding table for Remapped (`GcState::table_for` names none),
/// look the page up only to leave the old object unmarked (`mark_object_in`) and hand back
/// the same Remapped pointer; this answers that pointer from the mark state and one byte of
/// the generation map (`Generations::is_old`, the same test `minor_and_old` makes), with no
/// pin and no page-table walk. `None` for any other pointer, and while the planted bug of old
/// pointers healed in the minor's color is on (its path must run in full). A pointer with
/// the finalizable bit beside Remapped is not Remapped here and takes the full path.
#[inline(always)]
fn minor_old_remapped(cx: &GcContext, ptr: ColoredPtr) -> Option<ColoredPtr> {
    let layout = cx.layout();
    if layout.color(ptr) != GoodColor::Remapped.color() {
        return None;
    }
    let generations = cx.generations.as_ref()?;
    let off = layout.offset(ptr);
    (cx.state.is_minor() && generations.is_old(off) && !generations.planted_old_color())
        .then(|| layout.good(off, GoodColor::Remapped))
}

/// The pointer marking hands out and heals into slots for the object at `off`: its mark
/// color (`mark`), except in a minor cycle for an old object, which gets Remapped.
///
/// Why: a minor visits no old-to-old slot, so a later cycle may mark with the color of a
/// minor before the previous one (the mark-color rule excludes only the previous cycle's and
/// the last major's). A slot pointing old that kept such a minor's color would then look
/// good to that later cycle, and a mutator could load the (unmarked) object through it
/// without marking it and hide it: a lost object. So a minor's mark color is carried only by
/// pointers to young objects, which every later minor visits while they stay young. A major
/// promotes only at its Pause Mark Start, when that color is the previous cycle's; a minor
/// that promotes pages in place remembers the promoted objects' slots of its color, so the
/// next minor visits and heals them (`Generations::finish_promotions`). A
/// Remapped pointer is bad while a minor marks, so each load of such a slot takes the slow
/// path; it is never remapped (no forwarding table is consulted for Remapped).
#[inline(always)]
pub(crate) fn good_for(cx: &GcContext, off: Offset, mark: GoodColor) -> ColoredPtr {
    if minor_and_old(cx, off)
        && !cx
            .generations
            .as_ref()
            .is_some_and(|g| g.planted_old_color())
    {
        cx.layout().good(off, GoodColor::Remapped)
    } else {
        cx.layout().good(off, mark)
    }
}

/// Mark the object at `off` strongly; pass it to `push` if this call marked it.
/// Objects on pages allocated in this cycle are live without marking.
#[inline]
pub(super) fn mark_object(cx: &GcContext, off: Offset, push: &mut dyn FnMut(Offset)) {
    mark_object_in(cx, off, &gc_core::heap_epoch::pin(), push)
}

/// [`mark_object`] inside the caller's pin.
#[inline]
fn mark_object_in(cx: &GcContext, off: Offset, guard: &HeapGuard, push: &mut dyn FnMut(Offset)) {
    let seq = cx.state.seqnum();
    let page = cx
        .page_table()
        .get(off, guard)
        .unwrap_or_else(|| panic!("marking met a pointer to {off:#x} outside every page"));
    if page.seqnum() == seq || minor_and_old(cx, off) {
        return;
    }
    // The object and its size are counted when it is traced (the tracer reads the header
    // anyway, and sums per page in its `LiveCache`): marking itself touches only the live
    // map's word, no shared counter.
    if page.live_map().mark_strong(seq, page.index_of(off)) {
        push(off);
    }
}

/// True if the latest cycle is a minor one and `off` lies on an old page: a minor marks
/// young objects only and takes every old one as live (it computes no old live map).
#[inline(always)]
fn minor_and_old(cx: &GcContext, off: Offset) -> bool {
    cx.state.is_minor() && cx.generations.as_ref().is_some_and(|g| g.is_old(off))
}

/// True if the object at `off` is live in the current cycle (marked, or allocated since
/// Pause Mark Start, or old while a minor cycle runs).
pub(crate) fn is_live(cx: &GcContext, off: Offset) -> bool {
    let seq = cx.state.seqnum();
    let guard = gc_core::heap_epoch::pin();
    match cx.page_table().get(off, &guard) {
        Some(p) => {
            p.seqnum() == seq
                || minor_and_old(cx, off)
                || p.live_map().is_marked(seq, p.index_of(off))
        }
        None => false,
    }
}

impl MarkSink for Mark {
    /// Queue a batch of offsets a mutator's barriers marked, whole.
    fn hand_over(&self, batch: &mut Vec<Offset>) {
        self.batches.put(batch, MARK_BUFFER_FLUSH);
    }
    /// The count of mutators' mark buffers that hold entries (see [`crate::roots::mark_buffer`]).
    fn buffered(&self) -> &BufferedWork {
        &self.buffered
    }
}

impl Mark {
    /// Objects traced by GC workers since the last call (one cycle's, when called at its end).
    pub(crate) fn take_traced(&self) -> u64 {
        self.traced.swap(0, Ordering::Relaxed)
    }

    /// Stale slots GC workers remapped through their rings' stale stage since the last call.
    pub(crate) fn take_stale_remapped(&self) -> u64 {
        self.stale_remapped.swap(0, Ordering::Relaxed)
    }

    /// Before a cycle's marking, on the driver: allocate the spare buffers mutators swap
    /// their full mark buffers for (see [`super::mark_batches`]), at least a 1024th of
    /// `heap_bytes` of them.
    pub(crate) fn prepare_batches(&self, heap_bytes: u64) {
        let buffer = (MARK_BUFFER_FLUSH * std::mem::size_of::<Offset>()) as u64;
        let floor = (heap_bytes / 1024 / buffer) as usize;
        self.batches.prepare(MARK_BUFFER_FLUSH, floor);
    }

    /// True if the global queue and the queue of mutators' batches hold no work.
    pub(super) fn is_empty(&self) -> bool {
        self.queue.is_empty() && self.batches.is_empty()
    }

    /// Pause Mark End's test: true if the queues are empty and no mutator's buffer holds
    /// work. Reads three words, whatever the number of mutators: the buffers are counted as
    /// they fill and empty (at a safepoint the count is exact).
    pub(crate) fn is_complete(&self) -> bool {
        !self.buffered.any() && self.is_empty()
    }

    /// Bytes of mark work held now: the global queue's entries, the queued batches and the
    /// spares, and the mutators' mark buffers' capacity (for memory reports; the GC workers'
    /// own stacks exist only while they mark).
    pub(crate) fn footprint(&self, roots: &Roots) -> u64 {
        let entry = std::mem::size_of::<Offset>() as u64;
        let buffered: u64 = roots
            .mutators()
            .iter()
            .map(|m| m.mark_buffer.capacity_bytes())
            .sum();
        self.queue.len() as u64 * entry + self.batches.footprint_bytes() + buffered
    }

    /// Mark the roots: make every strong root good (mark color), mark its object, queue it.
    /// Returns the number of non-null roots. Runs in Concurrent Mark Roots, right after the
    /// color flip of Pause Mark Start and while mutators run, or inside the `stw` pause.
    ///
    /// Slots are healed with a CAS, as the barrier heals: a mutator may heal the same slot
    /// through its barrier, pop it and push another handle there, or clear a root region
    /// slot meanwhile; a CAS from the bad value read only ever replaces that value with the
    /// good pointer to the same object. Concurrently this is safe because no root can reach
    /// Pause Mark End unmarked: a root that held its value since the flip is met by the scan
    /// (it walks every root set that existed at the flip), and every value a mutator writes
    /// into a root after the flip is good — read through the barrier, which marks, or freshly
    /// allocated, which is live without marking.
    pub(crate) fn mark_roots(
        &self,
        cx: &GcContext,
        roots: &Roots,
        muts: &[Arc<MutatorShared>],
    ) -> u64 {
        let mut n = 0;
        let bad = cx.state.bad_mask();
        let q = &self.queue;
        roots.for_each_strong_root(muts, |slot| {
            let p = slot.load(Ordering::Acquire);
            if p.is_null() {
                return;
            }
            n += 1;
            if p.raw() & bad != 0 {
                let good = mark_barrier(cx, p, &mut |o| q.push(o));
                gc_core::self_heal(slot, p, good, bad);
            } else {
                mark_object(cx, cx.layout().offset(p), &mut |o| q.push(o));
            }
        });
        n
    }

    /// A minor cycle's scan of the remembered set (Concurrent Mark Roots, after the strong
    /// roots): every old slot remembered in the previous bitmap is loaded and healed (made
    /// the mark color, remapped first if it carries the stale color), its target marked and
    /// queued if young (an old target is live in a minor and not followed), and remembered
    /// again in the current bitmap only if it still points young. Returns (slots visited,
    /// slots remembered again).
    ///
    /// Concurrently with mutators: a slot a mutator stores meanwhile is remembered by its
    /// store barrier if the new value is young (in the current bitmap), and the heal CAS from
    /// the value read fails, leaving the mutator's value; a value a mutator stores in the
    /// mark phase is good (loaded through the barrier, which marks, or allocated in this
    /// cycle, live without marking).
    pub(crate) fn scan_remembered(&self, cx: &GcContext) -> (u64, u64) {
        let Some(g) = cx.generations.as_deref() else {
            return (0, 0);
        };
        let layout = cx.layout();
        let bad = cx.state.bad_mask();
        let q = &self.queue;
        let push = &mut |o| q.push(o);
        g.scan_previous(|slot, is_value| {
            let addr = layout.address(slot, View::Remapped).raw();
            let (p, good) = if is_value {
                // SAFETY: `slot` is a word of an object on an old page (the remembered set
                // holds only such words, and a freed page's bits are cleared); no minor frees
                // or moves an old page, so it stays mapped, and the word is a value slot (its
                // kind bit, set before its remembered bit, never changes while the page is
                // allocated), an aligned atomic word.
                let vs = unsafe { &*(addr as *const gc_core::ValueSlot) };
                let Some(p) = vs.load(Ordering::Acquire).as_pointer() else {
                    return false;
                };
                if p.raw() & bad == 0 {
                    (p, p)
                } else {
                    let good = mark_barrier(cx, p, push);
                    if good != p {
                        gc_core::self_heal_value(
                            vs,
                            ValueWord::pointer(p),
                            ValueWord::pointer(good),
                            bad,
                        );
                    }
                    (p, good)
                }
            } else {
                // SAFETY: as above; the word is a reference slot, an aligned atomic word.
                let rs = unsafe { &*(addr as *const gc_core::ColoredSlot) };
                let p = rs.load(Ordering::Acquire);
                if p.is_null() {
                    return false;
                }
                if p.raw() & bad == 0 {
                    (p, p)
                } else {
                    let good = mark_barrier(cx, p, push);
                    if good != p {
                        gc_core::self_heal(rs, p, good, bad);
                    }
                    (p, good)
                }
            };
            let off = layout.offset(good);
            if p == good {
                // Good already: stored by a mutator in this cycle (marked by its barrier or
                // allocated since Mark Start); marking it again costs a live-map test.
                mark_object(cx, off, push);
            }
            !g.is_old(off)
        })
    }

    /// Trace one object: the marking barrier on each of its slots, with the marking itself
    /// deferred through `ring` (see [`MarkRing`]); the targets this worker marks go to `push`.
    /// Returns the object's size.
    fn trace_object(
        &self,
        cx: &GcContext,
        off: Offset,
        guard: &HeapGuard,
        ring: &mut MarkRing,
        live: &mut LiveCache,
        push: &mut dyn FnMut(Offset),
    ) -> u64 {
        let layout = cx.layout();
        let colors = TraceColors {
            layout,
            bad: cx.state.bad_mask(),
            mark: cx.state.good(),
            minor: cx.state.is_minor(),
        };
        // SAFETY: `off` was marked, so it is a live object on a mapped page.
        let obj = unsafe { Object::at(layout, off) };
        let size = obj.size();
        // Count the object and its bytes now that its header is at hand (marking counted
        // nothing), summed per page in the worker's cache.
        live.add(off, size, |at, sum| add_live(cx, at, sum, guard));
        for (i, slot) in obj.ref_slots().iter().enumerate() {
            let p = slot.load(Ordering::Acquire);
            if !p.is_null() {
                Self::trace_slot(cx, colors, obj, SlotIndex::Ref(i), p, guard, ring, push);
            }
        }
        for (i, slot) in obj.value_slots().iter().enumerate() {
            if let Some(p) = slot.load(Ordering::Acquire).as_pointer() {
                Self::trace_slot(cx, colors, obj, SlotIndex::Value(i), p, guard, ring, push);
            }
        }
        size
    }

    /// The marking barrier on one slot of a traced object holding the non-null pointer `p`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn trace_slot(
        cx: &GcContext,
        colors: TraceColors,
        obj: Object,
        slot: SlotIndex,
        p: ColoredPtr,
        guard: &HeapGuard,
        ring: &mut MarkRing,
        push: &mut dyn FnMut(Offset),
    ) {
        let TraceColors {
            layout,
            bad,
            mark,
            minor,
        } = colors;
        let target = if p.raw() & bad != 0 {
            let t = layout.offset(p);
            // A stale color (the last major's, or the latest evacuating minor's) names the
            // forwarding index to look in.
            if let Some(f) = cx.stale_forwarding(p, guard) {
                // Into a relocated page: remap it once its forwarding entry has had time
                // to arrive (see `MarkRing`).
                f.prefetch_entry(f.page().index_of(t) as u64);
                let stale = StaleSlot { obj, slot, ptr: p };
                ring.push_stale(cx, stale, guard, push);
                return;
            }
            // Heal now (the good pointer does not depend on the marking), mark later.
            let good = if minor {
                good_for(cx, t, mark)
            } else {
                layout.good(t, mark)
            };
            if heal(obj, slot, p, good, bad) {
                ring.value_heals += 1;
            }
            t
        } else {
            // A good pointer stored by a mutator: its object is marked already, but mark
            // through it anyway (cheap: the live map says so at once).
            layout.offset(p)
        };
        ring.push(cx, target, guard, push);
    }

    /// Concurrent Mark (and Mark in the `stw` pause): trace until the queue and the mutators'
    /// buffers are empty, in rounds, each with a crew of up to `max` GC workers that follows
    /// `workers()` while it runs (the driver boosts them while mutators wait; see
    /// `threads::worker_crew`). Returns the CPU time of the workers other than the calling
    /// thread and how the crews changed.
    pub(crate) fn drain(
        &self,
        cx: &GcContext,
        roots: &Roots,
        workers: WorkerTarget,
        max: usize,
        panics: &InjectedPanics,
    ) -> CrewTotals {
        let mut totals = CrewTotals::default();
        loop {
            totals.add(self.mark_parallel(cx, workers, max, panics));
            if self.flush_mutator_buffers(roots) == 0 && self.is_empty() {
                return totals;
            }
        }
    }

    /// Move every mutator's mark buffer into the queue of batches; returns the number of
    /// entries moved (0: the buffers held no work). Concurrent Mark's, never a pause's: Pause
    /// Mark End only tests [`Mark::is_complete`].
    fn flush_mutator_buffers(&self, roots: &Roots) -> u64 {
        let mut moved = 0;
        for m in roots.mutators() {
            moved += m.mark_buffer.flush(self);
        }
        moved
    }

    /// Drain the mark queue with a crew of up to `max` workers following `workers()` (the
    /// calling thread is worker 0). Returns the CPU time the *other* workers used, and how
    /// the crew changed.
    fn mark_parallel(
        &self,
        cx: &GcContext,
        workers: WorkerTarget,
        max: usize,
        panics: &InjectedPanics,
    ) -> CrewTotals {
        let max = max.max(1);
        let locals: Vec<Worker<Offset>> = (0..max).map(|_| Worker::new_lifo()).collect();
        let stealers: Vec<Stealer<Offset>> = locals.iter().map(|w| w.stealer()).collect();
        let abandoned = AtomicBool::new(false);
        let (stealers, abandoned) = (&stealers, &abandoned);
        crate::threads::run_workers("gc-mark", &cx.idle_class, locals, workers, |m, w| {
            // A worker that unwinds tells the others to stop waiting for it.
            let _abandon = AbandonOnUnwind(abandoned);
            if m.index() > 0 && panics.take(InjectedPanic::MarkWorker) {
                panic!("GC worker panic injected for a test");
            }
            self.mark_worker(cx, w, stealers, m, abandoned);
        })
    }

    fn find_work(&self, local: &Worker<Offset>, stealers: &[Stealer<Offset>]) -> Option<Offset> {
        if let Some(x) = local.pop() {
            return Some(x);
        }
        // A mutator's batch, whole: its entries go on this worker's stack, where the others
        // can steal them, and its buffer back to the spares.
        if let Some(mut batch) = self.batches.take() {
            let first = batch.pop();
            for &o in batch.iter() {
                local.push(o);
            }
            self.batches.recycle(batch);
            if first.is_some() {
                return first;
            }
        }
        loop {
            let mut retry = false;
            match self.queue.steal_batch_and_pop(local) {
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

    /// One worker's marking. Its safe point, every 1024 objects traced, is where it asks the
    /// crew (`member`) whether to leave or to bring in one more worker; a worker that leaves
    /// hands back every object it holds (its prefetch FIFO, its ring, its local stack) to the
    /// global queue, publishes its counts and parks, counted idle, so marking cannot end
    /// without the work it gave back. A worker out of work that the crew no longer wants parks
    /// the same way instead of polling.
    fn mark_worker(
        &self,
        cx: &GcContext,
        local: Worker<Offset>,
        stealers: &[Stealer<Offset>],
        member: &Member,
        abandoned: &AtomicBool,
    ) {
        let crew = member.crew();
        // Stay pinned while tracing (the page-table lookups nest inside this pin) and repin
        // now and then so deferred frees can proceed.
        let mut guard = gc_core::heap_epoch::pin();
        // Objects traced, counted into `self.traced` however the worker leaves (a panic too).
        struct Count<'a>(&'a AtomicU64, u64);
        impl Drop for Count<'_> {
            fn drop(&mut self) {
                self.0.fetch_add(self.1, Ordering::Relaxed);
            }
        }
        let mut count = Count(&self.traced, 0);
        // Bytes traced and not yet published to the cycle's progress (once per 1024 objects,
        // and when the worker finds no work).
        let mut unpublished = 0u64;
        // A small FIFO between the mark stack and tracing: an object's header is prefetched
        // when it enters and traced when it leaves, so its cache miss overlaps with the work
        // on the objects before it (marking small objects is bound by memory latency).
        let layout = cx.layout();
        let mut fifo = [Offset::ZERO; PREFETCH_DEPTH];
        let (mut head, mut len) = (0usize, 0usize);
        let mut ring = MarkRing::new();
        let mut live = LiveCache::new();
        // The worker's counts, published when it parks and when marking ends. The pages' live
        // bytes are complete once every worker has flushed (a page left at 0 would be freed
        // as empty); a worker that unwinds does not flush, and its panic aborts the process
        // before any selection.
        let publish = |ring: &mut MarkRing, live: &mut LiveCache, guard: &HeapGuard| {
            live.flush(|at, sum| add_live(cx, at, sum, guard));
            self.stale_remapped
                .fetch_add(std::mem::take(&mut ring.stale_remapped), Ordering::Relaxed);
            cx.value_slots.marked(
                std::mem::take(&mut ring.value_heals),
                std::mem::take(&mut ring.value_moves),
            );
        };
        let push = &mut |o| local.push(o);
        loop {
            let mut leaving = false;
            loop {
                let mut next = local.pop();
                if next.is_none() {
                    // Mark what the ring holds first: it may give this worker work without
                    // touching the shared queues.
                    ring.drain(cx, &guard, push);
                    next = self.find_work(&local, stealers);
                }
                if let Some(off) = next {
                    prefetch(layout.address(off, View::Remapped));
                    if len < PREFETCH_DEPTH {
                        fifo[(head + len) % PREFETCH_DEPTH] = off;
                        len += 1;
                        continue;
                    }
                    let oldest = std::mem::replace(&mut fifo[head], off);
                    head = (head + 1) % PREFETCH_DEPTH;
                    unpublished +=
                        self.trace_object(cx, oldest, &guard, &mut ring, &mut live, push);
                } else if len > 0 {
                    let oldest = fifo[head];
                    head = (head + 1) % PREFETCH_DEPTH;
                    len -= 1;
                    unpublished +=
                        self.trace_object(cx, oldest, &guard, &mut ring, &mut live, push);
                } else {
                    break;
                }
                count.1 += 1;
                if count.1.is_multiple_of(1024) {
                    cx.progress.add_marked(std::mem::take(&mut unpublished));
                    // The ring holds no page or forwarding references, only offsets and
                    // objects this cycle marked (their pages stay until marking ends):
                    // repinning is safe with entries in it (each target is looked up again
                    // when remapped or marked).
                    guard.repin();
                    if member.check() == Turn::Leave {
                        // Hand back what this worker holds: the objects waiting in the FIFO
                        // (marked, not yet traced) and the ring's targets (marked now) go to
                        // the local stack, which goes to the global queue below.
                        while len > 0 {
                            local.push(fifo[head]);
                            head = (head + 1) % PREFETCH_DEPTH;
                            len -= 1;
                        }
                        ring.drain(cx, &guard, push);
                        leaving = true;
                        break;
                    }
                }
            }
            debug_assert_eq!(
                (ring.len, ring.stale_len, len),
                (0, 0, 0),
                "the ring and the FIFO are empty whenever the worker finds no work or leaves"
            );
            // Work given back goes to the global queue before this worker counts idle, so
            // the others see it before they can see everyone idle.
            while let Some(o) = local.pop() {
                self.queue.push(o);
            }
            if unpublished != 0 {
                cx.progress.add_marked(std::mem::take(&mut unpublished));
            }
            // Idle: finish when everyone is idle and nothing is queued.
            crew.go_idle();
            loop {
                if leaving || member.should_leave() {
                    leaving = false;
                    publish(&mut ring, &mut live, &guard);
                    // Parked, this worker stays idle (it holds nothing); it leaves its pin
                    // so deferred frees are not held up meanwhile.
                    drop(guard);
                    let back = member.park();
                    guard = gc_core::heap_epoch::pin();
                    if !back {
                        return;
                    }
                }
                let queues_empty = || self.is_empty() && stealers.iter().all(|s| s.is_empty());
                if !queues_empty() {
                    crew.go_busy();
                    break;
                }
                // The queues again after everyone was seen idle: a worker that leaves puts
                // its work in the global queue *before* it counts idle, so work given back
                // after the first look is seen by the second. (Work the drain's next round
                // would find anyway: `drain` ends only with the queues empty.)
                if (crew.all_idle() && queues_empty()) || abandoned.load(Ordering::SeqCst) {
                    publish(&mut ring, &mut live, &guard);
                    // Parked workers exit (marking is over).
                    crew.finish();
                    return;
                }
                guard.repin();
                std::thread::sleep(Duration::from_micros(50));
            }
        }
    }
}
