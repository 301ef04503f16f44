//! gc-core's safe functions hold up against any argument, in release builds too (these tests
//! run with `--release`): a call that would reach past what its value owns is refused — an
//! error or a panic — instead of unmapping, remapping or freeing memory another value owns.
//! Before these checks, `Views::unmap` with an offset of a second reservation replaced that
//! reservation's mapped granule with `PROT_NONE` (checked by a `debug_assert!` only), and the
//! other heap's next read was a SIGSEGV. The same holds for the granule map (an entry never
//! names a freed value), a page's bump pointer (never leaves the page), physical memory (in
//! use is never freed twice or uncommitted) and forwarding entries (an entry that does not
//! fit is refused, not truncated into another object's forwarding).

use gc_core::granule_map::GranuleMap;
use gc_core::physical::{PhysRange, PhysicalMemory};
use gc_core::virtual_memory::Views;
use gc_core::{AddressLayout, Backing, Offset, View, GRANULE_SIZE};
use std::sync::Arc;

const MIB: u64 = 1 << 20;

/// Two reservations in one process, the second with one granule mapped and written.
struct TwoHeaps {
    layout: AddressLayout,
    a: Views,
    b: Views,
    _phys: PhysicalMemory,
    at: Offset,
}

fn two_heaps() -> TwoHeaps {
    let layout = AddressLayout::new(42);
    let a = Views::reserve(layout, 64 * MIB, None).unwrap();
    let b = Views::reserve(layout, 64 * MIB, None).unwrap();
    assert_ne!(a.start(), b.start());
    let phys = PhysicalMemory::new(8 * MIB, &Backing::Memfd, gc_core::HugePages::Off).unwrap();
    let range = PhysRange {
        offset: 0,
        len: GRANULE_SIZE,
    };
    phys.commit(range).unwrap();
    let at = b.start() + 4 * MIB;
    b.map(at, phys.fd(), &[range]).unwrap();
    write(layout, at, 0xB0B);
    TwoHeaps {
        layout,
        a,
        b,
        _phys: phys,
        at,
    }
}

fn write(layout: AddressLayout, at: Offset, v: u64) {
    // SAFETY: `at` is in a granule mapped read-write in every view (`two_heaps`), and the
    // tests check it still is before each call.
    unsafe { std::ptr::write_volatile(layout.address(at, View::Remapped).as_ptr::<u64>(), v) }
}

fn read(layout: AddressLayout, at: Offset) -> u64 {
    // SAFETY: as in `write`.
    unsafe { std::ptr::read_volatile(layout.address(at, View::Remapped).as_ptr::<u64>()) }
}

#[test]
fn views_refuse_to_unmap_another_reservation() {
    let h = two_heaps();
    let refused = h.a.unmap(h.at, GRANULE_SIZE);
    assert!(
        refused.is_err(),
        "unmapped a granule of another reservation"
    );
    assert_eq!(
        read(h.layout, h.at),
        0xB0B,
        "the other heap's granule was touched"
    );
    // Ranges that start inside but end outside, wrap around, or are not granule aligned.
    let last = h.a.start() + (h.a.size() - GRANULE_SIZE);
    for (at, len) in [
        (last, 2 * GRANULE_SIZE),
        (h.a.start(), u64::MAX - GRANULE_SIZE + 1),
        (h.a.start() + 4096, GRANULE_SIZE),
        (h.a.start(), 4096),
        (h.a.start(), 0),
    ] {
        assert!(h.a.unmap(at, len).is_err(), "unmap({at:?}, {len:#x})");
    }
    // Its own range: fine.
    h.a.unmap(h.a.start(), GRANULE_SIZE).unwrap();
    h.b.unmap(h.at, GRANULE_SIZE).unwrap();
}

#[test]
fn views_refuse_to_map_over_another_reservation() {
    let h = two_heaps();
    let phys = PhysicalMemory::new(8 * MIB, &Backing::Memfd, gc_core::HugePages::Off).unwrap();
    let r = PhysRange {
        offset: 0,
        len: GRANULE_SIZE,
    };
    phys.commit(r).unwrap();
    assert!(h.a.map(h.at, phys.fd(), &[r]).is_err());
    assert_eq!(
        read(h.layout, h.at),
        0xB0B,
        "the other heap's granule was replaced"
    );
    // A run of ranges that leaves the reservation part way.
    let last = h.a.start() + (h.a.size() - GRANULE_SIZE);
    assert!(h.a.map(last, phys.fd(), &[r, r]).is_err());
    let unaligned = PhysRange {
        offset: 0,
        len: 4096,
    };
    assert!(h.a.map(h.a.start(), phys.fd(), &[unaligned]).is_err());
    h.a.map(h.a.start(), phys.fd(), &[r]).unwrap();
    write(h.layout, h.a.start(), 7);
    assert_eq!(read(h.layout, h.a.start()), 7);
}

/// A granule map's entries each own their value's reference: entering over a taken granule,
/// or removing part of a value's granules, leaks nothing and frees nothing still entered.
/// (Debug builds assert against such calls, to find the caller's bug.)
#[test]
#[cfg_attr(debug_assertions, ignore = "debug builds assert against this misuse")]
fn granule_map_entries_never_dangle() {
    let g = GRANULE_SIZE;
    let o = Offset::from_raw;
    let map: GranuleMap<u64> = GranuleMap::new(o(0), 8 * g);
    let a = Arc::new(1u64);
    let b = Arc::new(2u64);
    map.insert(o(0), 3 * g, &a);
    // Over a taken granule, in the middle of `a`.
    map.insert(o(g), g, &b);
    // Part of `a`, then a value that is not the one entered.
    map.remove(o(0), g, &a);
    map.remove(o(g), g, &a);
    let guard = gc_core::heap_epoch::pin();
    assert_eq!(
        map.get(o(2 * g), &guard),
        Some(&1),
        "the rest of `a` is still entered"
    );
    drop(guard);
    drop(map);
    // Flush deferred drops.
    for _ in 0..256 {
        gc_core::heap_epoch::pin().flush();
    }
    assert_eq!(Arc::strong_count(&a), 1);
    assert_eq!(Arc::strong_count(&b), 1);
}

/// A page's bump pointer never leaves the page, whatever sizes and offsets its safe
/// functions are given: `Object::init` callers rely on every offset `alloc_*` hands out being
/// inside the page.
#[test]
fn page_bump_pointer_stays_inside_the_page() {
    use gc_core::{Page, PageKind, PageMemory};
    let start = Offset::from_raw(4 * MIB);
    let mem = PageMemory {
        start,
        size: 2 * MIB,
        ranges: vec![],
        populated: Default::default(),
        zeroed: false,
    };
    let p = Page::new(PageKind::Small, mem, 1, 3);
    let a = p.alloc_private(64).unwrap();
    assert_eq!(a, start);
    for size in [u64::MAX, u64::MAX - 3, u64::MAX - 4 * MIB] {
        assert_eq!(p.alloc_private(size), None, "alloc_private({size:#x})");
        assert_eq!(p.alloc_shared(size), None, "alloc_shared({size:#x})");
    }
    assert_eq!(p.top(), start + 64);
    // Undoing a range that is not an allocation inside the page changes nothing.
    let below = Offset::from_raw(start.raw() - 64);
    assert!(!p.undo_alloc(below, 128));
    assert!(!p.undo_alloc(start, u64::MAX));
    assert_eq!(p.top(), start + 64);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        p.set_top_after_compaction(below)
    }));
    assert!(result.is_err(), "a top below the page was accepted");
    assert_eq!(p.top(), start + 64);
    assert!(p.undo_alloc(a, 64));
    assert_eq!(p.top(), start);
}

/// Physical memory a page holds can be neither freed twice (two pages would share it) nor
/// uncommitted (the hole would zero the page's objects).
#[test]
fn physical_memory_in_use_is_neither_freed_twice_nor_uncommitted() {
    let phys = PhysicalMemory::new(8 * MIB, &Backing::Memfd, gc_core::HugePages::Off).unwrap();
    let taken = phys.alloc(2 * GRANULE_SIZE).unwrap();
    assert_eq!(taken.len(), 1);
    phys.commit(taken[0]).unwrap();
    assert!(
        phys.uncommit(taken[0]).is_err(),
        "uncommitted memory in use"
    );
    assert_eq!(phys.committed_bytes(), 2 * GRANULE_SIZE);
    phys.free(&taken);
    let again = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| phys.free(&taken)));
    assert!(again.is_err(), "a double free was accepted");
    assert_eq!(phys.free_bytes(), 8 * MIB);
    assert_eq!(phys.uncommit(taken[0]).unwrap(), 2 * GRANULE_SIZE);
}

#[test]
fn a_forwarding_entry_that_does_not_fit_is_refused() {
    use gc_core::forwarding_entries::MAX_FROM_INDEX;
    use gc_core::ForwardingEntries;
    let f: ForwardingEntries = ForwardingEntries::new(4);
    for (from, to) in [
        (MAX_FROM_INDEX + 1, Offset::from_raw(64)),
        (1, Offset::from_raw(65)),
        (1, Offset::from_raw(1 << 50)),
    ] {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f.insert(from, to)));
        assert!(r.is_err(), "{from} -> {to:?} was stored");
    }
    assert!(f.is_empty());
    assert_eq!(f.insert(1, Offset::from_raw(64)), Ok(Offset::from_raw(64)));
    assert_eq!(f.find(1), Some(Offset::from_raw(64)));
}
