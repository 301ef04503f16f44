//! Micro-benchmarks of the mechanism layer (`cargo bench -p gc-core`):
//!
//! - the load barrier's fast path against a plain load, chasing a linked list of real heap
//!   objects whose slots hold good-colored pointers (in cache, and shuffled out of cache);
//! - bump allocation of small objects (`Page::alloc_private` / `alloc_shared` + `Object::init`);
//! - a small page taken from the page cache, freed and dropped (`PageAllocator::alloc_page`,
//!   `free_page`): what a mutator pays per page besides mapping memory;
//! - forwarding table insert and lookup;
//! - object copy (`Object::copy_to`) against `std::ptr::copy_nonoverlapping` of the same bytes;
//! - raw-byte access (`Object::read_u64`/`write_u64`/`read_bytes`/`write_bytes`, relaxed
//!   atomic words) against non-atomic `ptr::copy_nonoverlapping` of the same bytes.
//!
//! Every routine is timed with `iter_custom`, which also records the per-iteration time of each
//! sample, so that after Criterion's own report a summary prints medians and the ratios the
//! docs quote (docs/src/mechanism.md).

use criterion::{black_box, BenchmarkId, Criterion, SamplingMode, Throughput};
use gc_core::{
    load_barrier, Address, AddressLayout, ColoredPtr, ColoredSlot, ForwardingEntries, GoodColor,
    MemoryConfig, Object, ObjectHeader, Offset, Page, PageAllocator, PageKind, SlowPath, View,
    HEADER_SIZE,
};
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const MIB: u64 = 1 << 20;
const SAMPLES: usize = 20;

/// Per-iteration nanoseconds of every call of a routine, by benchmark name.
static RECORDED: Mutex<BTreeMap<String, Vec<f64>>> = Mutex::new(BTreeMap::new());

fn record(name: &str, iters: u64, elapsed: Duration) -> Duration {
    RECORDED
        .lock()
        .unwrap()
        .entry(name.to_string())
        .or_default()
        .push(elapsed.as_nanos() as f64 / iters as f64);
    elapsed
}

/// Median ns/iteration over the last `samples` recorded calls (Criterion's measured samples;
/// the earlier calls are its warm-up).
fn median(name: &str, samples: usize) -> Option<f64> {
    let rec = RECORDED.lock().unwrap();
    let v = rec.get(name)?;
    let mut last: Vec<f64> = v[v.len().saturating_sub(samples)..].to_vec();
    last.sort_by(|a, b| a.partial_cmp(b).unwrap());
    Some(last[last.len() / 2])
}

fn heap(max: u64) -> PageAllocator {
    PageAllocator::new(&MemoryConfig::new(max)).expect("benchmark heap")
}

/// A small deterministic PRNG (xorshift64*), so the benchmark needs no extra crate.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            v.swap(i, (self.next() % (i as u64 + 1)) as usize);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// (a) barrier fast path vs plain load

/// The slow path is never taken: every slot holds a good pointer.
struct NeverSlow;
impl SlowPath for NeverSlow {
    fn make_good(&self, ptr: ColoredPtr) -> ColoredPtr {
        panic!("slow path taken for {ptr:?}: the list holds only good pointers")
    }
}

/// A singly linked list of `n` objects (one reference slot, 8 raw bytes: 32 bytes each) on
/// real heap pages; slots hold Remapped-colored (good) pointers. With `shuffle`, the list visits
/// the objects in random order, so each step is a cache miss once the list exceeds the caches.
struct List {
    _pages: Vec<Arc<Page>>,
    head: ColoredSlot,
    len: u64,
}

fn build_list(h: &PageAllocator, n: usize, shuffle: bool) -> List {
    let l = h.layout();
    let header = ObjectHeader {
        shape: 1,
        n_refs: 1,
        n_bytes: 8,
        n_values: 0,
    };
    let mut pages = vec![h.alloc_page(PageKind::Small, 2 * MIB, 1).unwrap()];
    let mut nodes = Vec::with_capacity(n);
    for i in 0..n {
        let off = match pages.last().unwrap().alloc_private(header.size()) {
            Some(off) => off,
            None => {
                pages.push(h.alloc_page(PageKind::Small, 2 * MIB, 1).unwrap());
                pages.last().unwrap().alloc_private(header.size()).unwrap()
            }
        };
        // SAFETY: freshly bump-allocated on a mapped page.
        let o = unsafe { Object::init(l.address(off, View::Remapped), header) };
        o.write_u64(0, i as u64);
        nodes.push((o, off));
    }
    if shuffle {
        Rng(0x9E37_79B9_7F4A_7C15).shuffle(&mut nodes);
    }
    let good = |off: Offset| l.good(off, GoodColor::Remapped);
    for w in nodes.windows(2) {
        w[0].0.ref_slot(0).store(good(w[1].1), Ordering::Relaxed);
    }
    List {
        _pages: pages,
        head: ColoredSlot::new(good(nodes[0].1)),
        len: n as u64,
    }
}

#[inline(always)]
fn slot0(ptr: ColoredPtr) -> &'static ColoredSlot {
    // SAFETY: `ptr` is a good (dereferenceable) pointer to a list node, whose slot 0 follows the
    // 16-byte header; the list's pages stay mapped for the whole benchmark.
    unsafe { &*((ptr.raw() + HEADER_SIZE) as *const ColoredSlot) }
}

#[inline(never)]
fn chase_plain(head: &ColoredSlot) -> u64 {
    let mut p = head.load(Ordering::Acquire);
    let mut n = 0;
    while !p.is_null() {
        p = slot0(p).load(Ordering::Acquire);
        n += 1;
    }
    n
}

#[inline(never)]
fn chase_barrier(head: &ColoredSlot, bad_mask: u64, slow: &NeverSlow) -> u64 {
    let mut p = load_barrier(head, bad_mask, slow);
    let mut n = 0;
    while !p.is_null() {
        p = load_barrier(slot0(p), bad_mask, slow);
        n += 1;
    }
    n
}

fn bench_barrier(c: &mut Criterion, h: &PageAllocator) {
    let layout: AddressLayout = h.layout();
    // The mutator's copy of the bad mask: not a compile-time constant.
    let bad_mask = black_box(layout.bad_mask(GoodColor::Remapped));
    for (label, n, shuffle) in [
        ("in-cache 4K nodes", 4096usize, false),
        ("shuffled 1M nodes", 1 << 20, true),
    ] {
        let list = build_list(h, n, shuffle);
        assert_eq!(chase_plain(&list.head), list.len);
        assert_eq!(chase_barrier(&list.head, bad_mask, &NeverSlow), list.len);
        let mut g = c.benchmark_group(format!("barrier/{label}"));
        g.throughput(Throughput::Elements(list.len));
        if shuffle {
            // ~0.1 s per chase: one chase per sample.
            g.sampling_mode(SamplingMode::Flat).sample_size(10);
        } else {
            g.sample_size(SAMPLES);
        }
        g.warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2));
        let plain_name = format!("barrier/{label}/plain load");
        g.bench_function("plain load", |b| {
            b.iter_custom(|iters| {
                let t = Instant::now();
                for _ in 0..iters {
                    black_box(chase_plain(black_box(&list.head)));
                }
                record(&plain_name, iters * list.len, t.elapsed())
            })
        });
        let barrier_name = format!("barrier/{label}/load barrier");
        g.bench_function("load barrier", |b| {
            b.iter_custom(|iters| {
                let t = Instant::now();
                for _ in 0..iters {
                    black_box(chase_barrier(black_box(&list.head), bad_mask, &NeverSlow));
                }
                record(&barrier_name, iters * list.len, t.elapsed())
            })
        });
        g.finish();
        let ratio = paired_ratio(&list, bad_mask, if shuffle { 6 } else { 200 });
        PAIRED.lock().unwrap().insert(label.to_string(), ratio);
    }
}

/// Barrier/plain time ratios of back-to-back chases, keyed by list label.
static PAIRED: Mutex<BTreeMap<String, (f64, f64, f64)>> = Mutex::new(BTreeMap::new());

/// The barrier's cost measured in pairs: each round chases the list once with plain loads and
/// once through the barrier, back to back (alternating which goes first), so noise from other
/// processes on this shared machine hits both alike. Returns (min, median, max) of the ratios.
fn paired_ratio(list: &List, bad_mask: u64, rounds: usize) -> (f64, f64, f64) {
    let reps = (1_000_000 / list.len).max(1);
    let time = |barrier: bool| {
        let t = Instant::now();
        for _ in 0..reps {
            if barrier {
                black_box(chase_barrier(black_box(&list.head), bad_mask, &NeverSlow));
            } else {
                black_box(chase_plain(black_box(&list.head)));
            }
        }
        t.elapsed().as_secs_f64()
    };
    let mut ratios: Vec<f64> = (0..rounds)
        .map(|r| {
            if r % 2 == 0 {
                let p = time(false);
                time(true) / p
            } else {
                let b = time(true);
                b / time(false)
            }
        })
        .collect();
    ratios.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (ratios[0], ratios[rounds / 2], ratios[rounds - 1])
}

// ---------------------------------------------------------------------------------------------
// (b) bump allocation

fn bench_alloc(c: &mut Criterion, h: &PageAllocator) {
    let l = h.layout();
    let header = ObjectHeader {
        shape: 7,
        n_refs: 1,
        n_bytes: 8,
        n_values: 0,
    };
    let size = header.size();
    let mut g = c.benchmark_group("bump allocation (32 B objects)");
    g.throughput(Throughput::Elements(1))
        .sample_size(SAMPLES)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for shared in [false, true] {
        let label = if shared {
            "alloc_shared (CAS) + init"
        } else {
            "alloc_private + init"
        };
        let name = format!("alloc/{label}");
        g.bench_function(label, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                let mut left = iters;
                while left > 0 {
                    // A fresh page (from the page cache after the first), outside the timing.
                    let page = h.alloc_page(PageKind::Small, 2 * MIB, 1).unwrap();
                    let n = left.min(2 * MIB / size);
                    let t = Instant::now();
                    for _ in 0..n {
                        let off = if shared {
                            page.alloc_shared(black_box(size))
                        } else {
                            page.alloc_private(black_box(size))
                        };
                        // SAFETY: freshly bump-allocated on a mapped page.
                        let o = unsafe {
                            Object::init(l.address(off.unwrap(), View::Remapped), header)
                        };
                        black_box(o);
                    }
                    total += t.elapsed();
                    // SAFETY: nothing reads or writes the page's objects after it is freed.
                    unsafe { h.free_page(&page) };
                    left -= n;
                }
                record(&name, iters, total)
            })
        });
    }
    g.finish();
}

/// A small page from the page cache, freed again and its last reference dropped, per
/// iteration: the page object, its live map, the page-table entry.
fn bench_page_alloc(c: &mut Criterion, h: &PageAllocator) {
    let mut g = c.benchmark_group("page allocation");
    g.sample_size(SAMPLES)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    let label = "small page: alloc_page + free_page + drop";
    let name = format!("page/{label}");
    g.bench_function(label, |b| {
        b.iter_custom(|iters| {
            let t = Instant::now();
            for _ in 0..iters {
                let page = h.alloc_page(PageKind::Small, 2 * MIB, 1).unwrap();
                black_box(&page);
                // SAFETY: no object of the page is read or written after it is freed.
                unsafe { h.free_page(&page) };
            }
            record(&name, iters, t.elapsed())
        })
    });
    g.finish();
}

// ---------------------------------------------------------------------------------------------
// (c) forwarding table

fn bench_forwarding(c: &mut Criterion) {
    const LIVE: u64 = 1 << 16;
    let mut random: Vec<u64> = (0..LIVE).collect();
    Rng(42).shuffle(&mut random);
    let to = |i: u64| Offset::from_raw(0x4000_0000 + i * 32);
    let mut g = c.benchmark_group("forwarding table (64K live objects)");
    g.throughput(Throughput::Elements(1))
        .sample_size(SAMPLES)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for (label, order) in [("sequential", false), ("random", true)] {
        let name = format!("forwarding/insert {label}");
        let random = &random;
        g.bench_function(BenchmarkId::new("insert", label), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                let mut left = iters;
                while left > 0 {
                    let table: ForwardingEntries = ForwardingEntries::new(LIVE);
                    let n = left.min(LIVE);
                    let t = Instant::now();
                    for k in 0..n {
                        let i = if order { random[k as usize] } else { k };
                        black_box(table.insert(black_box(i), to(i)).is_ok());
                    }
                    total += t.elapsed();
                    left -= n;
                }
                record(&name, iters, total)
            })
        });
    }
    let table: ForwardingEntries = ForwardingEntries::new(LIVE);
    for i in 0..LIVE {
        table.insert(i, to(i)).unwrap();
    }
    for (label, order) in [("sequential", false), ("random", true)] {
        let name = format!("forwarding/find {label}");
        let (random, table) = (&random, &table);
        g.bench_function(BenchmarkId::new("find", label), |b| {
            b.iter_custom(|iters| {
                let t = Instant::now();
                for k in 0..iters {
                    let k = k & (LIVE - 1);
                    let i = if order { random[k as usize] } else { k };
                    black_box(table.find(black_box(i)));
                }
                record(&name, iters, t.elapsed())
            })
        });
    }
    g.finish();
}

// ---------------------------------------------------------------------------------------------
// (d) object copy

fn bench_copy(c: &mut Criterion, h: &PageAllocator) {
    let l = h.layout();
    let from = h.alloc_page(PageKind::Small, 2 * MIB, 1).unwrap();
    let to = h.alloc_page(PageKind::Small, 2 * MIB, 1).unwrap();
    let mut g = c.benchmark_group("object copy");
    g.sample_size(SAMPLES)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for (label, size) in [("64 B", 64u64), ("4 KiB", 4096), ("256 KiB", 256 << 10)] {
        let header = ObjectHeader {
            shape: 3,
            n_refs: 0,
            n_bytes: size - HEADER_SIZE,
            n_values: 0,
        };
        let src_off = from.start();
        // SAFETY: the page is mapped and `size` bytes fit at its start.
        let src = unsafe { Object::init(l.address(src_off, View::Remapped), header) };
        src.write_bytes(0, &vec![0xAB; (size - HEADER_SIZE) as usize]);
        // Not at the same offset within a 4 KiB page as the source: equal low 12 bits make
        // the CPU see false load-after-store conflicts (4K aliasing) that real copies rarely hit.
        let dst: Address = l.address(to.start() + 1088, View::Remapped);
        assert_eq!(src.size(), size);
        g.throughput(Throughput::Bytes(size));
        let name = format!("copy/{label}/Object::copy_to");
        g.bench_function(BenchmarkId::new("Object::copy_to", label), |b| {
            b.iter_custom(|iters| {
                let t = Instant::now();
                for _ in 0..iters {
                    // SAFETY: `dst` has room for the object on another page; nothing writes `src`.
                    black_box(unsafe { black_box(src).copy_to(black_box(dst)) });
                }
                record(&name, iters, t.elapsed())
            })
        });
        let name = format!("copy/{label}/ptr::copy_nonoverlapping");
        g.bench_function(BenchmarkId::new("ptr::copy_nonoverlapping", label), |b| {
            b.iter_custom(|iters| {
                let t = Instant::now();
                for _ in 0..iters {
                    // SAFETY: both ranges are mapped, `size` bytes long, on different pages.
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            black_box(src.addr()).as_ptr::<u8>(),
                            black_box(dst).as_ptr::<u8>(),
                            black_box(size) as usize,
                        )
                    };
                    black_box(dst);
                }
                record(&name, iters, t.elapsed())
            })
        });
    }
    g.finish();
}

// ---------------------------------------------------------------------------------------------
// (e) raw-byte access

/// (label, offset, length) of the raw-byte accesses measured.
const RAW_CASES: [(&str, usize, usize); 4] = [
    ("8 B aligned", 8, 8),
    ("16 B aligned", 16, 16),
    ("3 B unaligned", 5, 3),
    ("256 B aligned", 0, 256),
];

fn bench_raw(c: &mut Criterion, h: &PageAllocator) {
    let l = h.layout();
    let page = h.alloc_page(PageKind::Small, 2 * MIB, 1).unwrap();
    let header = ObjectHeader {
        shape: 5,
        n_refs: 2,
        n_bytes: 512,
        n_values: 0,
    };
    // SAFETY: the page is mapped and the object fits at its start.
    let obj = unsafe { Object::init(l.address(page.start(), View::Remapped), header) };
    let raw = obj.addr().raw() + HEADER_SIZE + 16;
    let mut g = c.benchmark_group("raw bytes");
    g.sample_size(SAMPLES)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    for (label, off, len) in RAW_CASES {
        let mut buf = vec![0u8; len];
        let name = format!("raw/{label}/read");
        g.bench_function(BenchmarkId::new("read", label), |b| {
            b.iter_custom(|iters| {
                let t = Instant::now();
                for _ in 0..iters {
                    if len == 8 && off % 8 == 0 {
                        black_box(black_box(obj).read_u64(black_box(off)));
                    } else {
                        black_box(obj).read_bytes(black_box(off), black_box(&mut buf));
                    }
                }
                record(&name, iters, t.elapsed())
            })
        });
        let name = format!("raw/{label}/write");
        g.bench_function(BenchmarkId::new("write", label), |b| {
            b.iter_custom(|iters| {
                let t = Instant::now();
                for i in 0..iters {
                    if len == 8 && off % 8 == 0 {
                        black_box(obj).write_u64(black_box(off), i);
                    } else {
                        black_box(obj).write_bytes(black_box(off), black_box(&buf));
                    }
                }
                record(&name, iters, t.elapsed())
            })
        });
        let name = format!("raw/{label}/memcpy read");
        g.bench_function(BenchmarkId::new("memcpy read", label), |b| {
            b.iter_custom(|iters| {
                let t = Instant::now();
                for _ in 0..iters {
                    // SAFETY: the range lies in the object's raw area; nothing else writes it.
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            black_box(raw + off as u64) as *const u8,
                            black_box(buf.as_mut_ptr()),
                            black_box(len),
                        )
                    };
                    black_box(&mut buf);
                }
                record(&name, iters, t.elapsed())
            })
        });
    }
    g.finish();
}

// ---------------------------------------------------------------------------------------------

fn print_summary() {
    let m = |name: &str, samples: usize| median(name, samples);
    println!("\n== gc-core mechanism summary (median of measured samples) ==");
    for (label, samples) in [("in-cache 4K nodes", SAMPLES), ("shuffled 1M nodes", 10)] {
        let plain = m(&format!("barrier/{label}/plain load"), samples);
        let barrier = m(&format!("barrier/{label}/load barrier"), samples);
        if let (Some(p), Some(b)) = (plain, barrier) {
            println!(
                "barrier, {label}: plain load {p:.2} ns/node, load barrier {b:.2} ns/node, \
                 ratio {:.3}",
                b / p
            );
        }
        if let Some((lo, med, hi)) = PAIRED.lock().unwrap().get(label) {
            println!(
                "barrier, {label}: paired back-to-back chases, ratio median {med:.3} \
                 (min {lo:.3}, max {hi:.3})"
            );
        }
    }
    for label in ["alloc_private + init", "alloc_shared (CAS) + init"] {
        if let Some(v) = m(&format!("alloc/{label}"), SAMPLES) {
            println!("bump allocation, {label}: {v:.2} ns/object");
        }
    }
    let page = "small page: alloc_page + free_page + drop";
    if let Some(v) = m(&format!("page/{page}"), SAMPLES) {
        println!("page allocation, {page}: {v:.0} ns/page");
    }
    for op in ["insert", "find"] {
        for order in ["sequential", "random"] {
            if let Some(v) = m(&format!("forwarding/{op} {order}"), SAMPLES) {
                println!("forwarding {op}, {order} indices: {v:.2} ns");
            }
        }
    }
    for (label, size) in [("64 B", 64f64), ("4 KiB", 4096.0), ("256 KiB", 262144.0)] {
        let a = m(&format!("copy/{label}/Object::copy_to"), SAMPLES);
        let b = m(&format!("copy/{label}/ptr::copy_nonoverlapping"), SAMPLES);
        if let (Some(a), Some(b)) = (a, b) {
            println!(
                "copy {label}: Object::copy_to {a:.1} ns ({:.2} GB/s), memcpy {b:.1} ns \
                 ({:.2} GB/s), ratio {:.3}",
                size / a,
                size / b,
                a / b
            );
        }
    }
}

fn print_raw_summary() {
    for (label, _, _) in RAW_CASES {
        let r = median(&format!("raw/{label}/read"), SAMPLES);
        let w = median(&format!("raw/{label}/write"), SAMPLES);
        let c = median(&format!("raw/{label}/memcpy read"), SAMPLES);
        if let (Some(r), Some(w), Some(c)) = (r, w, c) {
            println!(
                "raw bytes {label}: read {r:.2} ns, write {w:.2} ns, non-atomic memcpy read \
                 {c:.2} ns (read ratio {:.2})",
                r / c
            );
        }
    }
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    let h = heap(256 * MIB);
    bench_barrier(&mut c, &h);
    bench_alloc(&mut c, &h);
    bench_page_alloc(&mut c, &h);
    bench_forwarding(&mut c);
    bench_copy(&mut c, &h);
    bench_raw(&mut c, &h);
    c.final_summary();
    print_summary();
    print_raw_summary();
}
