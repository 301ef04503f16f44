//! A memory report that explains RSS, in the spirit of `jcmd VM.native_memory summary` plus
//! what NMT leaves out: the heap (reserved, committed, used: the collector's own accounting),
//! GC metadata (live maps, forwarding tables, remembered sets, handle stacks, mark stacks),
//! direct buffers, pooled native memory (every registered [`crate::native::NativePool`], and
//! pools passed in), glibc malloc's arenas (`mallinfo2`), thread stacks, mapped files; then
//! the process's RSS and Pss with every `smaps_rollup` field, and `/proc/self/smaps` summed
//! per category (heap views, malloc arenas, stacks, other anonymous, files), ending with the
//! part of RSS none of that explains.
//!
//! RSS counts a multi-mapped page once per view it was touched through (up to 3x); Pss counts
//! it once. Committed bytes are the truth for the heap; Pss for the process.

use super::heap_inner::HeapInner;
use crate::native::{NativePool, PoolStats};
use crate::observe::proc_info::{
    self, CategoryUsage, MallocStats, MappingKind, SmapsBreakdown, SmapsRollup,
};
use gc_core::{PageKind, View};
use serde::Serialize;

/// Leak records kept per pool in a report (the pool keeps more).
const LEAKS_SHOWN: usize = 10;

/// Memory facts at one moment.
#[derive(Clone, Debug, Serialize)]
pub struct MemoryReport {
    /// Max heap.
    pub capacity: u64,
    /// Bytes in pages in use.
    pub used: u64,
    /// Bytes of freed pages kept mapped in the page cache.
    pub cached: u64,
    /// Physical memory committed to the heap (the collector's accounting).
    pub committed: u64,
    /// Address space reserved per view.
    pub reserved_per_view: u64,
    /// The views (each a mapping of the same physical memory).
    pub views: u64,
    pub small_pages: u64,
    pub medium_pages: u64,
    pub large_pages: u64,
    /// Live maps: those of the pages in use and those kept for the next small pages.
    pub live_map_bytes: u64,
    pub forwarding_table_bytes: u64,
    /// The remembered sets' bitmaps (`HeapConfig::track_generations`; 0 without it): two
    /// bits per heap word of every 2 MiB granule that has ever had a remembered slot.
    #[serde(default)]
    pub remembered_set_bytes: u64,
    /// Bytes in memory of the side-table arenas (the reservations small pages' live maps and
    /// the remembered sets are carved from; `gc_core::side_arena`): anonymous memory of their
    /// own, counted in "other anonymous" and explained there.
    #[serde(default)]
    pub side_table_rss: u64,
    pub handle_stack_bytes: u64,
    /// The mark queue and the mutators' mark buffers (entries queued or buffered now; between
    /// cycles normally empty).
    #[serde(default)]
    pub mark_stack_bytes: u64,
    pub global_handles: u64,
    pub weak_handles: u64,
    /// Direct and pooled buffers owned by this heap's objects (their native memory is in the
    /// pools listed next: the heap's own "direct (heap #N)" pool, and the embedders' pools).
    pub direct: crate::observe::DirectStats,
    /// Native buffer pools: the registered ones and any passed in.
    pub native_pools: Vec<PoolStats>,
    /// glibc malloc (`available: false` elsewhere).
    pub malloc: MallocStats,
    /// Threads of the process.
    pub threads: u64,
    /// `VmRSS` (from `smaps_rollup`).
    pub rss: u64,
    /// Pss (from `smaps_rollup`).
    pub pss: u64,
    /// Every field of `/proc/self/smaps_rollup`.
    pub smaps_rollup: SmapsRollup,
    /// `/proc/self/smaps` per category.
    pub smaps: SmapsBreakdown,
    /// RSS of the "other anonymous" category that neither the pools' chunks and unpooled
    /// buffers, the side-table arenas nor malloc's mmapped chunks can account for: the rest
    /// of RSS.
    pub unexplained_rss: u64,
}

impl MemoryReport {
    pub(crate) fn collect(heap: &HeapInner, extra_pools: &[NativePool]) -> Self {
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
        live_map += heap.cx.pages.memory().live_map_pool().pooled_bytes();
        let fwd = heap.relocation_set.footprint();
        let handles = heap
            .roots
            .mutators()
            .iter()
            .map(|m| m.handles.top() as u64 * 8)
            .sum();
        let mem = heap.cx.pages.memory();
        let (start, size) = mem.reservation();
        let layout = mem.layout();
        let view_ranges: Vec<(u64, u64)> = View::ALL
            .iter()
            .map(|&v| {
                let base = layout.address(start, v).raw();
                (base, base + size)
            })
            .collect();
        let mut pools = crate::native::registered_pools();
        for p in extra_pools {
            if !pools.iter().any(|q| q.same_pool(p)) {
                pools.push(p.clone());
            }
        }
        let native_pools: Vec<PoolStats> = pools
            .iter()
            .map(|p| {
                let mut s = p.stats_with_residency();
                s.leaks.truncate(LEAKS_SHOWN);
                s
            })
            .collect();
        let malloc = proc_info::malloc_stats();
        // The side tables' arenas (live maps, remembered sets): anonymous memory of their
        // own, in memory as far as it was touched.
        let side_tables: u64 = [
            mem.live_map_pool().arena(),
            heap.cx.generations.as_ref().and_then(|g| g.arena()),
        ]
        .into_iter()
        .flatten()
        .map(|a| a.resident_bytes())
        .sum();
        let smaps = proc_info::breakdown(&proc_info::smaps(), &view_ranges);
        let rollup = proc_info::smaps_rollup();
        let explained_anon: u64 = native_pools
            .iter()
            .map(|p| p.chunk_resident_bytes + p.unpooled_bytes)
            .sum::<u64>()
            + malloc.mmapped_bytes
            + side_tables;
        let unexplained = smaps
            .get(MappingKind::Anonymous)
            .rss
            .saturating_sub(explained_anon);
        MemoryReport {
            capacity: u.capacity,
            used: u.used,
            cached: u.cached,
            committed: u.committed,
            reserved_per_view: size,
            views: View::ALL.len() as u64,
            small_pages: small,
            medium_pages: medium,
            large_pages: large,
            live_map_bytes: live_map,
            forwarding_table_bytes: fwd,
            remembered_set_bytes: heap.cx.generations.as_ref().map_or(0, |g| g.footprint()),
            side_table_rss: side_tables,
            handle_stack_bytes: handles,
            mark_stack_bytes: heap.mark.footprint(&heap.roots),
            global_handles: heap.roots.globals().len() as u64,
            weak_handles: heap.weaks.handles().len() as u64,
            direct: heap.direct.stats(),
            native_pools,
            malloc,
            threads: proc_info::count_threads(),
            rss: rollup.rss,
            pss: rollup.pss,
            smaps_rollup: rollup,
            smaps,
            unexplained_rss: unexplained,
        }
    }

    /// The heap views' share of `smaps`.
    pub fn heap_views(&self) -> CategoryUsage {
        self.smaps.get(MappingKind::HeapView)
    }

    /// What RSS counts twice or three times: heap pages touched through more than one view
    /// (heap views' RSS minus their Pss).
    pub fn multi_mapping_excess(&self) -> u64 {
        let h = self.heap_views();
        h.rss.saturating_sub(h.pss)
    }

    /// The report as JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a report serializes")
    }
}

/// `1.5M`, `320K`, `12B`.
fn human(b: u64) -> String {
    match b {
        b if b >= 1 << 30 => format!("{:.1}G", b as f64 / (1u64 << 30) as f64),
        b if b >= 1 << 20 => format!("{:.1}M", b as f64 / (1u64 << 20) as f64),
        b if b >= 1 << 10 => format!("{:.1}K", b as f64 / 1024.0),
        b => format!("{b}B"),
    }
}

impl std::fmt::Display for MemoryReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let m = human;
        let r = &self.smaps_rollup;
        let hv = self.heap_views();
        writeln!(
            f,
            "Native memory summary (cf. jcmd VM.native_memory summary)"
        )?;
        writeln!(
            f,
            "Process: RSS {}, Pss {}, {} threads",
            m(self.rss),
            m(self.pss),
            self.threads
        )?;
        writeln!(
            f,
            "  smaps_rollup: Pss anon {} / file {} / shmem {}; anonymous {}; private clean {} / dirty {}; \
             shared clean {} / dirty {}; swap {} (Pss {}); locked {}; anon huge pages {}",
            m(r.pss_anon), m(r.pss_file), m(r.pss_shmem), m(r.anonymous), m(r.private_clean),
            m(r.private_dirty), m(r.shared_clean), m(r.shared_dirty), m(r.swap), m(r.swap_pss),
            m(r.locked), m(r.anon_huge_pages)
        )?;
        writeln!(
            f,
            "  multi-mapping: the heap views hold RSS {} but Pss {}: {} of RSS is heap pages counted \
             once per view they were touched through (a page touched through three views counts \
             three times in RSS, once in Pss)",
            m(hv.rss),
            m(hv.pss),
            m(self.multi_mapping_excess())
        )?;
        writeln!(
            f,
            "Heap: reserved {} x {} views, capacity {}, committed {} (resident: {}, the views' \
             Pss), used {}, page cache {}; pages {} small, {} medium, {} large",
            m(self.reserved_per_view),
            self.views,
            m(self.capacity),
            m(self.committed),
            m(hv.pss),
            m(self.used),
            m(self.cached),
            self.small_pages,
            self.medium_pages,
            self.large_pages
        )?;
        writeln!(
            f,
            "GC metadata: live maps {}, forwarding tables {}, remembered sets {}, handle stacks {}, \
             mark stacks {}; {} global / {} weak handles (small pages' live maps and the \
             remembered sets in side-table arenas, {} resident; the rest malloc'd: inside \
             malloc below)",
            m(self.live_map_bytes),
            m(self.forwarding_table_bytes),
            m(self.remembered_set_bytes),
            m(self.handle_stack_bytes),
            m(self.mark_stack_bytes),
            self.global_handles,
            self.weak_handles,
            m(self.side_table_rss)
        )?;
        let d = &self.direct;
        writeln!(
            f,
            "Direct buffers: {} owners alive, {} of the {} limit held ({} direct, {} pooled; \
             {} mapped for direct); {} allocated, {} released, {} freed by cleaners ({}), {} \
             limit cycles, {} refused",
            d.owners,
            m(d.reserved_bytes),
            m(d.limit),
            m(d.direct_bytes),
            m(d.pooled_bytes),
            m(d.unpooled_mapped_bytes),
            d.allocated,
            d.released,
            d.cleaned,
            m(d.cleaned_bytes),
            d.limit_cycles,
            d.limit_failures
        )?;
        if self.native_pools.is_empty() {
            writeln!(f, "Native pools: none")?;
        } else {
            let chunks: u64 = self.native_pools.iter().map(|p| p.chunk_bytes).sum();
            let res: u64 = self
                .native_pools
                .iter()
                .map(|p| p.chunk_resident_bytes)
                .sum();
            let unp: u64 = self.native_pools.iter().map(|p| p.unpooled_bytes).sum();
            writeln!(
                f,
                "Native pools: {} registered or passed in; chunks {} mapped / {} resident, unpooled {}",
                self.native_pools.len(),
                m(chunks),
                m(res),
                m(unp)
            )?;
            for p in &self.native_pools {
                writeln!(f, "  {p}")?;
                for l in &p.leaks {
                    writeln!(f, "    {l}")?;
                }
            }
        }
        let mi = &self.malloc;
        if mi.available {
            writeln!(
                f,
                "Malloc (glibc): {} arenas, {} from the system ({} in use, {} free), {} mmapped \
                 chunks {}",
                mi.arenas,
                m(mi.arena_bytes),
                m(mi.in_use_bytes),
                m(mi.free_bytes),
                mi.mmapped_chunks,
                m(mi.mmapped_bytes)
            )?;
        } else {
            writeln!(f, "Malloc: no statistics (not glibc)")?;
        }
        let ts = self.smaps.get(MappingKind::ThreadStack);
        let ms = self.smaps.get(MappingKind::MainStack);
        writeln!(
            f,
            "Thread stacks: {} threads; {} thread stack mappings (glibc keeps exited threads' \
             stacks for reuse), {} reserved, {} resident; main [stack] {} resident",
            self.threads,
            ts.mappings,
            m(ts.size),
            m(ts.rss),
            m(ms.rss)
        )?;
        let fl = self.smaps.get(MappingKind::File);
        writeln!(
            f,
            "Mapped files: {} mappings, RSS {}, Pss {}",
            fl.mappings,
            m(fl.rss),
            m(fl.pss)
        )?;
        writeln!(
            f,
            "By mapping (/proc/self/smaps):  {:>8} {:>9} {:>9} {:>9}",
            "mappings", "size", "RSS", "Pss"
        )?;
        let row = |f: &mut std::fmt::Formatter<'_>, name: &str, u: &CategoryUsage| {
            writeln!(
                f,
                "  {:<29} {:>8} {:>9} {:>9} {:>9}",
                name,
                u.mappings,
                m(u.size),
                m(u.rss),
                m(u.pss)
            )
        };
        for c in &self.smaps.categories {
            row(f, c.name, &c.usage)?;
        }
        row(f, "total", &self.smaps.total)?;
        // RSS as the sum of its parts: every category but "other anonymous", then what of
        // that one the pools, the side tables and malloc's mmapped chunks explain, then the
        // rest.
        let other = self.smaps.get(MappingKind::Anonymous);
        let explained = other.rss - self.unexplained_rss;
        write!(f, "Rest of RSS: RSS {} =", m(self.smaps.total.rss))?;
        for c in &self.smaps.categories {
            if c.kind != MappingKind::Anonymous && c.usage.rss > 0 {
                write!(f, " {} {} +", c.name, m(c.usage.rss))?;
            }
        }
        write!(
            f,
            " native pools, side tables and malloc's mmapped chunks {} + {} unexplained \
             (anonymous memory of other allocators and libraries)",
            m(explained),
            m(self.unexplained_rss)
        )
    }
}
