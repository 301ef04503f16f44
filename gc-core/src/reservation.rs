//! A reserved address range: anonymous `PROT_NONE` memory mapped at exactly the address asked
//! for (`MAP_FIXED_NOREPLACE`, so an existing mapping is never replaced), given back when the
//! value is dropped. It is how the heap claims the address ranges of its four views (ZGC's
//! `ZVirtualMemoryManager` reserves its views the same way), and how tests occupy a range as
//! another library might.

/// An address range this process reserved; unmapped on drop.
#[derive(Debug)]
pub struct Reservation {
    addr: u64,
    len: u64,
}

impl Reservation {
    /// Reserve `len` bytes at exactly `addr`; `None` if any part of the range is mapped already
    /// (or the kernel refuses).
    pub fn at(addr: u64, len: u64) -> Option<Reservation> {
        // SAFETY: MAP_FIXED_NOREPLACE never replaces an existing mapping, and an anonymous
        // PROT_NONE mapping has no other effect on the process.
        let p = unsafe {
            libc::mmap(
                addr as *mut libc::c_void,
                len as usize,
                libc::PROT_NONE,
                libc::MAP_PRIVATE
                    | libc::MAP_ANONYMOUS
                    | libc::MAP_NORESERVE
                    | libc::MAP_FIXED_NOREPLACE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return None;
        }
        if p as u64 != addr {
            // Kernels before 4.17 treat the flag as a hint: give back what we did not ask for.
            // SAFETY: `p` is the mapping just created, of `len` bytes, and nothing uses it.
            unsafe { libc::munmap(p, len as usize) };
            return None;
        }
        Some(Reservation { addr, len })
    }

    /// First address of the range.
    pub fn addr(&self) -> u64 {
        self.addr
    }

    /// Length of the range in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True for an empty range.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        // SAFETY: the range was mapped by `at` and is owned by this value alone; whatever was
        // mapped over it since (the heap's views) belongs to the owner of this reservation,
        // which is done with it when the reservation drops.
        unsafe { libc::munmap(self.addr as *mut libc::c_void, self.len as usize) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reserved_range_cannot_be_reserved_twice_and_is_free_after_drop() {
        // Find a free 2 MiB range by letting the kernel choose, then give it back.
        // SAFETY: an anonymous PROT_NONE mapping anywhere; unmapped right away.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                2 << 20,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        assert_ne!(p, libc::MAP_FAILED);
        // SAFETY: the mapping just made, of that length.
        unsafe { libc::munmap(p, 2 << 20) };
        let addr = p as u64;
        let r = Reservation::at(addr, 2 << 20).expect("the range is free");
        assert_eq!((r.addr(), r.len()), (addr, 2 << 20));
        assert!(Reservation::at(addr, 2 << 20).is_none());
        drop(r);
        assert!(Reservation::at(addr, 2 << 20).is_some());
    }
}
