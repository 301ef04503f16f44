//! Pause Mark End must not end marking while a mutator's mark buffer holds work. The pause
//! does not look into the buffers (it visits no mutator); it reads the count of buffers that
//! hold entries, and fails when it is not zero (back to Concurrent Mark Continue, which
//! flushes them). This test makes that path common and checks it is right.
//!
//! Parents are held only through weak handles, each with a child that holds the parent's
//! number. The collector never marks them itself: a parent lives through a cycle only if the
//! mutator upgrades its handle during that cycle's marking, and that upgrade marks it through
//! the mutator's barrier, into the mutator's buffer. The mutator upgrades handles all the
//! time, so at Pause Mark End its buffer often holds a parent marked moments before: if the
//! pause ended marking then, the parent would survive with its child unmarked, and the
//! child's memory would be freed and reused under it. Every parent an upgrade returns must
//! still reach its own child, and the upgraded parents are also stored in a root region, so
//! the heap verifier (on here) fails a pause whose marking left such a child unmarked. The
//! test fails if no Pause Mark End ever found work.

use gc_runtime::{GcStats, Heap, HeapConfig, Mode, Scope, WeakRef};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const MIB: u64 = 1 << 20;
const PARENTS: usize = 20_000;
const MIN_CYCLES: usize = 40;
/// Upgraded parents are also held in a root region of this many slots.
const HELD: usize = 1024;
/// The run goes on (up to `TIME_LIMIT`) until this many Pause Mark End tries found work.
const WANTED_RETRIES: u64 = 20;
const TIME_LIMIT: Duration = Duration::from_secs(20);

fn retries_of(stats: &GcStats) -> u64 {
    stats.cycles.iter().map(|c| c.mark_end_retries).sum()
}

/// A new parent (one reference slot) whose child holds `i`; returns its weak handle.
fn parent(s: &mut Scope<'_>, i: usize) -> WeakRef {
    let p = s.alloc(1, 1, 0).unwrap();
    let c = s.alloc(2, 0, 8).unwrap();
    s.get(c).write_u64(0, i as u64);
    s.store(p, 0, Some(c));
    s.weak(p)
}

#[test]
fn mark_end_fails_while_a_mutator_buffer_holds_work() {
    let heap = Heap::new(
        HeapConfig::new(64 * MIB)
            .mode(Mode::Concurrent)
            .verify(true),
    )
    .unwrap();
    let region = heap.root_region(HELD);
    let done = AtomicBool::new(false);
    let (mut upgraded, mut lost) = (0u64, 0u64);
    std::thread::scope(|sc| {
        sc.spawn(|| {
            // At least MIN_CYCLES cycles; then on until enough tries found work (bounded).
            let start = Instant::now();
            for n in 1.. {
                heap.collect("mark end retry test").unwrap();
                if n >= MIN_CYCLES && n % 10 == 0 {
                    let retries = retries_of(&heap.stats());
                    if retries >= WANTED_RETRIES || start.elapsed() > TIME_LIMIT {
                        break;
                    }
                }
            }
            done.store(true, Ordering::SeqCst);
        });
        let mut m = heap.attach("upgrader").unwrap();
        let mut weaks: Vec<WeakRef> = Vec::with_capacity(PARENTS);
        for chunk in (0..PARENTS).collect::<Vec<_>>().chunks(256) {
            m.scope(|s| weaks.extend(chunk.iter().map(|&i| parent(s, i))));
        }
        while !done.load(Ordering::SeqCst) {
            for start in (0..PARENTS).step_by(256) {
                m.scope(|s| {
                    // No allocation (so no safepoint poll) while upgrading: a pause requested
                    // meanwhile waits for the scope's end, and the upgrades before it may
                    // mark parents into the buffer after the collector's last flush.
                    let mut dead = Vec::new();
                    for (i, w) in weaks.iter().enumerate().skip(start).take(256) {
                        match s.upgrade(w) {
                            Some(p) => {
                                let c = s.load(p, 0).expect("a parent keeps its child");
                                assert_eq!(
                                    s.get(c).read_u64(0),
                                    i as u64,
                                    "parent {i} reaches a child that is not its own"
                                );
                                upgraded += 1;
                                // Held strongly for a while: the verifier at the next
                                // pause walks from the roots and checks its child is
                                // marked.
                                region.set_local(s, i % HELD, Some(p));
                            }
                            // Not upgraded during a cycle's marking: it died.
                            None => dead.push(i),
                        }
                    }
                    lost += dead.len() as u64;
                    for i in dead {
                        weaks[i] = parent(s, i);
                        // Garbage, so cycles have pages to free and reuse.
                        s.alloc(3, 0, 48).unwrap();
                    }
                });
            }
        }
    });
    let stats = heap.stats();
    let retries = retries_of(&stats);
    eprintln!(
        "{} cycles, {retries} Pause Mark End tries that found work in a buffer, {upgraded} \
         upgrades checked, {lost} parents died unupgraded",
        stats.cycles.len()
    );
    assert!(stats.cycles.len() >= MIN_CYCLES);
    assert!(
        retries > 0,
        "no Pause Mark End found work in a mutator's buffer: the path was not reached"
    );
}
