//! Physical memory: the one file that backs all four views (ZGC's `ZPhysicalMemoryBacking`).
//!
//! The file is a `memfd` (or a file created and unlinked in a directory the user names, like
//! `-XX:AllocateHeapAt`), sized to the max heap with `ftruncate`. Memory is *committed* with
//! `fallocate` and *uncommitted* with `fallocate(PUNCH_HOLE | KEEP_SIZE)`, at 2 MiB granule
//! granularity; the committed byte count is tracked exactly here (a bitmap of granules).
//! The granule allocator hands out file ranges, contiguous where it can so that fewer
//! mappings are needed (`vm.max_map_count`).
//!
//! With huge pages ([`HugePages`]) the memfd comes from the hugetlb pool (`MFD_HUGETLB`,
//! committed with `fallocate` too, which fails at once when the pool is empty), or, for
//! shmem transparent huge pages, a granule is committed by faulting it in through a temporary
//! mapping marked `MADV_HUGEPAGE`, since a `fallocate` has no mapping to ask for huge pages.

use crate::config::Backing;
use crate::error::HeapError;
use crate::huge_pages::{HugePageSystem, HugePages};
use crate::GRANULE_SIZE;
use parking_lot::Mutex;
use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// A range of the backing file, in bytes (granule aligned).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PhysRange {
    pub offset: u64,
    pub len: u64,
}

impl PhysRange {
    /// Take the first `len` bytes of `ranges`, in order: the ranges used up are removed and
    /// the last one touched keeps what is left of it. `None` (and `ranges` unchanged) if they
    /// hold fewer than `len` bytes.
    pub(crate) fn take_front(ranges: &mut Vec<PhysRange>, len: u64) -> Option<Vec<PhysRange>> {
        if ranges.iter().map(|r| r.len).sum::<u64>() < len {
            return None;
        }
        let mut out = Vec::with_capacity(1);
        let mut need = len;
        let mut used_up = 0;
        for r in ranges.iter_mut() {
            if need == 0 {
                break;
            }
            let take = r.len.min(need);
            out.push(PhysRange {
                offset: r.offset,
                len: take,
            });
            r.offset += take;
            r.len -= take;
            need -= take;
            if r.len == 0 {
                used_up += 1;
            }
        }
        ranges.drain(..used_up);
        Some(out)
    }
}

struct Granules {
    /// Free file ranges, sorted by offset, coalesced.
    free: Vec<PhysRange>,
    /// One flag per granule: committed (fallocated) or not.
    committed: Vec<bool>,
    /// One flag per granule: handed out to a page since it was last committed, so its
    /// contents may be anything; a committed granule never handed out reads as zeros.
    handed_out: Vec<bool>,
}

/// The backing file and its granule allocator.
pub struct PhysicalMemory {
    fd: OwnedFd,
    size: u64,
    committed_bytes: AtomicU64,
    /// The most that was ever committed at once.
    peak_committed_bytes: AtomicU64,
    granules: Mutex<Granules>,
    huge_pages: HugePages,
}

static FILE_COUNTER: AtomicU64 = AtomicU64::new(0);

impl PhysicalMemory {
    /// Create the backing file of `size` bytes (a multiple of the granule).
    /// `huge_pages` is checked against the system first ([`HugePageSystem::check`]).
    pub fn new(size: u64, backing: &Backing, huge_pages: HugePages) -> Result<Self, HeapError> {
        debug_assert!(size.is_multiple_of(GRANULE_SIZE));
        HugePageSystem::read().check(huge_pages, size, backing.directory())?;
        let fd = match backing {
            Backing::Memfd => create_memfd(huge_pages == HugePages::Hugetlb)?,
            Backing::Directory(dir) => create_file_in(dir)?,
        };
        // SAFETY: `fd` is an open file descriptor we own; ftruncate only changes the file size.
        if unsafe { libc::ftruncate(fd.as_raw_fd(), size as libc::off_t) } != 0 {
            return Err(HeapError::os("ftruncate of the heap backing file"));
        }
        let n = (size / GRANULE_SIZE) as usize;
        Ok(PhysicalMemory {
            fd,
            size,
            committed_bytes: AtomicU64::new(0),
            peak_committed_bytes: AtomicU64::new(0),
            granules: Mutex::new(Granules {
                free: vec![PhysRange {
                    offset: 0,
                    len: size,
                }],
                committed: vec![false; n],
                handed_out: vec![false; n],
            }),
            huge_pages,
        })
    }

    /// The huge-page setting the file was created with.
    pub fn huge_pages(&self) -> HugePages {
        self.huge_pages
    }

    /// The backing file descriptor (for mapping).
    pub fn fd(&self) -> i32 {
        self.fd.as_raw_fd()
    }

    /// Size of the backing file (the max heap).
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Bytes currently committed (fallocated and not punched out).
    pub fn committed_bytes(&self) -> u64 {
        self.committed_bytes.load(Ordering::Relaxed)
    }

    /// The most bytes that were ever committed at once.
    pub fn peak_committed_bytes(&self) -> u64 {
        self.peak_committed_bytes.load(Ordering::Relaxed)
    }

    /// Bytes of the file not handed out to any page.
    pub fn free_bytes(&self) -> u64 {
        self.granules.lock().free.iter().map(|r| r.len).sum()
    }

    /// Take `len` bytes of file ranges: one contiguous range if one is free, else several,
    /// lowest offsets first. `None` if fewer than `len` bytes are free.
    pub fn alloc(&self, len: u64) -> Option<Vec<PhysRange>> {
        debug_assert!(len.is_multiple_of(GRANULE_SIZE) && len > 0);
        let mut g = self.granules.lock();
        if let Some(i) = g.free.iter().position(|r| r.len >= len) {
            let r = &mut g.free[i];
            let out = PhysRange {
                offset: r.offset,
                len,
            };
            r.offset += len;
            r.len -= len;
            if r.len == 0 {
                g.free.remove(i);
            }
            return Some(vec![out]);
        }
        // No free range is large enough: the lowest ones, in order (`None` if all of them
        // together are too small).
        PhysRange::take_front(&mut g.free, len)
    }

    /// Return ranges to the free list (they stay committed until [`Self::uncommit_free`]).
    ///
    /// # Panics
    /// If a range lies outside the file or overlaps a free range (a double free, which would
    /// hand the same memory to two pages); nothing is freed then.
    pub fn free(&self, ranges: &[PhysRange]) {
        let mut g = self.granules.lock();
        for (n, r) in ranges.iter().enumerate() {
            let end = r.offset.checked_add(r.len).filter(|&e| e <= self.size);
            assert!(
                end.is_some(),
                "freeing {r:?}: outside the {} byte file",
                self.size
            );
            let overlaps =
                |f: &PhysRange| f.offset < r.offset + r.len && r.offset < f.offset + f.len;
            let i = g.free.partition_point(|f| f.offset < r.offset);
            let twice = (i > 0 && overlaps(&g.free[i - 1]))
                || g.free.get(i).is_some_and(overlaps)
                || ranges[..n].iter().any(overlaps);
            assert!(
                !twice,
                "freeing {r:?}: part of it is free already (a double free)"
            );
        }
        for r in ranges {
            let i = g.free.partition_point(|f| f.offset < r.offset);
            g.free.insert(i, *r);
        }
        // Coalesce neighbours.
        let mut merged: Vec<PhysRange> = Vec::with_capacity(g.free.len());
        for r in g.free.drain(..) {
            match merged.last_mut() {
                Some(last) if last.offset + last.len == r.offset => last.len += r.len,
                _ => merged.push(r),
            }
        }
        g.free = merged;
    }

    /// Commit every granule of `range` that is not committed yet (`fallocate`).
    pub fn commit(&self, range: PhysRange) -> Result<(), std::io::Error> {
        let mut g = self.granules.lock();
        self.set_committed(&mut g, range, true).map(|_| ())
    }

    /// Hand `ranges` (allocated and committed) to a page: true if all of their memory reads
    /// as zeros, because no granule of them was handed out since it was committed (memory
    /// committed by `fallocate` is zero until written); from now on none of it counts as
    /// zero until it is uncommitted. A large object's allocation then skips the zeroing.
    pub fn hand_out(&self, ranges: &[PhysRange]) -> bool {
        let mut g = self.granules.lock();
        let mut zero = true;
        for r in ranges {
            let first = (r.offset / GRANULE_SIZE) as usize;
            let n = (r.len / GRANULE_SIZE) as usize;
            let granules = first..first + n;
            zero &= g.committed[granules.clone()].iter().all(|&c| c)
                && !g.handed_out[granules.clone()].iter().any(|&h| h);
            g.handed_out[granules].fill(true);
        }
        zero
    }

    /// Take back `ranges` from a page that never wrote them (their memory still reads as
    /// zeros): the next [`Self::hand_out`] of them counts them as zero again.
    pub fn take_back_unwritten(&self, ranges: &[PhysRange]) {
        let mut g = self.granules.lock();
        for r in ranges {
            let first = (r.offset / GRANULE_SIZE) as usize;
            let n = (r.len / GRANULE_SIZE) as usize;
            g.handed_out[first..first + n].fill(false);
        }
    }

    /// Uncommit committed granules of `range` (`fallocate(PUNCH_HOLE | KEEP_SIZE)`).
    /// Returns the bytes uncommitted. Only free memory can be uncommitted: a range any part
    /// of which is handed out (a page's memory, whose contents the hole would zero) is
    /// refused with `InvalidInput`.
    pub fn uncommit(&self, range: PhysRange) -> Result<u64, std::io::Error> {
        let mut g = self.granules.lock();
        let end = range.offset.checked_add(range.len);
        let free = g
            .free
            .iter()
            .any(|f| f.offset <= range.offset && end.is_some_and(|e| e <= f.offset + f.len));
        if !free {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("uncommitting {range:?}: not all of it is free memory"),
            ));
        }
        self.set_committed(&mut g, range, false)
    }

    /// Bring every granule of `range` to `committed`: each run of granules in the other state
    /// takes one `fallocate` (plain to commit, `PUNCH_HOLE | KEEP_SIZE` to uncommit), then its
    /// flags and the committed byte count follow. Returns the bytes whose state changed.
    fn set_committed(
        &self,
        g: &mut Granules,
        range: PhysRange,
        committed: bool,
    ) -> Result<u64, std::io::Error> {
        let mode = if committed {
            0
        } else {
            libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE
        };
        let first = (range.offset / GRANULE_SIZE) as usize;
        let n = (range.len / GRANULE_SIZE) as usize;
        let mut done = 0;
        let mut i = first;
        while i < first + n {
            if g.committed[i] == committed {
                i += 1;
                continue;
            }
            let start = i;
            while i < first + n && g.committed[i] != committed {
                i += 1;
            }
            let off = start as u64 * GRANULE_SIZE;
            let len = (i - start) as u64 * GRANULE_SIZE;
            if committed && self.huge_pages == HugePages::Transparent {
                if let Err(e) = populate_huge(self.fd.as_raw_fd(), off, len) {
                    // Give back what the failed populate took: the range was a hole and no
                    // page uses it, so punching it out again loses nothing.
                    // SAFETY: plain syscall on our own fd, on a range inside the file that
                    // no mapping of a page uses.
                    unsafe {
                        libc::fallocate(
                            self.fd.as_raw_fd(),
                            libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                            off as libc::off_t,
                            len as libc::off_t,
                        )
                    };
                    return Err(e);
                }
            } else {
                // SAFETY: plain syscall on our own fd; the range lies inside the file.
                // Punching a hole drops the range's contents, and no mapping of it is used by
                // any page: the callers only uncommit free ranges.
                let rc = unsafe {
                    libc::fallocate(
                        self.fd.as_raw_fd(),
                        mode,
                        off as libc::off_t,
                        len as libc::off_t,
                    )
                };
                if rc != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            g.committed[start..i].fill(committed);
            // Committed now, or punched out: zeros either way until a page writes them.
            g.handed_out[start..i].fill(false);
            if committed {
                let now = self.committed_bytes.fetch_add(len, Ordering::Relaxed) + len;
                self.peak_committed_bytes.fetch_max(now, Ordering::Relaxed);
            } else {
                self.committed_bytes.fetch_sub(len, Ordering::Relaxed);
            }
            done += len;
        }
        Ok(done)
    }

    /// Uncommit free granules, highest offsets first, until at most `keep` bytes stay
    /// committed in total. Returns the bytes uncommitted.
    pub fn uncommit_free(&self, keep: u64) -> Result<u64, std::io::Error> {
        let mut g = self.granules.lock();
        let mut done = 0;
        let free: Vec<PhysRange> = g.free.iter().rev().copied().collect();
        for r in free {
            // Walk the range's granules downwards: a free range may be committed only in part
            // (e.g. its low end), so take runs of committed granules wherever they are.
            let first = (r.offset / GRANULE_SIZE) as usize;
            let mut i = ((r.offset + r.len) / GRANULE_SIZE) as usize;
            while i > first && self.committed_bytes() > keep {
                if !g.committed[i - 1] {
                    i -= 1;
                    continue;
                }
                let excess = (self.committed_bytes() - keep).div_ceil(GRANULE_SIZE) as usize;
                let end = i;
                while i > first && g.committed[i - 1] && end - i < excess {
                    i -= 1;
                }
                let sub = PhysRange {
                    offset: i as u64 * GRANULE_SIZE,
                    len: (end - i) as u64 * GRANULE_SIZE,
                };
                done += self.set_committed(&mut g, sub, false)?;
            }
            if self.committed_bytes() <= keep {
                break;
            }
        }
        Ok(done)
    }

    /// Blocks of the backing file as the kernel counts them (`st_blocks * 512`).
    pub fn allocated_file_bytes(&self) -> std::io::Result<u64> {
        // SAFETY: `st` is a plain-old-data out parameter fully written by fstat on success.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: valid fd and a valid pointer to `st`.
        if unsafe { libc::fstat(self.fd.as_raw_fd(), &mut st) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(st.st_blocks as u64 * 512)
    }
}

fn create_memfd(huge_pages: bool) -> Result<OwnedFd, HeapError> {
    let name = CString::new("zgc-rs-heap").expect("no NUL in name");
    let mut flags = libc::MFD_CLOEXEC;
    if huge_pages {
        flags |= libc::MFD_HUGETLB | libc::MFD_HUGE_2MB;
    }
    // SAFETY: `name` is a valid NUL-terminated string; memfd_create returns a new fd or -1.
    let fd = unsafe { libc::memfd_create(name.as_ptr(), flags) };
    if fd < 0 {
        return Err(HeapError::os("memfd_create"));
    }
    // SAFETY: `fd` is a freshly created descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn create_file_in(dir: &Path) -> Result<OwnedFd, HeapError> {
    match std::fs::metadata(dir) {
        Err(_) => return Err(HeapError::BackingDirectoryMissing(dir.to_path_buf())),
        Ok(m) if !m.is_dir() => return Err(HeapError::BackingNotADirectory(dir.to_path_buf())),
        Ok(_) => {}
    }
    let n = FILE_COUNTER.fetch_add(1, Ordering::Relaxed);
    let path = dir.join(format!("zgc-rs-heap.{}.{}", std::process::id(), n));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|source| HeapError::BackingDirectoryNotWritable {
            path: dir.to_path_buf(),
            source,
        })?;
    // The file lives as long as the descriptor: unlink it at once so nothing is left behind.
    let _ = std::fs::remove_file(&path);
    Ok(OwnedFd::from(file))
}

/// Commit `[off, off + len)` of a shmem file on transparent huge pages: map it at a 2 MiB
/// aligned address, mark the mapping `MADV_HUGEPAGE`, fault every page in writable
/// (`MADV_POPULATE_WRITE`) and unmap it. The file keeps the memory (on huge pages where the
/// kernel had 2 MiB free, else on 4 KiB ones); ZGC's `fallocate_compat_mmap_tmpfs`.
fn populate_huge(fd: i32, off: u64, len: u64) -> Result<(), std::io::Error> {
    let huge = crate::huge_pages::HUGE_PAGE_SIZE as usize;
    let span = len as usize + huge;
    // SAFETY: a fresh anonymous PROT_NONE reservation at an address the kernel picks; it
    // replaces nothing.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            span,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if base == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    let aligned = (base as usize).next_multiple_of(huge) as *mut libc::c_void;
    let result = (|| {
        // SAFETY: `aligned..aligned+len` lies inside the reservation made above (it has `huge`
        // bytes of slack), which only this function knows, so MAP_FIXED replaces nothing else.
        let p = unsafe {
            libc::mmap(
                aligned,
                len as usize,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_FIXED,
                fd,
                off as libc::off_t,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        for advice in [libc::MADV_HUGEPAGE, libc::MADV_POPULATE_WRITE] {
            // SAFETY: advice on our own mapping of the range just made; populating writes no
            // data (the granules are holes, read as zeros), it only allocates their memory.
            if unsafe { libc::madvise(aligned, len as usize, advice) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    })();
    // SAFETY: unmaps the reservation (and the file mapping inside it) made above, used by no
    // one else.
    unsafe { libc::munmap(base, span) };
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(offset: u64, len: u64) -> PhysRange {
        PhysRange { offset, len }
    }

    /// The front bytes, in order: ranges used up are removed, the last one touched is split,
    /// and a request larger than all of them takes nothing.
    #[test]
    fn take_front_splits_the_last_range_touched() {
        let mut ranges = vec![r(0, 2), r(10, 3), r(20, 4)];
        assert_eq!(PhysRange::take_front(&mut ranges, 10), None);
        assert_eq!(ranges, vec![r(0, 2), r(10, 3), r(20, 4)]);
        assert_eq!(
            PhysRange::take_front(&mut ranges, 4),
            Some(vec![r(0, 2), r(10, 2)])
        );
        assert_eq!(ranges, vec![r(12, 1), r(20, 4)]);
        assert_eq!(PhysRange::take_front(&mut ranges, 1), Some(vec![r(12, 1)]));
        assert_eq!(PhysRange::take_front(&mut ranges, 4), Some(vec![r(20, 4)]));
        assert!(ranges.is_empty());
    }

    /// A heap's file fragmented into free ranges none of which is large enough: `alloc`
    /// takes the lowest ones in order, and refuses more than is free.
    #[test]
    fn alloc_takes_the_lowest_free_ranges_when_none_is_large_enough() {
        let g = GRANULE_SIZE;
        let phys = PhysicalMemory::new(8 * g, &Backing::Memfd, HugePages::Off).unwrap();
        let all = phys.alloc(8 * g).unwrap();
        assert_eq!(all, vec![r(0, 8 * g)]);
        phys.free(&[r(g, g), r(3 * g, 2 * g), r(6 * g, 2 * g)]);
        assert_eq!(phys.alloc(6 * g), None, "5 granules free");
        assert_eq!(
            phys.alloc(4 * g),
            Some(vec![r(g, g), r(3 * g, 2 * g), r(6 * g, g)])
        );
        assert_eq!(phys.free_bytes(), g);
        assert_eq!(phys.alloc(g), Some(vec![r(7 * g, g)]));
    }
}
