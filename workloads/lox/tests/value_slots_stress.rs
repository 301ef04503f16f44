//! Lox values in the collector's value slots under many cycles on a small heap: objects held
//! only through instance fields (table value slots), closed upvalues (an upvalue's value
//! slot, overwritten with new objects by `SET_UPVALUE`), class method tables and globals, while
//! garbage keeps the collector cycling and moving objects. The program checks every value it
//! reads back (a lost or corrupted object changes the printed sums or fails with a runtime
//! error), and the test fails unless the cycles happened and the collector's value-slot paths
//! ran: slots healed by marking and by the mutator's barrier, and objects held in value slots
//! moved. The concurrent run is repeated with the mark colors rotating, and must mark with
//! Marked2.

use gc_runtime::inspect::GoodColor;
use gc_runtime::{ColorChoice, HeapConfig, Mode, ValueSlotStats};
use lox::Lox;
mod support;

use support::Buffer;

/// Counters made by `makeCounter`, each a closure over a closed upvalue holding a `Cell`.
const COUNTERS: u64 = 50;
/// Rounds per program run.
const ROUNDS: u64 = 50;
/// Cycles the test waits for (running more rounds until they happened).
const MIN_CYCLES: u64 = 30;
/// Program runs after which the test gives up waiting for cycles.
const MAX_RUNS: u64 = 400;

/// The setup: the counters (each a closure whose closed upvalue holds a `Cell`), listed
/// through fields, a global and a field holding `Cell`s, and the round count.
fn setup() -> String {
    format!(
        "class Cell {{ init(v) {{ this.v = v; }} get() {{ return this.v; }} }}
class Link {{ init(f, rest) {{ this.f = f; this.rest = rest; this.tag = \"link\"; }} }}
fun makeCounter(start) {{
  var box = Cell(start);
  fun next() {{ box = Cell(box.get() + 1); return box.get(); }}
  return next;
}}
var counters = nil;
for (var i = 0; i < {COUNTERS}; i = i + 1) counters = Link(makeCounter(i * 1000), counters);
var base = 0;
for (var i = 0; i < {COUNTERS}; i = i + 1) base = base + i * 1000;
var g = Cell(0);
var holder = Cell(Cell(0));
var wrong = 0;
var round = 0;
"
    )
}

/// [`ROUNDS`] rounds, each making garbage, calling every counter (each call replaces the
/// object in its upvalue) and checking their sum (counter `i` returns `1000 i + r` in round
/// `r`, from 1), and replacing the objects in the global and in the field.
fn rounds() -> String {
    format!(
        "for (var k = 0; k < {ROUNDS}; k = k + 1) {{
  round = round + 1;
  var junk = nil;
  for (var j = 0; j < 300; j = j + 1) junk = Link(nil, junk);
  var l = counters;
  var sum = 0;
  while (l != nil) {{
    if (l.tag != \"link\") wrong = wrong + 1;
    sum = sum + l.f();
    l = l.rest;
  }}
  if (sum != base + {COUNTERS} * round) wrong = wrong + 1;
  g = Cell(g.get() + 1);
  holder.v = Cell(holder.get().get() + 2);
}}
"
    )
}

#[test]
fn values_in_value_slots_survive_many_cycles() {
    // The concurrent run again with the mark colors rotating (`HeapConfig::mark_colors`):
    // every third cycle marks with Marked2.
    for (mode, colors) in [
        (Mode::Concurrent, ColorChoice::Alternate),
        (Mode::Stw, ColorChoice::Alternate),
        (Mode::Concurrent, ColorChoice::Rotate),
    ] {
        let (out, err) = (Buffer::default(), Buffer::default());
        // A small heap, cycles back to back (the program is collected all along), the heap
        // verifier in every pause.
        let config = HeapConfig::new(8 << 20)
            .mode(mode)
            .continuous(true)
            .verify(true)
            .mark_colors(colors);
        let mut lox =
            Lox::with_output(config, Box::new(out.clone()), Box::new(err.clone())).unwrap();
        let text = |b: &Buffer| b.take();
        assert!(lox.interpret(&setup()).is_ok(), "{mode:?}: {}", text(&err));
        // Cycles and value-slot work counted from here: while the rounds run (cycles run
        // back to back from the heap's start, so the setup alone may see many).
        let cycles_at = |lox: &Lox| lox.heap().stats().totals.cycles;
        let start = cycles_at(&lox);
        let before = lox.heap().value_slot_stats();
        let mut runs = 0;
        while runs == 0 || cycles_at(&lox) - start < MIN_CYCLES {
            assert!(
                runs < MAX_RUNS,
                "{mode:?}: only {} cycles in {runs} runs",
                cycles_at(&lox) - start
            );
            assert!(lox.interpret(&rounds()).is_ok(), "{mode:?}: {}", text(&err));
            runs += 1;
        }
        assert!(
            lox.interpret("print wrong; print g.get(); print holder.v.v; print round;")
                .is_ok(),
            "{mode:?}: {}",
            text(&err)
        );
        lox.flush();
        let r = runs * ROUNDS;
        assert_eq!(
            text(&out),
            format!("0\n{r}\n{}\n{r}\n", 2 * r),
            "{mode:?}: {}",
            text(&err)
        );
        let cycles = cycles_at(&lox) - start;
        let after = lox.heap().value_slot_stats();
        let values = ValueSlotStats {
            barrier_heals: after.barrier_heals - before.barrier_heals,
            barrier_moves: after.barrier_moves - before.barrier_moves,
            mark_heals: after.mark_heals - before.mark_heals,
            mark_moves: after.mark_moves - before.mark_moves,
            full_remap_moves: after.full_remap_moves - before.full_remap_moves,
        };
        eprintln!("{mode:?} {colors:?}: {runs} runs, {cycles} cycles, {values:?}");
        let m2 = Some(GoodColor::Marked2);
        let marked2 = lox
            .heap()
            .stats()
            .cycles
            .iter()
            .filter(|c| c.mark_color == m2)
            .count();
        match colors {
            ColorChoice::Rotate => assert!(marked2 > 0, "{mode:?}: no cycle marked with Marked2"),
            ColorChoice::Alternate => assert_eq!(marked2, 0, "{mode:?}: Marked2 used"),
        }
        match mode {
            Mode::Concurrent => {
                assert!(values.mark_heals > 0, "{mode:?}: {values:?}");
                assert!(values.barrier_heals > 0, "{mode:?}: {values:?}");
                assert!(
                    values.barrier_moves + values.mark_moves > 0,
                    "{mode:?}: no object held in a value slot moved: {values:?}"
                );
            }
            _ => assert!(
                values.full_remap_moves > 0,
                "{mode:?}: no object held in a value slot moved: {values:?}"
            ),
        }
    }
}
