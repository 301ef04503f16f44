//! Faults and bad input through the runtime's public API: every one gets a clear error (never
//! a panic or a hang) and leaves the heap — or, when creation failed, the process — consistent,
//! which each test shows by using a heap afterwards.
//!
//! - `Heap::new` with heap sizes 0, not granule aligned, above physical memory, above 16 TiB,
//!   initial above max; a backing directory that is missing, not a directory or not
//!   writable; huge pages without a pool; an address range taken by another mapping or
//!   another heap; a `vm.max_map_count` budget too low (the errors come back through
//!   `gc_runtime`; gc-core's own tests check the same errors at the mechanism level);
//! - objects larger than the heap, with overflowing sizes, or that fit the limit but not the
//!   free memory;
//! - two threads exhausting the heap at once: out-of-memory errors, data intact, recovery
//!   once the roots are dropped (concurrent and stw; epsilon fails and stays failed);
//! - a mutator that panics while holding locals, globals, weak handles and root-region slots
//!   (also inside a blocking region), a mutator that detaches in the middle of cycles, and a
//!   mutator that sits in a blocking region and never polls while pauses must complete.
//!
//! Leaks (fds, mappings, threads, memory) are checked in `leaks.rs`, alone in its binary.
use gc_core::address::VIRTUAL_TO_PHYSICAL_RATIO;
use gc_core::{AddressLayout, Reservation, View, GRANULE_SIZE};
use gc_runtime::{Backing, Heap, HeapConfig, HeapError, Mode, Offset, OutOfMemory, Scope, WeakRef};
use std::time::{Duration, Instant};

const MIB: u64 = 1 << 20;
const TIB: u64 = 1 << 40;

/// The error `Heap::new` returns for `cfg` (which must fail).
fn new_err(cfg: HeapConfig) -> HeapError {
    match Heap::new(cfg) {
        Ok(h) => panic!("expected an error, got a heap ({:?})", h.usage()),
        Err(e) => e,
    }
}

fn assert_mentions(e: &dyn std::fmt::Display, words: &[&str]) {
    let msg = e.to_string();
    for w in words {
        assert!(msg.contains(w), "message {msg:?} should mention {w:?}");
    }
}

/// After a failure, the process still makes working heaps: allocate, collect, read back.
fn heap_still_works(mode: Mode) {
    let h = Heap::new(HeapConfig::new(32 * MIB).mode(mode).verify(true)).unwrap();
    let mut m = h.attach("after").unwrap();
    m.scope(|s| {
        let a = s.alloc(1, 1, 16).unwrap();
        s.get(a).write_u64(0, 77);
        s.scope(|s| {
            for _ in 0..2000 {
                s.alloc(2, 0, 256).unwrap();
            }
        });
        let b = s.alloc(1, 0, 8).unwrap();
        s.store(a, 0, Some(b));
        s.collect("check");
        assert_eq!(s.get(a).read_u64(0), 77);
        assert!(s.get(a).load(0).unwrap().same(&s.get(b)));
    });
}

// --- Heap::new refusals ---------------------------------------------------------------------

#[test]
fn heap_sizes_zero_unaligned_too_large_are_refused() {
    let e = new_err(HeapConfig::new(0));
    assert!(matches!(e, HeapError::ZeroHeap), "{e:?}");
    assert_mentions(&e, &["max heap is 0", "2 MiB"]);

    let e = new_err(HeapConfig::new(3 * MIB + 17));
    assert!(matches!(e, HeapError::UnalignedHeap(_)), "{e:?}");
    assert_mentions(
        &e,
        &[
            "not a multiple of the 2 MiB granule",
            &(4 * MIB).to_string(),
        ],
    );

    for size in [
        8 * TIB + GRANULE_SIZE,
        32 * TIB,
        u64::MAX - (u64::MAX % GRANULE_SIZE),
    ] {
        let e = new_err(HeapConfig::new(size));
        assert!(
            matches!(e, HeapError::HeapTooLarge(s) if s == size),
            "{e:?}"
        );
        assert_mentions(&e, &["8 TiB"]);
    }

    let physical = gc_core::config::physical_memory_bytes().expect("sysconf knows the memory");
    let above = (physical / GRANULE_SIZE + 1) * GRANULE_SIZE;
    let e = new_err(HeapConfig::new(above));
    assert!(
        matches!(e, HeapError::HeapAbovePhysicalMemory { max, physical: p } if max == above && p == physical),
        "{e:?}"
    );
    assert_mentions(&e, &["more than this machine's memory", "smaller heap"]);

    let e = new_err(HeapConfig::new(64 * MIB).initial_heap(128 * MIB));
    assert!(matches!(e, HeapError::InitialAboveMax { .. }), "{e:?}");
    assert_mentions(&e, &["initial heap", "larger than the max heap"]);

    // The configuration's own check agrees with creation.
    assert!(HeapConfig::new(0).validate().is_err());
    assert!(HeapConfig::new(64 * MIB).validate().is_ok());
    heap_still_works(Mode::Concurrent);
}

#[test]
fn backing_directory_missing_not_a_directory_or_not_writable() {
    let missing = std::env::temp_dir().join(format!("zrs-missing-{}", std::process::id()));
    let e = new_err(HeapConfig::new(32 * MIB).backing(Backing::Directory(missing.clone())));
    assert!(
        matches!(&e, HeapError::BackingDirectoryMissing(p) if *p == missing),
        "{e:?}"
    );
    assert_mentions(&e, &["does not exist", "create it or name another"]);

    let file = std::env::temp_dir().join(format!("zrs-file-{}", std::process::id()));
    std::fs::write(&file, b"not a directory").unwrap();
    let e = new_err(HeapConfig::new(32 * MIB).backing(Backing::Directory(file.clone())));
    let _ = std::fs::remove_file(&file);
    assert!(matches!(&e, HeapError::BackingNotADirectory(_)), "{e:?}");
    assert_mentions(&e, &["is not a directory"]);

    // Root ignores permission bits, but sysfs refuses new files to everyone.
    let e = new_err(HeapConfig::new(32 * MIB).backing(Backing::Directory("/sys".into())));
    assert!(
        matches!(&e, HeapError::BackingDirectoryNotWritable { .. }),
        "{e:?}"
    );
    assert_mentions(&e, &["/sys", "make it writable or name another directory"]);

    // A writable directory works, collection included, and leaves no file behind.
    let dir = std::env::temp_dir();
    let h = Heap::new(
        HeapConfig::new(32 * MIB)
            .backing(Backing::Directory(dir.clone()))
            .verify(true),
    )
    .unwrap();
    let mut m = h.attach("dir").unwrap();
    m.scope(|s| {
        let a = s.alloc(1, 0, 8).unwrap();
        s.get(a).write_u64(0, 5);
        s.collect("dir");
        assert_eq!(s.get(a).read_u64(0), 5);
    });
    let prefix = format!("zgc-rs-heap.{}.", std::process::id());
    assert!(!std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .any(|e| e.file_name().to_string_lossy().starts_with(&prefix)));
}

#[test]
fn huge_pages_without_a_pool() {
    let sys = gc_core::HugePageSystem::read();
    let mut cfg = HeapConfig::new(64 * MIB);
    cfg.memory.huge_pages = gc_core::HugePages::Hugetlb;
    if sys
        .check(
            cfg.memory.huge_pages,
            64 * MIB,
            cfg.memory.backing.directory(),
        )
        .is_ok()
    {
        // This machine has a pool: then the heap must simply work.
        eprintln!("huge page pool present ({sys:?}): checking it works");
        let h = Heap::new(cfg).unwrap();
        let mut m = h.attach("huge").unwrap();
        m.scope(|s| {
            s.alloc(1, 0, 64).unwrap();
        });
        return;
    }
    let e = new_err(cfg);
    assert!(matches!(e, HeapError::HugePagesUnavailable { .. }), "{e:?}");
    assert_mentions(
        &e,
        &["huge pages", "vm.nr_hugepages", "turn huge pages off"],
    );
    heap_still_works(Mode::Stw);
}

fn at(offset: u64) -> HeapConfig {
    let mut c = HeapConfig::new(64 * MIB).verify(true);
    c.memory.reserve_at = Some(offset);
    c
}

/// The mappings (start, end) of this process that overlap the ranges a heap of `max_heap` at
/// `offset` reserves in its four views.
fn mappings_in_views(layout: &AddressLayout, offset: u64, max_heap: u64) -> Vec<(u64, u64)> {
    let len = max_heap * VIRTUAL_TO_PHYSICAL_RATIO;
    let ranges: Vec<(u64, u64)> = View::ALL
        .iter()
        .map(|&v| {
            let start = layout.view_base(v).raw() + offset;
            (start, start + len)
        })
        .collect();
    gc_runtime::proc_info::smaps()
        .iter()
        .filter(|m| ranges.iter().any(|&(s, e)| m.start < e && s < m.end))
        .map(|m| (m.start, m.end))
        .collect()
}

#[test]
fn address_range_taken_by_another_mapping_or_heap() {
    // Far from where other tests of this binary place their heaps (the first free slots).
    let offset = 2 * TIB;
    let layout = at(offset).memory.validate().unwrap();
    let blocker = layout.view_base(View::Remapped).raw() + offset + 100 * MIB;
    let blocking = Reservation::at(blocker, 2 * MIB).expect("the blocker range is free");
    let e = new_err(at(offset));
    assert!(matches!(e, HeapError::AddressRangeTaken { .. }), "{e:?}");
    assert_mentions(
        &e,
        &[
            "already taken by another mapping",
            "choose another reserve offset",
        ],
    );
    // The views reserved before the failing one were given back: nothing but the blocker is
    // mapped in the four view ranges. (Not a process-wide mapping count: the other tests of
    // this binary map and unmap their own heaps at the same time.)
    let left = mappings_in_views(&layout, offset, 64 * MIB);
    assert!(
        left == [(blocker, blocker + 2 * MIB)],
        "a failed Heap::new left mappings behind in its views: {left:x?}"
    );
    drop(blocking);

    // Now the range is free: a heap goes there; a second heap at the same offset is refused,
    // and the first one keeps working.
    let first = Heap::new(at(offset)).unwrap();
    let e = new_err(at(offset));
    assert!(matches!(e, HeapError::AddressRangeTaken { .. }), "{e:?}");
    let mut m = first.attach("first").unwrap();
    m.scope(|s| {
        let a = s.alloc(1, 0, 8).unwrap();
        s.get(a).write_u64(0, 9);
        s.collect("after refusal");
        assert_eq!(s.get(a).read_u64(0), 9);
        // The object lives at the requested offset.
        let (start, at) = (Offset::from_raw(offset), s.address_of(a));
        assert!(at >= start && at < start + 64 * MIB * 16, "{at:?}");
    });
    drop(m);
    drop(first);
    // Dropping the heap frees the range again.
    let again = Heap::new(at(offset)).unwrap();
    drop(again);
}

#[test]
fn max_map_count_budget_too_low() {
    let mut cfg = HeapConfig::new(256 * MIB);
    cfg.memory.max_map_count = Some(200);
    let e = new_err(cfg);
    assert!(
        matches!(e, HeapError::MapCountTooLow { limit: 200, .. }),
        "{e:?}"
    );
    assert_mentions(
        &e,
        &["vm.max_map_count is 200", "sysctl -w vm.max_map_count="],
    );
    // A budget that is large enough is accepted.
    let mut cfg = HeapConfig::new(64 * MIB);
    cfg.memory.max_map_count = Some(1 << 20);
    drop(Heap::new(cfg).unwrap());
    heap_still_works(Mode::Concurrent);
}

// --- objects that cannot be had --------------------------------------------------------------

#[test]
fn objects_larger_than_the_heap_or_overflowing() {
    for mode in [Mode::Concurrent, Mode::Stw, Mode::Epsilon] {
        let h = Heap::new(HeapConfig::new(32 * MIB).mode(mode).verify(true)).unwrap();
        let mut m = h.attach("big").unwrap();
        m.scope(|s| {
            let keep = s.alloc(1, 0, 8).unwrap();
            s.get(keep).write_u64(0, 1234);
            // Larger than the heap can ever hold: refused at once, without a stall.
            let stalls = h.stats().stalls.len();
            let e = s.alloc(1, 0, 32 << 20).unwrap_err();
            assert_mentions(&e, &["larger than the heap can ever hold"]);
            assert_eq!(
                h.stats().stalls.len(),
                stalls,
                "{mode}: no stall for an impossible size"
            );
            // Sizes whose arithmetic overflows.
            let e = s.alloc(1, u32::MAX, usize::MAX).unwrap_err();
            assert_mentions(&e, &["overflows the size limits"]);
            let e = s.alloc(1, 0, usize::MAX - 3).unwrap_err();
            assert_mentions(&e, &["overflows the size limits"]);
            // Fits the limit but not the memory left for mutators: out of memory.
            let e = s.alloc(1, 0, (31 << 20) - 64).unwrap_err();
            assert_mentions(&e, &["out of memory"]);
            // The heap is fine.
            assert_eq!(s.get(keep).read_u64(0), 1234);
            s.scope(|s| {
                for _ in 0..100 {
                    s.alloc(2, 2, 1000).unwrap();
                }
            });
            s.collect("after");
            assert_eq!(s.get(keep).read_u64(0), 1234);
            // A large object that does fit.
            let l = s.alloc(3, 1, 6 << 20).unwrap();
            s.get(l).write_u64((6 << 20) - 8, 99);
            s.store(l, 0, Some(keep));
            s.collect("after large");
            assert_eq!(s.get(l).read_u64((6 << 20) - 8), 99);
        });
    }
}

// --- exhaustion from two threads ---------------------------------------------------------------

fn checksum(t: u64, i: u64) -> u64 {
    ((t << 32) | i).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// Allocate until out of memory, keeping everything reachable from a chain of small tables
/// that starts at `head` (slot 0: an object of `obj_bytes`, slot 1: the next table). Returns
/// the number of objects kept and the error.
fn fill(
    s: &mut Scope<'_>,
    head: gc_runtime::Local<'_>,
    t: u64,
    obj_bytes: usize,
) -> (u64, OutOfMemory) {
    let mut table = head;
    let mut n = 0u64;
    loop {
        let o = match s.alloc(2, 0, obj_bytes) {
            Ok(o) => o,
            Err(e) => return (n, e),
        };
        s.get(o).write_u64(0, checksum(t, n));
        s.get(o).write_u64(obj_bytes - 8, checksum(t, n) ^ 1);
        s.store(table, 0, Some(o));
        n += 1;
        match s.alloc(1, 2, 8) {
            Ok(next) => {
                s.store(table, 1, Some(next));
                table = next;
            }
            Err(e) => return (n, e),
        }
    }
}

/// Walk the chain from `head` and check every object.
fn check_chain(s: &Scope<'_>, head: gc_runtime::Local<'_>, t: u64, n: u64, obj_bytes: usize) {
    let mut table = Some(s.get(head));
    let mut i = 0;
    while let Some(tb) = table {
        if let Some(o) = tb.load(0) {
            assert_eq!(o.read_u64(0), checksum(t, i), "thread {t} object {i}");
            assert_eq!(o.read_u64(obj_bytes - 8), checksum(t, i) ^ 1);
            i += 1;
        }
        table = tb.load(1);
    }
    assert_eq!(i, n, "thread {t}: objects kept");
}

/// Wait until `n` threads have arrived (a barrier that fails after a minute instead of
/// hanging when the other thread died).
fn rendezvous(arrived: &std::sync::atomic::AtomicUsize, n: usize) {
    arrived.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    let deadline = Instant::now() + Duration::from_secs(60);
    while arrived.load(std::sync::atomic::Ordering::Acquire) < n {
        assert!(Instant::now() < deadline, "the other thread never arrived");
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn two_threads_exhaust_the_heap_then_recover() {
    for mode in [Mode::Concurrent, Mode::Stw, Mode::Epsilon] {
        let h = Heap::new(HeapConfig::new(48 * MIB).mode(mode).verify(true)).unwrap();
        let barrier = std::sync::atomic::AtomicUsize::new(0);
        let started = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|sc| {
            for t in 0..2u64 {
                let (h, barrier, started) = (&h, &barrier, &started);
                sc.spawn(move || {
                    let mut m = h.attach(&format!("filler-{t}")).unwrap();
                    // One thread fills small pages, the other medium-sized objects.
                    let obj_bytes = if t == 0 { 3000 } else { 40_000 };
                    m.scope(|s| {
                        s.scope(|s| {
                            // Both chain heads exist before either thread fills the heap
                            // (else the faster one could leave the other no room for its
                            // head: a race of the test, seen once in CI).
                            let head = s.alloc(1, 2, 8).expect("room for the chain head");
                            s.blocking(|| rendezvous(started, 2));
                            let (n, err) = fill(s, head, t, obj_bytes);
                            assert!(n > 0, "{mode} thread {t}: nothing allocated");
                            assert_mentions(&err, &["out of memory"]);
                            // Both threads have failed before either lets go (wait as a
                            // blocked thread: a pause must not wait for us).
                            s.blocking(|| rendezvous(barrier, 2));
                            // Everything kept is intact after the failures.
                            check_chain(s, head, t, n, obj_bytes);
                            if mode != Mode::Epsilon {
                                s.collect("full heap");
                                check_chain(s, head, t, n, obj_bytes);
                            }
                        });
                        if mode == Mode::Epsilon {
                            // Nothing is ever freed: it stays an error.
                            let e = s.alloc(2, 0, 40_000).unwrap_err();
                            assert_mentions(&e, &["out of memory"]);
                            return;
                        }
                        // Roots dropped (the inner scope ended): the heap recovers. Allocate
                        // twice the heap again, keeping a bounded part reachable.
                        s.collect("recovery");
                        s.scope(|s| {
                            let keep = s.alloc(1, 256, 0).unwrap();
                            for i in 0..(96 * MIB as usize / obj_bytes) {
                                s.scope(|s| {
                                    let o = s.alloc(2, 0, obj_bytes).unwrap_or_else(|e| {
                                        panic!("{mode} thread {t}: no recovery after {i}: {e}")
                                    });
                                    if i % 16 == 0 {
                                        s.store(keep, (i / 16) % 256, Some(o));
                                    }
                                });
                            }
                        });
                    });
                });
            }
        });
        if mode != Mode::Epsilon {
            let st = h.stats();
            assert!(
                st.stalls.iter().any(|s| s.failed),
                "{mode}: the failed stalls are recorded"
            );
        }
    }
}

// --- misbehaving mutators ----------------------------------------------------------------------

/// Sets the flag when dropped: a failed assertion in a test body must stop the helper threads
/// (and so fail the test) instead of leaving them running and the test hanging.
struct SetOnDrop<'a>(&'a std::sync::atomic::AtomicBool);

impl Drop for SetOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// A checked list owned by a long-running thread: built, then verified repeatedly while other
/// threads misbehave.
fn steady_worker(h: &Heap, stop: &std::sync::atomic::AtomicBool) -> u64 {
    let mut m = h.attach("steady").unwrap();
    let mut rounds = 0;
    m.scope(|s| {
        let head = s.alloc(1, 1, 8).unwrap();
        let mut tail = head;
        for i in 1..500u64 {
            let n = s.alloc(1, 1, 8).unwrap();
            s.get(n).write_u64(0, i);
            s.store(tail, 0, Some(n));
            tail = n;
            s.scope(|s| {
                s.alloc(9, 0, 200).unwrap();
            });
        }
        while !stop.load(std::sync::atomic::Ordering::Relaxed) || rounds < 3 {
            s.scope(|s| {
                for _ in 0..200 {
                    s.alloc(9, 1, 100).unwrap();
                }
            });
            let mut cur = s.get(head).load(0);
            let mut i = 1;
            while let Some(c) = cur {
                assert_eq!(c.read_u64(0), i, "steady list corrupted");
                i += 1;
                cur = c.load(0);
            }
            assert_eq!(i, 500);
            rounds += 1;
        }
    });
    rounds
}

#[test]
fn a_mutator_that_panics_while_holding_handles() {
    let h = Heap::new(HeapConfig::new(64 * MIB).verify(true).continuous(true)).unwrap();
    let region = h.root_region(16);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let globals_before = h.memory_report().global_handles;
    let weaks: Vec<WeakRef> = std::thread::scope(|sc| {
        let _stop = SetOnDrop(&stop);
        let steady = sc.spawn(|| steady_worker(&h, &stop));
        let mut weaks = Vec::new();
        for round in 0..6 {
            let (h, region) = (&h, &region);
            let (tx, rx) = std::sync::mpsc::channel::<WeakRef>();
            let r = sc
                .spawn(move || {
                    let mut m = h.attach(&format!("doomed-{round}")).unwrap();
                    m.scope(|s| {
                        let a = s.alloc(1, 1, 64).unwrap();
                        let _g = s.global(a);
                        tx.send(s.weak(a)).unwrap();
                        region.set_local(s, round, Some(a));
                        s.scope(|s| {
                            for _ in 0..2000 {
                                let b = s.alloc(1, 1, 32).unwrap();
                                s.store(b, 0, Some(a));
                            }
                            match round % 3 {
                                // Inside a blocking region (as if in I/O).
                                0 => s.blocking(|| panic!("mutator fails while blocked")),
                                // Inside a nested scope.
                                1 => panic!("mutator fails in a nested scope"),
                                // While a cycle is asked for.
                                _ => {
                                    s.collect("before panic");
                                    panic!("mutator fails after a collection")
                                }
                            }
                        })
                    })
                })
                .join();
            assert!(r.is_err(), "the mutator thread panicked");
            weaks.push(rx.recv().unwrap());
            // The region still roots the object the dead thread stored there.
            let mut m = h.attach("checker").unwrap();
            m.scope(|s| {
                assert!(region.get(s, round).is_some());
                s.collect("after panic");
                assert!(s.upgrade(weaks.last().unwrap()).is_some());
                region.set(s, round, None);
            });
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        assert!(steady.join().unwrap() >= 3);
        weaks
    });
    // The dead threads' globals were released while unwinding; with the region cleared, the
    // objects die and their weak handles clear.
    assert_eq!(h.memory_report().global_handles, globals_before);
    h.collect("end").unwrap();
    h.collect("end").unwrap();
    for w in &weaks {
        assert!(
            w.is_cleared(),
            "an object only a dead thread held is still alive"
        );
    }
}

#[test]
fn mutators_detach_in_the_middle_of_cycles() {
    // Threads attach, load pointers through their barriers (so their mark buffers hold
    // work during marking), and detach — hundreds of times while cycles run back to back.
    // Lists rooted by globals outlive their threads and are checked by later ones.
    let h = Heap::new(HeapConfig::new(64 * MIB).verify(true).continuous(true)).unwrap();
    let stop = std::sync::atomic::AtomicBool::new(false);
    let lists: std::sync::Mutex<Vec<(gc_runtime::Global, u64)>> = Default::default();
    std::thread::scope(|sc| {
        let _stop = SetOnDrop(&stop);
        let steady = sc.spawn(|| steady_worker(&h, &stop));
        let deadline = Instant::now() + Duration::from_secs(3);
        let mut k = 0u64;
        while Instant::now() < deadline {
            let (h, lists) = (&h, &lists);
            k += 1;
            let id = k;
            sc.spawn(move || {
                let mut m = h.attach(&format!("short-{id}")).unwrap();
                m.scope(|s| {
                    // Check (and so mark through) an older list, then build a new one.
                    let old = lists.lock().unwrap().pop();
                    if let Some((g, len)) = &old {
                        let mut cur = Some(s.from_global(g));
                        let mut i = 0;
                        while let Some(c) = cur {
                            assert_eq!(s.get(c).read_u64(0), i, "list corrupted");
                            i += 1;
                            cur = s.load(c, 0);
                        }
                        assert_eq!(i, *len);
                    }
                    let head = s.alloc(1, 1, 8).unwrap();
                    let mut tail = head;
                    for i in 1..300u64 {
                        let n = s.alloc(1, 1, 8).unwrap();
                        s.get(n).write_u64(0, i);
                        s.store(tail, 0, Some(n));
                        tail = n;
                    }
                    let g = s.global(head);
                    let mut l = lists.lock().unwrap();
                    l.push((g, 300));
                    if let Some(o) = old {
                        l.push(o);
                    }
                });
                // Dropped here: detaches, maybe in the middle of Concurrent Mark.
            })
            .join()
            .unwrap();
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        steady.join().unwrap();
        assert!(k > 20, "only {k} threads attached and detached");
    });
    let cycles = h.stats().cycles.len();
    assert!(cycles >= 3, "{cycles} cycles");
    // Every list survived.
    let mut m = h.attach("final").unwrap();
    m.scope(|s| {
        for (g, len) in lists.lock().unwrap().iter() {
            let mut cur = Some(s.from_global(g));
            let mut i = 0;
            while let Some(c) = cur {
                assert_eq!(s.get(c).read_u64(0), i);
                i += 1;
                cur = s.load(c, 0);
            }
            assert_eq!(i, *len);
        }
    });
}

#[test]
fn a_mutator_blocked_forever_does_not_hold_up_pauses() {
    for mode in [Mode::Concurrent, Mode::Stw] {
        let h = Heap::new(HeapConfig::new(64 * MIB).mode(mode).verify(true)).unwrap();
        let (to_main, from_sleeper) = std::sync::mpsc::channel::<Offset>();
        let (to_sleeper, from_main) = std::sync::mpsc::channel::<()>();
        std::thread::scope(|sc| {
            let h2 = &h;
            let sleeper = sc.spawn(move || {
                let mut m = h2.attach("sleeper").unwrap();
                m.scope(|s| {
                    // Objects on a sparse page, so they move while this thread is blocked.
                    let keep = s.alloc(1, 64, 0).unwrap();
                    for i in 0..64 {
                        let o = s.alloc(2, 0, 64).unwrap();
                        s.get(o).write_u64(0, i);
                        s.store(keep, i as usize, Some(o));
                        s.scope(|s| {
                            s.alloc(3, 0, 20_000).unwrap();
                        });
                    }
                    let check = |s: &Scope<'_>| {
                        for i in 0..64 {
                            assert_eq!(s.get(keep).load(i).unwrap().read_u64(0), i as u64);
                        }
                    };
                    for _ in 0..2 {
                        to_main.send(s.address_of(keep)).unwrap();
                        // Never polls: sits in the blocking region until told.
                        s.blocking(|| from_main.recv().unwrap());
                        check(s);
                    }
                    to_main.send(s.address_of(keep)).unwrap();
                });
            });
            // One cycle while the sleeper is blocked: its sparse page is evacuated and its
            // handle updated in Pause Relocate Start.
            let a0 = from_sleeper.recv().unwrap();
            h.collect("while blocked").unwrap();
            to_sleeper.send(()).unwrap();
            let a1 = from_sleeper.recv().unwrap();
            assert_ne!(a0, a1, "{mode}: the blocked thread's object did not move");
            // More pauses, from a thread without a mutator and from another mutator.
            let t = Instant::now();
            for _ in 0..3 {
                h.collect("while blocked").unwrap();
            }
            let mut m = h.attach("other").unwrap();
            m.scope(|s| {
                for _ in 0..3 {
                    s.collect("while blocked");
                }
            });
            drop(m);
            assert!(
                t.elapsed() < Duration::from_secs(20),
                "{mode}: pauses waited for the blocked thread"
            );
            let st = h.stats();
            assert!(st.cycles.len() >= 7, "{mode}");
            assert!(
                st.pauses
                    .iter()
                    .all(|p| p.time_to_safepoint_ns < 2_000_000_000),
                "{mode}: a pause waited seconds for the blocked thread"
            );
            to_sleeper.send(()).unwrap();
            from_sleeper.recv().unwrap();
            sleeper.join().unwrap();
        });
    }
}
