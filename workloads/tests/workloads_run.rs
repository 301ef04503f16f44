//! binary-trees, lru-cache and message-engine on a real heap: each runs briefly through
//! `runner::run_workload` in every mode, and their heap data structures are checked directly
//! through their public parts (the Benchmarks Game's output, LRU order, deliveries).

use gc_runtime::{Heap, HeapConfig};
use workloads::latency::LatencyHistogram;
use workloads::runner::run_workload;
use workloads::workloads::{binary_trees, lru_cache, message_engine};
use workloads::{Mode, RunConfig, RunResult, WorkloadKind};

const HEAP: u64 = 64 << 20;
const LIVE: u64 = HEAP / 2;
const DURATION_MS: u64 = 500;

fn run(workload: WorkloadKind, mode: Mode) -> Result<RunResult, String> {
    run_workload(&RunConfig::new(workload, mode, HEAP, LIVE, DURATION_MS))
}

/// Concurrent, stw and generational runs do work, collect, and record request latency where
/// the workload serves requests; an epsilon run either finishes or fails with a clear
/// out-of-memory error.
fn runs_in_every_mode(workload: WorkloadKind) {
    for mode in [Mode::Concurrent, Mode::Stw, Mode::Generational] {
        let r = run(workload, mode).unwrap_or_else(|e| panic!("{workload} {mode}: {e}"));
        assert!(r.operations > 0, "{workload} {mode}: no operations");
        assert!(r.ops_per_sec > 0.0);
        assert!(
            r.measured_cycles().count() > 0,
            "{workload} {mode}: no GC cycle in the measured phase ({} in all)",
            r.gc.cycles.len()
        );
        assert!(r.gc.stalls.iter().all(|s| !s.failed), "{workload} {mode}");
        // Only the generational mode keeps a remembered set, and the run says what it did.
        assert_eq!(
            r.remembered_set.is_some(),
            mode == Mode::Generational,
            "{workload} {mode}: {:?}",
            r.remembered_set
        );
        // Both meters ran through the measured phase (extended while it lacked complete
        // cycles), in rounds of at least 1 ms.
        let measured_ms = DURATION_MS + r.extended_by_ms;
        for (meter, samples) in [("hiccup", &r.hiccup), ("control", &r.control_hiccup)] {
            let rounds = samples.overshoot_ns.len() as u64;
            assert!(
                (10..=2 * measured_ms).contains(&rounds),
                "{workload} {mode}: {rounds} {meter} meter rounds in {measured_ms} ms"
            );
        }
        match (workload.has_requests(), &r.request_latency) {
            (true, Some(l)) => check_latency(workload, mode, &r, l),
            (false, None) => {}
            (want, got) => panic!(
                "{workload} {mode}: latency histogram expected {want}, present {}",
                got.is_some()
            ),
        }
    }
    match run(workload, Mode::Epsilon) {
        Ok(r) => {
            assert!(r.operations > 0, "{workload} epsilon: no operations");
            assert!(r.gc.cycles.is_empty(), "epsilon never collects");
        }
        Err(e) => {
            assert!(e.contains("out of memory"), "{workload} epsilon: {e}");
            assert!(e.contains(workload.name()), "{workload} epsilon: {e}");
        }
    }
}

fn check_latency(workload: WorkloadKind, mode: Mode, r: &RunResult, l: &LatencyHistogram) {
    let s = l.summary();
    assert!(s.count > 0, "{workload} {mode}: empty latency histogram");
    assert!(s.min_ns <= s.p50_ns && s.p50_ns <= s.p99_ns && s.p99_ns <= s.max_ns);
    match workload {
        // One request per operation.
        WorkloadKind::LruCache => assert_eq!(s.count, r.operations, "{mode}"),
        // A queue message is delivered once, a topic message three times (90 topics, 10
        // queues), and consumers lag at most a round of publishes.
        WorkloadKind::MessageEngine => assert!(
            s.count >= r.operations,
            "{mode}: {} deliveries for {} messages",
            s.count,
            r.operations
        ),
        _ => unreachable!(),
    }
}

#[test]
fn binary_trees_runs_in_every_mode() {
    runs_in_every_mode(WorkloadKind::BinaryTrees);
}

#[test]
fn lru_cache_runs_in_every_mode() {
    runs_in_every_mode(WorkloadKind::LruCache);
}

#[test]
fn message_engine_runs_in_every_mode() {
    runs_in_every_mode(WorkloadKind::MessageEngine);
}

/// Bodies as direct or pooled buffers: delivered and checked as heap bodies are, freed by
/// their owners' cleaners once the messages leave the rings.
#[test]
fn message_engine_keeps_bodies_in_direct_and_pooled_buffers() {
    for kind in [workloads::BufferKind::Direct, workloads::BufferKind::Pooled] {
        // A small retention window: few live direct mappings, many dead ones to clean.
        let mut c = RunConfig::new(
            WorkloadKind::MessageEngine,
            Mode::Concurrent,
            HEAP,
            4 << 20,
            500,
        );
        c.params.set_buffers(kind).unwrap();
        let r = run_workload(&c).unwrap_or_else(|e| panic!("{kind}: {e}"));
        assert!(r.operations > 0, "{kind}");
        assert_eq!(r.label(), format!("concurrent 64M {kind}"));
        let d = &r.gc.direct;
        assert!(d.allocated > 0 && d.released == 0, "{kind}: {d:?}");
        assert!(r.memory.iter().any(|m| m.native_bytes() > 0), "{kind}");
    }
    // Heap bodies keep the label runs always had.
    let c = RunConfig::new(
        WorkloadKind::MessageEngine,
        Mode::Concurrent,
        HEAP,
        LIVE,
        100,
    );
    assert_eq!(c.label(), "concurrent 64M");
}

fn heap() -> Heap {
    Heap::new(HeapConfig::new(HEAP)).expect("a 64M heap")
}

#[test]
fn binary_trees_prints_what_the_benchmarks_game_program_prints() {
    let heap = heap();
    let mut m = heap.attach("main").unwrap();
    let out = m.scope(|s| binary_trees::program(s, 10, 4)).unwrap();
    assert_eq!(
        out,
        [
            "stretch tree of depth 11\t check: 4095",
            "1024\t trees of depth 4\t check: 31744",
            "256\t trees of depth 6\t check: 32512",
            "64\t trees of depth 8\t check: 32704",
            "16\t trees of depth 10\t check: 32752",
            "long lived tree of depth 10\t check: 2047",
        ]
    );
}

/// A pause waits for a running mutator's next poll, so the check walk must poll as it goes:
/// at least once per 128 nodes (the walk of 2^11 nodes it once made unpolled held pauses 100–160 µs to safepoint).
#[test]
fn binary_trees_check_polls_at_least_once_per_128_nodes() {
    let heap = heap();
    let mut m = heap.attach("main").unwrap();
    let depth = 14;
    let (nodes, polls) = m.scope(|s| {
        let t = binary_trees::bottom_up(s, depth).unwrap();
        let before = s.polls();
        let nodes = binary_trees::check(s, t, depth);
        (nodes, s.polls() - before)
    });
    assert_eq!(nodes, binary_trees::tree_nodes(depth));
    assert!(
        polls >= nodes / 128,
        "checking {nodes} nodes polled {polls} times: a pause could wait for {} nodes",
        nodes / polls.max(1)
    );
}

#[test]
fn binary_trees_depth_follows_the_live_set_within_the_heap() {
    let (min, mib) = (4, 1u64 << 20);
    for (heap, threads, want) in [
        (64 * mib, 1, 18),
        (256 * mib, 1, 20),
        (1024 * mib, 1, 22),
        (4096 * mib, 1, 24),
        (256 * mib, 2, 19),
    ] {
        let d = binary_trees::default_depth(heap / 2, heap, threads, min);
        assert_eq!(d, want, "{heap} bytes, {threads} threads");
        // The long-lived tree is within the target and the stretch tree fits comfortably.
        assert!(binary_trees::tree_bytes(d) <= heap / 2);
        assert!(binary_trees::tree_bytes(d + 1) <= heap * 5 / 8);
    }
    // A small live fraction bounds the depth; the minimum is min + 2.
    assert_eq!(binary_trees::default_depth(1 << 20, 1 << 30, 1, min), 14);
    assert_eq!(binary_trees::default_depth(1, 1 << 30, 1, min), 6);
}

#[test]
fn lru_cache_evicts_the_least_recently_used_and_survives_moving_collections() {
    let heap = heap();
    let mut m = heap.attach("main").unwrap();
    m.scope(|s| {
        // Room for exactly three entries with 100-byte values.
        let w = lru_cache::entry_weight(100);
        let mut c = lru_cache::LruCache::new(s, 3 * w, 2).unwrap();
        let mut out = Vec::new();
        for k in 1..=3 {
            c.put(s, k, 100).unwrap();
        }
        assert_eq!((c.len(), c.bytes()), (3, 3 * w));
        s.collect("test");
        // Touch 1: now 2 is the least recently used.
        assert!(c.get(s, 1, &mut out).unwrap());
        assert_eq!(out.len(), 100);
        assert_eq!(out[..8], 1u64.to_le_bytes());
        c.put(s, 4, 100).unwrap();
        assert_eq!((c.len(), c.evictions()), (3, 1));
        assert!(!c.get(s, 2, &mut out).unwrap());
        s.collect("test");
        for k in [1, 3, 4] {
            assert!(c.get(s, k, &mut out).unwrap(), "key {k}");
            assert_eq!(out[out.len() - 8..], k.to_le_bytes());
        }
        // A bigger value for 3 pushes out the two least recent (1, then 4).
        let big = lru_cache::entry_weight(100 + 2 * w);
        c.put(s, 3, (100 + 2 * w) as usize).unwrap();
        assert!(c.bytes() <= c.budget() || c.len() == 1);
        assert_eq!(c.len(), 1, "bytes {} of {}", c.bytes(), c.budget());
        assert_eq!(c.bytes(), big);
        assert!(c.get(s, 3, &mut out).unwrap());
        assert!(!c.get(s, 1, &mut out).unwrap());
        assert!(!c.get(s, 4, &mut out).unwrap());
    });
}

#[test]
fn lru_cache_hit_rate_approaches_the_target() {
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};
    let heap = heap();
    let mut m = heap.attach("main").unwrap();
    let (budget, buckets) = lru_cache::geometry(8 << 20, 64, 4096);
    let mut rng = SmallRng::seed_from_u64(7);
    m.scope(|s| {
        let mut c = lru_cache::LruCache::new(s, budget, buckets).unwrap();
        // Filled the way the workload fills it, then uniform keys over len / 0.9.
        loop {
            let size = rng.random_range(64..=4096u64);
            if c.bytes() + lru_cache::entry_weight(size) > c.budget() {
                break;
            }
            c.put(s, c.len(), size as usize).unwrap();
        }
        let filled = c.len();
        assert!(filled > 1000, "{filled} entries");
        let keys = (filled as f64 / 0.9).round() as u64;
        let (mut gets, mut hits, mut out) = (0u32, 0u32, Vec::new());
        for _ in 0..100_000 {
            let key = rng.random_range(0..keys);
            let size = rng.random_range(64..=4096usize);
            if rng.random::<f64>() < 0.9 {
                gets += 1;
                if c.get(s, key, &mut out).unwrap() {
                    hits += 1;
                } else {
                    c.put(s, key, size).unwrap();
                }
            } else {
                c.put(s, key, size).unwrap();
            }
            assert!(c.bytes() <= c.budget());
        }
        let rate = f64::from(hits) / f64::from(gets);
        assert!((0.85..0.95).contains(&rate), "hit rate {rate}");
        assert!(c.evictions() > 0);
    });
}

#[test]
fn message_engine_delivers_queue_messages_once_and_topic_messages_to_every_subscriber() {
    let heap = heap();
    let mut m = heap.attach("main").unwrap();
    let cfg = message_engine::EngineConfig {
        queues: 2,
        topics: 3,
        subscribers_per_topic: 4,
        headers: 8,
        body_bytes: 256,
        ring_len: 20,
        buffers: workloads::BufferKind::Heap,
    };
    let mut rng = rand::SeedableRng::seed_from_u64(1);
    let mut latency = LatencyHistogram::new();
    m.scope(|s| {
        let mut e = message_engine::Engine::new(s, cfg, 0).unwrap();
        assert_eq!((e.destinations(), e.consumers()), (5, 2 + 3 * 4));
        let clock = || 1_000_000u64;
        for d in 0..5 {
            e.publish(s, &mut rng, d, 1000 * d as u64).unwrap();
        }
        s.collect("test");
        e.poll(s, e.consumers(), &clock, &mut latency).unwrap();
        assert_eq!(e.delivered(), 2 + 3 * 4);
        assert_eq!(latency.len(), 2 + 3 * 4);
        // Within the histogram's 0.1% precision.
        assert!(latency.summary().max_ns.abs_diff(1_000_000) <= 1_000);
        // Polling again finds nothing new.
        e.poll(s, e.consumers(), &clock, &mut latency).unwrap();
        assert_eq!(e.delivered(), 2 + 3 * 4);
        // 25 messages to queue 0 overflow its ring of 20: its consumer loses the oldest 5.
        for _ in 0..25 {
            e.publish(s, &mut rng, 0, 0).unwrap();
        }
        s.collect("test");
        e.poll(s, e.consumers(), &clock, &mut latency).unwrap();
        assert_eq!((e.delivered(), e.lost()), (2 + 3 * 4 + 20, 5));
    });
}

/// The report's collector-speed figures come from the phase records of a real run: marking
/// costs a nonzero time per object in both modes, and relocation a nonzero rate where pages
/// were relocated. A phase the report no longer finds among the records (a renamed or
/// re-typed phase) would leave these `None` or zero.
#[test]
fn collector_speed_figures_of_a_real_run_are_nonzero() {
    use workloads::collector_speed::CollectorSpeed;
    for mode in [Mode::Concurrent, Mode::Stw] {
        let mut config = RunConfig::new(WorkloadKind::HeapChurn, mode, HEAP, LIVE, DURATION_MS);
        config.min_cycles = 2;
        let r = run_workload(&config).unwrap_or_else(|e| panic!("heap-churn {mode}: {e}"));
        let s = CollectorSpeed::of(&r);
        assert!(s.cycles > 0, "{mode}: no complete cycle");
        let mark = s.mark_ns_per_object.unwrap_or(0.0);
        assert!(mark > 0.0, "{mode}: mark ns/object {mark} ({s:?})");
        assert!(s.gc_cpu_ns_per_object.unwrap_or(0.0) > 0.0, "{mode}: {s:?}");
        let relocated = r.complete_cycles().any(|c| c.bytes_relocated > 0);
        if relocated {
            assert!(s.relocate_mb_per_s.unwrap_or(0.0) > 0.0, "{mode}: {s:?}");
        }
    }
}
