//! Heap geometry configuration and its validation (ZGC's `-Xmx`, `-Xms`, `AllocateHeapAt`,
//! `UseLargePages`). Validation returns a [`HeapError`] whose message says what to change.

use crate::address::AddressLayout;
use crate::error::HeapError;
use crate::GRANULE_SIZE;
use std::path::PathBuf;

/// Where the heap's physical memory comes from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Backing {
    /// An anonymous `memfd` (the default, like ZGC without `AllocateHeapAt`).
    #[default]
    Memfd,
    /// A file created (and at once unlinked) in this directory, e.g. a tmpfs or hugetlbfs mount.
    Directory(PathBuf),
}

/// The memory geometry of a heap.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryConfig {
    /// Maximum heap size in bytes (a multiple of the 2 MiB granule).
    pub max_heap: u64,
    /// Bytes committed at start-up and never uncommitted below (rounded up to granules).
    pub initial_heap: u64,
    /// Physical backing.
    pub backing: Backing,
    /// Back the memfd with huge pages (`MFD_HUGETLB`); needs a kernel huge page pool.
    pub huge_pages: bool,
    /// Place the heap at this offset in the offset space (default: the first free slot).
    /// For experiments and tests; a taken range gives [`HeapError::AddressRangeTaken`].
    pub reserve_at: Option<u64>,
    /// Use this instead of `/proc/sys/vm/max_map_count` in the mapping budget check
    /// (for tests and what-if checks).
    pub max_map_count: Option<u64>,
}

impl MemoryConfig {
    /// A memfd-backed heap of `max_heap` bytes with nothing committed up front.
    pub fn new(max_heap: u64) -> Self {
        MemoryConfig {
            max_heap,
            initial_heap: 0,
            backing: Backing::Memfd,
            huge_pages: false,
            reserve_at: None,
            max_map_count: None,
        }
    }

    /// Check sizes; returns the address layout for the heap.
    pub fn validate(&self) -> Result<AddressLayout, HeapError> {
        if self.max_heap == 0 {
            return Err(HeapError::ZeroHeap);
        }
        if !self.max_heap.is_multiple_of(GRANULE_SIZE) {
            return Err(HeapError::UnalignedHeap(self.max_heap));
        }
        let layout = AddressLayout::for_max_heap(self.max_heap)
            .ok_or(HeapError::HeapTooLarge(self.max_heap))?;
        if self.initial_heap > self.max_heap {
            return Err(HeapError::InitialAboveMax {
                initial: self.initial_heap,
                max: self.max_heap,
            });
        }
        if let Some(physical) = physical_memory_bytes() {
            // The heap may be up to physical memory; beyond it the kernel would kill the
            // process long before an out-of-memory error could be returned.
            if self.max_heap > physical {
                return Err(HeapError::HeapAbovePhysicalMemory {
                    max: self.max_heap,
                    physical,
                });
            }
        }
        Ok(layout)
    }
}

/// Total physical memory of the machine, from `sysconf`.
pub fn physical_memory_bytes() -> Option<u64> {
    // SAFETY: sysconf has no memory-safety preconditions.
    let (pages, size) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    if pages <= 0 || size <= 0 {
        None
    } else {
        Some(pages as u64 * size as u64)
    }
}

/// Parse a size like `256M`, `4g`, `512k`, `2097152` (binary units).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let mult = match c.to_ascii_lowercase() {
                'k' => 1u64 << 10,
                'm' => 1 << 20,
                'g' => 1 << 30,
                't' => 1 << 40,
                _ => {
                    return Err(format!(
                        "unknown size unit '{c}' in {s:?}: use K, M, G or T"
                    ))
                }
            };
            (&t[..i], mult)
        }
        _ => (t, 1),
    };
    let n: u64 = num
        .parse()
        .map_err(|_| format!("{s:?} is not a size: use a number with K, M, G or T, e.g. 256M"))?;
    n.checked_mul(mult)
        .ok_or_else(|| format!("{s:?} is too large"))
}

/// Format bytes as a short human size (`256M`, `1G`, `1536K`).
pub fn format_size(bytes: u64) -> String {
    for (unit, shift) in [("T", 40), ("G", 30), ("M", 20), ("K", 10)] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{}{}", bytes >> shift, unit);
        }
    }
    format!("{bytes}B")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_and_format() {
        assert_eq!(parse_size("256M").unwrap(), 256 << 20);
        assert_eq!(parse_size("4g").unwrap(), 4 << 30);
        assert_eq!(parse_size("2097152").unwrap(), 2 << 20);
        assert!(parse_size("12X").is_err());
        assert!(parse_size("abc").is_err());
        assert_eq!(format_size(256 << 20), "256M");
        assert_eq!(format_size(1 << 30), "1G");
        assert_eq!(format_size(3 << 19), "1536K");
    }
}
