//! Relocation (ZGC's `ZRelocate`): copying live objects out of the relocation set.
//!
//! Whoever meets an object first — a GC worker evacuating its page, or a mutator whose barrier
//! loaded a pointer to it — copies it into a target page and CASes the forwarding entry; the
//! single winner's copy is the object from then on, a loser gives its copy back (invariant 4).
//! Copies are made only from retained pages, and only into pages allocated in this cycle.
//! When no target memory is left, the object is forwarded to itself and its page is kept
//! (a simple stand-in for ZGC's in-place relocation), so relocation never fails.

use crate::cpu_time::thread_cpu_ns;
use crate::forwarding::Forwarding;
use crate::heap::HeapInner;
use gc_core::{Object, Page, PageKind, View};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// Shared target pages for relocation (CAS bump allocation), one per size class.
#[derive(Default)]
pub(crate) struct RelocationAllocator {
    small: Mutex<Option<Arc<Page>>>,
    medium: Mutex<Option<Arc<Page>>>,
    pub(crate) bytes_relocated: AtomicU64,
    pub(crate) objects_relocated: AtomicU64,
    pub(crate) pages_in_place: AtomicU64,
}

/// A GC worker's private target pages (bump allocation without atomics or locks).
#[derive(Default)]
pub(crate) struct WorkerTargets {
    small: Option<Arc<Page>>,
    medium: Option<Arc<Page>>,
}

impl HeapInner {
    /// Target memory for a worker's copy of `size` bytes; `None` if the heap has none left.
    fn alloc_for_worker(&self, t: &mut WorkerTargets, size: u64) -> Option<(u64, Arc<Page>)> {
        let sizes = *self.mem.sizes();
        let kind = sizes.kind_for(size);
        let slot = match kind {
            PageKind::Small => &mut t.small,
            PageKind::Medium => &mut t.medium,
            PageKind::Large => unreachable!("large objects are never relocated"),
        };
        if let Some(p) = slot.as_ref() {
            if let Some(off) = p.alloc_private(size) {
                return Some((off, p.clone()));
            }
        }
        let page = self
            .new_relocation_page(kind, sizes.page_size(kind, size))
            .ok()?;
        let off = page.alloc_private(size)?;
        *slot = Some(page.clone());
        Some((off, page))
    }

    /// A GC worker relocates the object at `from` (it holds the page's worker reference, so
    /// no retain is needed).
    fn relocate_object_worker(&self, f: &Forwarding, from: u64, t: &mut WorkerTargets) {
        let idx = f.page.index_of(from) as u64;
        if f.table.find(idx).is_some() {
            return;
        }
        let layout = self.state.layout();
        let base = layout.view_base(View::Remapped);
        // SAFETY: the worker's reference keeps the from-page mapped; `from` is marked live.
        let obj = unsafe { Object::from_addr(base | from) };
        let size = obj.size();
        match self.alloc_for_worker(t, size) {
            Some((to, page)) => {
                // SAFETY: fresh private memory on a page of this cycle; from-space objects are
                // never written (invariant 3).
                unsafe { obj.copy_to(base | to) };
                match f.table.insert(idx, to) {
                    Ok(_) => {
                        self.reloc_alloc
                            .bytes_relocated
                            .fetch_add(size, Ordering::Relaxed);
                        self.reloc_alloc
                            .objects_relocated
                            .fetch_add(1, Ordering::Relaxed);
                    }
                    Err(_) => {
                        page.undo_alloc(to, size);
                    }
                }
            }
            None => {
                // No target memory at all: compact this page in place if no mutator is
                // copying out of it, else keep this one object where it is.
                if !self.compact_in_place(f, t) {
                    f.pin();
                    let _ = f.table.insert(idx, from);
                }
            }
        }
    }

    /// Compact the rest of `f`'s page in place: slide every live object that has no entry
    /// yet down to the lowest free address (objects already relocated out left their space
    /// free), enter each move, and make the page the worker's target for what follows.
    /// Returns false if a mutator holds the page (then nothing was done).
    fn compact_in_place(&self, f: &Forwarding, t: &mut WorkerTargets) -> bool {
        if !f.claim_in_place() {
            return false;
        }
        let page = &f.page;
        let seq = self.state.seqnum();
        let base = self.state.layout().view_base(View::Remapped);
        let align = (1u64 << page.alignment_shift()) - 1;
        let mut top = page.start();
        let mut live = Vec::new();
        page.live_map().for_each_marked(seq, |idx| live.push(idx));
        for idx in live {
            let from = page.offset_of(idx);
            if f.table.find(idx as u64).is_some() {
                continue;
            }
            // SAFETY: `from` is a live object of the page, not yet moved; only this worker
            // touches the page's memory while it is claimed.
            let obj = unsafe { Object::from_addr(base | from) };
            let size = obj.size();
            debug_assert!(top <= from, "in-place compaction only moves objects down");
            if top != from {
                // SAFETY: both ranges lie in the claimed page; `ptr::copy` allows the overlap
                // of a move to a lower address.
                unsafe {
                    std::ptr::copy(
                        (base | from) as *const u8,
                        (base | top) as *mut u8,
                        size as usize,
                    )
                };
                self.reloc_alloc
                    .bytes_relocated
                    .fetch_add(size, Ordering::Relaxed);
            }
            let won = f.table.insert(idx as u64, top);
            debug_assert!(won.is_ok(), "no one else can forward a claimed page");
            top += (size + align) & !align;
        }
        page.set_top_after_compaction(top);
        f.finish_in_place();
        self.reloc_alloc
            .pages_in_place
            .fetch_add(1, Ordering::Relaxed);
        match page.kind() {
            PageKind::Small => t.small = Some(page.clone()),
            PageKind::Medium => t.medium = Some(page.clone()),
            PageKind::Large => {}
        }
        true
    }

    /// Target memory for a copy of `size` bytes; `None` if the heap has none left.
    fn alloc_for_relocation(&self, size: u64) -> Option<u64> {
        let sizes = *self.mem.sizes();
        let kind = sizes.kind_for(size);
        let slot = match kind {
            PageKind::Small => &self.reloc_alloc.small,
            PageKind::Medium => &self.reloc_alloc.medium,
            PageKind::Large => unreachable!("large objects are never relocated"),
        };
        let seq = self.state.seqnum();
        let mut cur = slot.lock();
        if let Some(p) = cur.as_ref().filter(|p| p.seqnum() == seq) {
            if let Some(off) = p.alloc_shared(size) {
                return Some(off);
            }
        }
        let page = self
            .new_relocation_page(kind, sizes.page_size(kind, size))
            .ok()?;
        let off = page.alloc_shared(size);
        *cur = Some(page);
        off
    }

    /// Give the shared relocation allocator fresh target pages of this cycle *before* Pause
    /// Relocate Start, so relocating the roots inside the pause only bumps a pointer: taking a
    /// page can mean committing and mapping memory (hundreds of microseconds), which must not
    /// happen inside a pause. Only the classes the relocation set needs are prepared.
    pub(crate) fn prepare_relocation_targets(&self, small: bool, medium: bool) {
        let sizes = *self.mem.sizes();
        let seq = self.state.seqnum();
        for (want, kind, slot) in [
            (small, PageKind::Small, &self.reloc_alloc.small),
            (medium, PageKind::Medium, &self.reloc_alloc.medium),
        ] {
            if !want {
                continue;
            }
            let mut cur = slot.lock();
            if cur.as_ref().is_some_and(|p| p.seqnum() == seq) {
                continue;
            }
            // No memory: the pause will fall back as usual (in-place or forwarding to self).
            if let Ok(page) = self.new_relocation_page(kind, sizes.page_size(kind, 0)) {
                *cur = Some(page);
            }
        }
    }

    /// Relocate (or find the relocated copy of) the object at `from` in `f`'s page.
    pub(crate) fn relocate_object(&self, f: &Forwarding, from: u64) -> u64 {
        let idx = f.page.index_of(from) as u64;
        if let Some(to) = f.table.find(idx) {
            return to;
        }
        if !f.retain_page() {
            // The worker released the page (every live object has its entry by now), or is
            // compacting it in place (wait for that: it takes microseconds per object).
            loop {
                if let Some(to) = f.table.find(idx) {
                    return to;
                }
                assert!(
                    f.is_in_place(),
                    "a released from-page has every live object forwarded"
                );
                std::thread::yield_now();
            }
        }
        let layout = self.state.layout();
        let base = layout.view_base(View::Remapped);
        // SAFETY: the page is retained, so its memory is mapped; `from` is a live object
        // (reached through a root or slot) on it.
        let obj = unsafe { Object::from_addr(base | from) };
        let size = obj.size();
        let to = match self.alloc_for_relocation(size) {
            Some(to) => {
                // SAFETY: `to` is fresh memory of `size` bytes on a page of this cycle, not
                // overlapping the from-page; nobody writes from-space objects (invariant 3).
                unsafe { obj.copy_to(base | to) };
                to
            }
            None => {
                f.pin();
                from
            }
        };
        let result = match f.table.insert(idx, to) {
            Ok(to) => {
                if to != from {
                    self.reloc_alloc
                        .bytes_relocated
                        .fetch_add(size, Ordering::Relaxed);
                    self.reloc_alloc
                        .objects_relocated
                        .fetch_add(1, Ordering::Relaxed);
                }
                to
            }
            Err(winner) => {
                if to != from {
                    let guard = crossbeam_epoch::pin();
                    if let Some(p) = self.mem.page_table().get(to, &guard) {
                        p.undo_alloc(to, size);
                    }
                }
                winner
            }
        };
        f.release_page();
        result
    }

    /// Evacuate every page of the current relocation set with `threads` workers; frees each
    /// evacuated page. Returns (pages freed, CPU ns of the workers other than the caller).
    pub(crate) fn relocate_parallel(&self, threads: usize) -> (u64, u64) {
        let Some(rs) = self.relocation_set.lock().clone() else {
            return (0, 0);
        };
        let next = AtomicUsize::new(0);
        let freed = AtomicU64::new(0);
        let cpu = AtomicU64::new(0);
        let seq = self.state.seqnum();
        let work = || {
            let mut targets = WorkerTargets::default();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(f) = rs.forwardings.get(i) else {
                    break;
                };
                let page = &f.page;
                let _guard = crossbeam_epoch::pin();
                page.live_map().for_each_marked(seq, |idx| {
                    self.relocate_object_worker(f, page.offset_of(idx), &mut targets);
                });
                f.release_page_and_wait();
                if !f.is_pinned() {
                    self.free_page(page);
                    freed.fetch_add(1, Ordering::Relaxed);
                }
            }
        };
        std::thread::scope(|s| {
            for i in 1..threads.max(1) {
                std::thread::Builder::new()
                    .name(format!("gc-relocate-{i}"))
                    .spawn_scoped(s, || {
                        let c0 = thread_cpu_ns();
                        work();
                        cpu.fetch_add(thread_cpu_ns() - c0, Ordering::Relaxed);
                    })
                    .expect("spawning a GC relocation worker");
            }
            // The calling thread's own CPU time is counted by its caller.
            work();
        });
        (freed.load(Ordering::Relaxed), cpu.load(Ordering::Relaxed))
    }
}
