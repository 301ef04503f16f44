//! The `generational` mode end to end (`Mode::Generational`): the director starts minors on
//! its own (young occupancy, or the allocation rate's minor line) and majors by the whole
//! heap's rules, with the verifier on in every pause and mutators checking their objects
//! against a model; and an allocation stall on a tiny heap whose minors free nothing ends in
//! a major, never in a mutator waiting for a minor forever.
//!
//! Each scenario runs in a child process (a verifier failure aborts it, and a hang is ended
//! by the parent's time limit).

mod support;
use gc_runtime::{GcCause, Heap, HeapConfig, Mode, ObjRef};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::{is_leaf, Rng};

const MIB: u64 = 1 << 20;
const CHILD_ENV: &str = "ZRS_GENERATIONAL_CHILD";

/// Holders per mutator, slots per holder.
const HOLDERS: usize = 500;
const SLOTS: usize = 4;

/// One mutator: a table of holders (old after the first major); every 100th round young
/// leaves stored into random slots of random holders (remembered old-to-young slots), the
/// other rounds only young garbage (about 2.5 MiB between two rounds of leaves, so some young
/// pages hold no survivor and a minor frees them: minors free only empty young pages); the
/// model checked now and then and at the end. Returns the holders checked.
fn mutate(heap: &Heap, thread: u64, stop: &AtomicBool) -> u64 {
    let mut m = heap.attach(&format!("mutator-{thread}")).unwrap();
    let mut rng = Rng(0x9e4 ^ thread);
    let mut expected = vec![[0u64; SLOTS]; HOLDERS];
    let mut next_id = (thread + 1) << 40;
    let mut checks = 0;
    let check = |o: ObjRef<'_>, h: usize, e: &[u64; SLOTS]| {
        assert_eq!(o.read_u64(0), h as u64, "holder {h} corrupted");
        for (j, &id) in e.iter().enumerate() {
            match o.load(j) {
                None => assert_eq!(id, 0, "leaf {id:#x} of holder {h} slot {j} lost"),
                Some(l) => assert!(is_leaf(l, id), "holder {h} slot {j}: wrong leaf"),
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
        let mut round = 0u64;
        while !stop.load(Ordering::Relaxed) {
            round += 1;
            if !round.is_multiple_of(100) {
                s.scope(|s| {
                    for _ in 0..64 {
                        s.alloc(9, 0, 400).expect("garbage");
                    }
                });
                s.poll();
                continue;
            }
            s.scope(|s| {
                for _ in 0..64 {
                    let (h, j) = (
                        rng.below(HOLDERS as u64) as usize,
                        rng.below(SLOTS as u64) as usize,
                    );
                    next_id += 1;
                    let l = s.alloc(3, 1, 16).expect("a leaf");
                    let o = s.get(l);
                    o.write_u64(0, next_id);
                    o.write_u64(8, !next_id);
                    s.get(table).load(h).unwrap().store(j, Some(s.get(l)));
                    expected[h][j] = next_id;
                    // Young garbage beside it: most of what is allocated dies young.
                    s.alloc(9, 0, 400).expect("garbage");
                }
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

/// Cycles (minor, started by the director), (major, started by the director) and the young
/// pages minors freed, over the heap's recent cycle records.
fn director_cycles(heap: &Heap) -> (u64, u64, u64) {
    let stats = heap.stats();
    let mut counts = (0, 0, 0);
    for c in &stats.cycles {
        assert_eq!(
            c.minor,
            c.cause.is_minor(),
            "cycle {}: {:?}",
            c.cycle,
            c.cause
        );
        if c.minor {
            assert_ne!(c.cause, GcCause::MinorRequested, "nobody requested a minor");
            counts.0 += 1;
            counts.2 += c.pages_freed_empty;
        } else {
            assert!(!c.cause.is_explicit(), "nobody requested a major");
            counts.1 += 1;
        }
    }
    counts
}

/// Two mutators on a 96 MiB generational heap with an 8 MiB young generation, no cycle
/// requested: runs until the director started enough minors and majors (at most 90 s).
fn director_scenario() {
    let config = HeapConfig::new(96 * MIB)
        .mode(Mode::Generational)
        .young_size(8 * MIB)
        .verify(true)
        .gc_threads(1);
    let heap = Arc::new(Heap::new(config).unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let threads: Vec<_> = (0..2)
        .map(|t| {
            let (heap, stop) = (heap.clone(), stop.clone());
            std::thread::spawn(move || mutate(&heap, t, &stop))
        })
        .collect();
    let start = Instant::now();
    let enough = |h: &Heap| {
        let (minors, majors, freed) = director_cycles(h);
        minors >= 10 && majors >= 4 && freed >= 5
    };
    while !threads.iter().any(|t| t.is_finished())
        && start.elapsed() < Duration::from_secs(90)
        && !enough(&heap)
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    stop.store(true, Ordering::Relaxed);
    let checks: u64 = threads
        .into_iter()
        .map(|t| t.join().expect("a mutator failed its checks"))
        .sum();
    let (minors, majors, freed) = director_cycles(&heap);
    let stats = heap.stats();
    let causes: std::collections::BTreeMap<String, usize> =
        stats.cycles.iter().fold(Default::default(), |mut m, c| {
            *m.entry(c.cause.name().to_string()).or_default() += 1;
            m
        });
    let r = heap
        .remembered_set_stats()
        .expect("generational bookkeeping");
    eprintln!(
        "{minors} minors and {majors} majors started by the director ({causes:?}), {freed} \
         young pages freed by minors, {checks} holders checked; {r:?}"
    );
    assert!(checks >= (2 * HOLDERS) as u64);
    assert!(
        r.barrier_remembered > 0,
        "the store barrier remembered nothing"
    );
    assert!(enough(&heap), "a path was not reached: {causes:?}");
}

#[test]
fn the_director_starts_minors_and_majors_under_allocation() {
    if std::env::var(CHILD_ENV).is_ok() {
        return director_scenario();
    }
    let (status, stderr) = support::run_child(
        "the_director_starts_minors_and_majors_under_allocation",
        CHILD_ENV,
        "director",
        Duration::from_secs(150),
    );
    eprintln!("{stderr}");
    assert!(status.success(), "the child failed: {status}\n{stderr}");
}

/// A tiny generational heap (8 MiB, pacing off) whose live leaves are spread over every young
/// page, so a minor frees (almost) nothing, while another thread requests minors back to
/// back: the mutator fills the heap and stalls, and its stall must get a major (which
/// compacts) although minor requests are always pending. Bounded: a stall left waiting for
/// minors forever hangs the child, which the parent's limit ends.
fn stall_scenario() {
    const LIVE: usize = 6_000;
    const ROUNDS: u64 = 400_000;
    let config = HeapConfig::new(8 * MIB)
        .mode(Mode::Generational)
        .young_size(2 * MIB)
        .pacing(false)
        .verify(true)
        .gc_threads(1);
    let heap = Arc::new(Heap::new(config).unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let requester = {
        let (heap, stop) = (heap.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                heap.collect_minor().unwrap();
                n += 1;
            }
            n
        })
    };
    let mut m = heap.attach("filler").unwrap();
    let mut rng = Rng(0x57a11);
    let mut expected = vec![0u64; LIVE];
    m.scope(|s| {
        // 6,000 leaves of 256 bytes and more: about 1.7 MiB live, spread over the young pages
        // as they are replaced at random.
        let ring = s.alloc(1, LIVE as u32, 0).unwrap();
        for round in 1..=ROUNDS {
            s.scope(|s| {
                let i = rng.below(LIVE as u64) as usize;
                let l = s
                    .alloc(3, 0, 256)
                    .expect("the live set fits: a stall must not fail");
                let o = s.get(l);
                o.write_u64(0, round);
                o.write_u64(8, !round);
                s.store(ring, i, Some(l));
                expected[i] = round;
                s.alloc(9, 0, 512)
                    .expect("garbage fits: a stall must not fail");
            });
            if round.is_multiple_of(20_000) {
                for (i, &id) in expected.iter().enumerate() {
                    match s.get(ring).load(i) {
                        None => assert_eq!(id, 0, "slot {i}: leaf {id} lost"),
                        Some(o) => assert!(is_leaf(o, id), "slot {i}: wrong leaf"),
                    }
                }
            }
        }
    });
    drop(m);
    stop.store(true, Ordering::Relaxed);
    let minors_requested = requester.join().unwrap();
    let stats = heap.stats();
    let stalls = stats.totals.stalls.len();
    let stall_majors = stats
        .cycles
        .iter()
        .filter(|c| c.cause == GcCause::AllocationStall)
        .inspect(|c| assert!(!c.minor, "a stall's cycle must be a major"))
        .count();
    let minors = stats.cycles.iter().filter(|c| c.minor).count();
    let minor_frees: u64 = stats
        .cycles
        .iter()
        .filter(|c| c.minor)
        .map(|c| c.pages_freed_empty)
        .sum();
    eprintln!(
        "{stalls} stalls ({} failed), {stall_majors} majors for stalls, {minors} minors \
         ({minors_requested} requested) freeing {minor_frees} young pages in all",
        stats.totals.failed_stalls
    );
    assert_eq!(stats.totals.failed_stalls, 0, "a stall failed");
    assert!(
        stalls > 0,
        "the mutator never stalled: the scenario missed its point"
    );
    assert!(stall_majors > 0, "no major ran for a stall");
    assert!(minors > 0, "no minor ran");
}

#[test]
fn a_stall_gets_a_major_when_minors_free_nothing() {
    if std::env::var(CHILD_ENV).is_ok() {
        return stall_scenario();
    }
    let (status, stderr) = support::run_child(
        "a_stall_gets_a_major_when_minors_free_nothing",
        CHILD_ENV,
        "stall",
        Duration::from_secs(150),
    );
    eprintln!("{stderr}");
    assert!(status.success(), "the child failed: {status}\n{stderr}");
}
