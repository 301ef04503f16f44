//! The executable tour: real GC cycles on a tiny object graph, narrated phase by phase
//! (`cargo run --release -p gc-runtime --example tour`). One mutator, one GC thread, the
//! verifier on; a `Stepper` holds each cycle before its concurrent phases, so the mutator's
//! loads happen at the same point of the cycle on every run, and `inspect` reads the real
//! state: each slot's raw 64-bit word and its color (Marked0, Marked1, Remapped), good or bad
//! in the current phase, a load barrier healing a slot (the word before and after), the
//! forwarding entries of a relocated page, and (second run) a page compacted in place.
//!
//! Offsets are shown relative to the heap's first offset (the first heap of a process starts
//! at 0, so they are the raw offsets), and so are the words: the transcript is the same on
//! every run, and `tests/tour.rs` compares it with the golden copy the book includes
//! (`docs/src/tour/transcript.txt`).

use gc_runtime::inspect::{BarrierPhase, Color, ColoredPtr, GcStateView, Offset, PageForwarding};
use gc_runtime::{GcPhase, Global, Heap, HeapConfig, Local, Mode, Scope, Step, Stepper};
use std::collections::BTreeMap;
use std::fmt::Write;

/// The first run's heap (any size works: offsets are shown relative to the heap).
const HEAP: u64 = 64 << 20;
/// The second run's heap: the smallest collected heap, three 2 MiB pages, with no relocation
/// reserve, so that relocation finds no free page and compacts in place.
const SMALL_HEAP: u64 = gc_runtime::MIN_COLLECTED_HEAP;
/// Raw bytes of the tour's objects and of the garbage between them.
const OBJ_BYTES: usize = 8;
const GARBAGE_BYTES: usize = 48;
/// Raw bytes of the live filler objects of the second run.
const FILLER_BYTES: usize = 64 << 10;

fn main() {
    match transcript() {
        Ok(t) => print!("{t}"),
        Err(e) => {
            eprintln!("tour: {e}");
            std::process::exit(1);
        }
    }
}

/// Both runs' narration.
pub fn transcript() -> Result<String, String> {
    let mut out = String::new();
    evacuation(&mut out)?;
    out.push('\n');
    in_place(&mut out)?;
    Ok(out)
}

/// The narration's view of one heap: its first offset and the names of the tour's objects.
struct Narrator<'h> {
    heap: &'h Heap,
    start: u64,
    names: BTreeMap<u64, String>,
}

impl<'h> Narrator<'h> {
    fn new(heap: &'h Heap) -> Self {
        Narrator {
            heap,
            start: heap.offset_range().0.raw(),
            names: BTreeMap::new(),
        }
    }

    /// An offset relative to the heap, with the name of the object there, if named.
    fn off(&self, o: Offset) -> String {
        let rel = o.raw() - self.start;
        match self.names.get(&rel) {
            Some(n) => format!("{rel:#x} ({n})"),
            None => format!("{rel:#x}"),
        }
    }

    fn name(&mut self, o: Offset, name: &str) {
        self.names.insert(o.raw() - self.start, name.to_string());
    }

    /// A word: its raw bits (relative to the heap), its color, its offset, good or bad now.
    fn word(&self, p: ColoredPtr) -> String {
        if p.is_null() {
            return format!("{:#018x} null", 0);
        }
        let st = self.heap.gc_state();
        let color = color_name(st.layout.color(p));
        let good = if st.is_good(p) { "good" } else { "bad" };
        format!(
            "{:#018x} = {color:<8} | offset {}  {good}",
            p.raw() - self.start,
            self.off(st.layout.offset(p))
        )
    }

    fn state(&self, out: &mut String) {
        let st = self.heap.gc_state();
        let _ = writeln!(out, "  state: {}", state_line(&st));
    }

    /// The relocation set, naming each forwarded copy after its original (A -> A').
    fn relocation_set(&mut self, out: &mut String) {
        let set = self.heap.relocation_set();
        for p in &set {
            for e in &p.entries {
                let from = e.from.raw() - self.start;
                if let Some(name) = self.names.get(&from).cloned() {
                    if e.to != e.from {
                        self.names
                            .insert(e.to.raw() - self.start, format!("{name}'"));
                    }
                }
            }
        }
        if set.is_empty() {
            let _ = writeln!(out, "  relocation set: empty");
        }
        for p in set {
            self.page(out, &p);
        }
    }

    fn page(&self, out: &mut String, p: &PageForwarding) {
        let _ = writeln!(
            out,
            "  relocation set: page {}..{:#x}{}, {} forwarding entr{}",
            self.off(p.page),
            p.page.raw() - self.start + p.size,
            if p.compacted_in_place {
                " (compacted in place)"
            } else {
                ""
            },
            p.entries.len(),
            if p.entries.len() == 1 { "y" } else { "ies" }
        );
        for e in &p.entries {
            let _ = writeln!(out, "    {} -> {}", self.off(e.from), self.off(e.to));
        }
    }
}

fn color_name(c: Color) -> &'static str {
    if c == Color::MARKED0 {
        "Marked0"
    } else if c == Color::MARKED1 {
        "Marked1"
    } else if c == Color::REMAPPED {
        "Remapped"
    } else if c == Color::MARKED2 {
        "Marked2"
    } else {
        "mixed"
    }
}

fn state_line(st: &GcStateView) -> String {
    let phase = match st.phase {
        BarrierPhase::Mark => "Mark",
        BarrierPhase::MarkComplete => "MarkComplete",
        BarrierPhase::Relocate => "Relocate",
    };
    format!(
        "good color {:?}, bad mask {:#018x}, barrier phase {phase}, sequence number {}",
        st.good, st.bad_mask, st.seqnum
    )
}

/// What ran since the previous stop, for a stop of run 1's first cycle.
fn what_ran(s: Step) -> &'static str {
    match s {
        Step::Before(GcPhase::ConcurrentMark) => {
            "Concurrent Mark Roots: the GC thread marked the roots (R's handle was good already)."
        }
        Step::Before(GcPhase::ConcurrentMarkContinue) => {
            "Pause Mark End found marking work left in a mutator's buffer: marking goes on."
        }
        Step::Before(GcPhase::ConcurrentProcessNonStrongReferences) => {
            "Concurrent Mark: the GC thread traced R, healing R.1 and R.2; Pause Mark End ended \
             marking."
        }
        Step::Before(GcPhase::ConcurrentResetRelocationSet) => {
            "Concurrent Process Non-Strong References: no weak handle to clear."
        }
        Step::Before(GcPhase::ConcurrentSelectRelocationSet) => {
            "Concurrent Reset Relocation Set: no earlier relocation set to forget."
        }
        Step::Before(GcPhase::ConcurrentRelocate) => {
            "Concurrent Select Relocation Set chose the tour's page (mostly garbage, so sparse); \
             Pause Relocate Start flipped the good color to Remapped: the Marked1 words are bad."
        }
        _ => "",
    }
}

fn step_line(out: &mut String, what: &str, s: Step) {
    let _ = match s {
        Step::Before(p) => writeln!(out, "\n[{what}] held before {}", p.name()),
        Step::CycleEnded => writeln!(out, "\n[{what}] the cycle is complete"),
    };
}

/// Show a load of `obj.i` through the barrier: the word before, the word after.
fn load(n: &Narrator<'_>, out: &mut String, s: &Scope<'_>, obj: Local<'_>, name: &str, i: usize) {
    let before = s.raw_slot(obj, i);
    let loaded = s.load(obj, i);
    let after = s.raw_slot(obj, i);
    let _ = writeln!(out, "  load {name}.{i} through the barrier:");
    let _ = writeln!(out, "    before {}", n.word(before));
    let _ = writeln!(out, "    after  {}", n.word(after));
    let _ = writeln!(
        out,
        "    {}",
        match (before == after, loaded) {
            (true, _) => "fast path: the word was good, nothing written",
            (false, Some(_)) => "slow path: the barrier made the pointer good and healed the slot",
            (false, None) => "slow path on a null slot (cannot happen)",
        }
    );
}

/// The raw words of `obj`'s first `n_refs` slots.
fn slots(n: &Narrator<'_>, out: &mut String, s: &Scope<'_>, obj: Local<'_>, name: &str, k: usize) {
    for i in 0..k {
        let _ = writeln!(out, "  {name}.{i} = {}", n.word(s.raw_slot(obj, i)));
    }
}

/// The root's handle word, then its heal by the barrier, as the tour opens a scope.
fn root<'s>(n: &Narrator<'_>, out: &mut String, s: &Scope<'s>, g: &Global) -> Local<'s> {
    let before = g.raw_word();
    let l = s.from_global(g);
    let after = g.raw_word();
    if before == after {
        let _ = writeln!(out, "  root R (global handle) = {}", n.word(after));
    } else {
        let _ = writeln!(out, "  root R (global handle), read through the barrier:");
        let _ = writeln!(out, "    before {}", n.word(before));
        let _ = writeln!(out, "    after  {}", n.word(after));
    }
    l
}

fn oom(e: gc_runtime::OutOfMemory) -> String {
    e.to_string()
}

/// Run 1: a cycle that evacuates the tour's page, then the start of the next one.
fn evacuation(out: &mut String) -> Result<(), String> {
    let cfg = HeapConfig::new(HEAP)
        .mode(Mode::Concurrent)
        .gc_threads(1)
        .verify(true)
        .uncommit_delay(None);
    let heap = Heap::new(cfg).map_err(|e| e.to_string())?;
    let stepper = heap.stepper()?;
    let mut n = Narrator::new(&heap);
    let mut m = heap.attach("tour").map_err(|e| e.to_string())?;
    let st = heap.gc_state();
    let _ = writeln!(
        out,
        "Run 1: evacuation. A {} MiB heap, one mutator, one GC thread, the verifier on.",
        HEAP >> 20
    );
    let _ = writeln!(
        out,
        "Offsets have {} bits; a color bit is bit {} (Marked0), {} (Marked1) or {} (Remapped).",
        st.layout.offset_bits(),
        st.layout.offset_bits(),
        st.layout.offset_bits() + 1,
        st.layout.offset_bits() + 2
    );
    // R -> A, B, C, with garbage between them (unreachable once the scope ends).
    let (g, offs) = m.scope(|s| -> Result<_, String> {
        let r = s.alloc(1, 3, OBJ_BYTES).map_err(oom)?;
        let mut offs = vec![("R", s.address_of(r))];
        for (i, name) in ["A", "B", "C"].into_iter().enumerate() {
            s.alloc(9, 0, GARBAGE_BYTES).map_err(oom)?;
            let o = s.alloc(2, 0, OBJ_BYTES).map_err(oom)?;
            s.get(o).write_u64(0, i as u64 + 1);
            s.store(r, i, Some(o));
            offs.push((name, s.address_of(o)));
        }
        Ok((s.global(r), offs))
    })?;
    for (name, o) in &offs {
        n.name(*o, name);
    }
    let _ = writeln!(
        out,
        "The graph: root R (a global handle) -> A, B, C; a garbage object before each of A, B, C."
    );
    for (name, o) in &offs {
        let _ = writeln!(out, "  {name} at offset {}", n.off(*o));
    }
    let _ = writeln!(out, "\n[before any cycle]");
    n.state(out);
    m.scope(|s| {
        let r = root(&n, out, s, &g);
        slots(&n, out, s, r, "R", 3);
    });

    step_line(out, "GC(0)", stepper.start_cycle("tour")?);
    let _ = writeln!(
        out,
        "  Pause Mark Start flipped the good color: every Remapped word is bad now."
    );
    n.state(out);
    m.scope(|s| {
        let r = root(&n, out, s, &g);
        load(&n, out, s, r, "R", 0);
        slots(&n, out, s, r, "R", 3);
    });
    let _ = writeln!(
        out,
        "  The mutator marked R and A itself; B and C wait for the GC thread."
    );

    let mut step = stepper.step()?;
    while step != Step::Before(GcPhase::ConcurrentRelocate) {
        step_line(out, "GC(0)", step);
        let _ = writeln!(out, "  {}", what_ran(step));
        if step == Step::Before(GcPhase::ConcurrentProcessNonStrongReferences) {
            n.state(out);
            m.scope(|s| {
                let r = root(&n, out, s, &g);
                slots(&n, out, s, r, "R", 3);
            });
        }
        if step == Step::CycleEnded {
            return Err("GC(0) ended before Concurrent Relocate".into());
        }
        step = stepper.step()?;
    }
    step_line(out, "GC(0)", step);
    let _ = writeln!(out, "  {}", what_ran(step));
    n.state(out);
    n.relocation_set(out);
    m.scope(|s| {
        let r = root(&n, out, s, &g);
        load(&n, out, s, r, "R", 0);
    });
    let _ = writeln!(
        out,
        "  The mutator's barriers copied R and A themselves (the first to touch an object moves it):"
    );
    n.relocation_set(out);

    let step = stepper.step()?;
    step_line(out, "GC(0)", step);
    let _ = writeln!(
        out,
        "  Concurrent Relocate: the GC thread copied B and C and freed the page; its forwarding \
         table stays until\n  the next cycle's Concurrent Reset Relocation Set."
    );
    n.relocation_set(out);
    m.scope(|s| {
        let r = root(&n, out, s, &g);
        slots(&n, out, s, r, "R", 3);
        let _ = writeln!(
            out,
            "  R.1 and R.2 still point into the freed page; a load remaps through the table:"
        );
        load(&n, out, s, r, "R", 1);
    });

    step_line(out, "GC(1)", stepper.start_cycle("tour")?);
    let _ = writeln!(
        out,
        "  GC(1) marks with Marked0: R.2 still holds GC(0)'s Marked1, a stale pointer."
    );
    n.state(out);
    m.scope(|s| {
        let r = root(&n, out, s, &g);
        load(&n, out, s, r, "R", 2);
    });
    let _ = writeln!(
        out,
        "  The mark barrier remapped it through GC(0)'s forwarding table before marking C."
    );
    stepper.finish_cycle()?;
    drop(g);
    Ok(())
}

/// Run 2: a full heap, so relocation compacts the tour's page in place.
fn in_place(out: &mut String) -> Result<(), String> {
    let cfg = HeapConfig::new(SMALL_HEAP)
        .mode(Mode::Concurrent)
        .gc_threads(1)
        .verify(true)
        .relocation_reserve(0)
        .uncommit_delay(None);
    let heap = Heap::new(cfg).map_err(|e| e.to_string())?;
    let stepper: Stepper<'_> = heap.stepper()?;
    let mut n = Narrator::new(&heap);
    let mut m = heap.attach("tour").map_err(|e| e.to_string())?;
    let _ = writeln!(
        out,
        "Run 2: in-place compaction. A {} MiB heap (three 2 MiB pages), no relocation reserve.",
        SMALL_HEAP >> 20
    );
    let page_size = 2u64 << 20;
    let filler_size = gc_core::object_size(0, FILLER_BYTES as u64).map_err(|e| e.to_string())?;
    let (g, fill, offs, fillers_at) = m.scope(|s| -> Result<_, String> {
        let r = s.alloc(1, 3, OBJ_BYTES).map_err(oom)?;
        let mut offs = vec![("R", s.address_of(r))];
        for (i, name) in ["A", "B", "C"].into_iter().enumerate() {
            s.alloc(9, 0, GARBAGE_BYTES).map_err(oom)?;
            let o = s.alloc(2, 0, OBJ_BYTES).map_err(oom)?;
            s.get(o).write_u64(0, i as u64 + 1);
            s.store(r, i, Some(o));
            offs.push((name, s.address_of(o)));
        }
        let first_page = offs[0].1.raw() / page_size;
        // Garbage up to the end of the first page, then live fillers over the other two.
        let fillers = s.alloc(3, 64, 0).map_err(oom)?;
        loop {
            let g = s.scope(|s| s.alloc(9, 0, GARBAGE_BYTES).map(|l| s.address_of(l)));
            let g = g.map_err(oom)?;
            if g.raw() / page_size != first_page {
                break;
            }
        }
        let mut i = 0;
        loop {
            let o = s.alloc(4, 0, FILLER_BYTES).map_err(oom)?;
            let at = s.address_of(o).raw();
            s.store(fillers, i, Some(o));
            i += 1;
            // Stop when the next filler would not fit on the last page: the heap is full.
            let last = at / page_size == first_page + 2;
            if last && at + 2 * filler_size > (first_page + 3) * page_size {
                break;
            }
            if i == 64 {
                return Err("the fillers did not fill the heap".into());
            }
        }
        let fillers_at = s.address_of(fillers);
        Ok((s.global(r), s.global(fillers), offs, fillers_at))
    })?;
    for (name, o) in &offs {
        n.name(*o, name);
    }
    n.name(fillers_at, "F");
    let _ = writeln!(
        out,
        "The first page: R -> A, B, C with garbage between, F (a table of the fillers), then \
         garbage to its end; the other two pages full of live fillers."
    );
    for (name, o) in &offs {
        let _ = writeln!(out, "  {name} at offset {}", n.off(*o));
    }
    let _ = writeln!(out, "  F at offset {}", n.off(fillers_at));
    let usage = heap.usage();
    let _ = writeln!(
        out,
        "  pages in use: {} of {} MiB",
        usage.used >> 20,
        usage.capacity >> 20
    );
    let mut step = stepper.start_cycle("tour")?;
    while step != Step::Before(GcPhase::ConcurrentRelocate) {
        if step == Step::CycleEnded {
            return Err("GC(0) ended before Concurrent Relocate".into());
        }
        step = stepper.step()?;
    }
    step_line(out, "GC(0)", step);
    n.state(out);
    n.relocation_set(out);
    let _ = writeln!(
        out,
        "  No page is free for the copies: the GC thread will slide the live objects down on \
         the page itself."
    );
    let step = stepper.step()?;
    step_line(out, "GC(0)", step);
    let _ = writeln!(
        out,
        "  Concurrent Relocate compacted the page in place: each live object slid down over the \
         garbage below it,\n  in address order; R was already at the bottom (an entry to itself)."
    );
    n.relocation_set(out);
    m.scope(|s| {
        let r = root(&n, out, s, &g);
        for i in 0..3 {
            load(&n, out, s, r, "R", i);
        }
        let ok = (0..3).all(|i| {
            s.load(r, i)
                .is_some_and(|o| s.get(o).read_u64(0) == i as u64 + 1)
        });
        let _ = writeln!(
            out,
            "  A, B and C hold their values after the move: {}",
            if ok { "yes" } else { "NO" }
        );
    });
    drop((g, fill));
    Ok(())
}
