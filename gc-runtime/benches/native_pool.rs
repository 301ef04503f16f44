//! The native buffer pool against the two ways of getting native memory without it
//! (criterion): per buffer of 1 KiB, 16 KiB and 64 KiB, one allocation, an 8-byte write at
//! its start (the first touch, which faults a fresh page in) and its release:
//!
//! - `native/pooled/<size>`: `NativePool::allocate` + `PooledBuffer::release` (a thread-cache
//!   hit after the first round);
//! - `native/mmap/<size>`: `NativePool::allocate_unpooled`: an `mmap` and a `munmap` per buffer,
//!   through the same handle;
//! - `native/malloc/<size>`: `Vec::<u8>::with_capacity` (glibc malloc) and its drop.
//!
//! Run with `cargo bench -p gc-runtime --bench native_pool`.
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use gc_runtime::native::{LeakDetection, NativePool, PoolConfig};
use std::time::Duration;

const SIZES: [(usize, &str); 3] = [(1 << 10, "1KiB"), (16 << 10, "16KiB"), (64 << 10, "64KiB")];

fn native(c: &mut Criterion) {
    let pool = NativePool::new(
        PoolConfig::new()
            .name("bench")
            .leak_detection(LeakDetection::Off),
    )
    .unwrap();
    let mut g = c.benchmark_group("native");
    g.measurement_time(Duration::from_secs(2));
    g.warm_up_time(Duration::from_millis(500));
    g.sample_size(20);
    for (len, name) in SIZES {
        g.bench_function(format!("pooled/{name}"), |b| {
            b.iter(|| {
                let buf = pool.allocate(black_box(len)).unwrap();
                buf.write_u64(0, 42).unwrap();
                buf.release().unwrap()
            })
        });
        g.bench_function(format!("mmap/{name}"), |b| {
            b.iter(|| {
                let buf = pool.allocate_unpooled(black_box(len)).unwrap();
                buf.write_u64(0, 42).unwrap();
                buf.release().unwrap()
            })
        });
        g.bench_function(format!("malloc/{name}"), |b| {
            b.iter(|| {
                let mut v: Vec<u8> = Vec::with_capacity(black_box(len));
                v.extend_from_slice(&42u64.to_le_bytes());
                black_box(&v);
            })
        });
    }
    g.finish();
}

criterion_group!(benches, native);
criterion_main!(benches);
