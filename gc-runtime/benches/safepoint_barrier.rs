//! The two sides of the safepoint handshake with each of its barriers
//! (`gc_runtime::process_barrier`), measured side by side in one run (criterion):
//!
//! - `mutator/scope/<barrier>/<round>`: opening and closing an empty outermost scope (the
//!   mutator leaves the blocked state on entry and enters it again on exit: two handshakes);
//! - `mutator/poll/<barrier>/<round>`: a safepoint poll inside a scope (one relaxed load
//!   with either barrier: the control);
//! - `mutator/handshake/<barrier>/<round>`: the two handshakes alone
//!   (`Safepoint::leave_blocked` then `Safepoint::enter_blocked`), without the rest of a
//!   scope's work;
//! - `requester/<barrier>/<threads>`: what a pause request adds on the requesting side, the
//!   heavy half of the handshake (a `SeqCst` fence; with `membarrier`, also the system call
//!   that makes every running thread of the process execute a barrier), with 1 thread in the
//!   process and with 4 (3 more that spin, so that they are on CPUs when the call is made).
//!
//! `membarrier` and `fences` alternate, two rounds each, so that a drift of the machine's
//! speed shows as a difference between rounds. Where the system lacks `membarrier`, only the
//! fences are measured. Run with `cargo bench -p gc-runtime --bench safepoint_barrier`.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use gc_runtime::process_barrier::ProcessBarrier;
use gc_runtime::safepoint::{NoOtherHeaps, Safepoint, ThreadStateCell};
use gc_runtime::sync::Std;
use gc_runtime::{Heap, HeapConfig};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The barriers to compare: both where the system has `membarrier`, else fences only.
fn barriers() -> Vec<ProcessBarrier> {
    match ProcessBarrier::choose(true) {
        ProcessBarrier::Membarrier => vec![ProcessBarrier::Membarrier, ProcessBarrier::Fences],
        ProcessBarrier::Fences => {
            eprintln!("membarrier is not available here: measuring fences only");
            vec![ProcessBarrier::Fences]
        }
    }
}

fn mutator(c: &mut Criterion) {
    let heaps: Vec<(ProcessBarrier, Heap)> = barriers()
        .into_iter()
        .map(|b| {
            let heap =
                Heap::new(HeapConfig::new(64 << 20).membarrier(b == ProcessBarrier::Membarrier))
                    .unwrap();
            assert_eq!(heap.stats().safepoint_barrier, b.name());
            (b, heap)
        })
        .collect();
    let mut muts: Vec<_> = heaps
        .iter()
        .map(|(b, h)| (*b, h.attach("bench").unwrap()))
        .collect();
    let mut g = c.benchmark_group("mutator");
    g.throughput(Throughput::Elements(1000));
    g.measurement_time(Duration::from_secs(2));
    g.sample_size(20);
    let raw: Vec<(ProcessBarrier, Safepoint)> = barriers()
        .into_iter()
        .map(|b| (b, Safepoint::new(b)))
        .collect();
    let cell = ThreadStateCell::new_blocked();
    for round in 1..=2 {
        for (b, sp) in &raw {
            g.bench_function(format!("handshake/{}/{round}", b.name()), |bench| {
                bench.iter(|| {
                    for _ in 0..1000 {
                        sp.leave_blocked(&cell, &NoOtherHeaps);
                        black_box(&cell);
                        sp.enter_blocked(&cell);
                    }
                })
            });
        }
        for (b, m) in muts.iter_mut() {
            g.bench_function(format!("scope/{}/{round}", b.name()), |bench| {
                bench.iter(|| {
                    for _ in 0..1000 {
                        black_box(m.scope(|s| s.handle_count()));
                    }
                })
            });
        }
        for (b, m) in muts.iter_mut() {
            m.scope(|s| {
                g.bench_function(format!("poll/{}/{round}", b.name()), |bench| {
                    bench.iter(|| {
                        for _ in 0..1000 {
                            s.poll();
                        }
                    })
                });
            });
        }
    }
    g.finish();
}

fn requester(c: &mut Criterion) {
    let mut g = c.benchmark_group("requester");
    g.measurement_time(Duration::from_secs(2));
    g.sample_size(20);
    for threads in [1, 4] {
        let stop = Arc::new(AtomicBool::new(false));
        let spinners: Vec<_> = (1..threads)
            .map(|_| {
                let stop = Arc::clone(&stop);
                std::thread::spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                })
            })
            .collect();
        for b in barriers() {
            g.bench_function(format!("{}/{threads}", b.name()), |bench| {
                bench.iter(|| b.heavy::<Std>())
            });
        }
        stop.store(true, Ordering::Relaxed);
        for t in spinners {
            t.join().unwrap();
        }
    }
    g.finish();
}

criterion_group!(benches, mutator, requester);
criterion_main!(benches);
