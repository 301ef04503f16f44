//! Full remap (`stw` mode only): after relocating inside the pause, walk every object of every
//! page and rewrite each stale slot — reference slots, and value slots holding a pointer — to
//! its Remapped pointer, so nothing after the pause needs a forwarding table. Work
//! proportional to the heap, as a stop-the-world collector's is.

use crate::context::GcContext;
use gc_core::heap_epoch::HeapGuard;
use gc_core::{ColoredPtr, GoodColor, Offset, ValueWord};
use std::sync::atomic::Ordering;

/// Rewrite every bad slot of every object. Mutators must be stopped.
pub(crate) fn remap_all(cx: &GcContext) {
    let layout = cx.layout();
    let bad = layout.bad_mask(GoodColor::Remapped);
    let pages = cx.pages.snapshot();
    let guard = gc_core::heap_epoch::pin();
    let mut value_moves = 0;
    for page in pages {
        // SAFETY: mutators are stopped, so nobody allocates on the page and every object
        // up to its top has its header written; the page is mapped while registered.
        unsafe {
            page.for_each_object(layout, |obj| {
                for slot in obj.ref_slots() {
                    let p = slot.load(Ordering::Relaxed);
                    if p.raw() & bad == 0 {
                        continue;
                    }
                    if let Some(new) = remapped(cx, p, &guard) {
                        slot.store(layout.good(new, GoodColor::Remapped), Ordering::Relaxed);
                    }
                }
                for slot in obj.value_slots() {
                    let w = slot.load(Ordering::Relaxed);
                    if !w.is_bad_pointer(bad) {
                        continue;
                    }
                    if let Some(new) = remapped(cx, w.pointer_bits(), &guard) {
                        let good = layout.good(new, GoodColor::Remapped);
                        slot.store(ValueWord::pointer(good), Ordering::Relaxed);
                        value_moves += (new != layout.offset(w.pointer_bits())) as u64;
                    }
                }
            })
        };
    }
    cx.value_slots.full_remapped(value_moves);
}

/// Where the object `p` points at is now, or `None` if `p` points into a relocated page at an
/// object that was not relocated: a dead object's slot pointing at a dead object, never read
/// again.
fn remapped(cx: &GcContext, p: ColoredPtr, guard: &HeapGuard) -> Option<Offset> {
    let off = cx.layout().offset(p);
    match cx.forwarding.get(off, guard) {
        Some(f) if f.page().contains(off) => f.find(f.page().index_of(off) as u64),
        _ => Some(off),
    }
}
