//! Read-only introspection of a live heap, for teaching and tools (the executable tour, the
//! book's figures): the raw 64-bit word of a slot as the collector left it (before any
//! barrier), the global phase state (good color, barrier phase, sequence number: ZGC's
//! `ZGlobalPhase`, `ZGlobalSeqNum` and its address masks), and the relocation set's
//! forwarding tables (ZGC's `ZForwarding` entries: from-offset → to-offset), and with the
//! generational bookkeeping on, the remembered set's counters and an object's generation.
//! Everything here
//! reads real state and changes none of it, except that reaching an object through a handle
//! goes through the load barrier, as every access does.

use super::global::Global;
use super::heap::Heap;
use super::scope::{Local, Scope};
use crate::context::BarrierPhase as StatePhase;
use crate::observe::RememberedSetStats;
use std::sync::atomic::Ordering;

pub use gc_core::{
    AddressLayout, Color, ColoredPtr, GoodColor, Offset, PageAge, ValueKind, ValueWord,
};

/// Which slow path the load barrier takes with a bad pointer now (ZGC's `ZGlobalPhase`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BarrierPhase {
    /// From Pause Mark Start to Pause Mark End: a bad pointer's object is marked, the slot
    /// healed to the mark color.
    Mark,
    /// From Pause Mark End to Pause Relocate Start: marking is over; a bad pointer is only
    /// recolored.
    MarkComplete,
    /// From Pause Relocate Start to the next Pause Mark Start (and before the first cycle): a
    /// bad pointer's object is relocated if its page is being evacuated, or only remapped.
    Relocate,
}

/// The global phase state at one moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GcStateView {
    /// The good color: a pointer with this color bit (and no other) needs no slow path.
    pub good: GoodColor,
    /// The previous cycle's mark color, chosen by the mark-color rule (`HeapConfig::mark_colors`):
    /// the color of stale pointers, which the previous relocation's forwarding remaps, while
    /// the latest cycle marks (Remapped, never stale, before the second cycle).
    pub stale: GoodColor,
    /// The other color of stale pointers while the latest cycle marks: the mark color of the
    /// minor whose forwarding table was installed at its Pause Mark Start (that table remaps
    /// it, the last major's remaps `stale`); `None` if none was (the cycle before was a
    /// major).
    pub stale_minor: Option<GoodColor>,
    /// The bits that make a pointer bad now (every color bit but the good one's).
    pub bad_mask: u64,
    pub phase: BarrierPhase,
    /// The sequence number: incremented by every Pause Mark Start (2 in the first cycle).
    pub seqnum: u64,
    /// The heap's address layout (offset bits, view bases).
    pub layout: AddressLayout,
}

impl GcStateView {
    /// True if `p` is null or has only the good color: the barrier's fast path takes it.
    pub fn is_good(&self, p: ColoredPtr) -> bool {
        p.raw() & self.bad_mask == 0
    }
}

/// One forwarding entry: the object that was at `from` is now at `to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ForwardingEntry {
    pub from: Offset,
    pub to: Offset,
}

/// One page of the relocation set and its forwarding table as it is now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageForwarding {
    /// The page's first offset and its size in bytes.
    pub page: Offset,
    pub size: u64,
    /// True once the page was compacted in place (its objects slid down on the page itself).
    pub compacted_in_place: bool,
    /// The entries published so far, by `from` offset.
    pub entries: Vec<ForwardingEntry>,
}

impl Heap {
    /// What the generational bookkeeping did since the heap was created — old-to-young
    /// stores remembered, young slots remembered by relocation, pages promoted, slots the
    /// verifier checked —, or `None` unless `HeapConfig::track_generations` is on.
    pub fn remembered_set_stats(&self) -> Option<RememberedSetStats> {
        self.inner.generations().map(|g| g.stats())
    }

    /// Make the next full cycle stop the store barrier's remembering until the one after it,
    /// as the `generational` director does while its minors do not pay, so a test reaches
    /// that state without such a workload. Does nothing unless `HeapConfig::track_generations`
    /// is on.
    #[doc(hidden)]
    pub fn stop_remembering_at_next_major_for_tests(&self) {
        if let Some(g) = self.inner.generations() {
            g.stop_remembering_at_next_major_for_tests();
        }
    }

    /// Plant a bug: from now on the store barrier finds old-to-young stores but remembers
    /// none (a missing barrier), so the verifier must fail the next pause (for the test of
    /// that). Does nothing unless `HeapConfig::track_generations` is on.
    #[doc(hidden)]
    pub fn skip_store_barrier_for_tests(&self) {
        if let Some(g) = self.inner.generations() {
            g.skip_barrier_for_tests();
        }
    }

    /// Plant a bug: from now on a minor cycle's remembered-set scan drops every slot it takes
    /// (a skipped remembered bit), so the verifier or the test's model must catch it. Does
    /// nothing unless `HeapConfig::track_generations` is on.
    #[doc(hidden)]
    pub fn skip_remembered_scan_for_tests(&self) {
        if let Some(g) = self.inner.generations() {
            g.skip_scan_for_tests();
        }
    }

    /// Plant a bug: from now on a minor cycle's in-place promotion remembers none of the
    /// promoted objects' slots (neither those pointing young nor those of its color), so the
    /// verifier or the test's model must catch it. Does nothing unless
    /// `HeapConfig::track_generations` is on.
    #[doc(hidden)]
    pub fn skip_promoted_remembering_for_tests(&self) {
        if let Some(g) = self.inner.generations() {
            g.skip_promoted_for_tests();
        }
    }

    /// Plant a bug: from now on a minor cycle's in-place promotion remembers only the
    /// promoted objects' slots that point young, leaving the ones that carry its mark color
    /// and point old to no later minor's visit; the verifier must catch it. Does nothing
    /// unless `HeapConfig::track_generations` is on.
    #[doc(hidden)]
    pub fn skip_promoted_color_for_tests(&self) {
        if let Some(g) = self.inner.generations() {
            g.skip_promoted_color_for_tests();
        }
    }

    /// Plant a bug: from now on a minor cycle heals and hands out pointers to old objects in
    /// its own mark color (not Remapped), so a later cycle can meet that color on a live slot
    /// at its Pause Mark Start; the verifier must catch it. Does nothing unless
    /// `HeapConfig::track_generations` is on.
    #[doc(hidden)]
    pub fn color_old_in_minor_for_tests(&self) {
        if let Some(g) = self.inner.generations() {
            g.plant_old_color_for_tests();
        }
    }

    /// Plant a bug: from now on an evacuating minor drops its forwarding table when its
    /// relocation ends, not after the next cycle's marking: a pointer of its color left in a
    /// root, a young object or a remembered slot then leads to a freed from-page, which the
    /// verifier (or the next marking) must catch.
    #[doc(hidden)]
    pub fn drop_minor_forwarding_early_for_tests(&self) {
        self.inner.drop_minor_table_early_for_tests();
    }

    /// Plant a bug: from now on a minor that compacts a young page in place (no target
    /// memory left for its survivors) makes the page old without remembering any of its
    /// objects' slots, neither those pointing young nor those carrying the minor's mark
    /// color (an in-place compaction that promotes the page as ZGC's may, but forgets its
    /// remembered set); the verifier or the test's model must catch it. Does nothing unless
    /// `HeapConfig::track_generations` is on.
    #[doc(hidden)]
    pub fn promote_compacted_page_for_tests(&self) {
        if let Some(g) = self.inner.generations() {
            g.promote_compacted_for_tests();
        }
    }

    /// Plant a bug: from now on a minor's survivor target pages (where the survivors of a
    /// sparse young page below the tenuring threshold are copied, aged by copy) are born
    /// old, while the copies onto them are made as survivors' (no remembered bit): their
    /// slots that point young are left unremembered on an old page; the verifier must catch
    /// it. Does nothing unless `HeapConfig::track_generations` is on.
    #[doc(hidden)]
    pub fn survivor_targets_old_for_tests(&self) {
        if let Some(g) = self.inner.generations() {
            g.survivor_targets_old_for_tests();
        }
    }

    /// Plant a bug: from now on a minor's copies (survivors of the sparse young pages it
    /// evacuates to old targets) remember only their slots that point young, not the ones
    /// carrying the minor's mark color, which then no later minor heals; the verifier must
    /// catch it. Does nothing unless `HeapConfig::track_generations` is on.
    #[doc(hidden)]
    pub fn skip_moved_color_for_tests(&self) {
        if let Some(g) = self.inner.generations() {
            g.skip_moved_color_for_tests();
        }
    }

    /// Slots in the remembered set's current bitmap now, or `None` unless
    /// `HeapConfig::track_generations` is on.
    pub fn remembered_slots(&self) -> Option<u64> {
        self.inner.generations().map(|g| g.remembered_now())
    }

    /// The good color, barrier phase and sequence number now.
    pub fn gc_state(&self) -> GcStateView {
        let st = self.inner.state();
        GcStateView {
            good: st.good(),
            stale: st.stale(),
            stale_minor: st.stale_minor(),
            bad_mask: st.bad_mask(),
            phase: match st.phase() {
                StatePhase::Mark => BarrierPhase::Mark,
                StatePhase::MarkComplete => BarrierPhase::MarkComplete,
                StatePhase::Relocate => BarrierPhase::Relocate,
            },
            seqnum: st.seqnum(),
            layout: self.inner.layout(),
        }
    }

    /// The heap's offset range: its first offset and size. Offsets (and the low bits of every
    /// colored pointer) lie in it; the first heap of a process starts at offset 0, a heap
    /// created while others live starts where their ranges end.
    pub fn offset_range(&self) -> (Offset, u64) {
        self.inner.pages().memory().reservation()
    }

    /// The current relocation set (chosen by the last Concurrent Select Relocation Set, kept
    /// until the next cycle's Concurrent Reset Relocation Set), each page with the forwarding
    /// entries published so far, pages and entries in offset order.
    pub fn relocation_set(&self) -> Vec<PageForwarding> {
        describe(&self.inner.relocation_set())
    }

    /// The latest evacuating minor's relocation set (the sparse young pages it chose, kept
    /// until the next cycle's Concurrent Reset Relocation Set, after that cycle's marking),
    /// in the same form as [`Self::relocation_set`]; empty if that minor evacuated nothing
    /// or a cycle since dropped it.
    pub fn minor_relocation_set(&self) -> Vec<PageForwarding> {
        describe(&self.inner.minor_relocation_set())
    }
}

/// A relocation set's pages, each with the forwarding entries published so far, pages and
/// entries in offset order.
fn describe(set: &[std::sync::Arc<crate::context::Forwarding>]) -> Vec<PageForwarding> {
    let mut pages: Vec<PageForwarding> = set
        .iter()
        .map(|f| {
            let page = f.page();
            let mut entries: Vec<ForwardingEntry> = f
                .entries()
                .map(|(idx, to)| ForwardingEntry {
                    from: page.offset_of(idx as usize),
                    to,
                })
                .collect();
            entries.sort_by_key(|e| e.from);
            PageForwarding {
                page: page.start(),
                size: page.size(),
                compacted_in_place: f.is_compacted_in_place(),
                entries,
            }
        })
        .collect();
    pages.sort_by_key(|p| p.page);
    pages
}

impl Global {
    /// The raw word in this handle's slot, as the collector or the last barrier left it.
    pub fn raw_word(&self) -> ColoredPtr {
        self.table_slot().load(Ordering::Acquire)
    }
}

impl Scope<'_> {
    /// The raw word in a local handle's slot (no barrier).
    ///
    /// # Panics
    /// If `l` was made by a scope of another mutator.
    pub fn raw_handle(&self, l: Local<'_>) -> ColoredPtr {
        if !self.mutator().shared.handles.owns(l.slot) {
            super::scope::foreign("Scope::raw_handle (a Local)");
        }
        l.slot.load(Ordering::Acquire)
    }

    /// The raw word in reference slot `i` of `obj`, without the barrier: what the slot holds
    /// (a good pointer, or a bad one the next load will heal). `obj` itself is reached
    /// through the barrier, as every access to an object is.
    ///
    /// # Panics
    /// If `i` is out of range, or `obj` is a handle of another mutator.
    pub fn raw_slot(&self, obj: Local<'_>, i: usize) -> ColoredPtr {
        self.get(obj).obj().ref_slot(i).load(Ordering::Acquire)
    }

    /// The raw word in value slot `i` of `obj`, without the barrier (see [`Self::raw_slot`]):
    /// a number's or immediate's bits, or a pointer under its tag, good or bad.
    ///
    /// # Panics
    /// If `i` is out of range, or `obj` is a handle of another mutator.
    pub fn raw_value_slot(&self, obj: Local<'_>, i: usize) -> gc_core::ValueWord {
        self.get(obj).obj().value_slot(i).load(Ordering::Acquire)
    }
}

impl Scope<'_> {
    /// The age of the page `obj` lies on (eden, survivor `n`, old); `None` unless
    /// `HeapConfig::track_generations` is on.
    pub fn page_age(&self, obj: Local<'_>) -> Option<PageAge> {
        let o = self.get(obj);
        let g = self.heap().generations()?;
        g.age(self.heap().layout().offset(o.ptr()))
    }

    /// True if `obj` lies on an old page, false on a young one; `None` unless
    /// `HeapConfig::track_generations` is on.
    pub fn is_old(&self, obj: Local<'_>) -> Option<bool> {
        let o = self.get(obj);
        let g = self.heap().generations()?;
        Some(g.is_old(self.heap().layout().offset(o.ptr())))
    }
}
