//! The cost of relocation per object (criterion): a GC worker evacuating pages of small
//! objects, as in Concurrent Relocate, measured through the public API with a `Stepper`.
//!
//! Each iteration fills pages with 48-byte objects (a heap-churn tree node: three reference
//! slots and 8 raw bytes), half of them live and chained from one global handle, the other
//! half garbage, so every page is selected for relocation; it then steps a cycle to just
//! before Concurrent Relocate, lets that phase run with one GC worker and no mutator (no
//! barrier competes) and takes the phase's duration from the cycle record. Throughput is the
//! live bytes relocated per second of the phase: 48 bytes per object, so ns/object is
//! 48 ÷ (GB/s). Two patterns of live objects:
//!
//! - `alternate`: live, dead, live, dead… — no two live objects are neighbours;
//! - `runs16`: 16 live objects, then 16 dead ones — runs of neighbours, as a tree's nodes
//!   allocated together.
//!
//! Each sample reports the fastest phase of its iterations (see `relocate`), so a phase that
//! another process preempted does not count. The measured time includes everything the
//! phase does per page (faulting in what is left
//! of the forwarding table, freeing the page), not only the per-object work.
//!
//! Run with `cargo bench -p gc-runtime --bench relocate`. Numbers are recorded in
//! docs/src/engineering-notes.md.
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use gc_runtime::{GcPhase, Global, Heap, HeapConfig, Mode, Step};
use std::time::Duration;

/// Objects allocated per iteration (half of them live).
const OBJECTS: usize = 240_000;
/// Bytes of one object: 16 of header, 3 slots, 8 raw bytes.
const OBJECT_BYTES: u64 = 48;

/// Fill pages with `OBJECTS` objects, `live` live ones then `dead` dead ones in turn; the live
/// ones are chained through slot 0 from the returned global handle.
fn fill(heap: &Heap, live: usize, dead: usize) -> Global {
    let mut m = heap.attach("fill").unwrap();
    m.scope(|s| {
        let mut head = s.alloc(1, 3, 8).unwrap();
        let mut made = 1;
        let mut dead_left = dead;
        while made < OBJECTS {
            for _ in 0..dead_left {
                s.scope(|s| {
                    s.alloc(2, 3, 8).unwrap();
                });
                made += 1;
            }
            dead_left = dead;
            for _ in 0..live {
                let n = s.alloc(1, 3, 8).unwrap();
                s.store(n, 0, Some(head));
                head = n;
                made += 1;
            }
        }
        s.global(head)
    })
}

/// One cycle over a fresh fill: the duration of its Concurrent Relocate phase and the
/// bytes it relocated.
fn relocate_once(heap: &Heap, live: usize, dead: usize) -> (Duration, u64) {
    let head = fill(heap, live, dead);
    let stepper = heap.stepper().unwrap();
    let mut step = stepper.start_cycle("bench").unwrap();
    while step != Step::CycleEnded {
        step = stepper.step().unwrap();
    }
    drop(stepper);
    drop(head);
    let cycle = heap.stats().cycles.last().cloned().expect("a cycle record");
    let phase = cycle
        .phases
        .iter()
        .find(|p| p.name.name() == GcPhase::ConcurrentRelocate.name())
        .expect("a Concurrent Relocate phase");
    (
        Duration::from_nanos(phase.duration_ns),
        cycle.bytes_relocated,
    )
}

fn relocate(c: &mut Criterion) {
    let mut g = c.benchmark_group("relocate");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(2));
    g.warm_up_time(Duration::from_millis(500));
    for (name, live, dead) in [("alternate", 1, 1), ("runs16", 16, 16)] {
        let heap = Heap::new(
            HeapConfig::new(256 << 20)
                .mode(Mode::Concurrent)
                .gc_threads(1)
                .uncommit_delay(None)
                .timer(None),
        )
        .unwrap();
        // Warm-up: the heap's pages get committed and the first relocation's costs paid.
        let (_, bytes) = relocate_once(&heap, live, dead);
        let expect = (OBJECTS as u64 / 2) * OBJECT_BYTES;
        // Every page but the mutator's last, partly filled one is relocated.
        assert!(
            bytes * 10 >= expect * 9,
            "{name}: relocated {bytes} bytes, expected about {expect}: pages were not selected"
        );
        g.throughput(Throughput::Bytes(bytes));
        // The fastest of each sample's iterations, as if each had taken that long: on a
        // machine shared with other work, a phase of a few milliseconds is often preempted,
        // and the fastest one is the one that ran alone.
        g.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let fastest = (0..iters)
                    .map(|_| relocate_once(&heap, live, dead).0)
                    .min()
                    .unwrap_or_default();
                fastest * iters as u32
            })
        });
    }
    g.finish();
}

criterion_group!(benches, relocate);
criterion_main!(benches);
