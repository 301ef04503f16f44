//! Value slots in the embedding API: objects whose slots hold a number, an immediate or a
//! reference in one word, as a dynamically typed language's values are (clox's NaN-boxed
//! `Value`), traced, healed and relocated by the collector like reference slots. No ZGC-style
//! collector offers them: HotSpot's fields are statically typed, so there a Lox value stored
//! in an object is a reference slot, a tag and a payload — three words where this is one.
//!
//! An object gets `n_values` value slots between its reference slots and its raw bytes
//! ([`Scope::alloc_with_values`]); a fresh value slot holds the number `0.0`. A slot's word is
//! `gc_core::ValueWord`; the embedder never sees it raw, but reads and writes a [`Value`]:
//!
//! - [`Value::Number`]: any `f64`. Every NaN is stored as the one canonical NaN, so no number
//!   the embedder computes can carry the pointer tag: safe code cannot forge a reference into
//!   the heap from a number (the soundness hole of NaN-boxing under a moving collector), and
//!   a NaN reads back as a NaN.
//! - [`Value::Immediate`]: an [`Immediate`], a payload of at most 48 bits (nil, booleans,
//!   small integers, interned symbol ids...), checked when it is made, never read by the
//!   collector.
//! - [`Value::Ref`]: an object, as the handle kind of the call: an [`ObjRef`] for the
//!   unrooted fast path ([`ObjRef::load_value`], [`ObjRef::store_value`]), a [`Local`] for the
//!   rooted one ([`Scope::load_value`], [`Scope::store_value`]).
//!
//! An embedder whose own values are NaN-boxed with the same tags (a clox-style interpreter:
//! numbers as their `f64` bits, its other immediates under [`VALUE_IMMEDIATE_TAG`]) can skip
//! the decoding: [`ValueBits`] is a slot's word as such an embedder keeps it, the bits of a
//! number or an immediate as they are, or the object ([`ObjRef::load_value_bits`],
//! [`ObjRef::store_value_bits`], [`Fresh::init_value`](crate::Fresh::init_value)). Its bits
//! cannot forge a reference either: bits carrying the pointer tag are a NaN, stored as the
//! canonical NaN.
//!
//! A load goes through the value barrier (`gc_core::value_barrier`): one AND and one compare
//! more than a reference load's test; a pointer with a bad color takes the reference
//! barrier's slow path (mark, relocate, remap) and is healed into the slot with its tag.

use super::heap::Heap;
use super::mutator::{Mutator, OutOfMemory};
use super::scope::{Local, ObjRef, Scope};
use crate::observe::ValueSlotStats;
use gc_core::value::{CANONICAL_NAN, MAX_IMMEDIATE, VALUE_IMMEDIATE_TAG, VALUE_POINTER_TAG};
use gc_core::{ColoredPtr, LoadedValue, SlowPath, ValueKind, ValueSlot, ValueWord};
use std::sync::atomic::Ordering;

/// An immediate: an embedder payload of at most 48 bits stored in a value slot, which the
/// collector never reads (nil, booleans, small integers...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Immediate(u64);

/// An immediate payload wider than 48 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "immediate payload {payload:#x} needs more than 48 bits (at most {max:#x}); store a wider \
     value as a number or in an object's raw bytes"
)]
pub struct ImmediateTooWide {
    pub payload: u64,
    pub max: u64,
}

impl Immediate {
    /// The largest payload.
    pub const MAX: u64 = MAX_IMMEDIATE;

    /// The immediate `payload`, refused if it needs more than 48 bits.
    #[inline]
    pub const fn new(payload: u64) -> Result<Immediate, ImmediateTooWide> {
        if payload > MAX_IMMEDIATE {
            Err(ImmediateTooWide {
                payload,
                max: MAX_IMMEDIATE,
            })
        } else {
            Ok(Immediate(payload))
        }
    }

    /// The payload.
    #[inline(always)]
    pub const fn get(self) -> u64 {
        self.0
    }
}

/// What a value slot holds, with the object as `R`: an [`ObjRef`] or a [`Local`] (see the
/// module documentation).
#[derive(Clone, Copy, Debug)]
pub enum Value<R> {
    Number(f64),
    Immediate(Immediate),
    Ref(R),
}

impl<R> Value<R> {
    /// The number, if it is one.
    #[inline]
    pub fn as_number(&self) -> Option<f64> {
        match self {
            Value::Number(x) => Some(*x),
            _ => None,
        }
    }

    /// The immediate, if it is one.
    #[inline]
    pub fn as_immediate(&self) -> Option<Immediate> {
        match self {
            Value::Immediate(i) => Some(*i),
            _ => None,
        }
    }

    /// The object, if it is one.
    #[inline]
    pub fn as_ref(&self) -> Option<&R> {
        match self {
            Value::Ref(r) => Some(r),
            _ => None,
        }
    }
}

/// What a value slot holds, as an embedder whose values share the slot's NaN-boxing sees it
/// (see the module documentation): the bits of a number or an immediate, or the object as
/// `R`.
#[derive(Clone, Copy, Debug)]
pub enum ValueBits<R> {
    /// A number's `f64` bits, or `VALUE_IMMEDIATE_TAG | payload` for an immediate. Stored,
    /// bits carrying the pointer tag (a NaN) become the canonical NaN.
    Bits(u64),
    Ref(R),
}

/// The word storing `v` on behalf of `m`: as [`encode`], with bits carrying the pointer tag
/// stored as the canonical NaN (they are a NaN: a compare and a conditional move).
#[inline(always)]
pub(super) fn encode_bits(v: ValueBits<ObjRef<'_>>, m: &Mutator) -> ValueWord {
    match v {
        ValueBits::Bits(b) => ValueWord::from_raw(if b >= VALUE_POINTER_TAG {
            CANONICAL_NAN
        } else {
            b
        }),
        ValueBits::Ref(o) => {
            let p = o.ptr_of(m, "ObjRef::store_value_bits");
            debug_assert!(m.storable(p), "a mutator never stores a bad pointer");
            ValueWord::pointer(p)
        }
    }
}

/// The store barrier after `m` stored `w` into the value slot `slot` (see
/// `Mutator::store_barrier`; a number or an immediate needs none).
#[inline(always)]
fn store_barrier(m: &Mutator, slot: &ValueSlot, w: ValueWord) {
    if m.tracks_generations() {
        if let Some(p) = w.as_pointer() {
            m.store_barrier(slot as *const ValueSlot as *const u64, p, true);
        }
    }
}

/// The mutator's barrier slow path, counting the value slots it heals.
struct ValueSlowPath<'a>(&'a Mutator);

impl SlowPath for ValueSlowPath<'_> {
    fn make_good(&self, ptr: ColoredPtr) -> ColoredPtr {
        let good = self.0.make_good(ptr);
        let layout = self.0.heap.layout();
        self.0
            .heap
            .value_slot_counts()
            .barrier_healed(layout.offset(good) != layout.offset(ptr));
        good
    }
}

impl Mutator {
    /// The barrier load of a value slot.
    #[inline(always)]
    fn load_value_slot(&self, slot: &ValueSlot) -> ValueWord {
        gc_core::load_value_barrier(slot, self.bad_mask.get(), &ValueSlowPath(self))
    }
}

/// A value word as the embedder sees it, with a loaded pointer made an [`ObjRef`] of `m`.
#[inline(always)]
fn decode(w: ValueWord, m: &Mutator) -> Value<ObjRef<'_>> {
    match w.kind() {
        ValueKind::Number(x) => Value::Number(x),
        ValueKind::Immediate(p) => Value::Immediate(Immediate(p)),
        ValueKind::Pointer(p) => Value::Ref(ObjRef::from_non_null(p, m)),
    }
}

/// The word for `v`, stored on behalf of `m` (an object of another heap refused).
#[inline(always)]
fn encode(v: Value<ObjRef<'_>>, m: &Mutator) -> ValueWord {
    match v {
        Value::Number(x) => ValueWord::number(x),
        Value::Immediate(i) => ValueWord::from_raw(VALUE_IMMEDIATE_TAG | i.0),
        Value::Ref(o) => {
            let p = o.ptr_of(m, "ObjRef::store_value");
            debug_assert!(m.storable(p), "a mutator never stores a bad pointer");
            ValueWord::pointer(p)
        }
    }
}

impl<'a> ObjRef<'a> {
    /// Number of value slots.
    #[inline]
    pub fn n_values(&self) -> usize {
        self.obj().n_values()
    }

    /// Load value slot `i` through the value barrier (healing the slot).
    ///
    /// # Panics
    /// If `i` is out of range.
    #[inline]
    pub fn load_value(&self, i: usize) -> Value<ObjRef<'a>> {
        let m = self.mutator();
        decode(m.load_value_slot(self.obj().value_slot(i)), m)
    }

    /// Store `v` into value slot `i`.
    ///
    /// # Panics
    /// If `v` is an object of another heap, or `i` is out of range.
    #[inline]
    pub fn store_value(&self, i: usize, v: Value<ObjRef<'_>>) {
        let w = encode(v, self.mutator());
        let obj = self.obj();
        let slot = obj.value_slot(i);
        slot.store(w, Ordering::Release);
        store_barrier(self.mutator(), slot, w);
    }
}

impl<'a> ObjRef<'a> {
    /// Load value slot `i` through the value barrier (healing the slot), as [`ValueBits`]:
    /// the object if the slot holds a pointer, else the word's bits as they are.
    ///
    /// # Panics
    /// If `i` is out of range.
    #[inline(always)]
    pub fn load_value_bits(&self, i: usize) -> ValueBits<ObjRef<'a>> {
        let m = self.mutator();
        let obj = self.obj();
        let slot = obj.value_slot(i);
        match gc_core::load_value_barrier_decoded(slot, m.bad_mask.get(), &ValueSlowPath(m)) {
            LoadedValue::Plain(w) => ValueBits::Bits(w.raw()),
            LoadedValue::Pointer(p) => ValueBits::Ref(ObjRef::from_non_null(p, m)),
        }
    }

    /// Store `v` into value slot `i` (bits carrying the pointer tag as the canonical NaN).
    ///
    /// # Panics
    /// If `v` is an object of another heap, or `i` is out of range.
    #[inline(always)]
    pub fn store_value_bits(&self, i: usize, v: ValueBits<ObjRef<'_>>) {
        let w = encode_bits(v, self.mutator());
        let obj = self.obj();
        let slot = obj.value_slot(i);
        slot.store(w, Ordering::Release);
        store_barrier(self.mutator(), slot, w);
    }
}

impl<'s> Scope<'s> {
    /// Allocate an object with `n_refs` null reference slots, `n_values` value slots holding
    /// `0.0` and `n_bytes` zeroed raw bytes. May stall for a GC cycle; fails with
    /// [`OutOfMemory`] if even that cannot make room, or if `n_values` exceeds
    /// `gc_core::MAX_VALUES` (the error says so).
    pub fn alloc_with_values(
        &mut self,
        shape: u32,
        n_refs: u32,
        n_values: u32,
        n_bytes: usize,
    ) -> Result<Local<'s>, OutOfMemory> {
        let p = self
            .mutator_mut()
            .alloc(shape, n_refs, n_values, n_bytes as u64)?;
        Ok(self.push(p))
    }

    /// Load value slot `i` of `obj`, an object into a new handle.
    pub fn load_value(&self, obj: Local<'_>, i: usize) -> Value<Local<'s>> {
        match self.get(obj).load_value(i) {
            Value::Number(x) => Value::Number(x),
            Value::Immediate(im) => Value::Immediate(im),
            Value::Ref(o) => Value::Ref(self.push(o.ptr())),
        }
    }

    /// Store `v` into value slot `i` of `obj`.
    pub fn store_value(&self, obj: Local<'_>, i: usize, v: Value<Local<'_>>) {
        let o = self.get(obj);
        let v = match v {
            Value::Number(x) => Value::Number(x),
            Value::Immediate(im) => Value::Immediate(im),
            Value::Ref(l) => Value::Ref(self.get(l)),
        };
        o.store_value(i, v);
    }
}

impl Heap {
    /// What the collector did to value slots since the heap was created: slots healed and
    /// pointed at moved objects by the mutators' barriers, by marking and by the `stw` full
    /// remap (for tests and tools that check those paths ran).
    pub fn value_slot_stats(&self) -> ValueSlotStats {
        self.inner.value_slot_counts().snapshot()
    }
}
