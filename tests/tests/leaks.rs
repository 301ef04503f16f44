//! Creating and dropping heaps repeatedly, through the runtime, while threads stay attached
//! to another heap, leaks nothing: the numbers of open file descriptors, mappings and threads
//! (`/proc/self/fd`, `/proc/self/maps`, `/proc/self/task`) come back to what they were, and
//! the process's memory (Pss) does not grow with the number of heaps.
//!
//! Each heap's life varies: modes (concurrent, stw, epsilon), memfd or directory backing,
//! attached threads, collections, out-of-memory, root regions, globals and weak handles that
//! outlive the `Heap` value, failed `Heap::new` calls in between. This is the only test in
//! its binary: no other test creates heaps or threads while it counts.
use gc_runtime::proc_info::{count_fds, count_mappings, process_memory};
use gc_runtime::{Backing, Heap, HeapConfig, Mode};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

const MIB: u64 = 1 << 20;

fn count_threads() -> u64 {
    std::fs::read_dir("/proc/self/task").map_or(0, |d| d.count() as u64)
}

#[derive(Debug, PartialEq, Eq, Clone, Copy)]
struct Counts {
    fds: u64,
    maps: u64,
    threads: u64,
}

fn counts() -> Counts {
    Counts {
        fds: count_fds(),
        maps: count_mappings(),
        threads: count_threads(),
    }
}

/// The counts once they stop changing (two equal samples 50 ms apart; 2 s at most). A GC
/// worker thread that was joined can take a moment more to leave the process: spawned
/// workers run in `SCHED_IDLE`, so on a busy machine the rest of their exit waits for an idle
/// core. A leak stays; a thread on its way out does not.
fn settled_counts() -> Counts {
    let mut last = counts();
    for _ in 0..40 {
        std::thread::sleep(Duration::from_millis(50));
        let now = counts();
        if now == last {
            return now;
        }
        last = now;
    }
    last
}

/// One heap's life.
fn one_heap(i: u64) {
    let mode = [Mode::Concurrent, Mode::Stw, Mode::Epsilon][(i % 3) as usize];
    let mut cfg = HeapConfig::new(64 * MIB)
        .mode(mode)
        .verify(i.is_multiple_of(2));
    if i % 4 == 3 {
        cfg = cfg.backing(Backing::Directory(std::env::temp_dir()));
    }
    if i.is_multiple_of(5) {
        cfg = cfg.initial_heap(8 * MIB);
    }
    // A failed creation in between leaves nothing behind either.
    assert!(Heap::new(HeapConfig::new(3 * MIB)).is_err());
    let mut bad = HeapConfig::new(64 * MIB);
    bad.memory.max_map_count = Some(10);
    assert!(Heap::new(bad).is_err());

    let h = Heap::new(cfg).unwrap();
    let region = h.root_region(8);
    let mut keep_past_heap = Vec::new();
    let mut weak_past_heap = Vec::new();
    std::thread::scope(|sc| {
        for t in 0..2 {
            let (h, region) = (&h, &region);
            sc.spawn(move || {
                let mut m = h.attach(&format!("heap{i}-t{t}")).unwrap();
                m.scope(|s| {
                    let root = match s.alloc(1, 64, 8) {
                        Ok(r) => r,
                        // Epsilon: the other thread may have filled the heap already.
                        Err(e) => {
                            assert_eq!(mode, Mode::Epsilon, "heap {i}: {e}");
                            return;
                        }
                    };
                    region.set_local(s, t, Some(root));
                    for k in 0..3000usize {
                        let o = match s.alloc(2, 1, 100 + (k % 7) * 300) {
                            Ok(o) => o,
                            Err(_) => break,
                        };
                        if k % 50 == 0 {
                            s.store(root, (k / 50) % 64, Some(o));
                        }
                        if k % 500 == 0 {
                            s.scope(|s| {
                                let _ = s.alloc(3, 0, 300 << 10);
                            });
                        }
                    }
                    if mode == Mode::Epsilon {
                        // Fill the heap: out-of-memory is part of the life.
                        s.scope(|s| while s.alloc(4, 0, 64 << 10).is_ok() {});
                    } else {
                        s.collect("leaks");
                    }
                });
            });
        }
    });
    // Handles that outlive the Heap value keep its shared state until they go.
    let mut m = h.attach("main").unwrap();
    m.scope(|s| {
        if let Ok(o) = s.alloc(5, 0, 64) {
            keep_past_heap.push(s.global(o));
            weak_past_heap.push(s.weak(o));
        }
    });
    drop(m);
    if i.is_multiple_of(2) {
        drop(h);
        drop(region);
    } else {
        drop(region);
        drop(h);
    }
    drop(weak_past_heap);
    drop(keep_past_heap);
}

#[test]
fn heaps_come_and_go_while_threads_stay_attached_elsewhere() {
    // The other heap and its threads: attached for the whole test, working while heaps come
    // and go, parked in a blocking region while we count.
    let other = Heap::new(HeapConfig::new(64 * MIB).verify(true)).unwrap();
    let work = AtomicBool::new(true);
    let quit = AtomicBool::new(false);
    let parked = AtomicU64::new(0);
    // Tell the resident threads to quit however the test body ends (a failed assertion
    // must fail the test, not leave them running and the test hanging).
    struct QuitOnDrop<'a>(&'a AtomicBool);
    impl Drop for QuitOnDrop<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Release);
        }
    }
    std::thread::scope(|sc| {
        let _quit = QuitOnDrop(&quit);
        for t in 0..2 {
            let (other, work, quit, parked) = (&other, &work, &quit, &parked);
            sc.spawn(move || {
                let mut m = other.attach(&format!("resident-{t}")).unwrap();
                m.scope(|s| {
                    let list = s.alloc(1, 1, 8).unwrap();
                    s.get(list).write_u64(0, 1);
                    while !quit.load(Ordering::Acquire) {
                        if work.load(Ordering::Acquire) {
                            s.scope(|s| {
                                for _ in 0..200 {
                                    let n = s.alloc(1, 1, 64).unwrap();
                                    s.store(n, 0, Some(list));
                                }
                            });
                        } else {
                            parked.fetch_add(1, Ordering::AcqRel);
                            s.blocking(|| {
                                while !work.load(Ordering::Acquire) && !quit.load(Ordering::Acquire)
                                {
                                    std::thread::sleep(Duration::from_millis(1));
                                }
                            });
                            parked.fetch_sub(1, Ordering::AcqRel);
                        }
                    }
                    assert_eq!(s.get(list).read_u64(0), 1);
                });
            });
        }
        let settle = |work_on: bool| {
            work.store(work_on, Ordering::Release);
            if !work_on {
                while parked.load(Ordering::Acquire) < 2 {
                    std::thread::sleep(Duration::from_millis(1));
                }
                // Let the other heap finish any cycle it is in.
                other.collect("settle").unwrap();
                other.collect("settle").unwrap();
            }
        };

        // Warm up (first-use allocations of the allocator, thread-locals, epoch GC; glibc's
        // per-thread malloc arenas and its cache of exited threads' stacks, which GC workers
        // spawned per phase fill up to their limits), then take the baseline with the
        // resident threads parked.
        work.store(true, Ordering::Release);
        for i in 0..20 {
            one_heap(i);
        }
        settle(false);
        let base = settled_counts();
        let pss_base = process_memory().pss;
        let resident_base = other.usage().committed;

        settle(true);
        let n = 60;
        for i in 0..n {
            one_heap(i);
        }
        settle(false);
        let after = settled_counts();
        let pss_after = process_memory().pss;
        let resident_after = other.usage().committed;
        // The resident heap keeps working, and may commit more of its own 64 MiB meanwhile:
        // that growth is its own, not a leak of the heaps that came and went.
        let resident_growth = resident_after.saturating_sub(resident_base);
        eprintln!(
            "{n} heaps: fds {} -> {}, mappings {} -> {}, threads {} -> {}, Pss {} -> {} MiB \
             (the resident heap's committed memory {} -> {} MiB)",
            base.fds,
            after.fds,
            base.maps,
            after.maps,
            base.threads,
            after.threads,
            pss_base >> 20,
            pss_after >> 20,
            resident_base >> 20,
            resident_after >> 20
        );
        assert_eq!(after.fds, base.fds, "file descriptors leaked");
        assert_eq!(after.threads, base.threads, "threads leaked");
        // The resident heap may have mapped a page or two more meanwhile (three mappings per
        // granule, one per view), its live relocation set's forwarding tables are mappings of
        // the allocator's, and glibc's arenas and cached thread stacks (two mappings each)
        // can still grow a little: together they vary by up to a dozen or two between two
        // counts. A leak of even one mapping per heap would show as 60.
        assert!(
            after.maps <= base.maps + 20,
            "mappings leaked: {} -> {}",
            base.maps,
            after.maps
        );
        // 60 heaps touched well over a GiB in total; a leak of even one heap's pages shows.
        assert!(
            pss_after <= pss_base + resident_growth + 24 * MIB,
            "memory leaked: Pss {} -> {} MiB, of which the resident heap's own commits explain \
             {} MiB",
            pss_base >> 20,
            pss_after >> 20,
            resident_growth >> 20
        );
        quit.store(true, Ordering::Release);
    });
}
