//! Runtime-level costs an embedder pays, measured through the public API (criterion):
//!
//! - `chase/barrier`: following a linked list in the heap with `ObjRef::load` (the load
//!   barrier's fast path on every hop) vs `chase/plain`: a list with the same node size and
//!   layout in ordinary Rust memory, followed with a plain atomic load per hop — the baseline
//!   the barrier is compared with;
//! - `alloc/small`: `Scope::alloc` of a 32-byte object (bump allocation, header init,
//!   handle push), in a nested scope per batch so handles do not pile up;
//! - `scope/outermost` and `scope/nested`: opening and closing an empty scope; the outermost
//!   one makes the mutator running on entry and blocked again on exit (two handshakes of the
//!   safepoint, compared with and without `membarrier` in `safepoint_barrier.rs`), a nested
//!   one only counts.
//!
//! - `mark/graph`: a whole GC cycle (`Scope::collect`) over a live graph of 400,000 small
//!   objects whose two slots point at random other objects, so tracing visits memory in
//!   random order as in a real heap; every object stays live and the pages are full, so the
//!   cycle is almost all marking. Throughput is objects marked per second; its inverse is the
//!   marking cost per object that the cycle records show as `objects_marked`.
//!
//! Run with `cargo bench -p gc-runtime`. Numbers are recorded in docs/src/reading-reports.md.
use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use gc_runtime::{Heap, HeapConfig, Mode};
use std::time::Duration;

const N: usize = 100_000;

fn chase(c: &mut Criterion) {
    // Epsilon: no cycle runs during the measurement, so every load takes the fast path.
    let heap = Heap::new(HeapConfig::new(256 << 20).mode(Mode::Epsilon)).unwrap();
    let mut m = heap.attach("bench").unwrap();
    // The plain baseline: nodes of the same 32-byte layout (header, one slot, 8 raw bytes)
    // in a Rust allocation, each slot holding the next node's address.
    #[repr(C)]
    struct Node {
        header: [u64; 2],
        next: std::sync::atomic::AtomicU64,
        raw: u64,
    }
    let nodes: Vec<Node> = (0..N)
        .map(|_| Node {
            header: [0; 2],
            next: std::sync::atomic::AtomicU64::new(0),
            raw: 0,
        })
        .collect();
    for i in 0..N - 1 {
        let a = &nodes[i + 1] as *const Node as u64;
        nodes[i].next.store(a, std::sync::atomic::Ordering::Relaxed);
    }
    let mut g = c.benchmark_group("chase");
    g.throughput(Throughput::Elements(N as u64));
    g.measurement_time(Duration::from_secs(3));
    g.sample_size(20);
    m.scope(|s| {
        let head = s.alloc(1, 1, 8).unwrap();
        let mut tail = head;
        for _ in 1..N {
            let n = s.alloc(1, 1, 8).unwrap();
            s.store(tail, 0, Some(n));
            tail = n;
        }
        g.bench_function("barrier", |b| {
            b.iter(|| {
                let mut cur = Some(s.get(head));
                let mut hops = 0;
                while let Some(o) = cur {
                    cur = o.load(0);
                    hops += 1;
                }
                black_box(hops)
            })
        });
    });
    g.bench_function("plain", |b| {
        b.iter(|| {
            let mut p = black_box(&nodes[0] as *const Node);
            let mut hops = 0;
            while !p.is_null() {
                // SAFETY: every non-null `next` is the address of an element of `nodes`,
                // which outlives the loop.
                p = unsafe { &*p }
                    .next
                    .load(std::sync::atomic::Ordering::Acquire) as *const Node;
                hops += 1;
            }
            black_box(hops)
        })
    });
    g.finish();
}

fn alloc(c: &mut Criterion) {
    let heap = Heap::new(HeapConfig::new(1 << 30)).unwrap();
    let mut m = heap.attach("bench").unwrap();
    let mut g = c.benchmark_group("alloc");
    g.throughput(Throughput::Elements(1000));
    g.measurement_time(Duration::from_secs(3));
    g.sample_size(20);
    m.scope(|s| {
        g.bench_function("small", |b| {
            b.iter(|| {
                s.scope(|s| {
                    for _ in 0..1000 {
                        black_box(s.alloc(1, 2, 16).unwrap());
                    }
                })
            })
        });
    });
    g.finish();
}

fn scope(c: &mut Criterion) {
    let heap = Heap::new(HeapConfig::new(64 << 20)).unwrap();
    let mut m = heap.attach("bench").unwrap();
    let mut g = c.benchmark_group("scope");
    g.throughput(Throughput::Elements(1000));
    g.measurement_time(Duration::from_secs(3));
    g.sample_size(20);
    g.bench_function("outermost", |b| {
        b.iter(|| {
            for _ in 0..1000 {
                black_box(m.scope(|s| s.handle_count()));
            }
        })
    });
    m.scope(|s| {
        g.bench_function("nested", |b| {
            b.iter(|| {
                for _ in 0..1000 {
                    black_box(s.scope(|s| s.handle_count()));
                }
            })
        });
    });
    g.finish();
}

fn mark(c: &mut Criterion) {
    const NODES: usize = 400_000;
    const TABLE: usize = 1024;
    let heap = Heap::new(HeapConfig::new(512 << 20).gc_threads(1)).unwrap();
    let mut m = heap.attach("bench").unwrap();
    let mut g = c.benchmark_group("mark");
    g.throughput(Throughput::Elements(NODES as u64));
    g.measurement_time(Duration::from_secs(8));
    g.sample_size(20);
    m.scope(|s| {
        // Nodes hang from a table of arrays (the roots); each node's two slots then point at
        // pseudo-random other nodes.
        let table = s.alloc(1, TABLE as u32, 0).unwrap();
        let per = NODES / TABLE;
        for t in 0..TABLE {
            let arr = s.alloc(2, per as u32, 0).unwrap();
            s.store(table, t, Some(arr));
            for i in 0..per {
                s.scope(|s| {
                    let n = s.alloc(3, 2, 8).unwrap();
                    s.store(arr, i, Some(n));
                });
            }
        }
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut rnd = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as usize
        };
        for t in 0..TABLE {
            for i in 0..per {
                s.scope(|s| {
                    let arr = s.load(table, t).unwrap();
                    let n = s.load(arr, i).unwrap();
                    for k in 0..2 {
                        let other = s.load(table, rnd() % TABLE).unwrap();
                        let o = s.load(other, rnd() % per);
                        s.store(n, k, o);
                    }
                });
            }
        }
        s.collect("warm-up");
        g.bench_function("graph", |b| b.iter(|| s.collect("bench")));
    });
    g.finish();
}

criterion_group!(benches, chase, alloc, scope, mark);
criterion_main!(benches);
