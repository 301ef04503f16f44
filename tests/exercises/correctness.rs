//! Exercises of the chapter *How we know it is correct*: the limits of a forwarding entry
//! against the pages it must serve, checked against gc-core. The chapter's other exercises are
//! the bug hunts, patches in `tests/bug-hunts/` that `.ci/bug-hunts` checks.

use crate::{GIB, MIB};
use gc_core::forwarding_entries::MAX_FROM_INDEX;
use gc_core::page::{PageKind, PageSizes};
use gc_core::{ForwardingEntries, Offset};

/// Exercise 1: A forwarding entry keeps a 22-bit from-index. What is the largest, and how many
/// object positions (from-indexes) do a small page and a 1 GiB heap's medium page have?
fn from_index_limits() -> (u64, u64, u64) {
    // 2^22 - 1; a small page has one position per 8 bytes: 2 MiB / 8; a medium page has 8192
    // (its alignment is size / 8192). Both fit with room to spare.
    ((1 << 22) - 1, 2 * MIB / 8, 8192)
}

/// Exercise 2: It keeps the to-offset in 41 bits, in units of 8 bytes. What is the largest offset
/// an entry can hold?
fn largest_to_offset() -> u64 {
    // (2^41 - 1) x 8 = 2^44 - 8: the last 8-byte position of the largest offset space (S = 44).
    (1 << 44) - 8
}

#[test]
fn from_indexes_fit() {
    let sizes = PageSizes::for_max_heap(GIB);
    let positions = |kind, size: u64| size >> sizes.alignment_shift(kind, size);
    let medium = sizes.medium.unwrap();
    let real = (
        MAX_FROM_INDEX,
        positions(PageKind::Small, sizes.small),
        positions(PageKind::Medium, medium),
    );
    assert_eq!(from_index_limits(), real);
}

#[test]
fn to_offsets_fit() {
    let answer = largest_to_offset();
    let f: ForwardingEntries = ForwardingEntries::new(2);
    assert_eq!(
        f.insert(1, Offset::from_raw(answer)),
        Ok(Offset::from_raw(answer)),
        "{answer:#x} is refused"
    );
    let next = std::panic::catch_unwind(|| {
        let g: ForwardingEntries = ForwardingEntries::new(2);
        g.insert(1, Offset::from_raw(answer + 8)).is_ok()
    });
    assert!(
        next.is_err(),
        "{:#x} is stored too: the answer is not the largest",
        answer + 8
    );
}
