//! Value slots under collection: a slot left stale by a cycle healed by the mutator's value
//! barrier, objects reached only through value slots relocated and remapped (both collecting
//! modes, verifier on), NaN canonicalization through the API, and the limits as errors. The
//! stale slot and the relocation run with the mark colors rotating too
//! (`HeapConfig::mark_colors`), so that slots carry Marked2 pointers.
use gc_runtime::inspect::{Color, GoodColor, ValueKind};
use gc_runtime::{ColorChoice, Heap, HeapConfig, Immediate, Mode, Value};

fn heap(mode: Mode, mb: u64) -> Heap {
    heap_with(mode, mb, ColorChoice::Alternate)
}

fn heap_with(mode: Mode, mb: u64, colors: ColorChoice) -> Heap {
    Heap::new(
        HeapConfig::new(mb << 20)
            .mode(mode)
            .verify(true)
            .mark_colors(colors),
    )
    .unwrap()
}

/// With the colors rotating, the third cycle marks with Marked2: a value slot it healed holds
/// a Marked2 pointer afterwards, bad under Remapped, and the barrier heals it; the fourth
/// cycle's stale color is Marked2.
#[test]
fn a_value_slot_left_marked2_by_a_cycle_is_healed_by_the_barrier() {
    let h = heap_with(Mode::Concurrent, 32, ColorChoice::Rotate);
    let mut m = h.attach("main").unwrap();
    m.scope(|s| {
        // The target first: a relocation that publishes the holder's copy after the target's
        // (a worker publishes a batch of copies from the highest address down) writes the
        // target's new address into it, and the slot would not be left stale (see
        // `relocate::copy_remap`).
        let target = s.alloc(2, 0, 8).unwrap();
        let holder = s.alloc_with_values(1, 0, 1, 0).unwrap();
        s.get(target).write_u64(0, 78);
        s.store_value(holder, 0, Value::Ref(target));
        let mut colors = Vec::new();
        for _ in 0..3 {
            s.collect("test");
            let raw = s.raw_value_slot(holder, 0);
            let ValueKind::Pointer(p) = raw.kind() else {
                panic!("value slot 0 holds {raw:?}, not a pointer");
            };
            colors.push(h.gc_state().layout.color(p));
        }
        // Each cycle's marking healed the slot to its mark color (no load between).
        assert_eq!(
            colors,
            [Color::MARKED1, Color::MARKED0, Color::MARKED2],
            "rotation marks with Marked1, Marked0, Marked2"
        );
        let before = h.value_slot_stats();
        let Value::Ref(t) = s.get(holder).load_value(0) else {
            panic!("value slot 0 no longer holds an object");
        };
        assert_eq!(t.read_u64(0), 78);
        let healed = s.raw_value_slot(holder, 0);
        assert_eq!(
            healed.raw() & h.gc_state().bad_mask,
            0,
            "healed: {healed:?}"
        );
        assert_eq!(h.value_slot_stats().barrier_heals, before.barrier_heals + 1);
        s.collect("test");
        let cycles = h.stats().cycles;
        let last = cycles.last().unwrap();
        assert_eq!(last.mark_color, Some(GoodColor::Marked1));
        assert_eq!(last.stale_color, Some(GoodColor::Marked2));
    });
}

#[test]
fn a_value_slot_left_stale_by_a_cycle_is_healed_by_the_barrier() {
    let h = heap(Mode::Concurrent, 32);
    let mut m = h.attach("main").unwrap();
    m.scope(|s| {
        // The target first, as above: the holder's slot is then left stale by a relocation.
        let target = s.alloc(2, 0, 8).unwrap();
        let holder = s.alloc_with_values(1, 0, 2, 0).unwrap();
        s.get(target).write_u64(0, 77);
        s.store_value(holder, 0, Value::Ref(target));
        s.store_value(holder, 1, Value::Number(1.5));
        let number_bits = s.raw_value_slot(holder, 1);
        let before = h.value_slot_stats();
        s.collect("test");
        // Marking healed the slot to its mark color; the cycle ended with Remapped good, so
        // the slot now holds a bad pointer that only a load will heal.
        let bad = h.gc_state().bad_mask;
        let raw = s.raw_value_slot(holder, 0);
        let ValueKind::Pointer(p) = raw.kind() else {
            panic!("value slot 0 holds {raw:?}, not a pointer");
        };
        assert_ne!(p.raw() & bad, 0, "the slot is stale after the cycle: {p:?}");
        let after_cycle = h.value_slot_stats();
        assert!(
            after_cycle.mark_heals > before.mark_heals,
            "marking healed the value slot: {after_cycle:?}"
        );
        let Value::Ref(t) = s.get(holder).load_value(0) else {
            panic!("value slot 0 no longer holds an object");
        };
        assert_eq!(t.read_u64(0), 77);
        let healed = s.raw_value_slot(holder, 0);
        assert!(healed.is_pointer());
        assert_eq!(
            healed.raw() & bad,
            0,
            "the barrier healed the slot: {healed:?}"
        );
        assert_eq!(
            h.value_slot_stats().barrier_heals,
            after_cycle.barrier_heals + 1,
            "one heal by the barrier, none by the second load"
        );
        let _ = s.get(holder).load_value(0);
        assert_eq!(
            h.value_slot_stats().barrier_heals,
            after_cycle.barrier_heals + 1
        );
        assert_eq!(
            s.raw_value_slot(holder, 1),
            number_bits,
            "numbers are never touched"
        );
        assert_eq!(s.get(holder).load_value(1).as_number(), Some(1.5));
    });
}

/// A chain of `n` nodes linked only through value slot 0 (the last holds immediate 0), with
/// garbage between them so their pages are sparse; returns the head.
fn build_chain<'s>(s: &mut gc_runtime::Scope<'s>, n: u64) -> gc_runtime::Local<'s> {
    s.scope_escape(|s| {
        let mut next: Option<gc_runtime::Local<'_>> = None;
        for i in 0..n {
            let node = s.alloc_with_values(3, 1, 2, 16).unwrap();
            let o = s.get(node);
            o.write_u64(0, i);
            o.write_u64(8, !i);
            o.store_value(1, Value::Number(i as f64 + 0.5));
            match next {
                Some(nx) => s.store_value(node, 0, Value::Ref(nx)),
                None => s.store_value(node, 0, Value::Immediate(Immediate::new(0).unwrap())),
            }
            next = Some(node);
            // Garbage between the nodes, dropped at once.
            s.scope(|s| {
                s.alloc(9, 0, 200).unwrap();
            });
        }
        next
    })
    .expect("a non-empty chain")
}

/// Walk the chain: check every node's values, return each node's address.
fn walk(s: &gc_runtime::Scope<'_>, head: gc_runtime::Local<'_>, n: u64) -> Vec<gc_runtime::Offset> {
    let mut addrs = Vec::new();
    let mut node = s.get(head);
    let mut i = n;
    loop {
        i -= 1;
        assert_eq!(node.shape(), 3);
        assert_eq!((node.read_u64(0), node.read_u64(8)), (i, !i), "node {i}");
        assert_eq!(node.load_value(1).as_number(), Some(i as f64 + 0.5));
        addrs.push(node.address());
        match node.load_value(0) {
            Value::Ref(next) => node = next,
            Value::Immediate(im) => {
                assert_eq!((im.get(), i), (0, 0), "the chain ends at node 0");
                break;
            }
            Value::Number(x) => panic!("node {i}: a number {x} where the link was"),
        }
    }
    addrs
}

#[test]
fn objects_reached_only_through_value_slots_are_relocated() {
    relocate_value_chains(ColorChoice::Alternate);
}

/// The same with the colors rotating: the chain's slots carry Marked2 after every third
/// cycle, and the next cycle's markers remap and heal them through the forwarding of the
/// Marked2 cycle's relocation.
#[test]
fn objects_reached_only_through_value_slots_are_relocated_with_rotating_colors() {
    relocate_value_chains(ColorChoice::Rotate);
}

fn relocate_value_chains(colors: ColorChoice) {
    const N: u64 = 20_000;
    for mode in [Mode::Concurrent, Mode::Stw] {
        let h = heap_with(mode, 64, colors);
        let mut m = h.attach("main").unwrap();
        m.scope(|s| {
            let head = build_chain(s, N);
            assert_eq!(s.handle_count(), 1, "only the head is rooted");
            let first = walk(s, head, N);
            let mut moved = 0;
            for round in 0..3 {
                s.collect("test");
                s.collect("test");
                let now = walk(s, head, N);
                moved += first.iter().zip(&now).filter(|(a, b)| a != b).count();
                assert_eq!(now.len() as u64, N, "{mode}: round {round}");
            }
            let st = h.value_slot_stats();
            assert!(moved > 0, "{mode}: no node moved: {st:?}");
            match mode {
                Mode::Concurrent => assert!(
                    st.barrier_moves + st.mark_moves > 0,
                    "{mode}: value slots were remapped: {st:?}"
                ),
                _ => assert!(st.full_remap_moves > 0, "{mode}: {st:?}"),
            }
            let cycles = h.stats().cycles;
            let m2 = Some(GoodColor::Marked2);
            let marked2 = cycles.iter().filter(|c| c.mark_color == m2).count();
            let stale_m2: u64 = cycles
                .iter()
                .filter(|c| c.stale_color == m2)
                .map(|c| c.stale_slots_remapped)
                .sum();
            if colors == ColorChoice::Rotate {
                assert_eq!(marked2, 2, "{mode}: six cycles, two of them Marked2");
                if mode == Mode::Concurrent {
                    assert!(stale_m2 > 0, "{mode}: no stale Marked2 slot remapped");
                }
            } else {
                assert_eq!(marked2, 0, "{mode}: alternating colors used Marked2");
            }
            eprintln!("{mode}: {moved} node moves, {st:?}");
        });
    }
}

#[test]
fn every_nan_is_stored_as_the_canonical_nan() {
    let h = heap(Mode::Concurrent, 16);
    let mut m = h.attach("main").unwrap();
    m.scope(|s| {
        let o = s.alloc_with_values(1, 0, 1, 0).unwrap();
        assert_eq!(
            s.get(o).load_value(0).as_number(),
            Some(0.0),
            "a fresh slot"
        );
        // NaNs whose bits carry the pointer tag, the immediate tag, and x86's default NaN.
        for bits in [
            0xffff_0000_0000_1000u64,
            0xffff_4000_0020_0000,
            0x7ffc_0000_0000_0001,
            0xfff8_0000_0000_0000,
        ] {
            s.store_value(o, 0, Value::Number(f64::from_bits(bits)));
            let raw = s.raw_value_slot(o, 0);
            assert!(!raw.is_pointer(), "{bits:#x} stored as {raw:?}");
            let x = s.get(o).load_value(0).as_number().expect("a number");
            assert!(x.is_nan());
        }
        let im = Immediate::new(Immediate::MAX).unwrap();
        s.store_value(o, 0, Value::Immediate(im));
        assert_eq!(s.get(o).load_value(0).as_immediate(), Some(im));
        let err = Immediate::new(Immediate::MAX + 1).unwrap_err();
        assert!(err.to_string().contains("more than 48 bits"), "{err}");
    });
}

#[test]
fn too_many_value_slots_is_an_error() {
    let h = heap(Mode::Concurrent, 16);
    let mut m = h.attach("main").unwrap();
    m.scope(|s| {
        let err = s.alloc_with_values(1, 0, 1 << 24, 0).unwrap_err();
        assert!(err.to_string().contains("value slots"), "{err}");
        // A 24-bit count is fine when the heap holds it.
        let o = s.alloc_with_values(1, 2, 1000, 24).unwrap();
        assert_eq!(s.get(o).n_values(), 1000);
        assert_eq!(s.get(o).n_refs(), 2);
        assert_eq!(s.get(o).n_bytes(), 24);
    });
}

/// The bits view (`ValueBits`) and the allocation fast path's value slots: bits round-trip,
/// bits carrying the pointer tag are stored as the canonical NaN (no forged reference), and an
/// object reached only through a value slot initialized on the fast path survives cycles that
/// move it (verifier on).
#[test]
fn value_bits_round_trip_and_fresh_value_slots_survive_cycles() {
    use gc_runtime::{ValueBits, VALUE_IMMEDIATE_TAG};
    for mode in [Mode::Concurrent, Mode::Stw] {
        let h = heap(mode, 16);
        let mut m = h.attach("main").unwrap();
        m.scope(|s| {
            let o = s.alloc_with_values(1, 0, 1, 0).unwrap();
            for bits in [
                1.5f64.to_bits(),
                VALUE_IMMEDIATE_TAG | 3,
                0,
                (-0.0f64).to_bits(),
            ] {
                s.get(o).store_value_bits(0, ValueBits::Bits(bits));
                let ValueBits::Bits(got) = s.get(o).load_value_bits(0) else {
                    panic!("{bits:#x} read back as an object");
                };
                assert_eq!(got, bits);
            }
            for forged in [0xffff_0000_0000_1000u64, u64::MAX, 0xffff_4000_0020_0040] {
                s.get(o).store_value_bits(0, ValueBits::Bits(forged));
                let raw = s.raw_value_slot(o, 0);
                assert_eq!(
                    raw.raw(),
                    0x7ff8_0000_0000_0000,
                    "{forged:#x} stored as {raw:?}"
                );
            }
            // A holder and its target on the fast path; the target is reached only through
            // the holder's value slot.
            let holder = {
                let target = s.alloc_fresh(2, 0, 8).expect("a fresh page for the target");
                target.init_u64(0, 4242);
                let target = target.get();
                let holder = s
                    .alloc_fresh_with_values(3, 0, 2, 0)
                    .expect("a fresh page for the holder");
                holder.init_value(0, ValueBits::Ref(target));
                holder.init_value(1, ValueBits::Bits(VALUE_IMMEDIATE_TAG | 7));
                s.root(holder.get())
            };
            // Garbage so that the holder's page is sparse and relocated.
            for _ in 0..20_000 {
                s.scope(|s| {
                    s.alloc(4, 0, 64).unwrap();
                });
            }
            let before = s.get(holder).address();
            for _ in 0..3 {
                s.collect("test");
            }
            let o = s.get(holder);
            assert_eq!(o.n_values(), 2);
            let ValueBits::Ref(t) = o.load_value_bits(0) else {
                panic!("{mode}: the target was lost");
            };
            assert_eq!(t.read_u64(0), 4242, "{mode}");
            assert!(
                matches!(o.load_value_bits(1), ValueBits::Bits(b) if b == VALUE_IMMEDIATE_TAG | 7)
            );
            eprintln!("{mode}: holder {before:?} -> {:?}", o.address());
        });
    }
}
