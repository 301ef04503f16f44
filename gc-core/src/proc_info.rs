//! Facts about this process from `/proc`: mappings, file descriptors and memory (RSS vs Pss).
//!
//! Multi-mapping makes RSS misleading: a page touched through all three views is counted
//! three times in `VmRSS` but once in `Pss` (proportional set size). Memory reports use the
//! collector's own committed-bytes accounting and Pss, never RSS alone.

use serde::Serialize;

/// Number of mappings (lines of `/proc/self/maps`).
pub fn count_mappings() -> u64 {
    std::fs::read_to_string("/proc/self/maps")
        .map(|s| s.lines().count() as u64)
        .unwrap_or(0)
}

/// Number of open file descriptors (entries of `/proc/self/fd`).
pub fn count_fds() -> u64 {
    std::fs::read_dir("/proc/self/fd")
        .map(|d| d.count() as u64)
        .unwrap_or(0)
}

/// Resident and proportional memory of this process, in bytes.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct ProcessMemory {
    /// Resident set size: counts a multi-mapped page once per view.
    pub rss: u64,
    /// Proportional set size: counts each physical page once.
    pub pss: u64,
}

/// Read `/proc/self/smaps_rollup`.
pub fn process_memory() -> ProcessMemory {
    let text = std::fs::read_to_string("/proc/self/smaps_rollup").unwrap_or_default();
    let field = |name: &str| -> u64 {
        text.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024)
    };
    ProcessMemory {
        rss: field("Rss:"),
        pss: field("Pss:"),
    }
}
