//! The stepper's refusals and its escape hatch: what `Heap::stepper` and `Stepper` answer
//! when misused (an error that says what to change, never a hang), and that a thread that
//! must wait for the collector ends the stepping instead of waiting forever; and the mark and
//! stale colors a stepped cycle shows when the colors rotate (`HeapConfig::mark_colors`).

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

/// A `generational` heap's cycles stop at the gate too, a major's and a minor's (whose
/// Concurrent Reset Relocation Set drops the previous evacuating minor's table, and whose
/// Concurrent Relocate finishes its in-place promotions and evacuates its sparse pages).
#[test]
fn a_generational_heap_steps_majors_and_minors() {
    let h = Heap::new(
        HeapConfig::new(64 << 20)
            .mode(Mode::Generational)
            .gc_threads(1)
            .continuous(false)
            .uncommit_delay(None),
    )
    .unwrap();
    let s = h.stepper().unwrap();
    let mut major = vec![s.start_cycle("test").unwrap()];
    while *major.last().unwrap() != Step::CycleEnded {
        major.push(s.step().unwrap());
    }
    assert_eq!(major.len(), 7, "{major:?}");
    let mut minor = vec![s.start_minor().unwrap()];
    while *minor.last().unwrap() != Step::CycleEnded {
        minor.push(s.step().unwrap());
    }
    assert_eq!(
        minor,
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

/// A barrier that meets an object on a page that must be compacted in place (no free page
/// for a copy) waits for the page's GC worker; with Concurrent Relocate held, that worker
/// would never run. The wait opens the gate instead: the load returns the object, moved, and
/// the stepper's next call says why stepping ended.
#[test]
fn a_barrier_waiting_for_a_held_worker_ends_the_stepping() {
    let h = Heap::new(
        HeapConfig::new(gc_runtime::MIN_COLLECTED_HEAP)
            .gc_threads(1)
            .verify(true)
            .relocation_reserve(0)
            .uncommit_delay(None),
    )
    .unwrap();
    let s = h.stepper().unwrap();
    let mut m = h.attach("m").unwrap();
    let page = 2u64 << 20;
    let start = h.offset_range().0.raw();
    // R -> A with garbage between, on a page that is then filled with garbage; the other
    // pages full of live fillers: no page is left for relocation.
    let (root, _fillers, a_before) = m.scope(|sc| {
        let r = sc.alloc(1, 1, 8).unwrap();
        sc.alloc(9, 0, 256).unwrap();
        let a = sc.alloc(2, 0, 8).unwrap();
        sc.get(a).write_u64(0, 42);
        sc.store(r, 0, Some(a));
        let first = (sc.address_of(r).raw() - start) / page;
        let table = sc.alloc(3, 32, 0).unwrap();
        let garbage_at = |sc: &mut gc_runtime::Scope<'_>| {
            let g = sc.alloc(9, 0, 48).unwrap();
            (sc.address_of(g).raw() - start) / page
        };
        while sc.scope(garbage_at) == first {}
        let pages = h.usage().capacity / page;
        for i in 0..32 {
            let o = sc.alloc(4, 0, 192 << 10).unwrap();
            sc.store(table, i, Some(o));
            let at = sc.address_of(o).raw() - start;
            if at / page == first + pages - 1 && at + 2 * (200 << 10) > (first + pages) * page {
                break;
            }
        }
        (sc.global(r), sc.global(table), sc.address_of(a))
    });
    let mut step = s.start_cycle("test").unwrap();
    while step != Step::Before(GcPhase::ConcurrentRelocate) {
        step = s.step().unwrap();
    }
    let a_after = m.scope(|sc| {
        let r = sc.from_global(&root);
        let a = sc.load(r, 0).unwrap();
        assert_eq!(sc.get(a).read_u64(0), 42);
        sc.address_of(a)
    });
    assert!(a_after < a_before, "A slid down on its page");
    let e = s.step().unwrap_err();
    assert!(e.contains("waited for a page's GC worker"), "{e}");
    let set = h.relocation_set();
    assert!(
        set.iter().any(|p| p.compacted_in_place),
        "the page was compacted in place: {set:?}"
    );
}

/// With the mark colors rotating, a stepped cycle shows its mark color and the stale color
/// (the previous cycle's) while it marks: Marked1, Marked0, Marked2, Marked1 again.
#[test]
fn rotating_mark_colors_show_in_the_stepped_state() {
    use gc_runtime::inspect::GoodColor::{Marked0, Marked1, Marked2, Remapped};
    let h = Heap::new(
        HeapConfig::new(64 << 20)
            .gc_threads(1)
            .uncommit_delay(None)
            .mark_colors(gc_runtime::ColorChoice::Rotate),
    )
    .unwrap();
    let s = h.stepper().unwrap();
    let mut seen = Vec::new();
    for _ in 0..4 {
        assert_eq!(
            s.start_cycle("test").unwrap(),
            Step::Before(GcPhase::ConcurrentMarkRoots)
        );
        let st = h.gc_state();
        seen.push((st.good, st.stale));
        while s.step().unwrap() != Step::CycleEnded {}
        assert_eq!(h.gc_state().good, Remapped);
    }
    assert_eq!(
        seen,
        [
            (Marked1, Remapped),
            (Marked0, Marked1),
            (Marked2, Marked0),
            (Marked1, Marked2)
        ]
    );
}
