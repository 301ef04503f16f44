//! The allocator of virtual offset ranges inside a heap's reservation (ZGC's
//! `ZVirtualMemoryManager` free list): first fit from low addresses for small and medium
//! pages, from high addresses for large pages so they do not fragment the low end. Ranges are
//! an [`Offset`] and a length in bytes.

use crate::word::Offset;

/// A free-list of offset ranges.
#[derive(Debug)]
pub struct AddressSpace {
    /// Sorted, coalesced free ranges `(start, len)`.
    free: Vec<(Offset, u64)>,
}

impl AddressSpace {
    /// All of `[start, start + size)` free.
    pub fn new(start: Offset, size: u64) -> Self {
        AddressSpace {
            free: vec![(start, size)],
        }
    }

    /// Take `len` bytes; `from_high` takes the highest fit.
    pub fn alloc(&mut self, len: u64, from_high: bool) -> Option<Offset> {
        if from_high {
            let i = self.free.iter().rposition(|&(_, l)| l >= len)?;
            let (s, l) = self.free[i];
            let at = s + (l - len);
            if l == len {
                self.free.remove(i);
            } else {
                self.free[i].1 -= len;
            }
            Some(at)
        } else {
            let i = self.free.iter().position(|&(_, l)| l >= len)?;
            let (s, l) = self.free[i];
            if l == len {
                self.free.remove(i);
            } else {
                self.free[i] = (s + len, l - len);
            }
            Some(s)
        }
    }

    /// Give back `[start, start + len)`.
    pub fn free(&mut self, start: Offset, len: u64) {
        let i = self.free.partition_point(|&(s, _)| s < start);
        debug_assert!(i == 0 || self.free[i - 1].0 + self.free[i - 1].1 <= start);
        debug_assert!(i == self.free.len() || start + len <= self.free[i].0);
        self.free.insert(i, (start, len));
        if i + 1 < self.free.len() && self.free[i].0 + self.free[i].1 == self.free[i + 1].0 {
            self.free[i].1 += self.free[i + 1].1;
            self.free.remove(i + 1);
        }
        if i > 0 && self.free[i - 1].0 + self.free[i - 1].1 == self.free[i].0 {
            self.free[i - 1].1 += self.free[i].1;
            self.free.remove(i);
        }
    }

    /// Free bytes in total.
    pub fn free_bytes(&self) -> u64 {
        self.free.iter().map(|&(_, l)| l).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alloc_free_coalesces() {
        let o = Offset::from_raw;
        let mut a = AddressSpace::new(o(0), 100);
        let x = a.alloc(10, false).unwrap();
        let y = a.alloc(20, false).unwrap();
        let z = a.alloc(30, true).unwrap();
        assert_eq!((x, y, z), (o(0), o(10), o(70)));
        assert_eq!(a.free_bytes(), 40);
        a.free(y, 20);
        a.free(x, 10);
        a.free(z, 30);
        assert_eq!(a.free, vec![(o(0), 100)]);
        assert!(a.alloc(101, false).is_none());
    }
}
