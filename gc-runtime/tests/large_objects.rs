//! Large objects never hold the safepoint (issue 26, item 8): a large object over reused
//! memory is zeroed in chunks (memory fresh from the file is zero already and is not), each
//! as a blocked thread that waits out a pause in progress when it ends (a safepoint check,
//! counted as a poll), and its page is published to the collector only once the object is
//! whole; a long copy into or out of a direct buffer goes in chunks the same way. Not timing
//! tests: they count the polls an allocation or a copy makes, and check that objects zeroed
//! and buffers copied while cycles ran (pauses between two chunks) come out zeroed, alive and
//! intact.

use gc_runtime::{Heap, HeapConfig, Mode};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

const MIB: usize = 1 << 20;
/// The most bytes of zeroing between two polls that `Scope::polls` promises.
const MAX_CHUNK: usize = 256 << 10;

#[test]
fn a_64_mib_allocation_polls_while_it_zeroes_reused_memory() {
    let h = Heap::new(HeapConfig::new(512 << 20)).unwrap();
    let mut m = h.attach("main").unwrap();
    m.scope(|s| {
        // Raw bytes (a string), then reference slots (an array).
        for (n_refs, n_bytes) in [(0u32, 64 * MIB), ((8 * MIB) as u32, 0)] {
            // Memory fresh from the file is zero already: not zeroed, so no chunk polls.
            let before = s.polls();
            s.scope(|s| {
                let big = s.alloc(1, n_refs, n_bytes).unwrap();
                let o = s.get(big);
                assert_eq!((o.n_refs(), o.n_bytes()), (n_refs as usize, n_bytes));
            });
            let polls = s.polls() - before;
            assert!(
                polls < (64 * MIB / MAX_CHUNK) as u64 / 4,
                "a fresh 64 MiB allocation ({n_refs} slots, {n_bytes} bytes) polled {polls} times"
            );
            // Freed into the page cache, its memory is reused by the next one of its size:
            // zeroed a chunk at a time.
            s.collect("free the large page");
            let before = s.polls();
            let big = s.alloc(1, n_refs, n_bytes).unwrap();
            let polls = s.polls() - before;
            assert!(
                polls >= (64 * MIB / MAX_CHUNK) as u64,
                "a 64 MiB allocation over reused memory ({n_refs} slots, {n_bytes} bytes) \
                 polled {polls} times"
            );
            let o = s.get(big);
            assert_eq!((o.n_refs(), o.n_bytes()), (n_refs as usize, n_bytes));
        }
        // A small object still polls once.
        let before = s.polls();
        s.alloc(1, 1, 8).unwrap();
        assert_eq!(s.polls() - before, 1);
    });
}

#[test]
fn reused_large_pages_are_zeroed() {
    let h = Heap::new(HeapConfig::new(256 << 20).verify(true)).unwrap();
    let mut m = h.attach("main").unwrap();
    m.scope(|s| {
        for round in 0..4u8 {
            s.scope(|s| {
                let big = s.alloc(1, 1000, 24 * MIB).unwrap();
                let o = s.get(big);
                for i in (0..1000).step_by(97) {
                    assert!(o.load(i).is_none(), "round {round}: slot {i}");
                }
                let mut chunk = vec![0u8; 4096];
                for at in (0..24 * MIB).step_by(3 * MIB + 8) {
                    o.read_bytes(at, &mut chunk);
                    assert!(chunk.iter().all(|&b| b == 0), "round {round}: at {at}");
                }
                // Dirty it for the next round, which may reuse its memory.
                for at in (0..24 * MIB).step_by(4096) {
                    o.write_bytes(at, &[0xa5; 4096]);
                }
                o.store(0, Some(o));
            });
            s.collect("free the large page");
        }
    });
}

#[test]
fn large_objects_zeroed_across_cycles_stay_alive_and_intact() {
    for mode in [Mode::Concurrent, Mode::Stw] {
        let h = Arc::new(Heap::new(HeapConfig::new(1 << 30).mode(mode).verify(true)).unwrap());
        let stop = Arc::new(AtomicBool::new(false));
        // Cycles back to back from a thread without a mutator: Pause Mark Start comes in
        // the middle of many zeroings.
        let collector = {
            let (h, stop) = (h.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let _ = h.collect("between chunks");
                    std::thread::sleep(Duration::from_micros(200));
                }
            })
        };
        let mut m = h.attach("main").unwrap();
        m.scope(|s| {
            let keep = s.alloc(2, 12, 0).unwrap();
            for i in 0..12u64 {
                let big = s.alloc(3, 1, 16 * MIB).unwrap();
                let o = s.get(big);
                assert!(o.load(0).is_none(), "{mode}: object {i}");
                o.write_u64(0, i);
                o.write_u64(16 * MIB - 8, !i);
                o.store(0, Some(s.get(keep)));
                s.store(keep, i as usize, Some(big));
            }
            stop.store(true, Ordering::Relaxed);
            for _ in 0..2 {
                s.collect("after");
            }
            for i in 0..12u64 {
                let big = s.load(keep, i as usize).expect("kept");
                let o = s.get(big);
                assert_eq!(o.read_u64(0), i, "{mode}: object {i}");
                assert_eq!(o.read_u64(16 * MIB - 8), !i, "{mode}: object {i}");
                assert!(o.load(0).unwrap().same(&s.get(keep)));
                let mut mid = vec![0u8; 4096];
                o.read_bytes(8 * MIB, &mut mid);
                assert!(mid.iter().all(|&b| b == 0), "{mode}: object {i}");
            }
        });
        drop(m);
        collector.join().unwrap();
    }
}

/// A direct buffer's `write`, `read`, `fill` and `to_vec` of 64 MiB go a chunk at a time,
/// each chunk a safepoint check; a short access makes none; an access refused as a whole
/// (out of bounds, released) does nothing and makes none either.
#[test]
fn a_64_mib_direct_copy_polls_between_chunks() {
    let h = Heap::new(HeapConfig::new(64 << 20).max_direct_memory(256 << 20)).unwrap();
    let mut m = h.attach("main").unwrap();
    m.scope(|s| {
        let len = 64 * MIB;
        let chunks = (len / MAX_CHUNK) as u64;
        let b = s.alloc_direct(len).unwrap();
        let data: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        let mut out = vec![0u8; len];
        let polls = |s: &gc_runtime::Scope<'_>| s.polls();
        let before = polls(s);
        s.direct(b).unwrap().write(0, &data).unwrap();
        let n = polls(s) - before;
        assert!(n >= chunks, "a 64 MiB write polled {n} times");
        let before = polls(s);
        s.direct(b).unwrap().read(0, &mut out).unwrap();
        let n = polls(s) - before;
        assert!(n >= chunks, "a 64 MiB read polled {n} times");
        assert!(out == data, "the bytes read back differ");
        let before = polls(s);
        s.direct(b).unwrap().fill(0, len, 7).unwrap();
        let n = polls(s) - before;
        assert!(n >= chunks, "a 64 MiB fill polled {n} times");
        let before = polls(s);
        let all = s.direct(b).unwrap().to_vec().unwrap();
        let n = polls(s) - before;
        assert!(n >= chunks, "a 64 MiB to_vec polled {n} times");
        assert!(all.iter().all(|&x| x == 7));
        // Short accesses: no check.
        let before = polls(s);
        let d = s.direct(b).unwrap();
        d.write_u64(8, 42).unwrap();
        assert_eq!(d.read_u64(8).unwrap(), 42);
        d.write(100, &[1; 4096]).unwrap();
        assert_eq!(polls(s) - before, 0);
        // Refused as a whole: one byte past the end writes nothing.
        let e = s.direct(b).unwrap().write(1, &data).unwrap_err();
        assert!(
            matches!(
                e,
                gc_runtime::native::NativeError::OutOfBounds { offset: 1, .. }
            ),
            "{e}"
        );
        s.direct(b).unwrap().read(0, &mut out[..16]).unwrap();
        assert_eq!(
            out[..8],
            [7; 8],
            "an out-of-bounds write wrote its first chunk"
        );
        assert!(s.direct(b).unwrap().release().unwrap());
        let before = polls(s);
        let e = s.direct(b).unwrap().fill(0, len, 1).unwrap_err();
        assert!(
            matches!(
                e,
                gc_runtime::native::NativeError::Released { op: "fill", .. }
            ),
            "{e}"
        );
        assert_eq!(polls(s) - before, 0);
    });
}

/// Long direct copies whose chunks let pauses run in between (cycles back to back move the
/// owners, which garbage around them leaves on sparse pages) read back what was written.
#[test]
fn long_direct_copies_are_intact_while_cycles_run() {
    for mode in [Mode::Concurrent, Mode::Stw] {
        let config = HeapConfig::new(128 << 20)
            .mode(mode)
            .verify(true)
            .max_direct_memory(256 << 20);
        let h = Arc::new(Heap::new(config).unwrap());
        let stop = Arc::new(AtomicBool::new(false));
        let collector = {
            let (h, stop) = (h.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let _ = h.collect("between chunks");
                    std::thread::sleep(Duration::from_micros(200));
                }
            })
        };
        let mut m = h.attach("main").unwrap();
        let len = 8 * MIB;
        m.scope(|s| {
            let keep = s.alloc(2, 8, 0).unwrap();
            for i in 0..8u8 {
                for _ in 0..200 {
                    s.alloc(4, 0, 1000).unwrap(); // garbage beside the owner
                }
                let b = s.alloc_direct(len).unwrap();
                s.store(keep, i as usize, Some(b));
            }
            for round in 0..4u8 {
                for i in 0..8u8 {
                    let b = s.load(keep, i as usize).unwrap();
                    let data: Vec<u8> = (0..len)
                        .map(|k| (k as u8).wrapping_mul(i + 1).wrapping_add(round))
                        .collect();
                    s.direct(b).unwrap().write(0, &data).unwrap();
                    let back = s.direct(b).unwrap().to_vec().unwrap();
                    assert!(back == data, "{mode}: buffer {i}, round {round}");
                }
            }
        });
        stop.store(true, Ordering::Relaxed);
        drop(m);
        collector.join().unwrap();
    }
}
