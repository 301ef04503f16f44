//! The page allocator (ZGC's `ZPageAllocator`): owns the physical memory, the four views,
//! the page table and the page cache, and enforces the max-heap limit.
//!
//! Allocating a page takes cached memory of the same size if there is some; otherwise it takes
//! physical file ranges (flushing cached memory of other sizes when the file is full), commits
//! them, reserves a virtual range and maps the ranges into all four views. Freeing a page
//! puts its memory back in the cache. `used` counts bytes in live pages; `committed` counts
//! bytes of the file that are backed by memory.

use crate::address::{AddressLayout, View, VIRTUAL_TO_PHYSICAL_RATIO};
use crate::address_space::AddressSpace;
use crate::config::MemoryConfig;
use crate::error::{AllocError, HeapError};
use crate::huge_pages::{HugePages, PageSizeReading};
use crate::live_map_pool::LiveMapPool;
use crate::page::{Page, PageKind, PageMemory, PageSizes, SMALL_ALIGNMENT_SHIFT};
use crate::page_cache::PageCache;
use crate::page_table::PageTable;
use crate::physical::{PhysRange, PhysicalMemory};
use crate::virtual_memory::{self, Views};
use crate::word::Offset;
use crate::GRANULE_SIZE;
use parking_lot::Mutex;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// Pattern written over freed pages when poisoning is on, so stale reads show up.
pub const POISON: u8 = 0xDB;

struct State {
    cache: PageCache,
    vspace: AddressSpace,
}

/// A snapshot of the allocator's accounting.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct MemoryUsage {
    /// Max heap.
    pub capacity: u64,
    /// Bytes in pages that are in use.
    pub used: u64,
    /// Bytes of freed pages kept mapped in the page cache.
    pub cached: u64,
    /// Bytes of physical memory committed.
    pub committed: u64,
    /// The most bytes of physical memory that were ever committed at once.
    pub peak_committed: u64,
}

/// Owner of a heap's memory.
pub struct PageAllocator {
    config: MemoryConfig,
    layout: AddressLayout,
    sizes: PageSizes,
    // Field order matters for drop: the page table's references go before the views unmap.
    page_table: PageTable,
    views: Views,
    physical: PhysicalMemory,
    state: Mutex<State>,
    used: AtomicU64,
    poison: AtomicBool,
    pages_allocated: AtomicU64,
    /// Calls that mapped memory into the views (one `mmap` per view each).
    views_mapped: AtomicU64,
    /// Small pages' live maps, recycled from dropped pages.
    live_maps: Arc<LiveMapPool>,
}

impl PageAllocator {
    /// Validate `config`, create the backing file, reserve the views, commit the initial heap.
    pub fn new(config: &MemoryConfig) -> Result<Self, HeapError> {
        let layout = config.validate()?;
        let limit = match config.max_map_count {
            Some(l) => l,
            None => virtual_memory::max_map_count().unwrap_or(u64::MAX),
        };
        virtual_memory::check_map_count(config.max_heap, limit, virtual_memory::count_mappings())?;
        let physical = PhysicalMemory::new(config.max_heap, &config.backing, config.huge_pages)?;
        let reserve = (config.max_heap * VIRTUAL_TO_PHYSICAL_RATIO).min(layout.offset_space());
        let mut views = Views::reserve(layout, reserve, config.reserve_at.map(Offset::from_raw))?;
        if config.huge_pages == HugePages::Transparent {
            views = views.advise_huge_pages();
        }
        let initial = config.initial_heap.div_ceil(GRANULE_SIZE) * GRANULE_SIZE;
        if initial > 0 {
            physical
                .commit(PhysRange {
                    offset: 0,
                    len: initial,
                })
                .map_err(|source| HeapError::Os {
                    what: "committing the initial heap (fallocate, or faulting it in on \
                           transparent huge pages)",
                    source,
                })?;
        }
        let sizes = PageSizes::for_max_heap(config.max_heap);
        // Up to twice as many maps kept as small pages fit in the heap: a page's memory is
        // reused as soon as it is freed, but the page (and its map) lives on while a forwarding
        // table or an epoch guard still refers to it, so up to a heap's worth of freed pages
        // still hold their maps when the next heap's worth is allocated. (A 5 s heap-churn run
        // at 256M had 220 maps in existence for its 128 pages.)
        let live_maps = LiveMapPool::new(
            (sizes.small >> SMALL_ALIGNMENT_SHIFT) as usize,
            2 * (config.max_heap / sizes.small) as usize,
        );
        let allocator = PageAllocator {
            config: config.clone(),
            layout,
            sizes,
            page_table: PageTable::new(views.start(), views.size()),
            state: Mutex::new(State {
                cache: PageCache::default(),
                vspace: AddressSpace::new(views.start(), views.size()),
            }),
            views,
            physical,
            used: AtomicU64::new(0),
            poison: AtomicBool::new(false),
            pages_allocated: AtomicU64::new(0),
            views_mapped: AtomicU64::new(0),
            live_maps: Arc::new(live_maps),
        };
        allocator.prime_cache(initial)?;
        Ok(allocator)
    }

    /// Map the initial heap into the views and keep it in the page cache as small pages
    /// (ZGC's `ZPageAllocator::prime_cache`), so that taking a small page from it costs no
    /// `mmap`. A mutator that maps memory takes the kernel's memory-map lock and the backing
    /// file's `i_mmap_rwsem` for writing, and waits for every reader: a GC thread's page fault,
    /// DAMON's `kdamond` checking whether the file's pages were accessed (an rmap walk), each
    /// of which can hold the lock for tens of milliseconds on a busy machine. One `mmap` per
    /// view maps the whole initial heap here, before any mutator runs. A whole number of small
    /// pages is primed; the rest of the initial heap (less than one page) stays unmapped.
    fn prime_cache(&self, initial: u64) -> Result<(), HeapError> {
        let small = self.sizes.small;
        let pages = initial / small;
        if pages == 0 {
            return Ok(());
        }
        let bytes = pages * small;
        let mut st = self.state.lock();
        let ranges = self
            .physical
            .alloc(bytes)
            .expect("a new heap's file is all free, and the initial heap fits in it");
        let start = st
            .vspace
            .alloc(bytes, false)
            .expect("a new heap's reservation is all free and at least the maximum heap");
        if let Err(e) = self.views.map(start, self.physical.fd(), &ranges) {
            st.vspace.free(start, bytes);
            self.physical.free(&ranges);
            return Err(e);
        }
        self.views_mapped.fetch_add(1, Ordering::Relaxed);
        let zeroed = self.physical.hand_out(&ranges);
        // One page per `small` bytes of the virtual range, each over the file ranges behind
        // it; pushed from the top, so the cache (last in, first out) hands out the lowest
        // addresses first.
        let mut pieces = Vec::with_capacity(pages as usize);
        let mut rest = ranges;
        for i in 0..pages {
            let page_ranges = PhysRange::take_front(&mut rest, small)
                .expect("the file ranges cover the virtual range");
            pieces.push(PageMemory {
                start: start + i * small,
                size: small,
                ranges: page_ranges,
                populated: Default::default(),
                zeroed,
            });
        }
        for m in pieces.into_iter().rev() {
            st.cache.put(m);
        }
        Ok(())
    }

    /// The configuration this heap was created with.
    pub fn config(&self) -> &MemoryConfig {
        &self.config
    }
    /// The address layout.
    pub fn layout(&self) -> AddressLayout {
        self.layout
    }
    /// Page sizes and object limits.
    pub fn sizes(&self) -> &PageSizes {
        &self.sizes
    }
    /// The page table.
    pub fn page_table(&self) -> &PageTable {
        &self.page_table
    }
    /// The physical memory.
    pub fn physical(&self) -> &PhysicalMemory {
        &self.physical
    }
    /// The reserved offset range `(start, size)`.
    pub fn reservation(&self) -> (Offset, u64) {
        (self.views.start(), self.views.size())
    }
    /// Which pages the heap's memory is on now, read from `/proc/self/smaps` over the three
    /// views (see [`PageSizeReading`]; it holds the memory-map lock while it reads).
    pub fn page_size_reading(&self) -> PageSizeReading {
        let (start, size) = self.reservation();
        let views: Vec<(u64, u64)> = View::ALL
            .iter()
            .map(|&v| {
                let base = self.layout.address(start, v).raw();
                (base, base + size)
            })
            .collect();
        let text = std::fs::read_to_string("/proc/self/smaps").unwrap_or_default();
        PageSizeReading::from_smaps(
            &text,
            &views,
            self.config.huge_pages,
            self.physical.committed_bytes(),
        )
    }
    /// Max heap.
    pub fn capacity(&self) -> u64 {
        self.config.max_heap
    }
    /// Bytes in live pages.
    pub fn used(&self) -> u64 {
        self.used.load(Ordering::Acquire)
    }
    /// Pages allocated since creation.
    pub fn pages_allocated(&self) -> u64 {
        self.pages_allocated.load(Ordering::Relaxed)
    }
    /// How often memory was mapped into the views since creation (each time one `mmap` per
    /// view): once at creation for a primed initial heap, then once per page that the page
    /// cache could not serve.
    pub fn views_mapped(&self) -> u64 {
        self.views_mapped.load(Ordering::Relaxed)
    }

    /// The small pages' live maps kept for reuse (a page's map returns there when the page
    /// is dropped, and the next small page takes it).
    pub fn live_map_pool(&self) -> &LiveMapPool {
        &self.live_maps
    }

    /// Accounting snapshot.
    pub fn usage(&self) -> MemoryUsage {
        let cached = self.state.lock().cache.bytes();
        MemoryUsage {
            capacity: self.capacity(),
            used: self.used(),
            cached,
            committed: self.physical.committed_bytes(),
            peak_committed: self.physical.peak_committed_bytes(),
        }
    }

    /// Fill freed pages with [`POISON`] (for verification runs).
    pub fn set_poison(&self, on: bool) {
        self.poison.store(on, Ordering::Relaxed);
    }

    /// Allocate a page of `kind` and `size` bytes, born in cycle `seqnum`.
    pub fn alloc_page(
        &self,
        kind: PageKind,
        size: u64,
        seqnum: u64,
    ) -> Result<Arc<Page>, AllocError> {
        self.alloc_page_within(kind, size, seqnum, self.capacity())
    }

    /// Like [`Self::alloc_page`], but fail once `used` would exceed `limit` (the runtime keeps
    /// the bytes between `limit` and the capacity as a reserve for relocation).
    pub fn alloc_page_within(
        &self,
        kind: PageKind,
        size: u64,
        seqnum: u64,
        limit: u64,
    ) -> Result<Arc<Page>, AllocError> {
        debug_assert!(size.is_multiple_of(GRANULE_SIZE) && size > 0);
        let limit = limit.min(self.capacity());
        // Reserve capacity first (lock-free), so concurrent allocators cannot overshoot.
        let mut used = self.used.load(Ordering::Relaxed);
        loop {
            if used + size > limit {
                return Err(AllocError::OutOfMemory {
                    requested: size,
                    used,
                    capacity: self.capacity(),
                });
            }
            match self.used.compare_exchange_weak(
                used,
                used + size,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(u) => used = u,
            }
        }
        let memory = match self.page_memory(kind, size) {
            Ok(m) => m,
            Err(e) => {
                self.used.fetch_sub(size, Ordering::AcqRel);
                return Err(e);
            }
        };
        let shift = self.sizes.alignment_shift(kind, size);
        let page = Arc::new(Page::with_live_map_pool(
            kind,
            memory,
            seqnum,
            shift,
            Some(&self.live_maps),
        ));
        self.page_table.insert(&page);
        self.pages_allocated.fetch_add(1, Ordering::Relaxed);
        Ok(page)
    }

    fn page_memory(&self, kind: PageKind, size: u64) -> Result<PageMemory, AllocError> {
        let mut st = self.state.lock();
        if let Some(m) = st.cache.take(size) {
            return Ok(m);
        }
        // Physical: flush cached memory of other sizes until the file has room.
        while self.physical.free_bytes() < size {
            match st.cache.evict() {
                Some(m) => self.release_memory(&mut st, m),
                None => {
                    return Err(AllocError::OutOfMemory {
                        requested: size,
                        used: self.used(),
                        capacity: self.capacity(),
                    })
                }
            }
        }
        let ranges = self.physical.alloc(size).expect("free bytes checked");
        for r in &ranges {
            if let Err(e) = self.physical.commit(*r) {
                self.physical.free(&ranges);
                return Err(AllocError::CommitFailed {
                    bytes: size,
                    message: e.to_string(),
                });
            }
        }
        // Virtual: a fresh range; flush the cache if the reservation is fragmented.
        let start = loop {
            if let Some(s) = st.vspace.alloc(size, kind == PageKind::Large) {
                break s;
            }
            match st.cache.evict() {
                Some(m) => self.release_memory(&mut st, m),
                None => {
                    self.physical.free(&ranges);
                    return Err(AllocError::OutOfMemory {
                        requested: size,
                        used: self.used(),
                        capacity: self.capacity(),
                    });
                }
            }
        };
        self.views_mapped.fetch_add(1, Ordering::Relaxed);
        if let Err(e) = self.views.map(start, self.physical.fd(), &ranges) {
            self.views
                .unmap(start, size)
                .expect("a range the address space handed out lies inside the reservation");
            st.vspace.free(start, size);
            self.physical.free(&ranges);
            return Err(AllocError::CommitFailed {
                bytes: size,
                message: e.to_string(),
            });
        }
        let zeroed = self.physical.hand_out(&ranges);
        Ok(PageMemory {
            start,
            size,
            ranges,
            populated: Default::default(),
            zeroed,
        })
    }

    fn release_memory(&self, st: &mut State, m: PageMemory) {
        self.views
            .unmap(m.start, m.size)
            .expect("a page's range lies inside the reservation");
        st.vspace.free(m.start, m.size);
        if m.zeroed {
            // Never written (a primed page no one took): the next page over it is zero too.
            self.physical.take_back_unwritten(&m.ranges);
        }
        self.physical.free(&m.ranges);
    }

    /// Free a page: remove it from the page table and keep its memory in the page cache,
    /// from where the next page of its size reuses it. A page freed twice is freed once.
    ///
    /// # Safety
    /// No thread reads or writes an object on the page any more, and none will: the page is
    /// empty, or every live object has been relocated and no relocator still reads it. (With
    /// poisoning on, this call overwrites the page; without, the next page allocated over
    /// its memory does.)
    pub unsafe fn free_page(&self, page: &Page) {
        let Some(mut memory) = page.take_memory() else {
            debug_assert!(false, "page freed twice");
            return;
        };
        // Objects were written on it (or could have been): no longer known to be zero.
        memory.zeroed = false;
        self.page_table.remove(page);
        if self.poison.load(Ordering::Relaxed) {
            // SAFETY: the page's memory is mapped (it is still in our hands, not yet cached) and
            // by the caller's contract nothing reads or writes it any more.
            unsafe {
                std::ptr::write_bytes(
                    self.layout
                        .address(memory.start, View::Remapped)
                        .as_ptr::<u8>(),
                    POISON,
                    memory.size as usize,
                )
            };
        }
        let size = memory.size;
        self.state.lock().cache.put(memory);
        self.used.fetch_sub(size, Ordering::AcqRel);
    }

    /// Populate `view`'s page-table entries over `page`'s allocated range not yet populated
    /// (see [`crate::view_populate`]). Returns the reads made, one per 64 KiB block.
    pub fn populate_view(&self, page: &Page, view: View) -> u64 {
        crate::view_populate::populate(self.layout, page, view)
    }

    /// Flush the page cache and uncommit free physical memory down to `keep` bytes (never
    /// below the initial heap). Returns the bytes uncommitted.
    pub fn uncommit(&self, keep: u64) -> std::io::Result<u64> {
        // The initial heap was committed in whole granules: keep all of them.
        let initial = self.config.initial_heap.div_ceil(GRANULE_SIZE) * GRANULE_SIZE;
        let keep = keep.max(initial);
        if self.physical.committed_bytes() <= keep {
            // Nothing to give back: keep the cache mapped (a heap committed whole at creation
            // would otherwise map every page again).
            return Ok(0);
        }
        let mut st = self.state.lock();
        while let Some(m) = st.cache.evict() {
            self.release_memory(&mut st, m);
        }
        drop(st);
        self.physical.uncommit_free(keep)
    }
}
