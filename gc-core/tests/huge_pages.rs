//! Huge pages for the heap (`HugePages`): refused with an error that says what to set when the
//! system does not allow them, read from the system as it is (these tests change no setting),
//! and used when it does. The error messages' suggested values are checked on constructed
//! system states, so every case runs on every machine.

use gc_core::huge_pages::{HUGETLB_2M, SHMEM_ENABLED, SHMEM_ENABLED_2M};
use gc_core::{
    HeapError, HugePageSystem, HugePageUse, HugePages, MemoryConfig, PageAllocator, PageKind,
};

const MIB: u64 = 1 << 20;

fn system(shmem: &str, shmem_2m: Option<&str>, nr: u64, free: u64, resv: u64) -> HugePageSystem {
    HugePageSystem {
        shmem_enabled: Some(shmem.into()),
        shmem_enabled_2m: shmem_2m.map(Into::into),
        nr_hugepages: nr,
        free_hugepages: free,
        resv_hugepages: resv,
        default_huge_page_size: 2 * MIB,
    }
}

fn config(huge: HugePages) -> MemoryConfig {
    let mut c = MemoryConfig::new(64 * MIB);
    c.huge_pages = huge;
    c
}

#[test]
fn hugetlb_suggests_the_pool_size_that_leaves_enough_available() {
    // 256 MiB = 128 pages. 100 in the pool, 30 free of which 10 are promised to others: 20
    // available, 108 missing, so the pool must become 208 (the 80 in use and the 10 promised
    // stay theirs).
    let s = system("never", None, 100, 30, 10);
    let e = s.check(HugePages::Hugetlb, 256 * MIB, None).unwrap_err();
    match &e {
        HeapError::HugePagesUnavailable {
            needed,
            available,
            suggested,
            ..
        } => assert_eq!((*needed, *available, *suggested), (128, 20, 208)),
        other => panic!("{other:?}"),
    }
    let msg = e.to_string();
    for w in [
        "sysctl -w vm.nr_hugepages=208",
        "20 available",
        "turn huge pages off",
    ] {
        assert!(msg.contains(w), "{msg:?} should mention {w:?}");
    }
    // An empty pool: the heap's pages exactly.
    let e = system("never", None, 0, 0, 0)
        .check(HugePages::Hugetlb, 4096 * MIB, None)
        .unwrap_err();
    assert!(e.to_string().contains("vm.nr_hugepages=2048"), "{e}");
    // Enough available: accepted, whatever the THP switch says.
    system("never", None, 200, 150, 22)
        .check(HugePages::Hugetlb, 256 * MIB, None)
        .unwrap();
    // A default huge page size other than 2 MiB: vm.nr_hugepages would count the wrong pages,
    // so the 2 MiB pool's own file is named.
    let mut gig = system("never", None, 4, 4, 0);
    gig.default_huge_page_size = 1024 * MIB;
    let e = gig.check(HugePages::Hugetlb, 64 * MIB, None).unwrap_err();
    assert!(
        e.to_string()
            .contains(&format!("echo 32 > {HUGETLB_2M}/nr_hugepages")),
        "{e}"
    );
}

#[test]
fn transparent_is_refused_by_the_switch_that_decides() {
    let refused = |s: HugePageSystem, file: &str, value: &str| {
        let e = s.check(HugePages::Transparent, 64 * MIB, None).unwrap_err();
        assert!(
            matches!(&e, HeapError::TransparentHugePagesRefused { file: f, value: v }
                if *f == file && v == value),
            "{e:?}"
        );
        let msg = e.to_string();
        assert!(msg.contains(&format!("echo advise > {file}")), "{msg}");
        assert!(msg.contains(&format!("echo {value} > {file}")), "{msg}");
    };
    refused(system("never", None, 0, 0, 0), SHMEM_ENABLED, "never");
    refused(
        system("deny", Some("always"), 0, 0, 0),
        SHMEM_ENABLED,
        "deny",
    );
    refused(
        system("never", Some("inherit"), 0, 0, 0),
        SHMEM_ENABLED,
        "never",
    );
    refused(
        system("advise", Some("never"), 0, 0, 0),
        SHMEM_ENABLED_2M,
        "never",
    );
    let mut missing = system("never", None, 0, 0, 0);
    missing.shmem_enabled = None;
    refused(missing, SHMEM_ENABLED, "missing");
    for (top, size) in [
        ("advise", None),
        ("always", Some("inherit")),
        ("within_size", None),
        ("force", None),
        ("never", Some("advise")),
    ] {
        system(top, size, 0, 0, 0)
            .check(HugePages::Transparent, 64 * MIB, None)
            .unwrap_or_else(|e| panic!("{top} {size:?}: {e}"));
    }
    // Off needs nothing.
    let mut none = system("never", None, 0, 0, 0);
    none.shmem_enabled = None;
    none.check(HugePages::Off, 64 * MIB, None).unwrap();
}

#[test]
fn a_backing_directory_must_be_of_the_right_kind() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let ok = system("advise", None, 100, 100, 0);
    if nix_fs_type(&dir) == Some("tmpfs") {
        eprintln!("skipped: the crate's directory is on tmpfs here");
        return;
    }
    for (huge, needs) in [
        (HugePages::Transparent, "tmpfs"),
        (HugePages::Hugetlb, "hugetlbfs"),
    ] {
        let e = ok.check(huge, 64 * MIB, Some(dir.as_path())).unwrap_err();
        assert!(matches!(e, HeapError::HugePagesBacking { .. }), "{e:?}");
        assert!(e.to_string().contains(needs), "{e}");
    }
}

/// The file system of `dir` as `stat -f` names it, for the skip above (None if unknown).
fn nix_fs_type(dir: &std::path::Path) -> Option<&'static str> {
    let mounts = std::fs::read_to_string("/proc/self/mounts").ok()?;
    let dir = dir.to_str()?;
    let (_, fs) = mounts
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (_, mnt, fs) = (f.next()?, f.next()?, f.next()?);
            dir.starts_with(mnt).then_some((mnt.len(), fs))
        })
        .max_by_key(|(n, _)| *n)?;
    Some(if fs == "tmpfs" { "tmpfs" } else { "other" })
}

/// What this system allows now: the setting is refused with the system's own values, or a heap
/// gets it and its memory is mapped on huge pages.
#[test]
fn the_system_as_it_is_refuses_or_serves_each_setting() {
    let sys = HugePageSystem::read();
    for huge in [HugePages::Transparent, HugePages::Hugetlb] {
        match PageAllocator::new(&config(huge)) {
            Err(e) => {
                let expected = sys.check(huge, 64 * MIB, None).unwrap_err();
                assert_eq!(e.to_string(), expected.to_string());
                match huge {
                    HugePages::Transparent => {
                        assert!(e.to_string().contains(SHMEM_ENABLED), "{e}")
                    }
                    _ => assert!(
                        e.to_string().contains("vm.nr_hugepages")
                            || e.to_string().contains(HUGETLB_2M),
                        "{e}"
                    ),
                }
                eprintln!("{huge}: refused here, as the system says: {e}");
            }
            Ok(heap) => {
                sys.check(huge, 64 * MIB, None)
                    .expect("created only when the system allows it");
                let before = HugePageUse::read();
                let page = heap.alloc_page(PageKind::Small, 2 * MIB, 1).unwrap();
                // Touch the page through one view: its memory must be one 2 MiB mapping.
                let start = heap.layout().address(page.start(), gc_core::View::Remapped);
                // SAFETY: the page's 2 MiB are mapped read-write in every view and are ours.
                unsafe { std::ptr::write_bytes(start.as_ptr::<u8>(), 1, 2 * MIB as usize) };
                let after = HugePageUse::read();
                let grew = match huge {
                    HugePages::Hugetlb => after.hugetlb_mapped > before.hugetlb_mapped,
                    _ => after.pmd_mapped > before.pmd_mapped,
                };
                assert!(grew, "{huge}: {before:?} -> {after:?}");
                eprintln!("{huge}: allowed here and used: {before:?} -> {after:?}");
            }
        }
    }
}
