//! Colored pointers: the layout and good/bad mask table for S = 42 and 43, and property
//! tests of pointer encode/decode: the offset and the color survive a round trip through
//! `with_color`, and a pointer with exactly the good color is good while a pointer with any other
//! color set is bad, in every phase.

use gc_core::address::{MAX_OFFSET_BITS, MIN_OFFSET_BITS, VIRTUAL_TO_PHYSICAL_RATIO};
use gc_core::{AddressLayout, Color, ColoredPtr, GoodColor, Offset, View, GRANULE_SIZE};
use proptest::prelude::*;

const GOODS: [GoodColor; 4] = [
    GoodColor::Marked0,
    GoodColor::Marked1,
    GoodColor::Marked2,
    GoodColor::Remapped,
];
const TIB: u64 = 1 << 40;

fn layouts() -> impl Strategy<Value = AddressLayout> {
    (MIN_OFFSET_BITS..=MAX_OFFSET_BITS).prop_map(AddressLayout::new)
}

/// A layout with an offset inside its offset space.
fn layout_and_offset() -> impl Strategy<Value = (AddressLayout, Offset)> {
    layouts().prop_flat_map(|l| (Just(l), (0..l.offset_space()).prop_map(Offset::from_raw)))
}

fn any_color() -> impl Strategy<Value = Color> {
    (0u64..32).prop_map(Color::from_bits_truncate)
}

fn view_color(v: View) -> Color {
    match v {
        View::Marked0 => Color::MARKED0,
        View::Marked1 => Color::MARKED1,
        View::Remapped => Color::REMAPPED,
        View::Marked2 => Color::MARKED2,
    }
}

#[test]
fn mask_table_matches_the_design() {
    // Bits written F M2 R M1 M0, relative to S: good and bad per phase.
    let table = [
        (GoodColor::Remapped, 0b00100, 0b11011),
        (GoodColor::Marked0, 0b00001, 0b11110),
        (GoodColor::Marked1, 0b00010, 0b11101),
        (GoodColor::Marked2, 0b01000, 0b10111),
    ];
    for s in [42u32, 43] {
        let l = AddressLayout::new(s);
        for (g, good, bad) in table {
            assert_eq!(l.good_mask(g), good << s, "S={s} {g:?} good");
            assert_eq!(l.bad_mask(g), bad << s, "S={s} {g:?} bad");
            assert_eq!(l.good_mask(g) | l.bad_mask(g), l.metadata_mask());
        }
        // View bases are 1 << S, 1 << (S+1), 1 << (S+2), 1 << (S+3); Finalizable has no view.
        assert_eq!(l.view_base(View::Marked0).raw(), 1 << s);
        assert_eq!(l.view_base(View::Marked1).raw(), 1 << (s + 1));
        assert_eq!(l.view_base(View::Remapped).raw(), 1 << (s + 2));
        assert_eq!(l.view_base(View::Marked2).raw(), 1 << (s + 3));
        assert_eq!(l.color_bits(Color::FINALIZABLE), 1 << (s + 4));
        // The highest view ends inside 47-bit user space, below the Finalizable bit, and a
        // colored pointer fits a value slot's 48-bit payload.
        let highest_end = l.view_base(View::HIGHEST).raw() + l.offset_space();
        assert!(highest_end <= 1 << 47);
        assert!(highest_end <= l.color_bits(Color::FINALIZABLE));
        assert!(l.metadata_mask() < 1 << 48);
    }
    assert_eq!(
        AddressLayout::new(42).view_base(View::Marked0).raw(),
        4 * TIB
    );
    assert_eq!(
        AddressLayout::new(43).view_base(View::Remapped).raw(),
        32 * TIB
    );
    assert_eq!(
        AddressLayout::new(43).view_base(View::Marked2).raw(),
        64 * TIB
    );
}

#[test]
fn s_is_chosen_from_the_max_heap() {
    for (heap, s) in [
        (GRANULE_SIZE, 42),
        (256 << 30, 42),
        ((256 << 30) + GRANULE_SIZE, 43),
        (512 << 30, 43),
        ((512 << 30) + GRANULE_SIZE, 43),
        (8 * TIB, 43),
    ] {
        assert_eq!(
            AddressLayout::for_max_heap(heap).map(|l| l.offset_bits()),
            Some(s),
            "max heap {heap:#x}"
        );
    }
    assert_eq!(AddressLayout::for_max_heap(8 * TIB + GRANULE_SIZE), None);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn offset_and_color_round_trip((l, off) in layout_and_offset(), c in any_color()) {
        let p = l.with_color(off, c);
        prop_assert_eq!(l.offset(p), off);
        prop_assert_eq!(l.color(p), c);
        // Nothing above the five metadata bits is ever set.
        prop_assert_eq!(p.raw() >> (l.offset_bits() + 5), 0);
        // Recoloring keeps the offset and replaces the color.
        for c2 in [Color::MARKED0, Color::MARKED1, Color::REMAPPED, Color::MARKED2, Color::FINALIZABLE] {
            let q = l.with_color(l.offset(p), c2);
            prop_assert_eq!(l.offset(q), off);
            prop_assert_eq!(l.color(q), c2);
        }
    }

    #[test]
    fn views_are_colors((l, off) in layout_and_offset()) {
        for v in View::ALL {
            let a = l.address(off, v);
            prop_assert_eq!(a.raw(), l.view_base(v).raw() | off.raw());
            prop_assert_eq!(l.address_offset(a), off);
            let p = l.with_color(off, view_color(v));
            prop_assert!(l.is_dereferenceable(p));
            prop_assert_eq!(l.view_address(p), a);
        }
        prop_assert!(!l.is_dereferenceable(l.with_color(off, Color::FINALIZABLE)));
        prop_assert!(!l.is_dereferenceable(l.with_color(off, Color::MARKED0 | Color::REMAPPED)));
        prop_assert!(!l.is_dereferenceable(ColoredPtr::from_raw(off.raw())));
    }

    #[test]
    fn exactly_the_good_color_is_good((l, off) in layout_and_offset(), c in any_color()) {
        let p = l.with_color(off, c);
        for g in GOODS {
            prop_assert_eq!(l.good(off, g), l.with_color(off, g.color()));
            if c.is_empty() {
                // An uncolored word is only null or a plain offset; only null is "neither".
                if off == Offset::ZERO {
                    prop_assert!(!l.is_good(p, g) && !l.is_bad(p, g));
                }
                continue;
            }
            let good = c == g.color();
            prop_assert_eq!(l.is_good(p, g), good, "{:?} in phase {:?}", c, g);
            prop_assert_eq!(l.is_bad(p, g), !good, "{:?} in phase {:?}", c, g);
            // The barrier's test is exactly `ptr & bad_mask != 0`.
            prop_assert_eq!(p.raw() & l.bad_mask(g) != 0, !good);
        }
    }

    #[test]
    fn single_view_colors_are_good_in_exactly_one_phase((l, off) in layout_and_offset()) {
        for v in View::ALL {
            let p = l.with_color(off, view_color(v));
            let good_in: Vec<GoodColor> = GOODS.into_iter().filter(|&g| l.is_good(p, g)).collect();
            prop_assert_eq!(good_in.len(), 1);
            prop_assert_eq!(good_in[0].color(), view_color(v));
        }
        // Finalizable is never good, alone or added to the good color.
        for g in GOODS {
            prop_assert!(l.is_bad(l.with_color(off, Color::FINALIZABLE), g));
            prop_assert!(l.is_bad(l.with_color(off, g.color() | Color::FINALIZABLE), g));
        }
    }

    #[test]
    fn chosen_layout_fits_the_heap(granules in 1u64..=(8 * TIB / GRANULE_SIZE)) {
        let heap = granules * GRANULE_SIZE;
        let l = AddressLayout::for_max_heap(heap).expect("any heap up to 8 TiB fits");
        let s = l.offset_bits();
        prop_assert!((42..=43).contains(&s));
        prop_assert!(heap <= l.offset_space());
        // Minimal: one bit fewer would not hold 16x the heap (ZGC's virtual-to-physical ratio).
        if s > 42 {
            prop_assert!(heap * VIRTUAL_TO_PHYSICAL_RATIO > 1 << (s - 1));
        }
        // Maximal enough: 16x the heap fits, unless S is already at its 43-bit cap.
        if s < 43 {
            prop_assert!(heap * VIRTUAL_TO_PHYSICAL_RATIO <= l.offset_space());
        }
    }

    #[test]
    fn mark_colors_alternate(n in 0u64..1_000_000) {
        let a = GoodColor::mark_color_for_cycle(n);
        let b = GoodColor::mark_color_for_cycle(n + 1);
        prop_assert_ne!(a, b);
        prop_assert_eq!(a.other_mark(), b);
        prop_assert_ne!(a, GoodColor::Remapped);
    }
}
