//! Pages: the unit of allocation, marking and relocation (ZGC's `ZPage`).
//!
//! | kind   | size                                        | objects          | alignment |
//! |--------|---------------------------------------------|------------------|-----------|
//! | small  | 2 MiB                                       | up to 256 KiB    | 8 bytes   |
//! | medium | 32 MiB, or 3.125% of the heap when smaller  | up to size / 8   | size/8192 |
//! | large  | object size rounded up to 2 MiB             | one, never moved | page      |
//!
//! A page owns a virtual range (the same offsets in all four views) backed by physical file
//! ranges ([`PageMemory`]), records the sequence number of the cycle it was born in, bump
//! allocates (a plain load/store for a mutator's private page, a CAS for shared medium pages)
//! and carries its live map. Positions on a page are [`Offset`]s; its bump pointer is one
//! too.

use crate::address::{AddressLayout, View};
use crate::live_map::LiveMap;
use crate::live_map_pool::LiveMapPool;
use crate::object::Object;
use crate::physical::PhysRange;
use crate::word::Offset;
use crate::GRANULE_SIZE;
use parking_lot::Mutex;
use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Size class of a page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum PageKind {
    Small,
    Medium,
    Large,
}

/// Page sizes and object limits for one heap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct PageSizes {
    /// Small page size (2 MiB).
    pub small: u64,
    /// Largest object on a small page.
    pub small_object_max: u64,
    /// Medium page size, if the heap is large enough to have medium pages.
    pub medium: Option<u64>,
    /// Largest object on a medium page (equals `small_object_max` when there are none).
    pub medium_object_max: u64,
    /// Largest object the heap can ever hold.
    pub object_max: u64,
}

/// Object alignment on small pages.
pub const SMALL_ALIGNMENT_SHIFT: u32 = 3;

impl PageSizes {
    /// Sizes for a heap of `max_heap` bytes, as ZGC chooses them.
    pub fn for_max_heap(max_heap: u64) -> Self {
        let small = GRANULE_SIZE;
        let small_object_max = small / 8;
        // ZGC: medium = min(32 MiB, round_down_pow2(3.125% of the heap)), disabled if that is
        // not larger than a small page.
        let pct = max_heap / 32;
        let medium = if pct == 0 {
            0
        } else {
            (1u64 << (63 - pct.leading_zeros())).min(32 << 20)
        };
        let medium = (medium > small).then_some(medium);
        PageSizes {
            small,
            small_object_max,
            medium,
            medium_object_max: medium.map_or(small_object_max, |m| m / 8),
            object_max: max_heap,
        }
    }

    /// The kind of page an object of `size` bytes goes on.
    #[inline]
    pub fn kind_for(&self, size: u64) -> PageKind {
        if size <= self.small_object_max {
            PageKind::Small
        } else if self.medium.is_some() && size <= self.medium_object_max {
            PageKind::Medium
        } else {
            PageKind::Large
        }
    }

    /// The page size for a page of `kind` holding an object of `object_size` (for large).
    pub fn page_size(&self, kind: PageKind, object_size: u64) -> u64 {
        match kind {
            PageKind::Small => self.small,
            PageKind::Medium => self.medium.expect("medium pages are enabled"),
            PageKind::Large => object_size.div_ceil(GRANULE_SIZE) * GRANULE_SIZE,
        }
    }

    /// log2 of the object alignment on a page of `kind` and `size`.
    pub fn alignment_shift(&self, kind: PageKind, page_size: u64) -> u32 {
        match kind {
            PageKind::Small => SMALL_ALIGNMENT_SHIFT,
            // 8192 object positions per medium page, as ZGC.
            PageKind::Medium => page_size.trailing_zeros() - 13,
            PageKind::Large => page_size.trailing_zeros(),
        }
    }
}

/// The memory of a page: its virtual offset range and the physical ranges behind it.
#[derive(Debug)]
pub struct PageMemory {
    pub start: Offset,
    pub size: u64,
    pub ranges: Vec<PhysRange>,
    /// How far each view's page-table entries were populated ([`crate::view_populate`]).
    pub populated: ViewWatermarks,
    /// Every byte of the memory reads as zero: it was committed and never handed out to a
    /// page before ([`crate::physical::PhysicalMemory::hand_out`]). Cleared when the page's owner takes
    /// it ([`Page::take_zeroed`]) and when the page is freed.
    pub zeroed: bool,
}

/// Per view, the bytes from a page memory's start whose page-table entries were populated
/// ahead of use (see [`crate::view_populate`]): a view's entries stay while the memory stays
/// mapped, also in the page cache.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ViewWatermarks {
    populated: [u64; 4],
}

impl ViewWatermarks {
    /// Bytes from the start populated in `view`.
    pub fn get(&self, view: View) -> u64 {
        self.populated[view.index()]
    }

    /// Record that `view` is populated up to `bytes` from the start.
    pub fn set(&mut self, view: View, bytes: u64) {
        self.populated[view.index()] = bytes;
    }
}

/// A page of the heap.
///
/// Laid out by hand (`repr(C)`, aligned to a cache line) so that every field marking reads
/// for a pointer into the page — the live map's words, cycle and counts, the page's start,
/// cycle and alignment — shares the page's first cache line: a marker looks pages up
/// once or twice per slot it traces, over every page of the heap, and a page spread over
/// three lines cost up to three misses per lookup. The bump pointer, which allocating
/// mutators write, lies on a later line.
#[repr(C, align(64))]
pub struct Page {
    live_map: LiveMap,
    start: Offset,
    /// The cycle the page was born in; changed only by [`Page::restamp`], before any other
    /// thread knows the page.
    seqnum: AtomicU64,
    alignment_shift: u32,
    kind: PageKind,
    size: u64,
    /// The bump pointer: an [`Offset`]'s raw value.
    top: AtomicU64,
    /// Where the live map goes when the page is dropped: the pool it came from.
    live_map_pool: Option<Arc<LiveMapPool>>,
    memory: Mutex<Option<PageMemory>>,
}

impl std::fmt::Debug for Page {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Page")
            .field("kind", &self.kind)
            .field("start", &self.start)
            .field("size", &self.size)
            .field("seqnum", &self.seqnum())
            .field("top", &self.top())
            .finish()
    }
}

impl Page {
    /// A page over `memory`, born in cycle `seqnum`, with a new live map.
    pub fn new(kind: PageKind, memory: PageMemory, seqnum: u64, alignment_shift: u32) -> Self {
        Self::with_live_map_pool(kind, memory, seqnum, alignment_shift, None)
    }

    /// A page over `memory`, born in cycle `seqnum`; if `pool` keeps live maps of the page's
    /// size, its live map comes from there and goes back when the page is dropped.
    pub fn with_live_map_pool(
        kind: PageKind,
        memory: PageMemory,
        seqnum: u64,
        alignment_shift: u32,
        pool: Option<&Arc<LiveMapPool>>,
    ) -> Self {
        let slots = (memory.size >> alignment_shift) as usize;
        let pool = pool.filter(|p| p.slots() == slots);
        let live_map = match pool {
            Some(p) => p.take(),
            None => LiveMap::new(slots),
        };
        Page {
            kind,
            start: memory.start,
            size: memory.size,
            seqnum: AtomicU64::new(seqnum),
            alignment_shift,
            top: AtomicU64::new(memory.start.raw()),
            live_map,
            live_map_pool: pool.cloned(),
            memory: Mutex::new(Some(memory)),
        }
    }

    pub fn kind(&self) -> PageKind {
        self.kind
    }
    /// First offset of the page.
    pub fn start(&self) -> Offset {
        self.start
    }
    /// Size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }
    /// One past the last offset.
    pub fn end(&self) -> Offset {
        self.start + self.size
    }
    /// The sequence number of the cycle the page was allocated in.
    #[inline]
    pub fn seqnum(&self) -> u64 {
        self.seqnum.load(Ordering::Relaxed)
    }

    /// Make the page born in cycle `seqnum`, as if it had been allocated now: for a large
    /// page whose object was zeroed in chunks, with safepoint polls between them, before the
    /// page was published (a Pause Mark Start may have run meanwhile).
    ///
    /// # Safety
    /// No thread but the caller knows the page: it is in no registry a collector reads, and
    /// no object on it was ever handed out. (A collector decides from a page's sequence
    /// number whether its objects need marking to stay alive, and frees unmarked pages of
    /// older cycles: restamping a page it already knows could free live objects.)
    pub unsafe fn restamp(&self, seqnum: u64) {
        self.seqnum.store(seqnum, Ordering::Relaxed);
    }
    /// Object alignment (log2).
    pub fn alignment_shift(&self) -> u32 {
        self.alignment_shift
    }
    /// Current bump pointer (offset).
    pub fn top(&self) -> Offset {
        Offset::from_raw(self.top.load(Ordering::Acquire))
    }
    /// Bytes allocated on the page.
    pub fn used(&self) -> u64 {
        self.top() - self.start
    }
    /// The page's live map.
    pub fn live_map(&self) -> &LiveMap {
        &self.live_map
    }
    /// True if `offset` lies in the page.
    #[inline]
    pub fn contains(&self, offset: Offset) -> bool {
        offset >= self.start && offset < self.end()
    }
    /// Live-map / forwarding index of the object at `offset`.
    #[inline]
    pub fn index_of(&self, offset: Offset) -> usize {
        debug_assert!(self.contains(offset));
        ((offset - self.start) >> self.alignment_shift) as usize
    }
    /// Offset of the object at live-map index `index`.
    #[inline]
    pub fn offset_of(&self, index: usize) -> Offset {
        self.start + ((index as u64) << self.alignment_shift)
    }

    /// `size` rounded up to the page's object alignment; `u64::MAX` (which fits no page) if
    /// that overflows.
    #[inline]
    fn aligned(&self, size: u64) -> u64 {
        let a = (1u64 << self.alignment_shift) - 1;
        size.checked_add(a).map_or(u64::MAX, |s| s & !a)
    }

    /// Bump-allocate `size` bytes on a page only the calling thread allocates on (no atomic
    /// read-modify-write). Returns the offset, always inside the page. (Two threads calling
    /// it at once may be handed the same offset: who writes there is `Object::init`'s
    /// contract.)
    #[inline(always)]
    pub fn alloc_private(&self, size: u64) -> Option<Offset> {
        let top = self.top.load(Ordering::Relaxed);
        let new = top.checked_add(self.aligned(size))?;
        if new > self.end().raw() {
            return None;
        }
        self.top.store(new, Ordering::Release);
        Some(Offset::from_raw(top))
    }

    /// Bump-allocate `size` bytes on a page shared by several threads (CAS).
    #[inline]
    pub fn alloc_shared(&self, size: u64) -> Option<Offset> {
        let size = self.aligned(size);
        let end = self.end().raw();
        let mut top = self.top.load(Ordering::Relaxed);
        loop {
            let new = top.checked_add(size)?;
            if new > end {
                return None;
            }
            match self
                .top
                .compare_exchange_weak(top, new, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => return Some(Offset::from_raw(top)),
                Err(t) => top = t,
            }
        }
    }

    /// Undo the most recent allocation at `offset` of `size` bytes if nothing was allocated
    /// after it (a relocator that lost the forwarding race gives its copy back).
    /// `false` (nothing changes) if `[offset, offset + size)` is not an allocation inside the
    /// page, so the bump pointer never leaves the page.
    pub fn undo_alloc(&self, offset: Offset, size: u64) -> bool {
        let Some(end) = offset.raw().checked_add(self.aligned(size)) else {
            return false;
        };
        if offset < self.start || end > self.end().raw() {
            return false;
        }
        let end = Offset::from_raw(end);
        self.top
            .compare_exchange(end.raw(), offset.raw(), Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
    }

    /// Call `f` with every object on the page (seen through [`Object::at`]), walking headers
    /// from the start to `top`.
    ///
    /// # Safety
    /// The page is an allocated page of the heap laid out by `layout`, not freed while the
    /// walk runs, and no thread allocates on it meanwhile: every object up to `top` has its
    /// header written and visible to this thread.
    pub unsafe fn for_each_object(&self, layout: AddressLayout, mut f: impl FnMut(Object)) {
        let top = self.top();
        let mut off = self.start;
        while off < top {
            // SAFETY: objects are laid out back to back (aligned) from the page start to
            // `top`, each with its header written, on a mapped page of `layout`'s heap
            // (caller's contract).
            let obj = unsafe { Object::at(layout, off) };
            f(obj);
            off += self.aligned(obj.size());
        }
    }

    /// Set the bump pointer after the page was compacted in place: the objects now end at
    /// `top`, and the space above it can be allocated again (by the compacting GC worker).
    ///
    /// # Panics
    /// If `top` is below the page start or above the current bump pointer (then the page
    /// would hand out memory outside it, or memory that holds objects).
    pub fn set_top_after_compaction(&self, top: Offset) {
        assert!(
            top >= self.start && top <= self.top(),
            "compacted top {top:?} outside the page's allocated range"
        );
        self.top.store(top.raw(), Ordering::Release);
    }

    /// Take the page's memory (when freeing it). `None` if already taken.
    pub fn take_memory(&self) -> Option<PageMemory> {
        self.memory.lock().take()
    }

    /// True if the page's memory is all zeros, fresh from the file and written by nobody yet
    /// ([`PageMemory::zeroed`]): the thread that took the page asks once, before writing it,
    /// and is the only one to get true.
    pub fn take_zeroed(&self) -> bool {
        self.with_memory(|m| std::mem::take(&mut m.zeroed))
            .unwrap_or(false)
    }

    /// Run `f` on the page's memory under its lock (freeing the page waits meanwhile). `None`
    /// if the memory was taken.
    pub(crate) fn with_memory<R>(&self, f: impl FnOnce(&mut PageMemory) -> R) -> Option<R> {
        self.memory.lock().as_mut().map(f)
    }
}

impl Drop for Page {
    /// The live map goes back to its pool: the page's last reference is gone, so no thread
    /// reads the map any more.
    fn drop(&mut self) {
        if let Some(pool) = self.live_map_pool.take() {
            pool.give_back(std::mem::replace(&mut self.live_map, LiveMap::empty()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    #[test]
    fn sizes_scale_medium_with_the_heap() {
        let s = PageSizes::for_max_heap(64 * MIB);
        assert_eq!(s.medium, None);
        assert_eq!(s.kind_for(300 << 10), PageKind::Large);
        let s = PageSizes::for_max_heap(256 * MIB);
        assert_eq!(s.medium, Some(8 * MIB));
        assert_eq!(s.medium_object_max, MIB);
        let s = PageSizes::for_max_heap(1 << 30);
        assert_eq!(s.medium, Some(32 * MIB));
        assert_eq!(s.medium_object_max, 4 * MIB);
        let s = PageSizes::for_max_heap(16 << 30);
        assert_eq!(s.medium, Some(32 * MIB));
        assert_eq!(s.kind_for(256 << 10), PageKind::Small);
        assert_eq!(s.kind_for((256 << 10) + 8), PageKind::Medium);
        assert_eq!(s.kind_for(4 * MIB + 8), PageKind::Large);
        assert_eq!(s.page_size(PageKind::Large, 5 * MIB), 6 * MIB);
        assert_eq!(s.alignment_shift(PageKind::Medium, 32 * MIB), 12);
    }

    #[test]
    fn bump_allocation_and_undo() {
        let mem = PageMemory {
            start: Offset::from_raw(4 * MIB),
            size: 2 * MIB,
            ranges: vec![],
            populated: Default::default(),
            zeroed: false,
        };
        let p = Page::new(PageKind::Small, mem, 1, SMALL_ALIGNMENT_SHIFT);
        let at = |o: u64| Offset::from_raw(4 * MIB + o);
        let a = p.alloc_private(20).unwrap();
        assert_eq!(a, at(0));
        let b = p.alloc_shared(8).unwrap();
        assert_eq!(b, at(24));
        assert!(!p.undo_alloc(a, 20));
        assert!(p.undo_alloc(b, 8));
        assert_eq!(p.top(), at(24));
        assert_eq!(p.used(), 24);
        assert!(p.alloc_private(2 * MIB).is_none());
        assert_eq!(p.index_of(at(24)), 3);
        assert!(p.contains(at(0)) && !p.contains(p.end()));
        assert_eq!(p.offset_of(3), at(24));
    }

    /// What marking reads of a page for each pointer into it lies on the page's first cache
    /// line, and the bump pointer allocating mutators write does not.
    #[test]
    fn marking_fields_share_the_first_cache_line() {
        use std::mem::{align_of, offset_of, size_of};
        assert_eq!(align_of::<Page>(), 64);
        assert_eq!(offset_of!(Page, live_map), 0);
        assert!(size_of::<LiveMap>() <= offset_of!(Page, start));
        for end in [
            offset_of!(Page, start) + size_of::<Offset>(),
            offset_of!(Page, seqnum) + size_of::<AtomicU64>(),
            offset_of!(Page, alignment_shift) + size_of::<u32>(),
            offset_of!(Page, kind) + size_of::<PageKind>(),
        ] {
            assert!(end <= 64, "a marking field ends at byte {end}");
        }
        assert!(offset_of!(Page, top) >= 64);
    }
}
