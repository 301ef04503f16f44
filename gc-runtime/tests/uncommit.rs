//! Memory the heap no longer needs is given back after the uncommit delay: a program that
//! once filled most of its heap, then dropped everything, ends up with its committed memory
//! near what it still uses, and the statistics count what was uncommitted. With the delay
//! off, committed memory never shrinks.
//!
//! The waits are bounded (the test gives the driver up to 20 s of ticks) and assert the end
//! state, not how long it took.

use gc_runtime::{Heap, HeapConfig};
use std::time::{Duration, Instant};

const MIB: u64 = 1 << 20;

/// Fill most of a 256 MiB heap with objects kept alive together (80 of 1 MiB, each on a
/// 2 MiB large page: 160 MiB, so the memory must be
/// committed whenever the collector runs), drop them and collect them away, then wait up to
/// `wait` for committed memory to drop below `below`; returns (peak committed, committed at
/// the end, bytes the stats say were uncommitted).
fn churn_then_wait(delay: Option<Duration>, below: u64, wait: Duration) -> (u64, u64, u64) {
    let heap = Heap::new(
        HeapConfig::new(256 * MIB)
            .initial_heap(16 * MIB)
            .uncommit_delay(delay),
    )
    .unwrap();
    let mut m = heap.attach("main").unwrap();
    let peak = m.scope(|s| {
        let keep = s.alloc(1, 0, 1 << 20).unwrap();
        // Garbage allocated and dropped one object at a time could be collected (and its
        // memory reused) while the loop runs, and the heap would never commit much.
        let peak = s.scope(|s| {
            for _ in 0..80 {
                s.alloc(1, 0, 1 << 20).unwrap();
            }
            // The peak while everything is still held: read after the collections, it
            // would miss what the uncommitter already gave back on a slow machine (the
            // delay is 200 ms).
            heap.usage().committed
        });
        s.collect("drop the garbage");
        s.collect("drop the garbage");
        assert_eq!(s.get(keep).n_bytes(), 1 << 20);
        peak
    });
    let deadline = Instant::now() + wait;
    while heap.usage().committed >= below && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    (peak, heap.usage().committed, heap.stats().uncommitted_bytes)
}

#[test]
fn unused_memory_is_uncommitted_after_the_delay() {
    let (peak, end, uncommitted) = churn_then_wait(
        Some(Duration::from_millis(200)),
        64 * MIB,
        Duration::from_secs(20),
    );
    eprintln!(
        "committed: {}M at the peak, {}M at the end; {}M uncommitted",
        peak >> 20,
        end >> 20,
        uncommitted >> 20
    );
    assert!(
        peak >= 100 * MIB,
        "the test did not commit much: {}M",
        peak >> 20
    );
    assert!(end < 64 * MIB, "committed memory stayed at {}M", end >> 20);
    assert!(
        uncommitted >= peak - end,
        "the stats miss uncommitted bytes"
    );
}

#[test]
fn without_a_delay_nothing_is_uncommitted() {
    let (peak, end, uncommitted) = churn_then_wait(None, 64 * MIB, Duration::from_millis(500));
    assert!(peak >= 100 * MIB);
    assert_eq!(uncommitted, 0);
    assert!(
        end >= peak,
        "committed memory shrank without an uncommit delay"
    );
}
