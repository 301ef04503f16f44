//! Full remap (`stw` mode only): after relocating inside the pause, walk every object of every
//! page and rewrite each stale slot to its Remapped pointer, so nothing after the pause needs
//! a forwarding table. Work proportional to the heap, as a stop-the-world collector's is.

use crate::context::GcContext;
use gc_core::GoodColor;
use std::sync::atomic::Ordering;

/// Rewrite every bad slot of every object. Mutators must be stopped.
pub(crate) fn remap_all(cx: &GcContext) {
    let layout = cx.layout();
    let bad = layout.bad_mask(GoodColor::Remapped);
    let pages = cx.pages.snapshot();
    let guard = crossbeam_epoch::pin();
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
                    let off = layout.offset(p);
                    let new = match cx.forwarding.get(off, &guard) {
                        Some(f) if f.page().contains(off) => {
                            match f.find(f.page().index_of(off) as u64) {
                                Some(to) => to,
                                // A dead object's slot may point at a dead object that was
                                // not relocated; it is never read again.
                                None => continue,
                            }
                        }
                        _ => off,
                    };
                    slot.store(layout.good(new, GoodColor::Remapped), Ordering::Relaxed);
                }
            })
        };
    }
}
