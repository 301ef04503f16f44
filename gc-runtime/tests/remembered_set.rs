//! The generational bookkeeping under stress (`HeapConfig::track_generations`, with only full
//! cycles running): old holders receive young values across many full cycles, and the
//! verifier, on in every pause, checks that every slot of a reachable old object pointing
//! into a young page is in the remembered set.
//!
//! Two mutator threads each keep a table of holders. A holder survives a Pause Mark Start and
//! is old from then on; the threads keep storing newly allocated leaves (young) into random
//! slots of random holders — the store barrier's old-to-young path — and now and then
//! replace a holder by a new one, allocated between garbage so its page is sparse and chosen
//! for relocation in a later cycle while it holds young leaves: relocation must remember
//! those slots at the holder's new address. A shadow model (the leaf identity each slot
//! should hold) is checked against the heap throughout.
//!
//! The test fails unless each path was reached, as the collector counts it: old-to-young
//! stores remembered by the barrier, objects moved onto old pages with young slots
//! remembered (in `concurrent` mode, copies whose original had a remembered slot, the only
//! ones a full cycle reads: `Generations::original_remembered`), and verifications that
//! found young-pointing slots of old objects (each of which had its bit, or the verifier
//! would have ended the process). Each scenario runs in a child process, so that the
//! verifier's abort is this test's failure. A planted bug (a store barrier that remembers
//! nothing, `Heap::skip_store_barrier_for_tests`) must end the child in the verifier; the bug
//! hunts `6-relocation-forgets-young-slots.patch` and
//! `11-major-copy-reads-the-previous-bitmap.patch` show the stress test fails when
//! relocation does not remember a moved object's young slots, or a full cycle looks for its
//! original's bits in the wrong bitmap.

mod support;
use gc_runtime::{Heap, HeapConfig, Local, Mode, ObjRef, RememberedSetStats, Scope, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const MIB: u64 = 1 << 20;
/// Holders per thread, and slots per holder.
const HOLDERS: usize = 2_000;
const SLOTS: usize = 4;
/// The longest a run goes on waiting for every path to be reached.
const MAX_SECS: u64 = 40;

use support::{Link, Rng};

/// A new leaf with identity `id` (young until the next Pause Mark Start), or `None` if the
/// heap is full.
fn leaf<'s>(s: &mut Scope<'s>, id: u64) -> Option<Local<'s>> {
    let l = s.alloc(3, 0, 16).ok()?;
    let o = s.get(l);
    o.write_u64(0, id);
    o.write_u64(8, !id);
    Some(l)
}

/// Bytes of a ballast object (pressure runs).
const BALLAST_BYTES: usize = 480;

/// Check holder `h`'s slots against the model.
fn check(o: ObjRef<'_>, link: Link, h: usize, expected: &[u64; SLOTS], mode: Mode) {
    assert_eq!(o.shape(), 2, "{mode}: holder {h} corrupted");
    assert_eq!(
        o.read_u64(0),
        h as u64,
        "{mode}: holder {h} has another's id"
    );
    for (j, &id) in expected.iter().enumerate() {
        match link.load(o, j) {
            None => assert_eq!(id, 0, "{mode}: leaf {id:#x} of holder {h} slot {j} lost"),
            Some(l) => assert_eq!(
                (l.shape(), l.read_u64(0), l.read_u64(8)),
                (3, id, !id),
                "{mode}: holder {h} slot {j} holds the wrong leaf"
            ),
        }
    }
}

/// One mutator: keeps its holders, stores young leaves into them, replaces some; in a
/// pressure run it also keeps `ballast` live objects and replaces a few each round (the heap
/// nearly full, relocation runs out of target pages and compacts pages in place). Returns
/// the holders checked.
fn mutate(
    heap: &Heap,
    link: Link,
    thread: u64,
    ballast: usize,
    stop: &AtomicBool,
    mode: Mode,
) -> u64 {
    let mut m = heap.attach(&format!("mutator-{thread}")).unwrap();
    let mut rng = Rng(0x6e4e ^ thread);
    let mut expected = vec![[0u64; SLOTS]; HOLDERS];
    let mut next_id = (thread + 1) << 48;
    let mut checks = 0;
    m.scope(|s| {
        let table = s.alloc(1, HOLDERS as u32, 0).unwrap();
        let ballast_table = s.alloc(1, ballast as u32, 0).unwrap();
        for b in 0..ballast {
            s.scope(|s| {
                let o = s.alloc(4, 0, BALLAST_BYTES).unwrap();
                s.store(ballast_table, b, Some(o));
            });
        }
        for h in 0..HOLDERS {
            s.scope(|s| {
                let o = link.alloc(s, 2, SLOTS as u32, 8).unwrap();
                s.get(o).write_u64(0, h as u64);
                s.store(table, h, Some(o));
            });
        }
        let mut round = 0u64;
        while !stop.load(Ordering::Relaxed) {
            round += 1;
            s.scope(|s| {
                // Young leaves into (mostly old) holders.
                for _ in 0..64 {
                    let (h, j) = (
                        (rng.below(HOLDERS as u64) as usize),
                        (rng.below(SLOTS as u64) as usize),
                    );
                    next_id += 1;
                    let Some(l) = leaf(s, next_id) else { break };
                    let holder = s.get(table).load(h).expect("holder");
                    link.store(holder, j, Some(s.get(l)));
                    expected[h][j] = next_id;
                }
                // Now and then a slot cleared (a leaf dies).
                let (h, j) = (
                    (rng.below(HOLDERS as u64) as usize),
                    (rng.below(SLOTS as u64) as usize),
                );
                link.store(s.get(table).load(h).expect("holder"), j, None);
                expected[h][j] = 0;
            });
            if round.is_multiple_of(4) {
                // Replace a holder by a copy between garbage: a sparse page, relocated in a
                // later cycle while the copy (old by then) holds young leaves.
                s.scope(|s| {
                    let h = rng.below(HOLDERS as u64) as usize;
                    let _before = s.alloc(9, 0, 2048).ok();
                    let Some(new) = link.alloc(s, 2, SLOTS as u32, 8) else {
                        return;
                    };
                    let _after = s.alloc(9, 0, 2048).ok();
                    let old = s.load(table, h).expect("holder");
                    let (o, n) = (s.get(old), s.get(new));
                    n.write_u64(0, h as u64);
                    for j in 0..SLOTS {
                        link.store(n, j, link.load(o, j));
                    }
                    s.store(table, h, Some(new));
                });
            }
            // Ballast replaced: its pages turn sparse, and are chosen for relocation.
            for _ in 0..(ballast / 1000) {
                s.scope(|s| {
                    let b = rng.below(ballast as u64) as usize;
                    if let Ok(o) = s.alloc(4, 0, BALLAST_BYTES) {
                        s.store(ballast_table, b, Some(o));
                    }
                });
            }
            // Check a run of holders against the model.
            let first = rng.below(HOLDERS as u64) as usize;
            for k in 0..16 {
                let h = (first + k) % HOLDERS;
                let o = s.get(table).load(h).expect("holder");
                check(o, link, h, &expected[h], mode);
                checks += 1;
            }
            s.poll();
        }
        for (h, e) in expected.iter().enumerate() {
            let o = s.get(table).load(h).expect("holder");
            check(o, link, h, e, mode);
            checks += 1;
        }
    });
    checks
}

/// Every path of the bookkeeping reached, as the collector counted it: in-place compaction
/// in a pressure run, and in `concurrent` mode copies of objects that received a young value
/// during the cycle, read for their young slots and remembered at the new address (in `stw`
/// the cycle copies inside its pause, where no page is young, so no copy needs a bit).
fn reached(r: &RememberedSetStats, mode: Mode, pressure: bool) -> bool {
    (!pressure || r.in_place_remembered > 0)
        && (mode != Mode::Concurrent || (r.major_copies_read > 0 && r.objects_moved_remembered > 0))
        && r.barrier_remembered > 0
        && r.verified_young_slots > 0
        && r.verifications >= 6
        && r.granules_promoted > 0
}

/// Run the stress scenario; with `planted`, the store barrier remembers nothing (it must
/// not return: the verifier ends the process).
/// With `pressure`, a heap nearly full of live ballast and without a relocation reserve.
fn run(mode: Mode, link: Link, pressure: bool, planted: bool) {
    let mut config = HeapConfig::new(24 * MIB)
        .mode(mode)
        .verify(true)
        .track_generations(true)
        .gc_threads(1)
        .continuous(true);
    if pressure {
        // No relocation reserve: mutators may fill every page, so relocation runs out of
        // target pages and compacts in place (see `relocation_pressure`).
        config = config.relocation_reserve(0);
    }
    // About 7 MiB of ballast per thread: with the holders and the leaves, over 60% of the
    // heap live.
    let ballast = if pressure { 14_000 } else { 0 };
    let heap = Arc::new(Heap::new(config).unwrap());
    if planted {
        heap.skip_store_barrier_for_tests();
    }
    let stop = Arc::new(AtomicBool::new(false));
    let threads: Vec<_> = (0..2)
        .map(|t| {
            let (heap, stop) = (heap.clone(), stop.clone());
            std::thread::spawn(move || mutate(&heap, link, t, ballast, &stop, mode))
        })
        .collect();
    // At least 3 s and 10 cycles, and on until every path was reached (or the limit).
    let start = Instant::now();
    let enough = |h: &Heap| {
        h.stats().cycles.len() >= 10 && reached(&h.remembered_set_stats().unwrap(), mode, pressure)
    };
    while !threads.iter().any(|t| t.is_finished())
        && start.elapsed() < Duration::from_secs(MAX_SECS)
        && (start.elapsed() < Duration::from_secs(3) || !enough(&heap))
    {
        std::thread::sleep(Duration::from_millis(100));
    }
    stop.store(true, Ordering::Relaxed);
    let checks: u64 = threads
        .into_iter()
        .map(|t| t.join().expect("a mutator failed its checks"))
        .sum();
    let r = heap.remembered_set_stats().expect("the bookkeeping is on");
    let cycles = heap.stats().cycles.len();
    eprintln!(
        "{mode} {link:?}{}: {cycles} cycles, {checks} holders checked, {} slots remembered now; \
         {r:?}",
        if pressure { " under pressure" } else { "" },
        heap.remembered_slots().unwrap()
    );
    assert!(
        !planted,
        "{mode}: the verifier missed the planted missing barrier"
    );
    assert!(checks > 0, "{mode}: nothing was checked");
    assert!(
        reached(&r, mode, pressure),
        "{mode} {link:?}: a path of the remembered set was not reached in {cycles} cycles \
         (barrier, relocation, verification): {r:?}"
    );
    // Full cycles made pages old by flipping the generation map's tag in Pause Mark Start
    // and settled the bytes concurrently: no pause walked the map.
    assert_eq!(
        r.granules_promoted_in_pause, 0,
        "{mode}: a Pause Mark Start walked the generation map: {r:?}"
    );
}

/// Set in a child process: the scenario it runs.
const CHILD_ENV: &str = "ZRS_REMSET_CHILD";

/// Run `scenario` in a child process (this test binary, test `test`): a verifier failure
/// ends the process, so only a child can report it as this test's failure.
fn in_child(test: &str, scenario: &str) -> (std::process::ExitStatus, String) {
    support::run_child(test, CHILD_ENV, scenario, Duration::from_secs(120))
}

/// The stress scenario `mode`/`link` in a child process, which must succeed.
fn stress(test: &str, mode: Mode, link: Link, pressure: bool) {
    if std::env::var(CHILD_ENV).is_ok() {
        run(mode, link, pressure, false);
        return;
    }
    let (status, stderr) = in_child(test, "stress");
    eprintln!("{stderr}");
    assert!(
        status.success(),
        "{mode} {link:?}: the child failed: {status}\n{stderr}"
    );
}

#[test]
fn concurrent_old_holders_remember_young_leaves() {
    stress(
        "concurrent_old_holders_remember_young_leaves",
        Mode::Concurrent,
        Link::Ref,
        false,
    );
}

#[test]
fn stw_old_holders_remember_young_leaves() {
    stress(
        "stw_old_holders_remember_young_leaves",
        Mode::Stw,
        Link::Ref,
        false,
    );
}

#[test]
fn concurrent_old_holders_remember_young_values() {
    stress(
        "concurrent_old_holders_remember_young_values",
        Mode::Concurrent,
        Link::Value,
        false,
    );
}

#[test]
fn stw_old_holders_remember_young_values() {
    stress(
        "stw_old_holders_remember_young_values",
        Mode::Stw,
        Link::Value,
        false,
    );
}

#[test]
fn concurrent_in_place_compaction_remembers_young_slots() {
    stress(
        "concurrent_in_place_compaction_remembers_young_slots",
        Mode::Concurrent,
        Link::Ref,
        true,
    );
}

#[test]
fn stw_in_place_compaction_remembers_young_slots() {
    stress(
        "stw_in_place_compaction_remembers_young_slots",
        Mode::Stw,
        Link::Value,
        true,
    );
}

/// The planted bug: a store barrier that remembers nothing. The verifier must end the
/// process at a pause, naming the missing remembered-set bit, in both modes.
#[test]
fn a_missing_store_barrier_is_caught_by_the_verifier() {
    const TEST: &str = "a_missing_store_barrier_is_caught_by_the_verifier";
    match std::env::var(CHILD_ENV).as_deref() {
        Ok("concurrent") => return run(Mode::Concurrent, Link::Ref, false, true),
        Ok("stw") => return run(Mode::Stw, Link::Value, false, true),
        _ => {}
    }
    for mode in ["concurrent", "stw"] {
        let (status, stderr) = in_child(TEST, mode);
        assert!(
            !status.success(),
            "{mode}: the verifier missed the missing store barrier"
        );
        assert!(
            stderr.contains("is not in the remembered set"),
            "{mode}: the child failed, but not by the verifier's remembered-set check: \
             {status}\n{stderr}"
        );
    }
}

/// The barrier's two cheap exits and its slow path, one store each, on objects whose age
/// the test knows: a young holder, an old holder with an old value, an old holder with a
/// young value (remembered once however often it is stored to).
#[test]
fn only_old_to_young_stores_are_remembered() {
    // 64 MiB: the first small page is 3% of it, under the director's first warmup threshold
    // (10%), so no cycle of its own can promote the objects between their allocation and the
    // test's first look at their age (with 16 MiB, one page was 12.5%, and a warmup cycle
    // that the second allocation's poll let in made a new object old under CI's load).
    let heap = Heap::new(
        HeapConfig::new(64 * MIB)
            .mode(Mode::Stw)
            .verify(true)
            .track_generations(true)
            .continuous(false),
    )
    .unwrap();
    let mut m = heap.attach("t").unwrap();
    m.scope(|s| {
        let holder = s.alloc(1, 2, 0).unwrap();
        let value = s.alloc(1, 0, 8).unwrap();
        assert_eq!(s.is_old(holder), Some(false), "a new object is young");
        s.store(holder, 0, Some(value));
        assert_eq!(heap.remembered_slots(), Some(0));
        s.collect("test");
        assert_eq!(
            s.is_old(holder),
            Some(true),
            "a survivor of a full cycle is old"
        );
        assert_eq!(s.is_old(value), Some(true));
        s.store(holder, 1, Some(value));
        s.store(holder, 0, None);
        assert_eq!(heap.remembered_slots(), Some(0));
        let young = s.alloc(1, 0, 8).unwrap();
        assert_eq!(s.is_old(young), Some(false));
        assert_eq!(
            heap.memory_report().remembered_set_bytes,
            0,
            "no set before the first remembered slot"
        );
        let side_before = heap.memory_report().side_table_rss;
        s.store(holder, 1, Some(young));
        s.store(holder, 1, Some(young));
        assert_eq!(heap.remembered_set_stats().unwrap().barrier_remembered, 1);
        assert!(
            heap.memory_report().side_table_rss > side_before,
            "the bit's page of the side-table arena is resident now (was {side_before})"
        );
        assert_eq!(heap.remembered_slots(), Some(1));
        // One granule's set: two bitmaps of one bit per 8-byte word of 2 MiB.
        assert_eq!(
            heap.memory_report().remembered_set_bytes,
            2 * (2 * MIB / 8 / 8),
            "the memory report counts the holder's granule's set"
        );
        // The next full cycle's verifier finds the slot and its bit, then promotes the
        // young object: the set is empty again.
        s.collect("test");
        let r = heap.remembered_set_stats().unwrap();
        assert!(r.verified_young_slots >= 1, "{r:?}");
        assert_eq!(s.is_old(young), Some(true));
        assert_eq!(heap.remembered_slots(), Some(0));
    });
}

/// A remembered value slot costs its granule a third bitmap (which words are value slots),
/// and the memory report counts it.
#[test]
fn the_memory_report_counts_the_value_slot_bits() {
    let heap = Heap::new(
        HeapConfig::new(16 * MIB)
            .mode(Mode::Stw)
            .track_generations(true)
            .continuous(false),
    )
    .unwrap();
    let mut m = heap.attach("t").unwrap();
    m.scope(|s| {
        let holder = s.alloc_with_values(1, 0, 1, 0).unwrap();
        s.collect("test");
        assert_eq!(s.is_old(holder), Some(true));
        let young = s.alloc(1, 0, 8).unwrap();
        s.store_value(holder, 0, Value::Ref(young));
        assert_eq!(heap.remembered_slots(), Some(1));
        // Two bitmaps of one bit per 8-byte word of 2 MiB, and the value-slot bits.
        assert_eq!(
            heap.memory_report().remembered_set_bytes,
            3 * (2 * MIB / 8 / 8),
            "the memory report counts the value-slot bits"
        );
    });
}

/// With the bookkeeping off there is none to ask about.
#[test]
fn off_by_default() {
    let heap = Heap::new(HeapConfig::new(16 * MIB)).unwrap();
    assert!(heap.remembered_set_stats().is_none());
    assert_eq!(heap.memory_report().remembered_set_bytes, 0);
    assert!(!HeapConfig::new(16 * MIB).track_generations);
}
