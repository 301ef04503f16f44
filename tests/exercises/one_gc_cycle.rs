//! Exercises of the chapter *One GC cycle*: which color is good in which phase, what a healed
//! slot holds, and which loads take the slow path, checked against gc-core's address layout.

use crate::GIB;
use gc_core::address::{AddressLayout, GoodColor};
use gc_core::Offset;

/// Exercise 1: A 1 GiB heap runs GC(0). Marking heals a slot that points at the object at offset
/// 0x1000. What 64-bit word does the slot hold afterwards?
fn slot_after_gc0_marking() -> u64 {
    // 1 GiB x 16 = 16 GiB, below the minimum: S = 42. GC(0) marks with Marked1 (even n), the
    // bit S + 1 = 43, above the offset.
    (1 << 43) | 0x1000 // 0x0800_0000_1000
}

/// Exercise 2: The same heap relocates in GC(4). Which bits are bad meanwhile?
fn bad_mask_while_gc4_relocates() -> u64 {
    // During relocation Remapped (00100) is good; F, M2, M1 and M0 are bad: 11011 << S.
    0b11011 << 42
}

/// Exercise 3: A slot was last healed during GC(2)'s marking. Does its next load take the slow path
/// if it happens (a) later in GC(2)'s marking, (b) in GC(2)'s relocation, (c) in GC(3)'s marking,
/// (d) in GC(4)'s marking?
fn slow_path_for_a_slot_healed_in_gc2() -> [bool; 4] {
    // It holds Marked1. Good in (a); bad in (b) (Remapped is good) and in (c) (Marked0 is
    // good). In (d) Marked1 is good again: a slot that kept GC(2)'s color through GC(3) would
    // pass GC(4)'s barrier unmarked and unremapped. None can: GC(3)'s marking recolors every
    // reachable slot (invariant 2), which is why two mark colors are enough.
    [false, true, true, false]
}

fn layout() -> AddressLayout {
    AddressLayout::for_max_heap(GIB).expect("1 GiB fits")
}

#[test]
fn healed_slot() {
    let real = layout()
        .good(Offset::from_raw(0x1000), GoodColor::mark_color_for_cycle(0))
        .raw();
    let answer = slot_after_gc0_marking();
    assert_eq!(answer, real, "answer {answer:#x}, the code {real:#x}");
}

#[test]
fn bad_mask_during_relocation() {
    let real = layout().bad_mask(GoodColor::Remapped);
    let answer = bad_mask_while_gc4_relocates();
    assert_eq!(answer, real, "answer {answer:#x}, the code {real:#x}");
}

#[test]
fn which_loads_are_slow() {
    let l = layout();
    let healed = l.good(Offset::from_raw(0x1000), GoodColor::mark_color_for_cycle(2));
    let real = [
        GoodColor::mark_color_for_cycle(2),
        GoodColor::Remapped,
        GoodColor::mark_color_for_cycle(3),
        GoodColor::mark_color_for_cycle(4),
    ]
    .map(|good| l.is_bad(healed, good));
    assert_eq!(
        slow_path_for_a_slot_healed_in_gc2(),
        real,
        "(a), (b), (c), (d)"
    );
}
