//! The pooled native-buffer allocator (`gc_runtime::native`): size classes, reuse, contents,
//! the reference count's errors, threads sharing a pool, and the leak detector.

use gc_runtime::native::{registered_pools, LeakDetection, NativeError, NativePool, PoolConfig};
use std::sync::mpsc;

fn pool(name: &str) -> NativePool {
    NativePool::new(
        PoolConfig::new()
            .name(name)
            .arenas(2)
            .leak_detection(LeakDetection::Off)
            .log_leaks(false),
    )
    .unwrap()
}

/// A byte pattern that differs per buffer and per position.
fn pattern(seed: u64, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (seed.wrapping_mul(31).wrapping_add(i as u64 * 7) % 251) as u8)
        .collect()
}

#[test]
fn each_size_class_allocates_frees_and_reuses_its_slots() {
    let p = NativePool::new(
        PoolConfig::new()
            .arenas(1)
            .leak_detection(LeakDetection::Off),
    )
    .unwrap();
    let sizes: Vec<usize> = p.stats().size_classes.iter().map(|c| c.size).collect();
    assert_eq!(sizes.first(), Some(&512));
    assert_eq!(
        sizes.last(),
        Some(&(512 << 10)),
        "largest class: a quarter of a 2 MiB chunk"
    );
    for (k, &size) in sizes.iter().enumerate() {
        // The smallest length of the class and the largest both land in it.
        let low = if k == 0 { 1 } else { sizes[k - 1] + 1 };
        for len in [low, size] {
            let b = p.allocate(len).unwrap();
            assert_eq!((b.len(), b.capacity()), (len, size));
            assert!(b.is_pooled());
            assert!(b.release().unwrap());
        }
        // Reuse: 300 allocate/release rounds map no more than the class's first chunk.
        for _ in 0..300 {
            p.allocate(size).unwrap().release().unwrap();
        }
        let st = p.stats();
        let c = &st.size_classes[k];
        assert_eq!((c.allocations, c.frees), (302, 302), "class {size}");
        assert_eq!(c.chunks, 1, "class {size}: freed slots were not reused");
    }
    let st = p.stats();
    assert_eq!(st.chunks, sizes.len() as u64);
    assert_eq!(st.chunk_bytes, sizes.len() as u64 * (2 << 20));
    assert_eq!(
        (st.live_buffers, st.used_bytes, st.used_capacity_bytes),
        (0, 0, 0)
    );
}

#[test]
fn contents_are_preserved_while_many_buffers_are_alive() {
    let p = pool("contents");
    let lens = [
        1usize, 100, 512, 513, 1000, 4096, 10_000, 65_536, 200_000, 600_000,
    ];
    let bufs: Vec<_> = (0..200)
        .map(|i| {
            let len = lens[i % lens.len()];
            let b = p.allocate(len).unwrap();
            b.write(0, &pattern(i as u64, len)).unwrap();
            b
        })
        .collect();
    let st = p.stats();
    assert_eq!(st.live_buffers, 200);
    assert_eq!(
        st.used_bytes,
        (0..200).map(|i| lens[i % lens.len()] as u64).sum::<u64>()
    );
    for (i, b) in bufs.iter().enumerate() {
        assert_eq!(
            b.to_vec().unwrap(),
            pattern(i as u64, b.len()),
            "buffer {i}"
        );
    }
    let b = &bufs[4];
    b.write_u64(8, 0xDEAD_BEEF_0123_4567).unwrap();
    assert_eq!(b.read_u64(8).unwrap(), 0xDEAD_BEEF_0123_4567);
    b.fill(0, b.len(), 0xAB).unwrap();
    assert!(b.to_vec().unwrap().iter().all(|&x| x == 0xAB));
    for b in bufs {
        assert!(b.release().unwrap());
    }
    assert_eq!(p.stats().live_buffers, 0);
    assert_eq!(p.stats().used_bytes, 0);
}

#[test]
fn use_after_release_is_an_error() {
    let p = pool("use-after-release");
    let b = p.allocate(1024).unwrap();
    b.write(0, b"data").unwrap();
    assert!(b.release().unwrap());
    assert_eq!(b.ref_count(), 0);
    let mut out = [0u8; 4];
    let released = |op| NativeError::Released { id: b.id(), op };
    assert_eq!(b.read(0, &mut out), Err(released("read")));
    assert_eq!(b.write(0, b"x"), Err(released("write")));
    assert_eq!(b.fill(0, 1, 0), Err(released("fill")));
    assert_eq!(b.retain(), Err(released("retain")));
    assert_eq!(b.read_u64(0), Err(released("read")));
    let msg = b.read(0, &mut out).unwrap_err().to_string();
    assert!(msg.contains("already released"), "{msg}");
}

#[test]
fn double_release_is_an_error_and_frees_once() {
    let p = pool("double-release");
    let b = p.allocate(4096).unwrap();
    assert!(b.release().unwrap());
    assert_eq!(
        b.release(),
        Err(NativeError::Released {
            id: b.id(),
            op: "release"
        })
    );
    let st = p.stats();
    assert_eq!((st.allocations, st.frees), (1, 1));
    // The slot is free once: the next two buffers are distinct memory.
    let (x, y) = (p.allocate(4096).unwrap(), p.allocate(4096).unwrap());
    x.fill(0, 4096, 1).unwrap();
    y.fill(0, 4096, 2).unwrap();
    assert!(x.to_vec().unwrap().iter().all(|&v| v == 1));
    x.release().unwrap();
    y.release().unwrap();
}

#[test]
fn retain_and_release_count_across_clones() {
    let p = pool("retain");
    let a = p.allocate(100).unwrap();
    let b = a.clone(); // another reference: the count does not change
    assert_eq!(a.ref_count(), 1);
    b.retain().unwrap();
    assert_eq!(a.ref_count(), 2);
    assert!(!a.release().unwrap(), "count 2 -> 1 frees nothing");
    b.write(0, b"still mine").unwrap();
    assert!(b.release().unwrap(), "count 1 -> 0 frees");
    assert!(a.release().is_err());
    assert_eq!(p.stats().frees, 1);
}

#[test]
fn bad_sizes_and_accesses_are_errors_with_messages() {
    let p = NativePool::new(PoolConfig::new().max_buffer_size(8 << 20)).unwrap();
    assert_eq!(p.allocate(0).unwrap_err(), NativeError::ZeroSize);
    let e = p.allocate((8 << 20) + 1).unwrap_err();
    assert_eq!(
        e,
        NativeError::TooLarge {
            requested: (8 << 20) + 1,
            max: 8 << 20
        }
    );
    assert!(e.to_string().contains("8388609"), "{e}");
    assert!(p.allocate(usize::MAX).is_err());
    assert!(p.allocate_unpooled(0).is_err());
    let b = p.allocate(10).unwrap();
    let mut out = [0u8; 4];
    assert!(matches!(
        b.read(8, &mut out),
        Err(NativeError::OutOfBounds {
            offset: 8,
            len: 4,
            buffer_len: 10,
            ..
        })
    ));
    assert!(
        b.write(usize::MAX, b"x").is_err(),
        "offset + len overflow is out of bounds"
    );
    assert!(b.fill(11, 0, 0).is_err());
    b.write(6, &out).unwrap(); // the last 4 bytes: in bounds
    b.release().unwrap();
    for bad in [
        PoolConfig::new().arenas(0),
        PoolConfig::new().chunk_size(3 << 20),
        PoolConfig::new().chunk_size(16 << 10),
        PoolConfig::new().min_class(100),
        PoolConfig::new().min_class(1 << 20),
        PoolConfig::new().max_buffer_size(0),
        PoolConfig::new().max_buffer_size(usize::MAX),
        PoolConfig::new().leak_detection(LeakDetection::Sampled(0)),
    ] {
        let e = NativePool::new(bad.clone()).unwrap_err();
        assert!(matches!(e, NativeError::Config(_)), "{bad:?}: {e}");
    }
}

#[test]
fn large_buffers_are_unpooled_and_unmapped_on_release() {
    let p = pool("unpooled");
    let b = p.allocate((512 << 10) + 1).unwrap();
    assert!(!b.is_pooled());
    assert_eq!(b.capacity(), (512 << 10) + 4096);
    b.write(512 << 10, &[7]).unwrap();
    let st = p.stats();
    assert_eq!(
        (st.unpooled_bytes, st.unpooled_allocations, st.chunks),
        ((512 << 10) + 4096, 1, 0)
    );
    b.release().unwrap();
    let u = p.allocate_unpooled(1000).unwrap();
    assert!(!u.is_pooled());
    assert_eq!(u.capacity(), 4096);
    u.release().unwrap();
    let st = p.stats();
    assert_eq!((st.unpooled_bytes, st.live_buffers, st.frees), (0, 0, 2));
}

#[test]
fn threads_hammering_the_pool_leave_no_buffer_behind() {
    const THREADS: usize = 4;
    const ROUNDS: usize = 2000;
    let p = NativePool::new(
        PoolConfig::new()
            .name("hammer")
            .arenas(2)
            .leak_detection(LeakDetection::Paranoid),
    )
    .unwrap();
    let lens = [
        1usize,
        300,
        700,
        2048,
        5000,
        16 << 10,
        40_000,
        100_000,
        600_000,
    ];
    // Each thread hands every third buffer to the next thread, which checks and releases it.
    let (txs, rxs): (Vec<_>, Vec<_>) = (0..THREADS).map(|_| mpsc::channel()).unzip();
    let mut rxs: Vec<Option<mpsc::Receiver<(u64, gc_runtime::native::PooledBuffer)>>> =
        rxs.into_iter().map(Some).collect();
    std::thread::scope(|s| {
        let mut handles = Vec::new();
        for t in 0..THREADS {
            let p = p.clone();
            let tx = txs[(t + 1) % THREADS].clone();
            let rx = rxs[t].take().unwrap();
            handles.push(s.spawn(move || {
                let check_and_release = |seed: u64, b: gc_runtime::native::PooledBuffer| {
                    assert_eq!(b.to_vec().unwrap(), pattern(seed, b.len()));
                    assert!(b.release().unwrap());
                };
                let mut kept = Vec::new();
                for i in 0..ROUNDS {
                    let seed = (t * ROUNDS + i) as u64;
                    let b = p.allocate(lens[(i * 7 + t) % lens.len()]).unwrap();
                    b.write(0, &pattern(seed, b.len())).unwrap();
                    match i % 3 {
                        0 => tx.send((seed, b)).unwrap(),
                        1 => kept.push((seed, b)),
                        _ => check_and_release(seed, b),
                    }
                    if kept.len() > 16 {
                        let (seed, b) = kept.remove(0);
                        check_and_release(seed, b);
                    }
                    while let Ok((seed, b)) = rx.try_recv() {
                        check_and_release(seed, b);
                    }
                }
                for (seed, b) in kept {
                    check_and_release(seed, b);
                }
                drop(tx);
                // The previous thread may still send; its sender closes when it is done.
                for (seed, b) in rx {
                    check_and_release(seed, b);
                }
            }));
        }
        drop(txs);
        // A join waits for the thread's exit, thread-local destructors (its caches) included.
        for h in handles {
            h.join().unwrap();
        }
    });
    let st = p.stats();
    assert_eq!(st.allocations, (THREADS * ROUNDS) as u64);
    assert_eq!(st.frees, st.allocations);
    assert_eq!(
        (st.live_buffers, st.used_bytes, st.used_capacity_bytes),
        (0, 0, 0)
    );
    assert_eq!(st.unpooled_bytes, 0);
    // The threads exited: their caches went back to the arenas.
    assert_eq!(st.thread_cached_bytes, 0);
    assert_eq!(
        (st.leaks_reported, st.unreported_drops),
        (0, 0),
        "{:?}",
        st.leaks
    );
    assert_eq!(st.tracked_buffers, (THREADS * ROUNDS) as u64);
    // Empty chunks beyond one per class and arena were unmapped.
    let pooled_classes = st.size_classes.iter().filter(|c| c.allocations > 0).count() as u64;
    assert!(
        st.chunks <= pooled_classes * 2,
        "{} chunks left for {pooled_classes} classes",
        st.chunks
    );
}

#[test]
fn paranoid_detector_reports_a_leaked_buffer_with_its_site() {
    let p = NativePool::new(
        PoolConfig::new()
            .leak_detection(LeakDetection::Paranoid)
            .log_leaks(false),
    )
    .unwrap();
    let kept = p.allocate(100).unwrap();
    let line = line!() + 1;
    let leaked = p.allocate(3000).unwrap();
    assert_eq!(leaked.allocation_site().map(|l| l.line()), Some(line));
    let id = leaked.id();
    leaked.retain().unwrap();
    let clone = leaked.clone();
    drop(leaked);
    assert!(
        p.leaks().is_empty(),
        "a clone still refers to it: not leaked yet"
    );
    drop(clone);
    let st = p.stats();
    assert_eq!(st.leaks_reported, 1);
    let r = &st.leaks[0];
    assert_eq!(
        (r.buffer_id, r.len, r.capacity, r.ref_count),
        (id, 3000, 4096, 2)
    );
    assert!(
        r.site.contains("native_pool.rs") && r.site.contains(&format!(":{line}:")),
        "site {}",
        r.site
    );
    assert!(r.to_string().contains("LEAK"), "{r}");
    // A report, not a leak: the memory went back.
    assert_eq!((st.live_buffers, st.used_bytes), (1, 100));
    assert!(kept.release().unwrap());
    assert_eq!(p.stats().leaks_reported, 1);
}

#[test]
fn paranoid_detector_reports_nothing_when_every_buffer_is_released() {
    let p = NativePool::new(PoolConfig::new().leak_detection(LeakDetection::Paranoid)).unwrap();
    for i in 0..500 {
        let b = p.allocate(1 + i * 97).unwrap();
        if i % 2 == 0 {
            b.retain().unwrap();
            let c = b.clone();
            assert!(!c.release().unwrap());
        }
        assert!(b.release().unwrap());
    }
    let st = p.stats();
    assert_eq!(st.tracked_buffers, 500);
    assert_eq!((st.leaks_reported, st.unreported_drops), (0, 0));
    assert!(st.leaks.is_empty());
}

#[test]
fn sampled_detector_tracks_one_buffer_in_n() {
    let p = NativePool::new(
        PoolConfig::new()
            .leak_detection(LeakDetection::Sampled(10))
            .log_leaks(false),
    )
    .unwrap();
    let bufs: Vec<_> = (0..100).map(|_| p.allocate(64).unwrap()).collect();
    let tracked = bufs
        .iter()
        .filter(|b| b.allocation_site().is_some())
        .count();
    assert_eq!(tracked, 10);
    drop(bufs); // all leaked
    let st = p.stats();
    assert_eq!(
        (st.tracked_buffers, st.leaks_reported, st.unreported_drops),
        (10, 10, 90)
    );
    assert_eq!((st.live_buffers, st.used_bytes), (0, 0));
}

#[test]
fn detector_off_tracks_nothing_but_counts_dropped_buffers() {
    let p = pool("off");
    let b = p.allocate(64).unwrap();
    assert!(b.allocation_site().is_none());
    drop(b);
    let st = p.stats();
    assert_eq!(
        (st.tracked_buffers, st.leaks_reported, st.unreported_drops),
        (0, 0, 1)
    );
    assert_eq!(st.live_buffers, 0);
}

#[test]
fn a_pool_lives_while_its_buffers_do_and_is_listed_while_it_lives() {
    let p = pool("registry-test-pool");
    assert!(registered_pools()
        .iter()
        .any(|q| q.config().name == "registry-test-pool"));
    let b = p.allocate(2000).unwrap();
    drop(p);
    b.write(0, b"pool handle gone").unwrap();
    assert!(registered_pools()
        .iter()
        .any(|q| q.config().name == "registry-test-pool"));
    assert!(b.release().unwrap());
    drop(b);
    assert!(!registered_pools()
        .iter()
        .any(|q| q.config().name == "registry-test-pool"));
    let quiet =
        NativePool::new(PoolConfig::new().name("unregistered-pool").register(false)).unwrap();
    assert!(!registered_pools()
        .iter()
        .any(|q| q.config().name == "unregistered-pool"));
    drop(quiet);
}

#[test]
fn a_buffer_shared_by_threads_is_read_whole_or_refused_while_it_is_released() {
    let p = pool("shared-release");
    for round in 0..200u64 {
        let b = p.allocate(4096).unwrap();
        b.fill(0, 4096, (round % 200) as u8 + 1).unwrap();
        let reader = b.clone();
        let want = (round % 200) as u8 + 1;
        let t = std::thread::spawn(move || {
            let mut out = vec![0u8; 4096];
            let (mut ok, mut refused) = (0, 0);
            loop {
                match reader.read(0, &mut out) {
                    // Never a torn or reused buffer: all bytes are this round's.
                    Ok(()) => {
                        assert!(
                            out.iter().all(|&x| x == want),
                            "round {round}: foreign bytes"
                        );
                        ok += 1;
                    }
                    Err(NativeError::Released { .. }) => {
                        refused += 1;
                        break;
                    }
                    Err(e) => panic!("{e}"),
                }
            }
            (ok, refused)
        });
        // Meanwhile another buffer may get the freed slot and be written.
        std::thread::yield_now();
        assert!(b.release().unwrap());
        let other = p.allocate(4096).unwrap();
        other.fill(0, 4096, 0).unwrap();
        let (_ok, refused) = t.join().unwrap();
        assert_eq!(refused, 1);
        other.release().unwrap();
    }
    assert_eq!(p.stats().live_buffers, 0);
}
