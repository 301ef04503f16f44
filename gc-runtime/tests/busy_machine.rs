//! A machine whose cores other threads keep busy. GC threads in the idle scheduling class get
//! almost no CPU there, so the collector must notice that they starve and run them at normal
//! priority (the `idle_class_guard` module) instead of letting its cycles crawl while the
//! mutators it paces wait for them. Alone in its test binary: the spinning threads would slow
//! every other test.

use gc_runtime::{Heap, HeapConfig, Mode};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const MIB: u64 = 1 << 20;
/// Cycles the heap must complete while every core is kept busy.
const MIN_CYCLES: usize = 10;
/// The longest the test waits for them.
const AT_MOST: Duration = Duration::from_secs(60);

#[test]
fn busy_cores_do_not_starve_the_collector() {
    if !std::path::Path::new("/proc/self/schedstat").exists() {
        eprintln!("this kernel keeps no schedstat: the guard cannot watch GC threads here");
        return;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let heap = Heap::new(HeapConfig::new(64 * MIB).mode(Mode::Concurrent)).unwrap();
    let stop = AtomicBool::new(false);
    let start = Instant::now();
    let (cycles, starvations, ops) = std::thread::scope(|sc| {
        // One thread per core at normal priority, as another process's busy loops would be.
        for _ in 0..cores {
            sc.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            });
        }
        let mutator = sc.spawn(|| {
            let mut m = heap.attach("mutator").unwrap();
            let mut ops = 0u64;
            m.scope(|s| {
                // 16 MiB live in 4,096 slots of 4 KiB objects, replaced one by one, with as
                // much short-lived garbage: the heap fills fast enough to be paced.
                const SLOTS: u64 = 4096;
                let table = s.alloc(1, SLOTS as u32, 0).unwrap();
                while !stop.load(Ordering::Relaxed) {
                    s.scope(|s| {
                        let o = s.alloc(2, 0, 4096).expect("64 MiB hold a 16 MiB live set");
                        s.get(o).write_u64(0, ops);
                        s.store(table, (ops % SLOTS) as usize, Some(o));
                        s.alloc(3, 0, 4096).expect("garbage");
                    });
                    ops += 1;
                }
            });
            ops
        });
        let count = || {
            let st = heap.stats();
            let starved: u64 = st.cycles.iter().map(|c| c.idle_class_starvations).sum();
            (st.cycles.len(), starved)
        };
        while start.elapsed() < AT_MOST && {
            let (c, s) = count();
            c < MIN_CYCLES || s == 0
        } {
            std::thread::sleep(Duration::from_millis(50));
        }
        stop.store(true, Ordering::Relaxed);
        let ops = mutator.join().unwrap();
        let (c, s) = count();
        (c, s, ops)
    });
    let st = heap.stats();
    let stall_max = st.stalls.iter().map(|s| s.duration_ns).max().unwrap_or(0);
    eprintln!(
        "{cores} busy cores: {cycles} cycles, {starvations} starved idle-class runs, {ops} ops \
         in {:.1} s; {} stalls (longest {:.1} ms), {} phases on idle-class workers",
        start.elapsed().as_secs_f64(),
        st.stalls.len(),
        stall_max as f64 / 1e6,
        st.cycles
            .iter()
            .map(|c| c.phases_on_idle_workers)
            .sum::<u64>()
    );
    assert!(
        starvations > 0,
        "no idle-class run was found starved with every core busy: the test missed its path"
    );
    assert!(
        cycles >= MIN_CYCLES,
        "only {cycles} cycles in {AT_MOST:?} with every core busy"
    );
}
