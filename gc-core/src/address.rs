//! Colored pointers and the address layout (ZGC's `zAddress` / `zGlobals` for x86-64).
//!
//! A heap reference is a 64-bit word: the object's *offset* in the low `S` bits, four metadata
//! ("color") bits above it, zeros above those. Three of the colors name a *view*: a virtual copy
//! of the whole heap at base address `1 << bit`, all aliasing the same physical memory, so a
//! pointer of any of those colors can be dereferenced as it is, without masking.
//!
//! ```text
//!  63          S+4  S+3  S+2  S+1   S                                   0
//!  +-------------+----+----+----+----+-----------------------------------+
//!  | 0 0 ... 0 0 | F  | R  | M1 | M0 |        heap offset (S bits)       |
//!  +-------------+----+----+----+----+-----------------------------------+
//!                  |    |    |    |
//!                  |    |    |    +-- Marked0     view at 1 << S       (S=42: 4 TiB)
//!                  |    |    +------- Marked1     view at 1 << (S+1)   (S=42: 8 TiB)
//!                  |    +------------ Remapped    view at 1 << (S+2)   (S=42: 16 TiB)
//!                  +----------------- Finalizable no view: never dereferenced
//!
//!  virtual address space (S = 42, user space ends at 128 TiB):
//!   0 ........ 4 TiB ........ 8 TiB ........ 12 TiB ..... 16 TiB ........ 20 TiB
//!   | program  | Marked0 view  | Marked1 view  | (unused)   | Remapped view  |
//! ```
//!
//! `S` is chosen from the maximum heap as ZGC does: the heap needs 16x its size in virtual
//! space (so pages can be placed without defragmenting), hence
//! `S = clamp(log2(next_pow2(max_heap * 16)), 42, 44)`.
//!
//! The *good* color changes with the GC phase (table below); every other color bit is *bad*
//! (`bad = good ^ 0b1111`). The load barrier tests a loaded pointer against the bad mask.
//!
//! | phase                          | good          | bad (F R M1 M0) |
//! |--------------------------------|---------------|-----------------|
//! | between cycles, relocation     | Remapped 0100 | 1011            |
//! | marking in GC(n), n even       | Marked1 0010  | 1101            |
//! | marking in GC(n), n odd        | Marked0 0001  | 1110            |
//!
//! The three kinds of word are typed ([`crate::word`]): an [`Offset`], a [`ColoredPtr`] (offset
//! plus color, as stored in slots) and an [`Address`] (an offset in one view). [`AddressLayout`]
//! converts between them, as it is the one that knows `S`:
//!
//! ```text
//!   Offset --with_color / good--> ColoredPtr --offset--> Offset
//!   Offset --address(view)------> Address    --address_offset--> Offset
//!   ColoredPtr (dereferenceable) --view_address--> Address (the same bits)
//! ```
//!
//! The masks stay plain `u64`s: the load barrier's fast path is one AND of the loaded word with
//! the bad mask.

use crate::word::{Address, ColoredPtr, Offset};
use bitflags::bitflags;
use serde::Serialize;

/// Smallest number of offset bits (4 TiB heap limit).
pub const MIN_OFFSET_BITS: u32 = 42;
/// Largest number of offset bits (16 TiB heap limit).
pub const MAX_OFFSET_BITS: u32 = 44;
/// Virtual space reserved per byte of maximum heap (ZGC's `ZVirtualToPhysicalRatio`).
pub const VIRTUAL_TO_PHYSICAL_RATIO: u64 = 16;

bitflags! {
    /// The four metadata bits of a colored pointer, *relative* to the offset width
    /// (bit 0 here is bit `S` of the pointer).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub struct Color: u64 {
        const MARKED0 = 0b0001;
        const MARKED1 = 0b0010;
        const REMAPPED = 0b0100;
        const FINALIZABLE = 0b1000;
    }
}

/// The three colors that can be *good*: one of the two mark colors while marking (they
/// alternate from cycle to cycle), Remapped while relocating and between cycles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum GoodColor {
    /// Marking in GC(n) for odd n: GC(1), GC(3), ...
    Marked0,
    /// Marking in GC(n) for even n: GC(0), GC(2), ... (GC(0) uses Marked1, as ZGC).
    Marked1,
    /// Between cycles and during relocation.
    Remapped,
}

impl GoodColor {
    /// The color bit of this good color.
    pub fn color(self) -> Color {
        match self {
            GoodColor::Marked0 => Color::MARKED0,
            GoodColor::Marked1 => Color::MARKED1,
            GoodColor::Remapped => Color::REMAPPED,
        }
    }

    /// The marking color of GC cycle `n`: GC(0) marks with Marked1, GC(1) with Marked0, ...
    pub fn mark_color_for_cycle(n: u64) -> GoodColor {
        if n.is_multiple_of(2) {
            GoodColor::Marked1
        } else {
            GoodColor::Marked0
        }
    }

    /// The view a pointer of this color is dereferenced through.
    pub fn view(self) -> View {
        match self {
            GoodColor::Marked0 => View::Marked0,
            GoodColor::Marked1 => View::Marked1,
            GoodColor::Remapped => View::Remapped,
        }
    }

    /// The other marking color (the one the previous cycle used).
    pub fn other_mark(self) -> GoodColor {
        match self {
            GoodColor::Marked0 => GoodColor::Marked1,
            GoodColor::Marked1 => GoodColor::Marked0,
            GoodColor::Remapped => GoodColor::Remapped,
        }
    }
}

/// One of the three virtual views of the heap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum View {
    Marked0,
    Marked1,
    Remapped,
}

impl View {
    /// All views, in address order.
    pub const ALL: [View; 3] = [View::Marked0, View::Marked1, View::Remapped];

    fn color(self) -> Color {
        match self {
            View::Marked0 => Color::MARKED0,
            View::Marked1 => Color::MARKED1,
            View::Remapped => Color::REMAPPED,
        }
    }
}

/// The address layout of one heap: how many offset bits, where the views are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct AddressLayout {
    offset_bits: u32,
}

impl AddressLayout {
    /// A layout with `offset_bits` (42, 43 or 44).
    ///
    /// # Panics
    /// If `offset_bits` is outside 42..=44 (a programming error; heap sizes are validated by
    /// [`crate::MemoryConfig`], which calls [`AddressLayout::for_max_heap`]).
    pub fn new(offset_bits: u32) -> Self {
        assert!(
            (MIN_OFFSET_BITS..=MAX_OFFSET_BITS).contains(&offset_bits),
            "offset bits must be 42..=44, got {offset_bits}"
        );
        AddressLayout { offset_bits }
    }

    /// Choose `S` for a maximum heap as ZGC does; `None` if the heap cannot fit in 44 bits.
    pub fn for_max_heap(max_heap: u64) -> Option<Self> {
        let needed = max_heap
            .checked_mul(VIRTUAL_TO_PHYSICAL_RATIO)?
            .checked_next_power_of_two()?;
        let bits = needed
            .trailing_zeros()
            .clamp(MIN_OFFSET_BITS, MAX_OFFSET_BITS);
        if max_heap > Self::heap_limit_for_bits(bits) {
            return None;
        }
        Some(AddressLayout::new(bits))
    }

    /// Largest heap a layout with `bits` offset bits can hold (the offset space itself).
    pub fn heap_limit_for_bits(bits: u32) -> u64 {
        1u64 << bits
    }

    /// Number of offset bits `S`.
    #[inline(always)]
    pub fn offset_bits(self) -> u32 {
        self.offset_bits
    }

    /// Size of the offset space (`1 << S`), the largest heap this layout can address.
    #[inline(always)]
    pub fn offset_space(self) -> u64 {
        1u64 << self.offset_bits
    }

    /// Mask of the offset bits.
    #[inline(always)]
    pub fn offset_mask(self) -> u64 {
        self.offset_space() - 1
    }

    /// Absolute pointer bits of a (relative) color.
    #[inline(always)]
    pub fn color_bits(self, color: Color) -> u64 {
        color.bits() << self.offset_bits
    }

    /// Mask of all four metadata bits.
    #[inline(always)]
    pub fn metadata_mask(self) -> u64 {
        self.color_bits(Color::all())
    }

    /// Pointer bits of the good color.
    #[inline(always)]
    pub fn good_mask(self, good: GoodColor) -> u64 {
        self.color_bits(good.color())
    }

    /// Pointer bits that make a pointer bad when `good` is the good color.
    #[inline(always)]
    pub fn bad_mask(self, good: GoodColor) -> u64 {
        self.good_mask(good) ^ self.metadata_mask()
    }

    /// Base address of a view: the address of offset 0 in it.
    #[inline(always)]
    pub fn view_base(self, view: View) -> Address {
        Address::from_raw(self.color_bits(view.color()))
    }

    /// The address of `offset` in `view`.
    #[inline(always)]
    pub fn address(self, offset: Offset, view: View) -> Address {
        debug_assert!(
            offset.raw() <= self.offset_mask(),
            "offset {offset:?} out of range"
        );
        Address::from_raw(offset.raw() | self.color_bits(view.color()))
    }

    /// The offset an address in one of the views points at (the view bits dropped).
    #[inline(always)]
    pub fn address_offset(self, addr: Address) -> Offset {
        Offset::from_raw(addr.raw() & self.offset_mask())
    }

    /// The address a dereferenceable pointer (exactly one view color, see
    /// [`Self::is_dereferenceable`], asserted in debug builds) denotes: the pointer word
    /// itself, since each view lies at its color bit.
    #[inline(always)]
    pub fn view_address(self, ptr: ColoredPtr) -> Address {
        debug_assert!(
            self.is_dereferenceable(ptr),
            "{ptr:?} is not dereferenceable"
        );
        Address::from_raw(ptr.raw())
    }

    /// The offset part of a pointer.
    #[inline(always)]
    pub fn offset(self, ptr: ColoredPtr) -> Offset {
        Offset::from_raw(ptr.raw() & self.offset_mask())
    }

    /// The color part of a pointer (relative bits).
    #[inline(always)]
    pub fn color(self, ptr: ColoredPtr) -> Color {
        Color::from_bits_truncate((ptr.raw() & self.metadata_mask()) >> self.offset_bits)
    }

    /// A pointer to `offset` with exactly `color`.
    #[inline(always)]
    pub fn with_color(self, offset: Offset, color: Color) -> ColoredPtr {
        debug_assert!(
            offset.raw() <= self.offset_mask(),
            "offset {offset:?} out of range"
        );
        ColoredPtr::from_raw(offset.raw() | self.color_bits(color))
    }

    /// A pointer to `offset` with the good color.
    #[inline(always)]
    pub fn good(self, offset: Offset, good: GoodColor) -> ColoredPtr {
        self.with_color(offset, good.color())
    }

    /// True if the pointer is non-null and has no bad bit (null is neither good nor bad).
    #[inline(always)]
    pub fn is_good(self, ptr: ColoredPtr, good: GoodColor) -> bool {
        !ptr.is_null() && ptr.raw() & self.bad_mask(good) == 0
    }

    /// True if the pointer carries a bad bit.
    #[inline(always)]
    pub fn is_bad(self, ptr: ColoredPtr, good: GoodColor) -> bool {
        ptr.raw() & self.bad_mask(good) != 0
    }

    /// True if the pointer has exactly one view color (so it is dereferenceable) and no bits
    /// outside the layout.
    pub fn is_dereferenceable(self, ptr: ColoredPtr) -> bool {
        let c = self.color(ptr);
        ptr.raw() >> (self.offset_bits + 4) == 0
            && (c == Color::MARKED0 || c == Color::MARKED1 || c == Color::REMAPPED)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;
    const TIB: u64 = 1 << 40;

    #[test]
    fn offset_bits_follow_the_max_heap() {
        assert_eq!(
            AddressLayout::for_max_heap(256 << 20)
                .unwrap()
                .offset_bits(),
            42
        );
        assert_eq!(
            AddressLayout::for_max_heap(256 * GIB)
                .unwrap()
                .offset_bits(),
            42
        );
        assert_eq!(
            AddressLayout::for_max_heap(512 * GIB)
                .unwrap()
                .offset_bits(),
            43
        );
        assert_eq!(AddressLayout::for_max_heap(TIB).unwrap().offset_bits(), 44);
        assert_eq!(
            AddressLayout::for_max_heap(16 * TIB).unwrap().offset_bits(),
            44
        );
        assert!(AddressLayout::for_max_heap(16 * TIB + 2 * (1 << 20)).is_none());
        assert!(AddressLayout::for_max_heap(u64::MAX / 2).is_none());
    }

    #[test]
    fn layout_and_masks_for_each_width() {
        for (s, m0, m1, rm, fin) in [
            (42u32, 4 * TIB, 8 * TIB, 16 * TIB, 32 * TIB),
            (43, 8 * TIB, 16 * TIB, 32 * TIB, 64 * TIB),
            (44, 16 * TIB, 32 * TIB, 64 * TIB, 128 * TIB),
        ] {
            let l = AddressLayout::new(s);
            assert_eq!(l.view_base(View::Marked0).raw(), m0);
            assert_eq!(l.view_base(View::Marked1).raw(), m1);
            assert_eq!(l.view_base(View::Remapped).raw(), rm);
            assert_eq!(l.color_bits(Color::FINALIZABLE), fin);
            let all = m0 | m1 | rm | fin;
            assert_eq!(l.metadata_mask(), all);
            assert_eq!(l.good_mask(GoodColor::Remapped), rm);
            assert_eq!(l.bad_mask(GoodColor::Remapped), m0 | m1 | fin);
            assert_eq!(l.bad_mask(GoodColor::Marked0), m1 | rm | fin);
            assert_eq!(l.bad_mask(GoodColor::Marked1), m0 | rm | fin);
            // Views never overlap and the highest view ends inside 47-bit user space.
            assert!(rm + l.offset_space() <= 1 << 47);
        }
    }

    #[test]
    fn cycle_colors_alternate_starting_with_marked1() {
        assert_eq!(GoodColor::mark_color_for_cycle(0), GoodColor::Marked1);
        assert_eq!(GoodColor::mark_color_for_cycle(1), GoodColor::Marked0);
        assert_eq!(GoodColor::mark_color_for_cycle(2), GoodColor::Marked1);
        assert_eq!(GoodColor::Marked0.other_mark(), GoodColor::Marked1);
    }

    #[test]
    fn null_is_neither_good_nor_bad() {
        let l = AddressLayout::new(42);
        for g in [GoodColor::Marked0, GoodColor::Marked1, GoodColor::Remapped] {
            assert!(!l.is_good(ColoredPtr::NULL, g));
            assert!(!l.is_bad(ColoredPtr::NULL, g));
        }
    }

    #[test]
    fn offsets_round_trip_through_pointers_and_addresses_for_each_width() {
        for s in MIN_OFFSET_BITS..=MAX_OFFSET_BITS {
            let l = AddressLayout::new(s);
            for raw in [0, 8, 0x20_0000, l.offset_mask() & !7, l.offset_mask()] {
                let off = Offset::from_raw(raw);
                for c in [
                    Color::MARKED0,
                    Color::MARKED1,
                    Color::REMAPPED,
                    Color::FINALIZABLE,
                    Color::REMAPPED | Color::FINALIZABLE,
                ] {
                    let p = l.with_color(off, c);
                    assert_eq!(l.offset(p), off, "S={s} {off:?} {c:?}");
                    assert_eq!(l.color(p), c);
                }
                for (g, v) in [
                    (GoodColor::Marked0, View::Marked0),
                    (GoodColor::Marked1, View::Marked1),
                    (GoodColor::Remapped, View::Remapped),
                ] {
                    let p = l.good(off, g);
                    assert_eq!(l.offset(p), off);
                    assert_eq!(l.color(p), g.color());
                    assert!(l.is_dereferenceable(p));
                    assert!(raw == 0 || l.is_good(p, g));
                    assert!(!l.is_bad(p, g));
                    assert!(l.is_bad(p, g.other_mark()) || g == GoodColor::Remapped);
                    // A good pointer is the address of its offset in the view of its color.
                    let a = l.address(off, v);
                    assert_eq!(l.view_address(p), a);
                    assert_eq!(l.address_offset(a), off);
                    assert_eq!(a.raw() - l.view_base(v).raw(), raw);
                }
                assert!(!l.is_dereferenceable(l.with_color(off, Color::FINALIZABLE)));
                assert!(!l.is_dereferenceable(l.with_color(off, Color::empty())));
            }
        }
    }
}
