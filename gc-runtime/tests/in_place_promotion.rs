//! In-place aging and promotion in minor cycles (`HeapConfig::tenuring_threshold`): a young
//! page with survivors is aged (kept young, one minor older) or, once its age reaches the
//! threshold, promoted in place (made old; nothing moves), and the promoted objects' slots
//! that point young or carry the minor's mark color are remembered after Pause Relocate
//! Start.
//!
//! Known objects, verifier on in every pause: a survivor's page promoted; a young pointer
//! stored into it during the minor's marking (the cycle held between phases by a `Stepper`,
//! so the store lands while the page is still young, its barrier remembering nothing)
//! surviving the next minor through the remembered slot; a reference to another promoted
//! object, which the minor's marking colored, healed by the next minor; a page aged below the
//! threshold staying young; an object dead at the minor cleared by it although its page is
//! promoted, and one that dies after its promotion kept by minors and reclaimed by the next
//! major. Two planted bugs (each in a child process, since the verifier aborts): the promoted
//! fields not remembered at all, and not those of the minor's color.

mod support;
use gc_runtime::{Heap, HeapConfig, Mode, Step, Value};
use std::time::Duration;

const MIB: u64 = 1 << 20;

fn config(threshold: u8) -> HeapConfig {
    HeapConfig::new(64 * MIB)
        .mode(Mode::Concurrent)
        .verify(true)
        .track_generations(true)
        .tenuring_threshold(threshold)
        // The pages here hold a few objects each: with the minors' evacuation on they would
        // be evacuated (tests/minor_evacuation.rs), not aged or promoted in place.
        .young_evacuation_live_percent(0)
        .continuous(false)
}

#[test]
fn a_tenuring_threshold_above_the_oldest_age_is_refused() {
    let e = Heap::new(config(15)).err().expect("refused").to_string();
    assert!(e.contains("tenuring_threshold") && e.contains("14"), "{e}");
    assert!(Heap::new(config(14)).is_ok());
    assert_eq!(
        HeapConfig::new(64 * MIB).tenuring_threshold,
        None,
        "adaptive"
    );
    let e = Heap::new(config(1).young_evacuation_live_percent(101))
        .err()
        .expect("refused")
        .to_string();
    assert!(
        e.contains("young_evacuation_live_percent") && e.contains("100"),
        "{e}"
    );
}

/// The scenario of the promotion test, with an optional planted bug (`skip-all`,
/// `skip-color`): it must then not return (the verifier ends the process).
fn promote_with_a_store_during_marking(planted: Option<&str>) {
    let heap = Heap::new(config(0)).unwrap();
    match planted {
        Some("skip-all") => heap.skip_promoted_remembering_for_tests(),
        Some("skip-color") => heap.skip_promoted_color_for_tests(),
        _ => {}
    }
    let mut m = heap.attach("t").unwrap();
    // Before the minor, all young: a survivor `x` (two reference slots, one value slot), a
    // neighbour `z` it references (so the minor's marking colors that slot), an object
    // `dies_now` dead at the minor and `dies_later`, live at it and dropped after.
    let (x, dies_now, dies_later, later_weak) = m.scope(|s| {
        let x = s.alloc_with_values(5, 2, 1, 8).unwrap();
        s.get(x).write_u64(0, 0x5eed);
        let z = s.alloc(6, 0, 8).unwrap();
        s.get(z).write_u64(0, 0x2222);
        s.store(x, 1, Some(z));
        let dead = s.alloc(7, 0, 8).unwrap();
        let later = s.alloc(8, 0, 8).unwrap();
        assert_eq!(s.is_old(x), Some(false));
        (s.global(x), s.weak(dead), s.global(later), s.weak(later))
    });
    let stepper = heap.stepper().unwrap();
    assert_eq!(
        stepper.start_minor().unwrap(),
        Step::Before(gc_runtime::GcPhase::ConcurrentMarkRoots)
    );
    while stepper.step().unwrap()
        != Step::Before(gc_runtime::GcPhase::ConcurrentSelectRelocationSet)
    {}
    // Marking is over; `x`'s page is still young. A young object allocated now (on a page
    // of this cycle, which the minor neither ages nor promotes) stored into `x`: the
    // holder is young, so the barrier remembers nothing.
    m.scope(|s| {
        let xl = s.root(x.get(s));
        let y = s.alloc(9, 0, 8).unwrap();
        s.get(y).write_u64(0, 0x7777);
        let v = s.alloc(10, 0, 8).unwrap();
        s.get(v).write_u64(0, 0x8888);
        s.store(xl, 0, Some(y));
        s.store_value(xl, 0, Value::Ref(v));
        assert_eq!(s.is_old(xl), Some(false));
    });
    let before = heap.remembered_set_stats().unwrap();
    stepper.finish_cycle().unwrap();
    drop(stepper);
    let minor = heap.stats().cycles.last().cloned().unwrap();
    assert!(minor.minor, "{minor:?}");
    assert!(minor.pages_promoted >= 1, "{minor:?}");
    // `x`'s slots 0 (young `y`), 1 (`z`, promoted, in the minor's color) and its value slot
    // (young `v`).
    let after = heap.remembered_set_stats().unwrap();
    let remembered = after.promoted_slots_remembered - before.promoted_slots_remembered;
    eprintln!("promotion: {minor:?}\n{after:?}");
    if planted.is_none() {
        assert!(minor.promoted_slots_remembered >= 3, "{minor:?}");
        assert_eq!(remembered, minor.promoted_slots_remembered);
    }
    m.scope(|s| {
        let xl = s.root(x.get(s));
        assert_eq!(s.is_old(xl), Some(true), "x's page promoted in place");
        let y = s.root(s.get(xl).load(0).expect("y"));
        assert_eq!(s.is_old(y), Some(false), "y was allocated during the minor");
        assert!(dies_now.get(s).is_none(), "dead at the minor: cleared");
        drop(dies_later);
    });
    // The next minor: `y` and `v` reachable only through `x`, an old object now, so only
    // through its remembered slots; `z`'s slot healed.
    m.scope(|s| s.collect_minor().unwrap());
    m.scope(|s| {
        let xo = x.get(s);
        assert_eq!(xo.read_u64(0), 0x5eed);
        let y = xo.load(0).expect("y lost");
        assert_eq!((y.shape(), y.read_u64(0)), (9, 0x7777), "y corrupted");
        let Value::Ref(v) = xo.load_value(0) else {
            panic!("v lost")
        };
        assert_eq!((v.shape(), v.read_u64(0)), (10, 0x8888), "v corrupted");
        let z = xo.load(1).expect("z lost");
        assert_eq!((z.shape(), z.read_u64(0)), (6, 0x2222), "z corrupted");
        assert!(
            later_weak.get(s).is_some(),
            "a minor keeps an old (promoted) object, dead or not"
        );
    });
    // A third minor, then a major: the object that died after its promotion is old garbage,
    // reclaimed by the major only.
    m.scope(|s| s.collect_minor().unwrap());
    m.scope(|s| assert!(later_weak.get(s).is_some()));
    m.scope(|s| s.collect("major"));
    m.scope(|s| {
        assert!(later_weak.get(s).is_none(), "the major reclaims it");
        let xo = x.get(s);
        assert_eq!(xo.load(0).unwrap().read_u64(0), 0x7777);
        assert_eq!(xo.load(1).unwrap().read_u64(0), 0x2222);
    });
    assert!(planted.is_none(), "the planted {planted:?} went unnoticed");
}

#[test]
fn a_promoted_object_keeps_what_it_received_during_the_minor() {
    promote_with_a_store_during_marking(None);
}

/// Aging below the threshold keeps the page young; it is promoted at the minor where its
/// age reaches the threshold.
#[test]
fn a_page_ages_until_its_age_reaches_the_threshold() {
    let heap = Heap::new(config(2)).unwrap();
    let mut m = heap.attach("t").unwrap();
    let x = m.scope(|s| {
        let x = s.alloc(5, 0, 8).unwrap();
        s.global(x)
    });
    let mut seen = Vec::new();
    for _ in 0..3 {
        m.scope(|s| s.collect_minor().unwrap());
        let r = heap.stats().cycles.last().cloned().unwrap();
        let old = m.scope(|s| {
            let l = s.root(x.get(s));
            s.is_old(l).unwrap()
        });
        seen.push((old, r.pages_aged, r.pages_promoted));
    }
    // Eden (0) and survivor 1 are below 2: aged; survivor 2 reaches it.
    assert!(!seen[0].0 && seen[0].1 >= 1, "{seen:?}");
    assert!(!seen[1].0 && seen[1].1 >= 1, "{seen:?}");
    assert!(seen[2].0 && seen[2].2 >= 1, "{seen:?}");
    let r = heap.remembered_set_stats().unwrap();
    assert!(r.pages_aged >= 2 && r.pages_promoted_in_place >= 1, "{r:?}");
}

const CHILD_ENV: &str = "ZRS_PROMOTION_CHILD";

fn planted_child(test: &str, plant: &str, expect: &str) {
    if std::env::var(CHILD_ENV).is_ok() {
        return promote_with_a_store_during_marking(Some(plant));
    }
    let (status, stderr) = support::run_child(test, CHILD_ENV, plant, Duration::from_secs(120));
    assert!(
        !status.success(),
        "the planted {plant} went unnoticed\n{stderr}"
    );
    assert!(
        stderr.contains(expect),
        "the child failed, but not with {expect:?}: {status}\n{stderr}"
    );
}

/// Planted: the promoted objects' slots are not remembered. `x`'s slot to the young `y`
/// (stored while `x` was young) is in no remembered set: the verifier at the next Pause
/// Mark Start finds an old slot pointing young without its bit.
#[test]
fn unremembered_promoted_fields_are_caught() {
    planted_child(
        "unremembered_promoted_fields_are_caught",
        "skip-all",
        "is not in the remembered set",
    );
}

/// Planted: the promoted objects' slots of the minor's color that point old (`x`'s slot to
/// `z`, colored by the minor's marking) are not remembered, so the next minor never visits
/// them: its Mark End finds a pointer to an old object in a minor's color.
#[test]
fn minor_colored_promoted_fields_left_unhealed_are_caught() {
    planted_child(
        "minor_colored_promoted_fields_left_unhealed_are_caught",
        "skip-color",
        "GC verification failed at MarkEnd",
    );
}
