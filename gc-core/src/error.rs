//! Errors of the mechanism layer. Every message says what to change.

use std::path::PathBuf;

/// Why a heap could not be configured or created.
#[derive(Debug, thiserror::Error)]
pub enum HeapError {
    #[error("max heap is 0 bytes: give a size of at least one 2 MiB granule, e.g. 256M")]
    ZeroHeap,
    #[error(
        "max heap {0} bytes is not a multiple of the 2 MiB granule: round it to {rounded} bytes \
         (e.g. use M or G sizes)",
        rounded = .0.div_ceil(crate::GRANULE_SIZE) * crate::GRANULE_SIZE
    )]
    UnalignedHeap(u64),
    #[error(
        "max heap {0} bytes is beyond what 43 offset bits can address (8 TiB): choose 8T or less"
    )]
    HeapTooLarge(u64),
    #[error("initial heap {initial} bytes is larger than the max heap {max} bytes: lower it")]
    InitialAboveMax { initial: u64, max: u64 },
    #[error(
        "max heap {max} bytes is more than this machine's memory ({physical} bytes): choose a \
         smaller heap"
    )]
    HeapAbovePhysicalMemory { max: u64, physical: u64 },
    #[error("backing directory {0:?} does not exist: create it or name another (e.g. /dev/shm)")]
    BackingDirectoryMissing(PathBuf),
    #[error("backing path {0:?} is not a directory: name a directory (e.g. /dev/shm)")]
    BackingNotADirectory(PathBuf),
    #[error(
        "cannot create the heap file in backing directory {path:?}: {source}; make it writable \
         or name another directory"
    )]
    BackingDirectoryNotWritable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "huge pages (hugetlb) requested: the heap needs {needed} pages of 2 MiB but the kernel's \
         pool has {available} available ({free} free, {reserved} of them promised to other \
         mappings; vm.nr_hugepages is {nr_hugepages}): raise the pool by what is missing with \
         `{how}` (as root; undo by setting it back to {nr_hugepages}), or turn huge pages off"
    )]
    HugePagesUnavailable {
        /// 2 MiB pages the heap may commit: the max heap in huge pages.
        needed: u64,
        /// Pool pages free and not reserved by other mappings.
        available: u64,
        free: u64,
        reserved: u64,
        nr_hugepages: u64,
        /// The pool size that leaves `needed` pages available: `nr_hugepages` plus what is
        /// missing.
        suggested: u64,
        /// The command that sets it (`sysctl -w vm.nr_hugepages=N`).
        how: String,
    },
    #[error(
        "transparent huge pages requested, but shmem transparent huge pages are off: {file} is \
         `{value}`; allow them with `echo advise > {file}` (as root; undo with \
         `echo {value} > {file}`), or turn huge pages off"
    )]
    TransparentHugePagesRefused {
        /// The switch that refuses (`/sys/kernel/mm/transparent_hugepage/shmem_enabled`).
        file: &'static str,
        /// Its value (`never`, `deny`, or `missing` on a kernel without them).
        value: String,
    },
    #[error(
        "huge pages `{setting}` with backing directory {dir:?}: that needs {needs}; choose \
         another directory or turn huge pages off"
    )]
    HugePagesBacking {
        /// The setting's name (`transparent`, `hugetlb`).
        setting: &'static str,
        dir: PathBuf,
        needs: &'static str,
    },
    #[error(
        "address range {start:#x}..{end:#x} for the heap views is already taken by another mapping: \
         {hint}"
    )]
    AddressRangeTaken { start: u64, end: u64, hint: String },
    #[error(
        "vm.max_map_count is {limit} and {in_use} mappings are in use, but this heap could need \
         {needed} more (4 views x {granules} granules + reservations): raise it with \
         `sysctl -w vm.max_map_count={suggested}` or choose a smaller heap"
    )]
    MapCountTooLow {
        limit: u64,
        in_use: u64,
        needed: u64,
        granules: u64,
        suggested: u64,
    },
    /// A call on the heap views named a range they do not own (`Views::map`, `Views::unmap`):
    /// a bug in the caller, refused so that no other mapping is replaced.
    #[error(
        "{what}: range {start:#x}+{len:#x} is not whole granules inside the views' reservation \
         {reserved_start:#x}..{reserved_end:#x}; nothing was changed"
    )]
    RangeOutsideReservation {
        what: &'static str,
        start: u64,
        len: u64,
        reserved_start: u64,
        reserved_end: u64,
    },
    /// A policy setting of the runtime (not the heap geometry) is out of range.
    #[error("{setting} {problem}")]
    InvalidSetting {
        /// The setting, as its builder names it (e.g. `pacing_max_delay`).
        setting: &'static str,
        /// What is wrong and what to give instead.
        problem: String,
    },
    #[error("{what} failed: {source}")]
    Os {
        what: &'static str,
        source: std::io::Error,
    },
}

impl HeapError {
    pub(crate) fn os(what: &'static str) -> HeapError {
        HeapError::Os {
            what,
            source: std::io::Error::last_os_error(),
        }
    }
}

/// Why an allocation of a page or an object failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AllocError {
    #[error(
        "out of memory: {requested} bytes requested, {used} of {capacity} bytes in use; raise the \
         max heap or release references"
    )]
    OutOfMemory {
        requested: u64,
        used: u64,
        capacity: u64,
    },
    #[error(
        "object of {size} bytes is larger than the heap can ever hold ({max} bytes): raise the max \
         heap or split the object"
    )]
    ObjectTooLarge { size: u64, max: u64 },
    #[error(
        "object with {n_refs} reference slots and {n_bytes} raw bytes overflows the size limits"
    )]
    ObjectSizeOverflow { n_refs: u64, n_bytes: u64 },
    #[error(
        "object with {n_values} value slots: an object holds at most {max}; split the values \
         over several objects"
    )]
    TooManyValueSlots { n_values: u64, max: u64 },
    #[error("committing {bytes} bytes of physical memory failed: {message}")]
    CommitFailed { bytes: u64, message: String },
}
