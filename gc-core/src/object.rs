//! Object layout: pointer-first, so the collector traces without type maps.
//!
//! ```text
//!  +0   +4        +8              +16           +16+8N
//!  | shape:u32 | n_refs:u32 | n_bytes:u64 | N slots (AtomicU64) | raw bytes, padded to 8 |
//! ```
//!
//! The header holds the embedder's shape id, the number of reference slots `N` and the raw
//! byte length; the heap knows nothing else about types. Each slot is a colored pointer or
//! null. No GC state lives in the header: mark bits are in the page's live map and
//! forwarding in the page's forwarding table (ZGC keeps headers free of GC state too).

use crate::error::AllocError;
use std::ptr::NonNull;
use std::sync::atomic::AtomicU64;

/// Bytes of the object header.
pub const HEADER_SIZE: u64 = 16;
/// Largest number of reference slots in one object.
pub const MAX_REFS: u64 = u32::MAX as u64;

/// The decoded header of an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObjectHeader {
    /// The embedder's class/shape id.
    pub shape: u32,
    /// Number of reference slots.
    pub n_refs: u32,
    /// Number of raw bytes after the slots.
    pub n_bytes: u64,
}

impl ObjectHeader {
    /// Total object size in bytes (8-byte aligned).
    #[inline]
    pub fn size(&self) -> u64 {
        HEADER_SIZE + 8 * self.n_refs as u64 + self.n_bytes.div_ceil(8) * 8
    }
}

/// Size of an object with `n_refs` slots and `n_bytes` raw bytes, checked for overflow.
pub fn object_size(n_refs: u64, n_bytes: u64) -> Result<u64, AllocError> {
    let overflow = AllocError::ObjectSizeOverflow { n_refs, n_bytes };
    if n_refs > MAX_REFS {
        return Err(overflow);
    }
    n_refs
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

// SAFETY: an `Object` is an address into shared heap memory; all access to its slots is
// atomic, and raw-byte access follows the runtime's protocol (invariant 3: from-space objects
// are never written after Pause Relocate Start).
unsafe impl Send for Object {}
// SAFETY: as above.
unsafe impl Sync for Object {}

impl Object {
    /// View the object at `addr`.
    ///
    /// # Safety
    /// `addr` is a dereferenceable (view-colored) address of an initialized object whose
    /// memory stays mapped while the returned value is used.
    #[inline(always)]
    pub unsafe fn from_addr(addr: u64) -> Object {
        debug_assert!(
            addr != 0 && addr.is_multiple_of(8),
            "bad object address {addr:#x}"
        );
        Object {
            // SAFETY: non-null by the caller's contract (asserted in debug builds).
            addr: unsafe { NonNull::new_unchecked(addr as *mut u8) },
        }
    }

    /// Write a header and zero the slots and raw bytes at `addr`.
    ///
    /// # Safety
    /// `addr..addr + header.size()` is mapped, writable memory that no one else uses (freshly
    /// bump-allocated).
    pub unsafe fn init(addr: u64, header: ObjectHeader) -> Object {
        let p = addr as *mut u64;
        // SAFETY: the caller owns the freshly allocated, mapped range of `header.size()` bytes.
        unsafe {
            p.write((header.shape as u64) | ((header.n_refs as u64) << 32));
            p.add(1).write(header.n_bytes);
            std::ptr::write_bytes(p.add(2), 0, ((header.size() - HEADER_SIZE) / 8) as usize);
            Object::from_addr(addr)
        }
    }

    /// The address this object is viewed at.
    #[inline(always)]
    pub fn addr(self) -> u64 {
        self.addr.as_ptr() as u64
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
        let w0 = self.word(0);
        ObjectHeader {
            shape: w0 as u32,
            n_refs: (w0 >> 32) as u32,
            n_bytes: self.word(1),
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
        self.word(1) as usize
    }

    /// Total size in bytes.
    #[inline]
    pub fn size(self) -> u64 {
        self.header().size()
    }

    /// Reference slot `i` (panics if out of range).
    #[inline]
    pub fn slot(&self, i: usize) -> &AtomicU64 {
        assert!(
            i < self.n_refs(),
            "slot {i} out of range ({} slots)",
            self.n_refs()
        );
        // SAFETY: `i` is in range, slots are 8-byte aligned words inside the object, and
        // AtomicU64 has the layout of u64.
        unsafe { &*(self.addr.as_ptr().add(HEADER_SIZE as usize + 8 * i) as *const AtomicU64) }
    }

    /// All reference slots.
    #[inline]
    pub fn slots(&self) -> &[AtomicU64] {
        // SAFETY: the slot array lies inside the object; see `slot`.
        unsafe {
            std::slice::from_raw_parts(
                self.addr.as_ptr().add(HEADER_SIZE as usize) as *const AtomicU64,
                self.n_refs(),
            )
        }
    }

    #[inline]
    fn bytes_ptr(self) -> *mut u8 {
        // SAFETY: the raw area starts right after the slots, inside the object.
        unsafe {
            self.addr
                .as_ptr()
                .add(HEADER_SIZE as usize + 8 * self.n_refs())
        }
    }

    /// Copy raw bytes `[offset, offset + out.len())` into `out` (panics if out of range).
    pub fn read_bytes(self, offset: usize, out: &mut [u8]) {
        let end = offset.checked_add(out.len()).expect("range overflow");
        assert!(
            end <= self.n_bytes(),
            "raw bytes {offset}..{end} out of range ({})",
            self.n_bytes()
        );
        // SAFETY: the range is inside the object's raw area (checked above).
        unsafe {
            std::ptr::copy_nonoverlapping(self.bytes_ptr().add(offset), out.as_mut_ptr(), out.len())
        }
    }

    /// Write raw bytes at `offset` (panics if out of range).
    pub fn write_bytes(self, offset: usize, data: &[u8]) {
        let end = offset.checked_add(data.len()).expect("range overflow");
        assert!(
            end <= self.n_bytes(),
            "raw bytes {offset}..{end} out of range ({})",
            self.n_bytes()
        );
        // SAFETY: the range is inside the object's raw area (checked above); the runtime's
        // protocol guarantees this is not a from-space object during relocation.
        unsafe {
            std::ptr::copy_nonoverlapping(data.as_ptr(), self.bytes_ptr().add(offset), data.len())
        }
    }

    /// Read a little-endian u64 from the raw bytes.
    pub fn read_u64(self, offset: usize) -> u64 {
        let mut b = [0u8; 8];
        self.read_bytes(offset, &mut b);
        u64::from_le_bytes(b)
    }

    /// Write a little-endian u64 into the raw bytes.
    pub fn write_u64(self, offset: usize, v: u64) {
        self.write_bytes(offset, &v.to_le_bytes())
    }

    /// Copy the whole object (header, slots, bytes) to `to`.
    ///
    /// # Safety
    /// `to..to + self.size()` is mapped memory reserved for the copy, not overlapping `self`,
    /// and no thread writes `self` during the copy (invariant 3).
    pub unsafe fn copy_to(self, to: u64) -> Object {
        let size = self.size() as usize;
        // SAFETY: both ranges are mapped and disjoint (caller's contract).
        unsafe {
            std::ptr::copy_nonoverlapping(self.addr.as_ptr(), to as *mut u8, size);
            Object::from_addr(to)
        }
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
    fn header_slots_and_bytes_in_plain_memory() {
        let mut buf = vec![0xffu64; 16];
        let addr = buf.as_mut_ptr() as u64;
        let h = ObjectHeader {
            shape: 7,
            n_refs: 2,
            n_bytes: 12,
        };
        // SAFETY: `buf` has 128 bytes, enough for this 48-byte object, and lives to the end.
        let o = unsafe { Object::init(addr, h) };
        assert_eq!(o.header(), h);
        assert_eq!(o.size(), 48);
        assert_eq!(o.slots().len(), 2);
        assert!(o
            .slots()
            .iter()
            .all(|s| s.load(std::sync::atomic::Ordering::Relaxed) == 0));
        o.write_bytes(4, &[1, 2, 3]);
        let mut out = [0u8; 12];
        o.read_bytes(0, &mut out);
        assert_eq!(out, [0, 0, 0, 0, 1, 2, 3, 0, 0, 0, 0, 0]);
        drop(buf);
    }
}
