//! The minor (young-only) cycle (`Heap::collect_minor`, `Scope::collect_minor`): it marks
//! the young generation from the strong roots and the remembered set, takes every old object
//! as live, frees the young pages marking found empty, ages or promotes in place the others
//! (`in_place_promotion.rs` follows known objects through that) and moves nothing.
//!
//! A step-by-step test follows known objects through minors and majors (old holders whose
//! only link to a young leaf is a remembered slot, young garbage, weak handles to young and
//! old objects, a young object reachable only from a dead old one, which minors keep and the
//! next major reclaims), with the verifier on in every pause. A stress test runs mutators
//! storing young leaves into old holders while another thread requests minors and, now and
//! then, a major, checking a shadow model; it fails unless minors ran, scanned remembered
//! slots, freed young pages, aged and promoted pages and remembered promoted objects' slots. Planted bugs must make it fail: a minor that marks old
//! objects too (its scan can then be skipped unnoticed, so that plant is the scan dropping
//! its slots, which the verifier must catch at Pause Mark End).

mod support;
use gc_runtime::{CycleRecord, Heap, HeapConfig, Local, Mode, ObjRef, Scope};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::{is_leaf, leaf, Rng};

const MIB: u64 = 1 << 20;

fn generational(mib: u64) -> HeapConfig {
    HeapConfig::new(mib * MIB)
        .mode(Mode::Concurrent)
        .verify(true)
        .track_generations(true)
        .continuous(false)
}

/// Holder `h` of `table`.
fn holder<'a>(s: &'a Scope<'_>, table: Local<'_>, h: usize) -> ObjRef<'a> {
    s.get(table).load(h).unwrap()
}

/// The newest cycle record.
fn last_cycle(heap_stats: &gc_runtime::GcStats) -> CycleRecord {
    heap_stats.cycles.last().cloned().expect("a cycle ran")
}

#[test]
fn a_minor_needs_the_generational_bookkeeping_and_concurrent_mode() {
    let off = Heap::new(HeapConfig::new(16 * MIB).mode(Mode::Concurrent)).unwrap();
    let e = off.collect_minor().unwrap_err();
    assert!(e.contains("track_generations(true)"), "{e}");
    let stw = Heap::new(
        HeapConfig::new(16 * MIB)
            .mode(Mode::Stw)
            .track_generations(true),
    )
    .unwrap();
    let e = stw.collect_minor().unwrap_err();
    assert!(e.contains("Mode::Concurrent"), "{e}");
    let mut m = stw.attach("t").unwrap();
    m.scope(|s| assert!(s.collect_minor().is_err()));
    assert!(stw.stats().cycles.is_empty(), "no cycle ran");
}

/// Known objects through minors and majors (see the module documentation).
#[test]
fn minors_keep_what_old_objects_hold_and_free_young_garbage() {
    const HOLDERS: usize = 300;
    // Its pages hold a few objects each, which aging and promotion in place are about: the
    // minors' evacuation of sparse pages is off (tests/minor_evacuation.rs covers it).
    let heap = Heap::new(generational(64).young_evacuation_live_percent(0)).unwrap();
    let mut m = heap.attach("t").unwrap();
    m.scope(|s| {
        let table = s.alloc(1, HOLDERS as u32, 0).unwrap();
        for h in 0..HOLDERS {
            s.scope(|s| {
                let o = s.alloc(2, 2, 8).unwrap();
                s.get(o).write_u64(0, h as u64);
                s.store(table, h, Some(o));
            });
        }
        // A major: the table and the holders are old.
        s.collect("promote");
        assert_eq!(s.is_old(table), Some(true));
        // Young leaves linked only from old holders (each leaf holding a young child:
        // young-to-young, found by tracing), and a weak handle to one of them.
        for h in 0..HOLDERS {
            s.scope(|s| {
                let l = leaf(s, 1000 + h as u64);
                let c = leaf(s, 5000 + h as u64);
                s.store(l, 0, Some(c));
                holder(s, table, h).store(0, Some(s.get(l)));
            });
        }
        assert_eq!(heap.remembered_slots(), Some(HOLDERS as u64));
        // Holder 0 dies (old garbage) holding a young leaf that nothing else reaches: minors
        // take every old object as live, so they keep the leaf; the next major frees both.
        // (Each handle made in an inner scope, so no local handle keeps them.)
        let doomed_leaf = s.scope(|s| s.weak(s.root(holder(s, table, 0).load(0).unwrap())));
        let doomed_holder = s.scope(|s| s.weak(s.root(holder(s, table, 0))));
        s.get(table).store(0, None);
        // Young garbage, several pages of it, and a weak handle to a piece of it.
        let garbage_weak = s.scope(|s| {
            let g = s.alloc(7, 0, 64).unwrap();
            let w = s.weak(g);
            for _ in 0..20_000 {
                s.alloc(7, 0, 200).unwrap();
            }
            w
        });
        let check_leaves = |s: &mut Scope<'_>| {
            for h in 1..HOLDERS {
                let o = holder(s, table, h);
                assert_eq!(o.read_u64(0), h as u64, "holder {h}");
                let l = o.load(0).expect("leaf lost");
                assert!(is_leaf(l, 1000 + h as u64), "holder {h}'s leaf corrupted");
                let c = l.load(0).expect("child lost");
                assert!(is_leaf(c, 5000 + h as u64), "leaf {h}'s child corrupted");
            }
        };
        let before = heap.stats().cycles.len();
        s.collect_minor().unwrap();
        let stats = heap.stats();
        assert_eq!(stats.cycles.len(), before + 1);
        let minor = last_cycle(&stats);
        assert!(minor.minor, "{minor:?}");
        assert!(
            minor.pages_freed_empty > 0,
            "young garbage pages freed: {minor:?}"
        );
        assert!(
            minor.remembered_slots_scanned >= HOLDERS as u64,
            "{minor:?}"
        );
        // Young live objects: the leaves, their children and the doomed leaf (and its
        // child); nothing old is traced.
        assert!(
            minor.objects_marked >= 2 * HOLDERS as u64 && minor.objects_marked < 3 * HOLDERS as u64,
            "a minor traces the young objects only: {minor:?}"
        );
        assert!(
            garbage_weak.get(s).is_none(),
            "dead young object's weak handle cleared"
        );
        assert!(
            doomed_leaf.get(s).is_some(),
            "a minor keeps what old objects hold"
        );
        assert!(
            doomed_holder.get(s).is_some(),
            "a minor takes old objects as live"
        );
        check_leaves(s);
        let young = s.scope(|s| {
            let l = s.root(holder(s, table, 7).load(0).unwrap());
            s.is_old(l)
        });
        assert_eq!(
            young,
            Some(false),
            "the first minor ages the leaves' page (tenuring threshold 1, the default)"
        );
        // Every remembered slot still points young: remembered again by the scan.
        assert_eq!(heap.remembered_slots(), Some(HOLDERS as u64));
        // More minors: the colors rotate (the rule leaves one color after a minor whose
        // previous cycle was not the major); new stores between them.
        let mut colors = vec![minor.mark_color];
        for _ in 0..4 {
            // A new child for every third leaf (young to young), the old one garbage.
            for h in (1..HOLDERS).step_by(3) {
                s.scope(|s| {
                    let l = s.root(holder(s, table, h).load(0).unwrap());
                    let c = leaf(s, 5000 + h as u64);
                    s.store(l, 0, Some(c));
                });
            }
            s.collect_minor().unwrap();
            let r = last_cycle(&heap.stats());
            assert!(r.minor);
            colors.push(r.mark_color);
            check_leaves(s);
            assert!(doomed_leaf.get(s).is_some());
        }
        // The rule: no two cycles in a row share a color, none takes the last major's.
        let major_color = stats.cycles[before - 1].mark_color;
        for w in colors.windows(2) {
            assert_ne!(w[0], w[1], "{colors:?}");
        }
        assert!(
            colors.iter().all(|&c| c != major_color),
            "{colors:?} vs {major_color:?}"
        );
        // The next major reclaims the dead holder and what only it held.
        s.collect("major");
        assert!(!last_cycle(&heap.stats()).minor);
        assert!(
            doomed_holder.get(s).is_none(),
            "the major frees old garbage"
        );
        assert!(
            doomed_leaf.get(s).is_none(),
            "and the young garbage only it held"
        );
        check_leaves(s);
        // And minors after it.
        s.collect_minor().unwrap();
        check_leaves(s);
    });
    // The remembered slots each minor scanned: the holders' slots while their leaves are
    // young (the first minor ages the leaves' page, the second begins its promotion, which
    // remembers the leaves' slots too, and the third finds them old), the new children's
    // slots after; and after the major, which left nothing young and whose copies had no
    // young slot, none.
    let scanned: Vec<u64> = heap
        .stats()
        .cycles
        .iter()
        .filter(|c| c.minor)
        .map(|c| c.remembered_slots_scanned)
        .collect();
    assert!(
        scanned[..3].iter().all(|&n| n >= HOLDERS as u64),
        "{scanned:?}"
    );
    assert_eq!(scanned.last(), Some(&0), "{scanned:?}");
    let r = heap.remembered_set_stats().unwrap();
    assert!(r.verifications > 0 && r.verified_young_slots > 0, "{r:?}");
}

/// Holders per mutator, slots per holder.
const HOLDERS: usize = 1_000;
const SLOTS: usize = 4;

/// One mutator: old holders (a major promotes them), young leaves stored into random
/// slots, some cleared; the model checked now and then and at the end.
fn mutate(heap: &Heap, thread: u64, stop: &AtomicBool) -> u64 {
    let mut m = heap.attach(&format!("mutator-{thread}")).unwrap();
    let mut rng = Rng(0x4d1 ^ thread);
    let mut expected = vec![[0u64; SLOTS]; HOLDERS];
    let mut next_id = (thread + 1) << 40;
    let mut checks = 0;
    let check = |o: ObjRef<'_>, h: usize, e: &[u64; SLOTS]| {
        assert_eq!(o.read_u64(0), h as u64, "holder {h} corrupted");
        for (j, &id) in e.iter().enumerate() {
            match o.load(j) {
                None => assert_eq!(id, 0, "leaf {id:#x} of holder {h} slot {j} lost"),
                Some(l) => {
                    assert!(
                        is_leaf(l, id),
                        "holder {h} slot {j}: wrong or corrupted leaf"
                    );
                    if let Some(c) = l.load(0) {
                        assert!(is_leaf(c, !id), "leaf {id:#x}'s child corrupted");
                    }
                }
            }
        }
    };
    m.scope(|s| {
        let table = s.alloc(1, HOLDERS as u32, 0).unwrap();
        for h in 0..HOLDERS {
            s.scope(|s| {
                let o = s.alloc(2, SLOTS as u32, 8).unwrap();
                s.get(o).write_u64(0, h as u64);
                s.store(table, h, Some(o));
            });
        }
        while !stop.load(Ordering::Relaxed) {
            s.scope(|s| {
                for _ in 0..32 {
                    let (h, j) = (
                        rng.below(HOLDERS as u64) as usize,
                        rng.below(SLOTS as u64) as usize,
                    );
                    next_id += 1;
                    let Ok(l) = s.alloc(3, 1, 16) else { return };
                    let o = s.get(l);
                    o.write_u64(0, next_id);
                    o.write_u64(8, !next_id);
                    if rng.below(2) == 0 {
                        if let Ok(c) = s.alloc(3, 1, 16) {
                            let co = s.get(c);
                            co.write_u64(0, !next_id);
                            co.write_u64(8, next_id);
                            s.store(l, 0, Some(c));
                        }
                    }
                    s.get(table).load(h).unwrap().store(j, Some(s.get(l)));
                    expected[h][j] = next_id;
                    // Garbage beside it.
                    let _ = s.alloc(9, 0, 100);
                }
                let (h, j) = (
                    rng.below(HOLDERS as u64) as usize,
                    rng.below(SLOTS as u64) as usize,
                );
                s.get(table).load(h).unwrap().store(j, None);
                expected[h][j] = 0;
                let first = rng.below(HOLDERS as u64) as usize;
                for k in 0..8 {
                    let h = (first + k) % HOLDERS;
                    check(s.get(table).load(h).unwrap(), h, &expected[h]);
                    checks += 1;
                }
            });
            s.poll();
        }
        for (h, e) in expected.iter().enumerate() {
            check(s.get(table).load(h).unwrap(), h, e);
            checks += 1;
        }
    });
    checks
}

/// The stress scenario: two mutators, minors requested back to back with a major every
/// eighth request. With a planted bug (`skip-scan`: the minors' scan drops every remembered
/// slot; `old-color`: minors color pointers to old objects with their mark color;
/// `skip-promoted`: in-place promotion remembers no promoted object's slot;
/// `skip-promoted-color`: it remembers only the slots pointing young; `drop-minor-table`: an
/// evacuating minor drops its forwarding table a cycle early) it must not return: the
/// verifier (or, for `drop-minor-table`, the mutators' model) ends the process.
fn run(planted: Option<&str>) {
    // The evacuation limit: the in-place promotion's plants need pages promoted, so no
    // evacuation; the evacuation's plant the default limit, under which most of these
    // young pages are evacuated; the stress a limit under which minors evacuate some
    // pages and age or promote the others in place.
    let percent = match planted {
        Some("skip-promoted" | "skip-promoted-color") => 0,
        Some("drop-minor-table") => 25,
        _ => STRESS_EVACUATION_PERCENT,
    };
    // The threshold fixed at 1, the one these paths were sized for: under the adaptive
    // default the threshold climbs while the leaves still mostly die, and a loaded run once
    // promoted no page in place within its 60 s (runs promote 1-2 pages in 3 s with it).
    let heap = Arc::new(
        Heap::new(
            generational(48)
                .gc_threads(1)
                .young_evacuation_live_percent(percent)
                .tenuring_threshold(1),
        )
        .unwrap(),
    );
    match planted {
        Some("skip-scan") => heap.skip_remembered_scan_for_tests(),
        Some("old-color") => heap.color_old_in_minor_for_tests(),
        Some("skip-promoted") => heap.skip_promoted_remembering_for_tests(),
        Some("skip-promoted-color") => heap.skip_promoted_color_for_tests(),
        Some("drop-minor-table") => heap.drop_minor_forwarding_early_for_tests(),
        _ => {}
    }
    let stop = Arc::new(AtomicBool::new(false));
    let threads: Vec<_> = (0..2)
        .map(|t| {
            let (heap, stop) = (heap.clone(), stop.clone());
            std::thread::spawn(move || mutate(&heap, t, &stop))
        })
        .collect();
    let requests = AtomicU64::new(0);
    let start = Instant::now();
    let minors = |h: &Heap| h.stats().cycles.iter().filter(|c| c.minor).count();
    let freed = |h: &Heap| {
        h.stats()
            .cycles
            .iter()
            .filter(|c| c.minor)
            .map(|c| c.pages_freed_empty)
            .sum::<u64>()
    };
    let evacuated = |h: &Heap| {
        h.stats()
            .cycles
            .iter()
            .map(|c| c.objects_evacuated_by_minor)
            .sum::<u64>()
    };
    // Promotion in place reached: pages aged and promoted (the default threshold, 1), and
    // promoted objects' slots remembered (their leaves' children, in the minor's color);
    // and sparse young pages evacuated by minors.
    let enough = |h: &Heap| {
        let r = h.remembered_set_stats().unwrap();
        minors(h) >= 30
            && evacuated(h) > 0
            && freed(h) > 0
            && r.scanned_kept > 0
            && r.pages_aged > 0
            && r.pages_promoted_in_place > 0
            && r.promoted_slots_remembered > 0
            && h.stats().cycles.iter().filter(|c| !c.minor).count() >= 3
    };
    while !threads.iter().any(|t| t.is_finished())
        && start.elapsed() < Duration::from_secs(60)
        && (start.elapsed() < Duration::from_secs(3) || !enough(&heap))
    {
        let n = requests.fetch_add(1, Ordering::Relaxed);
        if n % 8 == 7 {
            heap.collect("major").unwrap();
        } else {
            heap.collect_minor().unwrap();
        }
    }
    stop.store(true, Ordering::Relaxed);
    let checks: u64 = threads
        .into_iter()
        .map(|t| t.join().expect("a mutator failed its checks"))
        .sum();
    let r = heap.remembered_set_stats().unwrap();
    let stats = heap.stats();
    eprintln!(
        "{} cycles ({} minors, {} young pages freed by minors, {} evacuated, {} objects \
         evacuated), {checks} holders checked; {r:?}",
        stats.cycles.len(),
        minors(&heap),
        freed(&heap),
        stats
            .cycles
            .iter()
            .filter(|c| c.minor)
            .map(|c| c.pages_relocated)
            .sum::<u64>(),
        evacuated(&heap)
    );
    if let Some(p) = planted {
        panic!("the planted {p} went unnoticed: {r:?}");
    }
    assert!(checks > 0);
    assert!(enough(&heap), "a path was not reached: {r:?}");
}

const CHILD_ENV: &str = "ZRS_MINOR_CHILD";

/// The stress's `HeapConfig::young_evacuation_live_percent` (see `run`). Its leaves' pages
/// thin out between minors, so a higher limit evacuates a page before it can be promoted:
/// with 10, one run promoted no page in 60 s; with 5, one run in five promoted none; with 2,
/// fourteen runs in a row promoted 12-48 pages each within 3 s (and evacuated 232-311).
const STRESS_EVACUATION_PERCENT: u8 = 2;

#[test]
fn minors_and_majors_under_stores_keep_the_model() {
    if std::env::var(CHILD_ENV).is_ok() {
        return run(None);
    }
    let (status, stderr) = support::run_child(
        "minors_and_majors_under_stores_keep_the_model",
        CHILD_ENV,
        "stress",
        Duration::from_secs(150),
    );
    eprintln!("{stderr}");
    assert!(status.success(), "the child failed: {status}\n{stderr}");
}

/// The planted bug: a minor's scan that drops the remembered slots. Old holders' slots keep
/// pointing young without the mark color, and young leaves held only by them go unmarked:
/// the verifier must end the process at Pause Mark End.
#[test]
fn a_skipped_remembered_scan_is_caught() {
    if std::env::var(CHILD_ENV).is_ok() {
        return run(Some("skip-scan"));
    }
    // An old holder's slot the scan skipped still points young without the minor's mark
    // color (or its leaf is unmarked): the verifier's Mark End check.
    support::planted_bug_caught(
        "a_skipped_remembered_scan_is_caught",
        CHILD_ENV,
        Duration::from_secs(150),
        "GC verification failed at MarkEnd",
    );
}

/// The planted bug of the first design: a minor heals pointers to old objects to its own mark
/// color. Mutators' loads and stores then leave that color on old-to-old slots no later minor
/// visits; the verifier must end the process (at a minor's Mark End, where a pointer to an
/// old object must be Remapped or the last major's color, or at a Mark Start whose color a
/// live slot already carries).
#[test]
fn a_minor_coloring_old_pointers_is_caught() {
    if std::env::var(CHILD_ENV).is_ok() {
        return run(Some("old-color"));
    }
    support::planted_bug_caught(
        "a_minor_coloring_old_pointers_is_caught",
        CHILD_ENV,
        Duration::from_secs(150),
        "GC verification failed",
    );
}

/// Planted: in-place promotion remembers none of the promoted objects' slots. A leaf
/// promoted while its child (or a slot it holds) is on a younger page, or whose slot
/// carries the minor's color, is left out: the verifier must end the process (at the next
/// Mark Start's remembered-set check, or the next minor's Mark End color check).
#[test]
fn unremembered_promoted_slots_are_caught() {
    planted_run("unremembered_promoted_slots_are_caught", "skip-promoted");
}

/// Planted: in-place promotion remembers only the promoted objects' slots that point young.
/// A promoted leaf's slot to its child promoted with it keeps the minor's color, which no
/// later minor heals: the verifier must end the process at a minor's Mark End.
#[test]
fn promoted_slots_of_the_minor_color_left_unhealed_are_caught() {
    planted_run(
        "promoted_slots_of_the_minor_color_left_unhealed_are_caught",
        "skip-promoted-color",
    );
}

/// Planted: an evacuating minor drops its forwarding table when its relocation ends, not
/// after the next cycle's marking. A root, young object or remembered slot still carrying
/// its color then leads to a freed from-page (or memory reused since): the verifier must end
/// the process at the next Pause Mark Start.
#[test]
fn a_minor_table_dropped_a_cycle_early_is_caught() {
    planted_run(
        "a_minor_table_dropped_a_cycle_early_is_caught",
        "drop-minor-table",
    );
}

fn planted_run(test: &str, plant: &str) {
    if std::env::var(CHILD_ENV).is_ok() {
        return run(Some(plant));
    }
    let (status, stderr) = support::run_child(test, CHILD_ENV, "planted", Duration::from_secs(150));
    assert!(
        !status.success(),
        "the planted {plant} went unnoticed\n{stderr}"
    );
    // A table dropped early can first be met by a mutator's load of a stale pointer (the
    // verifier runs only in pauses): the leaf it reads is a stranger's or garbage, and the
    // model's check says so, or the stranger has fewer slots than the leaf it was taken for
    // and the slot accessor's range check panics (gc-core's `slot_out_of_range`; 2 runs of
    // 13 failed this test on a loaded machine before it was accepted, the one whose output
    // was kept with that panic), or the from-page's memory is unmapped and the read faults
    // (in a mutator, or in the GC driver, which then aborts).
    let caught = |l: &str| {
        l.contains("GC verification failed")
            || (plant == "drop-minor-table"
                && (l.contains("wrong or corrupted leaf")
                    || (l.contains("slot ") && l.contains(" out of range ("))
                    || l.contains("fatal: the GC driver")))
    };
    let faulted = {
        use std::os::unix::process::ExitStatusExt;
        plant == "drop-minor-table" && status.signal() == Some(11)
    };
    assert!(
        faulted || stderr.lines().any(caught),
        "the child failed, but neither in the verifier nor in the model: {status}\n{stderr}"
    );
    let at = stderr
        .lines()
        .find(|l| caught(l))
        .unwrap_or(if faulted { "SIGSEGV" } else { "" });
    eprintln!("{plant}: {at}");
}

/// What a minor costs beside a major on one heap: a large old live set (100k objects,
/// promoted by a major), then rounds of 20k young live objects and garbage, each collected by
/// a minor and, on alternate rounds, a major. The minor must trace only the young objects
/// (the count is exact up to the tables); the CPU times are printed for the engineering notes,
/// not asserted (`--nocapture`).
#[test]
fn a_minor_traces_the_young_generation_only() {
    const OLD: usize = 100_000;
    const YOUNG: usize = 20_000;
    let heap = Heap::new(
        HeapConfig::new(256 * MIB)
            .mode(Mode::Concurrent)
            .track_generations(true)
            .continuous(false),
    )
    .unwrap();
    let mut m = heap.attach("t").unwrap();
    let (mut minors, mut majors) = (Vec::new(), Vec::new());
    m.scope(|s| {
        let old = s.alloc(1, OLD as u32, 0).unwrap();
        for i in 0..OLD {
            s.scope(|s| {
                let o = s.alloc(2, 1, 24).unwrap();
                s.store(old, i, Some(o));
            });
        }
        s.collect("promote");
        for round in 0..6 {
            s.scope(|s| {
                let young = s.alloc(1, YOUNG as u32, 0).unwrap();
                for i in 0..YOUNG {
                    s.scope(|s| {
                        let o = s.alloc(3, 1, 24).unwrap();
                        s.store(young, i, Some(o));
                        let _garbage = s.alloc(9, 0, 64).unwrap();
                    });
                }
                s.collect_minor().unwrap();
                minors.push(last_cycle(&heap.stats()));
                if round % 2 == 1 {
                    s.collect("major");
                    majors.push(last_cycle(&heap.stats()));
                }
            });
        }
    });
    for c in minors.iter().chain(&majors) {
        eprintln!(
            "{}: {} objects marked, GC CPU {} us, {} us long, {} remembered slots scanned",
            if c.minor { "minor" } else { "major" },
            c.objects_marked,
            c.gc_cpu_ns / 1000,
            c.duration_ns / 1000,
            c.remembered_slots_scanned
        );
    }
    for c in &minors {
        assert!(c.minor);
        assert!(
            c.objects_marked >= YOUNG as u64 && c.objects_marked <= YOUNG as u64 + 2,
            "a minor traces the young live objects and their table only: {c:?}"
        );
    }
    for c in &majors {
        assert!(
            c.objects_marked > OLD as u64,
            "a major traces the old live set: {c:?}"
        );
    }
}

/// While the store barrier does not remember (what the `generational` director does between
/// minors that do not pay; a test hook asks for it here), old-to-young stores set no bit, the
/// verifier does not check the set, and a minor asked for runs as a full cycle, which
/// collects the young generation too and makes the barrier remember again (the embedder
/// asks for minors): a store after it is remembered, and the minor that follows keeps what
/// only an old holder reaches. The verifier runs in every pause.
#[test]
fn a_minor_asked_for_while_nothing_is_remembered_runs_as_a_full_cycle() {
    let heap = Heap::new(generational(64)).unwrap();
    heap.stop_remembering_at_next_major_for_tests();
    let mut m = heap.attach("t").unwrap();
    m.scope(|s| {
        let table = s.alloc(1, 4, 0).unwrap();
        s.collect("stop remembering");
        assert_eq!(s.is_old(table), Some(true));
        let unremembered = || heap.remembered_set_stats().unwrap().majors_unremembered;
        assert_eq!(unremembered(), 1);
        s.scope(|s| {
            let l = leaf(s, 7);
            s.store(table, 0, Some(l));
        });
        assert_eq!(
            heap.remembered_slots(),
            Some(0),
            "no bit while not remembering"
        );
        let before = heap.stats().cycles.len();
        s.collect_minor().unwrap();
        let stats = heap.stats();
        assert_eq!(stats.cycles.len(), before + 1);
        assert!(!last_cycle(&stats).minor, "the minor ran as a full cycle");
        assert_eq!(unremembered(), 1, "that full cycle remembers again");
        assert!(is_leaf(s.get(table).load(0).unwrap(), 7));
        s.scope(|s| {
            let l = leaf(s, 8);
            s.store(table, 1, Some(l));
        });
        assert_eq!(heap.remembered_slots(), Some(1));
        s.collect_minor().unwrap();
        assert!(last_cycle(&heap.stats()).minor, "a minor now");
        assert!(is_leaf(s.get(table).load(0).unwrap(), 7));
        assert!(
            is_leaf(s.get(table).load(1).unwrap(), 8),
            "kept through its remembered slot"
        );
        s.collect("a full cycle after it");
        assert!(is_leaf(s.get(table).load(1).unwrap(), 8));
    });
}
