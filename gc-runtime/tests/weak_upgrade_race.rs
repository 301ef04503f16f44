//! A weak upgrade that read its slot before Concurrent Process Non-Strong References cleared
//! it must not return the dead referent, however long it waits before testing the
//! referent's liveness.
//!
//! Between Pause Mark End and Pause Relocate Start the weak-load barrier reads the slot, then
//! asks whether the object it points at is live. A thread preempted between the two (common
//! on a loaded machine) can resume after the collector cleared the slot, freed the dead
//! referent's page as empty in Concurrent Select Relocation Set and took the same memory for
//! a page born in this cycle (a relocation target) — and every object of such a page reads
//! as live. The upgrade would then hand out a pointer into memory that holds no object
//! (ZGC closes the same window with a handshake after processing its weak roots).
//!
//! The test holds the upgrade there on purpose (`Heap::hold_next_weak_upgrade_for_tests`) and
//! steps the cycle with a `Stepper`: the parent dies (nobody upgrades it during marking), its
//! page holds nothing else live, and a second page, with one live object and much free space,
//! is selected for relocation, so selection takes a target page after freeing the parent's.
//! It checks that the window was reached: the upgrade was held while its slot was cleared,
//! an empty page was freed and the relocation set installed (its target pages taken).

use gc_runtime::{GcPhase, Heap, HeapConfig, Mode, Step};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::channel;
use std::sync::Arc;
use std::time::{Duration, Instant};

const MIB: u64 = 1 << 20;
/// Offsets are the low 42 bits of a colored pointer, or more (`S` >= 42); the test's heap is
/// far smaller.
const OFFSET_MASK: u64 = (1 << 42) - 1;
const SMALL_PAGE: u64 = 2 * MIB;
const WAIT: Duration = Duration::from_secs(60);

fn page_of(raw: u64) -> u64 {
    (raw & OFFSET_MASK) / SMALL_PAGE
}

#[test]
fn a_held_weak_upgrade_does_not_return_a_referent_freed_meanwhile() {
    let heap = Heap::new(
        HeapConfig::new(64 * MIB)
            .mode(Mode::Concurrent)
            .gc_threads(1)
            .uncommit_delay(None)
            .verify(true),
    )
    .unwrap();
    let stepper = heap.stepper().unwrap();
    let (ready_tx, ready_rx) = channel();
    let (upgrade_tx, upgrade_rx) = channel::<()>();
    let (result_tx, result_rx) = channel();
    let (reached_tx, reached_rx) = channel();
    let (release_tx, release_rx) = channel::<()>();
    let set_installed_while_held = AtomicBool::new(false);
    std::thread::scope(|sc| {
        let heap = &heap;
        sc.spawn(move || {
            let mut m = heap.attach("upgrader").unwrap();
            let (weak, keep) = m.scope(|s| {
                // The parent, its child and garbage filling the rest of their page.
                let p = s.alloc(1, 1, 0).unwrap();
                let c = s.alloc(2, 0, 8).unwrap();
                s.store(p, 0, Some(c));
                let weak = s.weak(p);
                let parent_page = page_of(s.raw_handle(p).raw());
                loop {
                    let g = s.alloc(3, 0, 1024).unwrap();
                    if page_of(s.raw_handle(g).raw()) != parent_page {
                        break;
                    }
                }
                // One live object on the next page, which stays mostly free: selected.
                let live = s.alloc(4, 0, 8).unwrap();
                assert_ne!(page_of(s.raw_handle(live).raw()), parent_page);
                (Arc::new(weak), s.global(live))
            });
            ready_tx.send(weak.clone()).unwrap();
            m.scope(|s| s.blocking(|| upgrade_rx.recv().unwrap()));
            // Held at the hold point until the controller releases it.
            let upgraded = m.scope(|s| s.upgrade(&weak).is_some());
            result_tx.send(upgraded).unwrap();
            drop(m);
            drop(keep);
        });
        let weak = ready_rx.recv_timeout(WAIT).unwrap();
        let s = &stepper;
        assert_eq!(
            s.start_cycle("weak upgrade race").unwrap(),
            Step::Before(GcPhase::ConcurrentMarkRoots)
        );
        assert_eq!(s.step().unwrap(), Step::Before(GcPhase::ConcurrentMark));
        assert_eq!(
            s.step().unwrap(),
            Step::Before(GcPhase::ConcurrentProcessNonStrongReferences)
        );
        // Marking is over and nobody upgraded the parent during it: it is dead, and its
        // handle is not cleared yet.
        assert!(!weak.is_cleared());
        heap.hold_next_weak_upgrade_for_tests(move || {
            reached_tx.send(()).unwrap();
            let _ = release_rx.recv_timeout(WAIT);
        });
        upgrade_tx.send(()).unwrap();
        reached_rx
            .recv_timeout(WAIT)
            .expect("the upgrade never reached the hold point: the window was not reached");
        assert_eq!(
            s.step().unwrap(),
            Step::Before(GcPhase::ConcurrentResetRelocationSet)
        );
        assert!(
            weak.is_cleared(),
            "Concurrent Process Non-Strong References did not clear the dead parent's handle"
        );
        assert_eq!(
            s.step().unwrap(),
            Step::Before(GcPhase::ConcurrentSelectRelocationSet)
        );
        // Selection runs, then Pause Relocate Start waits for the held mutator: release it
        // once the relocation set (and so its target pages) is installed.
        let installed = &set_installed_while_held;
        sc.spawn(move || {
            let start = Instant::now();
            while start.elapsed() < WAIT {
                if !heap.relocation_set().is_empty() {
                    installed.store(true, Ordering::SeqCst);
                    break;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            let _ = release_tx.send(());
        });
        assert_eq!(s.step().unwrap(), Step::Before(GcPhase::ConcurrentRelocate));
        assert_eq!(s.step().unwrap(), Step::CycleEnded);
    });
    let upgraded = result_rx.recv_timeout(WAIT).unwrap();
    let cycle = heap.stats().cycles.last().cloned().unwrap();
    assert!(
        cycle.pages_freed_empty >= 1,
        "no empty page was freed: the parent's page was not, the window was not reached"
    );
    assert!(
        set_installed_while_held.load(Ordering::SeqCst),
        "no relocation set was installed while the upgrade was held: no target page was \
         taken, the window was not reached"
    );
    assert!(
        !upgraded,
        "an upgrade held past its handle's clearing returned the dead parent: its page was \
         freed and its memory reused by a page of this cycle, whose every offset reads as live"
    );
}
