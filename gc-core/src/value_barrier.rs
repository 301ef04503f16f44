//! The load barrier of a value slot (ZGC's `ZBarrier` on a slot that is a reference only
//! sometimes): the reference barrier's fast path with the tag test folded into its mask, and
//! the same slow path and self-healing, on the payload.
//!
//! Fast path: one load, then one unsigned compare with the pointer tag: a word below it is a
//! number or an immediate (its top sixteen bits are not all set) and is returned as it is.
//! A pointer then takes the reference barrier's test of its color bits against the bad mask.
//! So a number costs one compare and branch (the tag in a register), a pointer that and the
//! reference barrier's `test; jne`; and [`load_value_barrier_decoded`] returns which of the
//! two it found, so an embedder decoding the value pays no tag test of its own: the barrier
//! adds to a NaN-boxing interpreter's own tag test only the color test that every reference
//! load pays. (The form `w & (TAG | bad) > TAG`, one AND and one compare, see
//! [`crate::value`], needs the tag ORed into the mask and the embedder's tag test after it;
//! in the Lox interpreter it ran more instructions per load.)
//!
//! Slow path: the runtime's [`SlowPath`] makes the payload's colored pointer good, and
//! [`self_heal_value`] CASes the whole word back with its tag. The rules are the reference
//! barrier's ([`crate::barrier::self_heal`]): healing never writes a non-pointer and only
//! upgrades a color; a number, an immediate or a good pointer stored meanwhile wins.

use crate::barrier::SlowPath;
use crate::sync::AtomicWord;
use crate::value::{ValueSlot, ValueWord, VALUE_POINTER_TAG};
use crate::word::ColoredPtr;
use std::sync::atomic::Ordering;

/// What a barrier load of a value slot found: a number or an immediate (the word as
/// stored), or a pointer with a good color.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LoadedValue {
    /// A number or an immediate: the word, which is no pointer.
    Plain(ValueWord),
    /// A good colored pointer.
    Pointer(ColoredPtr),
}

/// Load a value from `slot` through the barrier: a number or immediate as stored, a pointer
/// with a good color (healing the slot if it had a bad one). Generic over the slot's atomic
/// word so the loom models run this very code ([`load_value_barrier_decoded`]).
#[inline(always)]
pub fn load_value_barrier<W: AtomicWord, S: SlowPath + ?Sized>(
    slot: &ValueSlot<W>,
    bad_mask: u64,
    slow: &S,
) -> ValueWord {
    match load_value_barrier_decoded(slot, bad_mask, slow) {
        LoadedValue::Plain(w) => w,
        LoadedValue::Pointer(p) => ValueWord::pointer(p),
    }
}

/// [`load_value_barrier`], telling a pointer from a plain word on the way: a word below the
/// pointer tag (unsigned) is a number or an immediate and returns at once; a pointer returns
/// if it has no bad color, else takes the slow path. Two results rather than one word, so
/// that an embedder matching on them needs no tag test of its own and the compiler keeps the
/// two tests as two branches (given one word, it merged them into flags and tested again).
#[inline(always)]
pub fn load_value_barrier_decoded<W: AtomicWord, S: SlowPath + ?Sized>(
    slot: &ValueSlot<W>,
    bad_mask: u64,
    slow: &S,
) -> LoadedValue {
    let w = slot.load(Ordering::Acquire);
    if w.raw() < VALUE_POINTER_TAG {
        return LoadedValue::Plain(w);
    }
    if w.raw() & bad_mask == 0 {
        return LoadedValue::Pointer(w.pointer_bits());
    }
    LoadedValue::Pointer(load_value_barrier_slow(slot, w, bad_mask, slow).pointer_bits())
}

#[cold]
#[inline(never)]
fn load_value_barrier_slow<W: AtomicWord, S: SlowPath + ?Sized>(
    slot: &ValueSlot<W>,
    w: ValueWord,
    bad_mask: u64,
    slow: &S,
) -> ValueWord {
    let good = ValueWord::pointer(slow.make_good(w.pointer_bits()));
    // The same pointer back: a minor's Remapped pointer to an old object, nothing to heal.
    if good != w {
        self_heal_value(slot, w, good, bad_mask);
    }
    good
}

/// Heal value slot `slot`, from which the bad pointer word `bad` was loaded, to the good
/// pointer word `good`.
///
/// Returns true if this call wrote the slot. Stops without writing when the slot no longer
/// holds a bad pointer (another barrier healed it, or a mutator stored a number, an immediate
/// or a good pointer, or a bad pointer to another object: see [`crate::self_heal`]). If
/// another barrier healed it to a *weaker* bad pointer of the same object, retries so the slot
/// is not left weaker than what this barrier computed.
pub fn self_heal_value<W: AtomicWord>(
    slot: &ValueSlot<W>,
    bad: ValueWord,
    good: ValueWord,
    bad_mask: u64,
) -> bool {
    debug_assert!(good.is_pointer(), "self-healing must write a pointer");
    let mut expected = bad;
    loop {
        match slot.compare_exchange(expected, good, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return true,
            Err(current) => {
                if !current.is_bad_pointer(bad_mask)
                    || !crate::barrier::same_object(
                        current.pointer_bits().raw(),
                        good.pointer_bits().raw(),
                        bad_mask,
                    )
                {
                    // Not a pointer, a good one, or another object's: someone else healed it
                    // or stored a new value. Leave it.
                    return false;
                }
                // Still a bad pointer to the same object: a concurrent heal of it with
                // weaker color bits. Upgrade it.
                expected = current;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    const S: u32 = 42;
    const M0: u64 = 1 << S;
    const REMAPPED: u64 = 4 << S;
    /// The bad mask while Remapped is good.
    const BAD: u64 = 0b1011 << S;

    struct Recolor(Cell<u32>);
    impl SlowPath for Recolor {
        fn make_good(&self, ptr: ColoredPtr) -> ColoredPtr {
            self.0.set(self.0.get() + 1);
            ColoredPtr::from_raw((ptr.raw() & ((1 << S) - 1)) | REMAPPED)
        }
    }

    #[test]
    fn a_stale_value_slot_is_healed_once() {
        let slow = Recolor(Cell::new(0));
        let slot: ValueSlot = ValueSlot::new(ValueWord::pointer(ColoredPtr::from_raw(M0 | 0x40)));
        let got = load_value_barrier(&slot, BAD, &slow);
        let want = ValueWord::pointer(ColoredPtr::from_raw(REMAPPED | 0x40));
        assert_eq!(got, want);
        assert_eq!(slot.load(Ordering::Relaxed), want, "healed with its tag");
        assert_eq!(load_value_barrier(&slot, BAD, &slow), want);
        assert_eq!(slow.0.get(), 1, "the second load takes the fast path");
    }

    #[test]
    fn numbers_and_immediates_never_take_the_slow_path() {
        let slow = Recolor(Cell::new(0));
        for w in [
            ValueWord::number(f64::NAN),
            ValueWord::number(-1.5),
            ValueWord::number(f64::NEG_INFINITY),
            ValueWord::immediate(0xffff_ffff_ffff).unwrap(),
            ValueWord::from_raw(0),
        ] {
            let slot: ValueSlot = ValueSlot::new(w);
            assert_eq!(load_value_barrier(&slot, BAD, &slow), w);
            assert_eq!(slot.load(Ordering::Relaxed), w);
        }
        assert_eq!(slow.0.get(), 0);
    }

    #[test]
    fn healing_leaves_a_stored_number_alone() {
        let bad = ValueWord::pointer(ColoredPtr::from_raw(M0 | 0x40));
        let good = ValueWord::pointer(ColoredPtr::from_raw(REMAPPED | 0x40));
        let slot: ValueSlot = ValueSlot::new(ValueWord::number(2.0));
        assert!(!self_heal_value(&slot, bad, good, BAD));
        assert_eq!(slot.load(Ordering::Relaxed), ValueWord::number(2.0));
        // A weaker bad color of the same object is upgraded.
        let weaker = ValueWord::pointer(ColoredPtr::from_raw((2 << S) | 0x40));
        slot.store(weaker, Ordering::Relaxed);
        assert!(self_heal_value(&slot, bad, good, BAD));
        assert_eq!(slot.load(Ordering::Relaxed), good);
    }
}
