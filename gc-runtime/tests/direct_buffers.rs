//! Direct buffers (`Scope::alloc_direct`, `Scope::alloc_pooled`): native memory owned by heap
//! objects. Contents survive cycles that move their owners; `release` frees early and makes
//! later access an error; a dead owner's cleaner frees its memory exactly once, in every mode
//! that collects; the direct-memory limit runs "Direct Memory" cycles and then fails cleanly;
//! a pooled buffer whose owner died unreleased goes back to its pool and is reported as a leak;
//! objects that are not owners are refused.

use gc_runtime::native::{LeakDetection, NativeError, NativePool, PoolConfig};
use gc_runtime::{DirectError, Heap, HeapConfig, Mode, DIRECT_BUFFER_SHAPE};

fn heap(mode: Mode, max_direct: Option<u64>) -> Heap {
    let mut c = HeapConfig::new(64 << 20).mode(mode).verify(true);
    if let Some(m) = max_direct {
        c = c.max_direct_memory(m);
    }
    Heap::new(c).unwrap()
}

fn pattern(seed: u64, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (seed.wrapping_mul(131).wrapping_add(i as u64 * 7) % 251) as u8)
        .collect()
}

#[test]
fn contents_survive_cycles_that_move_their_owners() {
    for mode in [Mode::Concurrent, Mode::Stw] {
        let h = heap(mode, None);
        let mut m = h.attach("main").unwrap();
        let moved = m.scope(|s| {
            // Owners interleaved with garbage, so their pages are sparse and get evacuated.
            let holder = s.alloc(1, 64, 0).unwrap();
            for i in 0..64 {
                for _ in 0..200 {
                    s.alloc(2, 0, 256).unwrap();
                }
                let b = s.alloc_direct(1000 + i).unwrap();
                s.direct(b)
                    .unwrap()
                    .write(0, &pattern(i as u64, 1000 + i))
                    .unwrap();
                s.store(holder, i, Some(b));
            }
            let before: Vec<_> = (0..64)
                .map(|i| {
                    let b = s.load(holder, i).unwrap();
                    s.address_of(b)
                })
                .collect();
            for k in 0..3 {
                s.scope(|s| s.collect(&format!("test {k}")));
            }
            let mut moved = 0;
            for (i, &was_at) in before.iter().enumerate() {
                let b = s.load(holder, i).unwrap();
                moved += (s.address_of(b) != was_at) as u32;
                let d = s.direct(b).unwrap();
                assert_eq!(d.len(), 1000 + i);
                assert_eq!(
                    d.to_vec().unwrap(),
                    pattern(i as u64, 1000 + i),
                    "{mode} {i}"
                );
            }
            moved
        });
        assert!(
            moved > 0,
            "{mode}: no owner moved, the test did not reach relocation"
        );
        let st = h.stats().direct;
        assert_eq!(
            (st.owners, st.allocated, st.owners_dead),
            (64, 64, 0),
            "{mode}"
        );
        assert!(st.direct_bytes > 0 && st.pooled_bytes == 0);
    }
}

#[test]
fn a_dead_owners_cleaner_runs_once_and_frees_its_memory() {
    for mode in [Mode::Concurrent, Mode::Stw] {
        let h = heap(mode, None);
        let mut m = h.attach("main").unwrap();
        m.scope(|s| {
            // 100 owners die unreleased, 20 are released first, 30 stay alive.
            for i in 0..150 {
                let b = s.alloc_direct(4096 + i).unwrap();
                let d = s.direct(b).unwrap();
                d.fill(0, d.len(), 7).unwrap();
                if (100..120).contains(&i) {
                    assert!(d.release().unwrap());
                }
                if i >= 120 {
                    s.global(b); // dropped at once: only shows a Global can be made
                }
            }
        });
        m.scope(|s| s.collect("test"));
        let st = h.stats().direct;
        assert_eq!(st.allocated, 150, "{mode}");
        assert_eq!(st.released, 20, "{mode}");
        assert_eq!(
            st.owners_dead, 150,
            "{mode}: every owner is dead once its scope ended"
        );
        assert_eq!(
            st.cleaned, 130,
            "{mode}: released owners have nothing left to free"
        );
        assert_eq!(
            (st.owners, st.reserved_bytes, st.direct_bytes),
            (0, 0, 0),
            "{mode}"
        );
        assert_eq!(
            st.unpooled_mapped_bytes, 0,
            "{mode}: every mapping was given back"
        );
        // More cycles find nothing more: each cleaner ran once.
        m.scope(|s| s.collect("again"));
        m.scope(|s| s.collect("again"));
        let st2 = h.stats().direct;
        assert_eq!((st2.owners_dead, st2.cleaned), (150, 130), "{mode}");
        let cycles = h.stats().cycles;
        let run: u64 = cycles.iter().map(|c| c.cleaners_run).sum();
        assert_eq!(
            run, 150,
            "{mode}: the cycle records count the same cleaners"
        );
        assert!(cycles.iter().any(|c| c.direct_bytes_cleaned > 0));
    }
}

#[test]
fn release_then_use_is_an_error_and_retain_keeps_it() {
    let h = heap(Mode::Concurrent, None);
    let mut m = h.attach("main").unwrap();
    m.scope(|s| {
        let b = s.alloc_direct(64).unwrap();
        let d = s.direct(b).unwrap();
        assert_eq!(
            d.to_vec().unwrap(),
            vec![0; 64],
            "direct memory starts zeroed"
        );
        d.retain().unwrap();
        assert!(!d.release().unwrap(), "count 2 -> 1: still held");
        d.write_u64(8, 99).unwrap();
        assert!(d.release().unwrap(), "count 1 -> 0: freed");
        let e = d.read_u64(8).unwrap_err();
        assert!(matches!(e, NativeError::Released { .. }), "{e}");
        assert!(matches!(d.release(), Err(NativeError::Released { .. })));
        assert!(matches!(d.retain(), Err(NativeError::Released { .. })));
        // A fresh view of the same owner says the same.
        let again = s.direct(b).unwrap();
        assert!(matches!(
            again.write(0, b"x"),
            Err(NativeError::Released { .. })
        ));
        assert_eq!(again.ref_count(), 0);
        let e = again.read(60, &mut [0; 8]).unwrap_err();
        assert!(matches!(e, NativeError::Released { .. }), "{e}");
        let c = s.alloc_direct(16).unwrap();
        let e = s.direct(c).unwrap().read(10, &mut [0; 8]).unwrap_err();
        assert!(matches!(e, NativeError::OutOfBounds { .. }), "{e}");
        assert!(matches!(
            s.alloc_direct(0),
            Err(DirectError::Native(NativeError::ZeroSize))
        ));
    });
    let st = h.stats().direct;
    assert_eq!((st.released, st.reserved_bytes), (1, 16));
}

#[test]
fn objects_that_are_not_owners_are_refused() {
    let h = heap(Mode::Concurrent, None);
    let mut m = h.attach("main").unwrap();
    m.scope(|s| {
        let plain = s.alloc(3, 1, 16).unwrap();
        let e = s.direct(plain).unwrap_err();
        assert!(e.to_string().contains("not a direct buffer"), "{e}");
        assert!(!s.is_direct(plain));
        // A forged owner: the right shape and size, an id that exists, a guessed key.
        let real = s.alloc_direct(100).unwrap();
        let (id, key) = (s.get(real).read_u64(0), s.get(real).read_u64(8));
        let forged = s.alloc(DIRECT_BUFFER_SHAPE, 0, 16).unwrap();
        s.get(forged).write_u64(0, id);
        s.get(forged).write_u64(8, key ^ 1);
        assert!(matches!(
            s.direct(forged),
            Err(DirectError::NotDirect {
                shape: DIRECT_BUFFER_SHAPE
            })
        ));
        s.get(forged).write_u64(0, u64::MAX);
        assert!(s.direct(forged).is_err());
        assert!(s.is_direct(real));
    });
}

#[test]
fn the_limit_runs_direct_memory_cycles_then_fails_with_a_clear_error() {
    for mode in [Mode::Concurrent, Mode::Stw] {
        let h = heap(mode, Some(1 << 20));
        let mut m = h.attach("main").unwrap();
        // 64 buffers of 64 KiB dropped as they go: 4 MiB through a 1 MiB limit.
        for _ in 0..64 {
            m.scope(|s| {
                s.alloc_direct(64 << 10).unwrap();
            });
        }
        let st = h.stats();
        assert!(
            st.direct.limit_cycles > 0,
            "{mode}: the limit was never reached"
        );
        assert!(
            st.cycles
                .iter()
                .any(|c| c.cause == gc_runtime::GcCause::DirectMemory),
            "{mode}: no cycle with cause Direct Memory"
        );
        assert_eq!(st.direct.limit_failures, 0);
        // Each wait for those cycles is an allocation stall of the thread, none failed.
        assert!(
            !st.stalls.is_empty(),
            "{mode}: the limit's waits were not recorded"
        );
        assert!(st.stalls.iter().all(|s| s.thread == "main" && !s.failed));
        // Now hold them: the 17th cannot fit, even after cycles.
        m.scope(|s| {
            let mut held = Vec::new();
            // Each in a scope of its own: only the Global holds it.
            let err = loop {
                match s.scope(|s| s.alloc_direct(64 << 10).map(|b| s.global(b))) {
                    Ok(g) => held.push(g),
                    Err(e) => break e,
                }
            };
            assert_eq!(held.len(), 16, "{mode}");
            let msg = err.to_string();
            assert!(
                matches!(
                    err,
                    DirectError::LimitReached {
                        cycles: 2,
                        limit: 1048576,
                        ..
                    }
                ),
                "{mode}: {msg}"
            );
            assert!(msg.contains("max_direct_memory"), "{msg}");
            drop(held);
            // Once the holders are gone the memory comes back.
            s.alloc_direct(64 << 10).unwrap();
        });
        assert_eq!(h.stats().direct.limit_failures, 1);
        assert_eq!(
            h.stats().stalls.iter().filter(|s| s.failed).count(),
            1,
            "{mode}: the refused allocation's wait is a failed stall"
        );
    }
}

#[test]
fn epsilon_frees_only_on_release_and_fails_at_the_limit_without_cycles() {
    let h = heap(Mode::Epsilon, Some(100 << 10));
    let mut m = h.attach("main").unwrap();
    m.scope(|s| {
        let a = s.alloc_direct(60 << 10).unwrap();
        let e = s.alloc_direct(60 << 10).unwrap_err();
        assert!(
            matches!(e, DirectError::LimitReached { cycles: 0, .. }),
            "{e}"
        );
        assert!(e.to_string().contains("epsilon"), "{e}");
        assert!(s.direct(a).unwrap().release().unwrap());
        s.alloc_direct(60 << 10).unwrap();
    });
    let st = h.stats().direct;
    assert_eq!(
        (st.owners_dead, st.limit_cycles, st.limit_failures),
        (0, 0, 1)
    );
}

#[test]
fn a_pooled_buffer_whose_owner_died_unreleased_goes_back_and_is_reported() {
    let pool = NativePool::new(
        PoolConfig::new()
            .name("test-leaks")
            .leak_detection(LeakDetection::Paranoid)
            .log_leaks(false),
    )
    .unwrap();
    let h = heap(Mode::Concurrent, None);
    let mut m = h.attach("main").unwrap();
    m.scope(|s| {
        let kept = s.alloc_pooled(&pool, 1500).unwrap();
        let d = s.direct(kept).unwrap();
        assert!(d.is_pooled());
        assert_eq!(d.capacity(), 2048);
        assert!(d.release().unwrap(), "released: not a leak");
        s.alloc_pooled(&pool, 700).unwrap(); // dies unreleased: a leak
    });
    assert_eq!(
        pool.stats().live_buffers,
        1,
        "the leaked buffer is held until its cleaner"
    );
    m.scope(|s| s.collect("test"));
    let st = pool.stats();
    assert_eq!(
        st.live_buffers, 0,
        "the cleaner gave the slot back to its pool"
    );
    assert_eq!(st.leaks_reported, 1);
    assert!(
        st.leaks[0].site.contains("tests/direct_buffers.rs"),
        "{:?}",
        st.leaks[0]
    );
    assert_eq!(h.stats().direct.pooled_bytes, 0);
}

#[test]
fn several_threads_allocate_release_and_drop_buffers_while_cycles_run() {
    let pool = NativePool::new(PoolConfig::new().leak_detection(LeakDetection::Off)).unwrap();
    let h = Heap::new(
        HeapConfig::new(64 << 20)
            .continuous(true)
            .max_direct_memory(8 << 20),
    )
    .unwrap();
    std::thread::scope(|t| {
        for th in 0..3u64 {
            let (h, pool) = (&h, &pool);
            t.spawn(move || {
                let mut m = h.attach(&format!("t{th}")).unwrap();
                for round in 0..300u64 {
                    m.scope(|s| {
                        let seed = th * 1000 + round;
                        let len = 100 + (seed as usize * 37) % 20000;
                        let b = if round % 2 == 0 {
                            s.alloc_pooled(pool, len).unwrap()
                        } else {
                            s.alloc_direct(len).unwrap()
                        };
                        s.direct(b).unwrap().write(0, &pattern(seed, len)).unwrap();
                        for _ in 0..50 {
                            s.alloc(2, 0, 512).unwrap();
                        }
                        s.poll();
                        let d = s.direct(b).unwrap();
                        assert_eq!(d.to_vec().unwrap(), pattern(seed, len));
                        if round % 3 == 0 {
                            d.release().unwrap();
                        }
                    });
                }
            });
        }
    });
    // Stop the continuous cycles' effect on counts: two more cycles find every owner dead.
    let mut m = h.attach("end").unwrap();
    m.scope(|s| s.collect("end"));
    m.scope(|s| s.collect("end"));
    let st = h.stats().direct;
    assert_eq!(st.allocated, 900);
    assert_eq!(st.owners_dead, 900);
    assert_eq!(
        st.released + st.cleaned,
        900,
        "each buffer freed exactly once"
    );
    assert_eq!((st.reserved_bytes, st.owners), (0, 0));
    assert_eq!(pool.stats().live_buffers, 0);
}

#[test]
fn a_zero_limit_is_refused_when_the_heap_is_made() {
    let Err(e) = Heap::new(HeapConfig::new(64 << 20).max_direct_memory(0)) else {
        panic!("a zero direct-memory limit was accepted");
    };
    assert!(e.to_string().contains("max_direct_memory"), "{e}");
}

/// The example of the book's chapter "Memory outside the heap" (its lines must stay in the
/// sources: `tests/tests/docs.rs` checks it).
#[test]
fn the_books_example() {
    let h = heap(Mode::Concurrent, None);
    let mut m = h.attach("main").unwrap();
    let pool = NativePool::new(PoolConfig::new().name("io")).unwrap();
    m.scope(|s| {
        let b = s.alloc_pooled(&pool, 1500).unwrap(); // a 2 KiB slot, owned by `b`
        s.direct(b).unwrap().write(0, b"hello").unwrap();
        let d = s.alloc_direct(64 << 10).unwrap(); // a mapping of its own
        s.direct(d).unwrap().release().unwrap(); // freed now; `d` stays until it dies
    }); // `b` dies unreleased: its cleaner frees it
    m.scope(|s| s.collect("example"));
    let st = h.stats().direct;
    assert_eq!((st.allocated, st.released, st.cleaned), (2, 1, 1));
    assert_eq!(pool.stats().live_buffers, 0);
}

/// The director starts a "Direct Memory" cycle by itself once buffers hold three quarters of
/// the limit and a quarter of it was allocated since the last cycle, so an allocation need
/// not reach the limit and wait. Buffers here are dropped as they go, at a pace the director
/// (checking every 10 ms) can follow.
#[test]
fn the_director_collects_before_the_limit_is_reached() {
    let h = Heap::new(HeapConfig::new(64 << 20).max_direct_memory(4 << 20)).unwrap();
    let mut m = h.attach("main").unwrap();
    for _ in 0..200 {
        m.scope(|s| {
            s.alloc_direct(64 << 10).unwrap();
            s.blocking(|| std::thread::sleep(std::time::Duration::from_millis(5)));
        });
    }
    let st = h.stats();
    let director_cycles = st
        .cycles
        .iter()
        .filter(|c| c.cause == gc_runtime::GcCause::DirectMemory)
        .count() as u64;
    assert!(
        director_cycles > st.direct.limit_cycles,
        "no Direct Memory cycle started before the limit: {director_cycles} cycles, {} at \
         the limit",
        st.direct.limit_cycles
    );
    assert!(st.direct.cleaned > 0);
}

/// An owner is its object, not its two raw words: the words copied into another object of the
/// owner's shape open nothing (issue 26, item 1).
#[test]
fn an_owners_words_copied_into_another_object_open_nothing() {
    for mode in [Mode::Concurrent, Mode::Stw, Mode::Epsilon] {
        let h = heap(mode, None);
        let mut m = h.attach("main").unwrap();
        m.scope(|s| {
            let real = s.alloc_direct(100).unwrap();
            s.direct(real).unwrap().write(0, b"secret").unwrap();
            let (id, key) = (s.get(real).read_u64(0), s.get(real).read_u64(8));
            let forged = s.alloc(DIRECT_BUFFER_SHAPE, 0, 16).unwrap();
            s.get(forged).write_u64(0, id);
            s.get(forged).write_u64(8, key);
            let e = s.direct(forged).unwrap_err();
            assert!(
                matches!(
                    e,
                    DirectError::NotDirect {
                        shape: DIRECT_BUFFER_SHAPE
                    }
                ),
                "{mode}: {e}"
            );
            assert!(!s.is_direct(forged), "{mode}");
            // Still refused after cycles moved both objects (the check follows the owner).
            if mode != Mode::Epsilon {
                for k in 0..3 {
                    s.scope(|s| s.collect(&format!("test {k}")));
                    assert!(s.direct(forged).is_err(), "{mode}: after cycle {k}");
                    let mut out = [0; 6];
                    s.direct(real).unwrap().read(0, &mut out).unwrap();
                    assert_eq!(&out, b"secret", "{mode}: the real owner still works");
                }
            }
        });
        let st = h.stats().direct;
        assert_eq!(st.released, 0, "{mode}: nothing released the real buffer");
    }
}

/// A dead owner's words, kept in another object, do not open a later owner that reuses its
/// phantom slot (issue 26, item 1): each pool's buffer ids start at 1, so a fresh pool's
/// first buffer in the reused slot once had the same key.
#[test]
fn a_dead_owners_words_do_not_open_a_later_owner_in_its_slot() {
    for mode in [Mode::Concurrent, Mode::Stw] {
        let h = heap(mode, None);
        let mut m = h.attach("main").unwrap();
        let pool = |i: u32| {
            NativePool::new(
                PoolConfig::new()
                    .name(&format!("reuse-{i}"))
                    .leak_detection(LeakDetection::Off)
                    .log_leaks(false),
            )
            .unwrap()
        };
        let first = pool(0);
        m.scope(|s| {
            // The stale copy lives in a plain object, outside the owner's death.
            let keep = s.alloc(7, 0, 16).unwrap();
            s.scope(|s| {
                let dead = s.alloc_pooled(&first, 64).unwrap();
                s.direct(dead).unwrap().write(0, b"old").unwrap();
                let (id, key) = (s.get(dead).read_u64(0), s.get(dead).read_u64(8));
                s.get(keep).write_u64(0, id);
                s.get(keep).write_u64(8, key);
            });
            s.scope(|s| s.collect("the owner died"));
            assert_eq!(h.stats().direct.owners_dead, 1, "{mode}");
            let (id, key) = (s.get(keep).read_u64(0), s.get(keep).read_u64(8));
            // New owners, each the first buffer of a fresh pool, until one reuses the slot.
            let pools: Vec<NativePool> = (1..=64).map(pool).collect();
            let holder = s.alloc(1, 64, 0).unwrap();
            let mut reused = None;
            for (i, p) in pools.iter().enumerate() {
                let b = s.alloc_pooled(p, 64).unwrap();
                s.direct(b).unwrap().write(0, b"new").unwrap();
                s.store(holder, i, Some(b));
                if s.get(b).read_u64(0) == id {
                    reused = Some(b);
                    break;
                }
            }
            let new = reused.unwrap_or_else(|| panic!("{mode}: no new owner reused slot {id}"));
            let stale = s.alloc(DIRECT_BUFFER_SHAPE, 0, 16).unwrap();
            s.get(stale).write_u64(0, id);
            s.get(stale).write_u64(8, key);
            assert!(
                s.direct(stale).is_err(),
                "{mode}: a dead owner's words opened a later owner's buffer"
            );
            assert_ne!(
                s.get(new).read_u64(8),
                key,
                "{mode}: a key was given out twice"
            );
            let mut out = [0; 3];
            s.direct(new).unwrap().read(0, &mut out).unwrap();
            assert_eq!(&out, b"new", "{mode}");
            assert_eq!(s.direct(new).unwrap().ref_count(), 1, "{mode}");
        });
    }
}
