//! Mutator threads mutate a checked graph while cycles run back to back, with the verifier on:
//! every object keeps its id, checksum and edges across concurrent marking and relocation.
use gc_runtime::{Global, Heap, HeapConfig, Mode, Scope};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long the mutators run at least, and at most while fewer than [`MIN_CYCLES`] cycles
/// have completed (on a loaded machine a cycle can take seconds).
const RUN_FOR: Duration = Duration::from_secs(3);
const RUN_AT_MOST: Duration = Duration::from_secs(30);
const MIN_CYCLES: usize = 3;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn checksum(id: u64) -> u64 {
    id.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xA5A5
}

const SLOTS: usize = 512;
const NODE: u32 = 7;

/// Check every node reachable from the table against the shadow model.
fn check(s: &mut Scope<'_>, table: &Global, shadow: &HashMap<u64, [u64; 2]>, slots: &[u64]) {
    s.scope(|s| {
        let t = s.from_global(table);
        for (i, &want) in slots.iter().enumerate() {
            let t = s.get(t);
            let node = t.load(i);
            match (node, want) {
                (None, 0) => {}
                (Some(n), id) if id != 0 => {
                    assert_eq!(n.read_u64(0), id, "slot {i}: wrong node id");
                    assert_eq!(n.read_u64(8), checksum(id), "node {id}: checksum");
                    let edges = shadow[&id];
                    for (e, &want_child) in edges.iter().enumerate() {
                        let got = n.load(e).map_or(0, |c| c.read_u64(0));
                        assert_eq!(got, want_child, "node {id} edge {e}");
                        if let Some(c) = n.load(e) {
                            assert_eq!(c.read_u64(8), checksum(got), "child {got}: checksum");
                        }
                    }
                }
                (n, id) => panic!("slot {i}: expected {id}, got {n:?}"),
            }
        }
    });
}

fn mutate(heap: &Heap, seed: u64, stop: &AtomicBool) -> u64 {
    let mut m = heap.attach(&format!("mutator-{seed}")).unwrap();
    let mut rng = Rng(seed | 1);
    let mut shadow: HashMap<u64, [u64; 2]> = HashMap::new();
    let mut slots = vec![0u64; SLOTS];
    let mut next_id = seed << 40;
    let mut ops = 0;
    m.scope(|s| {
        let t = s.alloc(1, SLOTS as u32, 0).unwrap();
        let table = s.global(t);
        while !stop.load(Ordering::Relaxed) {
            s.scope(|s| {
                for _ in 0..64 {
                    ops += 1;
                    let i = rng.below(SLOTS as u64) as usize;
                    next_id += 1;
                    let id = next_id;
                    let n = s.alloc(NODE, 2, 16 + rng.below(48) as usize).unwrap();
                    s.get(n).write_u64(0, id);
                    s.get(n).write_u64(8, checksum(id));
                    // Link to two random existing nodes (or null).
                    let t = s.from_global(&table);
                    let mut edges = [0u64; 2];
                    for (e, edge) in edges.iter_mut().enumerate() {
                        let j = rng.below(SLOTS as u64) as usize;
                        if let Some(c) = s.load(t, j) {
                            s.store(n, e, Some(c));
                            *edge = slots[j];
                        }
                    }
                    shadow.insert(id, edges);
                    s.store(t, i, Some(n));
                    slots[i] = id;
                    // Short-lived garbage.
                    for _ in 0..rng.below(4) {
                        s.alloc(9, 1, rng.below(200) as usize).unwrap();
                    }
                }
            });
            if ops % 4096 < 64 {
                check(s, &table, &shadow, &slots);
                // Forget shadow entries nothing refers to any more (keeps the map small).
                let mut live: std::collections::HashSet<u64> = slots.iter().copied().collect();
                for &id in &slots {
                    if let Some(e) = shadow.get(&id) {
                        live.extend(e.iter().copied());
                    }
                }
                shadow.retain(|k, _| live.contains(k));
            }
        }
        check(s, &table, &shadow, &slots);
    });
    ops
}

fn run(mode: Mode, threads: u64) {
    let heap = Heap::new(
        HeapConfig::new(64 << 20)
            .mode(mode)
            .verify(true)
            .continuous(true),
    )
    .unwrap();
    let stop = AtomicBool::new(false);
    let ops = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let (heap, stop) = (&heap, &stop);
                sc.spawn(move || mutate(heap, 0x1234 + t * 7919, stop))
            })
            .collect();
        let start = Instant::now();
        while !hs.iter().any(|h| h.is_finished())
            && (start.elapsed() < RUN_FOR
                || (start.elapsed() < RUN_AT_MOST && heap.stats().cycles.len() < MIN_CYCLES))
        {
            std::thread::sleep(Duration::from_millis(50));
        }
        // The cycles of the mutators' run: once they stop and drop their roots, the heap
        // keeps cycling back to back with nothing live, and on a loaded machine more of
        // those empty cycles than the heap keeps records of (`RECENT_EVENTS`) ran before
        // the threads were joined, so a later snapshot saw nothing relocated.
        let st = heap.stats();
        stop.store(true, Ordering::Relaxed);
        let ops = hs.into_iter().map(|h| h.join().unwrap()).sum();
        (ops, st)
    });
    let (ops, st): (u64, _) = ops;
    let relocated: u64 = st.cycles.iter().map(|c| c.bytes_relocated).sum();
    eprintln!(
        "{mode}: {ops} ops, {} cycles, {} pauses, {} bytes relocated, max pause {:?}",
        st.cycles.len(),
        st.pauses.len(),
        relocated,
        st.pauses.iter().map(|p| p.total_ns).max()
    );
    assert!(
        st.cycles.len() >= MIN_CYCLES,
        "{mode}: {} cycles in {RUN_AT_MOST:?}",
        st.cycles.len()
    );
    assert!(relocated > 0, "{mode}: nothing was relocated");
}

#[test]
fn graph_survives_concurrent_cycles_two_threads() {
    run(Mode::Concurrent, 2);
}

#[test]
fn graph_survives_stw_cycles_two_threads() {
    run(Mode::Stw, 2);
}
