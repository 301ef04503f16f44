//! The heap-target rule (`HeapConfig::heap_target`) never cycles an idle heap: whatever its
//! settings, a cycle at the target needs allocation since the last cycle ended. Before that
//! rule, a target at or below what the last cycle left — `growth_percent: 0`, `min_bytes: 0`
//! on an empty heap, or a `growth_percent` so large that `100 + growth_percent` wrapped to
//! less than 100 — started a cycle at every director check and back to back, 50 000 to
//! 190 000 cycles a second with nothing allocated.
//!
//! Each case builds its heap (empty, or with a live set held by a `Global`), lets one
//! explicit cycle settle it, then leaves it idle for `IDLE` and counts the cycles completed
//! meanwhile. The bound is generous (a loaded machine may run a cycle that was already
//! decided, or one the warmup rule asks for) and far below the thousands the spin ran.

use gc_runtime::{Global, Heap, HeapConfig, HeapTarget, Mode};
use std::time::Duration;

const MIB: u64 = 1 << 20;
/// How long each heap stays idle.
const IDLE: Duration = Duration::from_millis(300);
/// The most cycles an idle heap may complete in `IDLE`.
const MAX_IDLE_CYCLES: u64 = 5;

/// Cycles completed so far, from the statistics' totals (the records keep only the most
/// recent, so their length stops growing once a spin has run thousands).
fn completed(heap: &Heap) -> u64 {
    heap.stats().totals.cycles
}

/// A heap of `mode` with `target`, holding `live` objects of 64 KiB from a `Global` (none:
/// empty); returns the cycles it completed while idle.
fn idle_cycles(mode: Mode, target: HeapTarget, live: usize) -> u64 {
    let heap = Heap::new(
        HeapConfig::new(64 * MIB)
            .mode(mode)
            .heap_target(Some(target)),
    )
    .unwrap();
    let mut m = heap.attach("main").unwrap();
    let keep: Option<Global> = m.scope(|s| {
        (live > 0).then(|| {
            let list = s.alloc(1, live as u32, 0).unwrap();
            for i in 0..live {
                s.scope(|s| {
                    let o = s.alloc(2, 0, 64 << 10).unwrap();
                    s.store(list, i, Some(o));
                });
            }
            s.global(list)
        })
    });
    m.scope(|s| s.collect("settle"));
    let before = completed(&heap);
    std::thread::sleep(IDLE);
    let idle = completed(&heap) - before;
    if let Some(g) = &keep {
        m.scope(|s| {
            let list = s.from_global(g);
            assert_eq!(s.get(list).n_refs(), live);
        });
    }
    idle
}

fn check(target: HeapTarget, live: usize) {
    for mode in [Mode::Concurrent, Mode::Stw] {
        let n = idle_cycles(mode, target, live);
        eprintln!("{mode:?} {target:?}, {live} live objects: {n} cycles while idle");
        assert!(
            n <= MAX_IDLE_CYCLES,
            "{mode:?} with {target:?}: {n} cycles in {IDLE:?} with nothing allocated"
        );
    }
}

#[test]
fn no_growth_allowed_does_not_cycle_an_idle_heap() {
    check(
        HeapTarget {
            min_bytes: 0,
            growth_percent: 0,
        },
        16,
    );
}

#[test]
fn a_zero_target_does_not_cycle_an_empty_heap() {
    check(
        HeapTarget {
            min_bytes: 0,
            growth_percent: 100,
        },
        0,
    );
}

#[test]
fn the_largest_growth_does_not_wrap_to_a_target_below_the_heap() {
    check(
        HeapTarget {
            min_bytes: 0,
            growth_percent: u32::MAX,
        },
        16,
    );
}

/// The rule still fires once the program allocates: with no growth allowed, allocating a few
/// MiB of garbage starts cycles at the heap target.
#[test]
fn no_growth_allowed_cycles_once_the_program_allocates() {
    let heap = Heap::new(HeapConfig::new(64 * MIB).heap_target(Some(HeapTarget {
        min_bytes: 0,
        growth_percent: 0,
    })))
    .unwrap();
    let mut m = heap.attach("main").unwrap();
    m.scope(|s| s.collect("settle"));
    let at_target = |heap: &Heap| {
        heap.stats()
            .cycles
            .iter()
            .filter(|c| c.cause == gc_runtime::GcCause::HeapTarget)
            .count()
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while at_target(&heap) == 0 && std::time::Instant::now() < deadline {
        m.scope(|s| {
            for _ in 0..64 {
                s.scope(|s| {
                    s.alloc(3, 0, 64 << 10).unwrap();
                });
            }
        });
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(at_target(&heap) > 0, "no cycle at the heap target");
}
