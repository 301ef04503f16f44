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
//! into a young page has its bit (`RemsetCheck`), while the store barrier remembers
//! (`Generations::remembering`). A failure panics with a report naming the
//! holder object, the slot and the value, or the page.

use super::heap_inner::HeapInner;
use crate::config::Mode;
use crate::context::{Generations, Table};
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
    };
    w.check_pages();
    let mut roots = Vec::new();
    heap.roots
        .for_each_strong_root(muts, |s| roots.push(s.load(Ordering::Acquire)));
    for (i, p) in roots.into_iter().enumerate() {
        if !p.is_null() {
            w.reference(p, true, &|| format!("root #{i}"));
        }
    }
    // While the store barrier does not remember (no minor until the next full cycle), the
    // set is not kept complete and nothing reads it.
    let mut remset = heap
        .cx
        .generations
        .as_deref()
        .filter(|g| g.remembering())
        .map(RemsetCheck::new);
    while let Some(off) = w.stack.pop() {
        // SAFETY: `off` passed the object-start check on a registered, mapped page.
        let obj = unsafe { Object::at(heap.cx.layout(), off) };
        // Remembered-set completeness applies to the slots of objects on old pages; not yet
        // to a page a minor is promoting in place (at its Pause Relocate Start), whose slots
        // its Concurrent Relocate remembers after the pause.
        let mut remset = remset
            .as_mut()
            .filter(|r| r.generations.is_settled_old(off));
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
        // A page being promoted in place counts as young here, as in the store barrier's
        // value test: an old slot pointing into it was stored while it was young or while it
        // was promoting, and remembered either way.
        if self.generations.is_settled_old(to) {
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

    /// The colors legal at this point for a reference (a root if `root`) leading to the
    /// object at `to`.
    ///
    /// The invariant behind them (see `mark::marker::good_for`): a pointer to an old object
    /// carries Remapped or the last major's mark color, never a minor's, and a pointer to a
    /// young object carries Remapped or the latest cycle's color (every later minor visits
    /// it while it stays young, and only a major's Pause Mark Start makes it old). With full
    /// cycles only (or the bookkeeping off, when every object counts as old here) both say
    /// "Remapped or the latest cycle's".
    fn legal(&self, root: bool, to: Offset) -> Vec<Color> {
        let st = &self.heap.cx.state;
        let mark = st.good();
        let young = self
            .heap
            .cx
            .generations
            .as_deref()
            .is_some_and(|g| !g.is_old(to));
        // Only the `stw` pause relocates the roots; in the `concurrent` mode a root keeps its
        // mark color until a mutator loads it or the next Concurrent Mark Roots, like a slot.
        let strict_root = root && self.heap.config.mode == Mode::Stw;
        let rule = st.mark_colors();
        // Before a minor's relocation, a pointer to an old object: Remapped, or the last
        // major's color (a slot no cycle visited since; never a root, which Concurrent Mark
        // Roots healed): see `legal_by_point`.
        let mut legal = self.legal_by_point(root, young, strict_root, rule, mark);
        // A minor's in-place promotion turns young objects old while pointers to them still
        // carry its color (roots, young objects, remembered slots, the promoted objects'
        // own fields, which its Concurrent Relocate remembered): legal for the pages it
        // promoted until the next Pause Mark Start, after which that cycle's visits heal
        // them, and its Mark End checks the strict rule again.
        if !young {
            if let Some(c) = self
                .heap
                .cx
                .generations
                .as_deref()
                .and_then(|g| g.promoted_color(to))
            {
                legal.push(c);
            }
        }
        legal
    }

    /// [`Self::legal`] without the in-place promotion's exception.
    fn legal_by_point(
        &self,
        root: bool,
        young: bool,
        strict_root: bool,
        rule: gc_core::MarkColorRule,
        mark: GoodColor,
    ) -> Vec<Color> {
        let st = &self.heap.cx.state;
        let old_in_minor = || {
            let mut v = vec![Color::REMAPPED];
            if !root {
                v.extend(rule.last_major().map(GoodColor::color));
            }
            v
        };
        match self.point {
            VerifyPoint::BeforeMarkStart if strict_root => vec![Color::REMAPPED],
            // Between cycles the good color is Remapped; see the invariant above.
            VerifyPoint::BeforeMarkStart => {
                let latest = if young {
                    rule.current()
                } else {
                    rule.last_major()
                };
                let mut legal = vec![Color::REMAPPED];
                legal.extend(latest.map(GoodColor::color));
                legal
            }
            VerifyPoint::MarkEnd if st.is_minor() && !young => old_in_minor(),
            VerifyPoint::MarkEnd => vec![mark.color()],
            VerifyPoint::RelocateStart if strict_root => vec![Color::REMAPPED],
            VerifyPoint::AfterRelocation => vec![Color::REMAPPED],
            VerifyPoint::RelocateStart if st.is_minor() && !young => old_in_minor(),
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
        let mut off = layout.offset(p);
        // A pointer of a color a forwarding index remaps may lead into the relocation set it
        // holds, whose objects moved: before Mark Start into the last relocating cycle's
        // (every object there has its entry), at Relocate Start into this cycle's, where a
        // page the pause compacted in place has an entry for every object (other pages still
        // hold their objects where they were), and in a minor cycle into the last major's
        // (the old-to-old slots it never visits). The color names the index: the last
        // major's, or the latest evacuating minor's (`GcState::table_for`). A pointer of any
        // other color is not looked up: after a minor its page may reuse a from-page's
        // memory.
        let table = (self.point != VerifyPoint::AfterRelocation)
            .then(|| self.heap.cx.state.table_for(color))
            .flatten();
        let mut moved_by_minor = false;
        if let Some(table) = table {
            let guard = gc_core::heap_epoch::pin();
            if let Some(f) = self.heap.cx.index(table).get(off, &guard) {
                if f.page().contains(off) {
                    match f.find(f.page().index_of(off) as u64) {
                        Some(to) => {
                            moved_by_minor = table == Table::Minor;
                            off = to
                        }
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
        // The mark-color rule's whole purpose: no live slot carries the color the next cycle
        // marks with (it would look marked while its object is not).
        if self.point == VerifyPoint::BeforeMarkStart
            && color == self.heap.cx.state.mark_colors().next().color()
        {
            self.fail(
                "carries the color the next cycle will mark with (it would look marked)",
                holder,
                p,
            );
        }
        // A pointer the latest minor's evacuation left stale carries that minor's color and
        // leads (through its table) to a copy on an old target page: legal until the next
        // cycle's marking, which remaps it; from that cycle's Mark End on the strict rule
        // holds again (the table is still installed then, so a stale pointer the marking
        // missed is found here and fails).
        let minor_window = moved_by_minor && self.point == VerifyPoint::BeforeMarkStart;
        if !minor_window && !self.legal(root, off).contains(&color) {
            self.fail(&format!("color {color:?} is illegal here"), holder, p);
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
