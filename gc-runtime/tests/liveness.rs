//! Liveness: situations reachable from safe code that must never hang, each run on a helper
//! thread with a bounded wait, so a hang fails the test instead of stalling the suite.
//!
//! - a mutator outside any scope, or forgotten with `mem::forget`, does not hold up pauses;
//! - dropping the `Heap` while the dropping thread still has a mutator of it (inside one of its
//!   scopes or outside), with cycles running; the mutator keeps working afterwards.
use gc_runtime::{Heap, HeapConfig, Scope};
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
