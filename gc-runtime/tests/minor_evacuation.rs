//! Minors that evacuate sparse young pages (`HeapConfig::young_evacuation_live_percent`):
//! the survivors of a young page under the limit are copied, at tenuring threshold 0, to old
//! target pages (promotion by copy) through the minor's own forwarding table, kept beside the
//! last major's until the next cycle's marking has remapped every pointer of the minor's
//! color.
//!
//! Known objects, verifier on in every pause: young leaves on a sparse page, reachable through
//! a root, a young object and an old holder's remembered slot, evacuated by a minor (their
//! addresses change, the minor's relocation set holds their page, the page is freed), their
//! contents intact through a second minor and a major after it. One planted bug in a child
//! process (the verifier aborts): the copies' slots of the minor's color left unremembered,
//! where the slot leads to an object the same minor promoted in place.

mod support;
use gc_runtime::{Heap, HeapConfig, Mode, Scope};
use std::time::Duration;
use support::{dense_page_with_leaf, fill_with_garbage, is_leaf, last_cycle, leaf, young_garbage};

const MIB: u64 = 1 << 20;

/// 256 MiB: the scenarios allocate under a tenth of it, so the director's warm-up rule starts
/// no cycle of its own between the test's (a major would make every page old). Tenuring
/// threshold 0: every evacuated survivor is promoted by copy (aging by copy, below the
/// threshold, is `survivor_aging.rs`'s).
fn config() -> HeapConfig {
    HeapConfig::new(256 * MIB)
        .mode(Mode::Concurrent)
        .verify(true)
        .track_generations(true)
        .continuous(false)
        .tenuring_threshold(0)
}

#[test]
fn a_minor_evacuates_a_sparse_young_page_and_its_survivors_stay_intact() {
    let heap = Heap::new(config()).unwrap();
    assert_eq!(HeapConfig::new(64 * MIB).young_evacuation_live_percent, 25);
    let mut m = heap.attach("t").unwrap();
    m.scope(|s| {
        let holder = s.alloc(2, 2, 0).unwrap();
        s.collect("promote");
        assert_eq!(s.is_old(holder), Some(true));
        // Leaf 1 (holding leaf 4) only through the old holder's slot 0 (remembered); leaf 2
        // through a root; leaf 5 through the young leaf 3, itself a root.
        s.scope(|s| {
            let a = leaf(s, 1);
            let d = leaf(s, 4);
            s.store(a, 0, Some(d));
            s.store(holder, 0, Some(a));
        });
        let b = leaf(s, 2);
        let y = leaf(s, 3);
        s.scope(|s| {
            let c = leaf(s, 5);
            s.store(y, 0, Some(c));
        });
        young_garbage(s);
        assert_eq!(heap.remembered_slots(), Some(1));
        let before = s.address_of(b);
        let check = |s: &mut Scope<'_>, what: &str| {
            let a = s.get(holder).load(0).expect("the holder keeps leaf 1");
            assert!(is_leaf(a, 1), "{what}: leaf 1 through the old holder");
            assert!(
                is_leaf(a.load(0).expect("leaf 1 keeps leaf 4"), 4),
                "{what}: leaf 4 through leaf 1"
            );
            assert!(is_leaf(s.get(b), 2), "{what}: leaf 2 through a root");
            assert!(is_leaf(s.get(y), 3), "{what}: leaf 3 through a root");
            let c = s.get(y).load(0).expect("leaf 3 keeps leaf 5");
            assert!(is_leaf(c, 5), "{what}: leaf 5 through a young object");
        };

        s.collect_minor().unwrap();
        let minor = last_cycle(&heap);
        assert!(minor.minor);
        assert!(
            minor.objects_evacuated_by_minor >= 5,
            "the five leaves were copied out: {minor:?}"
        );
        assert!(
            minor.pages_relocated >= 1,
            "an evacuated page was freed: {minor:?}"
        );
        // The leaves' page is in the minor's relocation set, with an entry for leaf 2.
        let set = heap.minor_relocation_set();
        let page = set
            .iter()
            .find(|p| p.page <= before && before < p.page + p.size)
            .unwrap_or_else(|| panic!("leaf 2's page {before:?} is not in {set:?}"));
        let entry = page
            .entries
            .iter()
            .find(|e| e.from == before)
            .expect("leaf 2 has its forwarding entry");
        assert_ne!(entry.to, before, "leaf 2 was copied, not left in place");
        // The root still carries the minor's color until loaded; the load forwards it.
        let after = s.address_of(b);
        assert_eq!(after, entry.to, "the root leads to the copy");
        assert_eq!(
            s.is_old(b),
            Some(true),
            "promoted by copy: on an old target"
        );
        check(s, "after the evacuating minor");

        s.collect_minor().unwrap();
        assert!(last_cycle(&heap).minor);
        assert!(
            heap.minor_relocation_set()
                .iter()
                .all(|p| !(p.page <= before && before < p.page + p.size)),
            "the second minor dropped the first one's table"
        );
        check(s, "after a second minor");
        assert_eq!(
            s.address_of(b),
            after,
            "an old object does not move in a minor"
        );

        s.collect("major");
        assert!(!last_cycle(&heap).minor);
        assert!(heap.minor_relocation_set().is_empty(), "a major drops it");
        check(s, "after a major");
        // And once more after a minor whose stale pointers a major, not a minor, remaps.
        s.scope(|s| {
            let a = leaf(s, 11);
            s.store(holder, 1, Some(a));
        });
        young_garbage(s);
        s.collect_minor().unwrap();
        assert!(last_cycle(&heap).objects_evacuated_by_minor >= 1);
        s.collect("major");
        check(s, "after a minor and a major");
        let a = s.get(holder).load(1).expect("the holder keeps leaf 11");
        assert!(is_leaf(a, 11));
    });
}

/// The scenario of the planted bug: leaf 1 on a sparse page (evacuated) holds leaf 2 on a
/// dense page (promoted in place, threshold 0). The copy of leaf 1 lies on an old target and
/// its slot carries the minor's color while pointing old: only the color rule of
/// `Generations::remember_moved` remembers it, and the next minor heals it through the
/// remembered set. Without it, the slot keeps the color, which the verifier finds at the next
/// minor's Mark End.
fn copy_pointing_to_a_promoted_object(plant: bool) {
    let heap = Heap::new(config()).unwrap();
    if plant {
        heap.skip_moved_color_for_tests();
    }
    let mut m = heap.attach("t").unwrap();
    m.scope(|s| {
        // Leaf 2 and a dense page of live ballast around it: the heap's first small page,
        // about two thirds live (well above the evacuation limit, a quarter).
        let (_dense, c) = dense_page_with_leaf(s, 2);
        // Leaf 1 on a later page, with nothing else live on it.
        fill_with_garbage(s);
        let a = leaf(s, 1);
        s.store(a, 0, Some(c));
        young_garbage(s);
        let c_at = s.address_of(c);
        let a_at = s.address_of(a);
        s.collect_minor().unwrap();
        let minor = last_cycle(&heap);
        assert!(
            minor.pages_promoted >= 1,
            "leaf 2's page was promoted: {minor:?}"
        );
        assert!(minor.objects_evacuated_by_minor >= 1, "{minor:?}");
        assert_eq!(s.address_of(c), c_at, "leaf 2 promoted in place");
        assert_ne!(s.address_of(a), a_at, "leaf 1 evacuated");
        // Its slot is not loaded before the next minor (a load would heal it): only the
        // remembered set leads that minor to it.
        s.collect_minor().unwrap();
        s.collect_minor().unwrap();
        assert!(is_leaf(s.get(a).load(0).unwrap(), 2));
        s.collect("major");
        assert!(is_leaf(s.get(a).load(0).unwrap(), 2));
    });
}

#[test]
fn a_copy_pointing_to_an_object_promoted_in_place_keeps_it() {
    copy_pointing_to_a_promoted_object(false);
}

const CHILD_ENV: &str = "ZRS_EVACUATION_CHILD";

#[test]
fn minor_colored_slots_of_copies_left_unremembered_are_caught() {
    if std::env::var(CHILD_ENV).is_ok() {
        return copy_pointing_to_a_promoted_object(true);
    }
    let at = support::planted_bug_caught(
        "minor_colored_slots_of_copies_left_unremembered_are_caught",
        CHILD_ENV,
        Duration::from_secs(120),
        "GC verification failed at MarkEnd",
    );
    eprintln!("{at}");
}
