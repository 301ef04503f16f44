//! The generational mode's bookkeeping (`HeapConfig::track_generations`): every page's age in
//! a dense generation map, a remembered set of the old slots that may point young, the index
//! of its current bitmap, the store barrier that keeps it complete, and the minor cycle's scan
//! of it (ZGC's page ages and `ZGeneration`s, `ZRememberedSet` per page,
//! `ZBarrier::store_barrier_on_heap_oop_field`'s remembering and `ZRemembered`'s scan).
//!
//! **Ages.** A page handed to a mutator is eden; a relocation target is old, or a survivor
//! page of a given age when a minor ages a sparse page's survivors by copy (its copies stay
//! young: `Generations::remember_moved` leaves them alone); a minor ages or
//! promotes the young pages it found survivors on (below); at a full cycle's Pause Mark
//! Start every page becomes old (the full cycle promotes every survivor), so at that instant
//! no young page exists and an empty remembered set is complete. Mutators allocate
//! only on pages born after the last Pause Mark Start (the allocator retires older ones), so
//! every object allocated since is on an eden page, and relocation, which evacuates only
//! pages from before Mark Start, never moves a young object. A freed page leaves the map and
//! its remembered bits are cleared.
//!
//! **The remembered set** is one `RememberedSet` per 2 MiB granule rather than per page: a page is
//! a whole number of granules, so a page's set is its granules' sets, and the barrier finds the set
//! of a slot by the same index as its age, with no page-table walk and no epoch pin. A granule's
//! set is allocated on its first remembered slot (one bit per word, two bitmaps: 64 KiB, and 32 KiB
//! more for the value-slot bits once a value slot is remembered), carved from a `SideArena`
//! reserved for every granule's bitmaps when the heap is made (so the store barrier's first bit in
//! a granule changes no mapping of the process, as a `malloc` that grows an arena would), and kept
//! for the heap's life; only granules of old pages that received young pointers ever have one. The
//! full cycle flips the current bitmap at Pause Mark Start (what the bitmap held is stale: nothing
//! is young) and clears the previous one concurrently in Concurrent Reset Relocation Set, so the
//! next flip finds it empty.
//!
//! **Remembering** can be off for the interval between two full cycles
//! ([`Generations::remembering`]): a full cycle's Pause Mark Start, where an empty set is
//! complete, turns it off when the director expects no minor before the next full cycle, and
//! only such a pause turns it on again; while it is off the store barrier sets no bit, no
//! minor runs and the invariant below is not kept.
//!
//! **Minor cycles** (`Heap::collect_minor`) flip the index at their Pause Mark Start and
//! change no age there ([`Generations::minor_mark_start`]); their Concurrent Mark Roots scans
//! the previous bitmap ([`Generations::scan_previous`]), emptying it, and remembers again the
//! slots that still point young. A remembered word is read as the slot it is: a value slot's
//! word has a second bit (`value_words`), since a value slot may hold a number by then.
//!
//! **Aging and in-place promotion.** A minor's selection ages each young page with survivors
//! that was not allocated in its cycle, or, once the page's age reaches
//! `HeapConfig::tenuring_threshold`, begins its promotion in place
//! ([`Generations::age_or_promote`]): the page turns *promoting*, old as a holder and young
//! as a target for the store barrier. After Pause Relocate Start (a handshake with every
//! mutator), the minor's Concurrent Relocate remembers the slots of the promoted objects
//! that point young or carry its mark color, and makes the pages old
//! ([`Generations::finish_promotions`], which says why no slot is lost). Such a page's
//! objects were allocated before the minor's Mark Start, on pages the allocator had retired,
//! so no mutator bumps a page while it is promoted. The pages and the minor's color are kept
//! until the next Pause Mark Start for the verifier ([`Generations::promoted_color`]).
//!
//! **Invariant** (while remembering; checked by the verifier in every pause when `verify` is on):
//! every slot of a reachable object on an old page that holds a pointer into a young page has its
//! bit in the current bitmap. Four writers keep it: the store barrier (an old holder receiving a
//! young value), relocation (a copy onto an old page, or in-place compaction, remembers the moved
//! object's young slots at its new address; a full cycle's copy has young slots only where its
//! original has bits, [`Generations::original_remembered`]), a minor's in-place promotion (the
//! promoted objects' young slots, after its Pause Relocate Start), and the Mark Start that makes
//! everything old. (A page being promoted is not checked as a holder until its promotion finishes,
//! and counts as young as a target.)

use super::original_bits::OriginalBits;
use crate::observe::{RememberedSetCounts, RememberedSetStats};
use gc_core::sync::AtomicWord;
use gc_core::{
    AddressLayout, Color, ColoredPtr, GenerationMap, GoodColor, Object, Offset, Page, PageAge,
    RememberedSet, RemsetIndex, SideArena, WordArray, GRANULE_SIZE, HEADER_SIZE,
};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// The pages the latest minor cycle promoted in place, and its mark color: what its
/// Concurrent Relocate scans ([`Generations::finish_promotions`]) and what the verifier
/// allows until the next Pause Mark Start (a pointer to an object on one of these pages may
/// still carry that color). Emptied at every Pause Mark Start.
#[derive(Default)]
struct LatestPromotion {
    color: Option<GoodColor>,
    pages: Vec<Arc<Page>>,
}

pub(crate) struct Generations {
    start: Offset,
    ages: GenerationMap,
    /// One remembered set per granule, allocated on its first remembered slot.
    remsets: Box<[OnceLock<RememberedSet>]>,
    /// Per granule, one bit per word: the word is a value slot (a reference slot where the
    /// bit is clear). Set when a value slot is remembered, before its remembered bit, and
    /// cleared with the page's remembered bits: a word's kind cannot change while its page
    /// is allocated and not compacted, so the minor cycle's scan reads a remembered word as
    /// the slot it is (a value slot may hold a number since, whose bits could look like a
    /// colored pointer).
    value_words: Box<[OnceLock<WordArray>]>,
    /// Where the remembered sets' bitmaps and the value-word bits come from: slots of one
    /// granule's bitmap, three per granule (`None`: the system refused the reservation, and
    /// they come from the global allocator).
    arena: Option<Arc<SideArena>>,
    /// Which bitmap is current: `RemsetIndex::FIRST` when false. Flipped only inside Pause
    /// Mark Start, so a barrier (which runs between safepoints) sees one value throughout.
    flipped: AtomicBool,
    /// The store barrier remembers old-to-young stores (see [`Generations::remembering`]).
    /// Changed only inside a full cycle's Pause Mark Start, like `flipped`.
    remembering: AtomicBool,
    counts: RememberedSetCounts,
    /// A test's request: the next full cycle stops the remembering whatever the director
    /// says (`Heap::stop_remembering_at_next_major_for_tests`), so a test can reach that
    /// state without a workload whose minors do not pay. Taken by that cycle.
    unremembered_next: AtomicBool,
    /// A test's planted bug: the store barrier's slow path forgets to remember
    /// (`Heap::skip_store_barrier_for_tests`), so a test can show the verifier catches it.
    skip_barrier: AtomicBool,
    /// A test's planted bug: a minor's scan drops every remembered slot it takes
    /// (`Heap::skip_remembered_scan_for_tests`), so a test can show it is caught.
    skip_scan: AtomicBool,
    /// A test's planted bug: a minor hands out and heals pointers to old objects in its own
    /// mark color, as the first design did (`Heap::color_old_in_minor_for_tests`).
    old_color: AtomicBool,
    latest_promotion: Mutex<LatestPromotion>,
    /// A test's planted bug: the scan of promoted objects remembers none of their fields
    /// (`Heap::skip_promoted_remembering_for_tests`).
    skip_promoted: AtomicBool,
    /// A test's planted bug: the scan of promoted objects remembers only the fields that
    /// point young, not the ones carrying the minor's color
    /// (`Heap::skip_promoted_color_for_tests`).
    skip_promoted_color: AtomicBool,
    /// A test's planted bug: a minor's copies remember only their fields that point young,
    /// not the ones carrying the minor's color (`Heap::skip_moved_color_for_tests`).
    skip_moved_color: AtomicBool,
    /// A test's planted bug: a minor that compacts a young page in place makes it old without
    /// remembering any of its objects' slots (`Heap::promote_compacted_page_for_tests`).
    promote_compacted: AtomicBool,
    /// A test's planted bug: a minor's survivor target pages are born old, while their copies
    /// are made as survivors' (no remembered bit), so their young slots are left
    /// unremembered on an old page (`Heap::survivor_targets_old_for_tests`).
    survivors_old: AtomicBool,
}

impl Drop for Generations {
    /// The bitmaps go with the bookkeeping: their arena need not zero them for reuse.
    fn drop(&mut self) {
        if let Some(a) = &self.arena {
            a.retire();
        }
    }
}

impl Generations {
    /// The bookkeeping of the offsets `[start, start + size)` (the heap's reservation).
    pub(crate) fn new(start: Offset, size: u64) -> Self {
        let granules = size.div_ceil(GRANULE_SIZE) as usize;
        Generations {
            start,
            ages: GenerationMap::new(start, size),
            remsets: (0..granules).map(|_| OnceLock::new()).collect(),
            value_words: (0..granules).map(|_| OnceLock::new()).collect(),
            arena: SideArena::new(
                RememberedSet::<AtomicU64>::bitmap_words(GRANULE_SIZE),
                3 * granules,
            ),
            flipped: AtomicBool::new(false),
            remembering: AtomicBool::new(true),
            unremembered_next: AtomicBool::new(false),
            counts: RememberedSetCounts::default(),
            skip_barrier: AtomicBool::new(false),
            skip_scan: AtomicBool::new(false),
            old_color: AtomicBool::new(false),
            latest_promotion: Mutex::new(LatestPromotion::default()),
            skip_promoted: AtomicBool::new(false),
            skip_promoted_color: AtomicBool::new(false),
            skip_moved_color: AtomicBool::new(false),
            promote_compacted: AtomicBool::new(false),
            survivors_old: AtomicBool::new(false),
        }
    }

    /// The bitmap barriers and relocation remember into now.
    #[inline]
    fn current(&self) -> RemsetIndex {
        if self.flipped.load(Ordering::Relaxed) {
            RemsetIndex::FIRST.flipped()
        } else {
            RemsetIndex::FIRST
        }
    }

    /// The granule index and word of the set that hold the slot at `slot`.
    #[inline]
    fn word_of(&self, slot: Offset) -> (usize, usize) {
        let rel = slot.raw() - self.start.raw();
        (
            (rel / GRANULE_SIZE) as usize,
            ((rel % GRANULE_SIZE) / gc_core::REMSET_WORD_BYTES) as usize,
        )
    }

    /// A page was handed out: to a mutator (eden) or as a relocation target (old). Called
    /// before any object on it can be reached by another thread.
    pub(crate) fn page_born(&self, page: &Page, age: PageAge) {
        self.ages.set(page.start(), page.size(), age);
    }

    /// A page was freed: it leaves the map, and its granules' remembered bits are cleared (a
    /// page that reuses the memory starts with none).
    pub(crate) fn page_freed(&self, page: &Page) {
        self.ages.clear(page.start(), page.size());
        self.forget(page);
    }

    /// Clear both bitmaps of `page`'s granules (freed, or about to be compacted in place).
    fn forget(&self, page: &Page) {
        let (first, _) = self.word_of(page.start());
        let n = (page.size() / GRANULE_SIZE) as usize;
        for set in self.remsets[first..first + n]
            .iter()
            .filter_map(OnceLock::get)
        {
            set.clear();
        }
        for kinds in self.value_words[first..first + n]
            .iter()
            .filter_map(OnceLock::get)
        {
            for w in kinds.iter().filter(|w| w.load(Ordering::Relaxed) != 0) {
                w.store(0, Ordering::Relaxed);
            }
        }
    }

    /// True if the word at `slot` was remembered as a value slot.
    fn is_value_word(&self, slot: Offset) -> bool {
        let (g, word) = self.word_of(slot);
        self.value_words[g]
            .get()
            .is_some_and(|k| k[word / 64].load(Ordering::Relaxed) & (1 << (word % 64)) != 0)
    }

    /// True if the page covering `off` is old.
    #[inline(always)]
    pub(crate) fn is_old(&self, off: Offset) -> bool {
        self.ages.is_old(off)
    }

    /// True if the page covering `off` is young (eden or survivor).
    pub(crate) fn is_young(&self, off: Offset) -> bool {
        self.ages.is_young(off)
    }

    /// The store barrier, after a store of `value` (`offset_mask` takes its offset) into the
    /// slot at offset `slot` of a heap object (a value slot if `is_value`): if the holder's
    /// page is old (or being promoted) and the value is an object on a page that is not
    /// settled old (young, or being promoted: see [`Self::begin_promotion`]), remember the
    /// slot. One byte load on the way out when
    /// the holder is young, two when the value is old. (A value whose page the map does not
    /// know counts as young: remembered, never missed.) The holder is tested first, and null
    /// after it, so the most common exit needs nothing else. The decision is the map's
    /// [`GenerationMap::remembers_store`], the code the loom models run.
    #[inline(always)]
    pub(crate) fn store_barrier(
        &self,
        slot: Offset,
        value: ColoredPtr,
        offset_mask: u64,
        is_value: bool,
    ) {
        if self.ages.remembers_store(slot, value, offset_mask)
            && self.remembering.load(Ordering::Relaxed)
        {
            self.remember_slow(slot, is_value);
        }
    }

    /// The store barrier's slow path: an old-to-young store.
    #[cold]
    #[inline(never)]
    fn remember_slow(&self, slot: Offset, is_value: bool) {
        if self.skip_barrier.load(Ordering::Relaxed) {
            return;
        }
        if self.remember(slot, is_value) {
            self.counts.barrier_remembered();
        }
    }

    /// Remember the slot at `slot` (a value slot if `is_value`) in the current bitmap; true
    /// if this call set its bit.
    fn remember(&self, slot: Offset, is_value: bool) -> bool {
        let (g, word) = self.word_of(slot);
        if is_value {
            let kinds = self.value_words[g].get_or_init(|| {
                AtomicU64::zeroed_array(
                    RememberedSet::<AtomicU64>::bitmap_words(GRANULE_SIZE),
                    self.arena.as_ref(),
                )
            });
            let (w, mask) = (&kinds[word / 64], 1u64 << (word % 64));
            if w.load(Ordering::Relaxed) & mask == 0 {
                w.fetch_or(mask, Ordering::Relaxed);
            }
        }
        self.remsets[g]
            .get_or_init(|| RememberedSet::new_in(GRANULE_SIZE, self.arena.as_ref()))
            .remember(self.current(), word)
    }

    /// The verifier's question: is the slot at `slot` remembered in the current bitmap?
    pub(crate) fn is_remembered(&self, slot: Offset) -> bool {
        let (g, word) = self.word_of(slot);
        self.remsets[g]
            .get()
            .is_some_and(|s| s.is_remembered(self.current(), word))
    }

    /// The object at `obj` was just copied onto an old page (or compacted in place, if
    /// `in_place`): remember each of its slots that points young, at its new address. The
    /// offset a slot's pointer carries is taken as it is: a stale pointer (an older cycle's
    /// color) leads to a from-space page or to memory reused since, never to a young object,
    /// so reading it as young at worst remembers a slot that needs no bit.
    ///
    /// Run by the thread that made the copy, after its copy won the forwarding entry (or
    /// while it holds the page for in-place compaction): a mutator storing into the copy
    /// meanwhile remembers through its own barrier, and both only set bits.
    ///
    /// A minor's copies (`minor_color`: the evacuating minor's mark color) also remember
    /// every slot carrying that color, as in-place promotion does
    /// ([`Self::finish_promotions`]): such a pointer may lead to an object that is old now
    /// (copied to an old target, or promoted in place), and the next cycle must heal it
    /// before a later one may mark with that color again; an old copy's slots are visited
    /// only if remembered. A copy left on a young page (a young from-page compacted in
    /// place) needs no bit: the next minor traces it.
    pub(crate) fn remember_moved(
        &self,
        layout: AddressLayout,
        obj: Offset,
        in_place: bool,
        minor_color: Option<Color>,
    ) {
        if minor_color.is_some() && !self.ages.is_old(obj) {
            return;
        }
        let minor_color = minor_color.filter(|_| !self.skip_moved_color.load(Ordering::Relaxed));
        // SAFETY: the caller's copy of a live object lies at `obj`, its header written and
        // visible to this thread, on a page that stays mapped while this runs (a target page
        // of this cycle, or the page it compacts in place).
        let o = unsafe { Object::at(layout, obj) };
        let slot_at = |i: usize| obj + HEADER_SIZE + 8 * i as u64;
        let young = |p: ColoredPtr| self.ages.scan_remembers(layout, p, minor_color);
        let mut slots = 0;
        for (i, s) in o.ref_slots().iter().enumerate() {
            if young(s.load(Ordering::Relaxed)) {
                self.remember(slot_at(i), false);
                slots += 1;
            }
        }
        let n_refs = o.n_refs();
        for (i, s) in o.value_slots().iter().enumerate() {
            if s.load(Ordering::Relaxed).as_pointer().is_some_and(young) {
                self.remember(slot_at(n_refs + i), true);
                slots += 1;
            }
        }
        self.counts.moved(slots, in_place);
    }

    /// True if a full cycle's copy of the object at `from` (on a page of its relocation set,
    /// `size` bytes) may hold a young pointer: a slot of `from` is remembered in the current
    /// bitmap. A copy for which this is false needs no bit; one for which it is true goes to
    /// [`Self::remember_major_copy`] once it won its forwarding entry.
    ///
    /// **Why a copy whose original has no bit holds no young pointer.** The full cycle's
    /// Pause Mark Start made every page old, so a young page now is one born after it, and
    /// every object on one was allocated after it: a pointer to such an object was written
    /// into `from` after Mark Start, by a mutator's store (no initializing store reaches an
    /// object on an old page, and `from`'s page is from before Mark Start), whose barrier
    /// found an old holder and a young value and set the slot's bit in the bitmap current
    /// since that Mark Start. The collector's own writes into `from` (healing a color,
    /// remapping a stale pointer to a copy made by this or an earlier cycle) never make it
    /// point young: they keep its target or lead to a copy on a page from before Mark Start.
    /// No mutator writes `from` after Pause Relocate Start (it reaches the object through the
    /// load barrier, which hands out the copy), so every such store and its bit came before
    /// that pause, and the copy, made after it, sees them. Bits only ever mean "may point
    /// young"; a slot rewritten since to an old value costs a read of the copy, nothing more.
    ///
    /// **Ask while `from`'s page is retained** (by the copier's reference to its forwarding):
    /// freeing the page, or compacting it in place, clears its bits, and once the copier has
    /// let go both may happen at any time.
    ///
    /// A copy of a minor cycle, or a page compacted in place, goes through
    /// [`Self::remember_moved`] itself: a minor's copies carry its mark color, which the
    /// bits do not record, and compaction clears the page's bits before it moves anything.
    pub(crate) fn original_remembered(&self, from: Offset, size: u64) -> bool {
        self.original_bits().any(from, size)
    }

    /// [`Self::original_remembered`] for a batch of objects copied out of one retained
    /// from-page, asked one after the other ([`OriginalBits`] says why it may keep a bitmap
    /// word it read).
    pub(crate) fn original_bits(&self) -> OriginalBits<'_> {
        OriginalBits::new(&self.remsets, self.start, self.current())
    }

    /// A full cycle's copy at `to`, on an old page, whose original had a remembered slot
    /// ([`Self::original_remembered`]): remember its young slots, as [`Self::remember_moved`]
    /// does for every copy of a minor.
    pub(crate) fn remember_major_copy(&self, layout: AddressLayout, to: Offset) {
        self.counts.major_copy_read();
        self.remember_moved(layout, to, false, None);
    }

    /// A minor compacted the young `page` in place (its worker, right after), whose objects
    /// were to be copied to pages of age `to_age`: the page stays young, its objects need no
    /// bit ([`Self::remember_moved`] left them alone) and the next minor traces them,
    /// healing their slots of this minor's color. It takes `to_age` if that is a survivor
    /// age (its objects aged as copies would have; a young age replacing a young one, which
    /// a barrier reads as young either way), and keeps its age if `to_age` is old (it is
    /// promoted at a later minor, in place or by copy). Unless the bug of
    /// [`Self::promote_compacted_for_tests`] is planted: then the page is made old here,
    /// after its objects were remembered as young ones (that is, not at all).
    pub(crate) fn compacted_in_minor(&self, page: &Page, to_age: PageAge) {
        if self.promote_compacted.load(Ordering::Relaxed) {
            self.ages.set(page.start(), page.size(), PageAge::Old);
        } else if to_age.is_young() && self.ages.age(page.start()).is_some_and(PageAge::is_young) {
            self.ages.set(page.start(), page.size(), to_age);
        }
    }

    /// The age a minor's target page for copies of destination age `age` is born with:
    /// `age`, or old for a survivor age if the bug of
    /// [`Self::survivor_targets_old_for_tests`] is planted.
    pub(crate) fn target_age(&self, age: PageAge) -> PageAge {
        if self.survivors_old.load(Ordering::Relaxed) {
            PageAge::Old
        } else {
            age
        }
    }

    /// The age of the page covering `off` (`None` if no page covers it).
    pub(crate) fn age(&self, off: Offset) -> Option<PageAge> {
        self.ages.age(off)
    }

    /// Plant the bug of survivor target pages born old (see [`Self::target_age`]).
    pub(crate) fn survivor_targets_old_for_tests(&self) {
        self.survivors_old.store(true, Ordering::Relaxed);
    }

    /// `page` is about to be compacted in place: forget its remembered bits, which
    /// [`Self::remember_moved`] sets again for each object at its new place. No mutator
    /// stores into an object of the page meanwhile (a barrier meeting it waits for the page).
    pub(crate) fn compacting(&self, page: &Page) {
        self.forget(page);
    }

    /// A minor cycle's Concurrent Select Relocation Set, for a young `page` with survivors
    /// (not allocated in this cycle): age it, or, if its age has reached `threshold` (eden
    /// counting 0, survivor `n` counting `n`: ZGC's `compute_to_age`), begin its in-place
    /// promotion (see [`GenerationMap::begin_promotion`]). Returns true if it is promoted.
    ///
    /// Aging changes a young age to another young one: a barrier reading either answers
    /// "young", so it needs no care. Promotion is concurrent with the mutators' store
    /// barriers; why no young slot is lost is said at [`Self::finish_promotions`].
    pub(crate) fn age_or_promote(&self, page: &Page, threshold: u8) -> bool {
        let (age, years) = match self.ages.age(page.start()) {
            Some(a @ PageAge::Eden) => (a, 0),
            Some(a @ PageAge::Survivor(n)) => (a, n),
            Some(PageAge::Old) | None => return false,
        };
        if years >= threshold {
            self.ages.begin_promotion(page.start(), page.size());
            self.counts.promoted_in_place();
            true
        } else {
            // Below the threshold, so at most survivor 13: the next age is young.
            self.ages.set(page.start(), page.size(), age.next());
            self.counts.aged();
            false
        }
    }

    /// The pages a minor with mark color `color` began to promote (recorded for
    /// [`Self::finish_promotions`] and for the verifier's [`Self::promoted_color`]).
    pub(crate) fn promotions_begun(&self, color: GoodColor, pages: Vec<Arc<Page>>) {
        let mut pages = pages;
        pages.sort_by_key(|p| p.start());
        let mut l = self.latest_promotion.lock().unwrap();
        l.color = Some(color);
        l.pages = pages;
    }

    /// A minor cycle's Concurrent Relocate, after Pause Relocate Start: finish the in-place
    /// promotions its selection began. For every object on a promoted page that this minor
    /// marked (live map of sequence number `seq`), remember each slot that points young or
    /// carries the minor's mark color, then make the page old. Returns (pages, slots
    /// remembered).
    ///
    /// **Why no young slot is lost.** A page being promoted is old for the store barrier's
    /// holder test from its [`GenerationMap::begin_promotion`] on, so a store into one of its
    /// objects whose barrier reads the age after that remembers itself. A barrier that read
    /// the young age just before: its store and its barrier complete between two safepoint
    /// polls, so before Pause Relocate Start ended, and this scan, which runs after it, reads
    /// the stored value. The value test takes a promoting page as young until the page is
    /// old, so a pointer to one of its objects stored into an old holder while the minor's
    /// mark color is still good is remembered too (see below); after Pause Relocate Start a
    /// mutator stores only Remapped pointers, and the promoting-or-old answer no longer
    /// matters.
    ///
    /// **Why the minor's color must not stay on them.** A pointer to an object on a
    /// promoted page carries the minor's mark color wherever marking healed it. The next
    /// minor visits roots, young objects and remembered slots, and heals such a pointer to
    /// Remapped (its target is old now); but it never visits an old object's unremembered
    /// slot, and a cycle after it may mark with that color again and take the slot as good
    /// (`mark::good_for`'s rule). So every such field of a promoted object is remembered:
    /// the next minor's scan heals it and forgets it once it points old; a major heals
    /// everything it traces and drops the remembered set.
    pub(crate) fn finish_promotions(&self, layout: AddressLayout, seq: u64) -> (u64, u64) {
        let (color, pages) = {
            let l = self.latest_promotion.lock().unwrap();
            match l.color {
                Some(c) => (c.color(), l.pages.clone()),
                None => return (0, 0),
            }
        };
        let mut slots = 0;
        for page in &pages {
            page.live_map().for_each_marked(seq, |idx| {
                slots += self.remember_promoted(layout, page.offset_of(idx), color);
            });
            self.ages.finish_promotion(page.start(), page.size());
        }
        self.counts.promoted_remembered(slots);
        (pages.len() as u64, slots)
    }

    /// Remember the slots of the promoted object at `obj` that point young or carry the
    /// minor's mark color `color`. Returns how many.
    fn remember_promoted(&self, layout: AddressLayout, obj: Offset, color: Color) -> u64 {
        if self.skip_promoted.load(Ordering::Relaxed) {
            return 0;
        }
        let skip_color = self.skip_promoted_color.load(Ordering::Relaxed);
        // SAFETY: the minor marked the object at `obj`, so it is a live object on a
        // registered page (promoted in place: it does not move, and no minor frees an old
        // page), its header written before the marking that found it.
        let o = unsafe { Object::at(layout, obj) };
        let slot_at = |i: usize| obj + HEADER_SIZE + 8 * i as u64;
        let color = (!skip_color).then_some(color);
        let wanted = |p: ColoredPtr| self.ages.scan_remembers(layout, p, color);
        let mut slots = 0;
        for (i, s) in o.ref_slots().iter().enumerate() {
            if wanted(s.load(Ordering::Acquire)) {
                self.remember(slot_at(i), false);
                slots += 1;
            }
        }
        let n_refs = o.n_refs();
        for (i, s) in o.value_slots().iter().enumerate() {
            if s.load(Ordering::Acquire).as_pointer().is_some_and(wanted) {
                self.remember(slot_at(n_refs + i), true);
                slots += 1;
            }
        }
        slots
    }

    /// The verifier's exception: if `off` lies on a page the latest minor promoted in place
    /// and no Pause Mark Start came since, that minor's mark color.
    pub(crate) fn promoted_color(&self, off: Offset) -> Option<Color> {
        let l = self.latest_promotion.lock().unwrap();
        let color = l.color?;
        // Sorted by start (`promotions_begun`): the last page starting at or below `off`.
        let i = l.pages.partition_point(|p| p.start() <= off);
        (i > 0 && l.pages[i - 1].contains(off)).then_some(color.color())
    }

    /// Pause Mark Start (either kind): the latest minor's promotions are done; from now on
    /// the strict color rule holds for their pages again.
    pub(crate) fn forget_latest_promotion(&self) {
        let mut l = self.latest_promotion.lock().unwrap();
        l.color = None;
        l.pages = Vec::new();
    }

    /// True if the page covering `off` is old and not being promoted.
    pub(crate) fn is_settled_old(&self, off: Offset) -> bool {
        self.ages.is_settled_old(off)
    }

    /// Plant the bug of promoted objects' fields left unremembered.
    pub(crate) fn skip_promoted_for_tests(&self) {
        self.skip_promoted.store(true, Ordering::Relaxed);
    }

    /// Plant the bug of a minor's copies' fields of its color left unremembered (only their
    /// young-pointing slots are).
    pub(crate) fn skip_moved_color_for_tests(&self) {
        self.skip_moved_color.store(true, Ordering::Relaxed);
    }

    /// Plant the bug of a minor's young page compacted in place made old with its fields
    /// left unremembered (see [`Self::compacted_in_minor`]).
    pub(crate) fn promote_compacted_for_tests(&self) {
        self.promote_compacted.store(true, Ordering::Relaxed);
    }

    /// Plant the bug of promoted objects' fields of the minor's color left unremembered.
    pub(crate) fn skip_promoted_color_for_tests(&self) {
        self.skip_promoted_color.store(true, Ordering::Relaxed);
    }

    /// A full cycle's Pause Mark Start: every page becomes old (the generation map's young
    /// tag flips), and the other bitmap becomes current (it was cleared in the last cycle).
    /// O(1); the cycle's Concurrent Mark Roots then [`Self::settle_ages`]. `remember` says
    /// whether the store barrier remembers until the next full cycle's Pause Mark Start
    /// (see [`Self::remembering`]).
    pub(crate) fn major_mark_start(&self, remember: bool) {
        let walked = self.ages.promote_all();
        self.counts.promoted(walked, true);
        self.flipped.fetch_xor(true, Ordering::Relaxed);
        self.remembering.store(remember, Ordering::Relaxed);
        if !remember {
            self.counts.major_unremembered();
        }
    }

    /// True if the store barrier remembers old-to-young stores, so the remembered set is
    /// complete at every pause and a minor may run. The driver turns it off at a full
    /// cycle's Pause Mark Start when no minor is expected before the next one (the
    /// director's minors did not pay, and no retry is due), and back on at a later one: the
    /// store barrier then costs the mode its age test only, not a miss on a bitmap word
    /// for each slot it would remember. It changes only in that pause, when every page
    /// becomes old and an empty remembered set is complete: from then on, one value holds
    /// for every barrier until the next full cycle's Pause Mark Start, and while it is off
    /// no minor runs (the driver runs a full cycle instead) and the verifier does not check
    /// the set.
    pub(crate) fn remembering(&self) -> bool {
        self.remembering.load(Ordering::Relaxed)
    }

    /// A full cycle, after its Pause Mark Start and outside the pause: rewrite the ages the
    /// flip promoted as plain old bytes, so the next flip cannot make them young again (see
    /// `GenerationMap::settle`). One byte per granule of the heap.
    pub(crate) fn settle_ages(&self) {
        let promoted = self.ages.settle();
        self.counts.promoted(promoted, false);
    }

    /// A minor cycle's Pause Mark Start: the other bitmap becomes current, and the one that
    /// was current (the old-to-young slots of the interval since the last Pause Mark Start)
    /// becomes the previous one, which the minor scans ([`Self::scan_previous`]). No page
    /// changes age. O(1).
    pub(crate) fn minor_mark_start(&self) {
        self.flipped.fetch_xor(true, Ordering::Relaxed);
    }

    /// A minor cycle's scan of the remembered set, in Concurrent Mark Roots: call `visit`
    /// with every slot remembered in the previous bitmap (and whether it is a value slot),
    /// emptying the bitmap as it goes; a slot for which `visit` returns true (it still points
    /// young) is remembered again in the current bitmap. Slots of pages no longer old are
    /// skipped (none is expected: a freed page's bits are cleared). Returns (slots visited,
    /// slots remembered again).
    pub(crate) fn scan_previous(&self, mut visit: impl FnMut(Offset, bool) -> bool) -> (u64, u64) {
        let cur = self.current();
        let (mut visited, mut kept) = (0, 0);
        for (g, set) in self.remsets.iter().enumerate() {
            let Some(set) = set.get() else { continue };
            let base = self.start + g as u64 * GRANULE_SIZE;
            visited += set.drain_previous(cur, |word| {
                let slot = base + word as u64 * gc_core::REMSET_WORD_BYTES;
                if !self.ages.is_old(slot) || self.skip_scan.load(Ordering::Relaxed) {
                    return;
                }
                let is_value = self.is_value_word(slot);
                if visit(slot, is_value) {
                    self.remember(slot, is_value);
                    kept += 1;
                }
            });
        }
        self.counts.scanned(visited, kept);
        (visited, kept)
    }

    /// Concurrently, after a full cycle's Pause Mark Start: clear the previous bitmap of
    /// every granule, so the next flip finds it empty. Barriers meanwhile set bits in the
    /// current one only (other words).
    pub(crate) fn clear_previous(&self) {
        let prev = self.current().previous();
        for set in self.remsets.iter().filter_map(OnceLock::get) {
            set.clear_bitmap(prev);
        }
    }

    /// Slots remembered in the current bitmap now (for tests and statistics).
    pub(crate) fn remembered_now(&self) -> u64 {
        let cur = self.current();
        self.remsets
            .iter()
            .filter_map(OnceLock::get)
            .map(|s| s.count(cur))
            .sum()
    }

    /// Bytes the remembered sets' bitmaps take (for memory reports): the granules that have
    /// one, since a set is allocated on its granule's first remembered slot and kept, and the
    /// value-slot bits of the granules where a value slot was remembered.
    pub(crate) fn footprint(&self) -> u64 {
        let sets: u64 = self
            .remsets
            .iter()
            .filter_map(OnceLock::get)
            .map(RememberedSet::footprint_bytes)
            .sum();
        let kinds: u64 = self
            .value_words
            .iter()
            .filter_map(OnceLock::get)
            .map(|k| std::mem::size_of_val::<[AtomicU64]>(k) as u64)
            .sum();
        sets + kinds
    }

    /// The arena the bitmaps are carved from, if it could be reserved (for memory reports).
    pub(crate) fn arena(&self) -> Option<&Arc<SideArena>> {
        self.arena.as_ref()
    }

    /// Make the next full cycle stop the remembering (see `unremembered_next`).
    pub(crate) fn stop_remembering_at_next_major_for_tests(&self) {
        self.unremembered_next.store(true, Ordering::Relaxed);
    }

    /// Whether a test asked the full cycle starting now to stop the remembering (taken).
    pub(crate) fn take_unremembered_request(&self) -> bool {
        self.unremembered_next.swap(false, Ordering::Relaxed)
    }

    /// Plant the bug of a missing store barrier (for the test that the verifier catches it).
    pub(crate) fn skip_barrier_for_tests(&self) {
        self.skip_barrier.store(true, Ordering::Relaxed);
    }

    /// Plant the bug of a remembered-set scan that skips its slots (for the test that it is
    /// caught).
    pub(crate) fn skip_scan_for_tests(&self) {
        self.skip_scan.store(true, Ordering::Relaxed);
    }

    /// Plant the bug of a minor coloring pointers to old objects with its mark color.
    pub(crate) fn plant_old_color_for_tests(&self) {
        self.old_color.store(true, Ordering::Relaxed);
    }

    /// True if [`Self::plant_old_color_for_tests`] was called.
    #[inline]
    pub(crate) fn planted_old_color(&self) -> bool {
        self.old_color.load(Ordering::Relaxed)
    }

    pub(crate) fn counts(&self) -> &RememberedSetCounts {
        &self.counts
    }

    /// The counters now.
    pub(crate) fn stats(&self) -> RememberedSetStats {
        self.counts.snapshot()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_is_remembered_only_from_old_to_young() {
        let start = Offset::from_raw(16 * GRANULE_SIZE);
        let g = Generations::new(start, 8 * GRANULE_SIZE);
        let old = start;
        let young = start + GRANULE_SIZE;
        g.ages.set(old, GRANULE_SIZE, PageAge::Old);
        g.ages.set(young, GRANULE_SIZE, PageAge::Eden);
        let ptr = |o: Offset| ColoredPtr::from_raw(o.raw());
        let all = u64::MAX;
        g.store_barrier(young + 24, ptr(old + 8), all, false); // young holder
        g.store_barrier(old + 16, ptr(old + 8), all, false); // old value
        g.store_barrier(old + 16, ColoredPtr::NULL, all, false); // null
        assert_eq!(g.remembered_now(), 0);
        g.store_barrier(old + 24, ptr(young + 8), all, false);
        g.store_barrier(old + 24, ptr(young + 16), all, false);
        assert!(g.is_remembered(old + 24) && !g.is_remembered(old + 16));
        assert_eq!(g.stats().barrier_remembered, 1);
        // Mark Start: the young page is old now, and the remembered bits are stale: the
        // current bitmap is the other one, and the old one is cleared concurrently.
        g.major_mark_start(true);
        assert!(g.is_old(young));
        g.settle_ages();
        assert!(g.is_old(young));
        assert!(!g.is_remembered(old + 24));
        g.clear_previous();
        g.major_mark_start(true);
        assert_eq!(g.remembered_now(), 0, "the cleared bitmap is current again");
    }

    /// A full cycle's Pause Mark Start that stops remembering: the store barrier then still
    /// tells old-to-young stores apart but sets no bit, until a later full cycle's Pause Mark
    /// Start turns it back on (counted, for the tests that must see it).
    #[test]
    fn a_full_cycle_may_stop_the_remembering_until_the_next() {
        let start = Offset::from_raw(16 * GRANULE_SIZE);
        let g = Generations::new(start, 8 * GRANULE_SIZE);
        let (old, young) = (start, start + GRANULE_SIZE);
        let ptr = |o: Offset| ColoredPtr::from_raw(o.raw());
        assert!(g.remembering());
        g.major_mark_start(false);
        g.settle_ages();
        assert!(!g.remembering());
        assert_eq!(g.stats().majors_unremembered, 1);
        g.ages.set(old, GRANULE_SIZE, PageAge::Old);
        g.ages.set(young, GRANULE_SIZE, PageAge::Eden);
        assert!(g.ages.remembers_store(old + 24, ptr(young + 8), u64::MAX));
        g.store_barrier(old + 24, ptr(young + 8), u64::MAX, false);
        assert_eq!(g.remembered_now(), 0, "not remembered while off");
        assert_eq!(g.stats().barrier_remembered, 0);
        g.clear_previous();
        g.major_mark_start(true);
        g.settle_ages();
        g.ages.set(old, GRANULE_SIZE, PageAge::Old);
        g.ages.set(young, GRANULE_SIZE, PageAge::Eden);
        g.store_barrier(old + 24, ptr(young + 8), u64::MAX, false);
        assert!(g.remembering() && g.is_remembered(old + 24));
        assert_eq!(g.stats().majors_unremembered, 1);
    }

    use gc_core::REMSET_WORD_BYTES;

    proptest::proptest! {
        /// Asked object after object, in any order, the reader answers as a slot-by-slot
        /// test of each object's slots does: none of its headers' words counts, a range may
        /// cross bitmap words and granules, and a word read once is not taken for another.
        #[test]
        fn original_bits_answer_as_each_slot_tested_one_by_one(
            stores in proptest::collection::vec(0u64..2048, 0..40),
            objects in proptest::collection::vec((0u64..2048, 2u64..80), 1..30),
        ) {
            let start = Offset::from_raw(16 * GRANULE_SIZE);
            let g = Generations::new(start, 4 * GRANULE_SIZE);
            // Two old granules, a young one to point into; slots stored to are near the
            // boundary of the first two so that objects cross it.
            let near = start + (GRANULE_SIZE - 1024 * REMSET_WORD_BYTES);
            g.ages.set(start, 2 * GRANULE_SIZE, PageAge::Old);
            g.ages.set(start + 2 * GRANULE_SIZE, GRANULE_SIZE, PageAge::Eden);
            let young = ColoredPtr::from_raw((start + 2 * GRANULE_SIZE + 64).raw());
            for &s in &stores {
                g.store_barrier(near + s * REMSET_WORD_BYTES, young, u64::MAX, false);
            }
            let mut bits = g.original_bits();
            for &(at, words) in &objects {
                let from = near + at * REMSET_WORD_BYTES;
                let size = words * REMSET_WORD_BYTES;
                let want = (HEADER_SIZE..size)
                    .step_by(REMSET_WORD_BYTES as usize)
                    .any(|b| g.is_remembered(from + b));
                proptest::prop_assert_eq!(bits.any(from, size), want, "object at {} of {} words", at, words);
            }
        }
    }
}
