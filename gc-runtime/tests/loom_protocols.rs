//! Loom models of the runtime's handshake protocols, run on the *same* code as the collector:
//! `Safepoint`, `ThreadState` and `PageRefCount` are generic over
//! `gc_runtime::sync::Primitives`, and here they are instantiated with loom's atomics, mutex
//! and condvars, so loom explores every interleaving (and every value the memory model lets
//! a load see) of the code that runs in the collector.
//!
//! "The heap" is a `loom::cell::UnsafeCell`: mutators touch it between safepoint polls, the
//! collector touches it inside its pause. If any interleaving lets both touch it without a
//! happens-before order — a mutator running heap code during a pause — loom reports a
//! causality violation and the model fails. Loom also fails a model that deadlocks (a pause
//! that never completes, a mutator that never wakes).
//!
//! Models:
//! - the stop/poll/resume handshake: no mutator runs heap code during a pause;
//! - a thread leaving a blocking region during a pause waits for the pause to end, and the
//!   pause does not wait for a thread that sits in a blocking region;
//! - attach and detach racing with a pause (and, as a check that the model can see the bug
//!   fixed in this protocol, the old order — snapshot before request — fails);
//! - detach hands the mark buffer over before Pause Mark End can miss it (and the old order
//!   fails);
//! - threads inside scopes of two heaps at once: two threads polling the heaps in opposite
//!   orders never leave both pauses waiting (the younger request gives way); a heap never
//!   pauses while a thread inside its scope is parked at the other heap (an `ObjRef` it holds
//!   stays valid); a thread waiting for one heap's cycle inside the other's scope makes that
//!   other heap's pause give way (and without that mark, loom finds the deadlock);
//! - the forwarding page reference count: a mutator copying out of a from-page never overlaps
//!   the page being freed, and a mutator that cannot retain the page finds the forwarding
//!   entry.
//!
//! They run in a plain `cargo test` (no `--cfg loom`), with the preemption bound at 3 (2 for
//! the three-thread models, 1 for the two four-thread models of two heaps, which still find
//! both deadlocks at that bound) to keep CI fast; `LOOM_MAX_PREEMPTIONS=<n>` searches deeper
//! (at 2 the four-thread models take about two minutes).

use gc_core::sync::AtomicWord;
use gc_core::ForwardingTable;
use gc_runtime::forwarding::PageRefCount;
use gc_runtime::safepoint::{
    begin_cycle_wait, end_cycle_wait, NoOtherHeaps, Safepoint, ThreadState,
};
use gc_runtime::sync::{Atomic, Cond, Monitor, Primitives};
use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicU8};
use loom::sync::{Arc, Condvar, Mutex, MutexGuard};
use loom::thread;
use std::sync::atomic::Ordering;

// --- loom as the runtime's primitives (newtypes: trait and types are both foreign here) ----

struct Loom;

macro_rules! loom_atomic {
    ($name:ident, $t:ty, $a:ty) => {
        struct $name($a);
        impl Atomic<$t> for $name {
            fn new(v: $t) -> Self {
                $name(<$a>::new(v))
            }
            fn load(&self, order: Ordering) -> $t {
                self.0.load(order)
            }
            fn store(&self, v: $t, order: Ordering) {
                self.0.store(v, order)
            }
            fn compare_exchange_weak(
                &self,
                current: $t,
                new: $t,
                success: Ordering,
                failure: Ordering,
            ) -> Result<$t, $t> {
                self.0.compare_exchange_weak(current, new, success, failure)
            }
        }
    };
}

loom_atomic!(LoomBool, bool, AtomicBool);
loom_atomic!(LoomU8, u8, AtomicU8);
loom_atomic!(LoomI64, i64, AtomicI64);
loom_atomic!(LoomU64, u64, AtomicU64);

struct LoomMonitor<T> {
    lock: Mutex<T>,
    first: Condvar,
    second: Condvar,
}

impl<T> LoomMonitor<T> {
    fn cv(&self, c: Cond) -> &Condvar {
        match c {
            Cond::First => &self.first,
            Cond::Second => &self.second,
        }
    }
}

impl<T: Send> Monitor<T> for LoomMonitor<T> {
    type Guard<'a>
        = MutexGuard<'a, T>
    where
        Self: 'a;
    fn new(v: T) -> Self {
        LoomMonitor {
            lock: Mutex::new(v),
            first: Condvar::new(),
            second: Condvar::new(),
        }
    }
    fn lock(&self) -> Self::Guard<'_> {
        self.lock.lock().unwrap()
    }
    fn wait<'a>(&'a self, c: Cond, g: Self::Guard<'a>) -> Self::Guard<'a> {
        self.cv(c).wait(g).unwrap()
    }
    fn notify_all(&self, c: Cond) {
        self.cv(c).notify_all()
    }
}

impl Primitives for Loom {
    type AtomicBool = LoomBool;
    type AtomicU8 = LoomU8;
    type AtomicI64 = LoomI64;
    type AtomicU64 = LoomU64;
    type Monitor<T: Send> = LoomMonitor<T>;
    fn backoff() {
        thread::yield_now();
    }
    fn fence(order: Ordering) {
        loom::sync::atomic::fence(order)
    }
}

/// loom's `AtomicU64` as gc-core's atomic word (for the forwarding table).
struct LoomWord(AtomicU64);

impl AtomicWord for LoomWord {
    fn new_word(v: u64) -> Self {
        LoomWord(AtomicU64::new(v))
    }
    fn load(&self, order: Ordering) -> u64 {
        self.0.load(order)
    }
    fn store(&self, v: u64, order: Ordering) {
        self.0.store(v, order)
    }
    fn compare_exchange(
        &self,
        current: u64,
        new: u64,
        success: Ordering,
        failure: Ordering,
    ) -> Result<u64, u64> {
        self.0.compare_exchange(current, new, success, failure)
    }
    fn fetch_or(&self, v: u64, order: Ordering) -> u64 {
        self.0.fetch_or(v, order)
    }
    fn fetch_add(&self, v: u64, order: Ordering) -> u64 {
        self.0.fetch_add(v, order)
    }
}

// --- a tiny heap with a safepoint and a mutator registry ----------------------------------

type State = std::sync::Arc<ThreadState<Loom>>;

struct World {
    sp: Safepoint<Loom>,
    /// The registered mutators (the heap's `mutators` list).
    registry: Mutex<Vec<State>>,
    /// Memory only running mutators and the collector inside a pause may touch.
    heap: UnsafeCell<u64>,
    /// The same, one cell per mutator, for models with two mutators (which may touch their
    /// own objects at the same time); every pause writes both.
    objects: [UnsafeCell<u64>; 2],
}

impl World {
    fn new() -> Arc<World> {
        Arc::new(World {
            sp: Safepoint::default(),
            registry: Mutex::new(Vec::new()),
            heap: UnsafeCell::new(0),
            objects: [UnsafeCell::new(0), UnsafeCell::new(0)],
        })
    }

    fn touch_heap(&self) {
        self.heap.with_mut(|h| unsafe { *h += 1 });
    }

    fn read_heap(&self) -> u64 {
        self.heap.with(|h| unsafe { *h })
    }

    fn touch_object(&self, i: usize) {
        self.objects[i].with_mut(|o| unsafe { *o += 1 });
    }

    fn read_object(&self, i: usize) -> u64 {
        self.objects[i].with(|o| unsafe { *o })
    }

    fn snapshot(&self) -> Vec<State> {
        self.registry.lock().unwrap().clone()
    }

    /// `Mutator::attach` and the first `Mutator::scope`: registered while blocked, then
    /// running.
    fn attach(&self) -> State {
        let t: State = std::sync::Arc::new(ThreadState::new_blocked());
        self.sp
            .attach(&t, || self.registry.lock().unwrap().push(t.clone()));
        self.sp.leave_blocked(&t, &NoOtherHeaps);
        t
    }

    /// `Mutator::drop`: hand over, blocked, unregistered.
    fn detach(&self, t: &State, hand_over: impl FnOnce()) {
        self.sp.detach(t, hand_over, || {
            self.registry
                .lock()
                .unwrap()
                .retain(|x| !std::sync::Arc::ptr_eq(x, t))
        });
    }

    /// One pause of the driver: stop, work on the heap, resume. Returns the snapshot size.
    fn pause(&self, work: impl FnOnce()) -> usize {
        self.pause_with(1, work)
    }

    /// A pause with request ticket `ticket` (pauses of different heaps need distinct ones).
    fn pause_with(&self, ticket: u64, work: impl FnOnce()) -> usize {
        let (_, snap) = self.sp.stop(ticket, || self.snapshot());
        self.heap.with_mut(|h| unsafe { *h += 100 });
        for o in &self.objects {
            o.with_mut(|o| unsafe { *o += 100 });
        }
        work();
        self.sp.resume();
        snap.len()
    }
}

/// Run a model with a preemption bound of 3 (or `LOOM_MAX_PREEMPTIONS`, to search deeper).
fn model(f: impl Fn() + Sync + Send + 'static) {
    bounded(3, f)
}

fn bounded(bound: usize, f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    if std::env::var("LOOM_MAX_PREEMPTIONS").is_err() {
        b.preemption_bound = Some(bound);
    }
    b.check(f);
}

// --- safepoint models ----------------------------------------------------------------------

/// A running mutator polls between heap accesses; the collector pauses once. Every heap
/// access of the mutator is ordered before or after the pause's.
#[test]
fn no_mutator_runs_heap_code_during_a_pause() {
    model(|| {
        let w = World::new();
        let t = w.attach();
        let m = {
            let (w, t) = (w.clone(), t.clone());
            thread::spawn(move || {
                for _ in 0..2 {
                    w.touch_heap();
                    w.sp.poll(&t, &NoOtherHeaps);
                }
                w.touch_heap();
                w.detach(&t, || {});
            })
        };
        // The mutator is in the snapshot unless it detached before the pause.
        assert!(w.pause(|| {}) <= 1);
        m.join().unwrap();
        w.heap.with(|h| assert_eq!(unsafe { *h }, 103));
    });
}

/// A thread in a blocking region counts as stopped (the pause completes without it), and
/// when it leaves the region during the pause it waits until the pause is over.
#[test]
fn leaving_a_blocking_region_during_a_pause_waits() {
    model(|| {
        let w = World::new();
        let t = w.attach();
        w.sp.enter_blocked(&t);
        let m = {
            let (w, t) = (w.clone(), t.clone());
            thread::spawn(move || {
                // The blocking region's work touches no heap; then back to running.
                w.sp.leave_blocked(&t, &NoOtherHeaps);
                w.touch_heap();
                w.detach(&t, || {});
            })
        };
        w.pause(|| {});
        m.join().unwrap();
        w.heap.with(|h| assert_eq!(unsafe { *h }, 101));
    });
}

/// A thread that never leaves its blocking region does not hold up two pauses in a row.
#[test]
fn a_thread_parked_in_a_blocking_region_never_holds_up_pauses() {
    model(|| {
        let w = World::new();
        let t = w.attach();
        w.sp.enter_blocked(&t);
        let c = {
            let w = w.clone();
            thread::spawn(move || {
                w.pause(|| {});
                w.pause(|| {});
            })
        };
        c.join().unwrap();
        w.sp.leave_blocked(&t, &NoOtherHeaps);
        w.touch_heap();
        w.heap.with(|h| assert_eq!(unsafe { *h }, 201));
    });
}

/// A thread attaches, works and detaches while the collector pauses: whatever the order,
/// its heap accesses never overlap the pause (an attach during the pause waits; a detach
/// during the pause lets it complete).
#[test]
fn attach_and_detach_during_a_pause() {
    model(|| {
        let w = World::new();
        let m = {
            let w = w.clone();
            thread::spawn(move || {
                let t = w.attach();
                w.touch_heap();
                w.sp.poll(&t, &NoOtherHeaps);
                w.touch_heap();
                w.detach(&t, || {});
            })
        };
        let seen = w.pause(|| {});
        assert!(seen <= 1);
        m.join().unwrap();
        w.heap.with(|h| assert_eq!(unsafe { *h }, 102));
    });
}

/// The protocol as it was before the fix: the driver took its snapshot of the mutators
/// *before* publishing the request. A thread attaching in between is neither waited for nor
/// sees the request: loom finds it running heap code during the pause.
#[test]
#[should_panic(expected = "Causality violation")]
fn old_order_snapshot_before_request_lets_an_attaching_thread_run_through_the_pause() {
    model(|| {
        let w = World::new();
        let m = {
            let w = w.clone();
            thread::spawn(move || {
                let t = w.attach();
                w.touch_heap();
                w.detach(&t, || {});
            })
        };
        let snap = w.snapshot();
        let (_, _) = w.sp.stop(1, move || snap.clone());
        w.heap.with_mut(|h| unsafe { *h += 100 });
        w.sp.resume();
        m.join().unwrap();
    });
}

/// Pause Mark End against a detaching mutator that still holds marking work in its buffer:
/// the pause must either see the work (and not complete marking) or run before the mutator
/// marked anything. Marking "completes" with work arriving later only if the buffer is
/// handed over after the thread counts as stopped — the old order, which loom catches.
fn mark_end_against_detach(old_order: bool) {
    model(move || {
        let w = World::new();
        let queue = Arc::new(Mutex::new(Vec::<u64>::new()));
        let t = w.attach();
        let m = {
            let (w, t, queue) = (w.clone(), t.clone(), queue.clone());
            thread::spawn(move || {
                // The barrier marked an object into the thread-local buffer.
                let buffer = [42u64];
                w.touch_heap();
                let hand_over = || queue.lock().unwrap().extend(buffer.iter().copied());
                if old_order {
                    w.sp.enter_blocked(&t);
                    hand_over();
                    w.registry.lock().unwrap().clear();
                } else {
                    w.detach(&t, hand_over);
                }
            })
        };
        let mut complete = false;
        w.pause(|| complete = queue.lock().unwrap().is_empty());
        m.join().unwrap();
        if complete {
            assert!(
                queue.lock().unwrap().is_empty(),
                "marking completed while a mutator's marked object was still untraced"
            );
        }
    });
}

#[test]
fn detach_hands_the_mark_buffer_over_before_mark_end_can_miss_it() {
    mark_end_against_detach(false);
}

#[test]
#[should_panic(expected = "marking completed while a mutator's marked object was still untraced")]
fn old_order_detach_then_hand_over_loses_marking_work() {
    mark_end_against_detach(true);
}

// --- threads attached to two heaps --------------------------------------------------------

/// What `OtherHeaps` gives a wait at one heap: the thread's other heap and state there.
fn other<'a>(w: &'a World, t: &'a State) -> [(&'a Safepoint<Loom>, &'a ThreadState<Loom>); 1] {
    [(&w.sp, &**t)]
}

/// Two threads, each inside scopes of heaps A and B (running in both); one polls A then B,
/// the other B then A, touching its objects after each poll, while both heaps pause once.
/// Without the marks (`mark = false`: the threads do not tell one heap they are parked at
/// the other) each thread can park at one heap while the other heap's pause waits for it:
/// both pauses wait for ever, and loom finds the deadlock.
fn two_threads_in_scopes_of_two_heaps(mark: bool) {
    bounded(1, move || {
        let (a, b) = (World::new(), World::new());
        let threads: Vec<_> = (0..2)
            .map(|i| {
                let (a, b) = (a.clone(), b.clone());
                let (ta, tb) = (a.attach(), b.attach());
                thread::spawn(move || {
                    let (x, tx, y, ty) = if i == 0 {
                        (&a, &ta, &b, &tb)
                    } else {
                        (&b, &tb, &a, &ta)
                    };
                    if mark {
                        x.sp.poll(tx, &other(y, ty)[..]);
                    } else {
                        x.sp.poll(tx, &NoOtherHeaps);
                    }
                    x.touch_object(i);
                    if mark {
                        y.sp.poll(ty, &other(x, tx)[..]);
                    } else {
                        y.sp.poll(ty, &NoOtherHeaps);
                    }
                    y.touch_object(i);
                    // Out of both scopes.
                    x.sp.enter_blocked(tx);
                    y.sp.enter_blocked(ty);
                })
            })
            .collect();
        let pause_b = {
            let b = b.clone();
            thread::spawn(move || {
                b.pause_with(2, || {});
            })
        };
        a.pause_with(1, || {});
        pause_b.join().unwrap();
        for t in threads {
            t.join().unwrap();
        }
        for w in [&a, &b] {
            assert_eq!((w.read_object(0), w.read_object(1)), (101, 101));
        }
    });
}

#[test]
fn two_threads_in_scopes_of_two_heaps_never_leave_both_pauses_waiting() {
    two_threads_in_scopes_of_two_heaps(true);
}

/// Loom reports a deadlock with a panic, and then aborts the process while cleaning up the
/// model's threads; so a model expected to deadlock runs in a child process (this test
/// binary, told by `LOOM_CHILD` which model to run), and the test checks that the child
/// died reporting the deadlock.
fn expect_deadlock_in_child(test_name: &str, model: fn()) {
    if std::env::var_os("LOOM_CHILD").is_some() {
        model();
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test_name, "--nocapture", "--test-threads=1"])
        .env("LOOM_CHILD", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{test_name}: the model passed");
    assert!(
        stderr.contains("deadlock"),
        "the child failed otherwise: {stderr}"
    );
}

#[test]
fn without_the_marks_two_threads_in_scopes_of_two_heaps_deadlock() {
    expect_deadlock_in_child(
        "without_the_marks_two_threads_in_scopes_of_two_heaps_deadlock",
        || two_threads_in_scopes_of_two_heaps(false),
    );
}

/// A thread inside scopes of A and B reads B (as through an `ObjRef`), parks at A's pause,
/// and reads B again: B's pause, requested meanwhile, must not run in between, whatever the
/// order of the two requests.
#[test]
fn a_heap_never_pauses_while_a_thread_in_its_scope_is_parked_at_another() {
    for b_ticket in [1, 3] {
        bounded(2, move || {
            let (a, b) = (World::new(), World::new());
            let (ta, tb) = (a.attach(), b.attach());
            let m = {
                let (a, b) = (a.clone(), b.clone());
                thread::spawn(move || {
                    let before = b.read_heap();
                    a.sp.poll(&ta, &other(&b, &tb)[..]);
                    a.touch_heap();
                    assert_eq!(
                        b.read_heap(),
                        before,
                        "B paused under a thread in its scope"
                    );
                    a.detach(&ta, || {});
                    b.detach(&tb, || {});
                })
            };
            let pause_b = {
                let b = b.clone();
                thread::spawn(move || {
                    b.pause_with(b_ticket, || {});
                })
            };
            a.pause_with(2, || {});
            pause_b.join().unwrap();
            m.join().unwrap();
        });
    }
}

/// Thread W, inside a scope of heap B, waits for a GC cycle of heap A (`Heap::collect` or an
/// allocation stall): A's cycle is its pause here. Thread T, inside scopes of both, polls B
/// then A. B's pause has the older ticket: T may park at B, A's pause then waits for T, and
/// B's pause waits for W, which waits for A. With W's cycle wait marked, B gives way and
/// every wait ends; with `mark = false` loom finds the deadlock.
fn cycle_wait_against_a_park(mark: bool) {
    bounded(1, move || {
        let (a, b) = (World::new(), World::new());
        let cycle_done = Arc::new((Mutex::new(false), Condvar::new()));
        let (ta, tb) = (a.attach(), b.attach());
        let t = {
            let (a, b) = (a.clone(), b.clone());
            thread::spawn(move || {
                b.sp.poll(&tb, &other(&a, &ta)[..]);
                b.touch_heap();
                a.sp.poll(&ta, &other(&b, &tb)[..]);
                a.touch_heap();
                a.detach(&ta, || {});
                b.detach(&tb, || {});
            })
        };
        let wb = b.attach();
        let w = {
            let (b, cycle_done) = (b.clone(), cycle_done.clone());
            thread::spawn(move || {
                let others = other(&b, &wb);
                if mark {
                    begin_cycle_wait(3, &others[..]);
                }
                let (done, cv) = &*cycle_done;
                let mut d = done.lock().unwrap();
                while !*d {
                    d = cv.wait(d).unwrap();
                }
                drop(d);
                if mark {
                    end_cycle_wait(3, &others[..]);
                }
                b.touch_heap();
                b.detach(&wb, || {});
            })
        };
        let pause_b = {
            let b = b.clone();
            thread::spawn(move || {
                b.pause_with(1, || {});
            })
        };
        a.pause_with(2, || {});
        *cycle_done.0.lock().unwrap() = true;
        cycle_done.1.notify_all();
        for j in [t, w, pause_b] {
            j.join().unwrap();
        }
    });
}

#[test]
fn a_wait_for_another_heaps_cycle_makes_pauses_give_way() {
    cycle_wait_against_a_park(true);
}

#[test]
fn an_unmarked_wait_for_another_heaps_cycle_deadlocks() {
    expect_deadlock_in_child("an_unmarked_wait_for_another_heaps_cycle_deadlocks", || {
        cycle_wait_against_a_park(false)
    });
}

// --- forwarding page retain/release ---------------------------------------------------------

const OBJECT: u64 = 0x0b1ec7;
const POISON: u64 = 0xdead;
const WORKER_COPY: u64 = 0x1000;
const MUTATOR_COPY: u64 = 0x2000;

/// What `relocate_object` does for a mutator: find the entry; else retain the page, copy,
/// CAS the entry, release; if the page cannot be retained, the entry must be there.
fn mutator_relocate(
    rc: &PageRefCount<Loom>,
    page: &UnsafeCell<u64>,
    table: &ForwardingTable<LoomWord>,
    copy_to: u64,
) -> u64 {
    if let Some(to) = table.find(0) {
        return to;
    }
    if !rc.retain() {
        return table
            .find(0)
            .expect("a released page has every live object forwarded");
    }
    // The copy reads the from-page: it must never overlap the page being freed.
    let v = page.with(|p| unsafe { *p });
    assert_eq!(v, OBJECT, "copied from a freed page");
    let to = match table.insert(0, copy_to) {
        Ok(to) | Err(to) => to,
    };
    rc.release();
    to
}

/// What `relocate_parallel` does for a page: relocate every live object, release the
/// worker's reference and wait for copiers, free the page.
fn worker_evacuate(
    rc: &PageRefCount<Loom>,
    page: &UnsafeCell<u64>,
    table: &ForwardingTable<LoomWord>,
) -> u64 {
    let to = match table.find(0) {
        Some(to) => to,
        None => {
            let v = page.with(|p| unsafe { *p });
            assert_eq!(v, OBJECT);
            match table.insert(0, WORKER_COPY) {
                Ok(to) | Err(to) => to,
            }
        }
    };
    rc.release_and_wait();
    // Free the page: poison its memory.
    page.with_mut(|p| unsafe { *p = POISON });
    to
}

#[test]
fn a_mutator_copy_never_overlaps_the_page_being_freed() {
    model(|| {
        let rc = Arc::new(PageRefCount::<Loom>::default());
        let page = Arc::new(UnsafeCell::new(OBJECT));
        let table = Arc::new(ForwardingTable::<LoomWord>::new(1));
        let m = {
            let (rc, page, table) = (rc.clone(), page.clone(), table.clone());
            thread::spawn(move || mutator_relocate(&rc, &page, &table, MUTATOR_COPY))
        };
        let w = worker_evacuate(&rc, &page, &table);
        let m = m.join().unwrap();
        assert_eq!(w, m, "worker and mutator agree on the copy");
    });
}

#[test]
fn two_mutators_and_the_worker_agree_and_never_copy_from_a_freed_page() {
    bounded(2, || {
        let rc = Arc::new(PageRefCount::<Loom>::default());
        let page = Arc::new(UnsafeCell::new(OBJECT));
        let table = Arc::new(ForwardingTable::<LoomWord>::new(1));
        let ms: Vec<_> = [MUTATOR_COPY, MUTATOR_COPY + 0x1000]
            .into_iter()
            .map(|to| {
                let (rc, page, table) = (rc.clone(), page.clone(), table.clone());
                thread::spawn(move || mutator_relocate(&rc, &page, &table, to))
            })
            .collect();
        let w = worker_evacuate(&rc, &page, &table);
        for m in ms {
            assert_eq!(m.join().unwrap(), w);
        }
    });
}
