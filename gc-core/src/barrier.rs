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
    debug_assert!(!good.is_null(), "slow path returned null");
    // The same pointer back: a minor's Remapped pointer to an old object, nothing to heal.
    if good != ptr {
        self_heal(slot, ptr, good, bad_mask);
    }
    good
}

/// Heal `slot`, from which `bad` was loaded, to `good`.
///
/// Returns true if this call wrote the slot. Stops without writing when the slot no longer
/// holds a bad pointer (another barrier healed it, or a mutator stored a good pointer or null)
/// or holds a bad pointer to another object (a mutator's store: while a minor cycle marks, a
/// pointer to an old object is handed out, healed and stored Remapped, which is bad then; see
/// the runtime's `mark::marker`). If another barrier healed it to a *weaker* bad pointer of
/// the same object, retries so the slot is not left weaker than what this barrier computed.
/// `good` is good under `bad_mask`, or Remapped (a minor's pointer to an old object).
pub fn self_heal<W: AtomicWord>(
    slot: &ColoredSlot<W>,
    bad: ColoredPtr,
    good: ColoredPtr,
    bad_mask: u64,
) -> bool {
    debug_assert!(!good.is_null(), "self-healing must never write null");
    let mut expected = bad;
    loop {
        match slot.compare_exchange(expected, good, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return true,
            Err(current) => {
                if current.raw() & bad_mask == 0
                    || !same_object(current.raw(), good.raw(), bad_mask)
                {
                    // Good or null, or another object: someone else healed it or stored a
                    // new value. Leave it.
                    return false;
                }
                // Still bad, the same object: a concurrent heal of it with weaker color
                // bits. Upgrade it.
                expected = current;
            }
        }
    }
}

/// True if the colored pointers `a` and `b` (raw bits) lead to the same offset: they differ
/// in color bits only. The color bits are `bad_mask`'s and `b`'s own color bit (its highest
/// set bit: colors lie above every offset bit).
#[inline]
pub(crate) fn same_object(a: u64, b: u64, bad_mask: u64) -> bool {
    let color_bit = 1u64 << (63 - b.leading_zeros());
    (a ^ b) & !(bad_mask | color_bit) == 0
}
