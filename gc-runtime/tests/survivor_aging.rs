//! Aging by copy (`Forwarding::to_age`, ZGC's survivor pages): a minor evacuating a sparse
//! young page below the tenuring threshold copies its survivors to a survivor target page of
//! the next age, which stays young, and the next minor looks at that page as at any young
//! page: it ages it again (by copy if it is sparse) or, at the threshold, promotes its
//! survivors by copy to an old target page.
//!
//! Known objects, verifier on in every pause, tenuring threshold fixed at 2: leaves on a
//! sparse eden page, reachable through a root, a young object and an old holder's remembered
//! slot, one holding a leaf on a dense page (aged in place). The first minor copies them to a
//! survivor-1 page (new addresses, young, counted as aged by copy), the second to a
//! survivor-2 page, the third to an old page; a major after that; contents intact throughout.
//! One planted bug in a child process (the verifier aborts): survivor target pages born old
//! while their copies are made as survivors' (no remembered bit), so the copy of a leaf that
//! points to the dense page's young leaf is an old slot pointing young, unremembered.

mod support;
use gc_runtime::inspect::PageAge;
use gc_runtime::{Heap, HeapConfig, Local, Mode, Scope};
use std::time::Duration;
use support::{dense_page_with_leaf, fill_with_garbage, is_leaf, last_cycle, leaf, young_garbage};

const MIB: u64 = 1 << 20;

/// 256 MiB: the scenario allocates under a tenth of it, so the director starts no cycle of
/// its own between the test's (a major would make every page old).
fn config() -> HeapConfig {
    HeapConfig::new(256 * MIB)
        .mode(Mode::Concurrent)
        .verify(true)
        .track_generations(true)
        .continuous(false)
        .tenuring_threshold(2)
}

fn survivors_aged_by_copy(plant: bool) {
    let heap = Heap::new(config()).unwrap();
    if plant {
        heap.survivor_targets_old_for_tests();
    }
    let mut m = heap.attach("t").unwrap();
    m.scope(|s| {
        let holder = s.alloc(2, 2, 0).unwrap();
        s.collect("promote");
        assert_eq!(s.is_old(holder), Some(true));
        // Leaf 6 and a dense page of live ballast around it: the heap's first young small
        // page, about two thirds live (above the evacuation limit, a quarter).
        let (_dense, f) = dense_page_with_leaf(s, 6);
        // The leaves on a later page, with nothing else live on it. Leaf 1 (holding leaf 4)
        // only through the old holder's slot 0 (remembered); leaf 2 through a root; leaf 5
        // through the young leaf 3, itself a root, which leaf 5 passes on to leaf 6.
        fill_with_garbage(s);
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
            s.store(c, 0, Some(f));
            s.store(y, 0, Some(c));
        });
        young_garbage(s);
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
            let f = c.load(0).expect("leaf 5 keeps leaf 6");
            assert!(is_leaf(f, 6), "{what}: leaf 6 through leaf 5");
        };
        // Where a root's leaf is now, and its page's age (loading the root heals it).
        let at = |s: &mut Scope<'_>, l: Local<'_>| (s.address_of(l), s.page_age(l));

        let (b0, _) = at(s, b);
        let (f0, _) = at(s, f);
        s.collect_minor().unwrap();
        let first = last_cycle(&heap);
        assert!(first.minor);
        assert_eq!(first.tenuring_threshold, Some(2), "{first:?}");
        assert!(
            first.objects_aged_by_copy >= 5,
            "the five leaves of the eden page were aged by copy: {first:?}"
        );
        assert!(
            first.pages_aged >= 1,
            "leaf 6's page was aged in place: {first:?}"
        );
        let (b1, age1) = at(s, b);
        assert_ne!(b1, b0, "leaf 2 was copied");
        if !plant {
            assert_eq!(age1, Some(PageAge::Survivor(1)), "leaf 2 is a survivor");
            assert_eq!(s.page_age(y), Some(PageAge::Survivor(1)));
        }
        assert_eq!(at(s, f), (f0, Some(PageAge::Survivor(1))), "aged in place");
        assert!(
            heap.remembered_slots().unwrap() >= 1,
            "the holder's slot still points young"
        );
        check(s, "after the first minor");

        // The survivor page, born in the first minor, is looked at by the second: sparse, of
        // age 1 below the threshold, so its leaves are copied to a survivor-2 page.
        s.collect_minor().unwrap();
        let second = last_cycle(&heap);
        assert!(second.minor);
        assert!(
            second.objects_aged_by_copy >= 5,
            "the leaves were aged by copy again: {second:?}"
        );
        assert!(
            second.young_live_by_age.len() >= 2 && second.young_live_by_age[1] > 0,
            "the census counts survivor-1 bytes: {second:?}"
        );
        let (b2, age2) = at(s, b);
        assert_ne!(b2, b1, "leaf 2 was copied again");
        assert_eq!(age2, Some(PageAge::Survivor(2)));
        assert_eq!(at(s, f), (f0, Some(PageAge::Survivor(2))), "aged in place");
        check(s, "after the second minor");

        // At the threshold: promoted, the leaves by copy, leaf 6's page in place.
        s.collect_minor().unwrap();
        let third = last_cycle(&heap);
        assert!(
            third.objects_evacuated_by_minor >= 5 && third.pages_promoted >= 1,
            "{third:?}"
        );
        let (b3, age3) = at(s, b);
        assert_ne!(b3, b2, "leaf 2 was promoted by copy");
        assert_eq!(age3, Some(PageAge::Old));
        assert_eq!(s.page_age(y), Some(PageAge::Old));
        assert_eq!(at(s, f), (f0, Some(PageAge::Old)), "promoted in place");
        check(s, "after the third minor");

        s.collect_minor().unwrap();
        check(s, "after a fourth minor");
        s.collect("major");
        assert!(!last_cycle(&heap).minor);
        check(s, "after a major");
    });
}

#[test]
fn survivors_are_aged_by_copy_then_promoted_at_the_threshold() {
    survivors_aged_by_copy(false);
}

/// A major makes a survivor page old, as every page: its leaves are old after it, and stay
/// intact through the minors that follow.
#[test]
fn a_major_makes_a_survivor_page_old() {
    let heap = Heap::new(config()).unwrap();
    let mut m = heap.attach("t").unwrap();
    m.scope(|s| {
        fill_with_garbage(s);
        let b = leaf(s, 2);
        young_garbage(s);
        s.collect_minor().unwrap();
        assert!(last_cycle(&heap).objects_aged_by_copy >= 1);
        assert_eq!(s.page_age(b), Some(PageAge::Survivor(1)));
        s.collect("major");
        assert_eq!(s.page_age(b), Some(PageAge::Old));
        let at = s.address_of(b);
        s.collect_minor().unwrap();
        s.collect_minor().unwrap();
        assert_eq!(
            s.address_of(b),
            at,
            "an old object does not move in a minor"
        );
        assert!(is_leaf(s.get(b), 2));
    });
}

#[test]
fn the_default_tenuring_threshold_is_adaptive_and_recorded() {
    assert_eq!(HeapConfig::new(64 * MIB).tenuring_threshold, None);
    let heap = Heap::new(config().adaptive_tenuring()).unwrap();
    let mut m = heap.attach("t").unwrap();
    m.scope(|s| {
        young_garbage(s);
        s.collect_minor().unwrap();
        assert_eq!(
            last_cycle(&heap).tenuring_threshold,
            Some(1),
            "the first guess"
        );
        s.collect("major");
        assert_eq!(
            last_cycle(&heap).tenuring_threshold,
            None,
            "a major has none"
        );
    });
}

const CHILD_ENV: &str = "ZRS_SURVIVOR_CHILD";

#[test]
fn survivor_copies_on_a_page_born_old_are_caught() {
    if std::env::var(CHILD_ENV).is_ok() {
        return survivors_aged_by_copy(true);
    }
    let at = support::planted_bug_caught(
        "survivor_copies_on_a_page_born_old_are_caught",
        CHILD_ENV,
        Duration::from_secs(120),
        "GC verification failed",
    );
    eprintln!("{at}");
}
