//! Liveness: situations reachable from safe code that must never hang, each run on a helper
//! thread with a bounded wait, so a hang fails the test instead of stalling the suite.
//!
//! - a mutator outside any scope, or forgotten with `mem::forget`, does not hold up pauses;
//! - dropping the `Heap` while the dropping thread still has a mutator of it (inside one of its
//!   scopes or outside), with cycles running; the mutator keeps working afterwards;
//! - two threads each inside nested scopes of the same two heaps: neither collector waits
//!   forever for a thread parked (or stalled) at the other heap, and two threads stalled in
//!   each other's heaps end with out-of-memory rather than waiting for ever;
//! - and the other side of that: a heap never pauses while a thread inside one of its scopes
//!   is parked at another heap's safepoint (it may still hold an `ObjRef` into it);
//! - a panic in the GC driver or a GC worker, inside a pause with a mutator parked, aborts the
//!   process with a message (checked in a child process: this test binary, re-run).
mod support;
use gc_runtime::{Heap, HeapConfig, Mode, Scope};
use std::sync::mpsc;
use std::time::Duration;

const MIB: u64 = 1 << 20;

/// Run `f` on a helper thread and wait at most `limit` for it; a panic in `f` is re-raised
/// here. The helper of a hung scenario is left behind (the test has failed anyway).
fn within<R: Send + 'static>(
    limit: Duration,
    what: &str,
    f: impl FnOnce() -> R + Send + 'static,
) -> R {
    let (tx, rx) = mpsc::channel();
    let helper = std::thread::Builder::new()
        .name(format!("scenario: {what}"))
        .spawn(move || {
            let r = f();
            let _ = tx.send(());
            r
        })
        .unwrap();
    match rx.recv_timeout(limit) {
        Ok(()) => helper.join().unwrap(),
        Err(mpsc::RecvTimeoutError::Disconnected) => match helper.join() {
            Ok(_) => unreachable!("the helper sends before it returns"),
            Err(p) => std::panic::resume_unwind(p),
        },
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("hung: {what} (no progress in {limit:?})"),
    }
}

const LIMIT: Duration = Duration::from_secs(60);

/// A continuously collecting heap: some cycle is always in progress.
fn busy_heap(mb: u64) -> Heap {
    Heap::new(HeapConfig::new(mb * MIB).verify(true).continuous(true)).unwrap()
}

/// A list of `n` objects holding 0..n, rooted in `s`; returns its head.
fn build_list<'s>(s: &mut Scope<'s>, n: u64) -> gc_runtime::Local<'s> {
    let head = s.alloc(1, 1, 8).unwrap();
    let mut tail = head;
    for i in 1..n {
        let o = s.alloc(1, 1, 8).unwrap();
        s.get(o).write_u64(0, i);
        s.store(tail, 0, Some(o));
        tail = o;
        // Garbage in between, so pages are sparse and get evacuated.
        s.scope(|s| {
            s.alloc(2, 0, 200).unwrap();
        });
    }
    head
}

fn check_list(s: &Scope<'_>, head: gc_runtime::Local<'_>, n: u64) {
    let mut cur = Some(s.get(head));
    let mut i = 0;
    while let Some(o) = cur {
        assert_eq!(o.read_u64(0), i, "list corrupted");
        i += 1;
        cur = o.load(0);
    }
    assert_eq!(i, n);
}

/// Run `n` collections from a thread that has no mutator.
fn collect_elsewhere(h: &Heap, n: usize) {
    std::thread::scope(|sc| {
        sc.spawn(|| {
            for i in 0..n {
                h.collect(&format!("from another thread {i}")).unwrap();
            }
        })
        .join()
        .unwrap()
    });
}

#[test]
fn a_mutator_outside_any_scope_does_not_hold_up_pauses() {
    within(LIMIT, "pauses with an idle attached mutator", || {
        let h = Heap::new(HeapConfig::new(64 * MIB).verify(true)).unwrap();
        let mut m = h.attach("idle").unwrap();
        let g = m.scope(|s| {
            let head = build_list(s, 300);
            s.global(head)
        });
        // The mutator sits outside any scope (as an interpreter between two calls).
        collect_elsewhere(&h, 3);
        assert!(h.stats().cycles.len() >= 3);
        m.scope(|s| {
            let head = s.from_global(&g);
            check_list(s, head, 300);
        });
    });
}

#[test]
fn a_forgotten_mutator_does_not_hold_up_pauses() {
    within(LIMIT, "pauses with a forgotten mutator", || {
        let h = Heap::new(HeapConfig::new(64 * MIB).verify(true)).unwrap();
        let mut m = h.attach("forgotten").unwrap();
        let g = m.scope(|s| {
            let head = build_list(s, 300);
            s.global(head)
        });
        std::mem::forget(m);
        collect_elsewhere(&h, 3);
        // The forgotten mutator still counts as this thread's: another attach is refused.
        assert!(h.attach("again").is_err());
        // Another thread's mutator sees the list intact.
        std::thread::scope(|sc| {
            sc.spawn(|| {
                let mut m = h.attach("reader").unwrap();
                m.scope(|s| {
                    s.collect("reader");
                    let head = s.from_global(&g);
                    check_list(s, head, 300);
                });
            });
        });
    });
}

#[test]
fn dropping_the_heap_inside_a_scope_of_its_own_mutator() {
    within(LIMIT, "Heap dropped inside a scope", || {
        let h = busy_heap(64);
        let mut m = h.attach("main").unwrap();
        m.scope(move |s| {
            let head = build_list(s, 500);
            // Cycles run back to back; a while without a poll, and the driver is surely
            // waiting in a pause for this thread.
            std::thread::sleep(Duration::from_millis(200));
            drop(h);
            // The mutator keeps working: allocation, polls, collection requests.
            check_list(s, head, 500);
            for _ in 0..2000 {
                s.scope(|s| {
                    s.alloc(2, 1, 64).unwrap();
                });
                s.poll();
            }
            s.collect("after the heap was dropped");
            check_list(s, head, 500);
        });
        m.scope(|s| {
            let head = build_list(s, 100);
            check_list(s, head, 100);
        });
        drop(m);
    });
}

#[test]
fn dropping_the_heap_outside_a_scope_while_its_mutator_is_attached() {
    within(LIMIT, "Heap dropped outside a scope", || {
        let h = busy_heap(64);
        let mut m = h.attach("main").unwrap();
        let g = m.scope(|s| {
            let head = build_list(s, 500);
            s.global(head)
        });
        // Cycles run back to back; the driver reaches its next pause meanwhile.
        std::thread::sleep(Duration::from_millis(200));
        drop(h);
        m.scope(|s| {
            let head = s.from_global(&g);
            check_list(s, head, 500);
            for _ in 0..2000 {
                s.scope(|s| {
                    s.alloc(2, 1, 64).unwrap();
                });
            }
            s.collect("after the heap was dropped");
            check_list(s, head, 500);
        });
        drop(g);
        drop(m);
    });
}

/// Allocate in both scopes in turn until both heaps have completed `cycles` more cycles,
/// checking a list in each heap now and then. Returns the number of failed allocations.
///
/// An allocation may fail: while this thread stalls in one heap, the other heap cannot
/// collect (the thread may hold `ObjRef`s into it), and if the other thread then stalls in
/// that heap, one of the two stalls must give up. The thread then does what a program must
/// do with an out-of-memory error: drops what it was building, and carries on.
fn work_in_both(a: &Heap, b: &Heap, sa: &mut Scope<'_>, sb: &mut Scope<'_>, cycles: u64) -> u64 {
    let la = build_list(sa, 200);
    let lb = build_list(sb, 200);
    let (a0, b0) = (a.usage().cycles, b.usage().cycles);
    let mut failed = 0;
    let mut i = 0u64;
    let garbage = |s: &mut Scope<'_>| {
        (0..20)
            .filter(|_| s.scope(|s| s.alloc(2, 1, 100).is_err()))
            .count() as u64
    };
    while a.usage().cycles < a0 + cycles || b.usage().cycles < b0 + cycles {
        failed += sa.scope(garbage);
        failed += sb.scope(garbage);
        i += 1;
        if i.is_multiple_of(64) {
            check_list(sa, la, 200);
            check_list(sb, lb, 200);
        }
    }
    check_list(sa, la, 200);
    check_list(sb, lb, 200);
    failed
}

#[test]
fn two_threads_in_nested_scopes_of_two_heaps() {
    for mode in [Mode::Concurrent, Mode::Stw] {
        within(
            LIMIT,
            &format!("{mode}: two heaps, two threads, nested scopes"),
            move || {
                let cfg = || {
                    HeapConfig::new(32 * MIB)
                        .mode(mode)
                        .verify(true)
                        .continuous(true)
                };
                let a = Heap::new(cfg()).unwrap();
                let b = Heap::new(cfg()).unwrap();
                let failed: u64 = std::thread::scope(|sc| {
                    let threads: Vec<_> = (0..2)
                        .map(|t| {
                            let (a, b) = (&a, &b);
                            sc.spawn(move || {
                                let mut ma = a.attach(&format!("t{t}")).unwrap();
                                let mut mb = b.attach(&format!("t{t}")).unwrap();
                                // One thread nests A's scope outside B's, the other the reverse.
                                if t == 0 {
                                    ma.scope(|sa| mb.scope(|sb| work_in_both(a, b, sa, sb, 10)))
                                } else {
                                    mb.scope(|sb| ma.scope(|sa| work_in_both(a, b, sa, sb, 10)))
                                }
                            })
                        })
                        .collect();
                    threads.into_iter().map(|t| t.join().unwrap()).sum()
                });
                eprintln!("{mode}: {failed} allocations gave up");
            },
        );
    }
}

/// Each thread, inside a scope of the other heap, fills one heap with live data. Both stall;
/// each stall keeps the other heap from collecting, so one of them must give up (out of
/// memory) rather than wait for ever. Then the other completes its cycles and runs out of
/// memory for real (its data is live). Neither hangs, and the heaps work afterwards.
#[test]
fn two_threads_stalled_in_each_others_heaps_do_not_hang() {
    within(LIMIT, "two stalls, each in the other's heap", || {
        let cfg = || HeapConfig::new(32 * MIB).verify(true);
        let heaps = [Heap::new(cfg()).unwrap(), Heap::new(cfg()).unwrap()];
        let start = std::sync::Barrier::new(2);
        std::thread::scope(|sc| {
            for t in 0..2 {
                let (heaps, start) = (&heaps, &start);
                sc.spawn(move || {
                    let mut home = heaps[t].attach("filler").unwrap();
                    let mut other = heaps[1 - t].attach("filler").unwrap();
                    home.scope(|sh| {
                        let keep = sh.alloc(1, 0, 8).unwrap();
                        sh.get(keep).write_u64(0, 99);
                        other.scope(|so| {
                            let table = so.alloc(1, 4096, 0).unwrap();
                            // Both heaps have what they keep before either is filled.
                            // (Waiting, the thread is blocked in both heaps.)
                            so.blocking(|| sh.blocking(|| start.wait()));
                            let mut n = 0;
                            let err = loop {
                                match so.alloc(2, 0, 16 << 10) {
                                    Ok(o) => so.store(table, n % 4096, Some(o)),
                                    Err(e) => break e,
                                }
                                n += 1;
                                sh.poll();
                            };
                            assert!(err.to_string().contains("out of memory"), "{err}");
                        });
                        assert_eq!(sh.get(keep).read_u64(0), 99);
                    });
                });
            }
        });
        for h in &heaps {
            h.collect("after").unwrap();
            let mut m = h.attach("after").unwrap();
            m.scope(|s| {
                let head = build_list(s, 100);
                check_list(s, head, 100);
            });
        }
    });
}

/// Heap B may not pause while this thread is inside one of B's scopes, even while the thread
/// sits parked at heap A's safepoint: it may hold an `ObjRef` (a raw pointer) into B across
/// A's pauses. B's collection request is served once the thread leaves B's scope.
#[test]
fn a_heap_never_pauses_while_a_thread_in_its_scope_parks_at_another_heap() {
    for a_first in [true, false] {
        within(
            LIMIT,
            "ObjRef of one heap across another heap's pauses",
            move || {
                // B is quiet (large, no proactive cycles): it collects only when asked.
                let quiet = || {
                    let mut c = HeapConfig::new(256 * MIB).verify(true);
                    c.director.proactive = false;
                    c
                };
                // Creation order decides which heap's pauses give way to the other's.
                let (a, b) = if a_first {
                    let a = busy_heap(32);
                    (a, Heap::new(quiet()).unwrap())
                } else {
                    let b = Heap::new(quiet()).unwrap();
                    (busy_heap(32), b)
                };
                let (to_requester, requests) = mpsc::channel::<()>();
                std::thread::scope(|sc| {
                    let b_ref = &b;
                    let requester = sc.spawn(move || {
                        requests.recv().unwrap();
                        b_ref
                            .collect("while the mutator is parked at another heap")
                            .unwrap();
                    });
                    let mut ma = a.attach("main").unwrap();
                    let mut mb = b.attach("main").unwrap();
                    mb.scope(|sb| {
                        let keep = sb.alloc(1, 0, 8).unwrap();
                        sb.get(keep).write_u64(0, 4242);
                        // Garbage around it: its page is sparse, so B's next cycle would move it.
                        sb.scope(|s| {
                            for _ in 0..400 {
                                s.alloc(2, 0, 4000).unwrap();
                            }
                        });
                        let o = sb.get(keep);
                        let (addr, b_cycles) = (o.address(), b.usage().cycles);
                        to_requester.send(()).unwrap();
                        ma.scope(|sa| {
                            let a0 = a.usage().cycles;
                            while a.usage().cycles < a0 + 20 {
                                sa.scope(|s| {
                                    for _ in 0..50 {
                                        s.alloc(2, 1, 100).unwrap();
                                    }
                                });
                                sa.poll();
                            }
                        });
                        assert_eq!(
                            b.usage().cycles,
                            b_cycles,
                            "heap B completed a cycle while this thread held an ObjRef into it"
                        );
                        assert_eq!(o.address(), addr);
                        assert_eq!(o.read_u64(0), 4242);
                    });
                    requester.join().unwrap();
                    assert!(b.usage().cycles >= 1);
                });
            },
        );
    }
}

// --- a panicking collector --------------------------------------------------------------------

/// Set in the child process: which collector thread the scenario makes panic.
const CHILD_ENV: &str = "ZRS_LIVENESS_CHILD";

/// The child's scenario: a mutator polling in a loop while the collector panics inside a
/// pause (the worst case: every mutator is parked). It returns only if the process was not
/// aborted.
fn panicking_collector(which: &str) {
    let mode = if which == "worker" {
        // Marking (and so the mark workers) runs inside the pause.
        Mode::Stw
    } else {
        Mode::Concurrent
    };
    let h = Heap::new(
        HeapConfig::new(64 * MIB)
            .mode(mode)
            .gc_threads(2)
            .continuous(true),
    )
    .unwrap();
    let mut m = h.attach("poller").unwrap();
    m.scope(|s| {
        let head = build_list(s, 100);
        match which {
            "driver" => h.inject_gc_panic_for_tests(),
            "worker" => h.inject_gc_worker_panic_for_tests(),
            _ => unreachable!("unknown scenario {which}"),
        }
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while std::time::Instant::now() < deadline {
            s.scope(|s| {
                s.alloc(2, 0, 64).unwrap();
            });
            s.poll();
        }
        check_list(s, head, 100);
    });
}

/// Run this test binary's test `test` in a child process with scenario `which`.
fn run_child(test: &str, which: &str) -> (std::process::ExitStatus, String) {
    support::run_child(test, CHILD_ENV, which, LIMIT)
}

/// The child died of `abort()` and said why on stderr.
fn assert_aborted_loudly(status: std::process::ExitStatus, stderr: &str, injected: &str) {
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        status.signal(),
        Some(libc::SIGABRT),
        "the child was not aborted ({status}); its stderr:\n{stderr}"
    );
    for words in [
        "fatal: the GC driver of heap #",
        injected,
        "the heap's invariants can no longer be trusted; aborting",
    ] {
        assert!(stderr.contains(words), "stderr lacks {words:?}:\n{stderr}");
    }
}

#[test]
fn a_panic_in_the_gc_driver_aborts_the_process_loudly() {
    const NAME: &str = "a_panic_in_the_gc_driver_aborts_the_process_loudly";
    if let Ok(which) = std::env::var(CHILD_ENV) {
        panicking_collector(&which);
        return;
    }
    let (status, stderr) = run_child(NAME, "driver");
    assert_aborted_loudly(status, &stderr, "GC panic injected for a test, in Pause");
}

/// GC workers are scoped threads of the driver: their panic reaches the driver when the
/// scope ends, and aborts the process the same way.
#[test]
fn a_panic_in_a_gc_worker_aborts_the_process_loudly() {
    const NAME: &str = "a_panic_in_a_gc_worker_aborts_the_process_loudly";
    if let Ok(which) = std::env::var(CHILD_ENV) {
        panicking_collector(&which);
        return;
    }
    let (status, stderr) = run_child(NAME, "worker");
    assert_aborted_loudly(status, &stderr, "GC worker panic injected for a test");
    assert!(stderr.contains("a GC worker thread panicked"), "{stderr}");
}
