//! Colored pointers and the address layout (ZGC's `zAddress` / `zGlobals` for x86-64).
//!
//! A heap reference is a 64-bit word: the object's *offset* in the low `S` bits, five metadata
//! ("color") bits above it, zeros above those. Four of the colors name a *view*: a virtual copy
//! of the whole heap at base address `1 << bit`, all aliasing the same physical memory, so a
//! pointer of any of those colors can be dereferenced as it is, without masking.
//!
//! ```text
//!  63          S+5  S+4  S+3  S+2  S+1   S                                   0
//!  +-------------+----+----+----+----+----+-----------------------------------+
//!  | 0 0 ... 0 0 | F  | M2 | R  | M1 | M0 |        heap offset (S bits)       |
//!  +-------------+----+----+----+----+----+-----------------------------------+
//!                  |    |    |    |    |
//!                  |    |    |    |    +-- Marked0     view at 1 << S       (S=42: 4 TiB)
//!                  |    |    |    +------- Marked1     view at 1 << (S+1)   (S=42: 8 TiB)
//!                  |    |    +------------ Remapped    view at 1 << (S+2)   (S=42: 16 TiB)
//!                  |    +----------------- Marked2     view at 1 << (S+3)   (S=42: 32 TiB)
//!                  +---------------------- Finalizable no view: never dereferenced
//!
//!  virtual address space (S = 42, user space ends at 128 TiB):
//!   0 ...... 4 TiB ...... 8 TiB ...... 12 TiB ... 16 TiB ..... 20 TiB ... 32 TiB ..... 36 TiB
//!   | program | Marked0 view | Marked1 view | (unused) | Remapped view | (unused) | Marked2 view |
//! ```
//!
//! Marked2 is the third mark color: a generational mode's young and full cycles each need a
//! mark color that is neither the previous cycle's nor the last full cycle's (three colors
//! always leave one; [`crate::mark_color_rule`]). With full cycles only, two are eligible: by
//! default Marked0 and Marked1 alternate and nothing reads or writes through the Marked2
//! view (reserved and mapped like the others); a heap set to rotate the colors marks every
//! third cycle with Marked2.
//!
//! `S` is chosen from the maximum heap as ZGC does: the heap needs 16x its size in virtual
//! space (so pages can be placed without defragmenting), hence
//! `S = clamp(log2(next_pow2(max_heap * 16)), 42, 43)`. 43 is the limit: with 44 the Marked2
//! view would end past 47-bit user space, and a colored pointer (S + 5 bits) would no longer
//! fit in a value slot's 48-bit payload (`crate::value`).
//!
//! The *good* color changes with the GC phase (table below); every other color bit is *bad*
//! (`bad = good ^ 0b11111`). The load barrier tests a loaded pointer against the bad mask.
//!
//! | phase                          | good           | bad (F M2 R M1 M0) |
//! |--------------------------------|----------------|--------------------|
//! | between cycles, relocation     | Remapped 00100 | 11011              |
//! | marking in GC(n), n even       | Marked1 00010  | 11101              |
//! | marking in GC(n), n odd        | Marked0 00001  | 11110              |
//! | marking with the third color   | Marked2 01000  | 10111              |
//!
//! (The GC(n) rows are the default alternation; rotating colors mark GC(2), GC(5), ... with
//! Marked2.)
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
use serde::{Deserialize, Serialize};

/// Smallest number of offset bits (4 TiB heap limit).
pub const MIN_OFFSET_BITS: u32 = 42;
/// Largest number of offset bits (8 TiB heap limit).
pub const MAX_OFFSET_BITS: u32 = 43;
/// Number of metadata (color) bits above the offset.
pub const COLOR_BITS: u32 = 5;
/// Virtual space reserved per byte of maximum heap (ZGC's `ZVirtualToPhysicalRatio`).
pub const VIRTUAL_TO_PHYSICAL_RATIO: u64 = 16;

bitflags! {
    /// The five metadata bits of a colored pointer, *relative* to the offset width
    /// (bit 0 here is bit `S` of the pointer).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub struct Color: u64 {
        const MARKED0 = 0b00001;
        const MARKED1 = 0b00010;
        const REMAPPED = 0b00100;
        const MARKED2 = 0b01000;
        const FINALIZABLE = 0b10000;
    }
}

/// The four colors that can be *good*: a mark color while marking (chosen by
/// [`crate::MarkColorRule`]: by default Marked0 and Marked1 alternate from cycle to cycle;
/// Marked2 is the third), Remapped while relocating and between cycles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum GoodColor {
    /// Marking in GC(n) for odd n: GC(1), GC(3), ...
    Marked0,
    /// Marking in GC(n) for even n: GC(0), GC(2), ... (GC(0) uses Marked1, as ZGC).
    Marked1,
    /// The third mark color: used when the colors rotate, and by a generational mode (see
    /// the module documentation).
    Marked2,
    /// Between cycles and during relocation.
    Remapped,
}

impl GoodColor {
    /// The color bit of this good color.
    pub fn color(self) -> Color {
        match self {
            GoodColor::Marked0 => Color::MARKED0,
            GoodColor::Marked1 => Color::MARKED1,
            GoodColor::Marked2 => Color::MARKED2,
            GoodColor::Remapped => Color::REMAPPED,
        }
    }

    /// The marking color of GC cycle `n` when the colors alternate (the default
    /// [`crate::ColorChoice::Alternate`] with full cycles only): GC(0) marks with Marked1,
    /// GC(1) with Marked0, ... The runtime asks [`crate::MarkColorRule`], which gives the same.
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
            GoodColor::Marked2 => View::Marked2,
            GoodColor::Remapped => View::Remapped,
        }
    }

    /// The other marking color of the two-color alternation (the one the previous cycle
    /// used, when cycles alternate Marked0 and Marked1). Marked2 and Remapped are no part of
    /// the alternation and give themselves: the runtime does not use this, it keeps the
    /// previous cycle's color itself ([`crate::MarkColorRule::previous`]).
    pub fn other_mark(self) -> GoodColor {
        match self {
            GoodColor::Marked0 => GoodColor::Marked1,
            GoodColor::Marked1 => GoodColor::Marked0,
            GoodColor::Marked2 => GoodColor::Marked2,
            GoodColor::Remapped => GoodColor::Remapped,
        }
    }
}

/// One of the four virtual views of the heap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum View {
    Marked0,
    Marked1,
    Remapped,
    /// The generational mode's third mark color's view (reserved and mapped in every heap).
    Marked2,
}

impl View {
    /// All views, in address order.
    pub const ALL: [View; 4] = [View::Marked0, View::Marked1, View::Remapped, View::Marked2];

    /// The highest view: the end of the heap's address space.
    pub const HIGHEST: View = View::Marked2;

    fn color(self) -> Color {
        match self {
            View::Marked0 => Color::MARKED0,
            View::Marked1 => Color::MARKED1,
            View::Remapped => Color::REMAPPED,
            View::Marked2 => Color::MARKED2,
        }
    }

    /// This view's position in [`View::ALL`] (0..4), for per-view arrays.
    pub fn index(self) -> usize {
        match self {
            View::Marked0 => 0,
            View::Marked1 => 1,
            View::Remapped => 2,
            View::Marked2 => 3,
        }
    }
}

/// The address layout of one heap: how many offset bits, where the views are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct AddressLayout {
    offset_bits: u32,
}

impl AddressLayout {
    /// A layout with `offset_bits` (42 or 43).
    ///
    /// # Panics
    /// If `offset_bits` is outside 42..=43 (a programming error; heap sizes are validated by
    /// [`crate::MemoryConfig`], which calls [`AddressLayout::for_max_heap`]).
    pub fn new(offset_bits: u32) -> Self {
        assert!(
            (MIN_OFFSET_BITS..=MAX_OFFSET_BITS).contains(&offset_bits),
            "offset bits must be 42..=43, got {offset_bits}"
        );
        AddressLayout { offset_bits }
    }

    /// Choose `S` for a maximum heap as ZGC does; `None` if the heap cannot fit in 43 bits.
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

    /// Mask of all five metadata bits.
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
        ptr.raw() >> (self.offset_bits + COLOR_BITS) == 0
            && (c == Color::MARKED0
                || c == Color::MARKED1
                || c == Color::REMAPPED
                || c == Color::MARKED2)
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
        assert_eq!(AddressLayout::for_max_heap(TIB).unwrap().offset_bits(), 43);
        assert_eq!(
            AddressLayout::for_max_heap(8 * TIB).unwrap().offset_bits(),
            43
        );
        assert!(AddressLayout::for_max_heap(8 * TIB + 2 * (1 << 20)).is_none());
        assert!(AddressLayout::for_max_heap(u64::MAX / 2).is_none());
    }

    #[test]
    fn layout_and_masks_for_each_width() {
        for (s, m0, m1, rm, m2, fin) in [
            (42u32, 4 * TIB, 8 * TIB, 16 * TIB, 32 * TIB, 64 * TIB),
            (43, 8 * TIB, 16 * TIB, 32 * TIB, 64 * TIB, 128 * TIB),
        ] {
            let l = AddressLayout::new(s);
            assert_eq!(l.view_base(View::Marked0).raw(), m0);
            assert_eq!(l.view_base(View::Marked1).raw(), m1);
            assert_eq!(l.view_base(View::Remapped).raw(), rm);
            assert_eq!(l.view_base(View::Marked2).raw(), m2);
            assert_eq!(l.color_bits(Color::FINALIZABLE), fin);
            let all = m0 | m1 | rm | m2 | fin;
            assert_eq!(l.metadata_mask(), all);
            assert_eq!(l.good_mask(GoodColor::Remapped), rm);
            assert_eq!(l.bad_mask(GoodColor::Remapped), m0 | m1 | m2 | fin);
            assert_eq!(l.bad_mask(GoodColor::Marked0), m1 | rm | m2 | fin);
            assert_eq!(l.bad_mask(GoodColor::Marked1), m0 | rm | m2 | fin);
            assert_eq!(l.bad_mask(GoodColor::Marked2), m0 | m1 | rm | fin);
            // Views never overlap and the highest view ends inside 47-bit user space.
            assert!(l.view_base(View::HIGHEST).raw() + l.offset_space() <= 1 << 47);
            // A colored pointer fits in a value slot's 48-bit payload.
            assert!(all < 1 << 48);
        }
        for (i, v) in View::ALL.iter().enumerate() {
            assert_eq!(v.index(), i);
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
        for g in [
            GoodColor::Marked0,
            GoodColor::Marked1,
            GoodColor::Marked2,
            GoodColor::Remapped,
        ] {
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
                    Color::MARKED2,
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
                    (GoodColor::Marked2, View::Marked2),
                    (GoodColor::Remapped, View::Remapped),
                ] {
                    let p = l.good(off, g);
                    assert_eq!(l.offset(p), off);
                    assert_eq!(l.color(p), g.color());
                    assert!(l.is_dereferenceable(p));
                    assert!(raw == 0 || l.is_good(p, g));
                    assert!(!l.is_bad(p, g));
                    assert!(
                        l.is_bad(p, g.other_mark())
                            || matches!(g, GoodColor::Remapped | GoodColor::Marked2)
                    );
                    // Every other good color finds this pointer bad.
                    for other in [
                        GoodColor::Marked0,
                        GoodColor::Marked1,
                        GoodColor::Marked2,
                        GoodColor::Remapped,
                    ] {
                        assert_eq!(l.is_bad(p, other), other != g, "{g:?} under {other:?}");
                    }
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
