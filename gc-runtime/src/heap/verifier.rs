//! The heap verifier (ZGC's `ZVerify`), run inside pauses when `HeapConfig::verify` is on.
//!
//! It walks the object graph from the strong roots without barriers and checks, for every
//! reference (in a root, a reference slot, or a value slot holding a pointer): it points at the start of a valid object (on a registered page, below its top,
//! on an object boundary found by walking the page's headers); its color is legal for the
//! phase; at Pause Mark End every reachable object is marked (or allocated in this cycle);
//! before Pause Mark Start (that is, after the previous relocation) and at Pause Relocate
//! Start (which in `stw` mode may have compacted a page in place) no reachable reference leads
//! into a page whose objects moved except through a forwarding entry. Roots follow the rules
//! of heap slots in the `concurrent` mode (their pointers are healed lazily, by barriers and
//! by the next Concurrent Mark Roots) and must be Remapped after the `stw` pause relocated
//! them. Before walking the graph
//! it checks every page: its objects, walked header by header from the page start, must tile
//! it exactly up to its allocation top, each within the page — so no two objects overlap and
//! no object lies above the top where later allocations would overwrite it (what a broken
//! in-place compaction leaves behind). With `HeapConfig::track_generations` on it also checks
//! remembered-set completeness: every slot of a reachable object on an old page that points
//! into a young page has its bit (`RemsetCheck`). A failure panics with a report naming the
//! holder object, the slot and the value, or the page.

use super::heap_inner::HeapInner;
use crate::config::Mode;
use crate::context::Generations;
use crate::mark;
use crate::roots::MutatorShared;
use gc_core::{Color, ColoredPtr, GoodColor, Object, Offset, HEADER_SIZE};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Where in the cycle the verifier runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum VerifyPoint {
    /// Inside Pause Mark Start, before the color flip (after the previous relocation).
    BeforeMarkStart,
    /// Inside Pause Mark End, after marking completed.
    MarkEnd,
    /// Inside Pause Relocate Start, after the color flip (and, in `stw` mode, after the roots
    /// were relocated).
    RelocateStart,
    /// Inside the `stw` pause, after relocation and the full remap.
    AfterRelocation,
}

struct Walk<'h> {
    heap: &'h HeapInner,
    point: VerifyPoint,
    /// Object starts per page start, in address order (found by walking page headers).
    starts: HashMap<Offset, Vec<Offset>>,
    visited: HashSet<Offset>,
    stack: Vec<Offset>,
    /// The mark colors a live slot may carry before Pause Mark Start: the latest cycle's and
    /// the last major's (one color with full cycles only), from the mark-color rule.
    live_marks: Vec<Color>,
}

/// Verify the heap at `point`; panics with a report at the first violation. Mutators must be
/// stopped (`muts` are the ones the pause stopped).
pub(crate) fn verify(heap: &HeapInner, muts: &[Arc<MutatorShared>], point: VerifyPoint) {
    let mut w = Walk {
        heap,
        point,
        starts: HashMap::new(),
        visited: HashSet::new(),
        stack: Vec::new(),
        live_marks: heap
            .cx
            .state
            .mark_colors()
            .live_colors()
            .map(GoodColor::color)
            .collect(),
    };
    w.check_pages();
    let mut roots = Vec::new();
    heap.roots
        .for_each_strong_root(muts, &mut |s| roots.push(s.load(Ordering::Acquire)));
    for (i, p) in roots.into_iter().enumerate() {
        if !p.is_null() {
            w.reference(p, true, &|| format!("root #{i}"));
        }
    }
    let mut remset = heap.cx.generations.as_deref().map(RemsetCheck::new);
    while let Some(off) = w.stack.pop() {
        // SAFETY: `off` passed the object-start check on a registered, mapped page.
        let obj = unsafe { Object::at(heap.cx.layout(), off) };
        // Remembered-set completeness applies to the slots of objects on old pages.
        let mut remset = remset.as_mut().filter(|r| r.generations.is_old(off));
        let n_refs = obj.n_refs();
        for (i, slot) in obj.ref_slots().iter().enumerate() {
            let p = slot.load(Ordering::Acquire);
            if !p.is_null() {
                let holder = || format!("slot {i} of object {off:#x} (shape {})", obj.shape());
                let to = w.reference(p, false, &holder);
                if let Some(r) = remset.as_deref_mut() {
                    r.check(&w, off + HEADER_SIZE + 8 * i as u64, to, p, &holder);
                }
            }
        }
        for (i, slot) in obj.value_slots().iter().enumerate() {
            if let Some(p) = slot.load(Ordering::Acquire).as_pointer() {
                let holder =
                    || format!("value slot {i} of object {off:#x} (shape {})", obj.shape());
                let to = w.reference(p, false, &holder);
                if let Some(r) = remset.as_deref_mut() {
                    let at = off + HEADER_SIZE + 8 * (n_refs + i) as u64;
                    r.check(&w, at, to, p, &holder);
                }
            }
        }
    }
    if let Some(r) = remset {
        r.generations.counts().verified(r.old_slots, r.young_slots);
    }
}

/// The remembered-set completeness check (with `HeapConfig::track_generations`): every slot
/// of a reachable object on an old page that points into a young page has its bit in the
/// current bitmap (see `context::generations`). Counts what it checked, for the tests that
/// must see it run.
struct RemsetCheck<'g> {
    generations: &'g Generations,
    /// Pointer slots of old objects checked.
    old_slots: u64,
    /// Of those, the ones pointing young.
    young_slots: u64,
}

impl<'g> RemsetCheck<'g> {
    fn new(generations: &'g Generations) -> Self {
        RemsetCheck {
            generations,
            old_slots: 0,
            young_slots: 0,
        }
    }

    /// The slot at offset `slot` of an old object holds `p`, which leads to the object at
    /// `to` (forwarding resolved).
    fn check(
        &mut self,
        w: &Walk<'_>,
        slot: Offset,
        to: Offset,
        p: ColoredPtr,
        holder: &dyn Fn() -> String,
    ) {
        self.old_slots += 1;
        if !self.generations.is_young(to) {
            return;
        }
        self.young_slots += 1;
        if !self.generations.is_remembered(slot) {
            w.fail(
                &format!(
                    "an old object's slot (offset {slot:#x}) points into a young page \
                     ({to:#x}) and is not in the remembered set: a store barrier or a \
                     relocation missed it"
                ),
                holder,
                p,
            );
        }
    }
}

impl Walk<'_> {
    /// Walk every registered page header by header: the objects must tile the page exactly
    /// from its start to its top. Records each page's object starts for the graph walk.
    fn check_pages(&mut self) {
        let layout = self.heap.cx.layout();
        let pages = self.heap.cx.pages.snapshot();
        for page in pages {
            let (start, top, end) = (page.start(), page.top(), page.end());
            let align = (1u64 << page.alignment_shift()) - 1;
            let mut set = Vec::new();
            let mut off = start;
            while off < top {
                // SAFETY: mutators are stopped, so every object below the page's top has its
                // header written; `off` is the start of the next object of the walk (checked
                // against the page's end below before the next header is read).
                let size = unsafe { Object::at(layout, off) }.size();
                let next = off + ((size + align) & !align);
                if next > top || next > end {
                    panic!(
                        "GC verification failed at {:?}: object at {off:#x} ({size} bytes) \
                         extends past the top {top:#x} of {page:?}: the page's objects do not \
                         tile it (an object overlaps another, or lies above the top)",
                        self.point
                    );
                }
                set.push(off);
                off = next;
            }
            self.starts.insert(start, set);
        }
    }

    fn fail(&self, what: &str, holder: &dyn Fn() -> String, p: ColoredPtr) -> ! {
        panic!(
            "GC verification failed at {:?}: {} holds {p:#x}: {what}",
            self.point,
            holder()
        );
    }

    fn legal(&self, root: bool) -> Vec<Color> {
        let st = &self.heap.cx.state;
        let mark = st.good();
        // Only the `stw` pause relocates the roots; in the `concurrent` mode a root keeps its
        // mark color until a mutator loads it or the next Concurrent Mark Roots, like a slot.
        let strict_root = root && self.heap.config.mode == Mode::Stw;
        match self.point {
            // Between cycles the good color is Remapped; slots may still carry the latest
            // cycle's mark color (stale in the next cycle) and no other: whichever of the
            // three the mark-color rule chose, the color of two cycles ago is illegal.
            VerifyPoint::BeforeMarkStart if strict_root => vec![Color::REMAPPED],
            VerifyPoint::BeforeMarkStart => {
                let mut legal = vec![Color::REMAPPED];
                legal.extend_from_slice(&self.live_marks);
                legal
            }
            VerifyPoint::MarkEnd => vec![mark.color()],
            VerifyPoint::RelocateStart if strict_root => vec![Color::REMAPPED],
            VerifyPoint::AfterRelocation => vec![Color::REMAPPED],
            VerifyPoint::RelocateStart => vec![st.mark().color(), Color::REMAPPED],
        }
    }

    /// Check the reference `p`; returns the offset of the object it leads to (through its
    /// forwarding entry, if it leads into a page whose objects moved).
    fn reference(&mut self, p: ColoredPtr, root: bool, holder: &dyn Fn() -> String) -> Offset {
        let layout = self.heap.cx.layout();
        if !layout.is_dereferenceable(p) {
            self.fail("not a pointer with exactly one view color", holder, p);
        }
        let color = layout.color(p);
        if !self.legal(root).contains(&color) {
            self.fail(&format!("color {color:?} is illegal here"), holder, p);
        }
        let mut off = layout.offset(p);
        // A pointer that is not Remapped may lead into a relocation set whose objects moved:
        // before Mark Start into the previous cycle's (every object there has its entry), at
        // Relocate Start into this cycle's, where a page the pause compacted in place has an
        // entry for every object (other pages still hold their objects where they were).
        let forwarded = match self.point {
            VerifyPoint::BeforeMarkStart | VerifyPoint::RelocateStart => color != Color::REMAPPED,
            VerifyPoint::MarkEnd | VerifyPoint::AfterRelocation => false,
        };
        if forwarded {
            let guard = crossbeam_epoch::pin();
            if let Some(f) = self.heap.cx.forwarding.get(off, &guard) {
                if f.page().contains(off) {
                    match f.find(f.page().index_of(off) as u64) {
                        Some(to) => off = to,
                        None if self.point == VerifyPoint::RelocateStart
                            && !f.is_compacted_in_place() => {}
                        None => self.fail(
                            "pointer into a relocated or compacted page without a forwarding \
                             entry",
                            holder,
                            p,
                        ),
                    }
                }
            }
        }
        let Some(page) = self.heap.cx.page_table().get_arc(off) else {
            self.fail("points outside every page (freed memory)", holder, p);
        };
        if off >= page.top() {
            self.fail("points above the page's allocation top", holder, p);
        }
        let Some(starts) = self.starts.get(&page.start()) else {
            self.fail("points into a page that is not registered", holder, p);
        };
        if starts.binary_search(&off).is_err() {
            self.fail("does not point at an object start", holder, p);
        }
        if self.point == VerifyPoint::MarkEnd && !mark::is_live(&self.heap.cx, off) {
            self.fail(
                "reachable object was not marked by Pause Mark End",
                holder,
                p,
            );
        }
        if self.visited.insert(off) {
            self.stack.push(off);
        }
        off
    }
}
