//! What a value slot buys a dynamically typed embedder, measured through the public API
//! (criterion): reading every element of a 4,096-element array of mixed values — half
//! numbers, a quarter references, a quarter immediates (nil), in a fixed random order — and
//! using each (a number is summed, a reference's shape is read):
//!
//! - `values/value_slot`: the array is an object of 4,096 value slots; each element is one
//!   `ObjRef::load_value` (the value barrier: one load, an AND and a compare);
//! - `values/ref_slot_and_word`: the layout without value slots, as the Lox interpreter's
//!   tables keep values today: a NaN-boxed word in the raw bytes, and beside it a reference
//!   slot that holds the object when the word says "object"; each element is a raw-word read,
//!   and for a reference a second load through the reference barrier.
//!
//! Both run between cycles (an `epsilon` heap), so every barrier takes its fast path. The two
//! are measured in one run, one after the other; run the bench twice to alternate them.
//! Run with `cargo bench -p gc-runtime --bench value_slots`.
use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use gc_runtime::{Heap, HeapConfig, Immediate, Mode, Value};
use std::time::Duration;

const N: usize = 4096;
/// The raw word of an object value in the second layout (Lox's `RAW_OBJ`).
const RAW_OBJ: u64 = 0x7ffc_0000_0000_0004;
/// The raw word of nil in the second layout (Lox's `RAW_NIL`).
const RAW_NIL: u64 = 0x7ffc_0000_0000_0001;

/// The kind of element `i`: 0, 1 number, 2 reference, 3 nil (a fixed pseudo-random order).
fn kind(i: usize) -> u64 {
    let mut z = (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 31)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    (z >> 40) % 4
}

fn values(c: &mut Criterion) {
    let heap = Heap::new(HeapConfig::new(64 << 20).mode(Mode::Epsilon)).unwrap();
    let mut m = heap.attach("bench").unwrap();
    let mut g = c.benchmark_group("values");
    g.throughput(Throughput::Elements(N as u64));
    g.measurement_time(Duration::from_secs(3));
    g.sample_size(30);
    m.scope(|s| {
        let target = s.alloc(5, 0, 8).unwrap();
        let nil = Immediate::new(1).unwrap();
        let va = s.alloc_with_values(1, 0, N as u32, 0).unwrap();
        let ra = s.alloc(2, N as u32, N * 8).unwrap();
        for i in 0..N {
            let x = i as f64 * 0.5;
            let (v, raw) = match kind(i) {
                0 | 1 => (Value::Number(x), x.to_bits()),
                2 => (Value::Ref(target), RAW_OBJ),
                _ => (Value::Immediate(nil), RAW_NIL),
            };
            s.store_value(va, i, v);
            s.get(ra).write_u64(8 * i, raw);
            if raw == RAW_OBJ {
                s.store(ra, i, Some(target));
            }
        }
        let (va, ra) = (s.get(va), s.get(ra));
        g.bench_function("value_slot", |b| {
            b.iter(|| {
                let o = black_box(va);
                let mut sum = 0.0;
                let mut shapes = 0u64;
                for i in 0..N {
                    match o.load_value(i) {
                        Value::Number(x) => sum += x,
                        Value::Ref(r) => shapes += r.shape() as u64,
                        Value::Immediate(_) => {}
                    }
                }
                (sum, shapes)
            })
        });
        g.bench_function("ref_slot_and_word", |b| {
            b.iter(|| {
                let o = black_box(ra);
                let mut sum = 0.0;
                let mut shapes = 0u64;
                for i in 0..N {
                    let raw = o.read_u64(8 * i);
                    if raw & 0x7ffc_0000_0000_0000 != 0x7ffc_0000_0000_0000 {
                        sum += f64::from_bits(raw);
                    } else if raw == RAW_OBJ {
                        shapes += o.load(i).expect("an object").shape() as u64;
                    }
                }
                (sum, shapes)
            })
        });
        // The two compute the same thing.
        let a = {
            let mut sum = 0.0;
            for i in 0..N {
                if let Value::Number(x) = va.load_value(i) {
                    sum += x;
                }
            }
            sum
        };
        let b: f64 = (0..N)
            .filter(|&i| kind(i) < 2)
            .map(|i| i as f64 * 0.5)
            .sum();
        assert_eq!(a, b);
    });
    g.finish();
}

criterion_group!(benches, values);
criterion_main!(benches);
