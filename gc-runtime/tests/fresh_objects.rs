//! The allocation fast path (`Scope::alloc_fresh`) and its just-allocated objects (`Fresh`):
//! it allocates only where the slow path would do nothing more (a small object on a private
//! page of the current cycle, inside the pacing quantum) and otherwise changes nothing; its
//! objects are zeroed and initialized, and survive concurrent cycles like any other once
//! rooted; its weak-handle companions (`Scope::weak_ref`, `WeakRef::get`) see an object die.

use gc_runtime::{Heap, HeapConfig, Mode, ObjRef, Scope};

fn heap(mode: Mode) -> Heap {
    Heap::new(HeapConfig::new(32 << 20).mode(mode).verify(true)).unwrap()
}

/// Allocate with the fast path, falling back to the slow one; true if the fast path served.
fn alloc_either<'s>(
    s: &mut Scope<'s>,
    shape: u32,
    n_refs: u32,
    n_bytes: usize,
) -> (gc_runtime::Local<'s>, bool) {
    if let Some(f) = s.alloc_fresh(shape, n_refs, n_bytes) {
        let o: ObjRef<'_> = f.get();
        return (s.root(o), true);
    }
    (s.alloc(shape, n_refs, n_bytes).unwrap(), false)
}

#[test]
fn the_fast_path_declines_what_needs_the_slow_path_and_allocates_nothing() {
    let h = heap(Mode::Concurrent);
    let mut m = h.attach("main").unwrap();
    m.scope(|s| {
        // A new mutator has no private page: the first allocation is a refill.
        assert!(s.alloc_fresh(1, 1, 8).is_none());
        let first = s.alloc(1, 0, 8).unwrap();
        let used = h.usage().used;
        // Too many slots (an invalid size) and objects too large for a small page.
        assert!(s.alloc_fresh(1, u32::MAX, 0).is_none());
        assert!(s.alloc_fresh(1, 0, 1 << 20).is_none());
        assert_eq!(h.usage().used, used);
        let f = s
            .alloc_fresh(7, 3, 20)
            .expect("a small object on the private page");
        let o = f.get();
        assert_eq!((o.shape(), o.n_refs(), o.n_bytes()), (7, 3, 20));
        assert!((0..3).all(|i| o.load(i).is_none()));
        let mut bytes = [1u8; 20];
        o.read_bytes(0, &mut bytes);
        assert_eq!(bytes, [0; 20]);
        assert!(!o.same(&s.get(first)));
    });
}

#[test]
fn the_fast_path_stops_at_each_pacing_quantum() {
    let quantum = 4 << 10;
    let h = Heap::new(HeapConfig::new(32 << 20).pacing_quantum(quantum)).unwrap();
    let mut m = h.attach("main").unwrap();
    m.scope(|s| {
        s.alloc(1, 0, 8).unwrap(); // the private page
        for round in 0..3 {
            let mut fast = 0u64;
            while s.alloc_fresh(1, 2, 0).is_some() {
                fast += 1;
                assert!(fast * 32 < quantum, "round {round}: no pacing decision");
            }
            assert!(fast > 0, "round {round}: the fast path never served");
            // The slow path makes the pacing decision and starts the next quantum.
            s.alloc(1, 2, 0).unwrap();
        }
    });
}

#[test]
fn fresh_objects_survive_concurrent_cycles_once_rooted() {
    let h = heap(Mode::Concurrent);
    let mut m = h.attach("main").unwrap();
    let region = h.root_region(1);
    let cycles_before = h.usage().cycles;
    let mut fast = 0;
    m.scope(|s| {
        // A list of 20 000 nodes, each [next] + its index, built mostly on the fast path,
        // with a collection every 2 000 nodes: rooted only through the region's head.
        for i in 0..20_000u64 {
            s.scope(|s| {
                let (node, was_fast) = alloc_either(s, 3, 1, 8);
                fast += was_fast as u32;
                let n = s.get(node);
                n.write_u64(0, i);
                n.store(0, region.get(s, 0));
                region.set(s, 0, Some(n));
            });
            // Initializing stores of a Fresh, in a stretch of their own.
            s.scope(|s| {
                if let Some(f) = s.alloc_fresh(4, 1, 0) {
                    let head = region.get(s, 0);
                    f.init(0, head);
                    // Garbage: nothing roots it.
                    let _ = f.get();
                }
            });
            if i % 2_000 == 1_999 {
                s.collect("test");
            }
        }
        let mut at = region.get(s, 0);
        let mut expect = 20_000u64;
        while let Some(n) = at {
            expect -= 1;
            assert_eq!(n.read_u64(0), expect, "a node lost or corrupted");
            at = n.load(0);
        }
        assert_eq!(expect, 0, "the list is short");
    });
    assert!(fast > 10_000, "the fast path served only {fast} of 20 000");
    assert!(
        h.usage().cycles >= cycles_before + 10,
        "the cycles did not run"
    );
}

#[test]
fn a_fresh_object_dies_when_nothing_roots_it() {
    let h = heap(Mode::Concurrent);
    let mut m = h.attach("main").unwrap();
    m.scope(|s| {
        s.alloc(1, 0, 8).unwrap();
        let (kept, dropped) = s.scope(|s| {
            let f = s.alloc_fresh(1, 0, 8).unwrap().get();
            f.write_u64(0, 42);
            let kept = s.global(s.root(f));
            let g = s.alloc_fresh(1, 0, 8).unwrap().get();
            (kept, s.weak_ref(g))
        });
        let kept_weak = s.weak_ref(kept.get(s));
        s.collect("test");
        s.collect("test");
        assert!(
            dropped.get(s).is_none(),
            "an unrooted fresh object survived"
        );
        assert!(dropped.is_cleared());
        assert_eq!(kept_weak.get(s).expect("rooted").read_u64(0), 42);
    });
}
