//! A short multi-threaded program that prints the GC log: two mutator threads keep a ring
//! of small trees alive while allocating garbage; cycles run with all three pauses.
//!
//! `cargo run --release -p gc-runtime --example multi_thread_log [-- <seconds> <heap> <mode>]`
use gc_runtime::{parse_size, Heap, HeapConfig, LogLevel, Mode};
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let secs: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(2);
    let heap_size = args
        .get(2)
        .map_or(Ok(256 << 20), |s| parse_size(s))
        .unwrap_or_else(|e| {
            eprintln!("bad heap size: {e}");
            std::process::exit(64)
        });
    let mode: Mode = args
        .get(3)
        .map_or(Ok(Mode::Concurrent), |s| s.parse())
        .unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(64)
        });
    // The environment may set the GC threads and pacing (`HeapConfig::from_env`); the log is
    // at the phases level whatever `ZRS_GC_LOG` says.
    let config = HeapConfig::from_env(heap_size).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(64)
    });
    let heap = match Heap::new(config.mode(mode).log(LogLevel::Phases)) {
        Ok(h) => h,
        Err(e) => {
            eprintln!("cannot create the heap: {e}");
            std::process::exit(1)
        }
    };
    std::thread::scope(|sc| {
        for t in 0..2 {
            let heap = &heap;
            sc.spawn(move || {
                let mut m = heap.attach(&format!("worker-{t}")).unwrap();
                m.scope(|s| {
                    let ring = s.alloc(1, 4096, 0).unwrap();
                    let start = Instant::now();
                    let mut i = 0usize;
                    while start.elapsed() < Duration::from_secs(secs) {
                        s.scope(|s| {
                            for _ in 0..256 {
                                let node = s.alloc(2, 2, 32).unwrap();
                                s.get(node).write_u64(0, i as u64);
                                let leaf = s.alloc(2, 0, 16).unwrap();
                                s.store(node, 0, Some(leaf));
                                s.store(ring, i % 4096, Some(node));
                                s.alloc(3, 0, 256).unwrap();
                                i += 1;
                            }
                        });
                    }
                });
            });
        }
    });
    let st = heap.stats();
    let mut by_kind = std::collections::BTreeMap::<&str, Vec<u64>>::new();
    for p in &st.pauses {
        by_kind.entry(p.kind.name()).or_default().push(p.total_ns);
    }
    println!("{} cycles", st.cycles.len());
    for (k, mut v) in by_kind {
        v.sort();
        println!(
            "{k}: {} pauses, median {:.3}ms, max {:.3}ms",
            v.len(),
            v[v.len() / 2] as f64 / 1e6,
            *v.last().unwrap() as f64 / 1e6
        );
    }
}
