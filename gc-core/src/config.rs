//! Heap geometry configuration and its validation (ZGC's `-Xmx`, `-Xms`, `AllocateHeapAt`,
//! `UseLargePages`). Validation returns a [`HeapError`] whose message says what to change.

use crate::address::AddressLayout;
use crate::error::HeapError;
use crate::huge_pages::HugePages;
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

impl Backing {
    /// The directory of a [`Backing::Directory`]; `None` for the memfd.
    pub fn directory(&self) -> Option<&std::path::Path> {
        match self {
            Backing::Memfd => None,
            Backing::Directory(d) => Some(d),
        }
    }
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
    /// Which pages back the heap: 4 KiB (`off`, the default), shmem transparent huge pages, or
    /// the hugetlb pool ([`HugePages`]); checked against the system when the heap is created.
    pub huge_pages: HugePages,
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
            huge_pages: HugePages::Off,
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

/// The size grammar, in words, for error messages.
const SIZE_FORMS: &str = "a whole number of bytes, optionally followed by K, M, G or T \
     (binary: 1K = 1024) and an optional B or iB, in any case, e.g. 512, 64K, 16M, 16MB, \
     16MiB, 1G, 1GiB, 2T";

/// Parse a size: a whole number of bytes, optionally followed by a binary unit `K`, `M`, `G`
/// or `T` (1K = 1024 bytes) and an optional `B` or `iB`, in any case: `512`, `512B`, `64K`,
/// `16M`, `16MB`, `16MiB`, `1g`, `1GiB`, `2T`. Surrounding whitespace is ignored. This is the
/// one size grammar of the workspace (heap sizes, `--initial-heap`, message sizes, lox's
/// `--heap`); [`format_size`]'s output parses back to the same number. A malformed size or
/// one above `u64::MAX` bytes is an error that names the accepted forms, never a panic.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let digits_end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(digits_end);
    if digits.is_empty() || !unit.chars().all(|c| c.is_ascii_alphabetic()) {
        return Err(format!("{s:?} is not a size: give {SIZE_FORMS}"));
    }
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => {
            return Err(format!(
                "unknown size unit '{unit}' in {s:?}: give {SIZE_FORMS}"
            ))
        }
    };
    let too_large =
        || format!("{s:?} is too large: a size is at most 2^64 - 1 bytes (under 16384T)");
    let n: u64 = digits.parse().map_err(|_| too_large())?;
    n.checked_mul(1 << shift).ok_or_else(too_large)
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
        assert_eq!(format_size(100), "100B");
        assert_eq!(parse_size(&format_size(100)).unwrap(), 100);
    }

    #[test]
    fn every_form_of_the_grammar_parses() {
        for (text, bytes) in [
            ("0", 0),
            ("512", 512),
            ("512B", 512),
            ("512b", 512),
            ("64K", 64 << 10),
            ("64k", 64 << 10),
            ("64KB", 64 << 10),
            ("64KiB", 64 << 10),
            ("16M", 16 << 20),
            ("16m", 16 << 20),
            ("16MB", 16 << 20),
            ("16mb", 16 << 20),
            ("16MiB", 16 << 20),
            ("16mib", 16 << 20),
            ("1G", 1 << 30),
            ("1GB", 1 << 30),
            ("1GiB", 1 << 30),
            ("2T", 2 << 40),
            ("2TB", 2 << 40),
            ("2TiB", 2 << 40),
            (" 8M ", 8 << 20),
            ("18446744073709551615", u64::MAX),
            ("16777215T", 16_777_215 << 40),
        ] {
            assert_eq!(parse_size(text), Ok(bytes), "{text:?}");
        }
    }

    #[test]
    fn malformed_sizes_are_errors_naming_the_accepted_forms() {
        for text in [
            "", " ", "M", "MB", "abc", "-1M", "+1M", "1.5G", "1 G", "1_000", "1e6", "G1",
        ] {
            let e = parse_size(text).unwrap_err();
            assert!(e.contains("is not a size"), "{text:?}: {e}");
            assert!(
                e.contains("16MB") && e.contains("16MiB") && e.contains("2T"),
                "{e}"
            );
        }
        for (text, unit) in [
            ("1X", "X"),
            ("12x", "x"),
            ("1P", "P"),
            ("1KK", "KK"),
            ("1Mi", "Mi"),
        ] {
            let e = parse_size(text).unwrap_err();
            assert!(
                e.contains(&format!("unknown size unit '{unit}'")),
                "{text:?}: {e}"
            );
            assert!(e.contains("K, M, G or T"), "{e}");
        }
    }

    #[test]
    fn overflow_is_an_error_not_a_panic() {
        for text in [
            "18446744073709551616",
            "99999999999999999999g",
            "16777216T",
            "17179869184G",
            "99999999999999999999999999999999999999",
        ] {
            let e = parse_size(text).unwrap_err();
            assert!(e.contains("is too large"), "{text:?}: {e}");
        }
        assert_eq!(format_size(256 << 20), "256M");
        assert_eq!(format_size(1 << 30), "1G");
        assert_eq!(format_size(3 << 19), "1536K");
    }
}
