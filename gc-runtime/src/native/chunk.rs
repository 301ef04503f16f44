//! Memory from the operating system, and a chunk carved into slots.
//!
//! [`OsMapping`] is one anonymous private `mmap`, unmapped on drop: a pool chunk, or the whole
//! memory of an unpooled buffer. [`Chunk`] is a mapping carved into equal slots of one size
//! class with a free list and an allocated-slot bitmap: Netty's `PoolChunk` with its
//! `PoolSubpage`s, jemalloc's slab. Memory is mapped lazily by the kernel: a slot costs RSS
//! only once it is written.

use super::error::NativeError;

/// The system page size.
pub(super) fn page_size() -> usize {
    // SAFETY: sysconf has no memory-safety preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}

/// An anonymous read-write private mapping of `len` bytes (a multiple of the page size).
#[derive(Debug)]
pub(super) struct OsMapping {
    addr: usize,
    len: usize,
}

impl OsMapping {
    /// Map `len` bytes (rounded up to whole pages); `what` names the mapping in errors.
    pub(super) fn new(len: usize, what: &'static str) -> Result<OsMapping, NativeError> {
        let page = page_size();
        let len = len.checked_next_multiple_of(page).ok_or(NativeError::Os {
            what,
            bytes: len,
            message: "size overflows when rounded up to pages".into(),
        })?;
        // SAFETY: a new anonymous mapping at an address the kernel chooses (no MAP_FIXED), so
        // no existing memory is affected; the result is checked against MAP_FAILED.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(NativeError::Os {
                what,
                bytes: len,
                message: std::io::Error::last_os_error().to_string(),
            });
        }
        Ok(OsMapping {
            addr: p as usize,
            len,
        })
    }

    /// First byte.
    pub(super) fn addr(&self) -> usize {
        self.addr
    }

    /// Bytes mapped.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Bytes of this mapping resident in RAM now (`mincore`).
    pub(super) fn resident_bytes(&self) -> u64 {
        let page = page_size();
        let mut vec = vec![0u8; self.len.div_ceil(page)];
        // SAFETY: `addr .. addr + len` is this mapping (page-aligned, mapped until drop) and
        // `vec` has one byte per page of it, as mincore writes.
        let rc =
            unsafe { libc::mincore(self.addr as *mut libc::c_void, self.len, vec.as_mut_ptr()) };
        if rc != 0 {
            return 0;
        }
        vec.iter().filter(|&&b| b & 1 != 0).count() as u64 * page as u64
    }
}

impl Drop for OsMapping {
    fn drop(&mut self) {
        // SAFETY: `addr .. addr + len` was mapped by `OsMapping::new` and is unmapped only here,
        // once; every buffer in it is gone (a chunk is dropped only when no slot is taken, an
        // unpooled buffer's mapping only when its buffer frees it).
        unsafe {
            libc::munmap(self.addr as *mut libc::c_void, self.len);
        }
    }
}

/// A mapping carved into `nslots` slots of `slot_size` bytes.
#[derive(Debug)]
pub(super) struct Chunk {
    map: OsMapping,
    slot_size: usize,
    nslots: u32,
    /// Slots below this index have been handed out at least once.
    fresh: u32,
    /// Slots given back, reused first (LIFO: the warmest memory).
    free: Vec<u32>,
    /// One bit per slot: taken now.
    taken: Vec<u64>,
    /// Listed among its class's chunks with a free slot.
    pub(super) in_partial: bool,
}

impl Chunk {
    /// Map a chunk of `chunk_bytes` for slots of `slot_size` (a power of two ≤ `chunk_bytes`).
    pub(super) fn new(slot_size: usize, chunk_bytes: usize) -> Result<Chunk, NativeError> {
        let map = OsMapping::new(chunk_bytes, "mmap of a native pool chunk")?;
        let nslots = (map.len() / slot_size) as u32;
        Ok(Chunk {
            map,
            slot_size,
            nslots,
            fresh: 0,
            free: Vec::new(),
            taken: vec![0; (nslots as usize).div_ceil(64)],
            in_partial: false,
        })
    }

    /// Bytes mapped.
    pub(super) fn bytes(&self) -> usize {
        self.map.len()
    }

    /// The mapping.
    pub(super) fn mapping(&self) -> &OsMapping {
        &self.map
    }

    /// Slots taken now.
    pub(super) fn used(&self) -> u32 {
        self.fresh - self.free.len() as u32
    }

    /// No slot left.
    pub(super) fn is_full(&self) -> bool {
        self.used() == self.nslots
    }

    /// Take a free slot: its address, or `None` when full.
    pub(super) fn take(&mut self) -> Option<usize> {
        let i = match self.free.pop() {
            Some(i) => i,
            None if self.fresh < self.nslots => {
                self.fresh += 1;
                self.fresh - 1
            }
            None => return None,
        };
        let (w, b) = (i as usize / 64, i % 64);
        debug_assert_eq!(self.taken[w] & (1 << b), 0, "free slot {i} marked taken");
        self.taken[w] |= 1 << b;
        Some(self.map.addr() + i as usize * self.slot_size)
    }

    /// Give back the slot at `addr`.
    ///
    /// # Panics
    /// If `addr` is not a taken slot of this chunk: the pool's bookkeeping is broken (a
    /// buffer's memory can be given back only once, by its last release or its drop).
    pub(super) fn give(&mut self, addr: usize) {
        let rel = addr
            .checked_sub(self.map.addr())
            .filter(|r| r % self.slot_size == 0 && *r < self.nslots as usize * self.slot_size)
            .unwrap_or_else(|| panic!("native pool: {addr:#x} is not a slot of this chunk"));
        let i = (rel / self.slot_size) as u32;
        let (w, b) = (i as usize / 64, i % 64);
        assert!(
            self.taken[w] & (1 << b) != 0,
            "native pool: slot {addr:#x} given back twice"
        );
        self.taken[w] &= !(1 << b);
        self.free.push(i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chunk_hands_out_each_slot_once_and_reuses_freed_slots() {
        let mut c = Chunk::new(4096, 64 << 10).unwrap();
        let slots: Vec<usize> = std::iter::from_fn(|| c.take()).collect();
        assert_eq!(slots.len(), 16);
        assert!(c.is_full());
        let mut sorted = slots.clone();
        sorted.dedup();
        assert_eq!(sorted.len(), 16, "a slot handed out twice");
        c.give(slots[3]);
        assert_eq!(c.used(), 15);
        assert_eq!(c.take(), Some(slots[3]));
    }

    #[test]
    #[should_panic(expected = "given back twice")]
    fn giving_a_slot_back_twice_is_caught() {
        let mut c = Chunk::new(4096, 64 << 10).unwrap();
        let a = c.take().unwrap();
        c.give(a);
        c.give(a);
    }
}
