//! Value words: a NaN-boxed 64-bit word that is either a number, a small immediate, or a
//! colored pointer, and the value slot that holds one (clox's `Value` under
//! `NAN_BOXING`, made something a ZGC-style collector can trace, heal and relocate; no ZGC
//! collector has such a slot: HotSpot's fields are typed, a slot is a reference or it is not).
//!
//! ```text
//!  63      48 47                                                    0
//!  +---------+------------------------------------------------------+
//!  | 1...1   |  colored pointer (5 colors, offset: at most 48 bits)  |  pointer   (top 16 = 0xffff)
//!  | 0x7ffc  |  embedder's payload (48 bits)                         |  immediate (top 16 = 0x7ffc)
//!  |             any other f64 bit pattern; NaNs only as 0x7ff8_0000_0000_0000          |  number
//!  +---------+------------------------------------------------------+
//! ```
//!
//! The pointer tag is the sixteen top bits all set (sign, exponent, quiet bit and three more:
//! a negative quiet NaN with a payload, which no arithmetic produces) and the 48-bit payload is
//! the [`ColoredPtr`] exactly as a reference slot holds it, colors included: the barrier,
//! marking and relocation take the payload apart with the same masks as for a reference.
//!
//! **Soundness.** A word decodes as a pointer only if it came from a pointer: every `f64`
//! enters through [`ValueWord::number`], which maps every NaN (there are 2^53 − 2 of them,
//! among them every pattern with the pointer tag, and the immediates' tag) to the one
//! canonical quiet NaN `0x7ff8_0000_0000_0000`. Every other `f64` (finite or infinite) has an
//! exponent that is not all ones or a zero mantissa, so it never carries either tag. So an
//! embedder holding only numbers and immediates cannot forge a reference into the heap, and a
//! number read back is the number stored (a NaN reads back as a NaN). The word 0 is the number
//! `+0.0`: a freshly allocated value slot holds it.
//!
//! **Barrier test.** With `TAG` the pointer tag and `bad` the bad mask (bits `S..S+5`, below
//! bit 48), a loaded word `w` needs the slow path exactly when it is a pointer with a bad
//! color. The words with all sixteen top bits set are exactly those from `TAG` up, so "is a
//! pointer" is one unsigned compare, `w >= TAG`, and "has a bad color" the reference
//! barrier's `w & bad != 0` (see [`crate::value_barrier`] for the fast path). As one
//! expression: `w & (TAG | bad) > TAG` ([`ValueWord::is_bad_pointer`]): if `w` is not a
//! pointer, `w & (TAG | bad)` is below `TAG` (the bad bits are below it); if it is, the AND
//! is `TAG` plus its bad bits, above `TAG` iff it has one.

use crate::sync::AtomicWord;
use crate::word::ColoredPtr;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

/// The pointer tag: a value word whose top 16 bits are all set holds a colored pointer in its
/// low 48 bits.
pub const VALUE_POINTER_TAG: u64 = 0xffff_0000_0000_0000;
/// The immediate tag: a value word whose top 16 bits are `0x7ffc` holds a 48-bit embedder
/// payload (nil, booleans, small integers, symbols...), which the collector never reads.
pub const VALUE_IMMEDIATE_TAG: u64 = 0x7ffc_0000_0000_0000;
/// The mask of the tags (the top 16 bits).
pub const VALUE_TAG_MASK: u64 = 0xffff_0000_0000_0000;
/// The mask of the payload (the low 48 bits).
pub const VALUE_PAYLOAD_MASK: u64 = !VALUE_TAG_MASK;
/// The one NaN a value word holds: the canonical quiet NaN.
pub const CANONICAL_NAN: u64 = 0x7ff8_0000_0000_0000;
/// The largest immediate payload (48 bits).
pub const MAX_IMMEDIATE: u64 = VALUE_PAYLOAD_MASK;

/// What a value word holds, decoded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ValueKind {
    /// A number (NaN only as the canonical NaN).
    Number(f64),
    /// An embedder immediate: a payload of at most 48 bits.
    Immediate(u64),
    /// A colored pointer (never null when made through [`ValueWord::pointer`]).
    Pointer(ColoredPtr),
}

/// A NaN-boxed value word, as a value slot holds it (see the module documentation).
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ValueWord(u64);

impl ValueWord {
    /// The number `x`; every NaN becomes the canonical NaN, so no number decodes as a pointer
    /// or an immediate.
    #[inline(always)]
    pub fn number(x: f64) -> ValueWord {
        if x.is_nan() {
            ValueWord(CANONICAL_NAN)
        } else {
            ValueWord(x.to_bits())
        }
    }

    /// The immediate `payload`, or `None` if it needs more than 48 bits.
    #[inline(always)]
    pub const fn immediate(payload: u64) -> Option<ValueWord> {
        if payload > MAX_IMMEDIATE {
            None
        } else {
            Some(ValueWord(VALUE_IMMEDIATE_TAG | payload))
        }
    }

    /// The word holding colored pointer `ptr` (non-null, at most 48 bits: every colored
    /// pointer of a layout with `S <= 43`).
    #[inline(always)]
    pub fn pointer(ptr: ColoredPtr) -> ValueWord {
        debug_assert!(
            !ptr.is_null() && ptr.raw() & VALUE_TAG_MASK == 0,
            "not a colored pointer: {ptr:?}"
        );
        ValueWord(VALUE_POINTER_TAG | ptr.raw())
    }

    /// The word whose bits are `raw`, as a value slot holds them. Not a way to make a value:
    /// bits that carry the pointer tag are a reference into the heap, which only the collector
    /// and the barrier may hand out; this is for words read from a value slot.
    #[inline(always)]
    pub const fn from_raw(raw: u64) -> ValueWord {
        ValueWord(raw)
    }

    /// The word's bits.
    #[inline(always)]
    pub const fn raw(self) -> u64 {
        self.0
    }

    /// True if the word holds a colored pointer.
    #[inline(always)]
    pub const fn is_pointer(self) -> bool {
        // The tag is the top sixteen bits all set: the words from the tag up.
        self.0 >= VALUE_POINTER_TAG
    }

    /// The colored pointer in the payload (meaningful if [`Self::is_pointer`]).
    #[inline(always)]
    pub const fn pointer_bits(self) -> ColoredPtr {
        ColoredPtr::from_raw(self.0 & VALUE_PAYLOAD_MASK)
    }

    /// The colored pointer, if the word holds one.
    #[inline(always)]
    pub const fn as_pointer(self) -> Option<ColoredPtr> {
        if self.is_pointer() {
            Some(self.pointer_bits())
        } else {
            None
        }
    }

    /// What the word holds.
    #[inline(always)]
    pub fn kind(self) -> ValueKind {
        match self.0 & VALUE_TAG_MASK {
            VALUE_POINTER_TAG => ValueKind::Pointer(self.pointer_bits()),
            VALUE_IMMEDIATE_TAG => ValueKind::Immediate(self.0 & VALUE_PAYLOAD_MASK),
            _ => ValueKind::Number(f64::from_bits(self.0)),
        }
    }

    /// The value barrier's test: true if the word is a pointer with a color in `bad_mask`
    /// (one AND, one unsigned compare; see the module documentation).
    #[inline(always)]
    pub const fn is_bad_pointer(self, bad_mask: u64) -> bool {
        self.0 & (VALUE_POINTER_TAG | bad_mask) > VALUE_POINTER_TAG
    }
}

impl fmt::Debug for ValueWord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ValueWord({:#x})", self.0)
    }
}

/// A value slot: an atomic word holding a [`ValueWord`]: an object's value slot (see
/// [`crate::Object::value_slots`]). The value barrier
/// ([`crate::value_barrier::load_value_barrier`]) reads and heals one.
#[repr(transparent)]
pub struct ValueSlot<W = AtomicU64>(W);

impl<W: AtomicWord> ValueSlot<W> {
    /// A slot holding `v`.
    #[inline(always)]
    pub fn new(v: ValueWord) -> Self {
        ValueSlot(W::new_word(v.raw()))
    }

    /// The word in the slot (no barrier: the bits as stored).
    #[inline(always)]
    pub fn load(&self, order: Ordering) -> ValueWord {
        ValueWord(self.0.load(order))
    }

    /// Store `v` into the slot.
    #[inline(always)]
    pub fn store(&self, v: ValueWord, order: Ordering) {
        self.0.store(v.raw(), order)
    }

    /// Store `v` and return the word it replaced.
    #[inline(always)]
    pub fn swap(&self, v: ValueWord, order: Ordering) -> ValueWord {
        ValueWord(self.0.swap(v.raw(), order))
    }

    /// Store `new` if the slot holds `current`: `Ok(current)` if it did, else `Err` of the
    /// word it holds.
    #[inline(always)]
    pub fn compare_exchange(
        &self,
        current: ValueWord,
        new: ValueWord,
        success: Ordering,
        failure: Ordering,
    ) -> Result<ValueWord, ValueWord> {
        self.0
            .compare_exchange(current.raw(), new.raw(), success, failure)
            .map(ValueWord)
            .map_err(ValueWord)
    }
}

impl<W: AtomicWord> fmt::Debug for ValueSlot<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ValueSlot({:?})", self.load(Ordering::Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The good colors' bits (relative to `S`).
    const GOODS: [u64; 4] = [0b00001, 0b00010, 0b00100, 0b01000];

    /// Bad masks of the four good colors for every offset width.
    fn bad_masks() -> Vec<u64> {
        let mut v = Vec::new();
        for s in 42..=43 {
            for good in GOODS {
                v.push((good ^ 0b11111) << s);
            }
        }
        v
    }

    proptest::proptest! {
        /// Every f64 round-trips (a NaN as a NaN) and none decodes as a pointer or an
        /// immediate, nor takes the barrier's slow path under any bad mask.
        #[test]
        fn every_number_round_trips_and_is_no_pointer(bits in proptest::num::u64::ANY) {
            let x = f64::from_bits(bits);
            let w = ValueWord::number(x);
            proptest::prop_assert!(!w.is_pointer());
            match w.kind() {
                ValueKind::Number(y) if x.is_nan() => {
                    proptest::prop_assert!(y.is_nan());
                    proptest::prop_assert_eq!(w.raw(), CANONICAL_NAN);
                }
                ValueKind::Number(y) => proptest::prop_assert_eq!(y.to_bits(), bits),
                other => proptest::prop_assert!(false, "{x:?} decoded as {other:?}"),
            }
            for bad in bad_masks() {
                proptest::prop_assert!(!w.is_bad_pointer(bad));
            }
        }

        /// Every immediate round-trips and is no pointer; wider payloads are refused.
        #[test]
        fn immediates_round_trip(payload in proptest::num::u64::ANY) {
            match ValueWord::immediate(payload) {
                Some(w) => {
                    proptest::prop_assert!(payload <= MAX_IMMEDIATE);
                    proptest::prop_assert_eq!(w.kind(), ValueKind::Immediate(payload));
                    for bad in bad_masks() {
                        proptest::prop_assert!(!w.is_bad_pointer(bad));
                    }
                }
                None => proptest::prop_assert!(payload > MAX_IMMEDIATE),
            }
        }

        /// A pointer round-trips with its colors, and takes the slow path exactly when one of
        /// its colors is bad.
        #[test]
        fn pointers_round_trip_and_test_their_color(
            s in 42u32..=43,
            off in 8u64..(1 << 42),
            color in 1u64..32,
            good in 0usize..4,
        ) {
            let ptr = ColoredPtr::from_raw((color << s) | (off & !7));
            let w = ValueWord::pointer(ptr);
            proptest::prop_assert!(w.is_pointer());
            proptest::prop_assert_eq!(w.kind(), ValueKind::Pointer(ptr));
            let bad = (GOODS[good] ^ 0b11111) << s;
            proptest::prop_assert_eq!(w.is_bad_pointer(bad), ptr.raw() & bad != 0);
        }
    }

    #[test]
    fn special_numbers() {
        for x in [
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MIN_POSITIVE,
            1e308,
        ] {
            assert_eq!(ValueWord::number(x).kind(), ValueKind::Number(x));
        }
        // The NaNs that carry the two tags, and x86's default NaN (negative).
        for bits in [
            VALUE_POINTER_TAG,
            VALUE_POINTER_TAG | 0x1234,
            VALUE_IMMEDIATE_TAG | 1,
            0xfff8_0000_0000_0000,
        ] {
            let w = ValueWord::number(f64::from_bits(bits));
            assert_eq!(w.raw(), CANONICAL_NAN, "{bits:#x}");
        }
        assert_eq!(ValueWord::from_raw(0).kind(), ValueKind::Number(0.0));
        assert!(ValueWord::immediate(MAX_IMMEDIATE + 1).is_none());
    }
}
