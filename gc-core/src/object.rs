//! Object layout: pointer-first, so the collector traces without type maps.
//!
//! ```text
//!  +0          +4           +8                      +16       +16+8N       +16+8(N+V)
//!  | shape:u32 | n_refs:u32 | n_bytes:40 n_values:24 | N slots | V values | raw bytes, padded to 8 |
//! ```
//!
//! The header holds the embedder's shape id, the number of reference slots `N`, the raw
//! byte length and the number of value slots `V` (the top 24 bits of the second word); the
//! heap knows nothing else about types. Each reference slot is a [`ColoredSlot`] holding a
//! colored pointer or null; each value slot a [`ValueSlot`] holding a NaN-boxed
//! [`crate::ValueWord`], a number, an immediate or a colored pointer ([`crate::value`]). No GC state lives in the header: mark bits are in the
//! page's live map and forwarding in the page's forwarding entries (ZGC keeps headers free of
//! GC state too).
//!
//! An [`Object`] is a view of one object at an [`Address`]. The collector finds objects by
//! [`Offset`]; [`Object::at`] is the one way from an offset to an object, through the Remapped
//! view (all the views alias the same memory, so any would do; the collector uses the
//! Remapped one throughout). A good pointer loaded through the barrier is an address already
//! ([`crate::AddressLayout::view_address`]) and goes through [`Object::from_addr`].

use crate::address::{AddressLayout, View};
use crate::error::AllocError;
use crate::value::ValueSlot;
use crate::word::{Address, ColoredSlot, Offset};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes of the object header.
pub const HEADER_SIZE: u64 = 16;
/// Largest number of reference slots in one object.
pub const MAX_REFS: u64 = u32::MAX as u64;
/// Largest number of value slots in one object (24 bits of the header).
pub const MAX_VALUES: u64 = (1 << 24) - 1;
/// Largest number of raw bytes in one object (40 bits of the header: 1 TiB).
pub const MAX_BYTES: u64 = (1 << 40) - 1;
/// Where the value-slot count sits in the header's second word.
const VALUES_SHIFT: u32 = 40;

/// The decoded header of an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObjectHeader {
    /// The embedder's class/shape id.
    pub shape: u32,
    /// Number of reference slots.
    pub n_refs: u32,
    /// Number of raw bytes after the slots (at most [`MAX_BYTES`]).
    pub n_bytes: u64,
    /// Number of value slots after the reference slots (at most [`MAX_VALUES`]).
    pub n_values: u32,
}

impl ObjectHeader {
    /// Total object size in bytes (8-byte aligned).
    #[inline]
    pub fn size(&self) -> u64 {
        HEADER_SIZE + 8 * (self.n_refs as u64 + self.n_values as u64) + self.n_bytes.div_ceil(8) * 8
    }

    /// The header's two words.
    #[inline(always)]
    fn words(&self) -> [u64; 2] {
        debug_assert!(self.n_bytes <= MAX_BYTES && self.n_values as u64 <= MAX_VALUES);
        [
            (self.shape as u64) | ((self.n_refs as u64) << 32),
            self.n_bytes | ((self.n_values as u64) << VALUES_SHIFT),
        ]
    }
}

/// Size of an object with `n_refs` slots and `n_bytes` raw bytes, checked for overflow.
#[inline]
pub fn object_size(n_refs: u64, n_bytes: u64) -> Result<u64, AllocError> {
    object_size_with_values(n_refs, 0, n_bytes)
}

/// Size of an object with `n_refs` reference slots, `n_values` value slots and `n_bytes` raw
/// bytes, checked against the header's limits and for overflow.
#[inline]
pub fn object_size_with_values(
    n_refs: u64,
    n_values: u64,
    n_bytes: u64,
) -> Result<u64, AllocError> {
    if n_values > MAX_VALUES {
        return Err(AllocError::TooManyValueSlots {
            n_values,
            max: MAX_VALUES,
        });
    }
    // The raw bytes above `MAX_BYTES` do not fit the header (and no heap holds them).
    let overflow = AllocError::ObjectSizeOverflow { n_refs, n_bytes };
    if n_refs > MAX_REFS || n_bytes > MAX_BYTES {
        return Err(overflow);
    }
    (n_refs + n_values)
        .checked_mul(8)
        .and_then(|r| r.checked_add(HEADER_SIZE))
        .and_then(|r| r.checked_add(n_bytes.checked_add(7)? / 8 * 8))
        .ok_or(overflow)
}

/// An object in a mapped view of the heap. Cheap to copy; valid as long as the memory stays
/// mapped and the object is not freed, which the constructor's caller guarantees.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Object {
    addr: NonNull<u8>,
}

// SAFETY: an `Object` is an address into shared heap memory; every access to its slots and
// raw bytes through this type is atomic (relaxed words for the raw bytes), the header is
// written before the object is published and never changes, and the collector's non-atomic
// whole-object copies (`copy_to`) only read objects no thread writes (from-space objects are
// never written during relocation: a mutator writes an object only after its barrier
// relocated it).
unsafe impl Send for Object {}
// SAFETY: as above.
unsafe impl Sync for Object {}

impl Object {
    /// View the object at `addr`.
    ///
    /// # Safety
    /// `addr` is the 8-byte aligned, dereferenceable address of an initialized object (its
    /// header written by [`Object::init`] and visible to this thread), whose memory stays
    /// mapped, and is not reused for another object, while the returned value is used.
    #[inline(always)]
    pub unsafe fn from_addr(addr: Address) -> Object {
        debug_assert!(
            addr.raw() != 0 && addr.raw().is_multiple_of(8),
            "bad object address {addr:?}"
        );
        Object {
            // SAFETY: non-null by the caller's contract (asserted in debug builds).
            addr: unsafe { NonNull::new_unchecked(addr.as_ptr()) },
        }
    }

    /// The object at offset `off` of the heap laid out by `layout`, seen through the
    /// Remapped view.
    ///
    /// # Safety
    /// - `layout` is the layout of the heap (the [`crate::PageAllocator`]) one of whose
    ///   allocated pages holds `off`, so `layout.address(off, View::Remapped)` is mapped;
    /// - an object starts at `off`: its header was written by [`Object::init`] and that write
    ///   is visible to this thread (it was published to it, or a pause lies between);
    /// - the page is not freed (its memory stays mapped and is not reused) while the returned
    ///   value, or anything borrowed from it, is used.
    #[inline(always)]
    pub unsafe fn at(layout: AddressLayout, off: Offset) -> Object {
        // SAFETY: `off` is an initialized object on a mapped page of this layout's heap, which
        // stays mapped while the result is used (caller's contract); objects are 8-byte
        // aligned on every page kind and the view base is granule aligned.
        unsafe { Object::from_addr(layout.address(off, View::Remapped)) }
    }

    /// Write a header and zero the slots and raw bytes at `addr`.
    ///
    /// # Safety
    /// `addr` is 8-byte aligned and `addr..addr + header.size()` is mapped, writable memory
    /// that no one else uses (freshly bump-allocated, e.g. at
    /// `layout.address(page.alloc_private(size)?, View::Remapped)`).
    #[inline]
    pub unsafe fn init(addr: Address, header: ObjectHeader) -> Object {
        let p: *mut u64 = addr.as_ptr();
        // SAFETY: the caller owns the freshly allocated, mapped range of `header.size()` bytes.
        unsafe {
            let [w0, w1] = header.words();
            p.write(w0);
            p.add(1).write(w1);
            std::ptr::write_bytes(p.add(2), 0, ((header.size() - HEADER_SIZE) / 8) as usize);
            Object::from_addr(addr)
        }
    }

    /// Write a header at `addr` over slots and raw bytes already zeroed (a large object zeroed
    /// in chunks before it was published).
    ///
    /// # Safety
    /// As [`Object::init`], and `addr + HEADER_SIZE..addr + header.size()` holds only zero
    /// bytes, written by the caller or before the memory was handed to it.
    pub unsafe fn init_over_zeroed(addr: Address, header: ObjectHeader) -> Object {
        let p: *mut u64 = addr.as_ptr();
        // SAFETY: the caller owns the freshly allocated, mapped range; the rest of it is zero.
        unsafe {
            let [w0, w1] = header.words();
            p.write(w0);
            p.add(1).write(w1);
            Object::from_addr(addr)
        }
    }

    /// The address this object is viewed at.
    #[inline(always)]
    pub fn addr(self) -> Address {
        Address::from_ptr(self.addr.as_ptr())
    }

    #[inline(always)]
    fn word(self, i: usize) -> u64 {
        // SAFETY: the header words are inside the object (from_addr's contract); headers are
        // written before the object is published and never change afterwards.
        unsafe { (self.addr.as_ptr() as *const u64).add(i).read() }
    }

    /// The decoded header.
    #[inline]
    pub fn header(self) -> ObjectHeader {
        let (w0, w1) = (self.word(0), self.word(1));
        ObjectHeader {
            shape: w0 as u32,
            n_refs: (w0 >> 32) as u32,
            n_bytes: w1 & MAX_BYTES,
            n_values: (w1 >> VALUES_SHIFT) as u32,
        }
    }

    /// The embedder's shape id.
    #[inline]
    pub fn shape(self) -> u32 {
        self.word(0) as u32
    }

    /// Number of reference slots.
    #[inline]
    pub fn n_refs(self) -> usize {
        (self.word(0) >> 32) as usize
    }

    /// Number of raw bytes.
    #[inline]
    pub fn n_bytes(self) -> usize {
        (self.word(1) & MAX_BYTES) as usize
    }

    /// Number of value slots.
    #[inline]
    pub fn n_values(self) -> usize {
        (self.word(1) >> VALUES_SHIFT) as usize
    }

    /// Number of reference and value slots: the words between the header and the raw bytes.
    #[inline(always)]
    fn n_slot_words(self) -> usize {
        self.n_refs() + self.n_values()
    }

    /// Total size in bytes.
    #[inline]
    pub fn size(self) -> u64 {
        self.header().size()
    }

    /// Reference slot `i` (panics if out of range).
    #[inline]
    pub fn ref_slot(&self, i: usize) -> &ColoredSlot {
        let n_refs = self.n_refs();
        if i >= n_refs {
            slot_out_of_range(i, n_refs);
        }
        // SAFETY: `i` is in range, slots are 8-byte aligned words inside the object, and
        // ColoredSlot (repr(transparent) over AtomicU64) has the layout of u64.
        unsafe { &*(self.addr.as_ptr().add(HEADER_SIZE as usize + 8 * i) as *const ColoredSlot) }
    }

    /// All reference slots.
    #[inline]
    pub fn ref_slots(&self) -> &[ColoredSlot] {
        // SAFETY: the slot array lies inside the object; see `ref_slot`.
        unsafe {
            std::slice::from_raw_parts(
                self.addr.as_ptr().add(HEADER_SIZE as usize) as *const ColoredSlot,
                self.n_refs(),
            )
        }
    }

    /// Value slot `i` (panics if out of range).
    #[inline]
    pub fn value_slot(&self, i: usize) -> &ValueSlot {
        let n_values = self.n_values();
        if i >= n_values {
            value_out_of_range(i, n_values);
        }
        // SAFETY: `i` is in range, value slots are 8-byte aligned words inside the object
        // right after the `n_refs` reference slots, and ValueSlot (repr(transparent) over
        // AtomicU64) has the layout of u64.
        unsafe {
            &*(self
                .addr
                .as_ptr()
                .add(HEADER_SIZE as usize + 8 * (self.n_refs() + i))
                as *const ValueSlot)
        }
    }

    /// All value slots.
    #[inline]
    pub fn value_slots(&self) -> &[ValueSlot] {
        // SAFETY: the value slot array lies inside the object, right after the reference
        // slots; see `value_slot`.
        unsafe {
            std::slice::from_raw_parts(
                self.addr
                    .as_ptr()
                    .add(HEADER_SIZE as usize + 8 * self.n_refs())
                    as *const ValueSlot,
                self.n_values(),
            )
        }
    }

    /// The raw area's words (the raw area starts 8-byte aligned, right after the slots).
    #[inline(always)]
    fn raw_words(&self) -> &[AtomicU64] {
        // SAFETY: the raw area lies inside the object, starts 8-byte aligned after the
        // reference and value slots and holds `n_bytes` rounded up to whole words; AtomicU64 has the layout of u64.
        unsafe {
            std::slice::from_raw_parts(
                self.addr
                    .as_ptr()
                    .add(HEADER_SIZE as usize + 8 * self.n_slot_words())
                    as *const AtomicU64,
                self.n_bytes().div_ceil(8),
            )
        }
    }

    /// The raw word at 8-aligned byte `offset` (panics if out of range): one range check, where
    /// indexing [`Self::raw_words`] after [`Self::check_range`] would make two.
    #[inline(always)]
    fn raw_word(&self, offset: usize) -> &AtomicU64 {
        debug_assert!(offset.is_multiple_of(8));
        self.check_range(offset, 8);
        // SAFETY: `check_range` gave `offset + 8 <= n_bytes`, and the raw area, which starts
        // 8-byte aligned right after the `n_refs + n_values` slots and holds `n_bytes` rounded up to whole
        // words, lies inside the object (see `raw_words`); `offset` is 8-aligned, so the word
        // is one of the area's words; AtomicU64 has the layout of u64.
        unsafe {
            &*(self
                .addr
                .as_ptr()
                .add(HEADER_SIZE as usize + 8 * self.n_slot_words() + offset)
                as *const AtomicU64)
        }
    }

    #[inline(always)]
    fn check_range(self, offset: usize, len: usize) {
        let n_bytes = self.n_bytes();
        match offset.checked_add(len) {
            Some(end) if end <= n_bytes => {}
            _ => bytes_out_of_range(offset, len, n_bytes),
        }
    }

    /// Copy raw bytes `[offset, offset + out.len())` into `out` (panics if out of range).
    ///
    /// Raw bytes are read and written as relaxed atomic 64-bit words, so threads that share
    /// an object (through a `Global`) may race on its bytes without undefined behaviour, as
    /// Java gives racy fields defined behaviour: each word read is one that some write stored.
    #[inline]
    pub fn read_bytes(self, offset: usize, out: &mut [u8]) {
        self.check_range(offset, out.len());
        let words = self.raw_words();
        let (mut w, b) = (offset / 8, offset % 8);
        let mut out = out;
        if b != 0 && !out.is_empty() {
            let n = (8 - b).min(out.len());
            let word = words[w].load(Ordering::Relaxed).to_ne_bytes();
            out[..n].copy_from_slice(&word[b..b + n]);
            out = &mut out[n..];
            w += 1;
        }
        let mut chunks = out.chunks_exact_mut(8);
        for (chunk, word) in (&mut chunks).zip(&words[w..]) {
            chunk.copy_from_slice(&word.load(Ordering::Relaxed).to_ne_bytes());
            w += 1;
        }
        let tail = chunks.into_remainder();
        if !tail.is_empty() {
            let word = words[w].load(Ordering::Relaxed).to_ne_bytes();
            let n = tail.len();
            tail.copy_from_slice(&word[..n]);
        }
    }

    /// Write raw bytes at `offset` (panics if out of range). Whole words are stored; a partial
    /// word is merged with a CAS, so bytes of the same word written by another thread are
    /// never lost.
    #[inline]
    pub fn write_bytes(self, offset: usize, data: &[u8]) {
        self.check_range(offset, data.len());
        let words = self.raw_words();
        let (mut w, b) = (offset / 8, offset % 8);
        let mut data = data;
        if b != 0 && !data.is_empty() {
            let n = (8 - b).min(data.len());
            merge(&words[w], b, &data[..n]);
            data = &data[n..];
            w += 1;
        }
        let mut chunks = data.chunks_exact(8);
        for (chunk, word) in (&mut chunks).zip(&words[w..]) {
            let mut v = [0u8; 8];
            v.copy_from_slice(chunk);
            word.store(u64::from_ne_bytes(v), Ordering::Relaxed);
            w += 1;
        }
        let tail = chunks.remainder();
        if !tail.is_empty() {
            merge(&words[w], 0, tail);
        }
    }

    /// Read a little-endian u64 from the raw bytes (one atomic load when 8-byte aligned).
    #[inline(always)]
    pub fn read_u64(self, offset: usize) -> u64 {
        if offset.is_multiple_of(8) {
            return u64::from_le(self.raw_word(offset).load(Ordering::Relaxed));
        }
        let mut b = [0u8; 8];
        self.read_bytes(offset, &mut b);
        u64::from_le_bytes(b)
    }

    /// Write a little-endian u64 into the raw bytes (one atomic store when 8-byte aligned).
    #[inline(always)]
    pub fn write_u64(self, offset: usize, v: u64) {
        if offset.is_multiple_of(8) {
            self.raw_word(offset).store(v.to_le(), Ordering::Relaxed);
            return;
        }
        self.write_bytes(offset, &v.to_le_bytes())
    }

    /// Copy the whole object (header, slots, bytes) to `to`.
    ///
    /// # Safety
    /// `to` is 8-byte aligned, `to..to + self.size()` is mapped memory reserved for the copy
    /// (e.g. `layout.address(to_page.alloc_shared(size)?, View::Remapped)`), not overlapping
    /// `self`, and no thread writes `self` during the copy (from-space objects are never
    /// written during relocation).
    #[inline]
    pub unsafe fn copy_to(self, to: Address) -> Object {
        let size = self.size() as usize;
        // SAFETY: both ranges are mapped and disjoint (caller's contract); the copy carries an
        // initialized header, so `to` is an initialized object afterwards.
        unsafe {
            copy_object_bytes(self.addr.as_ptr(), to.as_ptr::<u8>(), size);
            Object::from_addr(to)
        }
    }
}

/// Copy an object's `size` bytes (a multiple of 8, at least [`HEADER_SIZE`]) from `src` to
/// `dst`. Up to 64 bytes — most objects a relocation copies — in line, with 16-byte loads and
/// stores that overlap in the middle when the size is not 32 or 64: a call to `memcpy` and its
/// dispatch on the size cost as many instructions as the rest of a small object's relocation.
///
/// # Safety
/// `src..src + size` is readable and `dst..dst + size` writable, and they do not overlap.
#[inline(always)]
unsafe fn copy_object_bytes(src: *const u8, dst: *mut u8, size: usize) {
    debug_assert!(size >= HEADER_SIZE as usize);
    #[cfg(target_arch = "x86_64")]
    if size <= 64 {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_storeu_si128};
        let (s, d) = (src.cast::<__m128i>(), dst.cast::<__m128i>());
        // SAFETY: every 16-byte chunk lies in both ranges: `16 <= size` (a header at least),
        // and the middle pair only when `32 < size`; the ranges do not overlap (the caller's
        // contract); SSE2 is part of x86_64, and these loads and stores need no alignment.
        unsafe {
            let a = _mm_loadu_si128(s);
            let b = _mm_loadu_si128(src.add(size - 16).cast());
            if size > 32 {
                let c = _mm_loadu_si128(s.add(1));
                let e = _mm_loadu_si128(src.add(size - 32).cast());
                _mm_storeu_si128(d.add(1), c);
                _mm_storeu_si128(dst.add(size - 32).cast(), e);
            }
            _mm_storeu_si128(d, a);
            _mm_storeu_si128(dst.add(size - 16).cast(), b);
        }
        return;
    }
    // SAFETY: the caller's contract.
    unsafe { std::ptr::copy_nonoverlapping(src, dst, size) }
}

/// Store `bytes` at byte `at` of `word`, keeping its other bytes (a CAS loop, so a
/// concurrent write to the other bytes of the word is not undone).
#[inline]
fn merge(word: &AtomicU64, at: usize, bytes: &[u8]) {
    let mut cur = word.load(Ordering::Relaxed);
    loop {
        let mut v = cur.to_ne_bytes();
        v[at..at + bytes.len()].copy_from_slice(bytes);
        match word.compare_exchange_weak(
            cur,
            u64::from_ne_bytes(v),
            Ordering::Relaxed,
            Ordering::Relaxed,
        ) {
            Ok(_) => return,
            Err(now) => cur = now,
        }
    }
}

/// The panic of an out-of-range slot index (cold and out of line: an accessor's check is a
/// compare and a branch, with nothing spilled for the message).
#[cold]
#[inline(never)]
fn slot_out_of_range(i: usize, n_refs: usize) -> ! {
    panic!("slot {i} out of range ({n_refs} slots)")
}

/// The panic of an out-of-range value slot index (see [`slot_out_of_range`]).
#[cold]
#[inline(never)]
fn value_out_of_range(i: usize, n_values: usize) -> ! {
    panic!("value slot {i} out of range ({n_values} value slots)")
}

/// The panic of an out-of-range raw byte range (see [`slot_out_of_range`]).
#[cold]
#[inline(never)]
fn bytes_out_of_range(offset: usize, len: usize, n_bytes: usize) -> ! {
    match offset.checked_add(len) {
        Some(end) => panic!("raw bytes {offset}..{end} out of range ({n_bytes})"),
        None => panic!("range overflow"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_round_and_check_overflow() {
        assert_eq!(object_size(0, 0).unwrap(), 16);
        assert_eq!(object_size(3, 1).unwrap(), 16 + 24 + 8);
        assert_eq!(object_size(0, 8).unwrap(), 24);
        assert!(object_size(MAX_REFS + 1, 0).is_err());
        assert!(object_size(0, u64::MAX).is_err());
    }

    #[test]
    fn copies_of_every_small_size_are_exact() {
        // Every size the in-line copy handles (16..=64) and the first ones past it, at an
        // unaligned-to-16 destination: the copy equals the source and writes nothing beyond.
        for n_bytes in (0..=112u64).step_by(8) {
            let h = ObjectHeader {
                shape: 9,
                n_refs: 0,
                n_bytes,
                n_values: 0,
            };
            let size = h.size() as usize;
            let mut src = vec![0u64; 24];
            let mut dst = [u64::MAX; 24];
            // SAFETY: `src` has 192 bytes, room for the largest (128-byte) object here.
            let o = unsafe { Object::init(Address::from_ptr(src.as_mut_ptr()), h) };
            let pattern: Vec<u8> = (0..n_bytes).map(|i| i as u8 ^ 0x5a).collect();
            o.write_bytes(0, &pattern);
            let to = Address::from_ptr(dst[1..].as_mut_ptr());
            // SAFETY: `dst[1..]` has 184 bytes, more than `size`, and does not overlap `src`.
            let c = unsafe { o.copy_to(to) };
            assert_eq!(c.header(), h);
            let mut out = vec![0u8; n_bytes as usize];
            c.read_bytes(0, &mut out);
            assert_eq!(out, pattern, "size {size}");
            assert_eq!(dst[0], u64::MAX, "size {size}: wrote before the copy");
            assert!(
                dst[1 + size / 8..].iter().all(|&w| w == u64::MAX),
                "size {size}: wrote past the copy"
            );
            drop(src);
        }
    }

    #[test]
    fn header_slots_and_bytes_in_plain_memory() {
        let mut buf = vec![0xffu64; 16];
        let addr = Address::from_ptr(buf.as_mut_ptr());
        let h = ObjectHeader {
            shape: 7,
            n_refs: 2,
            n_bytes: 12,
            n_values: 0,
        };
        // SAFETY: `buf` has 128 bytes, enough for this 48-byte object, and lives to the end.
        let o = unsafe { Object::init(addr, h) };
        assert_eq!(o.header(), h);
        assert_eq!(o.size(), 48);
        assert_eq!(o.ref_slots().len(), 2);
        assert!(o
            .ref_slots()
            .iter()
            .all(|s| s.load(Ordering::Relaxed).is_null()));
        assert!(std::ptr::eq(o.ref_slot(1), &o.ref_slots()[1]));
        assert_eq!(
            o.ref_slot(1) as *const ColoredSlot as u64,
            addr.raw() + HEADER_SIZE + 8
        );
        o.write_bytes(4, &[1, 2, 3]);
        let mut out = [0u8; 12];
        o.read_bytes(0, &mut out);
        assert_eq!(out, [0, 0, 0, 0, 1, 2, 3, 0, 0, 0, 0, 0]);
        drop(buf);
    }

    #[test]
    fn value_slots_lie_between_the_references_and_the_bytes() {
        use crate::value::ValueWord;
        let mut buf = vec![0xffu64; 16];
        let addr = Address::from_ptr(buf.as_mut_ptr());
        let h = ObjectHeader {
            shape: 9,
            n_refs: 2,
            n_bytes: 9,
            n_values: 3,
        };
        // SAFETY: `buf` has 128 bytes, enough for this 80-byte object, and lives to the end.
        let o = unsafe { Object::init(addr, h) };
        assert_eq!(o.header(), h);
        assert_eq!((o.n_refs(), o.n_values(), o.n_bytes()), (2, 3, 9));
        assert_eq!(o.size(), 16 + 16 + 24 + 16);
        assert_eq!(object_size_with_values(2, 3, 9).unwrap(), o.size());
        assert_eq!(
            o.value_slot(0) as *const ValueSlot as u64,
            addr.raw() + HEADER_SIZE + 16
        );
        assert!(o
            .value_slots()
            .iter()
            .all(|s| s.load(Ordering::Relaxed) == ValueWord::number(0.0)));
        o.value_slot(2)
            .store(ValueWord::number(-7.25), Ordering::Relaxed);
        o.write_u64(0, u64::MAX);
        o.write_bytes(8, &[5]);
        assert_eq!(
            o.value_slot(2).load(Ordering::Relaxed),
            ValueWord::number(-7.25),
            "the raw bytes start after the value slots"
        );
        assert_eq!(
            o.value_slots()[2].load(Ordering::Relaxed),
            ValueWord::number(-7.25)
        );
        assert!(o
            .ref_slots()
            .iter()
            .all(|s| s.load(Ordering::Relaxed).is_null()));
        assert_eq!(
            buf[7],
            u64::MAX.to_le(),
            "raw word 0 is the object's 8th word"
        );
        drop(buf);
    }

    #[test]
    fn value_slot_limits_are_errors() {
        assert!(matches!(
            object_size_with_values(0, MAX_VALUES + 1, 0),
            Err(AllocError::TooManyValueSlots { .. })
        ));
        assert!(object_size_with_values(0, MAX_VALUES, 0).is_ok());
        assert!(object_size(0, MAX_BYTES + 1).is_err());
    }

    #[test]
    #[should_panic(expected = "value slot 3 out of range (3 value slots)")]
    fn value_slot_index_is_checked() {
        let mut buf = vec![0u64; 8];
        let o = object_in_with_values(&mut buf, 1, 3);
        o.value_slot(3);
    }

    fn object_in_with_values(buf: &mut [u64], n_refs: u32, n_values: u32) -> Object {
        let h = ObjectHeader {
            shape: 1,
            n_refs,
            n_bytes: 0,
            n_values,
        };
        assert!(h.size() as usize <= buf.len() * 8);
        // SAFETY: `buf` is large enough (checked) and outlives every use in the test.
        unsafe { Object::init(Address::from_ptr(buf.as_mut_ptr()), h) }
    }

    /// An object over a plain buffer, for the raw-byte tests.
    fn object_in(buf: &mut [u64], n_refs: u32, n_bytes: u64) -> Object {
        let h = ObjectHeader {
            shape: 1,
            n_refs,
            n_bytes,
            n_values: 0,
        };
        assert!(h.size() as usize <= buf.len() * 8);
        // SAFETY: `buf` is large enough (checked) and outlives every use in the test.
        unsafe { Object::init(Address::from_ptr(buf.as_mut_ptr()), h) }
    }

    proptest::proptest! {
        /// Raw-byte writes and reads at any offset and length behave as on a byte array.
        #[test]
        fn raw_bytes_behave_like_a_byte_array(
            ops in proptest::collection::vec((0usize..70, 0usize..40, proptest::num::u8::ANY), 1..40)
        ) {
            let mut buf = vec![0u64; 32];
            let o = object_in(&mut buf, 3, 70);
            let mut model = vec![0u8; 70];
            for (off, len, seed) in ops {
                let len = len.min(70 - off);
                let data: Vec<u8> = (0..len).map(|i| seed.wrapping_add(i as u8)).collect();
                o.write_bytes(off, &data);
                model[off..off + len].copy_from_slice(&data);
                let mut out = vec![0u8; 70];
                o.read_bytes(0, &mut out);
                proptest::prop_assert_eq!(&out, &model);
                let mut part = vec![0u8; len];
                o.read_bytes(off, &mut part);
                proptest::prop_assert_eq!(&part[..], &model[off..off + len]);
                if off + 8 <= 70 {
                    let want = u64::from_le_bytes(model[off..off + 8].try_into().unwrap());
                    proptest::prop_assert_eq!(o.read_u64(off), want);
                }
            }
        }
    }

    /// Two threads write different bytes of the same words over and over: no write of one
    /// thread may undo the other's (a plain read-modify-write of the word would).
    #[test]
    fn concurrent_writes_to_neighbouring_bytes_are_not_lost() {
        let mut buf = vec![0u64; 8];
        let o = object_in(&mut buf, 0, 16);
        const ROUNDS: u8 = 200;
        std::thread::scope(|s| {
            for t in 0..2usize {
                s.spawn(move || {
                    for r in 1..=ROUNDS {
                        for _ in 0..50 {
                            // Both words are shared: thread 0 owns bytes 3..6 and 13..16,
                            // thread 1 bytes 6..13.
                            let ranges = if t == 0 {
                                [(3, 3), (13, 3)]
                            } else {
                                [(6, 3), (9, 4)]
                            };
                            for (off, len) in ranges {
                                o.write_bytes(off, &vec![r; len]);
                            }
                        }
                    }
                });
            }
        });
        let mut out = [0u8; 16];
        o.read_bytes(0, &mut out);
        assert_eq!(&out[3..16], &[ROUNDS; 13], "{out:?}");
        drop(buf);
    }
}
