//! The load-barrier figure: one real slot of a real heap (`R.0`, the root's first reference)
//! loaded through the barrier at four moments of a stepped cycle — the fast path before any
//! cycle, the mark slow path after Pause Mark Start, the relocate slow path after Pause
//! Relocate Start (the barrier copies the object), and a remap through the forwarding table
//! after the cycle (`R.1`, which nobody loaded while it relocated) — each with the slot's word
//! before and after, the good color and the bad mask of the moment (ZGC's `ZBarrier` fast
//! and slow paths and its self-healing).

use super::tiny_graph::{self, Tiny};
use gc_runtime::inspect::{Color as PtrColor, ColoredPtr, GcStateView};
use gc_runtime::{GcPhase, Step};
use plotters::prelude::*;

const HEAP: u64 = 64 << 20;
const WIDTH: u32 = 1100;
const HEIGHT: u32 = 640;

/// One load: when, the state then, the word before and after (relative to the heap).
#[derive(Clone, Debug, PartialEq)]
struct Row {
    when: &'static str,
    slot: &'static str,
    state: GcStateView,
    before: u64,
    after: u64,
    /// What the slow path did (empty for the fast path).
    action: &'static str,
}

/// The rows, and the forwarding entries (relative from → to) of the relocated page.
struct Facts {
    rows: Vec<Row>,
    entries: Vec<(u64, u64)>,
}

/// Load slot `i` of the root through the barrier; the word before and after.
fn load(t: &mut Tiny<'_>, i: usize) -> (u64, u64) {
    let root = &t.root;
    let start = t.start;
    let (b, a) = t.m.scope(|s| {
        let r = s.from_global(root);
        let before = s.raw_slot(r, i);
        let _ = s.load(r, i);
        (before, s.raw_slot(r, i))
    });
    (rel(b, start), rel(a, start))
}

fn rel(p: ColoredPtr, start: u64) -> u64 {
    if p.is_null() {
        0
    } else {
        p.raw() - start
    }
}

fn measure() -> Result<Facts, String> {
    let heap = tiny_graph::heap(HEAP, false)?;
    let stepper = heap.stepper()?;
    let mut t = Tiny::new(&heap)?;
    let mut rows = Vec::new();
    let mut row = |t: &mut Tiny<'_>, when, slot, i, action| {
        let state = t.heap.gc_state();
        let (before, after) = load(t, i);
        rows.push(Row {
            when,
            slot,
            state,
            before,
            after,
            action,
        });
    };
    row(&mut t, "before any cycle", "R.0", 0, "");
    tiny_graph::run_to(&stepper, GcPhase::ConcurrentMarkRoots)?;
    row(
        &mut t,
        "GC(0), after Pause Mark Start",
        "R.0",
        0,
        "mark: set A's bit in the live map, push A into the mutator's mark buffer, recolor",
    );
    let mut step = stepper.step()?;
    while step != Step::Before(GcPhase::ConcurrentRelocate) {
        step = stepper.step()?;
    }
    row(
        &mut t,
        "GC(0), after Pause Relocate Start",
        "R.0",
        0,
        "relocate: A's page is in the relocation set: copy A, CAS its forwarding entry",
    );
    stepper.finish_cycle()?;
    row(
        &mut t,
        "after GC(0)",
        "R.1",
        1,
        "remap: B was copied by the GC thread: take the forwarding entry, copy nothing",
    );
    let start = t.start;
    let entries = heap
        .relocation_set()
        .iter()
        .flat_map(|p| p.entries.clone())
        .map(|e| (e.from.raw() - start, e.to.raw() - start))
        .collect();
    Ok(Facts { rows, entries })
}

fn color_of(state: &GcStateView, w: u64) -> (&'static str, RGBColor) {
    let c = state.layout.color(ColoredPtr::from_raw(w));
    if c == PtrColor::MARKED0 {
        ("Marked0", RGBColor(31, 119, 180))
    } else if c == PtrColor::MARKED1 {
        ("Marked1", RGBColor(255, 127, 14))
    } else if c == PtrColor::REMAPPED {
        ("Remapped", RGBColor(44, 160, 44))
    } else if c == PtrColor::MARKED2 {
        ("Marked2", RGBColor(148, 103, 189))
    } else {
        ("?", BLACK)
    }
}

fn err(e: impl std::fmt::Debug) -> String {
    format!("drawing the barrier figure: {e:?}")
}

/// The figure as SVG text.
pub fn svg() -> Result<String, String> {
    let f = measure()?;
    let mut out = String::new();
    {
        let root = super::canvas(&mut out, (WIDTH, HEIGHT))?;
        let text = |t: &str, x: i32, y: i32, size: u32, c: &RGBColor| {
            super::text(&root, t, (x, y), size, c)
        };
        text(
            "The load barrier on a real slot: fast path, then the slow path of each phase",
            20,
            14,
            22,
            &BLACK,
        )?;
        text(
            "if (word & bad_mask) == 0 → fast path: use the word. Else slow path: make it good, heal the slot (CAS), use it.",
            20,
            46,
            15,
            &BLACK,
        )?;
        let grey = RGBColor(90, 90, 90);
        for (k, r) in f.rows.iter().enumerate() {
            let y = 90 + 130 * k as i32;
            let good = format!("{:?}", r.state.good);
            text(
                &format!(
                    "{}: load {} (good color {good}, bad mask {:#018x})",
                    r.when, r.slot, r.state.bad_mask
                ),
                20,
                y,
                16,
                &BLACK,
            )?;
            let word_box = |w: u64, x: i32, label: &str| -> Result<(), String> {
                let (name, c) = color_of(&r.state, w);
                let verdict = if r.state.is_good(ColoredPtr::from_raw(w)) {
                    "good"
                } else {
                    "bad"
                };
                root.draw(&Rectangle::new(
                    [(x, y + 24), (x + 330, y + 84)],
                    c.mix(0.15).filled(),
                ))
                .map_err(err)?;
                root.draw(&Rectangle::new(
                    [(x, y + 24), (x + 330, y + 84)],
                    c.stroke_width(2),
                ))
                .map_err(err)?;
                text(label, x + 6, y + 28, 12, &grey)?;
                text(&format!("{w:#018x}"), x + 6, y + 44, 17, &BLACK)?;
                text(
                    &format!(
                        "{name}, offset {:#x}: {verdict}",
                        w & r.state.layout.offset_mask()
                    ),
                    x + 6,
                    y + 64,
                    13,
                    &BLACK,
                )
            };
            word_box(r.before, 20, "the slot's word")?;
            if r.action.is_empty() {
                text(
                    "fast path: one load, one test; nothing written",
                    370,
                    y + 46,
                    14,
                    &BLACK,
                )?;
            } else {
                word_box(r.after, 740, "healed to")?;
                root.draw(&PathElement::new(
                    vec![(355, y + 54), (730, y + 54)],
                    BLACK.stroke_width(2),
                ))
                .map_err(err)?;
                root.draw(&Polygon::new(
                    vec![(730, y + 49), (738, y + 54), (730, y + 59)],
                    BLACK.filled(),
                ))
                .map_err(err)?;
                let (a, b) = r.action.split_once(": ").unwrap_or((r.action, ""));
                text(&format!("slow path: {a}"), 362, y + 30, 13, &BLACK)?;
                text(b, 362, y + 62, 11, &BLACK)?;
                let mask = r.state.layout.offset_mask();
                let from = r.before & mask;
                let moved = r.action.starts_with("relocate") || r.action.starts_with("remap");
                if let Some((_, to)) = f.entries.iter().find(|e| moved && e.0 == from) {
                    text(
                        &format!("forwarding entry {from:#x} → {to:#x}"),
                        362,
                        y + 78,
                        11,
                        &grey,
                    )?;
                }
            }
        }
        text(
            "Words and offsets relative to the heap's first offset. Redrawn from a stepped cycle by \
             `cargo run --release -p workloads --bin book-figures`.",
            20,
            HEIGHT as i32 - 26,
            13,
            &grey,
        )?;
        root.present().map_err(err)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gc_runtime::inspect::GoodColor;

    #[test]
    fn each_load_takes_the_path_the_figure_draws() {
        let f = measure().unwrap();
        let [fast, mark, reloc, remap] = &f.rows[..] else {
            panic!("four rows: {:?}", f.rows)
        };
        let l = fast.state.layout;
        let off = |w: u64| w & l.offset_mask();
        let color = |w: u64| l.color(ColoredPtr::from_raw(w));
        let good = |r: &Row, w: u64| r.state.is_good(ColoredPtr::from_raw(w));
        // Fast path: good, nothing written.
        assert_eq!(fast.state.good, GoodColor::Remapped);
        assert!(good(fast, fast.before) && fast.before == fast.after);
        // Mark: the same offset, recolored from Remapped to the cycle's mark color.
        assert_eq!(mark.state.good, GoodColor::Marked1);
        assert!(!good(mark, mark.before) && good(mark, mark.after));
        assert_eq!(color(mark.before), PtrColor::REMAPPED);
        assert_eq!(color(mark.after), PtrColor::MARKED1);
        assert_eq!(off(mark.before), off(mark.after));
        // Relocate: moved, to where the forwarding entry says.
        assert_eq!(reloc.state.good, GoodColor::Remapped);
        assert_eq!(reloc.before, mark.after, "the slot kept its marked word");
        assert!(!good(reloc, reloc.before) && good(reloc, reloc.after));
        assert!(f.entries.contains(&(off(reloc.before), off(reloc.after))));
        assert_ne!(off(reloc.before), off(reloc.after));
        // Remap after the cycle: a stale Marked1 word, healed through the table.
        assert_eq!(color(remap.before), PtrColor::MARKED1);
        assert!(!good(remap, remap.before) && good(remap, remap.after));
        assert!(f.entries.contains(&(off(remap.before), off(remap.after))));
    }
}
