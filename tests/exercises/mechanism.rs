//! Exercises of the chapter *Mechanism*: the offset bits, the views, the masks, forwarding
//! entries and page sizes of a heap, worked out by hand and checked against gc-core.

use crate::{GIB, MIB, TIB};
use gc_core::address::{AddressLayout, GoodColor, View};
use gc_core::page::PageSizes;
use gc_core::ForwardingEntries;

/// Exercise 1: How many offset bits `S` does a heap of at most 300 GiB get?
fn offset_bits_for_300_gib() -> u32 {
    // Virtual space for 16x the heap: 4800 GiB, rounded up to a power of two: 8 TiB = 2^43.
    // 43 lies inside 42..=43, so S = 43.
    let needed = (300 * GIB * 16).next_power_of_two();
    assert_eq!(needed, 8 * TIB);
    43
}

/// Exercise 2: Where do the four views of that 300 GiB heap start (Marked0, Marked1,
/// Remapped, Marked2)?
fn view_bases_for_300_gib() -> [u64; 4] {
    // Each view's base is its color bit: bit S, S+1, S+2, S+3 with S = 43.
    [1 << 43, 1 << 44, 1 << 45, 1 << 46] // 8 TiB, 16 TiB, 32 TiB, 64 TiB
}

/// Exercise 3: A 16 GiB heap runs GC(5). What is the bad mask while it marks?
fn bad_mask_while_gc5_marks_16_gib() -> u64 {
    // 16 GiB x 16 = 256 GiB = 2^38, below the minimum: S = 42. GC(n) for odd n marks with
    // Marked0 (00001); every other metadata bit is bad: F M2 R M1 = 11110, shifted up by S.
    0b11110 << 42
}

/// Exercise 4: A page in the relocation set holds 1000 live objects. How many entries does its
/// forwarding table have?
fn forwarding_entries_for_1000_live() -> usize {
    // Twice the live objects, rounded up to a power of two (and at least 16): 2000 -> 2048.
    // At 8 bytes an entry that is 16 KiB off-heap.
    2048
}

/// Exercise 5: How large is a medium page on a 512 MiB heap, and does a 64 MiB heap have medium
/// pages?
fn medium_pages_512_mib_and_64_mib() -> (Option<u64>, Option<u64>) {
    // 3.125% (1/32) of 512 MiB is 16 MiB, a power of two below the 32 MiB cap: 16 MiB.
    // Of 64 MiB it is 2 MiB, not larger than a small page: no medium pages.
    (Some(16 * MIB), None)
}

#[test]
fn offset_bits() {
    let layout = AddressLayout::for_max_heap(300 * GIB).expect("300 GiB fits");
    assert_eq!(offset_bits_for_300_gib(), layout.offset_bits());
}

#[test]
fn view_bases() {
    let layout = AddressLayout::for_max_heap(300 * GIB).expect("300 GiB fits");
    let real = View::ALL.map(|v| layout.view_base(v).raw());
    assert_eq!(
        view_bases_for_300_gib(),
        real,
        "Marked0, Marked1, Remapped, Marked2"
    );
}

#[test]
fn bad_mask() {
    let layout = AddressLayout::for_max_heap(16 * GIB).expect("16 GiB fits");
    let real = layout.bad_mask(GoodColor::mark_color_for_cycle(5));
    let answer = bad_mask_while_gc5_marks_16_gib();
    assert_eq!(answer, real, "answer {answer:#x}, the code {real:#x}");
}

#[test]
fn forwarding_entries() {
    let real: ForwardingEntries = ForwardingEntries::new(1000);
    assert_eq!(forwarding_entries_for_1000_live(), real.capacity());
}

#[test]
fn medium_pages() {
    let real = (
        PageSizes::for_max_heap(512 * MIB).medium,
        PageSizes::for_max_heap(64 * MIB).medium,
    );
    assert_eq!(medium_pages_512_mib_and_64_mib(), real);
}
