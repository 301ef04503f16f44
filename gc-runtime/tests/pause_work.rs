//! The `concurrent` mode's pauses do no per-root and no per-thread work: with a million roots
//! and 64 more mutator threads attached, Pause Mark Start and Pause Relocate Start visit no
//! root and copy no object, and Pause Mark End hands over no mark-buffer entry (it tests one
//! counter of the buffers that hold work), exactly as with a handful of roots and no extra
//! threads. The roots are marked by Concurrent Mark Roots instead, while the mutators run.
//!
//! Work is counted, not timed: each pause records its work items (root slots visited,
//! mark-buffer entries handed over, objects relocated). The same run in `stw` mode shows the
//! count is real: its one pause visits every root. A churning mutator runs beside the cycles
//! in the `concurrent` runs, so its barriers heal and mark roots while the scan runs, and the
//! roots' objects are checked after every cycle.
//!
//! A pause's record also says how much of it was the heap verifier's walk (`verify_ns`), so
//! the torture and soak reports can tell the collector's pause from the debugging aid's.

use gc_runtime::{GcStats, Heap, HeapConfig, Mode, PauseKind};
use std::sync::atomic::{AtomicBool, Ordering};

const MIB: u64 = 1 << 20;
const MANY: usize = 1_000_000;
const FEW: usize = 10;
const CYCLES: usize = 4;
/// Extra mutator threads attached (blocked, outside every scope) in the "many" run.
const MANY_THREADS: usize = 64;

/// Fill a root region of `roots` slots with 1,000 distinct objects (each tagged with its
/// number), run `CYCLES` cycles while a second mutator reads, checks and rewrites roots and
/// allocates garbage, check the objects after each cycle, and return the stats.
fn run(mode: Mode, roots: usize, idle_threads: usize) -> GcStats {
    let heap = Heap::new(HeapConfig::new(256 * MIB).mode(mode)).unwrap();
    let region = heap.root_region(roots);
    let mut m = heap.attach("main").unwrap();
    m.scope(|s| {
        for i in 0..roots {
            if i < 1000 {
                let o = s.alloc(1, 0, 8).unwrap();
                s.get(o).write_u64(0, i as u64);
                region.set_local(s, i, Some(o));
            } else {
                let o = region.get(s, i % 1000);
                region.set(s, i, o);
            }
        }
    });
    let done = AtomicBool::new(false);
    std::thread::scope(|sc| {
        for t in 0..idle_threads {
            let (heap, done) = (&heap, &done);
            sc.spawn(move || {
                let mut m = heap.attach(&format!("idle-{t}")).unwrap();
                // One scope that allocates, then attached and blocked until the end.
                m.scope(|s| {
                    s.alloc(1, 0, 8).unwrap();
                });
                while !done.load(Ordering::Relaxed) {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
            });
        }
        sc.spawn(|| {
            let mut m = heap.attach("churn").unwrap();
            let mut i = 0usize;
            while !done.load(Ordering::Relaxed) {
                m.scope(|s| {
                    for _ in 0..1000 {
                        i = (i + 7919) % roots;
                        let o = region.get(s, i).expect("a root survives");
                        assert_eq!(o.read_u64(0), (i % 1000) as u64, "root {i} changed");
                        region.set(s, i, Some(o));
                        s.alloc(2, 1, 64).unwrap();
                    }
                });
            }
        });
        for _ in 0..CYCLES {
            m.scope(|s| {
                s.collect("pause work test");
                for i in (0..roots).step_by(997) {
                    let o = region.get(s, i).expect("a root survives");
                    assert_eq!(o.read_u64(0), (i % 1000) as u64, "root {i} lost its object");
                }
            });
        }
        done.store(true, Ordering::Relaxed);
    });
    heap.stats()
}

fn pause_work(stats: &GcStats, kind: PauseKind) -> Vec<u64> {
    stats
        .pauses
        .iter()
        .filter(|p| p.kind == kind)
        .map(|p| p.work_items)
        .collect()
}

#[test]
fn concurrent_pauses_do_not_grow_with_the_roots() {
    let many = run(Mode::Concurrent, MANY, MANY_THREADS);
    let few = run(Mode::Concurrent, FEW, 0);
    for (name, stats, roots) in [
        ("1M roots, 66 mutators", &many, MANY),
        ("10 roots, 2 mutators", &few, FEW),
    ] {
        let start = pause_work(stats, PauseKind::MarkStart);
        let end = pause_work(stats, PauseKind::MarkEnd);
        let reloc = pause_work(stats, PauseKind::RelocateStart);
        let scanned: Vec<u64> = stats
            .cycles
            .iter()
            .map(|c| c.roots_marked_concurrently)
            .collect();
        eprintln!(
            "{name}: work items per pause: Mark Start {start:?}, Mark End {end:?}, Relocate \
             Start {reloc:?}; roots marked concurrently per cycle {scanned:?}"
        );
        assert!(start.len() >= CYCLES, "{name}: {} cycles ran", start.len());
        assert!(
            start.iter().all(|&w| w == 0),
            "{name}: Mark Start did root work"
        );
        assert!(
            reloc.iter().all(|&w| w == 0),
            "{name}: Relocate Start did work"
        );
        // Mark End only tests whether some mutator's buffer holds work; if one does, the
        // pause ends and Concurrent Mark Continue flushes it.
        assert!(
            end.iter().all(|&w| w == 0),
            "{name}: Mark End handed mark-buffer entries over"
        );
        // The roots were marked after all, concurrently: every cycle saw every root.
        assert!(
            scanned.iter().all(|&n| n >= roots as u64),
            "{name}: a cycle marked fewer than {roots} roots concurrently"
        );
    }
}

#[test]
fn the_stw_pause_visits_every_root() {
    let stats = run(Mode::Stw, MANY, 0);
    let full = pause_work(&stats, PauseKind::Full);
    eprintln!("stw, 1M roots: work items per pause {full:?}");
    assert!(full.len() >= CYCLES);
    assert!(
        full.iter().all(|&w| w >= MANY as u64),
        "the stw pause should have visited every root"
    );
    assert!(stats
        .cycles
        .iter()
        .all(|c| c.roots_marked_concurrently == 0));
}

/// Pause records say how much of each pause was the heap verifier's walk: with the verifier
/// on, every pause that verifies has it, within the pause's time; with it off, none has.
#[test]
fn pauses_record_the_verifiers_share() {
    let stats_with = |verify: bool| {
        let heap = Heap::new(HeapConfig::new(64 * MIB).verify(verify)).unwrap();
        let mut m = heap.attach("main").unwrap();
        let region = heap.root_region(1);
        m.scope(|s| {
            // Enough live objects that the walk takes measurable time.
            let mut list = None;
            for i in 0..20_000u64 {
                let o = s.alloc(1, 1, 8).unwrap();
                s.get(o).write_u64(0, i);
                s.store(o, 0, list);
                list = Some(o);
            }
            region.set_local(s, 0, list);
            for _ in 0..2 {
                s.collect("verify share test");
            }
        });
        heap.stats()
    };
    let on = stats_with(true);
    let verifying: Vec<_> = on
        .pauses
        .iter()
        .filter(|p| matches!(p.kind, PauseKind::MarkStart | PauseKind::RelocateStart))
        .collect();
    assert!(verifying.len() >= 4, "{} pauses", verifying.len());
    for p in &verifying {
        assert!(
            p.verify_ns > 0 && p.verify_ns <= p.at_safepoint_ns && p.verify_ns <= p.total_ns,
            "a verifying pause records its walk within its time: {p:?}"
        );
    }
    let off = stats_with(false);
    assert!(off.pauses.len() >= 6, "{} pauses", off.pauses.len());
    assert!(
        off.pauses.iter().all(|p| p.verify_ns == 0),
        "no walk without the verifier"
    );
}
