//! Loom models of the value-slot barrier (`gc_core::value_barrier`), run on the collector's
//! own `load_value_barrier` and `self_heal_value` over loom's atomic word:
//!
//! - a barrier healing a stale value slot against a mutator storing a number, an immediate,
//!   or a reference to another object: the mutator's store survives every interleaving (a
//!   heal never overwrites it), the slot never ends bad, and the barrier returns either the
//!   good pointer or what the mutator stored — never a bad pointer;
//! - two barriers healing the same stale value slot: one CAS writes, both return the good
//!   pointer, the slot ends good with its tag;
//! - a barrier against a GC thread healing the slot to a weaker (still bad) color of the same
//!   object: the slot ends good;
//! - a heal while a minor cycle marks, against a mutator storing a pointer to an old object
//!   colored Remapped (bad then): the mutator's store survives.

use gc_core::sync::loom::LoomWord;
use gc_core::value::ValueSlot;
use gc_core::{
    load_value_barrier, self_heal_value, AddressLayout, Color, ColoredPtr, GoodColor, Offset,
    SlowPath, ValueWord,
};
use loom::sync::Arc;
use loom::thread;
use std::sync::atomic::Ordering;

type LoomValueSlot = ValueSlot<LoomWord>;

/// Value words of the models: layout S = 42 during relocation (good = Remapped).
struct Words {
    bad_mask: u64,
    /// A stale pointer (Marked1, the last marking's color) to object A, under its tag.
    bad: ValueWord,
    /// A stale pointer to A with the other mark color (what a late marker could heal to).
    weaker: ValueWord,
    /// The good pointer to A, under its tag.
    good: ValueWord,
    /// A good pointer to another object B.
    other: ValueWord,
}

fn words() -> Words {
    let l = AddressLayout::new(42);
    let g = GoodColor::Remapped;
    let a = Offset::from_raw(0x1000);
    Words {
        bad_mask: l.bad_mask(g),
        bad: ValueWord::pointer(l.with_color(a, Color::MARKED1)),
        weaker: ValueWord::pointer(l.with_color(a, Color::MARKED0)),
        good: ValueWord::pointer(l.good(a, g)),
        other: ValueWord::pointer(l.good(Offset::from_raw(0x2000), g)),
    }
}

/// The slow path of the models: the object never moved, so the good pointer is the same
/// offset in the Remapped color.
struct Remap;

impl SlowPath for Remap {
    fn make_good(&self, ptr: ColoredPtr) -> ColoredPtr {
        let l = AddressLayout::new(42);
        l.good(l.offset(ptr), GoodColor::Remapped)
    }
}

fn heal_against_store(store: ValueWord) {
    loom::model(move || {
        let w = words();
        let slot = Arc::new(LoomValueSlot::new(w.bad));
        let healer = {
            let slot = slot.clone();
            thread::spawn(move || load_value_barrier(&*slot, words().bad_mask, &Remap))
        };
        // The mutator's store, modeled as a swap for the reason the reference models give
        // (loom 0.7 lets a plain store slip inside another thread's CAS: tokio-rs/loom#254).
        let mutator = {
            let slot = slot.clone();
            thread::spawn(move || {
                let w = words();
                let replaced = slot.swap(store, Ordering::Release);
                assert!(
                    replaced == w.bad || replaced == w.good,
                    "the store replaced {replaced:?}"
                );
                let again = slot.load(Ordering::Acquire);
                assert_eq!(again, store, "a heal overwrote the mutator's later store");
            })
        };
        mutator.join().unwrap();
        let got = healer.join().unwrap();
        assert!(got == w.good || got == store, "barrier returned {got:?}");
        assert!(
            !got.is_bad_pointer(w.bad_mask),
            "the barrier returned a bad pointer"
        );
        let last = slot.load(Ordering::Acquire);
        assert_eq!(last, store, "the mutator's store must survive");
    });
}

#[test]
fn value_heal_never_overwrites_a_stored_number() {
    heal_against_store(ValueWord::number(2.5));
}

#[test]
fn value_heal_never_overwrites_a_stored_nan() {
    heal_against_store(ValueWord::number(f64::from_bits(0xffff_0000_0000_1000)));
}

#[test]
fn value_heal_never_overwrites_a_stored_immediate() {
    heal_against_store(ValueWord::immediate(1).unwrap());
}

#[test]
fn value_heal_never_overwrites_a_stored_reference() {
    heal_against_store(words().other);
}

#[test]
fn two_value_barriers_write_once_and_agree() {
    loom::model(|| {
        let slot = Arc::new(LoomValueSlot::new(words().bad));
        let hs: Vec<_> = (0..2)
            .map(|_| {
                let slot = slot.clone();
                thread::spawn(move || {
                    let w = words();
                    let v = slot.load(Ordering::Acquire);
                    if !v.is_bad_pointer(w.bad_mask) {
                        return (v, false);
                    }
                    (w.good, self_heal_value(&*slot, v, w.good, w.bad_mask))
                })
            })
            .collect();
        let res: Vec<(ValueWord, bool)> = hs.into_iter().map(|h| h.join().unwrap()).collect();
        let w = words();
        assert!(res.iter().all(|&(got, _)| got == w.good), "{res:?}");
        assert_eq!(
            res.iter().filter(|&&(_, healed)| healed).count(),
            1,
            "exactly one barrier writes the slot"
        );
        assert_eq!(slot.load(Ordering::Acquire), w.good);
    });
}

#[test]
fn a_weaker_concurrent_heal_is_upgraded() {
    loom::model(|| {
        let slot = Arc::new(LoomValueSlot::new(words().bad));
        // A late healer that computed the other mark color (still bad now).
        let late = {
            let slot = slot.clone();
            thread::spawn(move || {
                let w = words();
                let _ = slot.compare_exchange(w.bad, w.weaker, Ordering::AcqRel, Ordering::Acquire);
            })
        };
        let got = load_value_barrier(&*slot, words().bad_mask, &Remap);
        late.join().unwrap();
        let w = words();
        assert_eq!(got, w.good);
        // The late CAS succeeds only from `bad`, so before the barrier's heal: the barrier
        // then loads the weaker word, or its CAS from `bad` fails on it and retries from it.
        assert_eq!(
            slot.load(Ordering::Acquire),
            w.good,
            "the slot ended weaker"
        );
    });
}

/// While a minor cycle marks (good = Marked0), a pointer to an old object is handed out and
/// stored Remapped, which is bad then: a heal of the slot's stale pointer must not take that
/// store for a weaker copy of its own pointer and overwrite it.
#[test]
fn value_heal_leaves_a_minors_remapped_store_to_another_object() {
    loom::model(|| {
        let l = AddressLayout::new(42);
        let bad_mask = l.bad_mask(GoodColor::Marked0);
        let a = Offset::from_raw(0x1000);
        let stale = ValueWord::pointer(l.with_color(a, Color::MARKED1));
        let good = ValueWord::pointer(l.good(a, GoodColor::Marked0));
        let old_b = ValueWord::pointer(l.good(Offset::from_raw(0x2000), GoodColor::Remapped));
        assert!(
            old_b.is_bad_pointer(bad_mask),
            "Remapped is bad while a minor marks"
        );
        let slot = Arc::new(LoomValueSlot::new(stale));
        let healer = {
            let slot = slot.clone();
            thread::spawn(move || {
                let v = slot.load(Ordering::Acquire);
                if v == stale {
                    self_heal_value(&*slot, v, good, bad_mask);
                }
            })
        };
        // A swap, as in `heal_against_store` (loom's plain store and CAS, tokio-rs/loom#254).
        let replaced = slot.swap(old_b, Ordering::Release);
        assert!(
            replaced == stale || replaced == good,
            "replaced {replaced:?}"
        );
        healer.join().unwrap();
        assert_eq!(
            slot.load(Ordering::Acquire),
            old_b,
            "the mutator's store must survive the heal"
        );
    });
}
