//! Page ages and the dense per-granule generation map (ZGC's `ZPageAge` and the page table's
//! generation lookups), for the generational mode.
//!
//! Every page has an *age*: **eden** (allocated since the last young collection), a
//! **survivor** age `1..=MAX_SURVIVOR_AGE` (survived that many young collections) or **old**
//! (promoted). Eden and survivors are the young generation. A store barrier must learn the
//! generation of the object it stores into — an old holder receiving a young value records
//! the slot in its page's remembered set — and it runs on every reference store, so it cannot
//! afford the page table's pointer chase. The [`GenerationMap`] is one byte per 2 MiB granule
//! of the offset space holding the age of the page that covers it; pages are granule-aligned
//! and a whole number of granules, so one byte load answers "old or young?" for any offset.
//!
//! The map is written only by the collector (when a page is allocated, aged, promoted or
//! freed) and read racily by barriers, so a barrier may read the age a page had just before a
//! change. The runtime that uses the map must change an age only where such a stale answer is
//! harmless: inside a pause (barriers run between safepoints), or with the page's slots
//! scanned for young pointers after the change (a page promoted concurrently). Relaxed loads
//! and stores suffice for the bytes themselves; the ordering comes from the pause or the page
//! allocation that publishes the page.
//!
//! A page promoted in place passes through one more state, *promoting*
//! ([`GenerationMap::begin_promotion`], [`GenerationMap::finish_promotion`]): old for
//! [`GenerationMap::is_old`], the store barrier's test of the holder, and not for
//! [`GenerationMap::is_settled_old`], its test of the value, so while it lasts both a store
//! into the page's objects and a store of a pointer to them into an old object are
//! remembered. Its [`PageAge`] is old.
//!
//! The age bytes and the young tag (below) are generic over [`AtomicByte`]: std's `AtomicU8`
//! in the collector (the default type parameter, so `GenerationMap` is the map the runtime
//! uses and compiles to the plain byte loads and stores), loom's in the runtime's models of an
//! in-place promotion, a relocation copy and a full cycle's flip against a store
//! (`gc-runtime/tests/loom_protocols.rs`), which so check this code. The store barrier's
//! decision ([`GenerationMap::remembers_store`]) and the scans' rule for one slot
//! ([`GenerationMap::scan_remembers`]) are written here once, for the runtime and the models
//! to call. The methods that were not `#[inline]` before the map became generic are
//! `#[inline(never)]`: a generic function is compiled in the crate that uses it, where it
//! could be inlined, and the collector's code is to stay what it was (the barrier's tests
//! were and are inlined).
//!
//! **Promoting every page in O(1).** A full cycle's Pause Mark Start makes every page old (it
//! promotes every survivor), and a pause must not walk the map: its work would grow with the
//! heap. So a young page's byte carries a one-bit *tag*, the map's young tag when the byte
//! was written, and a young byte whose tag is not the map's current one reads as old.
//! [`GenerationMap::promote_all`] flips the tag: one store, and every young page is old.
//! Before the next flip would make those bytes read young again, the full cycle's concurrent
//! work rewrites them as plain old bytes ([`GenerationMap::settle`], one byte per granule,
//! outside the pause).

use crate::address::{AddressLayout, Color};
use crate::sync::AtomicByte;
use crate::word::{ColoredPtr, Offset};
use crate::GRANULE_SIZE;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};

/// The oldest survivor age before a page is promoted whatever the tenuring threshold says
/// (ZGC keeps 14 survivor ages).
pub const MAX_SURVIVOR_AGE: u8 = 14;

/// The age of a page: its generation and, if young, how many young collections it survived.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PageAge {
    /// Allocated since the last young collection.
    Eden,
    /// Survived this many young collections (`1..=MAX_SURVIVOR_AGE`).
    Survivor(u8),
    /// Promoted to the old generation.
    Old,
}

/// The byte an unused granule holds: no page, so no generation.
const NO_PAGE: u8 = 0;
/// Bytes of the ages: eden is 1, survivor `n` is `1 + n`, old is the largest; a young byte
/// also carries the map's young tag of when it was written (`TAG`, see the module
/// documentation), old bytes none.
const EDEN: u8 = 1;
const OLD: u8 = EDEN + MAX_SURVIVOR_AGE + 1;
/// A page being promoted in place: old as a *holder* (a store into it is remembered), young
/// as a *target* (a store of a pointer to it into an old holder is remembered too), until
/// [`GenerationMap::finish_promotion`]. Its [`PageAge`] is `Old`.
const PROMOTING: u8 = OLD + 1;
/// The young tag's bit in a young page's byte.
const TAG: u8 = 0x80;
/// Young ages take the codes `EDEN..=YOUNG_MAX` (before their tag).
const YOUNG_MAX: u8 = EDEN + MAX_SURVIVOR_AGE;

/// True if the byte `b` holds a young age, read with the map's current young tag `tag`:
/// a young byte of the other tag was promoted by a flip and is old.
#[inline(always)]
fn young_byte(b: u8, tag: u8) -> bool {
    (b ^ tag).wrapping_sub(EDEN) <= YOUNG_MAX - EDEN
}

/// True if `b` is the byte of a page that is old (settled, promoting, or young of a tag that
/// is not `tag`).
#[inline(always)]
fn old_byte(b: u8, tag: u8) -> bool {
    b != NO_PAGE && !young_byte(b, tag)
}

impl PageAge {
    /// True for eden and survivor pages.
    pub fn is_young(self) -> bool {
        self != PageAge::Old
    }

    /// The age after one more young collection survived: eden becomes survivor 1, survivor
    /// `n` becomes `n + 1`, the oldest survivor age and old become old.
    pub fn next(self) -> PageAge {
        match self {
            PageAge::Eden => PageAge::Survivor(1),
            PageAge::Survivor(n) if n < MAX_SURVIVOR_AGE => PageAge::Survivor(n + 1),
            PageAge::Survivor(_) | PageAge::Old => PageAge::Old,
        }
    }

    /// The byte of this age written while the map's young tag is `tag`.
    fn to_byte(self, tag: u8) -> u8 {
        match self {
            PageAge::Eden => EDEN | tag,
            PageAge::Survivor(n) => {
                assert!(
                    (1..=MAX_SURVIVOR_AGE).contains(&n),
                    "survivor age {n} outside 1..={MAX_SURVIVOR_AGE}"
                );
                (EDEN + n) | tag
            }
            PageAge::Old => OLD,
        }
    }

    /// The age the byte `b` holds, read with the map's young tag `tag`.
    fn from_byte(b: u8, tag: u8) -> Option<PageAge> {
        if b == NO_PAGE {
            return None;
        }
        if !young_byte(b, tag) {
            return Some(PageAge::Old);
        }
        match b ^ tag {
            EDEN => Some(PageAge::Eden),
            n => Some(PageAge::Survivor(n - EDEN)),
        }
    }
}

/// One age byte per granule of `[start, start + size)` of the offset space (see the module
/// documentation), each an `A` (std's `AtomicU8` but in the loom models).
pub struct GenerationMap<A: AtomicByte = AtomicU8> {
    start: Offset,
    ages: Box<[A]>,
    /// One past the highest granule a page was ever set on: [`GenerationMap::settle`]
    /// reads no byte above it (the map covers the heap's whole reservation, sixteen times
    /// the heap, and pages are taken from its low end).
    high: AtomicUsize,
    /// The young tag (`0` or `TAG`) young bytes are written with now; flipped by
    /// [`GenerationMap::promote_all`]. An `A` like the age bytes, so a loom model flips the
    /// collector's own tag while barriers read it.
    tag: A,
    /// True from a flip until [`GenerationMap::settle`] rewrote the bytes it promoted.
    unsettled: AtomicBool,
}

impl<A: AtomicByte> GenerationMap<A> {
    /// A map covering `[start, start + size)` with no page in it.
    #[inline(never)]
    pub fn new(start: Offset, size: u64) -> Self {
        let n = (size / GRANULE_SIZE) as usize;
        GenerationMap {
            start,
            ages: (0..n).map(|_| A::new_byte(NO_PAGE)).collect(),
            high: AtomicUsize::new(0),
            tag: A::new_byte(0),
            unsettled: AtomicBool::new(false),
        }
    }

    #[inline(always)]
    fn tag(&self) -> u8 {
        self.tag.load(Ordering::Relaxed)
    }

    #[inline(always)]
    fn index(&self, offset: Offset) -> Option<usize> {
        let i = (offset.raw().checked_sub(self.start.raw())? / GRANULE_SIZE) as usize;
        (i < self.ages.len()).then_some(i)
    }

    /// The granule indices of the page `[start, start + size)`; panics outside the map or for
    /// a range that is not whole granules (pages are granule-aligned).
    fn range(&self, start: Offset, size: u64) -> std::ops::Range<usize> {
        assert!(
            size.is_multiple_of(GRANULE_SIZE) && size > 0,
            "a page of {size} bytes is not a whole number of granules"
        );
        let first = self.index(start).expect("page inside the map");
        assert!(
            (start.raw() - self.start.raw()).is_multiple_of(GRANULE_SIZE),
            "page start {start:?} is not granule-aligned"
        );
        let end = first + (size / GRANULE_SIZE) as usize;
        assert!(end <= self.ages.len(), "page ends outside the map");
        first..end
    }

    /// Record that the page `[start, start + size)` has age `age`.
    #[inline(never)]
    pub fn set(&self, start: Offset, size: u64, age: PageAge) {
        let b = age.to_byte(self.tag());
        let range = self.range(start, size);
        self.high.fetch_max(range.end, Ordering::Relaxed);
        for i in range {
            self.ages[i].store(b, Ordering::Relaxed);
        }
    }

    /// Forget the page `[start, start + size)` (freed).
    #[inline(never)]
    pub fn clear(&self, start: Offset, size: u64) {
        for i in self.range(start, size) {
            self.ages[i].store(NO_PAGE, Ordering::Relaxed);
        }
    }

    /// A full collection's Pause Mark Start: every page becomes old (the full cycle promotes
    /// every survivor, so at that instant no young page exists). O(1): the young tag flips,
    /// and every young byte, written with the other tag, reads old. The caller orders it
    /// with the barriers that read the map (a pause does), and must [`Self::settle`] before
    /// the next flip; if it did not, this flip settles first (a walk, which no cycle that
    /// settles ever takes). Returns the granules settled by that walk (0 when settled).
    #[inline(never)]
    pub fn promote_all(&self) -> u64 {
        let walked = if self.unsettled.load(Ordering::Relaxed) {
            self.settle()
        } else {
            0
        };
        // Only a full cycle's Pause Mark Start writes the tag, so a load and a store flip it.
        self.tag.store(self.tag() ^ TAG, Ordering::Relaxed);
        self.unsettled.store(true, Ordering::Relaxed);
        walked
    }

    /// After [`Self::promote_all`], outside the pause: rewrite every byte the flip promoted
    /// (young of the other tag), and every page still promoting, as old, so the next flip
    /// finds no young byte of the tag it returns to. One byte is read per granule up to the
    /// highest a page was ever set on; returns the granules rewritten. Barriers may read any
    /// byte meanwhile: before and after its rewrite it reads old. A byte that changed since
    /// it was read (its page freed, or a new page's age set) is left as it is.
    #[inline(never)]
    pub fn settle(&self) -> u64 {
        if !self.unsettled.load(Ordering::Relaxed) {
            return 0;
        }
        let tag = self.tag();
        let mut settled = 0;
        let high = self.high.load(Ordering::Relaxed);
        for a in self.ages[..high].iter() {
            let b = a.load(Ordering::Relaxed);
            if old_byte(b, tag)
                && b != OLD
                && a.compare_exchange(b, OLD, Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok()
            {
                settled += 1;
            }
        }
        self.unsettled.store(false, Ordering::Relaxed);
        settled
    }

    /// The age of the page covering `offset`, if a page covers it.
    #[inline]
    pub fn age(&self, offset: Offset) -> Option<PageAge> {
        PageAge::from_byte(
            self.ages[self.index(offset)?].load(Ordering::Relaxed),
            self.tag(),
        )
    }

    /// The store barrier's question: is the page covering `offset` old? One byte load (and
    /// the young tag's); false for young pages and for offsets no page covers.
    #[inline(always)]
    pub fn is_old(&self, offset: Offset) -> bool {
        self.index(offset)
            .is_some_and(|i| old_byte(self.ages[i].load(Ordering::Relaxed), self.tag()))
    }

    /// True if the page covering `offset` is old and not being promoted: the store barrier's
    /// test of the *value* (a pointer to a page being promoted is remembered like a young
    /// one, see [`Self::begin_promotion`]). One byte load, like [`Self::is_old`].
    #[inline(always)]
    pub fn is_settled_old(&self, offset: Offset) -> bool {
        self.index(offset).is_some_and(|i| {
            let b = self.ages[i].load(Ordering::Relaxed);
            b != PROMOTING && old_byte(b, self.tag())
        })
    }

    /// The store barrier's decision, after a store of `value` (`offset_mask` takes its
    /// offset) into the slot at `slot`: true if the slot must be remembered, that is if the
    /// holder's page is old ([`Self::is_old`]: settled, promoting, or young of the tag before
    /// the last flip) and the value is an object on a page that is not settled old
    /// ([`Self::is_settled_old`]: young, promoting, or a page the map does not know, which
    /// counts as young: remembered, never missed). The holder is tested first and null after
    /// it, so the most common exit (a young holder) costs one byte load and the tag's.
    ///
    /// The runtime's store barrier (`Generations::store_barrier`) calls this, and so do the
    /// loom models over a `GenerationMap<LoomByte>`: the condition they check is this one.
    #[inline(always)]
    pub fn remembers_store(&self, slot: Offset, value: ColoredPtr, offset_mask: u64) -> bool {
        self.is_old(slot)
            && !value.is_null()
            && !self.is_settled_old(Offset::from_raw(value.raw() & offset_mask))
    }

    /// The scans' rule for one slot of an object that is old or becoming old (a minor's
    /// in-place promotion, `Generations::finish_promotions`, and a copy onto an old page,
    /// `Generations::remember_moved`): true if the slot holding `p` must be remembered, that
    /// is if `p` is not null and points to a page that is not old ([`Self::is_old`]: a
    /// promoting page counts as old here), or carries `color` (the minor's mark color, which
    /// the next cycle must heal before a later one marks with it again).
    ///
    /// Called by those scans for every slot, and by the loom models of in-place promotion
    /// and relocation.
    #[inline(always)]
    pub fn scan_remembers(
        &self,
        layout: AddressLayout,
        p: ColoredPtr,
        color: Option<Color>,
    ) -> bool {
        !p.is_null()
            && (!self.is_old(layout.offset(p)) || color.is_some_and(|c| layout.color(p) == c))
    }

    /// True if the page covering `offset` is being promoted in place.
    #[inline]
    pub fn is_promoting(&self, offset: Offset) -> bool {
        self.index(offset)
            .is_some_and(|i| self.ages[i].load(Ordering::Relaxed) == PROMOTING)
    }

    /// Begin the in-place promotion of the page `[start, start + size)`: from now on it is
    /// old for [`Self::is_old`] (stores into its objects are remembered by a holder test)
    /// and not for [`Self::is_settled_old`] (a pointer to it stored into an old holder is
    /// remembered by the value test), until [`Self::finish_promotion`].
    #[inline(never)]
    pub fn begin_promotion(&self, start: Offset, size: u64) {
        for i in self.range(start, size) {
            self.ages[i].store(PROMOTING, Ordering::Relaxed);
        }
    }

    /// End the in-place promotion of the page `[start, start + size)`: old.
    #[inline(never)]
    pub fn finish_promotion(&self, start: Offset, size: u64) {
        for i in self.range(start, size) {
            self.ages[i].store(OLD, Ordering::Relaxed);
        }
    }

    /// The young collection's question: is the page covering `offset` young (eden or a
    /// survivor)? False for old pages and for offsets no page covers.
    #[inline]
    pub fn is_young(&self, offset: Offset) -> bool {
        self.age(offset).is_some_and(PageAge::is_young)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_grow_to_old() {
        let mut a = PageAge::Eden;
        let mut steps = 0;
        while a != PageAge::Old {
            a = a.next();
            steps += 1;
        }
        assert_eq!(steps, MAX_SURVIVOR_AGE as usize + 1);
        assert_eq!(PageAge::Old.next(), PageAge::Old);
        assert!(PageAge::Survivor(3).is_young() && !PageAge::Old.is_young());
    }

    #[test]
    fn every_age_round_trips_through_its_byte() {
        let mut a = PageAge::Eden;
        loop {
            for tag in [0, TAG] {
                assert_eq!(PageAge::from_byte(a.to_byte(tag), tag), Some(a));
                // Read with the other tag, every age is old.
                assert_eq!(
                    PageAge::from_byte(a.to_byte(tag), tag ^ TAG),
                    Some(PageAge::Old)
                );
            }
            if a == PageAge::Old {
                break;
            }
            a = a.next();
        }
        for tag in [0, TAG] {
            assert_eq!(PageAge::from_byte(NO_PAGE, tag), None);
            assert!(!old_byte(NO_PAGE, tag) && !young_byte(NO_PAGE, tag));
            assert!(old_byte(PROMOTING, tag) && !young_byte(PROMOTING, tag));
        }
    }

    #[test]
    fn a_promoting_page_is_old_as_a_holder_and_young_as_a_target() {
        let base = Offset::from_raw(64 * GRANULE_SIZE);
        let map: GenerationMap = GenerationMap::new(base, 8 * GRANULE_SIZE);
        let page = Offset::from_raw(base.raw() + 2 * GRANULE_SIZE);
        map.set(page, 2 * GRANULE_SIZE, PageAge::Survivor(1));
        assert!(!map.is_old(page) && !map.is_settled_old(page) && map.is_young(page));
        map.begin_promotion(page, 2 * GRANULE_SIZE);
        let inside = Offset::from_raw(page.raw() + GRANULE_SIZE + 8);
        assert!(map.is_old(inside) && !map.is_settled_old(inside) && map.is_promoting(inside));
        assert!(!map.is_young(inside));
        assert_eq!(map.age(inside), Some(PageAge::Old));
        map.finish_promotion(page, 2 * GRANULE_SIZE);
        assert!(map.is_old(inside) && map.is_settled_old(inside) && !map.is_promoting(inside));
        // A full cycle settles a page still promoting (after its Mark Start).
        map.begin_promotion(page, 2 * GRANULE_SIZE);
        assert_eq!(map.promote_all(), 0);
        assert_eq!(map.settle(), 2);
        assert!(map.is_settled_old(page));
    }

    #[test]
    fn the_map_answers_per_page_for_every_offset_inside_it() {
        let base = Offset::from_raw(64 * GRANULE_SIZE);
        let map: GenerationMap = GenerationMap::new(base, 16 * GRANULE_SIZE);
        let small = base;
        let medium = Offset::from_raw(base.raw() + 4 * GRANULE_SIZE);
        map.set(small, GRANULE_SIZE, PageAge::Eden);
        map.set(medium, 4 * GRANULE_SIZE, PageAge::Old);
        let last_of_medium = Offset::from_raw(medium.raw() + 4 * GRANULE_SIZE - 8);
        assert!(map.is_young(Offset::from_raw(small.raw() + 8)));
        assert!(!map.is_old(small));
        assert!(map.is_old(medium) && map.is_old(last_of_medium));
        assert_eq!(map.age(Offset::from_raw(base.raw() + GRANULE_SIZE)), None);
        // Outside the map: no page, no panic.
        assert!(!map.is_old(Offset::from_raw(8)));
        assert!(!map.is_young(Offset::from_raw(base.raw() + 16 * GRANULE_SIZE)));
        map.set(small, GRANULE_SIZE, PageAge::Eden.next());
        assert_eq!(map.age(small), Some(PageAge::Survivor(1)));
        map.clear(medium, 4 * GRANULE_SIZE);
        assert!(!map.is_old(last_of_medium));
        // A full cycle's Mark Start: every page old, no page where there was none.
        assert_eq!(map.promote_all(), 0);
        assert!(map.is_old(small) && !map.is_old(medium));
        assert_eq!(map.age(medium), None);
        assert_eq!(map.settle(), 1);
        assert!(map.is_old(small) && map.is_settled_old(small) && !map.is_old(medium));
    }

    #[test]
    fn a_flip_promotes_every_young_page_at_once_and_settling_keeps_them_old() {
        let base = Offset::from_raw(64 * GRANULE_SIZE);
        let map: GenerationMap = GenerationMap::new(base, 8 * GRANULE_SIZE);
        let at = |g: u64| Offset::from_raw(base.raw() + g * GRANULE_SIZE);
        map.set(at(0), GRANULE_SIZE, PageAge::Eden);
        map.set(at(1), 2 * GRANULE_SIZE, PageAge::Survivor(MAX_SURVIVOR_AGE));
        map.set(at(3), GRANULE_SIZE, PageAge::Old);
        // The flip: one store, every page old, none settled by a walk.
        assert_eq!(map.promote_all(), 0);
        for g in 0..4 {
            assert!(map.is_old(at(g)) && map.is_settled_old(at(g)) && !map.is_young(at(g)));
            assert_eq!(map.age(at(g)), Some(PageAge::Old));
        }
        // A page allocated after the flip is young, with the new tag.
        map.set(at(4), GRANULE_SIZE, PageAge::Eden);
        assert!(map.is_young(at(4)) && !map.is_old(at(4)));
        // Settling rewrites the three promoted granules, not the new page nor the old one.
        assert_eq!(map.settle(), 3);
        assert_eq!(map.settle(), 0, "settled once per flip");
        assert!(map.is_young(at(4)));
        // The next flip returns to the first tag: the bytes the first one promoted were
        // settled, so they stay old; the page allocated since becomes old.
        assert_eq!(map.promote_all(), 0);
        for g in 0..5 {
            assert!(
                map.is_old(at(g)),
                "granule {g} must be old after the second flip"
            );
        }
    }

    #[test]
    fn a_flip_before_the_last_one_settled_settles_first() {
        let base = Offset::from_raw(64 * GRANULE_SIZE);
        let map: GenerationMap = GenerationMap::new(base, 4 * GRANULE_SIZE);
        map.set(base, GRANULE_SIZE, PageAge::Eden);
        assert_eq!(map.promote_all(), 0);
        // No settle: without the walk the second flip would make the page young again.
        assert_eq!(map.promote_all(), 1);
        assert!(map.is_old(base) && !map.is_young(base));
    }

    #[test]
    fn settling_leaves_a_byte_that_changed_since_the_flip() {
        let base = Offset::from_raw(64 * GRANULE_SIZE);
        let map: GenerationMap = GenerationMap::new(base, 4 * GRANULE_SIZE);
        map.set(base, GRANULE_SIZE, PageAge::Eden);
        map.promote_all();
        // The page was freed and its granule taken by a new eden page before the walk.
        map.clear(base, GRANULE_SIZE);
        map.set(base, GRANULE_SIZE, PageAge::Eden);
        assert_eq!(map.settle(), 0);
        assert!(map.is_young(base));
    }

    #[test]
    #[should_panic(expected = "whole number of granules")]
    fn a_page_of_part_of_a_granule_is_refused() {
        let map: GenerationMap = GenerationMap::new(Offset::ZERO, 4 * GRANULE_SIZE);
        map.set(Offset::ZERO, 4096, PageAge::Eden);
    }
}
