//! A relocation-set entry (ZGC's `ZForwarding`): one from-page, its forwarding table, and the
//! reference count that decides who may copy out of the page, when it may be freed, and when
//! it may be compacted in place.
//!
//! Every live object of a from-page ends with exactly one forwarding entry, made by exactly
//! one relocator (a CAS from empty): the page's GC worker, a mutator whose load barrier met
//! the object, or the driver relocating a root inside Pause Relocate Start. The reference
//! count says which of them may still copy:
//!
//! - **open** (count ≥ 1): the worker holds one reference; a mutator *retains* the page for the
//!   length of one copy, so the page's memory cannot be freed under it;
//! - **released** (count ≤ 0, counting up to 0): the worker forwarded every live object and
//!   gave its reference back; retains fail, and every lookup finds its entry; the page is
//!   freed once the copiers still running are done;
//! - **in place** (count near `IN_PLACE`): no target memory was left, so the page's worker (or
//!   the driver inside a pause) claimed the page to compact it in place. The claim makes
//!   retains fail and then waits for the copiers still running to finish, so from then on the
//!   claimer is the only thread that touches the page's memory; it slides the objects that
//!   have no entry yet down to the page start, entering each move, and finally marks the page
//!   released. The page is kept (it holds live objects) and becomes the worker's target.
//!
//! An object is therefore only ever *forwarded to itself* by the exclusive in-place claimer,
//! never by a thread that could race with a copier, and a mutator that cannot copy — the
//! page is released or being compacted, or no target memory is left — waits for the page's
//! entry instead of keeping the object where it is (ZGC's `wait_page_released`). The waits
//! are short: a copy of one object, or the compaction of one page.
//!
//! The protocol is generic over [`Primitives`] and gc-core's [`AtomicWord`], and touches
//! memory only through closures, so the loom models (`tests/loom_protocols.rs`) check this
//! very code with loom's atomics and a simulated page.

use crate::sync::{Atomic, Primitives, Std};
use gc_core::sync::AtomicWord;
use gc_core::{ForwardingEntries, Offset, Page, PageAge};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Base of the reference count while the page is claimed for in-place compaction: the count
/// is `IN_PLACE + copiers still running`.
const IN_PLACE: i64 = i64::MIN / 2;

/// True if `count` is in the in-place range (far below any count of copiers).
#[inline]
fn in_place_range(count: i64) -> bool {
    count < IN_PLACE / 2
}

/// The retain/release reference count of a from-page (ZGC's `ZForwarding::_ref_count`).
/// See the module documentation for its three states.
pub struct PageRefCount<P: Primitives = Std> {
    count: P::AtomicI64,
}

impl<P: Primitives> Default for PageRefCount<P> {
    fn default() -> Self {
        PageRefCount {
            count: P::AtomicI64::new(1),
        }
    }
}

/// A page retained for one copy; dropping it releases the page (also when a panic unwinds
/// through the copy, so a failing copier cannot leave the page's worker waiting forever).
pub struct Retained<'a, P: Primitives = Std>(&'a PageRefCount<P>);

impl<P: Primitives> Drop for Retained<'_, P> {
    fn drop(&mut self) {
        self.0.release();
    }
}

impl<P: Primitives> PageRefCount<P> {
    /// Keep the page's memory alive for a copy; `None` once the page is released or claimed
    /// for in-place compaction.
    pub fn retain(&self) -> Option<Retained<'_, P>> {
        let mut c = self.count.load(Ordering::Acquire);
        loop {
            if c <= 0 {
                return None;
            }
            match self
                .count
                .compare_exchange_weak(c, c + 1, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return Some(Retained(self)),
                Err(v) => c = v,
            }
        }
    }

    /// Drop a copier's reference (through [`Retained`]'s `drop`).
    fn release(&self) {
        let mut c = self.count.load(Ordering::Acquire);
        loop {
            debug_assert!(c != 0 && c != IN_PLACE, "release without a retain");
            // Open: one reference fewer. Released or in place: one copier fewer, counting
            // towards 0 or towards IN_PLACE.
            let new = if c > 0 || in_place_range(c) {
                c - 1
            } else {
                c + 1
            };
            match self
                .count
                .compare_exchange_weak(c, new, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return,
                Err(v) => c = v,
            }
        }
    }

    /// The worker's release after it forwarded every live object: afterwards nobody can
    /// retain the page; waits until the copiers still running are done. When it returns,
    /// every copy out of the page happened before (the page may be freed).
    pub fn release_and_wait(&self) {
        let mut c = self.count.load(Ordering::Acquire);
        loop {
            if c == 0 {
                // Compacted in place: the claimer released it already.
                return;
            }
            debug_assert!(c >= 1, "the worker's reference was already released");
            match self
                .count
                .compare_exchange_weak(c, -(c - 1), Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => break,
                Err(v) => c = v,
            }
        }
        while self.count.load(Ordering::Acquire) != 0 {
            P::backoff();
        }
    }

    /// Claim the page for in-place compaction (the worker, holding its own reference): from
    /// now on retains fail; waits until the copiers still running are done, so the caller is
    /// then the only thread that touches the page's memory.
    pub fn claim_in_place(&self) {
        let mut c = self.count.load(Ordering::Acquire);
        loop {
            debug_assert!(c >= 1, "claiming a page that is not open");
            match self.count.compare_exchange_weak(
                c,
                IN_PLACE + (c - 1),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => break,
                Err(v) => c = v,
            }
        }
        while self.count.load(Ordering::Acquire) != IN_PLACE {
            P::backoff();
        }
    }

    /// End in-place compaction: the page counts as released (every live object has its
    /// entry, published before this store).
    pub fn finish_in_place(&self) {
        debug_assert_eq!(self.count.load(Ordering::Relaxed), IN_PLACE);
        self.count.store(0, Ordering::Release);
    }

    /// True once the page is released: every live object has its forwarding entry.
    pub fn is_released(&self) -> bool {
        let c = self.count.load(Ordering::Acquire);
        c == 0 || (c < 0 && !in_place_range(c))
    }

    /// True while the page is claimed for in-place compaction.
    pub fn is_in_place(&self) -> bool {
        in_place_range(self.count.load(Ordering::Acquire))
    }
}

/// What [`Forwarding::try_relocate`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Relocation {
    /// The object already had its entry.
    Found(Offset),
    /// This call copied the object and won the race: its copy is the object now.
    Copied(Offset),
    /// This call copied the object but another relocator won; the copy was given back.
    Lost(Offset),
    /// The page could be retained but no target memory was left: nothing was done.
    NoMemory,
    /// The page is released or being compacted in place: nothing was done.
    Unavailable,
}

/// What one in-place compaction did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InPlace {
    /// Live objects given their place (moved down, or left where they were).
    pub objects: u64,
    /// Objects left at their own address (forwarded to themselves).
    pub self_forwards: u64,
    /// Bytes moved down.
    pub bytes_moved: u64,
    /// The page's new allocation top.
    pub top: Offset,
}

/// One page of the relocation set.
pub struct Forwarding<P: Primitives = Std, W: AtomicWord = AtomicU64> {
    page: Arc<Page>,
    table: ForwardingEntries<W>,
    refcount: PageRefCount<P>,
    /// Set once the page was compacted in place: it must be kept (it holds live objects).
    compacted: P::AtomicBool,
    /// The age of the target pages its objects are copied to (ZGC's `ZForwarding::to_age`):
    /// old in a full cycle; in a minor, the from-page's next survivor age below the tenuring
    /// threshold, old at it (`relocation_set_selector::select_minor`).
    to_age: PageAge,
}

impl<P: Primitives, W: AtomicWord> Forwarding<P, W> {
    /// The entry for `page`, which holds `live_objects` live objects.
    pub fn new(page: Arc<Page>, live_objects: u64) -> Self {
        Forwarding {
            page,
            table: ForwardingEntries::new(live_objects),
            refcount: PageRefCount::default(),
            compacted: P::AtomicBool::new(false),
            to_age: PageAge::Old,
        }
    }

    /// The same entry, its objects copied to target pages of age `age` (old by default).
    pub fn with_to_age(mut self, age: PageAge) -> Self {
        self.to_age = age;
        self
    }

    /// The age of the target pages this page's objects are copied to.
    #[inline]
    pub fn to_age(&self) -> PageAge {
        self.to_age
    }

    /// The from-page.
    pub fn page(&self) -> &Arc<Page> {
        &self.page
    }

    /// Where the object at live-map index `idx` went, if it has its entry.
    #[inline]
    pub fn find(&self, idx: u64) -> Option<Offset> {
        self.table.find(idx)
    }

    /// Prefetch the entry [`Self::find`] and [`Self::forward`] try first for `idx` (see
    /// `ForwardingEntries::prefetch`).
    #[inline]
    pub fn prefetch_entry(&self, idx: u64) {
        self.table.prefetch(idx)
    }

    /// Every `(from_index, to_offset)` entry published so far, in table order (for tools
    /// and verification; a scan of the whole table).
    pub fn entries(&self) -> impl Iterator<Item = (u64, Offset)> + '_ {
        self.table.entries()
    }

    /// Fault the forwarding table's memory in (see `ForwardingEntries::prefault`).
    pub fn prefault_table(&self) {
        self.table.prefault();
    }

    /// Bytes the forwarding table occupies off-heap.
    pub fn footprint(&self) -> usize {
        self.table.footprint()
    }

    /// True once the page was compacted in place (it must not be freed).
    pub fn is_compacted_in_place(&self) -> bool {
        self.compacted.load(Ordering::Acquire)
    }

    /// True while the page is claimed for in-place compaction.
    pub fn is_in_place(&self) -> bool {
        self.refcount.is_in_place()
    }

    /// Relocate the object at index `idx` as a thread other than the page's worker (a
    /// mutator's barrier, or the driver in a pause): find its entry, or retain the page and
    /// `copy` the object (`copy` returns the new offset, or `None` when no target memory is
    /// left) and enter the copy; a copy that lost the race is handed to `undo`.
    pub fn try_relocate(
        &self,
        idx: u64,
        copy: impl FnOnce() -> Option<Offset>,
        undo: impl FnOnce(Offset),
    ) -> Relocation {
        if let Some(to) = self.table.find_to_insert(idx) {
            return Relocation::Found(to);
        }
        let Some(_retained) = self.refcount.retain() else {
            return Relocation::Unavailable;
        };
        let Some(to) = copy() else {
            return Relocation::NoMemory;
        };
        match self.table.insert(idx, to) {
            Ok(to) => Relocation::Copied(to),
            Err(winner) => {
                undo(to);
                Relocation::Lost(winner)
            }
        }
    }

    /// Wait until the object at index `idx` has its entry (the page's worker relocates or
    /// compacts it), and return it. Only for an object that is live (reached from a root):
    /// a released page without its entry is a broken invariant and panics.
    pub fn wait_for_entry(&self, idx: u64) -> Offset {
        loop {
            // Read the state before the table: a release is published after every entry.
            let released = self.refcount.is_released();
            if let Some(to) = self.find(idx) {
                return to;
            }
            assert!(
                !released,
                "a released from-page has no forwarding entry for live object #{idx} of {:?}",
                self.page
            );
            P::backoff();
        }
    }

    /// The page's worker enters its own copy of the object at `idx` (it needs no retain: it
    /// holds the page's reference). `Err(winner)` if a mutator got there first.
    #[inline]
    pub fn forward(&self, idx: u64, to: Offset) -> Result<Offset, Offset> {
        self.table.insert(idx, to)
    }

    /// The worker's release after it forwarded every live object; waits for the copiers
    /// still running (see [`PageRefCount::release_and_wait`]).
    pub fn release_and_wait(&self) {
        self.refcount.release_and_wait()
    }

    /// Compact the page in place (the page's worker, holding its reference, or the driver
    /// inside a pause): claim the page and wait until no copier runs, then walk `live` — the
    /// live objects as (index, offset), in address order — and slide each one without an
    /// entry down to the lowest free address (objects copied out earlier left their space
    /// free): `size_of(offset)` gives an object's aligned size (read before anything is moved
    /// over it), `move_object(from, to, size)` moves its bytes (`to <= from`; the ranges may
    /// overlap). Each move is entered in the table; `set_top` receives the page's new
    /// allocation top before the page is marked released.
    pub fn compact_in_place(
        &self,
        live: impl IntoIterator<Item = (u64, Offset)>,
        mut size_of: impl FnMut(Offset) -> u64,
        mut move_object: impl FnMut(Offset, Offset, u64),
        set_top: impl FnOnce(Offset),
    ) -> InPlace {
        self.refcount.claim_in_place();
        let mut r = InPlace {
            objects: 0,
            self_forwards: 0,
            bytes_moved: 0,
            top: self.page.start(),
        };
        for (idx, from) in live {
            if self.find(idx).is_some() {
                // Copied out by a mutator before the claim: its space is free.
                continue;
            }
            let size = size_of(from);
            assert!(
                r.top <= from,
                "in-place compaction would move object #{idx} of {:?} up",
                self.page
            );
            if r.top == from {
                r.self_forwards += 1;
            } else {
                move_object(from, r.top, size);
                r.bytes_moved += size;
            }
            let won = self.table.insert(idx, r.top);
            assert!(
                won.is_ok(),
                "object #{idx} of {:?} was forwarded while the page was claimed",
                self.page
            );
            r.objects += 1;
            r.top += size;
        }
        set_top(r.top);
        self.compacted.store(true, Ordering::Release);
        self.refcount.finish_in_place();
        r
    }
}
