//! The embedding API under collection: weak handles, out-of-memory and recovery, all three
//! modes, panics and detaching mid-cycle, blocking regions, root regions.
use gc_runtime::{Heap, HeapConfig, Mode};
use std::time::Duration;

fn heap(mode: Mode, mb: u64) -> Heap {
    Heap::new(HeapConfig::new(mb << 20).mode(mode).verify(true)).unwrap()
}

#[test]
fn weak_handles_clear_exactly_when_the_target_dies() {
    for mode in [Mode::Concurrent, Mode::Stw] {
        let h = heap(mode, 32);
        let mut m = h.attach("main").unwrap();
        m.scope(|s| {
            let keep = s.alloc(1, 0, 8).unwrap();
            s.get(keep).write_u64(0, 11);
            let keep_g = s.global(keep);
            let w_keep = s.weak(keep);
            let w_drop = s.scope(|s| {
                let d = s.alloc(1, 0, 8).unwrap();
                s.weak(d)
            });
            // Upgrade in a nested scope so the handle it makes is gone before collecting.
            s.scope(|s| {
                assert!(
                    s.upgrade(&w_drop).is_some(),
                    "{mode}: alive before any cycle"
                )
            });
            s.collect("test");
            assert!(
                w_drop.is_cleared(),
                "{mode}: unreachable target not cleared"
            );
            assert!(s.upgrade(&w_drop).is_none());
            let k = s.upgrade(&w_keep).expect("reachable target kept");
            assert_eq!(s.get(k).read_u64(0), 11);
            assert!(s.same_object(k, s.from_global(&keep_g)));
            drop(keep_g);
        });
    }
}

#[test]
fn out_of_memory_is_an_error_and_the_heap_recovers() {
    for mode in [Mode::Concurrent, Mode::Stw, Mode::Epsilon] {
        let h = heap(mode, 16);
        let mut m = h.attach("main").unwrap();
        m.scope(|s| {
            let err = s.scope(|s| {
                let table = s.alloc(1, 4096, 0).unwrap();
                for i in 0..4096 {
                    match s.alloc(2, 0, 8 << 10) {
                        Ok(o) => s.store(table, i, Some(o)),
                        Err(e) => return Some(e),
                    }
                }
                None
            });
            let err = err.unwrap_or_else(|| panic!("{mode}: 32M of live data fit in 16M"));
            assert!(err.to_string().contains("out of memory"), "{err}");
            // An object larger than the heap is refused with its own error.
            let big = s.alloc(3, 0, 32 << 20).unwrap_err();
            assert!(big.to_string().contains("larger than the heap"), "{big}");
            if mode != Mode::Epsilon {
                // Roots released: a cycle makes room again.
                for _ in 0..100 {
                    s.scope(|s| {
                        s.alloc(2, 0, 8 << 10).unwrap();
                    });
                }
                s.collect("test");
                s.scope(|s| {
                    for _ in 0..512 {
                        s.alloc(2, 0, 8 << 10).unwrap();
                    }
                });
            }
        });
        let st = h.stats();
        if mode != Mode::Epsilon {
            assert!(
                st.stalls.iter().any(|s| s.failed),
                "{mode}: the failed stall is recorded"
            );
        }
    }
}

#[test]
fn large_and_medium_objects_survive_and_medium_ones_move() {
    let h = heap(Mode::Concurrent, 256);
    let mut m = h.attach("main").unwrap();
    m.scope(|s| {
        let large = s.alloc(5, 1, 5 << 20).unwrap();
        s.get(large).write_u64((5 << 20) - 8, 0xfeed);
        let med = s.alloc(6, 0, 512 << 10).unwrap();
        s.get(med).write_u64(0, 0xbeef);
        // Garbage on the same medium page so it is sparse.
        s.scope(|s| {
            for _ in 0..8 {
                s.alloc(6, 0, 512 << 10).unwrap();
            }
        });
        let (a_large, a_med) = (s.address_of(large), s.address_of(med));
        s.collect("test");
        assert_eq!(s.get(large).read_u64((5 << 20) - 8), 0xfeed);
        assert_eq!(s.get(med).read_u64(0), 0xbeef);
        assert_eq!(s.address_of(large), a_large, "large objects never move");
        assert_ne!(
            s.address_of(med),
            a_med,
            "a sparse medium page is evacuated"
        );
    });
}

#[test]
fn a_panicking_mutator_leaves_the_heap_consistent() {
    let h = heap(Mode::Concurrent, 64);
    std::thread::scope(|sc| {
        let t = sc.spawn(|| {
            let mut m = h.attach("doomed").unwrap();
            m.scope(|s| {
                for _ in 0..1000 {
                    s.alloc(1, 1, 32).unwrap();
                }
                panic!("mutator fails while holding handles");
            })
        });
        assert!(t.join().is_err());
    });
    let mut m = h.attach("survivor").unwrap();
    m.scope(|s| {
        let o = s.alloc(1, 0, 8).unwrap();
        s.get(o).write_u64(0, 5);
        s.collect("after panic");
        assert_eq!(s.get(o).read_u64(0), 5);
    });
    assert!(!h.stats().cycles.is_empty());
}

#[test]
fn blocking_regions_and_detaching_do_not_hold_up_pauses() {
    let h = Heap::new(HeapConfig::new(64 << 20).verify(true).continuous(true)).unwrap();
    std::thread::scope(|sc| {
        // A thread that sits in a blocking region for a long time, holding a handle.
        sc.spawn(|| {
            let mut m = h.attach("sleeper").unwrap();
            m.scope(|s| {
                let o = s.alloc(1, 0, 8).unwrap();
                s.get(o).write_u64(0, 77);
                s.blocking(|| std::thread::sleep(Duration::from_millis(500)));
                assert_eq!(s.get(o).read_u64(0), 77);
            });
        });
        // Threads that attach, allocate and detach while cycles run.
        for t in 0..4 {
            let h = &h;
            sc.spawn(move || {
                for _ in 0..20 {
                    let mut m = h.attach(&format!("short-{t}")).unwrap();
                    m.scope(|s| {
                        let a = s.alloc(1, 1, 16).unwrap();
                        for _ in 0..200 {
                            let b = s.alloc(1, 1, 16).unwrap();
                            s.store(b, 0, Some(a));
                        }
                    });
                }
            });
        }
    });
    assert!(h.stats().cycles.len() >= 2);
}

#[test]
fn root_regions_are_scanned_and_updated() {
    let h = heap(Mode::Concurrent, 32);
    let region = h.root_region(64);
    let mut m = h.attach("main").unwrap();
    m.scope(|s| {
        s.scope(|s| {
            for i in 0..64 {
                let o = s.alloc(1, 0, 8).unwrap();
                s.get(o).write_u64(0, i as u64);
                region.set_local(s, i, Some(o));
                // garbage so the page is sparse and gets evacuated
                s.alloc(1, 0, 4000).unwrap();
            }
        });
        let before = region.get(s, 3).unwrap().address();
        s.collect("test");
        s.collect("test");
        for i in 0..64 {
            assert_eq!(region.get(s, i).unwrap().read_u64(0), i as u64);
        }
        assert_ne!(region.get(s, 3).unwrap().address(), before);
        region.clear_from(0);
        assert!(region.is_null(0));
    });
}

#[test]
fn attaching_twice_on_one_thread_is_refused() {
    let h = heap(Mode::Concurrent, 16);
    let _m = h.attach("main").unwrap();
    assert!(h.attach("again").is_err());
    assert!(h.collect("from a mutator thread").is_err());
}

/// Allocate rounds of short-lived objects in an 8 MiB heap (four small pages, one of them the
/// relocation reserve), keeping 64 of them; returns the heap for its statistics.
fn churn_a_small_heap(mode: Mode) -> Heap {
    let h = Heap::new(HeapConfig::new(8 << 20).mode(mode).verify(true)).unwrap();
    let mut m = h.attach("main").unwrap();
    m.scope(|s| {
        let keep = s.alloc(1, 64, 0).unwrap();
        for round in 0..40u64 {
            s.scope(|s| {
                for i in 0..2000u64 {
                    let o = s.alloc(2, 0, 240).unwrap_or_else(|e| {
                        panic!("{mode}: round {round}, object {i}: {e}\n{}", cycles(&h))
                    });
                    s.get(o).write_u64(0, round * 10_000 + i);
                    if i % 250 == 0 {
                        let slot = ((round * 8 + i / 250) % 64) as usize;
                        s.store(keep, slot, Some(o));
                    }
                }
            });
        }
        s.collect("test");
        for slot in 0..64 {
            let o = s.load(keep, slot).expect("kept object");
            let v = s.get(o).read_u64(0);
            assert_eq!(v % 10_000 % 250, 0, "{mode}: slot {slot} holds {v}");
        }
    });
    drop(m);
    h
}

#[test]
fn a_small_heap_with_little_live_data_never_runs_out() {
    // At most ~0.6 MiB is live at any time (a round's 2,000 objects, rooted until the round
    // ends), so every cycle must free pages for the mutator: a relocation that takes more
    // target pages than it frees would stall the mutator until it gets OutOfMemory.
    for mode in [Mode::Concurrent, Mode::Stw] {
        let st = churn_a_small_heap(mode).stats();
        let relocated: u64 = st.cycles.iter().map(|c| c.bytes_relocated).sum();
        assert!(
            st.cycles.len() >= 5 && relocated > 0,
            "{mode}: the churn must cycle and relocate ({} cycles, {relocated} bytes)",
            st.cycles.len()
        );
    }
}

/// One line per cycle: what relocation did, for a failure message.
fn cycles(h: &Heap) -> String {
    h.stats()
        .cycles
        .iter()
        .map(|c| {
            format!(
                "GC({}) {}K->{}K, {}K live: {} pages freed, {} compacted in place \
                 ({} self-forwards), {}K moved\n",
                c.cycle,
                c.heap_before >> 10,
                c.heap_after >> 10,
                c.live_bytes >> 10,
                c.pages_relocated + c.pages_freed_empty,
                c.pages_compacted_in_place,
                c.objects_self_forwarded,
                c.bytes_relocated >> 10
            )
        })
        .collect()
}

#[test]
fn a_full_heap_compacts_in_place_and_keeps_every_object() {
    // 8 MiB (four small pages) with no relocation reserve: mutators may fill every page. Half
    // of all objects stay live, so when the heap is full every page holds live objects among
    // garbage and relocation finds no free page for its targets: it must compact pages in
    // place. The verifier checks every pause; every kept object is read back.
    for mode in [Mode::Concurrent, Mode::Stw] {
        let cfg = HeapConfig::new(8 << 20)
            .mode(mode)
            .verify(true)
            .relocation_reserve(0);
        let h = Heap::new(cfg).unwrap();
        let mut m = h.attach("main").unwrap();
        let in_place = |h: &Heap| {
            h.stats()
                .cycles
                .iter()
                .map(|c| c.pages_compacted_in_place)
                .sum::<u64>()
        };
        // 16 arrays of 1,024 slots: up to 16,384 kept objects of 256 bytes (4 MiB).
        const ARRAYS: u64 = 16;
        const SLOTS: u64 = 1024;
        let kept = m.scope(|s| {
            let keep = s.alloc(1, ARRAYS as u32, 0).unwrap();
            for a in 0..ARRAYS as usize {
                let arr = s.alloc(1, SLOTS as u32, 0).unwrap();
                s.store(keep, a, Some(arr));
            }
            let mut kept = 0u64;
            while kept < ARRAYS * SLOTS && in_place(&h) == 0 {
                s.scope(|s| {
                    for _ in 0..256 {
                        let o = s.alloc(2, 0, 240).unwrap_or_else(|e| {
                            panic!("{mode}: {kept} objects kept: {e}\n{}", cycles(&h))
                        });
                        s.get(o).write_u64(0, kept);
                        let arr = s.load(keep, (kept / SLOTS) as usize).unwrap();
                        s.store(arr, (kept % SLOTS) as usize, Some(o));
                        kept += 1;
                        // Garbage of the same size between two kept objects.
                        s.alloc(2, 0, 240).unwrap();
                    }
                });
            }
            s.collect("test");
            for k in 0..kept {
                let arr = s.load(keep, (k / SLOTS) as usize).unwrap();
                let o = s.load(arr, (k % SLOTS) as usize).expect("kept object");
                assert_eq!(s.get(o).read_u64(0), k, "{mode}: kept object {k}");
            }
            kept
        });
        let pages = in_place(&h);
        eprintln!("{mode}: {pages} pages compacted in place, {kept} objects kept");
        assert!(
            pages > 0,
            "{mode}: no cycle had to compact in place ({kept} objects kept)"
        );
    }
}

#[test]
fn a_relocation_reserve_over_half_the_heap_is_refused() {
    let Err(e) = Heap::new(HeapConfig::new(64 << 20).relocation_reserve(40 << 20)) else {
        panic!("a 40M reserve in a 64M heap was accepted");
    };
    let msg = e.to_string();
    assert!(
        msg.contains("relocation_reserve") && msg.contains("at most half the heap"),
        "{msg}"
    );
    // Half the heap is accepted, and so is none at all.
    for reserve in [32 << 20, 0] {
        let h = Heap::new(HeapConfig::new(64 << 20).relocation_reserve(reserve)).unwrap();
        let mut m = h.attach("main").unwrap();
        m.scope(|s| {
            s.alloc(1, 0, 8).unwrap();
        });
    }
}
