//! Relocation (ZGC's `ZRelocate`): copying live objects out of the relocation set.
//!
//! Whoever meets an object first — a GC worker evacuating its page, a mutator whose barrier
//! loaded a pointer to it, or the driver relocating a root inside the `stw` pause —
//! copies it into a target page and CASes the forwarding entry; the single winner's copy is
//! the object from then on, a loser gives its copy back (or, where another copy lies above it
//! on its page, leaves it behind as a dead object). Copies are made only from retained
//! pages, and only into pages allocated in this cycle or into the room above the live
//! objects of a page compacted in place in this cycle.
//!
//! A GC worker publishes its copies in batches, from the last to the first, and writes into
//! each copy before its CAS the new addresses of the neighbours on its page that have their
//! entries by then (`copy_remap`): the pointers inside a structure moved together are not
//! left stale for the next marking to remap.
//!
//! Target pages: one shared page per size class and destination age (CAS bump allocation)
//! serves mutators' barriers and the driver, and GC workers fill it first; only then does
//! each worker take a private page (bump allocation without atomics). So a cycle that moves
//! less than a page of objects takes one target page per destination, not one per worker: in
//! a heap of a few pages, a target page per worker can take as many pages as relocation
//! frees, and a stalled mutator never gets one (ZGC shares its medium target page among
//! workers the same way).
//!
//! The destination age is the from-page's [`Forwarding::to_age`] (ZGC's per-page `to_age`):
//! old in a full cycle; in a minor, a young *survivor* age while the from-page's age is below
//! the tenuring threshold (aging by copy: the copies stay young, and the next minor looks at
//! their page), old at it (promotion by copy). A copy onto an old page remembers its slots
//! that may point young ([`crate::context::Generations::remember_moved`]; a full cycle's copy
//! is read for them only if its original has a remembered slot,
//! [`crate::context::Generations::original_remembered`]); a copy onto a survivor page needs
//! no bit, since the next minor traces it as any young object.
//!
//! When no target memory is left, the page's worker compacts the page *in place* (ZGC's
//! in-place relocation, JDK 16+): it claims the page exclusively, slides the objects that
//! have no entry yet down to the page start and keeps the page, which then serves as its
//! target for the next pages. A mutator that finds no target memory, or meets a page being
//! compacted, waits for the page's entry instead (see [`crate::context::forwarding`]); the driver,
//! which cannot wait inside a pause, compacts the page in place itself and makes it the
//! shared target page, so the next copies fill it instead of compacting one more page in
//! place. So relocation never fails, and an object is never left in place while another
//! thread may still copy it.
//!
//! The subsystem owns the shared target pages and the cycle's relocation counters. In the
//! `concurrent` mode roots are not relocated by the collector: after Pause Relocate Start a
//! root with this cycle's mark color is bad, so the mutator that loads it relocates or
//! remaps it through its barrier, and the next cycle's Concurrent Mark Roots remaps the rest
//! through the forwarding index, which keeps this cycle's entries until that cycle's
//! Concurrent Reset Relocation Set. Inside the `stw` pause, [`Relocate::relocate_roots`]
//! relocates every root, weak handles included.

use super::copy_remap::CopyRemap;
use crate::context::{Forwarding, ForwardingIndex, InPlace, Relocation};
use crate::context::{GcContext, Generations};
use crate::mark::WeakProcessor;
use crate::observe::Activity;
use crate::roots::MutatorShared;
use crate::roots::Roots;
use crate::threads::{CrewTotals, Member, ThreadStateCell, Turn, WorkerTarget};
use gc_core::MAX_SURVIVOR_AGE;
use gc_core::{ColoredSlot, GoodColor, Object, Offset, Page, PageAge, PageKind, View};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// Relocation's counters for the current cycle (reset at the start of each cycle).
#[derive(Default)]
struct RelocationCounters {
    bytes_relocated: AtomicU64,
    objects_relocated: AtomicU64,
    pages_in_place: AtomicU64,
    objects_in_place: AtomicU64,
    self_forwards: AtomicU64,
    waits: AtomicU64,
    worker_copies_lost: AtomicU64,
    survivor_copies: AtomicU64,
    copy_slots_remapped: AtomicU64,
}

/// A snapshot of [`RelocationCounters`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct RelocationTotals {
    pub(crate) bytes_relocated: u64,
    pub(crate) objects_relocated: u64,
    pub(crate) pages_in_place: u64,
    pub(crate) objects_in_place: u64,
    pub(crate) self_forwards: u64,
    pub(crate) waits: u64,
    /// Copies GC workers made that lost to a mutator's (given back or left dead).
    pub(crate) worker_copies_lost: u64,
    /// Of the objects relocated, those copied to a minor's survivor target pages (aged by
    /// copy: they stay young).
    pub(crate) survivor_copies: u64,
    /// Slots of GC workers' copies written with a moved neighbour's new address before the
    /// copy was published (see `copy_remap`): pointers the next marking does not remap.
    pub(crate) copy_slots_remapped: u64,
}

impl RelocationCounters {
    fn all(&self) -> [&AtomicU64; 9] {
        [
            &self.bytes_relocated,
            &self.objects_relocated,
            &self.pages_in_place,
            &self.objects_in_place,
            &self.self_forwards,
            &self.waits,
            &self.worker_copies_lost,
            &self.survivor_copies,
            &self.copy_slots_remapped,
        ]
    }

    /// Start a new cycle's counts.
    fn reset(&self) {
        for c in self.all() {
            c.store(0, Ordering::Relaxed);
        }
    }

    /// This cycle's counts so far.
    fn totals(&self) -> RelocationTotals {
        let [b, o, p, i, s, w, l, y, r] = self.all().map(|c| c.load(Ordering::Relaxed));
        RelocationTotals {
            bytes_relocated: b,
            objects_relocated: o,
            pages_in_place: p,
            objects_in_place: i,
            self_forwards: s,
            waits: w,
            worker_copies_lost: l,
            survivor_copies: y,
            copy_slots_remapped: r,
        }
    }

    fn copied(&self, size: u64) {
        self.copied_many(1, size);
    }

    fn copied_many(&self, objects: u64, bytes: u64) {
        self.bytes_relocated.fetch_add(bytes, Ordering::Relaxed);
        self.objects_relocated.fetch_add(objects, Ordering::Relaxed);
    }

    fn compacted(&self, r: &InPlace) {
        self.pages_in_place.fetch_add(1, Ordering::Relaxed);
        self.objects_in_place
            .fetch_add(r.objects, Ordering::Relaxed);
        self.self_forwards
            .fetch_add(r.self_forwards, Ordering::Relaxed);
        self.bytes_relocated
            .fetch_add(r.bytes_moved, Ordering::Relaxed);
    }
}

/// The shared target page of one size class and the cycle it serves: a page taken for this
/// cycle's copies, or a page the driver compacted in place in this cycle's pause.
struct SharedTarget {
    seqnum: u64,
    page: Arc<Page>,
}

/// Destinations of copies: old (index 0) and the survivor ages `1..=MAX_SURVIVOR_AGE`.
const DESTINATIONS: usize = MAX_SURVIVOR_AGE as usize + 1;

/// The index of the destination age `age` among a size class's target pages.
#[inline]
fn destination(age: PageAge) -> usize {
    match age {
        PageAge::Old => 0,
        PageAge::Survivor(n) => usize::from(n),
        PageAge::Eden => unreachable!("no copy goes to an eden page"),
    }
}

/// Relocation: shared target pages (CAS bump allocation), one per size class and destination
/// age, and the cycle's counters.
#[derive(Default)]
pub(crate) struct Relocate {
    small: [Mutex<Option<SharedTarget>>; DESTINATIONS],
    medium: [Mutex<Option<SharedTarget>>; DESTINATIONS],
    counters: RelocationCounters,
}

/// A GC worker's target pages for one size class: the cycle's shared target page, which it
/// fills first (CAS bump allocation), then private pages (bump allocation without atomics or
/// locks).
#[derive(Default)]
struct ClassTargets {
    /// The shared page this worker bumps on, fetched once per cycle.
    shared: Option<Arc<Page>>,
    /// True once the shared page was fetched (and found missing, or later full).
    shared_done: bool,
    private: Option<Arc<Page>>,
}

/// A GC worker's target pages (per size class and destination age), and the objects and
/// bytes it copied (and the copies it lost, and those it aged by copy) since it last added
/// them to the cycle's counters (once per page evacuated, not per object: a shared counter
/// per copy costs as much as a small copy).
#[derive(Default)]
struct WorkerTargets {
    small: [ClassTargets; DESTINATIONS],
    medium: [ClassTargets; DESTINATIONS],
    copied_objects: u64,
    copied_bytes: u64,
    copies_lost: u64,
    survivor_copies: u64,
    copy_slots_remapped: u64,
}

impl WorkerTargets {
    fn class(&mut self, kind: PageKind, age: PageAge) -> &mut ClassTargets {
        match kind {
            PageKind::Small => &mut self.small[destination(age)],
            PageKind::Medium => &mut self.medium[destination(age)],
            PageKind::Large => unreachable!("large objects are never relocated"),
        }
    }

    /// Add the copies counted so far to the cycle's counters.
    fn flush_counts(&mut self, counters: &RelocationCounters) {
        if self.copied_objects != 0 {
            counters.copied_many(self.copied_objects, self.copied_bytes);
        }
        (self.copied_objects, self.copied_bytes) = (0, 0);
        if self.copies_lost != 0 {
            counters
                .worker_copies_lost
                .fetch_add(std::mem::take(&mut self.copies_lost), Ordering::Relaxed);
        }
        if self.survivor_copies != 0 {
            counters
                .survivor_copies
                .fetch_add(std::mem::take(&mut self.survivor_copies), Ordering::Relaxed);
        }
        if self.copy_slots_remapped != 0 {
            counters.copy_slots_remapped.fetch_add(
                std::mem::take(&mut self.copy_slots_remapped),
                Ordering::Relaxed,
            );
        }
    }
}

/// Copies a GC worker publishes together (see [`Relocate::publish_batch`]): enough that a
/// small structure copied whole (a tree of a few dozen nodes) is published from its last object
/// to its first, few enough that the copies are still in the cache when published.
const COPY_BATCH: usize = 128;

/// A worker's copy made and not yet published.
struct PendingCopy {
    /// The object's index on its from-page.
    idx: u64,
    to: Offset,
    copy: Object,
    size: u64,
}

/// A worker's copies not yet published, in the order they were made (increasing addresses on
/// the from-page).
#[derive(Default)]
struct CopyBatch {
    copies: Vec<PendingCopy>,
}

impl CopyBatch {
    fn push(&mut self, c: PendingCopy) {
        self.copies.push(c);
    }

    fn is_full(&self) -> bool {
        self.copies.len() >= COPY_BATCH
    }
}

impl Relocate {
    /// Start a new cycle's counts.
    pub(crate) fn reset_counters(&self) {
        self.counters.reset()
    }

    /// This cycle's counts so far.
    pub(crate) fn totals(&self) -> RelocationTotals {
        self.counters.totals()
    }

    /// The shared target page of `kind` and destination `age` for this cycle, if there is
    /// one.
    fn shared_target(&self, cx: &GcContext, kind: PageKind, age: PageAge) -> Option<Arc<Page>> {
        let seq = cx.state.seqnum();
        self.shared_slot(kind, age)
            .lock()
            .as_ref()
            .filter(|t| t.seqnum == seq)
            .map(|t| t.page.clone())
    }

    fn shared_slot(&self, kind: PageKind, age: PageAge) -> &Mutex<Option<SharedTarget>> {
        match kind {
            PageKind::Small => &self.small[destination(age)],
            PageKind::Medium => &self.medium[destination(age)],
            PageKind::Large => unreachable!("large objects are never relocated"),
        }
    }

    /// Target memory for a worker's copy of `size` bytes of `kind` to a page of age `age`:
    /// on the cycle's shared target page while it has room, then on the worker's private page
    /// (taking a new one when it is full); `None` if the heap has no page left.
    #[inline]
    fn alloc_for_worker(
        &self,
        cx: &GcContext,
        t: &mut WorkerTargets,
        kind: PageKind,
        age: PageAge,
        size: u64,
    ) -> Option<Offset> {
        let c = t.class(kind, age);
        if !c.shared_done {
            if c.shared.is_none() {
                c.shared = self.shared_target(cx, kind, age);
            }
            if let Some(off) = c.shared.as_ref().and_then(|p| p.alloc_shared(size)) {
                return Some(off);
            }
            // Full (objects differ in size, but a worker that found it full once would
            // mostly find it full again), or there is none.
            c.shared_done = true;
            c.shared = None;
        }
        if let Some(off) = c.private.as_ref().and_then(|p| p.alloc_private(size)) {
            return Some(off);
        }
        let sizes = *cx.pages.sizes();
        let page = cx
            .pages
            .new_relocation_page(
                kind,
                sizes.page_size(kind, size),
                cx.state.seqnum(),
                target_age(cx, age),
            )
            .ok()?;
        let off = page.alloc_private(size)?;
        c.private = Some(page);
        Some(off)
    }

    /// A GC worker copies the live object at index `idx` of `f`'s page into its target memory,
    /// without publishing the copy: it joins `batch`, which [`Self::publish_batch`] publishes.
    /// With no target memory left it publishes the batch, compacts the whole page in place and
    /// returns `true`: every live object of the page has its entry then, and the rest of the
    /// page must not be read (objects slid over it).
    ///
    /// It copies without looking the entry up first: an object a mutator's barrier relocated
    /// already is rare, and its copy then loses the CAS and is given back, while a lookup
    /// before every copy probed the table twice per object.
    #[inline]
    fn copy_object_worker(
        &self,
        cx: &GcContext,
        f: &Forwarding,
        idx: u64,
        t: &mut WorkerTargets,
        batch: &mut CopyBatch,
    ) -> bool {
        let layout = cx.layout();
        let from = f.page().offset_of(idx as usize);
        // SAFETY: the worker's reference keeps the from-page mapped, and only this worker
        // could compact it in place (it has not: the caller stops at that); `from` is marked
        // live, and a from-page object is never written during relocation (a mutator writes
        // an object only after its barrier relocated it), also after a mutator copied it.
        let obj = unsafe { Object::at(layout, from) };
        let size = obj.size();
        let kind = cx.pages.sizes().kind_for(size);
        let age = f.to_age();
        match self.alloc_for_worker(cx, t, kind, age, size) {
            Some(to) => {
                // SAFETY: `to` is fresh private memory of `size` bytes on a page of this
                // cycle, not on the from-page; the object is not written meanwhile (above).
                // The copy stays private to this worker until `publish_batch` enters it.
                let copy = unsafe { obj.copy_to(layout.address(to, View::Remapped)) };
                // Its entry is published with the batch, by a compare-exchange that would
                // wait for the line: fetch it now, while the next copies are made.
                f.prefetch_entry(idx);
                batch.push(PendingCopy {
                    idx,
                    to,
                    copy,
                    size,
                });
                if batch.is_full() {
                    self.publish_batch(cx, f, t, batch);
                }
                false
            }
            None => {
                // The copies made so far get their entries first: compaction moves only the
                // objects that have none.
                self.publish_batch(cx, f, t, batch);
                // The page becomes this worker's private target for the destination of its
                // objects: the next pages' objects go into the room compaction left above its
                // live ones.
                let page = self.compact_in_place(cx, f);
                let kind = page.kind();
                t.class(kind, age).private = Some(page);
                true
            }
        }
    }

    /// Publish the worker's pending copies of `f`'s objects, from the last copied (the
    /// highest address) to the first: each copy first gets the new addresses of the
    /// neighbours on its page that have their entries by then (`copy_remap`: those published
    /// before it, the objects above it among them), then its entry. A copy whose CAS loses
    /// (a mutator's barrier relocated the object first) is given back if it is still the top
    /// of its page, and otherwise stays behind as a dead object, its header intact; no copy
    /// published before it points to it, as those point only to entries.
    fn publish_batch(
        &self,
        cx: &GcContext,
        f: &Forwarding,
        t: &mut WorkerTargets,
        batch: &mut CopyBatch,
    ) {
        let layout = cx.layout();
        let remap = CopyRemap::new(layout, f, cx.state.mark().color());
        let age = f.to_age();
        // A full cycle's copies onto old pages are read for young slots only where their
        // originals have remembered bits; this worker still holds `f`'s page, so its bits
        // are there to read, and they do not change while it does.
        let mut original_bits = match &cx.generations {
            Some(g) if age == PageAge::Old && !cx.state.is_minor() => Some(g.original_bits()),
            _ => None,
        };
        for c in batch.copies.drain(..).rev() {
            t.copy_slots_remapped += remap.remap(c.copy);
            match f.forward(c.idx, c.to) {
                Ok(_) => {
                    if age == PageAge::Old {
                        if let Some(g) = &cx.generations {
                            let from = f.page().offset_of(c.idx as usize);
                            // No reader: a minor's copy, read whatever its original.
                            if original_bits.as_mut().is_none_or(|b| b.any(from, c.size)) {
                                remember_copy(cx, g, c.to);
                            }
                        }
                    } else {
                        t.survivor_copies += 1;
                    }
                    t.copied_objects += 1;
                    t.copied_bytes += c.size;
                }
                Err(_) => {
                    // The copy's page may no longer be the worker's target (it filled up
                    // within the batch, and the shared one is forgotten then): found by the
                    // page table, where every target page is registered before its first
                    // copy. Not found, the copy would simply stay behind as a dead object.
                    t.copies_lost += 1;
                    let guard = gc_core::heap_epoch::pin();
                    if let Some(page) = cx.page_table().get(c.to, &guard) {
                        page.undo_alloc(c.to, c.size);
                    }
                }
            }
        }
    }

    /// Compact `f`'s page in place (its worker, or the driver inside a pause; see
    /// [`Forwarding::compact_in_place`]). Returns the page, which keeps its live objects and
    /// has free space above its new top.
    fn compact_in_place(&self, cx: &GcContext, f: &Forwarding) -> Arc<Page> {
        let page = f.page().clone();
        let seq = cx.state.seqnum();
        let layout = cx.layout();
        let align = (1u64 << page.alignment_shift()) - 1;
        let mut live = Vec::new();
        page.live_map()
            .for_each_marked(seq, |idx| live.push((idx as u64, page.offset_of(idx))));
        let r = f.compact_in_place(
            live,
            |from| {
                // SAFETY: `from` is a live object of the claimed page whose header nothing
                // has overwritten yet (objects only move down, over space already passed).
                let size = unsafe { Object::at(layout, from) }.size();
                (size + align) & !align
            },
            |from, to, size| {
                // SAFETY: both ranges lie in the claimed page, which no other thread touches
                // until the claim ends; `ptr::copy` allows the overlap of a move downwards.
                unsafe {
                    std::ptr::copy(
                        layout.address(from, View::Remapped).as_ptr::<u8>(),
                        layout.address(to, View::Remapped).as_ptr::<u8>(),
                        size as usize,
                    )
                }
            },
            |top| {
                // The claim still holds the page: remember the young slots of every object
                // at its new place (none is written meanwhile; see `Generations::compacting`).
                if let Some(g) = &cx.generations {
                    g.compacting(&page);
                    let mut off = page.start();
                    while off < top {
                        // SAFETY: `[start, top)` holds exactly the compacted live objects,
                        // each header written by the moves above on this thread.
                        let size = unsafe { Object::at(layout, off) }.size();
                        g.remember_moved(layout, off, true, minor_color(cx));
                        off += (size + align) & !align;
                    }
                }
                page.set_top_after_compaction(top)
            },
        );
        self.counters.compacted(&r);
        if let Some(g) = cx.generations.as_ref().filter(|_| cx.state.is_minor()) {
            g.compacted_in_minor(&page, f.to_age());
        }
        page
    }

    /// Target memory for a copy of `size` bytes on the shared target page of destination
    /// `age` (taking a new one when it is full); `None` if the heap has none left.
    fn alloc_for_relocation(&self, cx: &GcContext, size: u64, age: PageAge) -> Option<Offset> {
        let sizes = *cx.pages.sizes();
        let kind = sizes.kind_for(size);
        let seq = cx.state.seqnum();
        let mut cur = self.shared_slot(kind, age).lock();
        if let Some(t) = cur.as_ref().filter(|t| t.seqnum == seq) {
            if let Some(off) = t.page.alloc_shared(size) {
                return Some(off);
            }
        }
        let page = cx
            .pages
            .new_relocation_page(kind, sizes.page_size(kind, size), seq, target_age(cx, age))
            .ok()?;
        let off = page.alloc_shared(size);
        *cur = Some(SharedTarget { seqnum: seq, page });
        off
    }

    /// Make `page`, just compacted in place by the driver inside the pause, the shared
    /// target of its class, unless the current one has more room: the next roots' copies (and
    /// the workers' first ones) fill the room above its live objects instead of compacting
    /// one more page in place.
    fn share_in_place_page(&self, cx: &GcContext, page: Arc<Page>, age: PageAge) {
        let seq = cx.state.seqnum();
        let mut cur = self.shared_slot(page.kind(), age).lock();
        let room = |p: &Page| p.end().raw() - p.top().raw();
        if cur
            .as_ref()
            .is_some_and(|t| t.seqnum == seq && room(&t.page) >= room(&page))
        {
            return;
        }
        *cur = Some(SharedTarget { seqnum: seq, page });
    }

    /// Give the shared relocation allocator fresh target pages of this cycle before
    /// relocation starts, so the first copies (mutators' barriers right after Pause Relocate
    /// Start, roots inside the `stw` pause) only bump a pointer: taking a page can mean
    /// committing and mapping memory (hundreds of microseconds). Only the classes and
    /// destination ages the relocation set needs are prepared. The shared targets of earlier
    /// cycles are dropped first: none is used again (each is taken only in its own cycle),
    /// and a destination age a later cycle does not need would otherwise keep its page's
    /// live map from going back to the pool long after the page was freed.
    pub(crate) fn prepare_targets(&self, cx: &GcContext, set: &[Arc<Forwarding>]) {
        let sizes = *cx.pages.sizes();
        let seq = cx.state.seqnum();
        for slot in self.small.iter().chain(&self.medium) {
            let mut cur = slot.lock();
            if cur.as_ref().is_some_and(|t| t.seqnum != seq) {
                *cur = None;
            }
        }
        let mut wanted: Vec<(PageKind, PageAge)> = Vec::new();
        for f in set {
            let w = (f.page().kind(), f.to_age());
            if !wanted.contains(&w) {
                wanted.push(w);
            }
        }
        for (kind, age) in wanted {
            let mut cur = self.shared_slot(kind, age).lock();
            if cur.as_ref().is_some_and(|t| t.seqnum == seq) {
                continue;
            }
            // No memory: relocation falls back as usual (compacting pages in place).
            if let Ok(page) = cx.pages.new_relocation_page(
                kind,
                sizes.page_size(kind, 0),
                seq,
                target_age(cx, age),
            ) {
                if kind == PageKind::Small {
                    // Mutators' barriers and the GC workers both copy into the shared
                    // target first: fault its memory in for the copies' view now, so that
                    // neither takes a write fault per 4 KiB on it, nor waits for the other's
                    // (a medium page's 32 MiB would take too long here).
                    // SAFETY: the page was just taken for this cycle's relocation and is
                    // not yet in its shared slot (published below, under the slot's lock
                    // held here): no other thread copies into it or reads it (it holds no
                    // object, so no walker reads its memory either).
                    unsafe {
                        gc_core::view_populate::prefault_unpublished(
                            cx.layout(),
                            &page,
                            View::Remapped,
                        )
                    };
                }
                *cur = Some(SharedTarget { seqnum: seq, page });
            }
        }
    }

    /// Relocate (or find the relocated copy of) the object at `from` in `f`'s page, for a
    /// mutator's barrier: when it cannot copy, it waits for the page's worker, saying so in
    /// `thread`'s activity word (the safepoint timeout's report reads it).
    fn relocate_object(
        &self,
        cx: &GcContext,
        f: &Forwarding,
        from: Offset,
        thread: &ThreadStateCell,
    ) -> Offset {
        let idx = f.page().index_of(from) as u64;
        match self.try_relocate(cx, f, from) {
            Relocation::Found(to) | Relocation::Copied(to) | Relocation::Lost(to) => to,
            Relocation::NoMemory | Relocation::Unavailable => {
                self.counters.waits.fetch_add(1, Ordering::Relaxed);
                // A stepped cycle may hold Concurrent Relocate: let the worker run.
                cx.control
                    .gate()
                    .open_for_wait("a barrier waited for a page's GC worker");
                thread.set_doing(Activity::ForwardingWait);
                let to = f.wait_for_entry(idx);
                thread.set_doing(Activity::Code);
                to
            }
        }
    }

    /// Relocate the object at `from` inside a pause (roots in the `stw` pause): no GC
    /// worker runs that could be waited for, so with no target memory left the driver
    /// compacts the page in place itself.
    fn relocate_object_in_pause(&self, cx: &GcContext, f: &Forwarding, from: Offset) -> Offset {
        let idx = f.page().index_of(from) as u64;
        match self.try_relocate(cx, f, from) {
            Relocation::Found(to) | Relocation::Copied(to) | Relocation::Lost(to) => to,
            Relocation::NoMemory => {
                self.counters.waits.fetch_add(1, Ordering::Relaxed);
                let page = self.compact_in_place(cx, f);
                self.share_in_place_page(cx, page, f.to_age());
                f.wait_for_entry(idx)
            }
            // Compacted in place earlier in this pause: the entry is there.
            Relocation::Unavailable => f.wait_for_entry(idx),
        }
    }

    /// Copy the object at `from` to shared target memory unless it has its entry.
    fn try_relocate(&self, cx: &GcContext, f: &Forwarding, from: Offset) -> Relocation {
        let idx = f.page().index_of(from) as u64;
        let layout = cx.layout();
        let size = std::cell::Cell::new(0);
        let remember = std::cell::Cell::new(false);
        let r = f.try_relocate(
            idx,
            || {
                // SAFETY: the page is retained while this runs, so its memory is mapped;
                // `from` is a live object (reached through a root or slot) on it.
                let obj = unsafe { Object::at(layout, from) };
                size.set(obj.size());
                let to = self.alloc_for_relocation(cx, size.get(), f.to_age())?;
                // SAFETY: `to` is fresh memory of `size` bytes on a page of this cycle, not
                // overlapping the from-page; from-space objects are never written during
                // relocation, and the retained page is not compacted in place under us.
                unsafe { obj.copy_to(layout.address(to, View::Remapped)) };
                // Asked now, while the retain keeps the page's bits: once it is released
                // the page's worker may free it, which clears them.
                remember.set(
                    f.to_age() == PageAge::Old
                        && cx
                            .generations
                            .as_ref()
                            .is_some_and(|g| copy_may_point_young(cx, g, from, size.get())),
                );
                Some(to)
            },
            |to| {
                let guard = gc_core::heap_epoch::pin();
                if let Some(p) = cx.page_table().get(to, &guard) {
                    p.undo_alloc(to, size.get());
                }
            },
        );
        if let Relocation::Copied(to) = r {
            self.counters.copied(size.get());
            if f.to_age() == PageAge::Old {
                if let Some(g) = cx.generations.as_ref().filter(|_| remember.get()) {
                    remember_copy(cx, g, to);
                }
            } else {
                self.counters
                    .survivor_copies
                    .fetch_add(1, Ordering::Relaxed);
            }
        }
        r
    }

    /// The load barrier's slow path during relocation, on the mutator whose state is
    /// `thread`: relocate the object at `off` if its page is in the relocation set (waiting
    /// for the page's worker if this thread cannot copy it), else keep the offset.
    ///
    /// `index` is the forwarding index of the cycle that relocates: the full cycles'
    /// (`GcContext::forwarding`) or, after an evacuating minor, the minor's.
    pub(crate) fn relocate_or_remap(
        &self,
        cx: &GcContext,
        index: &ForwardingIndex,
        off: Offset,
        thread: &ThreadStateCell,
    ) -> Offset {
        // Most bad pointers after Relocate Start point outside the relocation set: no pin.
        if index.is_vacant(off) {
            return off;
        }
        let guard = gc_core::heap_epoch::pin();
        match index.get(off, &guard) {
            Some(f) if f.page().contains(off) => self.relocate_object(cx, f, off, thread),
            _ => off,
        }
    }

    /// [`Self::relocate_or_remap`] inside a pause (roots in the `stw` pause), where
    /// nothing may wait for a GC worker.
    fn relocate_or_remap_in_pause(&self, cx: &GcContext, off: Offset) -> Offset {
        let guard = gc_core::heap_epoch::pin();
        match cx.forwarding.get(off, &guard) {
            Some(f) if f.page().contains(off) => self.relocate_object_in_pause(cx, f, off),
            _ => off,
        }
    }

    /// The `stw` pause: relocate or remap every strong root and every weak handle, healing
    /// each slot with a CAS (as `Mark::mark_roots` does). Returns the number of slots that were
    /// bad.
    pub(crate) fn relocate_roots(
        &self,
        cx: &GcContext,
        roots: &Roots,
        weaks: &WeakProcessor,
        muts: &[Arc<MutatorShared>],
    ) -> u64 {
        let mut n = 0;
        let bad = cx.state.bad_mask();
        let layout = cx.layout();
        let mut fix = |slot: &ColoredSlot| {
            let p = slot.load(Ordering::Acquire);
            if p.raw() & bad != 0 {
                n += 1;
                let good = layout.good(
                    self.relocate_or_remap_in_pause(cx, layout.offset(p)),
                    GoodColor::Remapped,
                );
                gc_core::self_heal(slot, p, good, bad);
            }
        };
        roots.for_each_strong_root(muts, &mut fix);
        weaks.for_each_slot(|s| fix(s));
        n
    }

    /// Evacuate every page of the current relocation set with a crew of up to `max` workers
    /// that follows `workers()` while it runs (see `threads::worker_crew`): a worker claims
    /// pages one at a time (an atomic index), and asks the crew at each claim whether to
    /// leave (it holds no page then) or to bring in one more worker. Frees each evacuated
    /// page. Returns (pages freed, the workers' CPU time other than the caller's and how the
    /// crew changed).
    pub(crate) fn relocate_parallel(
        &self,
        cx: &GcContext,
        set: &[Arc<Forwarding>],
        workers: WorkerTarget,
        max: usize,
    ) -> (u64, CrewTotals) {
        let next = AtomicUsize::new(0);
        let freed = AtomicU64::new(0);
        let seq = cx.state.seqnum();
        let work = |m: &Member| {
            let mut targets = WorkerTargets::default();
            let mut batch = CopyBatch::default();
            loop {
                if m.check() == Turn::Leave && !m.park() {
                    break;
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(f) = set.get(i) else {
                    // No page left to claim: parked workers exit.
                    m.crew().finish();
                    break;
                };
                let page = f.page();
                // Fault in what is left of the page's table (selection does it for a bounded
                // time, see `relocation_set_selector`): left to fault, each of its memory
                // pages would take two faults (a read, then a write) while copying.
                f.prefault_table();
                let _guard = gc_core::heap_epoch::pin();
                // A page the driver compacted in place inside the `stw` pause (relocating a
                // root) has every entry, and its objects moved: it must not be read.
                let mut compacted = f.is_compacted_in_place();
                page.live_map().for_each_marked(seq, |idx| {
                    if !compacted {
                        compacted =
                            self.copy_object_worker(cx, f, idx as u64, &mut targets, &mut batch);
                    }
                });
                if !compacted {
                    self.publish_batch(cx, f, &mut targets, &mut batch);
                }
                targets.flush_counts(&self.counters);
                // The page's live bytes are relocation work done, whoever copied them (this
                // worker, or mutators' barriers before it): one add per page for the pacer.
                cx.progress.add_relocated(page.live_map().live_bytes(seq));
                f.release_and_wait();
                if !f.is_compacted_in_place() {
                    cx.free_page(page);
                    freed.fetch_add(1, Ordering::Relaxed);
                }
            }
        };
        let crew = crate::threads::run_workers(
            "gc-relocate",
            &cx.idle_class,
            vec![(); max.max(1)],
            workers,
            |m, ()| work(m),
        );
        (freed.load(Ordering::Relaxed), crew)
    }
}

/// The age a target page of destination `age` is born with: `age`, unless the test's planted
/// bug of survivor targets born old is on (`Generations::survivor_targets_old_for_tests`).
fn target_age(cx: &GcContext, age: PageAge) -> PageAge {
    match &cx.generations {
        Some(g) => g.target_age(age),
        None => age,
    }
}

/// True if the copy of the object at `from` (`size` bytes) onto an old page may hold a young
/// pointer: every copy of a minor (whose copies also carry its color), a full cycle's only if
/// the original has a remembered slot (`Generations::original_remembered`, which says why).
/// Asked while the copier holds `from`'s page.
fn copy_may_point_young(cx: &GcContext, g: &Generations, from: Offset, size: u64) -> bool {
    cx.state.is_minor() || g.original_remembered(from, size)
}

/// Remember the young slots of the copy at `to`, on an old page, for which
/// [`copy_may_point_young`] said yes: a minor's with its mark color
/// (`Generations::remember_moved`), a full cycle's through `remember_major_copy`.
fn remember_copy(cx: &GcContext, g: &Generations, to: Offset) {
    match minor_color(cx) {
        None => g.remember_major_copy(cx.layout(), to),
        color => g.remember_moved(cx.layout(), to, false, color),
    }
}

/// The mark color of the minor whose relocation copies objects now, `None` in a full cycle
/// (see `Generations::remember_moved`).
fn minor_color(cx: &GcContext) -> Option<gc_core::Color> {
    cx.state.is_minor().then(|| cx.state.mark().color())
}
