//! The lock-free per-page structures under real threads: the forwarding table (many relocators
//! racing to forward the same objects to different copies: exactly one winner per object, every
//! loser and every reader sees the winner's offset) and the live map (markers racing on
//! overlapping objects: each object counted once in the live objects and live bytes, `newly_marked`
//! true exactly once per object, and the lazy reset when a new cycle starts).

use gc_core::{ForwardingEntries, LiveMap, Offset};
use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};

const THREADS: usize = 4;

/// The to-offset relocator `t` would copy object `i` to (distinct per thread and object).
fn to_offset(i: u64, t: usize) -> Offset {
    Offset::from_raw(0x4000_0000 + (i * THREADS as u64 + t as u64) * 64)
}

/// The order in which relocator `t` visits the objects: half go forward, half backward, each
/// starting at a different point, so races happen all over the table.
fn visit_order(t: usize, n: u64) -> Vec<u64> {
    let start = (t as u64 / 2) * n / 2;
    let mut v: Vec<u64> = (0..n).map(|k| (start + k) % n).collect();
    if t % 2 == 1 {
        v.reverse();
    }
    v
}

#[test]
fn forwarding_insert_race_has_one_winner_per_object() {
    const OBJECTS: u64 = 3000;
    for round in 0..10 {
        let table: Arc<ForwardingEntries> = Arc::new(ForwardingEntries::new(OBJECTS));
        let barrier = Arc::new(Barrier::new(THREADS + 1));
        let done = Arc::new(AtomicBool::new(false));
        let relocators: Vec<_> = (0..THREADS)
            .map(|t| {
                let (table, barrier) = (table.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    let mut results = Vec::with_capacity(OBJECTS as usize);
                    for i in visit_order(t, OBJECTS) {
                        let r = table.insert(i, to_offset(i, t));
                        let seen = match r {
                            Ok(to) => {
                                assert_eq!(to, to_offset(i, t));
                                to
                            }
                            Err(winner) => winner,
                        };
                        // Right after the race, the table answers with the winner.
                        assert_eq!(table.find(i), Some(seen));
                        results.push((i, r));
                    }
                    results
                })
            })
            .collect();
        // A reader (a mutator's barrier looking up forwarded objects): an entry, once seen,
        // never changes.
        let reader = {
            let (table, barrier, done) = (table.clone(), barrier.clone(), done.clone());
            std::thread::spawn(move || {
                barrier.wait();
                let mut seen: HashMap<u64, Offset> = HashMap::new();
                let mut i = round as u64;
                while !done.load(Ordering::Acquire) {
                    i = (i * 6364136223846793005 + 1442695040888963407) % OBJECTS;
                    if let Some(to) = table.find(i) {
                        let first = *seen.entry(i).or_insert(to);
                        assert_eq!(first, to, "entry {i} changed");
                    }
                }
                seen
            })
        };
        let results: Vec<Vec<(u64, Result<Offset, Offset>)>> =
            relocators.into_iter().map(|j| j.join().unwrap()).collect();
        done.store(true, Ordering::Release);
        let seen_by_reader = reader.join().unwrap();

        let mut winners: HashMap<u64, Offset> = HashMap::new();
        for (t, res) in results.iter().enumerate() {
            assert_eq!(res.len(), OBJECTS as usize);
            for &(i, r) in res {
                if let Ok(to) = r {
                    assert_eq!(to, to_offset(i, t));
                    assert!(winners.insert(i, to).is_none(), "object {i}: two winners");
                }
            }
        }
        assert_eq!(winners.len(), OBJECTS as usize, "every object has a winner");
        for res in &results {
            for &(i, r) in res {
                if let Err(w) = r {
                    assert_eq!(w, winners[&i], "object {i}: loser saw another offset");
                }
            }
        }
        for i in 0..OBJECTS {
            assert_eq!(table.find(i), Some(winners[&i]));
        }
        for (i, to) in seen_by_reader {
            assert_eq!(to, winners[&i], "reader saw a non-winner for {i}");
        }
        assert_eq!(table.len(), OBJECTS as usize);
        let entries: HashMap<u64, Offset> = table.entries().collect();
        assert_eq!(entries, winners);
        assert_eq!(table.find(OBJECTS + 7), None);
    }
}

#[test]
fn forwarding_lookup_of_a_missing_object_terminates_in_a_full_table() {
    // The smallest table has 16 entries; fill every one of them (twice the live objects it was
    // sized for, a caller bug) and look up an object that is not there: this must answer, not
    // spin forever.
    let t: ForwardingEntries = ForwardingEntries::new(0);
    let n = t.capacity() as u64;
    let o = |i: u64| Offset::from_raw(8 * i);
    for i in 0..n {
        assert_eq!(t.insert(i, o(i)), Ok(o(i)));
    }
    assert_eq!(t.len() as u64, n);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send((t.find(n + 1), t.find(3)));
    });
    let r = rx
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("find on a full table did not return");
    assert_eq!(r, (None, Some(o(3))));
}

/// Size of the object at position `i` (deterministic, so every marker adds the same bytes).
fn size_of(i: usize) -> u64 {
    16 + (i as u64 % 10) * 8
}

/// Marker `t`'s share of the objects: overlapping sets; `strong` differs between markers.
fn marks_of(t: usize, slots: usize, cycle: u64) -> Vec<(usize, bool)> {
    (0..slots)
        .filter(|&i| i % (t + 2) == 0 || i % 7 == (t + cycle as usize) % 7)
        .map(|i| (i, !(i + t).is_multiple_of(3)))
        .collect()
}

/// Run `THREADS` markers on `map` in cycle `seqnum`; check every count against the distinct
/// set of marked objects.
fn mark_concurrently(map: &Arc<LiveMap>, seqnum: u64, slots: usize) -> BTreeSet<usize> {
    let barrier = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let (map, barrier) = (map.clone(), barrier.clone());
            std::thread::spawn(move || {
                let work = marks_of(t, slots, seqnum);
                barrier.wait();
                let mut newly_marked = Vec::new();
                let mut newly_strong = Vec::new();
                for (i, strong) in work {
                    let r = map.mark(seqnum, i, strong, size_of(i));
                    assert!(map.is_marked(seqnum, i));
                    if r.newly_marked {
                        newly_marked.push(i);
                    }
                    if r.newly_strong {
                        assert!(strong);
                        newly_strong.push(i);
                    }
                }
                (newly_marked, newly_strong)
            })
        })
        .collect();
    let results: Vec<_> = handles.into_iter().map(|j| j.join().unwrap()).collect();

    let mut expected: BTreeSet<usize> = BTreeSet::new();
    let mut expected_strong: BTreeSet<usize> = BTreeSet::new();
    for t in 0..THREADS {
        for (i, strong) in marks_of(t, slots, seqnum) {
            expected.insert(i);
            if strong {
                expected_strong.insert(i);
            }
        }
    }
    let mut newly: Vec<usize> = results.iter().flat_map(|r| r.0.iter().copied()).collect();
    newly.sort();
    assert_eq!(
        newly,
        expected.iter().copied().collect::<Vec<_>>(),
        "newly_marked must be true exactly once per object"
    );
    let mut strong: Vec<usize> = results.iter().flat_map(|r| r.1.iter().copied()).collect();
    strong.sort();
    assert_eq!(
        strong,
        expected_strong.iter().copied().collect::<Vec<_>>(),
        "newly_strong must be true exactly once per strongly marked object"
    );
    assert_eq!(map.live_objects(seqnum), expected.len() as u64);
    assert_eq!(
        map.live_bytes(seqnum),
        expected.iter().map(|&i| size_of(i)).sum::<u64>()
    );
    let mut walked = BTreeSet::new();
    map.for_each_marked(seqnum, |i| {
        walked.insert(i);
    });
    assert_eq!(walked, expected);
    for i in 0..slots {
        assert_eq!(
            map.is_marked(seqnum, i),
            expected.contains(&i),
            "object {i}"
        );
        assert_eq!(
            map.is_strongly_marked(seqnum, i),
            expected_strong.contains(&i),
            "object {i}"
        );
    }
    expected
}

#[test]
fn live_map_counts_each_object_once_under_concurrent_marking() {
    const SLOTS: usize = 40_000;
    let map: Arc<LiveMap> = Arc::new(LiveMap::new(SLOTS));
    assert!(map.slots() >= SLOTS);
    let marked = mark_concurrently(&map, 1, SLOTS);
    assert!(marked.len() > SLOTS / 2 && marked.len() < SLOTS);
}

#[test]
fn live_map_resets_lazily_when_markers_race_into_a_new_cycle() {
    const SLOTS: usize = 20_000;
    let map: Arc<LiveMap> = Arc::new(LiveMap::new(SLOTS));
    let mut previous = mark_concurrently(&map, 1, SLOTS);
    for seqnum in 2..12 {
        // Before anyone marks in the new cycle, the map reports nothing for it and still
        // answers for the old one.
        assert!(!map.is_current(seqnum));
        assert_eq!(map.live_objects(seqnum), 0);
        assert_eq!(map.live_bytes(seqnum), 0);
        assert!(previous.iter().all(|&i| !map.is_marked(seqnum, i)));
        assert_eq!(map.live_objects(seqnum - 1), previous.len() as u64);
        // All markers race to be the first of the new cycle (the one that clears the map).
        let marked = mark_concurrently(&map, seqnum, SLOTS);
        assert!(map.is_current(seqnum));
        // Nothing of the old cycle survives: objects marked only then are unmarked now.
        let stale: Vec<usize> = previous.difference(&marked).copied().collect();
        assert!(!stale.is_empty(), "the cycles must mark different objects");
        assert!(stale.iter().all(|&i| !map.is_marked(seqnum, i)));
        assert_eq!(map.live_objects(seqnum - 1), 0, "the old cycle is gone");
        previous = marked;
    }
}

#[test]
fn live_counts_added_at_trace_time_count_each_object_once() {
    // Markers that learn an object's size only when they trace it mark with `mark_strong`,
    // which counts nothing, and the one that marked first adds the object and its size.
    const SLOTS: usize = 20_000;
    let map: Arc<LiveMap> = Arc::new(LiveMap::new(SLOTS));
    let barrier = Arc::new(Barrier::new(THREADS));
    let hs: Vec<_> = (0..THREADS)
        .map(|t| {
            let (map, barrier) = (map.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                for (i, _) in marks_of(t, SLOTS, 1) {
                    if map.mark_strong(1, i) {
                        map.add_live(1, 1, size_of(i));
                    }
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    let distinct: BTreeSet<usize> = (0..THREADS)
        .flat_map(|t| marks_of(t, SLOTS, 1).into_iter().map(|(i, _)| i))
        .collect();
    assert_eq!(map.live_objects(1), distinct.len() as u64);
    assert_eq!(
        map.live_bytes(1),
        distinct.iter().map(|&i| size_of(i)).sum::<u64>()
    );
}

#[test]
fn live_map_bits_of_neighbours_do_not_interfere() {
    // Positions that share a bitmap word, marked by different threads at once: strong and
    // finalizable bits of neighbours must not leak into each other.
    let map: Arc<LiveMap<AtomicU64>> = Arc::new(LiveMap::new(64));
    for round in 1..200u64 {
        let barrier = Arc::new(Barrier::new(2));
        let hs: Vec<_> = (0..2usize)
            .map(|t| {
                let (map, barrier) = (map.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    for i in (t..32).step_by(2) {
                        map.mark(round, i, i % 4 == t, 8);
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(map.live_objects(round), 32);
        assert_eq!(map.live_bytes(round), 32 * 8);
        for i in 0..32 {
            assert!(map.is_marked(round, i));
            assert_eq!(map.is_strongly_marked(round, i), i % 4 == i % 2, "pos {i}");
        }
        assert!(!map.is_marked(round, 40));
    }
}
