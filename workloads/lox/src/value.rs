//! Lox values and how they are stored.
//!
//! A Lox value is `nil`, a boolean, a number or a reference to a heap object. Its word is
//! NaN-boxed as in clox ([`Value::to_raw`]): a number is its `f64` bits, the other values are
//! quiet NaNs under the prefix `0x7ffc`, which no arithmetic produces and which is the
//! collector's immediate tag. Where it is stored:
//!
//! - in a heap object's **value slot** (table values, upvalues): one word, an object as its
//!   colored pointer ([`to_slot`], [`from_slot`]), which the collector traces, heals and
//!   relocates;
//! - on the VM's **value stack**: the word, with [`RAW_OBJ`] for an object, which is in the
//!   reference slot of the same index in the stack's root region;
//! - in a value array (a function's constants): a reference slot, null unless the value is an
//!   object, and a tag word and a payload word in the raw bytes ([`Value::encode`]).
//!
//! [`Value`] is the word as a Rust enum: [`Value::Obj`] says "the object is beside me".

use gc_runtime::{ObjRef, ValueBits};

/// Tag word of `nil` (and of an empty table entry: the zeroed raw bytes of a fresh object read
/// as `nil`).
pub const TAG_NIL: u64 = 0;
/// Tag word of a boolean; the payload is 0 or 1.
pub const TAG_BOOL: u64 = 1;
/// Tag word of a number; the payload is the `f64`'s bits.
pub const TAG_NUMBER: u64 = 2;
/// Tag word of an object value; the object is in the reference slot.
pub const TAG_OBJ: u64 = 3;

/// Bytes of the raw half of a stored value: tag word and payload word.
pub const VALUE_BYTES: usize = 16;

/// A Lox value's word as an enum. For [`Value::Obj`] the object itself lives beside it.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum Value {
    #[default]
    Nil,
    Bool(bool),
    Number(f64),
    /// An object, held beside the word: in a reference slot, or as a value slot's pointer.
    Obj,
}

impl Value {
    /// The tag and payload words stored in raw bytes.
    #[inline]
    pub fn encode(self) -> [u64; 2] {
        match self {
            Value::Nil => [TAG_NIL, 0],
            Value::Bool(b) => [TAG_BOOL, b as u64],
            Value::Number(n) => [TAG_NUMBER, n.to_bits()],
            Value::Obj => [TAG_OBJ, 0],
        }
    }

    /// The value of a tag and payload read from raw bytes (tags other than the four value tags
    /// read as `nil`).
    #[inline]
    pub fn decode(tag: u64, bits: u64) -> Value {
        match tag {
            TAG_BOOL => Value::Bool(bits != 0),
            TAG_NUMBER => Value::Number(f64::from_bits(bits)),
            TAG_OBJ => Value::Obj,
            _ => Value::Nil,
        }
    }

    /// The 16 raw bytes of the value.
    #[inline]
    pub fn to_bytes(self) -> [u8; VALUE_BYTES] {
        let [tag, bits] = self.encode();
        let mut out = [0u8; VALUE_BYTES];
        out[..8].copy_from_slice(&tag.to_le_bytes());
        out[8..].copy_from_slice(&bits.to_le_bytes());
        out
    }

    /// The value of 16 raw bytes.
    #[inline]
    pub fn from_bytes(bytes: &[u8]) -> Value {
        let tag = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"));
        let bits = u64::from_le_bytes(bytes[8..16].try_into().expect("8 bytes"));
        Value::decode(tag, bits)
    }

    /// Lox truthiness: `nil` and `false` are false, everything else is true.
    #[inline]
    pub fn is_falsey(self) -> bool {
        matches!(self, Value::Nil | Value::Bool(false))
    }

    /// The value as one NaN-boxed word (the VM's value stack): a number is its `f64` bits
    /// (a NaN always the canonical one), the other values are quiet NaNs that no arithmetic
    /// produces.
    #[inline(always)]
    pub fn to_raw(self) -> u64 {
        match self {
            Value::Nil => RAW_NIL,
            Value::Bool(b) => RAW_FALSE + b as u64,
            Value::Number(n) if n.is_nan() => CANONICAL_NAN,
            Value::Number(n) => n.to_bits(),
            Value::Obj => RAW_OBJ,
        }
    }

    /// The value of a NaN-boxed word.
    #[inline(always)]
    pub fn from_raw(raw: u64) -> Value {
        match raw {
            RAW_NIL => Value::Nil,
            RAW_FALSE => Value::Bool(false),
            RAW_TRUE => Value::Bool(true),
            RAW_OBJ => Value::Obj,
            bits => Value::Number(f64::from_bits(bits)),
        }
    }
}

/// The quiet-NaN prefix of the boxed non-number values; arithmetic only makes NaNs without
/// bit 50 set (`0x7ff8…`, `0xfff8…`), and [`Value::to_raw`] stores every NaN as
/// [`CANONICAL_NAN`].
const BOXED: u64 = 0x7ffc_0000_0000_0000;
/// The one NaN a boxed number is stored as.
const CANONICAL_NAN: u64 = 0x7ff8_0000_0000_0000;
/// Boxed `nil`.
pub const RAW_NIL: u64 = BOXED | 1;
/// Boxed `false` (`true` is one more).
pub const RAW_FALSE: u64 = BOXED | 2;
/// Boxed `true`.
pub const RAW_TRUE: u64 = BOXED | 3;
/// Boxed object value (the object is in the reference slot beside it; a value slot holds the
/// object's pointer instead).
pub const RAW_OBJ: u64 = BOXED | 4;
/// An open upvalue's word, plus its stack slot (upvalue objects only; no Lox value is a
/// word in `RAW_OPEN..RAW_OPEN + STACK_MAX`).
pub const RAW_OPEN: u64 = BOXED | 1 << 32;

// The boxed words are the collector's immediates: a value slot stores them unchanged.
const _: () = assert!(BOXED == gc_runtime::VALUE_IMMEDIATE_TAG);

/// A value as a value slot stores it: word `raw`, or object `r` if `raw` is [`RAW_OBJ`]
/// (`nil` if it has none).
#[inline(always)]
pub fn to_slot<'a>(raw: u64, r: Option<ObjRef<'a>>) -> ValueBits<ObjRef<'a>> {
    if raw == RAW_OBJ {
        match r {
            Some(o) => ValueBits::Ref(o),
            None => ValueBits::Bits(RAW_NIL),
        }
    } else {
        ValueBits::Bits(raw)
    }
}

/// A value loaded from a value slot: its word, and its object if it is one.
#[inline(always)]
pub fn from_slot(v: ValueBits<ObjRef<'_>>) -> (u64, Option<ObjRef<'_>>) {
    match v {
        ValueBits::Bits(raw) => (raw, None),
        ValueBits::Ref(o) => (RAW_OBJ, Some(o)),
    }
}

/// The number in a boxed word, if it is one.
#[inline(always)]
pub fn raw_number(raw: u64) -> Option<f64> {
    (raw & BOXED != BOXED).then(|| f64::from_bits(raw))
}

/// Lox truthiness of a boxed word.
#[inline(always)]
pub fn raw_is_falsey(raw: u64) -> bool {
    raw == RAW_NIL || raw == RAW_FALSE
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One value of every kind, with the numbers whose bits are special.
    const SAMPLES: [Value; 8] = [
        Value::Nil,
        Value::Bool(true),
        Value::Bool(false),
        Value::Number(1.5),
        Value::Number(-0.0),
        Value::Number(f64::INFINITY),
        Value::Number(f64::NEG_INFINITY),
        Value::Obj,
    ];

    #[test]
    fn round_trip() {
        for v in SAMPLES {
            assert_eq!(Value::from_bytes(&v.to_bytes()), v);
            let [t, b] = v.encode();
            assert_eq!(Value::decode(t, b), v);
        }
        let nan = Value::from_bytes(&Value::Number(f64::NAN).to_bytes());
        assert!(matches!(nan, Value::Number(n) if n.is_nan()));
        assert_eq!(Value::from_bytes(&[0; 16]), Value::Nil);
        assert!(Value::Nil.is_falsey() && Value::Bool(false).is_falsey());
        assert!(!Value::Number(0.0).is_falsey() && !Value::Obj.is_falsey());
    }

    #[test]
    fn raw_round_trip() {
        for v in SAMPLES {
            assert_eq!(Value::from_raw(v.to_raw()), v);
            assert_eq!(raw_is_falsey(v.to_raw()), v.is_falsey());
        }
        assert_eq!(raw_number(Value::Number(2.5).to_raw()), Some(2.5));
        assert_eq!(raw_number(RAW_NIL), None);
        assert_eq!(raw_number(RAW_OBJ), None);
        // NaNs, from a boxed word or from arithmetic on raw bits, stay numbers.
        let nan = Value::Number(f64::NAN).to_raw();
        assert!(matches!(Value::from_raw(nan), Value::Number(n) if n.is_nan()));
        let computed = (f64::from_bits(raw_number(nan).unwrap().to_bits()) * 0.0).to_bits();
        assert!(raw_number(computed).unwrap().is_nan());
        let zero = 0.0f64;
        assert!(raw_number((zero / zero).to_bits()).unwrap().is_nan());
        assert!(raw_number((-(zero / zero)).to_bits()).unwrap().is_nan());
    }
}
