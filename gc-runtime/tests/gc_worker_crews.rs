//! The GC workers of a running parallel phase follow what the mutators need (the crew of
//! `threads/worker_crew.rs`): a phase started with one worker gains a second when a mutator
//! starts waiting for the cycle, and a worker that leaves a running phase loses no work.
//!
//! Both need two cores or more (the most workers a phase may have is one per core, or
//! `gc_threads` if more): on one core there is nothing to gain, and the tests say so and pass
//! without asserting anything else.
//!
//! - A mutator that outruns the collector on a small heap (`gc_threads(1)`, pacing on, a
//!   live set of many small nodes, garbage in 32 KiB arrays) is paced while phases run; some
//!   phase starts while nobody waits and gains a worker when the pacer holds the mutator.
//!   The count of workers joined must be above zero (what the fix is for: before it, a phase
//!   kept its starting count to its end).
//! - With the workers' target swinging between one and every core at each safe point
//!   (`Heap::swing_gc_workers_for_tests`), workers join and leave marking and relocation
//!   dozens of times per cycle while the mutator splices its lists; the verifier checks the
//!   heap in every pause, and the mutator checks every node and its payload at the end. The
//!   counts of joins and leaves must be above zero.

mod support;

use gc_runtime::{GcStats, Heap, HeapConfig, Mode};
use std::time::{Duration, Instant};

const MIB: u64 = 1 << 20;
/// Nodes of the live set: 32 bytes each.
const LIVE_NODES: usize = 512 * 1024;
/// Table slots the live set hangs from (a list of nodes per slot).
const TABLE_SLOTS: usize = 4096;
/// Raw bytes of each garbage array.
const GARBAGE_BYTES: usize = 32 * 1024;

/// Allocations between two rests of a mutator run with gaps.
const BURST: u64 = 256;
/// A rest: longer than the driver's "paced recently" window (50 ms), so that a phase that
/// starts during it starts with `gc_threads` workers, not boosted. Without rests a mutator
/// paced through every cycle (a loaded machine: cycles are slow and back to back) boosts
/// every phase from its start, and no phase has a worker to gain.
const GAP: Duration = Duration::from_millis(120);

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn joined(st: &GcStats) -> u64 {
    st.cycles.iter().map(|c| c.workers_joined).sum()
}

fn left(st: &GcStats) -> u64 {
    st.cycles.iter().map(|c| c.workers_left).sum()
}

/// Build the live set, then allocate garbage (and, with `splice`, replace a node of the live
/// set every 16 allocations; with `gaps`, rest as a blocked thread for `GAP` after every
/// `BURST` allocations) until `done(stats)` or `max`; then check every node's payload.
/// Returns the heap's statistics.
fn run(
    config: HeapConfig,
    swing: u64,
    splice: bool,
    gaps: bool,
    max: Duration,
    done: fn(&GcStats) -> bool,
) -> GcStats {
    let heap = Heap::new(config).expect("creating the heap");
    heap.swing_gc_workers_for_tests(swing);
    let mut m = heap.attach("mutator").unwrap();
    let start = Instant::now();
    m.scope(|s| {
        let table = s.alloc(1, TABLE_SLOTS as u32, 0).unwrap();
        // Node i holds payload i in list i % TABLE_SLOTS.
        support::build_live_set(s, table, TABLE_SLOTS, LIVE_NODES);
        let mut n = 0u64;
        let mut spliced = 0usize;
        loop {
            if n.is_multiple_of(64) && (start.elapsed() >= max || done(&heap.stats())) {
                break;
            }
            if gaps && n > 0 && n.is_multiple_of(BURST) {
                s.blocking(|| std::thread::sleep(GAP));
            }
            s.scope(|s| {
                let _ = s.alloc(3, 0, GARBAGE_BYTES);
                if splice && n.is_multiple_of(16) {
                    // Replace the head of a list with a copy of it: the old head becomes
                    // garbage, the copy must survive with the same payload.
                    let slot = spliced % TABLE_SLOTS;
                    spliced += 1;
                    if let Some(head) = s.load(table, slot) {
                        let copy = s.alloc(2, 1, 8).expect("a node");
                        let payload = s.get(head).read_u64(0);
                        let next = s.load(head, 0);
                        s.store(copy, 0, next);
                        s.get(copy).write_u64(0, payload);
                        s.store(table, slot, Some(copy));
                    }
                }
            });
            n += 1;
        }
        // Every node survived with its payload, in its list.
        let mut seen = vec![false; LIVE_NODES];
        for slot in 0..TABLE_SLOTS {
            let mut cur = s.get(table).load(slot);
            while let Some(node) = cur {
                let p = node.read_u64(0) as usize;
                assert!(
                    p < LIVE_NODES && p % TABLE_SLOTS == slot,
                    "node {p} in list {slot}"
                );
                assert!(!seen[p], "node {p} twice");
                seen[p] = true;
                cur = node.load(0);
            }
        }
        assert!(seen.iter().all(|&x| x), "the live set lost nodes");
    });
    drop(m);
    heap.stats()
}

#[test]
fn a_phase_started_with_one_worker_gains_one_when_a_mutator_is_paced() {
    if cores() < 2 {
        println!("one core: a phase has no worker to gain");
        return;
    }
    let config = HeapConfig::new(64 * MIB)
        .mode(Mode::Concurrent)
        .gc_threads(1)
        .pacing(true);
    let st = run(config, 0, false, true, Duration::from_secs(60), |st| {
        joined(st) > 0
    });
    let paced = st.pacing.len();
    println!(
        "{} cycles, {paced} pacing delays, {} workers joined a running phase, {} left",
        st.cycles.len(),
        joined(&st),
        left(&st)
    );
    assert!(
        paced > 0,
        "the mutator was never paced: the test reached nothing"
    );
    assert!(
        joined(&st) > 0,
        "{paced} pacing delays, yet no phase gained a worker while it ran"
    );
}

#[test]
fn workers_that_join_and_leave_running_phases_lose_no_work() {
    if cores() < 2 {
        println!("one core: a phase has no worker to gain");
        return;
    }
    let config = HeapConfig::new(96 * MIB)
        .mode(Mode::Concurrent)
        .gc_threads(1)
        .verify(true);
    // At least 4 cycles, each with workers joining and leaving.
    let st = run(config, 1, true, false, Duration::from_secs(60), |st| {
        st.cycles.len() >= 4 && left(st) >= 8
    });
    println!(
        "{} cycles, {} workers joined a running phase, {} left",
        st.cycles.len(),
        joined(&st),
        left(&st)
    );
    assert!(st.cycles.len() >= 4, "fewer than 4 cycles in 60 s");
    assert!(joined(&st) > 0 && left(&st) > 0, "the crews never changed");
}
