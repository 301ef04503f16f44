//! Every way `MemoryConfig` validation and `PageAllocator::new` can refuse a heap: each returns its
//! own `HeapError` variant (never a panic) whose message names what to change. Covers sizes
//! (zero, unaligned, beyond 16 TiB, above physical memory, initial above max), the backing
//! directory (missing, a file, not writable), a taken address range
//! (and that a failed reservation leaves nothing behind), and `vm.max_map_count` (huge pages:
//! `huge_pages.rs`).

use gc_core::config::physical_memory_bytes;
use gc_core::virtual_memory::check_map_count;
use gc_core::{
    Backing, HeapError, MemoryConfig, Offset, PageAllocator, Reservation, View, GRANULE_SIZE,
};

const MIB: u64 = 1 << 20;
const TIB: u64 = 1 << 40;

/// The error `PageAllocator::new` returns for `cfg` (which must fail).
fn new_err(cfg: &MemoryConfig) -> HeapError {
    match PageAllocator::new(cfg) {
        Ok(h) => panic!("expected an error, got a heap at {:x?}", h.reservation()),
        Err(e) => e,
    }
}

fn assert_mentions(e: &HeapError, words: &[&str]) {
    let msg = e.to_string();
    for w in words {
        assert!(msg.contains(w), "message {msg:?} should mention {w:?}");
    }
}

/// Validation and creation agree on a size error.
fn size_error(cfg: &MemoryConfig) -> HeapError {
    let v = cfg.validate().expect_err("validation must fail");
    let n = new_err(cfg);
    assert_eq!(
        std::mem::discriminant(&v),
        std::mem::discriminant(&n),
        "{v} vs {n}"
    );
    n
}

#[test]
fn zero_heap() {
    let e = size_error(&MemoryConfig::new(0));
    assert!(matches!(e, HeapError::ZeroHeap), "{e:?}");
    assert_mentions(&e, &["max heap", "2 MiB", "256M"]);
}

#[test]
fn unaligned_heap() {
    let e = size_error(&MemoryConfig::new(3 * MIB));
    assert!(
        matches!(e, HeapError::UnalignedHeap(x) if x == 3 * MIB),
        "{e:?}"
    );
    // Names the granule and the rounded size to use instead.
    assert_mentions(
        &e,
        &["multiple of the 2 MiB granule", &(4 * MIB).to_string()],
    );
    let e = size_error(&MemoryConfig::new(64 * MIB + 4096));
    assert!(matches!(e, HeapError::UnalignedHeap(_)), "{e:?}");
    assert_mentions(&e, &[&(66 * MIB).to_string()]);
}

#[test]
fn heap_beyond_8_tib() {
    let e = size_error(&MemoryConfig::new(8 * TIB + GRANULE_SIZE));
    assert!(
        matches!(e, HeapError::HeapTooLarge(x) if x == 8 * TIB + GRANULE_SIZE),
        "{e:?}"
    );
    assert_mentions(&e, &["43 offset bits", "8T or less"]);
    let e = size_error(&MemoryConfig::new(1 << 62));
    assert!(matches!(e, HeapError::HeapTooLarge(_)), "{e:?}");
    // Exactly 8 TiB fits the layout; on this machine it fails only for lack of memory.
    let e = size_error(&MemoryConfig::new(8 * TIB));
    assert!(
        matches!(e, HeapError::HeapAbovePhysicalMemory { .. }),
        "{e:?}"
    );
}

#[test]
fn heap_above_physical_memory() {
    let physical = physical_memory_bytes().expect("sysconf reports the memory");
    let max = (physical / GRANULE_SIZE + 1) * GRANULE_SIZE;
    let e = size_error(&MemoryConfig::new(max));
    match e {
        HeapError::HeapAbovePhysicalMemory {
            max: m,
            physical: p,
        } => {
            assert_eq!((m, p), (max, physical))
        }
        ref other => panic!("{other:?}"),
    }
    assert_mentions(&e, &[&physical.to_string(), "choose a smaller heap"]);
}

#[test]
fn initial_above_max() {
    let mut cfg = MemoryConfig::new(64 * MIB);
    cfg.initial_heap = 66 * MIB;
    let e = size_error(&cfg);
    assert!(
        matches!(e, HeapError::InitialAboveMax { initial, max } if initial == 66 * MIB && max == 64 * MIB),
        "{e:?}"
    );
    assert_mentions(&e, &["initial heap", "lower it"]);
    // Equal is fine.
    cfg.initial_heap = 64 * MIB;
    let h = PageAllocator::new(&cfg).unwrap();
    assert_eq!(h.physical().committed_bytes(), 64 * MIB);
}

fn with_backing(backing: Backing) -> MemoryConfig {
    let mut cfg = MemoryConfig::new(16 * MIB);
    cfg.backing = backing;
    cfg
}

#[test]
fn backing_directory_missing() {
    let dir = "/nonexistent/zgc-rs-no-such-dir";
    let e = new_err(&with_backing(Backing::Directory(dir.into())));
    assert!(
        matches!(&e, HeapError::BackingDirectoryMissing(p) if p.to_str() == Some(dir)),
        "{e:?}"
    );
    assert_mentions(&e, &[dir, "does not exist", "create it"]);
}

#[test]
fn backing_path_is_a_file() {
    let file = std::env::temp_dir().join(format!("zgc-rs-errors-file.{}", std::process::id()));
    std::fs::write(&file, b"not a directory").unwrap();
    let e = new_err(&with_backing(Backing::Directory(file.clone())));
    std::fs::remove_file(&file).unwrap();
    assert!(
        matches!(&e, HeapError::BackingNotADirectory(p) if *p == file),
        "{e:?}"
    );
    assert_mentions(
        &e,
        &[
            file.to_str().unwrap(),
            "not a directory",
            "name a directory",
        ],
    );
}

#[test]
fn backing_directory_not_writable() {
    // We run as root, so permissions do not stop us; sysfs refuses new files to everyone.
    let dir = "/sys";
    let e = new_err(&with_backing(Backing::Directory(dir.into())));
    match &e {
        HeapError::BackingDirectoryNotWritable { path, source } => {
            assert_eq!(path.to_str(), Some(dir));
            assert!(source.raw_os_error().is_some(), "{source}");
        }
        other => panic!("{other:?}"),
    }
    assert_mentions(&e, &["/sys", "make it writable or name another directory"]);
}

#[test]
fn directory_backing_works_where_writable() {
    let dir = std::env::temp_dir();
    let h = PageAllocator::new(&with_backing(Backing::Directory(dir.clone()))).unwrap();
    let p = h.alloc_page(gc_core::PageKind::Small, 2 * MIB, 1).unwrap();
    let a = h.layout().address(p.start(), View::Marked0);
    // SAFETY: the page is mapped and ours.
    unsafe { a.as_ptr::<u64>().write(5) };
    // The file was unlinked at once: nothing of ours is left in the directory.
    let prefix = format!("zgc-rs-heap.{}.", std::process::id());
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

fn at(offset: u64) -> MemoryConfig {
    let mut c = MemoryConfig::new(64 * MIB);
    c.reserve_at = Some(offset);
    c
}

#[test]
fn address_range_taken_by_another_mapping() {
    // A heap of 64 MiB reserves 1 GiB per view; put it far from heaps other tests place.
    let offset = 3 * TIB;
    let cfg = at(offset);
    let layout = cfg.validate().unwrap();
    let reserve = 64 * MIB * 16;
    // Something else sits in the middle of where the Marked1 view would go.
    let blocker = layout.view_base(View::Marked1).raw() + offset + 256 * MIB;
    let blocking = Reservation::at(blocker, 2 * MIB).expect("the blocker range is free");
    let e = new_err(&cfg);
    assert!(matches!(e, HeapError::AddressRangeTaken { .. }), "{e:?}");
    assert_mentions(&e, &["already taken", "choose another reserve offset"]);
    // The views reserved before the failure were given back: the whole range is free again.
    for v in [View::Marked0, View::Remapped] {
        let a = layout.view_base(v).raw() + offset;
        assert!(
            Reservation::at(a, reserve).is_some(),
            "{v:?} view range left reserved"
        );
    }
    // Without the blocker the same request succeeds, exactly there.
    drop(blocking);
    let h = PageAllocator::new(&cfg).unwrap();
    assert_eq!(h.reservation(), (Offset::from_raw(offset), reserve));
}

#[test]
fn address_range_taken_by_another_heap() {
    let offset = 3 * TIB + 64 * (1 << 30);
    let first = PageAllocator::new(&at(offset)).unwrap();
    let e = new_err(&at(offset));
    assert!(matches!(e, HeapError::AddressRangeTaken { .. }), "{e:?}");
    assert_mentions(&e, &["already taken", "let the heap pick one"]);
    // Without a fixed offset the second heap goes elsewhere.
    let second = PageAllocator::new(&MemoryConfig::new(64 * MIB)).unwrap();
    assert_ne!(second.reservation().0, first.reservation().0);
    // Dropping the first heap frees its range.
    drop(first);
    let third = PageAllocator::new(&at(offset)).unwrap();
    assert_eq!(third.reservation().0, Offset::from_raw(offset));
}

#[test]
fn reserve_offset_must_be_aligned_and_in_range() {
    let e = new_err(&at(4096));
    assert!(matches!(e, HeapError::AddressRangeTaken { .. }), "{e:?}");
    assert_mentions(&e, &["granule aligned"]);
    // The 1 GiB reservation would run past the 4 TiB offset space of S = 42.
    let e = new_err(&at(4 * TIB - 512 * MIB));
    assert!(matches!(e, HeapError::AddressRangeTaken { .. }), "{e:?}");
    assert_mentions(&e, &["granule aligned", "below 0x40000000000"]);
}

#[test]
fn max_map_count_too_low() {
    let mut cfg = MemoryConfig::new(64 * MIB);
    cfg.max_map_count = Some(100);
    let e = new_err(&cfg);
    match &e {
        HeapError::MapCountTooLow {
            limit,
            granules,
            needed,
            ..
        } => {
            assert_eq!(*limit, 100);
            assert_eq!(*granules, 32);
            assert!(*needed >= 4 * 32, "4 views x 32 granules at least");
        }
        other => panic!("{other:?}"),
    }
    assert_mentions(
        &e,
        &[
            "vm.max_map_count",
            "sysctl -w vm.max_map_count=",
            "smaller heap",
        ],
    );

    // The budget check itself, at its boundary: 4 x 32 granules + reservations.
    let needed = 4 * 32 + 6;
    assert!(check_map_count(64 * MIB, 1000, 1000 - needed).is_ok());
    let e = check_map_count(64 * MIB, 1000, 1000 - needed + 1).unwrap_err();
    match e {
        HeapError::MapCountTooLow { suggested, .. } => assert!(suggested >= 1001),
        other => panic!("{other:?}"),
    }
    // A generous limit lets the heap be created.
    cfg.max_map_count = Some(10_000_000);
    PageAllocator::new(&cfg).unwrap();
}
