//! Multi-mapping: bytes written through one view of the heap read back, unchanged, through the
//! other three, at every granule of several pages whose physical file offsets differ (and, after
//! freeing and reallocating, are scattered and out of order). Also checks that distinct granules
//! never alias each other, by reading the backing file itself with `pread`, and that both
//! address layouts (S = 42, 43) alias correctly.

use gc_core::physical::{PhysRange, PhysicalMemory};
use gc_core::virtual_memory::Views;
use gc_core::{
    Address, AddressLayout, Backing, MemoryConfig, Offset, Page, PageAllocator, PageKind, View,
    GRANULE_SIZE,
};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

const MIB: u64 = 1 << 20;

/// Offsets inside a granule to probe: both ends, around a 4 KiB page boundary, the middle.
const PROBES: [u64; 6] = [0, 8, 4095, 4096, MIB + 17, GRANULE_SIZE - 8];

fn write_u64(addr: Address, v: u64) {
    // SAFETY: callers pass addresses inside a granule that is mapped read-write in this view.
    unsafe { std::ptr::write_volatile(addr.as_ptr::<u64>(), v) }
}

fn read_u64(addr: Address) -> u64 {
    // SAFETY: as in `write_u64`.
    unsafe { std::ptr::read_volatile(addr.as_ptr::<u64>()) }
}

fn write_u8(addr: Address, v: u8) {
    // SAFETY: as in `write_u64`.
    unsafe { std::ptr::write_volatile(addr.as_ptr::<u8>(), v) }
}

fn read_u8(addr: Address) -> u8 {
    // SAFETY: as in `write_u64`.
    unsafe { std::ptr::read_volatile(addr.as_ptr::<u8>()) }
}

/// The granules of `[start, start + len)`.
fn granules(start: Offset, len: u64) -> impl Iterator<Item = Offset> {
    (0..len)
        .step_by(GRANULE_SIZE as usize)
        .map(move |d| start + d)
}

/// A tag unique to (granule offset, probe, writer view).
fn tag(granule: Offset, probe: u64, view: usize) -> u64 {
    0xA11A_0000_0000_0000 ^ (granule.raw() << 8) ^ (probe << 2) ^ view as u64
}

/// For every granule of `[start, start + len)` and every probe offset: write through each view
/// in turn and read the value back through all four.
fn check_aliasing(layout: AddressLayout, start: Offset, len: u64) {
    for g in granules(start, len) {
        for p in PROBES {
            let off = g + p;
            for (wi, wv) in View::ALL.iter().enumerate() {
                let v = tag(g, p, wi);
                write_u64(layout.address(off, *wv), v);
                for rv in View::ALL {
                    assert_eq!(
                        read_u64(layout.address(off, rv)),
                        v,
                        "offset {off:?}: written through {wv:?}, read through {rv:?}"
                    );
                }
            }
        }
        // Single unaligned bytes too, through a different view each time.
        let off = g + 12345;
        for (i, wv) in View::ALL.iter().enumerate() {
            write_u8(layout.address(off, *wv), 0x40 + i as u8);
            for rv in View::ALL {
                assert_eq!(read_u8(layout.address(off, rv)), 0x40 + i as u8);
            }
        }
    }
}

/// Read 8 bytes of the backing file at `file_offset`.
fn pread_u64(fd: i32, file_offset: u64) -> u64 {
    let mut b = [0u8; 8];
    // SAFETY: `b` is a valid 8-byte buffer; `fd` is the heap's open backing file.
    let n = unsafe { libc::pread(fd, b.as_mut_ptr().cast(), 8, file_offset as libc::off_t) };
    assert_eq!(n, 8, "pread: {}", std::io::Error::last_os_error());
    u64::from_le_bytes(b)
}

/// Every virtual granule of `phys` (as [`physical_offsets`] returns them) is backed by its own
/// granule of the file.
fn assert_distinct_granules(phys: &[(Offset, u64)]) {
    let distinct: HashSet<u64> = phys.iter().map(|&(_, f)| f).collect();
    assert_eq!(
        distinct.len(),
        phys.len(),
        "two granules share memory: {phys:x?}"
    );
}

/// Stamp each granule of `pages` (first word, through the Marked0 view) with a unique marker
/// and find it in the backing file: returns, per virtual granule, its physical file offset.
fn physical_offsets(heap: &PageAllocator, pages: &[Arc<Page>]) -> Vec<(Offset, u64)> {
    let layout = heap.layout();
    let mut virt = Vec::new();
    for p in pages {
        for g in granules(p.start(), p.size()) {
            write_u64(
                layout.address(g, View::Marked0),
                0x5EED_0000_0000_0000 | g.raw(),
            );
            virt.push(g);
        }
    }
    let mut by_marker = HashMap::new();
    for f in (0..heap.capacity()).step_by(GRANULE_SIZE as usize) {
        by_marker.insert(pread_u64(heap.physical().fd(), f), f);
    }
    virt.iter()
        .map(|&g| {
            let f = *by_marker
                .get(&(0x5EED_0000_0000_0000 | g.raw()))
                .unwrap_or_else(|| panic!("granule at offset {g:?} not found in the file"));
            (g, f)
        })
        .collect()
}

#[test]
fn every_granule_aliases_across_the_four_views() {
    let heap = PageAllocator::new(&MemoryConfig::new(64 * MIB)).unwrap();
    let layout = heap.layout();
    let pages: Vec<_> = (0..4)
        .map(|i| heap.alloc_page(PageKind::Small, 2 * MIB, i).unwrap())
        .chain(std::iter::once(
            heap.alloc_page(PageKind::Large, 6 * MIB, 9).unwrap(),
        ))
        .collect();
    for p in &pages {
        check_aliasing(layout, p.start(), p.size());
    }
    let phys = physical_offsets(&heap, &pages);
    assert_distinct_granules(&phys);
    assert_eq!(phys.len(), 4 + 3);
}

#[test]
fn scattered_physical_ranges_alias_after_free_and_reuse() {
    // A 16 MiB heap: fill the file with small pages, free every other one, flush the page cache
    // so their file ranges are free again, then allocate one 6 MiB page: no contiguous 6 MiB is
    // free, so the page is built from three scattered file ranges.
    let heap = PageAllocator::new(&MemoryConfig::new(16 * MIB)).unwrap();
    let layout = heap.layout();
    let small: Vec<_> = (0..8)
        .map(|_| heap.alloc_page(PageKind::Small, 2 * MIB, 1).unwrap())
        .collect();
    assert!(heap.alloc_page(PageKind::Small, 2 * MIB, 1).is_err());
    let mut kept = Vec::new();
    for (i, p) in small.into_iter().enumerate() {
        if i % 2 == 1 {
            // SAFETY: nothing reads or writes the page's objects after it is freed.
            unsafe { heap.free_page(&p) };
        } else {
            kept.push(p);
        }
    }
    heap.uncommit(0).unwrap();
    let large = heap.alloc_page(PageKind::Large, 6 * MIB, 2).unwrap();
    check_aliasing(layout, large.start(), large.size());

    let mut all = kept.clone();
    all.push(large.clone());
    for p in &kept {
        check_aliasing(layout, p.start(), p.size());
    }
    let phys = physical_offsets(&heap, &all);
    assert_distinct_granules(&phys);
    // The large page's three granules are virtually contiguous but physically not.
    let large_phys: Vec<u64> = phys
        .iter()
        .filter(|&&(g, _)| large.contains(g))
        .map(|&(_, f)| f)
        .collect();
    assert_eq!(large_phys.len(), 3);
    assert!(
        large_phys.windows(2).any(|w| w[1] != w[0] + GRANULE_SIZE),
        "expected a scattered large page, got file offsets {large_phys:x?}"
    );

    // Reallocating freed memory through the page cache keeps the aliasing too.
    // SAFETY: nothing reads or writes the page's objects after it is freed.
    unsafe { heap.free_page(&large) };
    let again = heap.alloc_page(PageKind::Large, 6 * MIB, 3).unwrap();
    assert_eq!(
        again.start(),
        large.start(),
        "expected the cached memory back"
    );
    check_aliasing(layout, again.start(), again.size());
}

#[test]
fn both_layouts_alias() {
    for s in [42, 43] {
        let layout = AddressLayout::new(s);
        let phys = PhysicalMemory::new(8 * MIB, &Backing::Memfd, gc_core::HugePages::Off).unwrap();
        let views = Views::reserve(layout, 64 * MIB, None).unwrap();
        // Map the file's granules out of order: virtual granule i -> file granule 3 - i.
        let ranges: Vec<PhysRange> = (0..4)
            .rev()
            .map(|i| PhysRange {
                offset: i * GRANULE_SIZE,
                len: GRANULE_SIZE,
            })
            .collect();
        for r in &ranges {
            phys.commit(*r).unwrap();
        }
        let at = views.start() + 8 * MIB;
        views.map(at, phys.fd(), &ranges).unwrap();
        check_aliasing(layout, at, 8 * MIB);
        // Virtual granule 0 is file granule 3.
        write_u64(layout.address(at, View::Remapped), 0xFEED_0000 + s as u64);
        assert_eq!(
            pread_u64(phys.fd(), 3 * GRANULE_SIZE),
            0xFEED_0000 + s as u64
        );
        views.unmap(at, 8 * MIB).unwrap();
    }
}
