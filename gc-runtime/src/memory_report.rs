//! A memory report in the spirit of `jcmd VM.native_memory`: heap capacity, used, cached and
//! committed bytes (the collector's own accounting), off-heap metadata (live maps, forwarding
//! tables, handle stacks), and the process's Pss next to its RSS.
//!
//! RSS counts a multi-mapped page once per view it was touched through (up to 3x); Pss counts
//! it once. Committed bytes are the truth for the heap; Pss for the process.

use crate::heap_inner::HeapInner;
use gc_core::{proc_info, PageKind};
use serde::Serialize;

/// Memory facts at one moment.
#[derive(Clone, Debug, Serialize)]
pub struct MemoryReport {
    pub capacity: u64,
    pub used: u64,
    pub cached: u64,
    pub committed: u64,
    pub small_pages: u64,
    pub medium_pages: u64,
    pub large_pages: u64,
    pub live_map_bytes: u64,
    pub forwarding_table_bytes: u64,
    pub handle_stack_bytes: u64,
    pub global_handles: u64,
    pub weak_handles: u64,
    pub rss: u64,
    pub pss: u64,
}

impl MemoryReport {
    pub(crate) fn collect(heap: &HeapInner) -> Self {
        let u = heap.cx.pages.usage();
        let (mut small, mut medium, mut large, mut live_map) = (0, 0, 0, 0);
        for p in heap.cx.pages.snapshot() {
            match p.kind() {
                PageKind::Small => small += 1,
                PageKind::Medium => medium += 1,
                PageKind::Large => large += 1,
            }
            live_map += p.live_map().slots() as u64 / 4;
        }
        let fwd = heap.relocation_set.footprint();
        let handles = heap
            .roots
            .mutators()
            .iter()
            .map(|m| m.handles.top() as u64 * 8)
            .sum();
        let pm = proc_info::process_memory();
        MemoryReport {
            capacity: u.capacity,
            used: u.used,
            cached: u.cached,
            committed: u.committed,
            small_pages: small,
            medium_pages: medium,
            large_pages: large,
            live_map_bytes: live_map,
            forwarding_table_bytes: fwd,
            handle_stack_bytes: handles,
            global_handles: heap.roots.globals().len() as u64,
            weak_handles: heap.weaks.handles().len() as u64,
            rss: pm.rss,
            pss: pm.pss,
        }
    }
}

impl std::fmt::Display for MemoryReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let m = |b: u64| format!("{:.1}M", b as f64 / (1 << 20) as f64);
        writeln!(
            f,
            "Heap: capacity {}, used {}, page cache {}, committed {}",
            m(self.capacity),
            m(self.used),
            m(self.cached),
            m(self.committed)
        )?;
        writeln!(
            f,
            "Pages: {} small, {} medium, {} large",
            self.small_pages, self.medium_pages, self.large_pages
        )?;
        writeln!(f, "Off-heap: live maps {}, forwarding tables {}, handle stacks {}, {} global / {} weak handles", m(self.live_map_bytes), m(self.forwarding_table_bytes), m(self.handle_stack_bytes), self.global_handles, self.weak_handles)?;
        write!(f, "Process: Pss {}, RSS {} (RSS counts a heap page once per view it was touched through, up to 3x; Pss counts it once)", m(self.pss), m(self.rss))
    }
}
