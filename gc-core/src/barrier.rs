//! The load barrier (ZGC's `ZBarrier`): an inlined fast path and a cold slow path that
//! self-heals the slot it loaded from.
//!
//! Fast path: one load, one test against the mutator's copy of the bad mask, one predicted
//! branch. Slow path: the runtime's [`SlowPath`] policy makes the pointer good (mark during
//! marking, relocate-or-remap during relocation, remap stale pointers), then
//! [`self_heal`] CASes the good pointer back into the slot so the next load takes the fast
//! path. Healing never writes null and only upgrades a color: if another thread stored a
//! different good pointer (or null) meanwhile, its store wins.
//!
//! Slots are [`ColoredSlot`]s: atomic words holding [`ColoredPtr`] bits; the barrier hands out
//! and takes [`ColoredPtr`]s, and tests them against the bad mask as a raw `u64` (one AND).

use crate::sync::AtomicWord;
use crate::word::{ColoredPtr, ColoredSlot};
use std::sync::atomic::Ordering;

/// The runtime's policy for a bad pointer: return the good pointer for the same object.
pub trait SlowPath {
    /// `ptr` is non-null and bad; return the good pointer (never null).
    fn make_good(&self, ptr: ColoredPtr) -> ColoredPtr;
}

/// Load a reference from `slot` through the barrier.
#[inline(always)]
pub fn load_barrier<S: SlowPath + ?Sized>(
    slot: &ColoredSlot,
    bad_mask: u64,
    slow: &S,
) -> ColoredPtr {
    let ptr = slot.load(Ordering::Acquire);
    if ptr.raw() & bad_mask == 0 {
        return ptr;
    }
    load_barrier_slow(slot, ptr, bad_mask, slow)
}

#[cold]
#[inline(never)]
fn load_barrier_slow<S: SlowPath + ?Sized>(
    slot: &ColoredSlot,
    ptr: ColoredPtr,
    bad_mask: u64,
    slow: &S,
) -> ColoredPtr {
    let good = slow.make_good(ptr);
    debug_assert!(
        !good.is_null() && good.raw() & bad_mask == 0,
        "slow path returned a bad pointer"
    );
    self_heal(slot, ptr, good, bad_mask);
    good
}

/// Heal `slot`, from which `bad` was loaded, to `good`.
///
/// Returns true if this call wrote the slot. Stops without writing when the slot no longer
/// holds a bad pointer (another barrier healed it, or a mutator stored a good pointer or null).
/// If another barrier healed it to a *weaker* bad pointer of the same object, retries so the
/// slot is not left weaker than what this barrier computed.
pub fn self_heal<W: AtomicWord>(
    slot: &ColoredSlot<W>,
    bad: ColoredPtr,
    good: ColoredPtr,
    bad_mask: u64,
) -> bool {
    debug_assert!(!good.is_null(), "self-healing must never write null");
    debug_assert!(
        good.raw() & bad_mask == 0,
        "self-healing must write a good pointer"
    );
    let mut expected = bad;
    loop {
        match slot.compare_exchange(expected, good, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return true,
            Err(current) => {
                if current.raw() & bad_mask == 0 {
                    // Good or null: someone else healed it or stored a new value. Leave it.
                    return false;
                }
                // Still bad: mutators never store bad pointers, so this is a
                // concurrent heal of the same object with weaker color bits. Upgrade it.
                expected = current;
            }
        }
    }
}
