//! An allocation stall that begins while a cycle runs is answered by that cycle's end when
//! the cycle frees what the allocation needs: no cycle is started for it afterwards. Before,
//! the stall's request was pending from the moment it was made, so the driver ran a second
//! cycle (cause Allocation Stall) right after the one that had already made room: the
//! binary-trees trace of the generational mode at 256M (GC(62) High Usage, GC(63) Allocation
//! Stall, back to back).
//!
//! The heap is filled with garbage, a `Stepper` holds a cycle after its Pause Mark Start
//! (the director starts none of its own meanwhile), and a mutator allocates until it stalls:
//! nothing is freed while the cycle is held, so it must. The stall opens the gate; the cycle
//! runs on, frees the garbage's pages, and the stalled allocation proceeds. The test fails
//! unless a stall was recorded, began while that cycle ran and succeeded, and it counts the
//! cycles by cause: none may be an Allocation Stall's. `concurrent` and `generational` (the
//! stepper holds no `stw` cycle, which is one pause; the protocol the three modes share is
//! unit-tested in `context/cycle_control.rs`).

use gc_runtime::{GcCause, GcPhase, Heap, HeapConfig, Mode, Step};
use std::sync::mpsc::channel;
use std::time::Duration;

const MIB: u64 = 1 << 20;
const HEAP: u64 = 32 * MIB;
const WAIT: Duration = Duration::from_secs(60);
/// Each object: a byte array of 8 KiB.
const OBJECT: usize = 8 << 10;

fn stall_during_a_held_cycle(mode: Mode) {
    let heap = Heap::new(
        HeapConfig::new(HEAP)
            .mode(mode)
            .gc_threads(1)
            .continuous(false)
            .uncommit_delay(None),
    )
    .unwrap();
    let stepper = heap.stepper().unwrap();
    let (filled_tx, filled_rx) = channel::<()>();
    let (held_tx, held_rx) = channel::<()>();
    std::thread::scope(|sc| {
        let heap = &heap;
        let mutator = sc.spawn(move || {
            let mut m = heap.attach("staller").unwrap();
            // Garbage up to 60% of the heap: no stall yet, and all of it dead at Mark Start.
            m.scope(|s| {
                while heap.usage().used < HEAP * 6 / 10 {
                    s.scope(|s| {
                        for _ in 0..16 {
                            s.alloc(2, 0, OBJECT).unwrap();
                        }
                    });
                }
            });
            filled_tx.send(()).unwrap();
            m.scope(|s| s.blocking(|| held_rx.recv_timeout(WAIT).unwrap()));
            // The cycle is held after Pause Mark Start: what is allocated now is live to it,
            // and nothing is freed until it runs on, so the heap runs out and the mutator
            // stalls. Stop once the stall is recorded (it ended: the allocation proceeded).
            let mut allocated = 0u64;
            m.scope(|s| {
                while heap.stats().stalls.is_empty() {
                    assert!(
                        allocated < 4 * HEAP,
                        "{mode}: {allocated} bytes allocated during a held cycle and no stall"
                    );
                    s.scope(|s| {
                        for _ in 0..16 {
                            s.alloc(2, 0, OBJECT).unwrap();
                        }
                    });
                    allocated += 16 * OBJECT as u64;
                }
            });
        });
        filled_rx.recv_timeout(WAIT).unwrap();
        assert_eq!(
            stepper.start_cycle("held").unwrap(),
            Step::Before(GcPhase::ConcurrentMarkRoots)
        );
        held_tx.send(()).unwrap();
        mutator.join().unwrap();
    });
    drop(stepper);
    // Whatever cycle a pending request would run has completed once this one has (a pending
    // request runs before this one, or is this one).
    heap.collect("after").unwrap();
    let st = heap.stats();
    let held = st
        .cycles
        .iter()
        .find(|c| c.cause == GcCause::Explicit("held".into()))
        .expect("the held cycle completed");
    let stall = st.stalls.first().expect("the mutator stalled");
    assert!(!stall.failed, "{mode}: the stall failed: {stall:?}");
    assert!(
        stall.start_at_ns >= held.start_at_ns
            && stall.start_at_ns < held.start_at_ns + held.duration_ns,
        "{mode}: the stall did not begin while the held cycle ran: {stall:?}, {held:?}"
    );
    let causes: Vec<_> = st.cycles.iter().map(|c| c.cause.clone()).collect();
    assert!(
        !causes.contains(&GcCause::AllocationStall),
        "{mode}: a cycle ran for a stall the held cycle answered: {causes:?}"
    );
}

#[test]
fn a_stall_during_a_concurrent_cycle_is_answered_by_its_end() {
    stall_during_a_held_cycle(Mode::Concurrent);
}

#[test]
fn a_stall_during_a_generational_cycle_is_answered_by_its_end() {
    stall_during_a_held_cycle(Mode::Generational);
}
