//! Loom models of the runtime's handshake protocols, run on the *same* code as the collector:
//! `Safepoint`, `ThreadStateCell` and `Forwarding` are generic over
//! `gc_runtime::sync::Primitives`, and here they are instantiated with loom's atomics, mutex
//! and condvars, so loom explores every interleaving (and every value the memory model lets
//! a load see) of the code that runs in the collector. The safepoints here fence on both sides
//! of the handshake (`ProcessBarrier::Fences`, `Safepoint::default`): loom cannot model the
//! `membarrier` variant, which `safepoint_barrier.rs` stresses on the machine instead.
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
//!   other heap's pause give way (and without the marks, loom finds the deadlocks);
//! - the forwarding protocol (`Forwarding`, driven as the runtime drives it, over a simulated
//!   page whose words are loom cells): a mutator copying out of a from-page never overlaps the
//!   page being freed; worker and mutators agree on one copy; in-place compaction against a
//!   mutator that copies the object out first, or that has no target memory and waits, never
//!   lets the mutator touch memory the compaction moves, and keeps every object once; a copier
//!   that panics releases the page;
//! - a minor's in-place promotion against a store into the promoted object, on the
//!   collector's own `GenerationMap` over loom's atomic bytes: the slot ends remembered, by
//!   the store barrier or by the scan after Pause Relocate Start (and a scan without that
//!   handshake loses it);
//! - a relocation target's age against a store into the copy: a mutator that found the copy
//!   through its forwarding entry reads the target page old (the entry's publication orders
//!   the relaxed age byte), or the copier's scan sees its store;
//! - a full cycle's flip of the map's young tag (inside a pause) and its settling (beside the
//!   mutator) against stores: the page the flip promoted reads old to the barrier whether
//!   settle rewrote its byte yet or not, a new eden page taken beside settle reads young, and
//!   the map ends settled.
//!
//! The generational models call the collector's own store-barrier decision
//! (`GenerationMap::remembers_store`) and scan rule (`GenerationMap::scan_remembers`).
//!
//! They run in a plain `cargo test` (no `--cfg loom`) in a few seconds, with the preemption
//! bound at 3 (2 for the three-thread models, 1 for the two four-thread models of two heaps,
//! which still find both deadlocks at that bound) to keep CI fast;
//! `LOOM_MAX_PREEMPTIONS=<n>` searches deeper (at 2 the four-thread models take about two
//! minutes).

use gc_core::sync::loom::{LoomByte, LoomWord};
use gc_core::{AddressLayout, Color, ColoredPtr, GenerationMap, Offset, PageAge, GRANULE_SIZE};
use gc_runtime::forwarding::{Forwarding, Relocation};
use gc_runtime::safepoint::{
    begin_cycle_wait, end_cycle_wait, NoOtherHeaps, Safepoint, ThreadState, ThreadStateCell,
};
use gc_runtime::sync::loom::Loom;
use loom::cell::UnsafeCell;
use loom::sync::atomic::AtomicU64;
use loom::sync::{Arc, Condvar, Mutex};
use loom::thread;
use std::sync::atomic::Ordering;

// --- a tiny heap with a safepoint and a mutator registry ----------------------------------

type State = std::sync::Arc<ThreadStateCell<Loom>>;

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
        // SAFETY: loom's pointer is valid inside the closure; loom itself checks that no other
        // access races with this one (which is what the models test).
        self.heap.with_mut(|h| unsafe { *h += 1 });
    }

    fn read_heap(&self) -> u64 {
        // SAFETY: loom's pointer is valid inside the closure; loom itself checks that no other
        // access races with this one (which is what the models test).
        self.heap.with(|h| unsafe { *h })
    }

    fn touch_object(&self, i: usize) {
        // SAFETY: loom's pointer is valid inside the closure; loom itself checks that no other
        // access races with this one (which is what the models test).
        self.objects[i].with_mut(|o| unsafe { *o += 1 });
    }

    fn read_object(&self, i: usize) -> u64 {
        // SAFETY: loom's pointer is valid inside the closure; loom itself checks that no other
        // access races with this one (which is what the models test).
        self.objects[i].with(|o| unsafe { *o })
    }

    fn snapshot(&self) -> Vec<State> {
        self.registry.lock().unwrap().clone()
    }

    /// `Mutator::attach` and the first `Mutator::scope`: registered while blocked, then
    /// running.
    fn attach(&self) -> State {
        let t: State = std::sync::Arc::new(ThreadStateCell::new_blocked());
        self.sp
            .attach(&t, || self.registry.lock().unwrap().push(t.clone()));
        // Only the thread itself writes its state.
        assert_eq!(t.get(), ThreadState::Blocked);
        self.sp.leave_blocked(&t, &NoOtherHeaps);
        assert_eq!(t.get(), ThreadState::Running);
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
        // SAFETY: as in `touch_heap`; inside the pause, so loom checks that no mutator's
        // access races with these.
        self.heap.with_mut(|h| unsafe { *h += 100 });
        for o in &self.objects {
            // SAFETY: as above.
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
        assert_eq!(w.read_heap(), 103);
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
        assert_eq!(w.read_heap(), 101);
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
        assert_eq!(w.read_heap(), 201);
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
        assert_eq!(w.read_heap(), 102);
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
        // SAFETY: as in `touch_heap`; loom checks this access against the attaching
        // mutator's, and this model expects it to report the race.
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
fn other<'a>(w: &'a World, t: &'a State) -> [(&'a Safepoint<Loom>, &'a ThreadStateCell<Loom>); 1] {
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

// --- forwarding: copy, release, in-place compaction ------------------------------------------

/// A simulated heap for the forwarding models: one word per 8-byte object, as loom cells, so
/// loom reports any access to an object's memory that is not ordered against a move, a free
/// or another thread's write. Offsets `PAGE..PAGE + 8 * PAGE_OBJECTS` are the from-page;
/// `TARGET..` is target memory for copies.
const PAGE: u64 = 0x1000;
const PAGE_OBJECTS: u64 = 4;
const TARGET: u64 = 0x2000;
const TARGETS: u64 = 4;
const POISON: u64 = 0xdead;

struct Mem {
    page: Vec<UnsafeCell<u64>>,
    target: Vec<UnsafeCell<u64>>,
    /// Next free target word (a bump allocator; `TARGETS` words in all).
    next_target: AtomicU64,
}

impl Mem {
    /// A page whose object `i` holds `value(i)`.
    fn new() -> Arc<Mem> {
        Arc::new(Mem {
            page: (0..PAGE_OBJECTS)
                .map(|i| UnsafeCell::new(value(i)))
                .collect(),
            target: (0..TARGETS).map(|_| UnsafeCell::new(0)).collect(),
            next_target: AtomicU64::new(0),
        })
    }
    fn cell(&self, off: Offset) -> &UnsafeCell<u64> {
        let off = off.raw();
        if off >= TARGET {
            &self.target[((off - TARGET) / 8) as usize]
        } else {
            &self.page[((off - PAGE) / 8) as usize]
        }
    }
    fn read(&self, off: Offset) -> u64 {
        // SAFETY: loom's pointer is valid inside the closure; loom itself checks that no other
        // access races with this one (which is what the models test).
        self.cell(off).with(|p| unsafe { *p })
    }
    fn write(&self, off: Offset, v: u64) {
        // SAFETY: loom's pointer is valid inside the closure; loom itself checks that no other
        // access races with this one (which is what the models test).
        self.cell(off).with_mut(|p| unsafe { *p = v })
    }
    /// Target memory for one object, or `None` when it is used up (or `memory` is false).
    fn alloc(&self, memory: bool) -> Option<Offset> {
        if !memory {
            return None;
        }
        let i = self.next_target.fetch_add(1, Ordering::Relaxed);
        (i < TARGETS).then(|| Offset::from_raw(TARGET + 8 * i))
    }
}

/// The value object `i` of the page starts with.
fn value(i: u64) -> u64 {
    0x0b1e_c700 + i
}

fn offset(i: u64) -> Offset {
    Offset::from_raw(PAGE + 8 * i)
}

type LoomForwarding = Forwarding<Loom, LoomWord>;

/// A relocation-set entry for the simulated page with `live` live objects.
fn forwarding(live: u64) -> Arc<LoomForwarding> {
    let page = gc_core::Page::new(
        gc_core::PageKind::Small,
        gc_core::PageMemory {
            start: Offset::from_raw(PAGE),
            size: 8 * PAGE_OBJECTS,
            ranges: vec![],
            populated: Default::default(),
            zeroed: false,
        },
        1,
        3,
    );
    Arc::new(Forwarding::new(std::sync::Arc::new(page), live))
}

/// A mutator's barrier for object `i`, exactly as the runtime's `relocate_object` drives the
/// protocol: `try_relocate` with a copy into target memory (if `memory`), and a wait for the
/// page's entry when it cannot copy. Returns where the object is.
fn mutator_relocate(f: &LoomForwarding, mem: &Mem, i: u64, memory: bool) -> Offset {
    let copy = || {
        let to = mem.alloc(memory)?;
        // The copy reads the from-page: loom fails the model if this can overlap a move or
        // a free of the page.
        let v = mem.read(offset(i));
        assert_ne!(v, POISON, "copied from a freed page");
        mem.write(to, v);
        Some(to)
    };
    match f.try_relocate(i, copy, |_| {}) {
        Relocation::Found(to) | Relocation::Copied(to) | Relocation::Lost(to) => to,
        Relocation::NoMemory | Relocation::Unavailable => f.wait_for_entry(i),
    }
}

/// The page's GC worker, as `relocate_parallel` drives it: each live object without an entry
/// is copied to target memory (if `memory`), else the page is compacted in place; then the
/// worker's release; a page not compacted in place is freed (poisoned).
fn worker(f: &LoomForwarding, mem: &Mem, live: &[u64], memory: bool) {
    for &i in live {
        if f.find(i).is_some() {
            continue;
        }
        match mem.alloc(memory) {
            Some(to) => {
                mem.write(to, mem.read(offset(i)));
                let _ = f.forward(i, to);
            }
            None => {
                f.compact_in_place(
                    live.iter().map(|&i| (i, offset(i))),
                    |_| 8,
                    |from, to, _| mem.write(to, mem.read(from)),
                    |_| {},
                );
            }
        }
    }
    f.release_and_wait();
    if !f.is_compacted_in_place() {
        for i in 0..PAGE_OBJECTS {
            mem.write(offset(i), POISON);
        }
    }
}

/// Every live object has one entry, its memory holds the object, and no two share a word.
fn check_final(f: &LoomForwarding, mem: &Mem, live: &[u64]) {
    let mut seen = Vec::new();
    for &i in live {
        let to = f.find(i).expect("a live object without its entry");
        assert_eq!(mem.read(to), value(i), "object {i} lost or overwritten");
        assert!(!seen.contains(&to), "two objects at {to:#x}");
        seen.push(to);
    }
}

#[test]
fn a_mutator_copy_never_overlaps_the_page_being_freed() {
    model(|| {
        let (f, mem) = (forwarding(1), Mem::new());
        let m = {
            let (f, mem) = (f.clone(), mem.clone());
            thread::spawn(move || mutator_relocate(&f, &mem, 1, true))
        };
        worker(&f, &mem, &[1], true);
        let to = m.join().unwrap();
        assert_eq!(Some(to), f.find(1), "worker and mutator agree on the copy");
        check_final(&f, &mem, &[1]);
    });
}

#[test]
fn two_mutators_and_the_worker_agree_and_never_copy_from_a_freed_page() {
    bounded(2, || {
        let (f, mem) = (forwarding(1), Mem::new());
        let ms: Vec<_> = (0..2)
            .map(|_| {
                let (f, mem) = (f.clone(), mem.clone());
                thread::spawn(move || mutator_relocate(&f, &mem, 1, true))
            })
            .collect();
        worker(&f, &mem, &[1], true);
        for m in ms {
            assert_eq!(Some(m.join().unwrap()), f.find(1));
        }
        check_final(&f, &mem, &[1]);
    });
}

/// The worker has no target memory and compacts the page in place (object 0 is dead, so
/// objects 1 and 2 slide down) while a mutator relocates object 2 — copying it out before the
/// claim, or waiting for the compaction — and then writes to the object where it now is.
/// Loom checks that the mutator's copy and its write are ordered against every move, and the
/// final state has each object once, intact.
fn in_place_against_a_mutator(mutator_memory: bool) {
    model(move || {
        let (f, mem) = (forwarding(2), Mem::new());
        let live = [1, 2];
        let m = {
            let (f, mem) = (f.clone(), mem.clone());
            thread::spawn(move || {
                let to = mutator_relocate(&f, &mem, 2, mutator_memory);
                // The mutator uses the object where the barrier said it is.
                assert_eq!(mem.read(to), value(2));
                mem.write(to, value(2));
                to
            })
        };
        worker(&f, &mem, &live, false);
        let to = m.join().unwrap();
        assert_eq!(Some(to), f.find(2));
        assert!(f.is_compacted_in_place());
        check_final(&f, &mem, &live);
        // Object 1 slid down to the page start.
        assert_eq!(f.find(1), Some(offset(0)));
    });
}

#[test]
fn in_place_compaction_against_a_mutator_that_copies() {
    in_place_against_a_mutator(true);
}

#[test]
fn in_place_compaction_against_a_mutator_without_target_memory() {
    in_place_against_a_mutator(false);
}

/// A mutator retains the page for a copy and panics inside it: the retain is released while
/// unwinding, so the worker's release does not wait forever (loom fails a model that
/// deadlocks).
#[test]
fn a_copier_that_panics_releases_the_page() {
    static PANICKED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    model(|| {
        let (f, mem) = (forwarding(1), Mem::new());
        let m = {
            let f = f.clone();
            thread::spawn(move || {
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    f.try_relocate(1, || panic!("a failing copy"), |_| {})
                }));
                if r.is_err() {
                    PANICKED.fetch_add(1, Ordering::Relaxed);
                }
            })
        };
        worker(&f, &mem, &[1], true);
        m.join().unwrap();
        check_final(&f, &mem, &[1]);
    });
    // In the interleavings where the mutator retained the page before the worker released
    // it, its copy ran and panicked.
    assert!(
        PANICKED.load(Ordering::Relaxed) > 0,
        "no interleaving reached the copy"
    );
}

/// The safepoint timeout's deadline reads the clock through `Primitives::waited`. A model's
/// clock must stand still: with a real one, an execution that a loaded machine explores more
/// slowly than `SAFEPOINT_TIMEOUT` takes the timeout path where the others did not, and loom
/// stops the model ("Reached unexpected exploration state"), as
/// `two_threads_in_scopes_of_two_heaps_never_leave_both_pauses_waiting` once did beside CI.
#[test]
fn the_models_clock_stands_still_for_the_safepoint_timeout() {
    use gc_runtime::sync::Primitives;
    let start = std::time::Instant::now();
    std::thread::sleep(std::time::Duration::from_millis(5));
    assert_eq!(Loom::waited(start), std::time::Duration::ZERO);
}

// --- in-place promotion against a store ----------------------------------------------------

/// The page being promoted in place (one granule, at offset 0), the object on it the mutator
/// stores into, and the young object (on an eden page, the next granule) whose pointer it
/// stores.
const HOLDER: u64 = 64;
const YOUNG_VALUE: u64 = GRANULE_SIZE + 64;
/// The offset mask the store barrier takes the value's offset with (`layout()`'s).
const MASK: u64 = (1 << 42) - 1;

/// The address layout of the models' pointers (their offsets are small, no color bit set).
fn layout() -> AddressLayout {
    let l = AddressLayout::new(42);
    assert_eq!(l.offset_mask(), MASK);
    l
}

/// A minor's in-place promotion of the page holding one object against a mutator storing a
/// young pointer into that object (`Generations::age_or_promote` and `finish_promotions`).
/// The safepoint is the collector's own (`Safepoint<Loom>`) and the age bytes are the
/// collector's own `GenerationMap`, over loom's atomics (`GenerationMap<LoomByte>`): its
/// `begin_promotion`, `finish_promotion`, the store barrier's decision
/// (`GenerationMap::remembers_store`, which `Generations::store_barrier` calls) and the
/// promotion scan's rule for a slot (`GenerationMap::scan_remembers`, which
/// `Generations::finish_promotions` calls for every slot of a promoted object); only the
/// remembering itself (a flag here) and the scan's walk over the object's one slot are
/// written again. Whatever the interleaving, the young slot ends
/// remembered: by the barrier, which read the new age, or by the scan, which read the stored
/// value. With `scan_before_the_pause` (the scan run concurrently, without the handshake) a
/// store whose barrier read the young age and that lands after the scan is lost, and loom
/// finds it.
fn promotion_against_a_store(scan_before_the_pause: bool) {
    model(move || {
        let w = World::new();
        let ages = Arc::new(GenerationMap::<LoomByte>::new(
            Offset::ZERO,
            2 * GRANULE_SIZE,
        ));
        ages.set(Offset::ZERO, GRANULE_SIZE, PageAge::Survivor(1));
        ages.set(Offset::from_raw(GRANULE_SIZE), GRANULE_SIZE, PageAge::Eden);
        let slot = Arc::new(AtomicU64::new(0));
        let remembered = Arc::new(loom::sync::atomic::AtomicBool::new(false));
        let t = w.attach();
        let m = {
            let (w, t) = (w.clone(), t.clone());
            let (ages, slot, remembered) = (ages.clone(), slot.clone(), remembered.clone());
            thread::spawn(move || {
                // A poll (stopped here if the pause comes first), then `ObjRef::store`: the
                // store, then the barrier's tests on the map; then detach (the next
                // safepoint-safe point).
                w.sp.poll(&t, &NoOtherHeaps);
                slot.store(YOUNG_VALUE, Ordering::Release);
                let value = ColoredPtr::from_raw(YOUNG_VALUE);
                if ages.remembers_store(Offset::from_raw(HOLDER), value, MASK) {
                    remembered.fetch_or(true, Ordering::Relaxed);
                }
                w.detach(&t, || {});
            })
        };
        // `Generations::remember_promoted`'s rule for the object's one slot (the minor's
        // mark color is one the stored pointer does not carry: only its age decides).
        let scan = || {
            let p = ColoredPtr::from_raw(slot.load(Ordering::Acquire));
            if ages.scan_remembers(layout(), p, Some(Color::MARKED0)) {
                remembered.fetch_or(true, Ordering::Relaxed);
            }
        };
        // Concurrent Select Relocation Set: the page begins its promotion.
        ages.begin_promotion(Offset::ZERO, GRANULE_SIZE);
        if scan_before_the_pause {
            scan();
        }
        // Pause Relocate Start.
        w.pause(|| {});
        // Concurrent Relocate: the scan of the promoted objects, then the page is old.
        if !scan_before_the_pause {
            scan();
        }
        ages.finish_promotion(Offset::ZERO, GRANULE_SIZE);
        m.join().unwrap();
        assert!(ages.is_settled_old(Offset::from_raw(HOLDER)));
        assert!(
            remembered.load(Ordering::Relaxed),
            "a young pointer stored into a promoted object is in no remembered set"
        );
    });
}

#[test]
fn a_store_racing_with_an_in_place_promotion_is_remembered() {
    promotion_against_a_store(false);
}

#[test]
#[should_panic(expected = "a young pointer stored into a promoted object is in no remembered set")]
fn a_promotion_scan_without_the_handshake_loses_a_store() {
    promotion_against_a_store(true);
}

// --- a relocation target's age against a store into the copy ----------------------------

/// Where the model's copy lies: on a target page (the second granule of the map), whose age
/// byte holds no page until the worker takes the page.
const COPY: u64 = GRANULE_SIZE + 64;
/// The young object (on the from-page's granule) whose pointer the mutator stores.
const YOUNG_OBJECT: u64 = 128;

/// A worker copies a young object onto a new old target page while a mutator finds the copy
/// through the page's forwarding entry and stores a young pointer into it. The forwarding
/// protocol is the collector's own `Forwarding` (its entries' insert and lookup) and the ages
/// its `GenerationMap` over loom's atomic bytes; the order is the runtime's: the target page's
/// age is set when the page is taken (`PageRegistry::new_relocation_page`), before any copy
/// onto it is published by its entry (`Forwarding::forward`), and the copier remembers the
/// copy's young fields after (`Generations::remember_moved`). The age byte is stored relaxed;
/// the entry's publication orders it before the mutator's barrier, which found the copy
/// through that entry: so the barrier reads the page old and remembers the store, or the
/// copier's scan reads the stored pointer.
#[test]
fn a_store_into_a_copy_found_through_its_entry_sees_the_target_page_old() {
    model(|| {
        let ages = Arc::new(GenerationMap::<LoomByte>::new(
            Offset::ZERO,
            2 * GRANULE_SIZE,
        ));
        // The from-page and the young object whose pointer the mutator stores.
        ages.set(Offset::ZERO, GRANULE_SIZE, PageAge::Eden);
        let f = forwarding(1);
        let slot = Arc::new(AtomicU64::new(0));
        let remembered = Arc::new(loom::sync::atomic::AtomicBool::new(false));
        let m = {
            let (ages, f, slot, remembered) =
                (ages.clone(), f.clone(), slot.clone(), remembered.clone());
            thread::spawn(move || {
                // The barrier of a load that met the object: its copy, if forwarded yet.
                let Some(to) = f.find(1) else { return };
                // `ObjRef::store` into the copy, then `Generations::store_barrier`'s decision.
                slot.store(YOUNG_OBJECT, Ordering::Release);
                if ages.remembers_store(to, ColoredPtr::from_raw(YOUNG_OBJECT), MASK) {
                    remembered.fetch_or(true, Ordering::Relaxed);
                }
            })
        };
        // The worker: takes the target page (old), copies the object, publishes the copy,
        // then remembers the copy's young fields.
        ages.set(Offset::from_raw(GRANULE_SIZE), GRANULE_SIZE, PageAge::Old);
        assert!(f.forward(1, Offset::from_raw(COPY)).is_ok());
        // `Generations::remember_moved`'s rule for the copy's one slot (the evacuating
        // minor's mark color is one the stored pointer does not carry: only its age decides).
        let p = ColoredPtr::from_raw(slot.load(Ordering::Acquire));
        if ages.scan_remembers(layout(), p, Some(Color::MARKED0)) {
            remembered.fetch_or(true, Ordering::Relaxed);
        }
        m.join().unwrap();
        if slot.load(Ordering::Relaxed) == YOUNG_OBJECT {
            assert!(
                remembered.load(Ordering::Relaxed),
                "a young pointer stored into a copy on an old page is in no remembered set"
            );
        }
    });
}

// --- a major's flip of the young tag, and its settling, against a store ---------------------

/// The granules of the flip model: a survivor page (young until the flip), an old page, and
/// a granule no page covers until a mutator takes it as a new eden page after the flip.
const SURVIVOR_PAGE: u64 = 0;
const OLD_PAGE: u64 = GRANULE_SIZE;
const NEW_PAGE: u64 = 2 * GRANULE_SIZE;

/// A full cycle's Pause Mark Start flips the generation map's young tag
/// (`GenerationMap::promote_all`, inside the pause over the collector's own `Safepoint`),
/// and its Concurrent Mark Roots then settles the map (`GenerationMap::settle`, a relaxed
/// read and a CAS per granule) while a mutator works: both on the collector's own
/// `GenerationMap` over loom's atomics, its age bytes *and* its young tag.
///
/// The mutator runs two sections between safepoint polls, each ordered before or after the
/// pause as a whole (it learns which from a flag the pause sets). In each it asks the store
/// barrier's decision (`GenerationMap::remembers_store`) about a young pointer stored into an
/// object of the survivor page: before the flip the page is young (no remembering), after
/// it the page is old, whether settle rewrote its byte yet or not, so the store is
/// remembered. A pointer to the survivor page stored into an old object is remembered before
/// the flip and not after (the page is settled old for the value test at once). After the
/// flip the mutator also takes a new eden page (`GenerationMap::set`, what really runs
/// beside settle: a minor never overlaps a major, and no page is freed before relocation, so
/// settle meets no other writer of the bytes it rewrites) and stores a pointer to it into
/// the survivor page's object, which must be remembered: the new page is young.
///
/// At the end the map is settled: settle rewrote exactly the survivor page's granule, and a
/// second flip (the next full cycle's) leaves the survivor page old instead of making it
/// young again, and makes the new eden page old (if the mutator took it: both its sections
/// may come before the pause).
#[test]
fn a_store_beside_the_settling_of_a_flip_reads_the_promoted_page_old() {
    // Sections the mutator ran before and after the flip, over all the executions.
    static SECTIONS: [std::sync::atomic::AtomicU64; 2] = [
        std::sync::atomic::AtomicU64::new(0),
        std::sync::atomic::AtomicU64::new(0),
    ];
    model(|| {
        let w = World::new();
        let ages = Arc::new(GenerationMap::<LoomByte>::new(
            Offset::ZERO,
            3 * GRANULE_SIZE,
        ));
        ages.set(Offset::ZERO, GRANULE_SIZE, PageAge::Survivor(1));
        ages.set(Offset::from_raw(OLD_PAGE), GRANULE_SIZE, PageAge::Old);
        let flipped = Arc::new(loom::sync::atomic::AtomicBool::new(false));
        let t = w.attach();
        let m = {
            let (w, t) = (w.clone(), t.clone());
            let (ages, flipped) = (ages.clone(), flipped.clone());
            thread::spawn(move || {
                let holder = Offset::from_raw(SURVIVOR_PAGE + 64);
                let on_survivor = ColoredPtr::from_raw(SURVIVOR_PAGE + 128);
                let on_new = ColoredPtr::from_raw(NEW_PAGE + 64);
                let mut took_page = false;
                for _ in 0..2 {
                    w.sp.poll(&t, &NoOtherHeaps);
                    // One section between polls: wholly before or wholly after the pause.
                    let after = flipped.load(Ordering::Relaxed);
                    SECTIONS[after as usize].fetch_add(1, Ordering::Relaxed);
                    if after && !took_page {
                        ages.set(Offset::from_raw(NEW_PAGE), GRANULE_SIZE, PageAge::Eden);
                        took_page = true;
                    }
                    let young_value = if took_page { on_new } else { on_survivor };
                    assert_eq!(
                        ages.remembers_store(holder, young_value, MASK),
                        after,
                        "a store into the survivor page's object (flipped: {after})"
                    );
                    assert_eq!(
                        ages.remembers_store(Offset::from_raw(OLD_PAGE + 64), on_survivor, MASK),
                        !after,
                        "a pointer to the survivor page stored into an old object \
                         (flipped: {after})"
                    );
                }
                w.detach(&t, || {});
                took_page
            })
        };
        // Pause Mark Start of a full cycle: the flip.
        w.pause(|| {
            assert_eq!(ages.promote_all(), 0, "the map was settled before the flip");
            flipped.store(true, Ordering::Relaxed);
        });
        // Concurrent Mark Roots: settle, beside the mutator.
        let settled = ages.settle();
        let took_page = m.join().unwrap();
        assert_eq!(settled, 1, "settle rewrote the survivor page's granule");
        // The next full cycle's flip returns to the first tag.
        assert_eq!(ages.promote_all(), 0);
        for page in [SURVIVOR_PAGE, OLD_PAGE, NEW_PAGE] {
            let at = Offset::from_raw(page);
            let exists = page != NEW_PAGE || took_page;
            assert_eq!(
                ages.is_old(at) && ages.is_settled_old(at),
                exists,
                "the page at {page:#x} is old after the second flip (if it exists)"
            );
        }
    });
    let [before, after] = SECTIONS.each_ref().map(|n| n.load(Ordering::Relaxed));
    assert!(
        before > 0 && after > 0,
        "the model ran sections on both sides of the flip ({before} before, {after} after)"
    );
}
