//! A machine whose cores other threads keep busy. GC threads in the idle scheduling class get
//! almost no CPU there, so the collector must notice that they starve and run them at normal
//! priority (the `idle_class_guard` module) instead of letting its cycles crawl while the
//! mutators it paces wait for them. And a mutator that shares its core with a busy thread
//! reaches its safepoint late for want of a CPU: the pause records say how much of their time
//! to safepoint was that wait. Alone in its test binary: the spinning threads would slow
//! every other test.

use gc_runtime::{Heap, HeapConfig, Mode};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
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

/// Pin the calling thread to CPU 0.
fn pin_to_cpu_0() {
    // SAFETY: `set` is a zeroed cpu_set_t (a valid empty set) that CPU_SET fills and
    // sched_setaffinity reads for the duration of the call; pid 0 means the calling thread.
    let ok = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(0, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    };
    assert!(ok, "sched_setaffinity: {}", std::io::Error::last_os_error());
}

/// Pauses with a reading of the time to safepoint's wait for a CPU the test needs.
const MIN_PAUSES_READ: usize = 30;

#[test]
fn a_mutator_sharing_its_core_waits_for_a_cpu_to_reach_its_safepoint() {
    if !std::path::Path::new("/proc/thread-self/schedstat").exists() {
        eprintln!("this kernel keeps no schedstat: there is no wait for a CPU to read");
        return;
    }
    let heap = Heap::new(HeapConfig::new(64 * MIB).mode(Mode::Concurrent)).unwrap();
    let stop = AtomicBool::new(false);
    let ops = AtomicU64::new(0);
    let start = Instant::now();
    std::thread::scope(|sc| {
        // A busy thread and the mutator on one CPU: whenever the busy thread has it, the
        // mutator is runnable without a CPU, for up to a scheduler time slice.
        sc.spawn(|| {
            pin_to_cpu_0();
            while !stop.load(Ordering::Relaxed) {
                std::hint::spin_loop();
            }
        });
        sc.spawn(|| {
            pin_to_cpu_0();
            let mut m = heap.attach("mutator").unwrap();
            m.scope(|s| {
                while !stop.load(Ordering::Relaxed) {
                    s.scope(|s| {
                        s.alloc(1, 0, 64).expect("garbage");
                    });
                    ops.fetch_add(1, Ordering::Relaxed);
                }
            });
        });
        // Each request once the mutator has run since the last pause, so that it is inside
        // its scope (running, not waiting to enter it) when the request comes.
        let ran = |since: u64| ops.load(Ordering::Relaxed) > since + 100;
        let read = || {
            heap.stats()
                .pauses
                .iter()
                .filter(|p| p.time_to_safepoint_cpu_wait_ns.is_some())
                .count()
        };
        while read() < MIN_PAUSES_READ && start.elapsed() < AT_MOST {
            let since = ops.load(Ordering::Relaxed);
            while !ran(since) && start.elapsed() < AT_MOST {
                std::thread::sleep(Duration::from_micros(200));
            }
            heap.collect("test").unwrap();
        }
        stop.store(true, Ordering::Relaxed);
    });
    let st = heap.stats();
    let read: Vec<(u64, u64)> = st
        .pauses
        .iter()
        .filter_map(|p| Some((p.time_to_safepoint_ns, p.time_to_safepoint_cpu_wait_ns?)))
        .collect();
    let longest = read.iter().map(|&(_, w)| w).max().unwrap_or(0);
    let (ttsp, waited): (u64, u64) = read
        .iter()
        .fold((0, 0), |(t, w), &(pt, pw)| (t + pt, w + pw));
    eprintln!(
        "{} pauses read: time to safepoint {:.2} ms in all, {:.2} ms of it waiting for a CPU, \
         the longest wait {:.3} ms",
        read.len(),
        ttsp as f64 / 1e6,
        waited as f64 / 1e6,
        longest as f64 / 1e6
    );
    assert!(
        read.len() >= MIN_PAUSES_READ,
        "only {} pauses with the reading in {AT_MOST:?}",
        read.len()
    );
    for &(t, w) in &read {
        assert!(
            w <= t,
            "a wait of {w} ns beyond its time to safepoint of {t} ns"
        );
    }
    // About every other request finds the busy thread on the CPU, and the mutator then waits
    // for its slice to end (milliseconds): a run with no wait of even 100 µs missed the path.
    assert!(
        longest >= 100_000,
        "no pause's time to safepoint had a wait for a CPU of 100 µs or more: {read:?}"
    );
}
