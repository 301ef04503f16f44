//! Bulk byte work on heap objects never holds the safepoint (issue 26, item 8):
//! `Scope::read_bytes`, `write_bytes`, `fill_bytes` and `copy_bytes` copy a chunk at a time and
//! poll between chunks, looking their objects up again after each poll. Not timing tests: they
//! count the polls a long copy makes, check that a refused call changes nothing, that
//! overlapping copies behave as `memmove`, and that objects the collector moves between two
//! chunks come out intact (and that they did move, in some copy, so the path was reached).

use gc_runtime::{BytesOutOfRange, Heap, HeapConfig, Mode, Scope};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

const MIB: usize = 1 << 20;
/// The most bytes copied between two polls that `Scope::polls` promises.
const MAX_CHUNK: usize = 256 << 10;

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(seed | 1).wrapping_add(seed))
        .collect()
}

#[test]
fn a_64_mib_heap_copy_polls_between_chunks() {
    let h = Heap::new(HeapConfig::new(512 << 20)).unwrap();
    let mut m = h.attach("main").unwrap();
    m.scope(|s| {
        let len = 64 * MIB;
        let least = (len / MAX_CHUNK) as u64 - 1;
        let a = s.alloc(1, 0, len).unwrap();
        let b = s.alloc(1, 0, len).unwrap();
        let data = pattern(len, 3);
        let mut out = vec![0u8; len];
        let polled = |s: &mut Scope<'_>, what: &str, f: &mut dyn FnMut(&mut Scope<'_>)| {
            let before = s.polls();
            f(s);
            let n = s.polls() - before;
            assert!(n >= least, "a 64 MiB {what} polled {n} times");
        };
        polled(s, "write_bytes", &mut |s| {
            s.write_bytes(a, 0, &data).unwrap()
        });
        polled(s, "read_bytes", &mut |s| {
            s.read_bytes(a, 0, &mut out).unwrap()
        });
        assert!(out == data, "the bytes read back differ");
        polled(s, "copy_bytes", &mut |s| {
            s.copy_bytes(a, 0, b, 0, len).unwrap()
        });
        s.read_bytes(b, 0, &mut out).unwrap();
        assert!(out == data, "the copy differs");
        polled(s, "fill_bytes", &mut |s| {
            s.fill_bytes(a, 0, len, 9).unwrap()
        });
        s.read_bytes(a, 0, &mut out).unwrap();
        assert!(out.iter().all(|&x| x == 9), "the fill differs");
        // One chunk or less: no poll.
        let before = s.polls();
        s.write_bytes(a, 100, &data[..4096]).unwrap();
        s.read_bytes(a, 100, &mut out[..4096]).unwrap();
        s.copy_bytes(a, 0, b, 0, 128 << 10).unwrap();
        assert_eq!(s.polls() - before, 0);
    });
}

#[test]
fn a_refused_bulk_call_changes_nothing() {
    let h = Heap::new(HeapConfig::new(64 << 20)).unwrap();
    let mut m = h.attach("main").unwrap();
    m.scope(|s| {
        let len = MIB;
        let a = s.alloc(1, 0, len).unwrap();
        let b = s.alloc(1, 0, len / 2).unwrap();
        let data = pattern(len, 5);
        let e = s.write_bytes(a, 1, &data).unwrap_err();
        assert_eq!(
            e,
            BytesOutOfRange {
                what: "write_bytes",
                offset: 1,
                len,
                n_bytes: len
            }
        );
        assert!(e.to_string().contains("ObjRef::n_bytes()"), "{e}");
        let e = s.fill_bytes(a, usize::MAX, 2, 1).unwrap_err();
        assert_eq!(e.what, "fill_bytes");
        let e = s.copy_bytes(a, 0, b, 0, len).unwrap_err();
        assert_eq!(e.what, "copy_bytes destination");
        let e = s.copy_bytes(b, 1, a, 0, len / 2).unwrap_err();
        assert_eq!(e.what, "copy_bytes source");
        let mut out = vec![1u8; len];
        assert_eq!(s.read_bytes(b, 0, &mut out).unwrap_err().what, "read_bytes");
        assert!(out.iter().all(|&x| x == 1), "a refused read wrote into out");
        s.read_bytes(a, 0, &mut out).unwrap();
        assert!(
            out.iter().all(|&x| x == 0),
            "a refused call wrote into the object"
        );
    });
}

#[test]
fn overlapping_copies_behave_as_memmove() {
    let h = Heap::new(HeapConfig::new(64 << 20)).unwrap();
    let mut m = h.attach("main").unwrap();
    m.scope(|s| {
        let len = 3 * MIB;
        let a = s.alloc(1, 0, len).unwrap();
        let mut model = pattern(len, 11);
        s.write_bytes(a, 0, &model).unwrap();
        // Up, down, by less than a chunk and by more, odd offsets.
        for (from, to, n) in [
            (0, 1000, 2 * MIB),
            (5000, 13, 2 * MIB + 7),
            (3, 300 << 10, MIB + 333),
            (MIB, 0, 2 * MIB),
        ] {
            s.copy_bytes(a, from, a, to, n).unwrap();
            model.copy_within(from..from + n, to);
            let mut out = vec![0u8; len];
            s.read_bytes(a, 0, &mut out).unwrap();
            assert!(out == model, "copy of {n} bytes from {from} to {to}");
        }
    });
}

/// Objects of two chunks each, among garbage, copied while another thread runs cycles back
/// to back: a pause between the two chunks may move them. Every copy must come out intact,
/// and in each mode some call must have seen its object move (else the path was not reached).
#[test]
fn bulk_copies_are_intact_when_objects_move_between_chunks() {
    for mode in [Mode::Concurrent, Mode::Stw] {
        let mut moved = 0;
        let h = Arc::new(Heap::new(HeapConfig::new(64 << 20).mode(mode).verify(true)).unwrap());
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
        // Two chunks: a small object (up to 256 KiB), which relocation moves.
        let len = 200 << 10;
        m.scope(|s| {
            let keep = s.alloc(2, 8, 0).unwrap();
            // At least 30 rounds, and more (up to 400) until two calls saw a move.
            let mut round = 0u32;
            while round < 30 || (moved < 2 && round < 400) {
                for i in 0..8 {
                    // Half the objects are replaced each round, each new one among garbage:
                    // the pages of the ones kept grow sparse, and relocation moves them.
                    if round == 0 || (round as usize + i).is_multiple_of(2) {
                        s.scope(|s| {
                            for _ in 0..3 {
                                s.alloc(4, 0, len).unwrap();
                            }
                            let o = s.alloc(3, 0, len).unwrap();
                            s.store(keep, i, Some(o));
                        });
                    }
                }
                for i in 0..8 {
                    // Each pass's handles in a scope of their own: none keeps a replaced
                    // object alive.
                    s.scope(|s| {
                        let o = s.load(keep, i).unwrap();
                        let next = s.load(keep, (i + 1) % 8).unwrap();
                        let data = pattern(len, round as u8 ^ i as u8);
                        let at = s.address_of(o);
                        s.write_bytes(o, 0, &data).unwrap();
                        let mut back = vec![0u8; len];
                        s.read_bytes(o, 0, &mut back).unwrap();
                        assert!(back == data, "{mode}: object {i}, round {round}");
                        s.copy_bytes(o, 0, next, 0, len).unwrap();
                        s.read_bytes(next, 0, &mut back).unwrap();
                        assert!(back == data, "{mode}: copy {i}, round {round}");
                        // Only a poll inside the calls above can have moved it.
                        if s.address_of(o) != at {
                            moved += 1;
                        }
                    });
                }
                round += 1;
            }
        });
        stop.store(true, Ordering::Relaxed);
        drop(m);
        collector.join().unwrap();
        eprintln!("{mode}: objects moved during a bulk call: {moved}");
        assert!(moved > 0, "{mode}: no object moved during a bulk call");
    }
}
