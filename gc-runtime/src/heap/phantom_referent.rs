//! Which object a phantom slot refers to, asked without loading it (the identity test of a
//! direct buffer's owner; ZGC's phantom referents are never loaded either).
//!
//! A phantom slot is written only by the collector, so a mutator must not heal it; this reads
//! it and works out where its referent is now, as the load barrier would but with no side
//! effect: a Remapped pointer, or one with the current mark color, is current; a pointer with
//! a mark color that is not good (the previous cycle's during marking, the last cycle's mark
//! color during relocation and until the next Pause Mark Start) may point into a relocation
//! set, and is followed through its page's forwarding if the object was moved. An object not
//! moved yet is still where the pointer says. A pointer is looked up only in the forwarding
//! index its color names (`GcState::table_for`: the last major's color in the major's, the
//! latest evacuating minor's in the minor's): a pointer of any other color is current, and
//! may lie on a page that reuses the memory of a from-page of either set.

use super::heap_inner::HeapInner;
use gc_core::{Color, ColoredPtr, Offset};

impl HeapInner {
    /// True if phantom slot `id` refers to the object `ptr` (a good pointer, read through the
    /// barrier) points at.
    pub(crate) fn phantom_refers_to(&self, id: usize, ptr: ColoredPtr) -> bool {
        let Some(p) = self.phantoms().load(id) else {
            return false;
        };
        if p.is_null() || ptr.is_null() {
            return false;
        }
        let layout = self.cx.layout();
        self.current_offset(p) == layout.offset(ptr)
    }

    /// Where the object `p` (a phantom slot's non-null value) points at is now.
    fn current_offset(&self, p: ColoredPtr) -> Offset {
        let cx = &self.cx;
        let layout = cx.layout();
        let off = layout.offset(p);
        let color = layout.color(p);
        let good = cx.state.good().color();
        if color.contains(Color::REMAPPED) || color.intersects(good) {
            return off;
        }
        let guard = gc_core::heap_epoch::pin();
        match cx.stale_forwarding(p, &guard) {
            Some(f) => f.find(f.page().index_of(off) as u64).unwrap_or(off),
            None => off,
        }
    }
}
