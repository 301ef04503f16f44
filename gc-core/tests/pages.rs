//! Pages and objects: allocation of every page size class (small, medium when the heap is large
//! enough, large rounded up to 2 MiB), the page table, page-cache reuse (same memory back, no
//! new commit; a small page's live map reused for the next small page once the page is
//! dropped, showing none of its old marks), max-heap exhaustion as `AllocError::OutOfMemory` (and room again after a free,
//! also under concurrent allocators), bump allocation of objects with `Object::init`, walking a
//! page with `Page::for_each_object`, object copies, and the object size limits.

use gc_core::object::MAX_REFS;
use gc_core::page::SMALL_ALIGNMENT_SHIFT;
use gc_core::{
    object_size, Address, AllocError, ColoredPtr, MemoryConfig, Object, ObjectHeader, Offset, Page,
    PageAllocator, PageKind, PageSizes, View, GRANULE_SIZE, HEADER_SIZE,
};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Barrier};

const MIB: u64 = 1 << 20;

fn heap(max: u64) -> PageAllocator {
    PageAllocator::new(&MemoryConfig::new(max)).unwrap()
}

#[test]
fn every_size_class_allocates() {
    let h = heap(1 << 30);
    let s = *h.sizes();
    assert_eq!(s.small, 2 * MIB);
    assert_eq!(s.small_object_max, 256 << 10);
    assert_eq!(s.medium, Some(32 * MIB));
    assert_eq!(s.medium_object_max, 4 * MIB);
    assert_eq!(s.object_max, 1 << 30);

    let (start, size) = h.reservation();
    let cases = [
        (64u64, PageKind::Small, 2 * MIB),
        (256 << 10, PageKind::Small, 2 * MIB),
        ((256 << 10) + 8, PageKind::Medium, 32 * MIB),
        (4 * MIB, PageKind::Medium, 32 * MIB),
        (4 * MIB + 8, PageKind::Large, 6 * MIB),
        (5 * MIB + 1, PageKind::Large, 6 * MIB),
        (6 * MIB, PageKind::Large, 6 * MIB),
        (100 * MIB + 1, PageKind::Large, 102 * MIB),
    ];
    let mut used = 0;
    let mut pages = Vec::new();
    for (i, (obj, kind, page_size)) in cases.into_iter().enumerate() {
        assert_eq!(s.kind_for(obj), kind, "object of {obj} bytes");
        assert_eq!(s.page_size(kind, obj), page_size, "object of {obj} bytes");
        let p = h.alloc_page(kind, page_size, 10 + i as u64).unwrap();
        assert_eq!(p.kind(), kind);
        assert_eq!(p.size(), page_size);
        assert_eq!(p.seqnum(), 10 + i as u64);
        assert_eq!(p.start().raw() % GRANULE_SIZE, 0);
        assert!(p.start() >= start && p.end() <= start + size);
        assert_eq!(p.top(), p.start());
        used += page_size;
        assert_eq!(h.used(), used);
        // The object fits the page.
        let off = p.alloc_shared(obj).expect("the object fits its page");
        assert_eq!(off, p.start());
        pages.push(p);
    }
    assert_eq!(h.pages_allocated(), cases.len() as u64);
    // Pages never overlap.
    let mut spans: Vec<(Offset, Offset)> = pages.iter().map(|p| (p.start(), p.end())).collect();
    spans.sort();
    assert!(spans.windows(2).all(|w| w[0].1 <= w[1].0), "{spans:x?}");
    // Alignment: 8 bytes on small pages, size/8192 on medium, the page on large.
    assert_eq!(pages[0].alignment_shift(), SMALL_ALIGNMENT_SHIFT);
    assert_eq!(pages[2].alignment_shift(), 12);
    assert_eq!(pages[4].alignment_shift(), (6 * MIB).trailing_zeros());

    // The page table finds each page from any offset inside it, and forgets freed pages.
    for p in &pages {
        let last = p.start() + (p.size() - 8);
        for off in [p.start(), p.start() + p.size() / 2, last] {
            let found = h.page_table().get_arc(off).expect("page in the table");
            assert!(Arc::ptr_eq(&found, p));
            let guard = gc_core::heap_epoch::pin();
            assert_eq!(h.page_table().get(off, &guard).unwrap().start(), p.start());
        }
    }
    for p in &pages {
        // SAFETY: nothing reads or writes the page's objects after it is freed.
        unsafe { h.free_page(p) };
        assert!(h.page_table().get_arc(p.start()).is_none());
        assert!(h.page_table().get_arc(p.start() + (p.size() - 8)).is_none());
    }
    assert_eq!(h.used(), 0);
}

#[test]
fn medium_pages_scale_with_the_heap() {
    // As ZGC: 3.125% of the heap rounded down to a power of two, at most 32 MiB, and none when
    // that is not larger than a small page.
    for (heap_size, medium) in [
        (32 * MIB, None),
        (64 * MIB, None),
        (128 * MIB, Some(4 * MIB)),
        (256 * MIB, Some(8 * MIB)),
        (512 * MIB, Some(16 * MIB)),
        (1 << 30, Some(32 * MIB)),
        (20 << 30, Some(32 * MIB)),
    ] {
        let s = PageSizes::for_max_heap(heap_size);
        assert_eq!(s.medium, medium, "heap {heap_size}");
        assert_eq!(s.medium_object_max, medium.map_or(256 << 10, |m| m / 8));
        if medium.is_none() {
            assert_eq!(s.kind_for((256 << 10) + 8), PageKind::Large);
        }
    }
    // A real medium page of a 256 MiB heap.
    let h = heap(256 * MIB);
    let p = h.alloc_page(PageKind::Medium, 8 * MIB, 1).unwrap();
    assert_eq!(p.alignment_shift(), 10);
    let a = p.alloc_shared(100).unwrap();
    let b = p.alloc_shared(100).unwrap();
    assert_eq!(b - a, 1024, "medium objects are aligned to size/8192");
    assert_eq!(p.index_of(b), 1);
    assert_eq!(p.offset_of(1), b);
}

#[test]
fn page_cache_reuses_memory() {
    let h = heap(64 * MIB);
    let p = h.alloc_page(PageKind::Small, 2 * MIB, 1).unwrap();
    let start = p.start();
    let addr = h.layout().address(start, View::Remapped).as_ptr::<u64>();
    // SAFETY: the page is mapped and ours.
    unsafe { addr.write(0xCAFE) };
    let committed = h.physical().committed_bytes();
    // SAFETY: nothing reads or writes the page's objects after it is freed.
    unsafe { h.free_page(&p) };
    assert_eq!(h.used(), 0);
    assert_eq!(h.usage().cached, 2 * MIB);
    assert_eq!(h.physical().committed_bytes(), committed);

    let q = h.alloc_page(PageKind::Small, 2 * MIB, 2).unwrap();
    assert_eq!(
        q.start(),
        start,
        "a cached page of the same size comes back"
    );
    assert_eq!(
        q.seqnum(),
        2,
        "a reused page is a new page of the new cycle"
    );
    assert_eq!(q.top(), q.start());
    assert_eq!(h.usage().cached, 0);
    assert_eq!(h.physical().committed_bytes(), committed, "no new commit");
    // Same memory: the old contents are still there (no poisoning by default).
    // SAFETY: mapped and ours.
    assert_eq!(unsafe { addr.read() }, 0xCAFE);

    // With poisoning on, freed memory is overwritten so stale reads show up.
    h.set_poison(true);
    // SAFETY: nothing reads or writes the page's objects after it is freed.
    unsafe { h.free_page(&q) };
    let r = h.alloc_page(PageKind::Small, 2 * MIB, 3).unwrap();
    assert_eq!(r.start(), start);
    // SAFETY: mapped and ours.
    assert_eq!(unsafe { addr.read() }, 0xDBDB_DBDB_DBDB_DBDB);

    // A cached page of another size is flushed when the file is needed for a new size.
    let h = heap(16 * MIB);
    let smalls: Vec<_> = (0..8)
        .map(|_| h.alloc_page(PageKind::Small, 2 * MIB, 1).unwrap())
        .collect();
    for p in &smalls {
        // SAFETY: nothing reads or writes the page's objects after it is freed.
        unsafe { h.free_page(p) };
    }
    assert_eq!(h.usage().cached, 16 * MIB);
    let big = h.alloc_page(PageKind::Large, 16 * MIB, 2).unwrap();
    assert_eq!(big.size(), 16 * MIB);
    assert_eq!(h.usage().cached, 0);
    assert_eq!(h.physical().committed_bytes(), 16 * MIB);
}

/// A dropped small page's live map goes to the next small page, which sees none of the old
/// page's marks or counts in any cycle — the cycle they were made in included (the new page
/// is born in it) — until it is marked, and then only its own marks.
#[test]
fn a_reused_live_map_shows_no_stale_marks() {
    let h = heap(64 * MIB);
    let seq = 5;
    let old = h.alloc_page(PageKind::Small, 2 * MIB, seq).unwrap();
    let last = old.live_map().slots() - 1;
    for i in [0, 1, 40, last] {
        old.live_map().mark(seq, i, i != 1, 16);
    }
    old.live_map().add_live(seq, 1, 64);
    assert!(old.live_map().is_marked(seq, last));
    let created = h.live_map_pool().created();
    // SAFETY: nothing reads or writes the page's objects after it is freed.
    unsafe { h.free_page(&old) };
    drop(old);
    // The page table's reference goes once no epoch guard can still see it.
    let mut tries = 0;
    while h.live_map_pool().pooled_bytes() == 0 {
        tries += 1;
        assert!(tries < 100_000, "the freed page was never dropped");
        gc_core::heap_epoch::pin().flush();
    }
    let new = h.alloc_page(PageKind::Small, 2 * MIB, seq).unwrap();
    assert_eq!(h.live_map_pool().reused(), 1, "the new page reuses the map");
    assert_eq!(h.live_map_pool().created(), created, "no map allocated");
    let map = new.live_map();
    for s in [seq - 1, seq, seq + 1] {
        for i in [0, 1, 40, last] {
            assert!(!map.is_marked(s, i), "stale mark {i} seen in cycle {s}");
            assert!(!map.is_strongly_marked(s, i));
        }
        assert_eq!((map.live_objects(s), map.live_bytes(s)), (0, 0));
        map.for_each_marked(s, |i| panic!("stale mark {i} listed in cycle {s}"));
    }
    for s in [seq, seq + 1] {
        assert!(
            map.mark_strong(s, 7),
            "first mark of position 7 in cycle {s}"
        );
        let mut seen = vec![];
        map.for_each_marked(s, |i| seen.push(i));
        assert_eq!(seen, vec![7], "only the new page's mark in cycle {s}");
        assert_eq!(map.live_objects(s), 0);
    }
}

fn assert_oom(r: Result<Arc<Page>, AllocError>, requested: u64, capacity: u64) {
    match r {
        Err(AllocError::OutOfMemory {
            requested: rq,
            capacity: c,
            ..
        }) => {
            assert_eq!((rq, c), (requested, capacity));
        }
        Err(e) => panic!("expected OutOfMemory, got {e}"),
        Ok(p) => panic!("expected OutOfMemory, got {p:?}"),
    }
}

#[test]
fn max_heap_exhaustion_is_an_error_and_freeing_makes_room() {
    let h = heap(16 * MIB);
    let pages: Vec<_> = (0..8)
        .map(|_| h.alloc_page(PageKind::Small, 2 * MIB, 1).unwrap())
        .collect();
    assert_eq!(h.used(), 16 * MIB);
    assert_oom(h.alloc_page(PageKind::Small, 2 * MIB, 1), 2 * MIB, 16 * MIB);
    assert_oom(h.alloc_page(PageKind::Large, 4 * MIB, 1), 4 * MIB, 16 * MIB);
    let msg = h
        .alloc_page(PageKind::Small, 2 * MIB, 1)
        .unwrap_err()
        .to_string();
    assert!(msg.contains("raise the max heap"), "{msg}");
    assert_eq!(h.used(), 16 * MIB, "a failed allocation reserves nothing");

    // Free two pages that are not neighbours: a 4 MiB large page fits again (from scattered
    // file ranges, after flushing the cache).
    // SAFETY: nothing reads or writes the page's objects after it is freed.
    unsafe { h.free_page(&pages[1]) };
    // SAFETY: nothing reads or writes the page's objects after it is freed.
    unsafe { h.free_page(&pages[5]) };
    let big = h.alloc_page(PageKind::Large, 4 * MIB, 2).unwrap();
    assert_eq!(h.used(), 16 * MIB);
    assert_oom(h.alloc_page(PageKind::Small, 2 * MIB, 1), 2 * MIB, 16 * MIB);
    // SAFETY: nothing reads or writes the page's objects after it is freed.
    unsafe { h.free_page(&big) };
    h.alloc_page(PageKind::Small, 2 * MIB, 3).unwrap();
    h.alloc_page(PageKind::Small, 2 * MIB, 3).unwrap();
    assert_oom(h.alloc_page(PageKind::Small, 2 * MIB, 1), 2 * MIB, 16 * MIB);

    // A page larger than the whole heap is an error, not a panic.
    let h = heap(16 * MIB);
    assert_oom(
        h.alloc_page(PageKind::Large, 18 * MIB, 1),
        18 * MIB,
        16 * MIB,
    );
    assert_eq!(h.used(), 0);
}

#[test]
fn concurrent_allocators_never_overshoot_the_max_heap() {
    let h = Arc::new(heap(64 * MIB));
    let threads = 4;
    let barrier = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (h, barrier) = (h.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                let mut mine = Vec::new();
                loop {
                    match h.alloc_page(PageKind::Small, 2 * MIB, t as u64) {
                        Ok(p) => {
                            assert!(h.used() <= h.capacity());
                            mine.push(p);
                        }
                        Err(AllocError::OutOfMemory { .. }) => break,
                        Err(e) => panic!("{e}"),
                    }
                }
                mine
            })
        })
        .collect();
    let pages: Vec<Arc<Page>> = handles
        .into_iter()
        .flat_map(|j| j.join().unwrap())
        .collect();
    assert_eq!(pages.len(), 32);
    assert_eq!(h.used(), 64 * MIB);
    let mut starts: Vec<Offset> = pages.iter().map(|p| p.start()).collect();
    starts.sort();
    starts.dedup();
    assert_eq!(starts.len(), 32, "two threads got the same page");
}

/// The objects of the bump-allocation test: (shape, refs, raw bytes).
fn shapes() -> Vec<(u32, u32, u64)> {
    (0..2000u32)
        .map(|i| (i, i % 7, (i as u64 * 13) % 300))
        .collect()
}

#[test]
fn bump_allocated_objects_are_walked_in_order() {
    let h = heap(64 * MIB);
    let l = h.layout();
    let page = h.alloc_page(PageKind::Small, 2 * MIB, 1).unwrap();
    let mut objs = Vec::new();
    for (shape, n_refs, n_bytes) in shapes() {
        let size = object_size(n_refs as u64, n_bytes).unwrap();
        let off = page.alloc_private(size).unwrap();
        assert_eq!(off.raw() % 8, 0);
        let header = ObjectHeader {
            shape,
            n_refs,
            n_bytes,
            n_values: 0,
        };
        // Built through the Marked1 view, walked below through the Remapped one.
        // SAFETY: `off..off + size` was just bump-allocated on a mapped page.
        let o = unsafe { Object::init(l.address(off, View::Marked1), header) };
        assert_eq!(o.header(), header);
        assert_eq!(o.size(), size);
        if n_bytes >= 8 {
            o.write_u64(0, shape as u64 * 3);
        }
        for (i, s) in o.ref_slots().iter().enumerate() {
            assert!(s.load(Ordering::Relaxed).is_null(), "slots start null");
            s.store(
                ColoredPtr::from_raw(l.with_color(off, gc_core::Color::REMAPPED).raw() + i as u64),
                Ordering::Relaxed,
            );
        }
        objs.push((off, header));
    }
    let used_expected: u64 = objs.iter().map(|&(_, hd)| hd.size()).sum();
    assert_eq!(page.used(), used_expected);

    // Walk through the Remapped view: the same objects, in allocation order, with their
    // contents.
    let mut walked = Vec::new();
    // SAFETY: the page is an allocated page of `h` and nobody allocates on it now.
    unsafe {
        page.for_each_object(l, |o| {
            assert_eq!(
                l.address(l.address_offset(o.addr()), View::Remapped),
                o.addr()
            );
            walked.push((l.address_offset(o.addr()), o.header()));
            if o.n_bytes() >= 8 {
                assert_eq!(o.read_u64(0), o.shape() as u64 * 3);
            }
            for (i, s) in o.ref_slots().iter().enumerate() {
                assert_eq!(
                    s.load(Ordering::Relaxed).raw(),
                    l.with_color(l.address_offset(o.addr()), gc_core::Color::REMAPPED)
                        .raw()
                        + i as u64
                );
            }
        })
    };
    assert_eq!(walked, objs);

    // A full page refuses further allocation and does not move its top.
    let top = page.top();
    let rest = page.end() - top;
    assert!(page.alloc_private(rest + 8).is_none());
    assert!(page.alloc_shared(rest + 8).is_none());
    assert_eq!(page.top(), top);
    assert_eq!(page.alloc_private(rest), Some(top));
    assert!(page.alloc_private(8).is_none());
}

#[test]
fn shared_bump_allocation_hands_out_disjoint_ranges() {
    let h = Arc::new(heap(256 * MIB));
    let page = h.alloc_page(PageKind::Medium, 8 * MIB, 1).unwrap();
    let threads = 4;
    let barrier = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (page, barrier) = (page.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                let mut got = Vec::new();
                while let Some(off) = page.alloc_shared(64 + 8 * t as u64) {
                    got.push(off);
                }
                got
            })
        })
        .collect();
    let mut all: Vec<Offset> = handles
        .into_iter()
        .flat_map(|j| j.join().unwrap())
        .collect();
    all.sort();
    let n = all.len();
    all.dedup();
    assert_eq!(all.len(), n, "two threads got the same object");
    // Every object takes one 1 KiB position; the page is full.
    assert_eq!(n as u64, 8 * MIB / 1024);
    assert_eq!(page.top(), page.end());
}

#[test]
fn objects_copy_whole() {
    let h = heap(64 * MIB);
    let l = h.layout();
    let from = h.alloc_page(PageKind::Small, 2 * MIB, 1).unwrap();
    let to = h.alloc_page(PageKind::Small, 2 * MIB, 2).unwrap();
    let header = ObjectHeader {
        shape: 42,
        n_refs: 3,
        n_bytes: 1000,
        n_values: 0,
    };
    let a = from.alloc_private(header.size()).unwrap();
    // SAFETY: freshly allocated, mapped.
    let o = unsafe { Object::init(l.address(a, View::Marked1), header) };
    let p = l.good(a, gc_core::GoodColor::Marked1);
    o.ref_slot(2).store(p, Ordering::Relaxed);
    let data: Vec<u8> = (0..1000).map(|i| (i * 7) as u8).collect();
    o.write_bytes(0, &data);
    let b = to.alloc_private(o.size()).unwrap();
    // SAFETY: `b` is freshly allocated on another page, mapped; nobody writes `o`.
    let c = unsafe { o.copy_to(l.address(b, View::Remapped)) };
    assert_eq!(c.header(), header);
    assert_eq!(c.addr(), l.address(b, View::Remapped));
    // SAFETY: `b` now holds the initialized copy on a mapped page of `h`, kept to the end.
    assert_eq!(unsafe { Object::at(l, b) }, c);
    assert_eq!(c.ref_slot(2).load(Ordering::Relaxed), p);
    assert!(c.ref_slot(0).load(Ordering::Relaxed).is_null());
    let mut out = vec![0u8; 1000];
    c.read_bytes(0, &mut out);
    assert_eq!(out, data);
}

#[test]
#[should_panic(expected = "out of range")]
fn slot_index_is_checked() {
    let mut buf = vec![0u64; 8];
    let header = ObjectHeader {
        shape: 1,
        n_refs: 2,
        n_bytes: 0,
        n_values: 0,
    };
    // SAFETY: 64 bytes of owned memory for a 32-byte object.
    let o = unsafe { Object::init(Address::from_ptr(buf.as_mut_ptr()), header) };
    let _ = o.ref_slot(2);
}

#[test]
#[should_panic(expected = "out of range")]
fn raw_byte_range_is_checked() {
    let mut buf = vec![0u64; 8];
    let header = ObjectHeader {
        shape: 1,
        n_refs: 0,
        n_bytes: 10,
        n_values: 0,
    };
    // SAFETY: 64 bytes of owned memory for a 32-byte object.
    let o = unsafe { Object::init(Address::from_ptr(buf.as_mut_ptr()), header) };
    o.write_bytes(5, &[0; 6]);
}

#[test]
fn aligned_word_range_is_checked() {
    let mut buf = vec![0u64; 8];
    let header = ObjectHeader {
        shape: 1,
        n_refs: 2,
        n_bytes: 12,
        n_values: 0,
    };
    // SAFETY: 64 bytes of owned memory for a 48-byte object.
    let o = unsafe { Object::init(Address::from_ptr(buf.as_mut_ptr()), header) };
    o.write_u64(0, 7);
    assert_eq!(o.read_u64(0), 7);
    assert_eq!(
        buf[4], 7,
        "the first raw word follows the header and the two slots"
    );
    // The word at 8 would end at 16, past the 12 raw bytes (though inside the padded area).
    let read = std::panic::catch_unwind(|| o.read_u64(8));
    let write = std::panic::catch_unwind(|| o.write_u64(8, 1));
    assert!(read.is_err() && write.is_err());
    assert!(std::panic::catch_unwind(|| o.read_u64(usize::MAX - 7)).is_err());
}

#[test]
fn object_size_limits() {
    assert_eq!(object_size(0, 0), Ok(HEADER_SIZE));
    assert_eq!(object_size(2, 9), Ok(HEADER_SIZE + 16 + 16));
    assert_eq!(object_size(MAX_REFS, 0), Ok(HEADER_SIZE + 8 * MAX_REFS));
    for (n_refs, n_bytes) in [
        (MAX_REFS + 1, 0),
        (u64::MAX, 0),
        (0, u64::MAX),
        (0, u64::MAX - 7),
        (1, u64::MAX - 16),
    ] {
        match object_size(n_refs, n_bytes) {
            Err(AllocError::ObjectSizeOverflow {
                n_refs: r,
                n_bytes: b,
            }) => assert_eq!((r, b), (n_refs, n_bytes)),
            other => panic!("({n_refs}, {n_bytes}): expected overflow, got {other:?}"),
        }
    }
    // The largest object is the heap itself; it would go on one large page of the whole heap.
    let s = PageSizes::for_max_heap(64 * MIB);
    assert_eq!(s.object_max, 64 * MIB);
    assert_eq!(s.kind_for(s.object_max), PageKind::Large);
    assert_eq!(s.page_size(PageKind::Large, s.object_max), 64 * MIB);
    let e = AllocError::ObjectTooLarge {
        size: s.object_max + 8,
        max: s.object_max,
    };
    assert!(e.to_string().contains("raise the max heap"), "{e}");
    // And a heap can really hold an object of that size.
    let h = heap(64 * MIB);
    let p = h
        .alloc_page(
            PageKind::Large,
            s.page_size(PageKind::Large, s.object_max),
            1,
        )
        .unwrap();
    assert_eq!(p.alloc_private(s.object_max), Some(p.start()));
}

#[test]
fn allocation_within_a_limit_keeps_a_reserve() {
    // The runtime keeps the bytes between a limit and the capacity for relocation.
    let h = heap(16 * MIB);
    let mutator: Vec<_> = (0..6)
        .map(|_| {
            h.alloc_page_within(PageKind::Small, 2 * MIB, 1, 12 * MIB)
                .unwrap()
        })
        .collect();
    assert_oom(
        h.alloc_page_within(PageKind::Small, 2 * MIB, 1, 12 * MIB),
        2 * MIB,
        16 * MIB,
    );
    // The reserve is still there for allocations without the limit.
    let reserve: Vec<_> = (0..2)
        .map(|_| h.alloc_page(PageKind::Small, 2 * MIB, 1).unwrap())
        .collect();
    assert_oom(h.alloc_page(PageKind::Small, 2 * MIB, 1), 2 * MIB, 16 * MIB);
    // A limit above the capacity is the capacity.
    // SAFETY: nothing reads or writes the page's objects after it is freed.
    unsafe { h.free_page(&reserve[0]) };
    assert!(h
        .alloc_page_within(PageKind::Small, 2 * MIB, 1, 64 * MIB)
        .is_ok());
    assert_oom(
        h.alloc_page_within(PageKind::Small, 2 * MIB, 1, 64 * MIB),
        2 * MIB,
        16 * MIB,
    );
    assert_eq!(h.used(), 16 * MIB);
    drop(mutator);
}
