//! Remapping a copy before it is published: a GC worker that copies an object out of the page
//! it is evacuating writes the new addresses of the object's neighbours on the same page that
//! moved already into the copy's slots, before the forwarding entry makes the copy the object.
//!
//! ZGC leaves every pointer to a moved object to be remapped lazily: by a mutator's load
//! barrier, or by the next cycle's marking, which reads the stale color, looks the object up
//! in the forwarding table the relocation left and heals the slot with a CAS. That includes
//! the pointers *inside* the copies, which still name the old addresses. When a program
//! allocates a structure together (a tree, a list, an object and its fields), most of those
//! pointers lead to neighbours on the same page, which move in the same evacuation: a tree of
//! small nodes relocated whole left one stale slot per node, and in heap-churn at 1G the next
//! marking remapped 2.7–8.3 million of them per cycle, about one per object relocated.
//!
//! The worker knows where a neighbour went once the neighbour has its entry, and until the
//! copy is published nobody else can see it: the slot is written with a plain store, no CAS,
//! while the copy and the page's forwarding table are in the worker's cache. The worker copies
//! a page's objects in address order (the copies keep it), but publishes them in batches from
//! the last copied to the first (`Relocate::publish_batch`), so that a copy is published after
//! the copies of the objects allocated after it within the batch, which is where a structure
//! built top-down points (a node linked to children allocated after it, a constructor that
//! allocates its fields' objects after itself), and after every earlier batch, which covers
//! a structure built bottom-up (a list grown at its head). A pointer to an object with no
//! entry yet (later on the page beyond the batch, earlier in the same batch, or on another
//! page) is left for the next marking to remap, as before. Only entries are ever written
//! into a copy, never another unpublished copy's address: a copy that loses its CAS to a
//! mutator's is not pointed to by anything.
//!
//! A healed pointer is a good one of the relocation phase (Remapped), which the next marking
//! recolors without a lookup, as it does any pointer a mutator stored meanwhile.

use crate::context::Forwarding;
use gc_core::{AddressLayout, Color, ColoredPtr, GoodColor, Object, Offset, ValueWord};
use std::sync::atomic::Ordering;

/// What a worker needs to remap its copies of one from-page's objects, computed once per
/// batch: the raw bits that make a pointer one of the page's objects with the mark color.
pub(super) struct CopyRemap<'f> {
    f: &'f Forwarding,
    layout: AddressLayout,
    offset_mask: u64,
    /// The color bits of a pointer the marking left (the cycle's mark color, exactly).
    mark_bits: u64,
    start: u64,
    size: u64,
    shift: u32,
}

impl<'f> CopyRemap<'f> {
    /// For copies of `f`'s objects in a cycle that marked with `mark`.
    pub(super) fn new(layout: AddressLayout, f: &'f Forwarding, mark: Color) -> Self {
        let page = f.page();
        CopyRemap {
            f,
            layout,
            offset_mask: layout.offset_mask(),
            mark_bits: layout.with_color(Offset::ZERO, mark).raw(),
            start: page.start().raw(),
            size: page.size(),
            shift: page.alignment_shift(),
        }
    }

    /// The new address (Remapped) of the object `p` points to, if `p` carries exactly the
    /// mark color and leads to an object of the page that has its entry.
    #[inline(always)]
    fn remapped(&self, p: ColoredPtr) -> Option<ColoredPtr> {
        let raw = p.raw();
        if raw & !self.offset_mask != self.mark_bits {
            return None;
        }
        let rel = (raw & self.offset_mask).wrapping_sub(self.start);
        if rel >= self.size {
            return None;
        }
        let to = self.f.find(rel >> self.shift)?;
        Some(self.layout.good(to, GoodColor::Remapped))
    }

    /// In `copy`, the worker's private copy of an object of the page not yet published, write
    /// into each slot holding a pointer of the mark color to an object of the same page that
    /// has its entry already the new address of that object (Remapped). Returns the number of
    /// slots written.
    #[inline]
    pub(super) fn remap(&self, copy: Object) -> u64 {
        let mut written = 0;
        // Plain stores: the copy is private to this worker until its entry publishes it (the
        // entry's CAS releases these stores to whoever reads the entry).
        for slot in copy.ref_slots() {
            if let Some(good) = self.remapped(slot.load(Ordering::Relaxed)) {
                slot.store(good, Ordering::Relaxed);
                written += 1;
            }
        }
        for slot in copy.value_slots() {
            let Some(p) = slot.load(Ordering::Relaxed).as_pointer() else {
                continue;
            };
            if let Some(good) = self.remapped(p) {
                slot.store(ValueWord::pointer(good), Ordering::Relaxed);
                written += 1;
            }
        }
        written
    }
}
