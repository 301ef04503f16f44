//! The store barrier of the generational bookkeeping (`HeapConfig::track_generations`),
//! measured through the public API (criterion): 4,096 reference stores (`ObjRef::store`)
//! into an object of 4,096 reference slots, per iteration:
//!
//! - `store/no_barrier`: the same number of stores as `Fresh::init` makes them (a relaxed
//!   store, no barrier at all) into a just-allocated object of 512 slots: the floor;
//! - `store/off`: the bookkeeping off (the default): the barrier is one load of the mutator
//!   and a branch;
//! - `store/young_holder`: on, into a young holder (one byte load of the generation map);
//! - `store/old_holder_old_value`: on, an old holder receiving an old value (two byte loads);
//! - `store/old_holder_young_value`: on, an old holder receiving a young value: the slow path,
//!   whose slot is already remembered after the first iteration (its bit is loaded, not set).
//!
//! Objects become old by surviving a full cycle (`Scope::collect` on a `stw` heap); no cycle
//! runs while the stores are measured. Run with `cargo bench -p gc-runtime --bench
//! store_barrier`.
use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use gc_runtime::{Heap, HeapConfig, Mode};
use std::time::Duration;

const N: usize = 4096;
/// Reference slots of the just-allocated object of `no_barrier`.
const FRESH_SLOTS: usize = 512;

fn heap(track: bool) -> Heap {
    Heap::new(
        HeapConfig::new(64 << 20)
            .mode(Mode::Stw)
            .continuous(false)
            .track_generations(track),
    )
    .unwrap()
}

fn stores(c: &mut Criterion) {
    let mut g = c.benchmark_group("store");
    g.throughput(Throughput::Elements(N as u64));
    g.measurement_time(Duration::from_secs(3));
    g.sample_size(30);

    // Off, and the floor: no barrier at all.
    let off = heap(false);
    let mut m = off.attach("bench").unwrap();
    m.scope(|s| {
        let value = s.alloc(1, 0, 8).unwrap();
        let holder = s.alloc(1, N as u32, 0).unwrap();
        {
            let (h, v) = (s.get(holder), s.get(value));
            // A smaller object (the fast path declines where a pacing decision is due, every
            // 64 KiB), stored to round and round.
            let fresh = s
                .alloc_fresh(1, FRESH_SLOTS as u32, 0)
                .expect("a small object");
            g.bench_function("no_barrier", |b| {
                b.iter(|| {
                    for i in 0..N {
                        fresh.init(i % FRESH_SLOTS, Some(black_box(v)));
                    }
                })
            });
            g.bench_function("off", |b| {
                b.iter(|| {
                    let h = black_box(h);
                    for i in 0..N {
                        h.store(i, Some(black_box(v)));
                    }
                })
            });
        }
    });
    drop(m);

    // On: a young holder, then old holders.
    let on = heap(true);
    let mut m = on.attach("bench").unwrap();
    m.scope(|s| {
        let old_holder = s.alloc(1, N as u32, 0).unwrap();
        let old_value = s.alloc(1, 0, 8).unwrap();
        s.collect("bench");
        assert_eq!(s.is_old(old_holder), Some(true));
        let young_holder = s.alloc(1, N as u32, 0).unwrap();
        let young_value = s.alloc(1, 0, 8).unwrap();
        assert_eq!(s.is_old(young_holder), Some(false));
        let (oh, ov) = (s.get(old_holder), s.get(old_value));
        let (yh, yv) = (s.get(young_holder), s.get(young_value));
        g.bench_function("young_holder", |b| {
            b.iter(|| {
                let h = black_box(yh);
                for i in 0..N {
                    h.store(i, Some(black_box(yv)));
                }
            })
        });
        g.bench_function("old_holder_old_value", |b| {
            b.iter(|| {
                let h = black_box(oh);
                for i in 0..N {
                    h.store(i, Some(black_box(ov)));
                }
            })
        });
        g.bench_function("old_holder_young_value", |b| {
            b.iter(|| {
                let h = black_box(oh);
                for i in 0..N {
                    h.store(i, Some(black_box(yv)));
                }
            })
        });
    });
    g.finish();
    let r = on.remembered_set_stats().unwrap();
    assert_eq!(r.barrier_remembered, N as u64, "every slot remembered once");
}

criterion_group!(benches, stores);
criterion_main!(benches);
