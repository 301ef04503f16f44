//! Virtual memory: the four views and the mapping of granules into them
//! (ZGC's `ZVirtualMemoryManager` and `ZPhysicalMemoryBacking::map`).
//!
//! Each view reserves the same offset range `[start, start + size)` at its own base
//! (`PROT_NONE`, `MAP_NORESERVE`, `MAP_FIXED_NOREPLACE`, so another mapping is never
//! clobbered). A page's physical ranges are then mapped `MAP_SHARED | MAP_FIXED` at the same
//! offset in all four views; unmapping maps a fresh `PROT_NONE` reservation back over the
//! range so the address space stays ours. Dropping the views unmaps all four reservations.
//! The views take [`Offset`]s and compute each view's [`Address`] with
//! [`AddressLayout::address`]. With shmem transparent huge pages
//! ([`crate::huge_pages::HugePages::Transparent`]) every mapping is marked
//! `madvise(MADV_HUGEPAGE)`, so the kernel maps the file's 2 MiB pages with one entry each.

use crate::address::{AddressLayout, View};
use crate::error::HeapError;
use crate::physical::PhysRange;
use crate::reservation::Reservation;
use crate::word::{Address, Offset};
use crate::GRANULE_SIZE;

/// The four reserved views of one heap.
pub struct Views {
    layout: AddressLayout,
    start: Offset,
    size: u64,
    /// Mark every mapping `MADV_HUGEPAGE` (shmem transparent huge pages).
    advise_huge: bool,
    /// The views' address ranges (Marked0, Marked1, Remapped, Marked2), given back on drop.
    _reserved: [Reservation; 4],
}

impl Views {
    /// Reserve `size` bytes of offset space in all four views. With `at`, only that offset is
    /// tried; otherwise the first free slot of `size`-aligned offsets is taken, so several heaps
    /// can live in one process.
    pub fn reserve(
        layout: AddressLayout,
        size: u64,
        at: Option<Offset>,
    ) -> Result<Self, HeapError> {
        debug_assert!(size.is_multiple_of(GRANULE_SIZE));
        let space = layout.offset_space();
        let try_start = |start: Offset| -> Option<Views> {
            let [a, b, c, d] = View::ALL.map(|v| layout.address(start, v).raw());
            // A failed view drops (gives back) the ones reserved before it.
            Some(Views {
                layout,
                start,
                size,
                advise_huge: false,
                _reserved: [
                    Reservation::at(a, size)?,
                    Reservation::at(b, size)?,
                    Reservation::at(c, size)?,
                    Reservation::at(d, size)?,
                ],
            })
        };
        if let Some(at) = at {
            let start = at.raw();
            if start % GRANULE_SIZE != 0 || start.checked_add(size).is_none_or(|e| e > space) {
                return Err(HeapError::AddressRangeTaken {
                    start,
                    end: start.saturating_add(size),
                    hint: format!(
                        "the requested offset must be granule aligned and leave {size} bytes \
                         below {space:#x}"
                    ),
                });
            }
            if let Some(views) = try_start(at) {
                return Ok(views);
            }
            return Err(HeapError::AddressRangeTaken {
                start: layout.address(at, View::Marked0).raw(),
                end: layout.view_base(View::HIGHEST).raw() + start + size,
                hint: "choose another reserve offset or let the heap pick one".into(),
            });
        }
        let mut start = Offset::ZERO;
        while start.raw() + size <= space {
            if let Some(views) = try_start(start) {
                return Ok(views);
            }
            start += size;
        }
        Err(HeapError::AddressRangeTaken {
            start: layout.view_base(View::Marked0).raw(),
            end: layout.view_base(View::HIGHEST).raw() + space,
            hint: "no free slot in any of the four views; other mappings or heaps fill the \
                   address space: drop other heaps or choose a smaller heap"
                .into(),
        })
    }

    /// Mark every mapping made from now on `madvise(MADV_HUGEPAGE)` (for a file on shmem
    /// transparent huge pages).
    pub fn advise_huge_pages(mut self) -> Self {
        self.advise_huge = true;
        self
    }

    /// The reserved offset range: start.
    pub fn start(&self) -> Offset {
        self.start
    }

    /// The reserved offset range: size.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The layout these views were reserved for.
    pub fn layout(&self) -> AddressLayout {
        self.layout
    }

    /// Check that `[at, at + len)` is a non-empty, granule-aligned range inside these views'
    /// reservation: the only memory `map` and `unmap` may replace. A range of another
    /// reservation (another heap's granules) is refused, in every build.
    fn check_range(&self, at: Offset, len: u64, what: &'static str) -> Result<(), HeapError> {
        let end = self.start.raw() + self.size;
        let inside = at.raw() >= self.start.raw()
            && at.raw().is_multiple_of(GRANULE_SIZE)
            && len > 0
            && len.is_multiple_of(GRANULE_SIZE)
            && at.raw().checked_add(len).is_some_and(|e| e <= end);
        if inside {
            return Ok(());
        }
        Err(HeapError::RangeOutsideReservation {
            what,
            start: at.raw(),
            len,
            reserved_start: self.start.raw(),
            reserved_end: end,
        })
    }

    /// Map physical `ranges` of `fd`, one after another, at offset `at` in all four views.
    ///
    /// The whole run must lie inside the reservation, in whole granules; otherwise nothing is
    /// mapped and [`HeapError::RangeOutsideReservation`] is returned.
    pub fn map(&self, at: Offset, fd: i32, ranges: &[PhysRange]) -> Result<(), HeapError> {
        if ranges.is_empty() {
            return Ok(());
        }
        // 0 (refused below) if any range is empty, not whole granules, or the sum overflows.
        let total = ranges
            .iter()
            .try_fold(0u64, |n, r| {
                (r.len > 0 && r.len.is_multiple_of(GRANULE_SIZE)).then_some(())?;
                n.checked_add(r.len)
            })
            .unwrap_or(0);
        self.check_range(at, total, "mapping physical memory into the heap views")?;
        let mut off = at;
        for r in ranges {
            for v in View::ALL {
                let addr: Address = self.layout.address(off, v);
                // SAFETY: `addr..addr+len` lies inside our own reservation for view `v`
                // (`check_range` above), so MAP_FIXED replaces only memory this heap owns.
                let p = unsafe {
                    libc::mmap(
                        addr.as_ptr(),
                        r.len as usize,
                        libc::PROT_READ | libc::PROT_WRITE,
                        libc::MAP_SHARED | libc::MAP_FIXED,
                        fd,
                        r.offset as libc::off_t,
                    )
                };
                if p == libc::MAP_FAILED {
                    return Err(HeapError::os("mmap of a heap granule into a view"));
                }
                if self.advise_huge {
                    // SAFETY: advice on the mapping just made, inside our reservation; it
                    // changes which pages back it, never its contents.
                    let rc = unsafe { libc::madvise(p, r.len as usize, libc::MADV_HUGEPAGE) };
                    if rc != 0 {
                        return Err(HeapError::os("madvise(MADV_HUGEPAGE) of a heap view"));
                    }
                }
            }
            off += r.len;
        }
        Ok(())
    }

    /// Unmap `[at, at + len)` in all four views, keeping the reservation.
    ///
    /// The range must lie inside the reservation, in whole granules; otherwise nothing is
    /// unmapped and [`HeapError::RangeOutsideReservation`] is returned. (Within it, the owner
    /// of the views decides what may be unmapped: every read of heap memory goes through an
    /// `unsafe` constructor of [`crate::Object`], whose contract requires the memory mapped.)
    pub fn unmap(&self, at: Offset, len: u64) -> Result<(), HeapError> {
        self.check_range(at, len, "unmapping a range of the heap views")?;
        for v in View::ALL {
            let addr = self.layout.address(at, v);
            // SAFETY: the range lies inside our own reservation (`check_range` above);
            // replacing it with PROT_NONE keeps the address space reserved and touches no
            // other mapping.
            let p = unsafe {
                libc::mmap(
                    addr.as_ptr(),
                    len as usize,
                    libc::PROT_NONE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            assert!(
                p != libc::MAP_FAILED,
                "re-reserving an unmapped heap range failed: {}",
                std::io::Error::last_os_error()
            );
        }
        Ok(())
    }
}

/// Views a granule is mapped into: its worst-case mapping count.
const VIEWS: u64 = View::ALL.len() as u64;

/// Number of mappings this process has now (lines of `/proc/self/maps`; 0 if unreadable), what
/// `vm.max_map_count` limits.
pub fn count_mappings() -> u64 {
    std::fs::read_to_string("/proc/self/maps")
        .map(|s| s.lines().count() as u64)
        .unwrap_or(0)
}

/// `vm.max_map_count` as the kernel reports it.
pub fn max_map_count() -> Option<u64> {
    std::fs::read_to_string("/proc/sys/vm/max_map_count")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The largest maximum heap whose mappings fit in half of what `vm.max_map_count` leaves
/// this process now (the other half stays for threads, allocators and other heaps): for a
/// default heap size that [`check_map_count`] accepts with room to spare. `None` if the limit
/// cannot be read.
pub fn heap_limit_for_map_count() -> Option<u64> {
    let limit = max_map_count()?;
    let spare = limit.saturating_sub(count_mappings()) / 2;
    Some(spare.saturating_sub(6) / VIEWS * GRANULE_SIZE)
}

/// Check that a heap of `max_heap` bytes fits the mapping budget: in the worst case every
/// granule is its own mapping in each of the four views.
pub fn check_map_count(max_heap: u64, limit: u64, in_use: u64) -> Result<(), HeapError> {
    let granules = max_heap / GRANULE_SIZE;
    // Each mapped run may split a reservation in two, so count reservations generously.
    let needed = VIEWS * granules + 6;
    if in_use + needed > limit {
        return Err(HeapError::MapCountTooLow {
            limit,
            in_use,
            needed,
            granules,
            suggested: ((in_use + needed) * 2).max(65530),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_heap_limit_for_the_map_count_passes_the_check_with_room_to_spare() {
        let (Some(limit), Some(heap)) = (max_map_count(), heap_limit_for_map_count()) else {
            return; // no /proc/sys/vm/max_map_count here: nothing to compare
        };
        let in_use = count_mappings();
        assert!(heap > 0, "limit {limit}, {in_use} mappings in use");
        check_map_count(heap, limit, in_use).unwrap();
        // Twice the heap would still fit: half the spare budget is left for others.
        check_map_count(2 * heap, limit, in_use).unwrap();
        assert!(check_map_count(3 * heap + 4 * GRANULE_SIZE, limit, in_use).is_err());
        // The budget counts every view: one granule more than fits with four is refused.
        let fits = (limit - in_use - 6) / VIEWS;
        check_map_count(fits * GRANULE_SIZE, limit, in_use).unwrap();
        assert!(check_map_count((fits + 1) * GRANULE_SIZE, limit, in_use).is_err());
    }
}
