//! Copy 256 MB at a time through a direct buffer while GC cycles run back to back, and print
//! the longest pause and the longest time to safepoint: the direct-buffer half of the
//! large-object benchmark (the Lox half is `workloads/lox/bench/large_strings.lox`). Each
//! `write`, `read` and `fill` of the whole buffer is one call; a pause that has to wait for
//! the call shows as time to safepoint.
//!
//! `cargo run --release -p gc-runtime --example large_direct [-- ROUNDS]`
use gc_runtime::{Heap, HeapConfig, Mode};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Bytes of the buffer and of each copy.
const LEN: usize = 256 << 20;

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .map_or(3, |a| a.parse().expect("ROUNDS is a number"));
    let heap = Arc::new(
        Heap::new(
            HeapConfig::new(256 << 20)
                .mode(Mode::Concurrent)
                .max_direct_memory(2 * LEN as u64),
        )
        .unwrap(),
    );
    let stop = Arc::new(AtomicBool::new(false));
    // Cycles back to back, from a thread with no mutator: each has its pauses.
    let collector = {
        let (heap, stop) = (heap.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                heap.collect("large_direct").unwrap();
            }
        })
    };
    let data: Vec<u8> = (0..LEN).map(|i| (i % 251) as u8).collect();
    let mut back = vec![0u8; LEN];
    let mut m = heap.attach("main").unwrap();
    let t = std::time::Instant::now();
    for round in 0..rounds {
        // Only the buffer's calls in the scope: the checks run outside it, where pauses do
        // not wait for the mutator.
        let kept = m.scope(|s| {
            let b = s.alloc_direct(LEN).unwrap();
            s.direct(b).unwrap().write(0, &data).unwrap();
            s.direct(b).unwrap().read(0, &mut back).unwrap();
            s.direct(b).unwrap().fill(0, LEN, round as u8).unwrap();
            s.global(b)
        });
        assert!(back == data, "round {round}: the bytes read back differ");
        let last = m.scope(|s| {
            let b = s.from_global(&kept);
            let mut last = [0u8; 8];
            s.direct(b).unwrap().read(LEN - 8, &mut last).unwrap();
            s.direct(b).unwrap().release().unwrap();
            last
        });
        assert_eq!(last, [round as u8; 8]);
    }
    let elapsed = t.elapsed();
    stop.store(true, Ordering::Relaxed);
    collector.join().unwrap();
    drop(m);
    let stats = heap.stats();
    let max = stats.pauses.iter().map(|p| p.total_ns).max().unwrap_or(0);
    let ttsp = stats
        .pauses
        .iter()
        .map(|p| p.time_to_safepoint_ns)
        .max()
        .unwrap_or(0);
    println!(
        "large_direct: {rounds} rounds of 256 MB write, read, fill in {:.2} s; {} cycles, \
         {} pauses, max pause {:.3} ms, max ttsp {:.3} ms",
        elapsed.as_secs_f64(),
        stats.cycles.len(),
        stats.pauses.len(),
        max as f64 / 1e6,
        ttsp as f64 / 1e6,
    );
}
