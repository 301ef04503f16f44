//! Per-page forwarding entries: the entry array of ZGC's `ZForwarding` (its
//! `ZForwardingEntry`s), off-heap and lock-free, from the position of an object in its
//! from-page to its new [`Offset`].
//!
//! Three names mirror three ZGC classes and are easy to mix up: this type is only the
//! entries; the runtime's `Forwarding` (gc-runtime's `forwarding.rs`) is ZGC's `ZForwarding`,
//! the relocation-set entry of one from-page that owns these entries (and the retain/release
//! and in-place protocols around them); the runtime's `ForwardingIndex`
//! (`forwarding_index.rs`) is ZGC's `ZForwardingTable`, the map from a heap offset to the
//! `Forwarding` of the page holding it. No type is called a forwarding "table" here.
//!
//! Open addressing with linear probing in a power-of-two array sized to twice the page's live
//! objects, so probing always terminates; the first probe is the from-index itself, for
//! locality. An entry is one 64-bit word, so inserting is a single CAS from empty and *exactly
//! one* relocator wins for each object; the loser reads the winner's offset and undoes its own
//! copy.
//!
//! ```text
//!  63   62 ........ 41  40 ................ 0
//!  | 1 | from index (22) | to offset >> 3 (41) |      populated entry; 0 = empty
//! ```

use crate::sync::AtomicWord;
use crate::word::Offset;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

const POPULATED: u64 = 1 << 63;
const INDEX_BITS: u32 = 22;
const TO_BITS: u32 = 41;
/// Largest from-index an entry can hold.
pub const MAX_FROM_INDEX: u64 = (1 << INDEX_BITS) - 1;

/// An entry for `from_index` → `to_offset`. Panics (in every build: two compares per
/// insert) if either does not fit, rather than store an entry that `find` would read back as
/// another object's forwarding.
#[inline]
fn encode(from_index: u64, to_offset: Offset) -> u64 {
    let to = to_offset.raw();
    assert!(
        from_index <= MAX_FROM_INDEX && to.is_multiple_of(8) && to >> 3 < 1 << TO_BITS,
        "forwarding entry {from_index} -> {to:#x} does not fit an entry"
    );
    POPULATED | (from_index << TO_BITS) | (to >> 3)
}

#[inline]
fn entry_index(e: u64) -> u64 {
    (e & !POPULATED) >> TO_BITS
}

#[inline]
fn entry_to(e: u64) -> Offset {
    Offset::from_raw((e & ((1 << TO_BITS) - 1)) << 3)
}

/// The forwarding entries of one from-page.
pub struct ForwardingEntries<W: AtomicWord = AtomicU64> {
    entries: Box<[W]>,
    mask: usize,
    /// Set once [`Self::prefault`] has populated every page of `entries`, writable.
    prefaulted: AtomicBool,
}

impl<W: AtomicWord> ForwardingEntries<W> {
    /// A table for a page with `live_objects` live objects.
    pub fn new(live_objects: u64) -> Self {
        let n = ((live_objects as usize) * 2).next_power_of_two().max(16);
        ForwardingEntries {
            // Zeroed by the allocator, not written: a big relocation set's tables are
            // hundreds of MiB, and touching fresh memory is slow (in a virtual machine, up to
            // seconds for the first large set). Concurrent Select Relocation Set prefaults
            // them within a time budget; relocation faults in the rest as it goes.
            entries: W::zeroed_words(n),
            mask: n - 1,
            prefaulted: AtomicBool::new(false),
        }
    }

    /// Fault the whole table in, once per memory page, rather than twice per page (a read,
    /// then a write) as objects are relocated (see `prefault`). Its contents do not change,
    /// also while others insert into it.
    pub fn prefault(&self) {
        if self.prefaulted.load(Ordering::Acquire) {
            return;
        }
        crate::prefault::prefault_words(&self.entries);
        self.prefaulted.store(true, Ordering::Release);
    }

    /// Number of entry slots (for memory accounting).
    pub fn capacity(&self) -> usize {
        self.entries.len()
    }

    /// Bytes this table occupies off-heap.
    pub fn footprint(&self) -> usize {
        self.entries.len() * 8 + std::mem::size_of::<Self>()
    }

    /// The first probe for `from_index`: the index itself. Objects that were neighbours in the
    /// from-page are looked up together (a traced tree's stale pointers lead to neighbouring
    /// from-objects), so identity keeps their entries on the same cache lines; a mixing hash
    /// made every remap a cache miss (measured: 90% of the remap time on the entry load).
    #[inline]
    fn first(&self, from_index: u64) -> usize {
        from_index as usize & self.mask
    }

    /// Prefetch the line of the entry [`Self::find`] and [`Self::insert`] try first for
    /// `from_index`, for a caller that looks it up or inserts a while later: a marker with a
    /// stale pointer in hand, a GC worker that has just copied the object and publishes its
    /// entry with the rest of its batch (an insert is a locked compare-exchange, which waits
    /// for its line and holds the worker while it does).
    #[inline]
    pub fn prefetch(&self, from_index: u64) {
        crate::prefetch(std::ptr::from_ref(&self.entries[self.first(from_index)]).cast());
    }

    /// Where the object at `from_index` went, if it has been relocated.
    #[inline]
    pub fn find(&self, from_index: u64) -> Option<Offset> {
        // Acquire: the winner copied the object before publishing the entry (Release).
        self.probe(from_index, |e| e.load(Ordering::Acquire))
    }

    /// [`Self::find`] for a caller that inserts next if the entry is missing (a relocating
    /// mutator). Until the table is prefaulted, each probe is a write access (a CAS of an
    /// empty entry by itself, which changes nothing): a plain load of an untouched memory
    /// page maps the kernel's shared zero page, and the insert that follows then takes a
    /// copy-on-write fault, whose flush of the old mapping interrupts every other core of the
    /// process. Profiled at 8G, those faults were a fifth of the mutator's time; written
    /// first, the page faults in once, writable.
    #[inline]
    pub fn find_to_insert(&self, from_index: u64) -> Option<Offset> {
        if self.prefaulted.load(Ordering::Relaxed) {
            return self.find(from_index);
        }
        // Acquire as in `find`; an empty entry stays empty (it is replaced by 0).
        self.probe(from_index, |e| {
            e.compare_exchange(0, 0, Ordering::AcqRel, Ordering::Acquire)
                .unwrap_or_else(|current| current)
        })
    }

    /// Linear probing from `from_index`'s first slot, reading each entry with `read`: the
    /// entry's offset, or `None` at the first empty entry. At most one pass over the table:
    /// a full table has no empty entry to stop at.
    #[inline(always)]
    fn probe(&self, from_index: u64, read: impl Fn(&W) -> u64) -> Option<Offset> {
        let mut i = self.first(from_index);
        for _ in 0..self.entries.len() {
            let e = read(&self.entries[i]);
            if e == 0 {
                return None;
            }
            if entry_index(e) == from_index {
                return Some(entry_to(e));
            }
            i = (i + 1) & self.mask;
        }
        None
    }

    /// Record that the object at `from_index` now lives at `to_offset`, unless another
    /// relocator got there first: `Ok(to_offset)` if this call won, `Err(winner)` otherwise.
    #[inline]
    pub fn insert(&self, from_index: u64, to_offset: Offset) -> Result<Offset, Offset> {
        let new = encode(from_index, to_offset);
        let mut i = self.first(from_index);
        let mut probes = 0;
        loop {
            match self.entries[i].compare_exchange(0, new, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return Ok(to_offset),
                Err(e) if entry_index(e) == from_index => return Err(entry_to(e)),
                Err(_) => {
                    i = (i + 1) & self.mask;
                    probes += 1;
                    assert!(
                        probes <= self.mask,
                        "forwarding entries full: more inserts than live objects"
                    );
                }
            }
        }
    }

    /// Number of populated entries (a scan: for verification and tests).
    pub fn len(&self) -> usize {
        self.entries
            .iter()
            .filter(|e| e.load(Ordering::Acquire) != 0)
            .count()
    }

    /// True if no object has been forwarded.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every `(from_index, to_offset)` pair (for verification).
    pub fn entries(&self) -> impl Iterator<Item = (u64, Offset)> + '_ {
        self.entries.iter().filter_map(|e| {
            let e = e.load(Ordering::Acquire);
            (e != 0).then(|| (entry_index(e), entry_to(e)))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_to_insert_answers_as_find_and_changes_nothing() {
        let o = Offset::from_raw;
        for prefault in [false, true] {
            // 40,000 live objects: a 1 MiB table, large enough to be prefaulted.
            let t: ForwardingEntries = ForwardingEntries::new(40_000);
            if prefault {
                t.prefault();
            }
            for i in (0..40_000).step_by(3) {
                assert_eq!(t.insert(i, o(0x1000 + i * 16)), Ok(o(0x1000 + i * 16)));
            }
            for i in 0..40_000 {
                assert_eq!(t.find_to_insert(i), t.find(i), "index {i}");
            }
            // The probes of missing entries left them empty: inserting them still wins.
            assert_eq!(t.len(), 13_334);
            assert_eq!(t.insert(1, o(0x8000)), Ok(o(0x8000)));
            assert_eq!(t.find_to_insert(1), Some(o(0x8000)));
        }
    }

    #[test]
    fn tables_of_every_size_are_prefaulted() {
        // A mutator probes a table not prefaulted with locked writes and may take its first
        // fault; a table of 16 entries (one page at most) must be prefaulted like a big one.
        for live in [1, 8, 4_000, 40_000] {
            let t: ForwardingEntries = ForwardingEntries::new(live);
            assert!(!t.prefaulted.load(Ordering::Relaxed));
            t.prefault();
            assert!(
                t.prefaulted.load(Ordering::Relaxed),
                "a table of {} entries was not prefaulted",
                t.capacity()
            );
        }
    }

    /// Minor page faults the calling thread has taken so far.
    fn thread_minor_faults() -> i64 {
        // SAFETY: an all-zero `rusage` is a valid value of this plain C struct.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `u` is a valid, writable `rusage` that outlives the call.
        let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut u) };
        assert_eq!(rc, 0, "getrusage");
        u.ru_minflt
    }

    /// Faults taken by looking up, then inserting, one entry on each of `pages` memory pages
    /// of a fresh table that was not prefaulted.
    fn faults_per_page(
        pages: u64,
        lookup: impl Fn(&ForwardingEntries, u64) -> Option<Offset>,
    ) -> f64 {
        // 2^21 entries of 8 bytes: 16 MiB of untouched memory from the allocator.
        let t: ForwardingEntries = ForwardingEntries::new(1 << 20);
        let per_page = 4096 / 8;
        let before = thread_minor_faults();
        for p in 0..pages {
            let idx = p * per_page;
            assert_eq!(lookup(&t, idx), None);
            assert!(t.insert(idx, Offset::from_raw(0x1000 + idx * 16)).is_ok());
        }
        (thread_minor_faults() - before) as f64 / pages as f64
    }

    #[test]
    fn a_relocating_lookup_faults_a_fresh_page_in_once() {
        let written_first = faults_per_page(1000, |t, i| t.find_to_insert(i));
        let read_first = faults_per_page(1000, |t, i| t.find(i));
        // A read maps the shared zero page and the insert then copies it: two faults per
        // page. Written first: one (or fewer, where the kernel gives huge pages).
        assert!(written_first <= 1.05, "{written_first} faults per page");
        assert!(
            read_first > written_first + 0.5,
            "read first {read_first}, written first {written_first} faults per page"
        );
    }

    /// The table's memory comes zeroed from the allocator. (In this test build the compiler
    /// also turns a loop that writes the zeros into a zeroed allocation, so the test guards
    /// the property rather than telling the two apart; in the runtime's release build the
    /// loop wrote them, 143–482 ms of the first large Concurrent Select Relocation Set at 1G.)
    #[test]
    fn a_new_table_touches_none_of_its_memory() {
        // 2^21 entries: 16 MiB, 4,096 memory pages if the zeros were written.
        let before = thread_minor_faults();
        let t: ForwardingEntries = ForwardingEntries::new(1 << 20);
        let faults = thread_minor_faults() - before;
        assert_eq!(t.capacity(), 1 << 21);
        assert!(faults < 64, "{faults} page faults to make a 16 MiB table");
        assert_eq!(t.find(12345), None, "and it reads as empty");
    }

    #[test]
    fn insert_find_and_single_winner() {
        let o = Offset::from_raw;
        let t: ForwardingEntries = ForwardingEntries::new(100);
        assert_eq!(t.find(5), None);
        assert_eq!(t.insert(5, o(0x1000)), Ok(o(0x1000)));
        assert_eq!(t.insert(5, o(0x2000)), Err(o(0x1000)));
        assert_eq!(t.find(5), Some(o(0x1000)));
        for i in 0..100 {
            let _ = t.insert(i, o((1 << 43) + i * 16));
        }
        for i in 0..100 {
            let want = if i == 5 { 0x1000 } else { (1 << 43) + i * 16 };
            assert_eq!(t.find(i), Some(o(want)));
        }
        assert_eq!(t.len(), 100);
        assert_eq!(t.entries().count(), 100);
    }

    #[test]
    fn encodes_extremes() {
        let to = Offset::from_raw((1u64 << 44) - 8);
        let e = encode(MAX_FROM_INDEX, to);
        assert_eq!(entry_index(e), MAX_FROM_INDEX);
        assert_eq!(entry_to(e), to);
    }
}
