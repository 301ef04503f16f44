//! Typed heap words: the three meanings a 64-bit word has in the collector (ZGC's `zoffset`,
//! `zpointer` and `zaddress`).
//!
//! - [`Offset`]: a position in the heap's offset space `0 .. 1 << S`, the same for every view.
//!   Pages, the page table, the forwarding tables and the allocators speak in offsets.
//! - [`ColoredPtr`]: a reference as it is stored in an object slot or a root, the offset with
//!   color bits above it ([`crate::address`] draws the layout); `0` is null. The load barrier
//!   reads and heals these.
//! - [`Address`]: a virtual address that can be dereferenced, in one of the four views (or,
//!   for objects built in plain memory by tests, anywhere).
//!
//! and the cell that holds the middle one:
//!
//! - [`ColoredSlot`]: an atomic word holding a [`ColoredPtr`], ZGC's `volatile zpointer*`
//!   field: an object's reference slot, a root. It loads, stores, swaps and compares-and-swaps
//!   `ColoredPtr`s, so a slot's bits never pass through a bare `u64` on their way to the
//!   barrier.
//!
//! Each is a `#[repr(transparent)]` wrapper of a `u64`, so it costs nothing at run time; what
//! it buys is that the compiler refuses to mix them up. Converting between them needs the
//! heap's [`AddressLayout`](crate::AddressLayout) (offset bits, view bases), so the
//! conversions live there ([`AddressLayout::offset`](crate::AddressLayout::offset),
//! [`AddressLayout::good`](crate::AddressLayout::good),
//! [`AddressLayout::address`](crate::AddressLayout::address), ...); this module only has the
//! types, their raw constructors and accessors, and the little offset arithmetic pages need
//! (`Offset + u64`, `Offset - Offset`).
//!
//! An offset is not a pointer:
//!
//! ```compile_fail,E0308
//! use gc_core::{AddressLayout, GoodColor, Offset};
//! let layout = AddressLayout::new(42);
//! let off = Offset::from_raw(0x1000);
//! // error[E0308]: mismatched types: expected `ColoredPtr`, found `Offset`
//! let _ = layout.is_good(off, GoodColor::Remapped);
//! ```
//!
//! It has to be colored first:
//!
//! ```
//! use gc_core::{AddressLayout, GoodColor, Offset};
//! let layout = AddressLayout::new(42);
//! let off = Offset::from_raw(0x1000);
//! let ptr = layout.good(off, GoodColor::Remapped);
//! assert!(layout.is_good(ptr, GoodColor::Remapped));
//! assert_eq!(layout.offset(ptr), off);
//! ```

use crate::sync::AtomicWord;
use std::fmt;
use std::ops::{Add, AddAssign, Sub};
use std::sync::atomic::{AtomicU64, Ordering};

/// Implements the traits every word type shares: hex `Debug` (with the type's name),
/// `Display` (`0x…`) and `LowerHex`.
macro_rules! hex_word {
    ($t:ident) => {
        impl fmt::Debug for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!(stringify!($t), "({:#x})"), self.0)
            }
        }

        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{:#x}", self.0)
            }
        }

        impl fmt::LowerHex for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::LowerHex::fmt(&self.0, f)
            }
        }
    };
}

/// An offset into the heap's offset space (`0 .. 1 << S`): where an object or page is,
/// independent of the view it is seen through.
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Offset(u64);

impl Offset {
    /// Offset 0, the start of the offset space.
    pub const ZERO: Offset = Offset(0);

    /// The offset with value `raw` (not checked against a layout: [`crate::AddressLayout`]
    /// asserts the range when it colors the offset, in debug builds).
    #[inline(always)]
    pub const fn from_raw(raw: u64) -> Offset {
        Offset(raw)
    }

    /// The offset as a number.
    #[inline(always)]
    pub const fn raw(self) -> u64 {
        self.0
    }
}

impl Add<u64> for Offset {
    type Output = Offset;
    /// The offset `bytes` further on.
    #[inline(always)]
    fn add(self, bytes: u64) -> Offset {
        Offset(self.0 + bytes)
    }
}

impl AddAssign<u64> for Offset {
    #[inline(always)]
    fn add_assign(&mut self, bytes: u64) {
        self.0 += bytes;
    }
}

impl Sub for Offset {
    type Output = u64;
    /// The distance in bytes from `other` up to `self` (`other <= self`).
    #[inline(always)]
    fn sub(self, other: Offset) -> u64 {
        self.0 - other.0
    }
}

hex_word!(Offset);

/// A colored pointer: a reference as stored in object slots and roots, an [`Offset`] with
/// color bits above it; `0` is null. Only [`crate::AddressLayout`] knows where the color bits
/// are, so it makes and takes these apart.
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ColoredPtr(u64);

impl ColoredPtr {
    /// The null reference.
    pub const NULL: ColoredPtr = ColoredPtr(0);

    /// The pointer whose bits are `raw` (a slot's or root's word as loaded).
    #[inline(always)]
    pub const fn from_raw(raw: u64) -> ColoredPtr {
        ColoredPtr(raw)
    }

    /// The pointer's bits (to store in a slot or root).
    #[inline(always)]
    pub const fn raw(self) -> u64 {
        self.0
    }

    /// True for the null reference.
    #[inline(always)]
    pub const fn is_null(self) -> bool {
        self.0 == 0
    }
}

hex_word!(ColoredPtr);

/// A virtual address that can be dereferenced: an offset seen through one of the heap's three
/// views (see [`crate::AddressLayout::address`]), or plain memory that an object was built in.
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Address(u64);

impl Address {
    /// The address `raw`.
    #[inline(always)]
    pub const fn from_raw(raw: u64) -> Address {
        Address(raw)
    }

    /// The address of `p`.
    #[inline(always)]
    pub fn from_ptr<T>(p: *const T) -> Address {
        Address(p as u64)
    }

    /// The address as a number.
    #[inline(always)]
    pub const fn raw(self) -> u64 {
        self.0
    }

    /// The address as a raw pointer (dereferencing it is the caller's `unsafe` business).
    #[inline(always)]
    pub const fn as_ptr<T>(self) -> *mut T {
        self.0 as *mut T
    }
}

hex_word!(Address);

/// A slot holding a colored pointer: an object's reference slot or a root, the `volatile
/// zpointer*` fields of ZGC. An atomic word ([`AtomicU64`] in the collector, loom's under the
/// models) that takes and gives [`ColoredPtr`]s; the load barrier
/// ([`crate::barrier::load_barrier`]) reads and heals one.
///
/// `#[repr(transparent)]` over its word, so it can be viewed over memory that holds such
/// words: an object's slot array ([`crate::Object::ref_slots`]), or an existing atomic
/// ([`ColoredSlot::from_atomic`]).
#[repr(transparent)]
pub struct ColoredSlot<W = AtomicU64>(W);

impl<W: AtomicWord> ColoredSlot<W> {
    /// A slot holding `ptr`.
    #[inline(always)]
    pub fn new(ptr: ColoredPtr) -> Self {
        ColoredSlot(W::new_word(ptr.raw()))
    }

    /// View the atomic word `word` as a slot (the same memory: a store through either is seen
    /// by the other).
    #[inline(always)]
    pub fn from_atomic(word: &W) -> &Self {
        // SAFETY: `ColoredSlot<W>` is `#[repr(transparent)]` over `W`, so it has `W`'s size,
        // alignment and bit validity, and every bit pattern of the word is a valid slot (any
        // `u64` is a `ColoredPtr`'s bits); the result borrows `word`, so it lives no longer.
        unsafe { &*(word as *const W as *const Self) }
    }

    /// View a slice of atomic words as slots (see [`Self::from_atomic`]).
    #[inline(always)]
    pub fn from_atomics(words: &[W]) -> &[Self] {
        // SAFETY: as in `from_atomic`, element by element: same size and alignment, so the
        // slice of slots covers exactly the words' memory, borrowed for as long.
        unsafe { std::slice::from_raw_parts(words.as_ptr() as *const Self, words.len()) }
    }

    /// The slot's atomic word, for code that still speaks raw words.
    #[inline(always)]
    pub fn as_atomic(&self) -> &W {
        &self.0
    }

    /// A slice of slots as their atomic words (the inverse of [`Self::from_atomics`]).
    #[inline(always)]
    pub fn as_atomics(slots: &[Self]) -> &[W] {
        // SAFETY: `ColoredSlot<W>` is `#[repr(transparent)]` over `W` (see `from_atomic`),
        // so the slots' memory is the same number of words, borrowed for as long.
        unsafe { std::slice::from_raw_parts(slots.as_ptr() as *const W, slots.len()) }
    }

    /// The pointer in the slot (no barrier: the bits as stored).
    #[inline(always)]
    pub fn load(&self, order: Ordering) -> ColoredPtr {
        ColoredPtr(self.0.load(order))
    }

    /// Store `ptr` into the slot.
    #[inline(always)]
    pub fn store(&self, ptr: ColoredPtr, order: Ordering) {
        self.0.store(ptr.raw(), order)
    }

    /// Store `ptr` and return the pointer it replaced.
    #[inline(always)]
    pub fn swap(&self, ptr: ColoredPtr, order: Ordering) -> ColoredPtr {
        ColoredPtr(self.0.swap(ptr.raw(), order))
    }

    /// Store `new` if the slot holds `current`: `Ok(current)` if it did, else `Err` of the
    /// pointer it holds.
    #[inline(always)]
    pub fn compare_exchange(
        &self,
        current: ColoredPtr,
        new: ColoredPtr,
        success: Ordering,
        failure: Ordering,
    ) -> Result<ColoredPtr, ColoredPtr> {
        self.0
            .compare_exchange(current.raw(), new.raw(), success, failure)
            .map(ColoredPtr)
            .map_err(ColoredPtr)
    }
}

impl<W: AtomicWord> fmt::Debug for ColoredSlot<W> {
    /// The slot's pointer, loaded relaxed (as `AtomicU64`'s `Debug` does).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ColoredSlot({:?})", self.load(Ordering::Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_prints_hex_with_the_type() {
        assert_eq!(
            format!("{:?}", Offset::from_raw(0x20_0000)),
            "Offset(0x200000)"
        );
        assert_eq!(
            format!("{:?}", ColoredPtr::from_raw(0x1000_0020_0000)),
            "ColoredPtr(0x100000200000)"
        );
        assert_eq!(format!("{:?}", ColoredPtr::NULL), "ColoredPtr(0x0)");
        assert_eq!(
            format!("{:?}", Address::from_raw(0x4000_0000_0010)),
            "Address(0x400000000010)"
        );
        assert_eq!(format!("{:#x}", Offset::from_raw(255)), "0xff");
        assert_eq!(Offset::from_raw(0x20_0000).to_string(), "0x200000");
        assert_eq!(ColoredPtr::NULL.to_string(), "0x0");
    }

    #[test]
    fn offset_arithmetic() {
        let a = Offset::from_raw(0x1000);
        let mut b = a + 0x30;
        assert_eq!(b.raw(), 0x1030);
        assert_eq!(b - a, 0x30);
        b += 8;
        assert_eq!(b - a, 0x38);
        assert!(a < b);
        assert_eq!(Offset::ZERO.raw(), 0);
    }

    #[test]
    fn null_and_layout() {
        assert!(ColoredPtr::NULL.is_null());
        assert!(!ColoredPtr::from_raw(8).is_null());
        assert_eq!(std::mem::size_of::<Offset>(), 8);
        assert_eq!(std::mem::size_of::<ColoredPtr>(), 8);
        assert_eq!(std::mem::size_of::<ColoredSlot>(), 8);
        assert_eq!(std::mem::align_of::<ColoredSlot>(), 8);
        let x = 0u64;
        assert_eq!(
            Address::from_ptr(&x).as_ptr::<u64>() as *const u64,
            &x as *const u64
        );
    }

    #[test]
    fn slot_loads_stores_swaps_and_cases_colored_pointers() {
        let a = ColoredPtr::from_raw(0x1000_0020_0000);
        let b = ColoredPtr::from_raw(0x2000_0040_0000);
        let slot: ColoredSlot = ColoredSlot::new(ColoredPtr::NULL);
        assert!(slot.load(Ordering::Relaxed).is_null());
        slot.store(a, Ordering::Relaxed);
        assert_eq!(slot.load(Ordering::Relaxed), a);
        assert_eq!(slot.swap(b, Ordering::Relaxed), a);
        let cas = |cur, new| slot.compare_exchange(cur, new, Ordering::AcqRel, Ordering::Acquire);
        assert_eq!(
            cas(a, ColoredPtr::NULL),
            Err(b),
            "a failed CAS returns what is there"
        );
        assert_eq!(slot.load(Ordering::Relaxed), b, "and writes nothing");
        assert_eq!(cas(b, a), Ok(b));
        assert_eq!(slot.load(Ordering::Relaxed), a);
        assert_eq!(
            format!("{slot:?}"),
            "ColoredSlot(ColoredPtr(0x100000200000))"
        );
    }

    #[test]
    fn slot_views_share_the_atomic_words() {
        let words = [AtomicU64::new(8), AtomicU64::new(16)];
        let one = ColoredSlot::from_atomic(&words[1]);
        assert_eq!(one.load(Ordering::Relaxed), ColoredPtr::from_raw(16));
        one.store(ColoredPtr::from_raw(24), Ordering::Relaxed);
        assert_eq!(
            words[1].load(Ordering::Relaxed),
            24,
            "a store through the view"
        );
        words[0].store(32, Ordering::Relaxed);
        let all = ColoredSlot::from_atomics(&words);
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].load(Ordering::Relaxed), ColoredPtr::from_raw(32));
        assert!(std::ptr::eq(&all[1], one));
        assert!(std::ptr::eq(one.as_atomic(), &words[1]));
        let back = ColoredSlot::as_atomics(all);
        assert!(std::ptr::eq(back, &words[..]));
    }
}
