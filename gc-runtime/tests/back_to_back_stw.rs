//! Back-to-back stop-the-world cycles (`DirectorConfig::continuous` in the `stw` mode) leave
//! the mutators time to run. A `stw` cycle is one pause; started the moment the last one let
//! the mutators go, the next pause would leave a mutator the machine was slow to reschedule
//! no time at all, and a test program advanced only by scheduling luck (on a loaded machine,
//! a Lox script ran a thousand verified pauses for minutes). The continuous rule therefore
//! waits, after each `stw` cycle, as long as that cycle took: the gap between two continuous
//! cycles is at least the earlier one's duration. The property is the driver's own clock,
//! not the machine's speed, so it holds on a loaded machine too.

use gc_runtime::{GcCause, Heap, HeapConfig, Mode};

/// Continuous cycles the test needs to see back to back.
const PAIRS: usize = 8;
/// Cycles after which the test stops waiting for them.
const MAX_CYCLES: usize = 200;

#[test]
fn continuous_stw_cycles_leave_the_mutators_as_long_as_each_cycle_took() {
    // The verifier makes each pause long (milliseconds), so a gap of zero would show.
    let heap = Heap::new(
        HeapConfig::new(32 << 20)
            .mode(Mode::Stw)
            .verify(true)
            .continuous(true),
    )
    .unwrap();
    let mut m = heap.attach("main").unwrap();
    m.scope(|s| {
        // Something for each pause to verify: a list of 20,000 objects.
        let head = s.alloc(1, 1, 8).unwrap();
        let mut tail = head;
        for _ in 0..20_000 {
            let n = s.alloc(1, 1, 8).unwrap();
            s.store(tail, 0, Some(n));
            tail = n;
        }
        // Keep allocating (short-lived objects) until enough continuous cycles followed
        // another (on a loaded machine an allocation may start a cycle for another cause
        // first; those pairs are not counted), or a bound the property does not need.
        let continuous = |cycles: &[gc_runtime::CycleRecord]| {
            cycles
                .iter()
                .skip(1)
                .filter(|c| c.cause == GcCause::Continuous)
                .count()
        };
        loop {
            let cycles = heap.stats().cycles;
            if continuous(&cycles) >= PAIRS || cycles.len() >= MAX_CYCLES {
                break;
            }
            s.scope(|t| {
                for _ in 0..100 {
                    t.alloc(9, 0, 64).unwrap();
                }
            });
        }
        // Still reachable: the list's head is a root of this scope.
        assert!(s.load(head, 0).is_some());
    });
    let cycles = heap.stats().cycles;
    let mut checked = 0;
    for w in cycles.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        if b.cause != GcCause::Continuous {
            continue;
        }
        let gap = b.start_at_ns.saturating_sub(a.start_at_ns + a.duration_ns);
        assert!(
            gap >= a.duration_ns,
            "cycle {} started {gap} ns after cycle {} ended, which took {} ns: back-to-back \
             stw cycles must leave the mutators at least as long as the last cycle took",
            b.cycle,
            a.cycle,
            a.duration_ns
        );
        checked += 1;
    }
    assert!(
        checked >= PAIRS,
        "only {checked} pairs of continuous cycles were checked"
    );
}
