//! The stepper's refusals and its escape hatch: what `Heap::stepper` and `Stepper` answer
//! when misused (an error that says what to change, never a hang), and that a thread that
//! must wait for the collector ends the stepping instead of waiting forever.

use gc_runtime::{GcPhase, Heap, HeapConfig, Mode, Step};

fn heap(mode: Mode) -> Heap {
    Heap::new(
        HeapConfig::new(64 << 20)
            .mode(mode)
            .gc_threads(1)
            .uncommit_delay(None),
    )
    .unwrap()
}

#[test]
fn a_stw_heap_has_no_phases_to_step() {
    let e = heap(Mode::Stw).stepper().err().unwrap();
    assert!(e.contains("concurrent heap"), "{e}");
}

#[test]
fn one_stepper_at_a_time() {
    let h = heap(Mode::Concurrent);
    let s = h.stepper().unwrap();
    assert!(h.stepper().err().unwrap().contains("another stepper"));
    drop(s);
    assert!(h.stepper().is_ok(), "a dropped stepper gives the gate back");
}

#[test]
fn stepping_with_no_cycle_held_is_an_error_not_a_hang() {
    let h = heap(Mode::Concurrent);
    let s = h.stepper().unwrap();
    let e = s.step().unwrap_err();
    assert!(e.contains("start_cycle"), "{e}");
}

#[test]
fn a_cycle_stops_before_each_concurrent_phase_in_order() {
    let h = heap(Mode::Concurrent);
    let s = h.stepper().unwrap();
    let mut seen = vec![s.start_cycle("test").unwrap()];
    while *seen.last().unwrap() != Step::CycleEnded {
        seen.push(s.step().unwrap());
    }
    assert_eq!(
        seen,
        [
            Step::Before(GcPhase::ConcurrentMarkRoots),
            Step::Before(GcPhase::ConcurrentMark),
            Step::Before(GcPhase::ConcurrentProcessNonStrongReferences),
            Step::Before(GcPhase::ConcurrentResetRelocationSet),
            Step::Before(GcPhase::ConcurrentSelectRelocationSet),
            Step::Before(GcPhase::ConcurrentRelocate),
            Step::CycleEnded,
        ]
    );
    assert_eq!(h.usage().cycles, 1);
}

#[test]
fn stepping_inside_a_scope_is_refused() {
    let h = heap(Mode::Concurrent);
    let s = h.stepper().unwrap();
    let mut m = h.attach("m").unwrap();
    let e = m.scope(|_| s.start_cycle("test").unwrap_err());
    assert!(e.contains("inside a scope"), "{e}");
}

/// A mutator that collects while a cycle is held would wait for it forever: its wait opens
/// the gate, the cycle runs on, and the stepper's next call says why.
#[test]
fn a_thread_waiting_for_a_cycle_ends_the_stepping() {
    let h = heap(Mode::Concurrent);
    let s = h.stepper().unwrap();
    assert_eq!(
        s.start_cycle("test").unwrap(),
        Step::Before(GcPhase::ConcurrentMarkRoots)
    );
    let mut m = h.attach("m").unwrap();
    m.scope(|s| s.collect("wait"));
    assert!(h.usage().cycles >= 1);
    let e = s.step().unwrap_err();
    assert!(e.contains("waited for a requested cycle"), "{e}");
}
