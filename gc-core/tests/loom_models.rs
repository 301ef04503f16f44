//! Loom models of the racy protocols, run on the *same* generic code as the collector
//! (`ForwardingEntries`, `ColoredSlot` with `self_heal`, `LiveMap` are generic over
//! `gc_core::sync::AtomicWord`; here the word is loom's `AtomicU64`, so loom explores every
//! interleaving and every value the memory model lets a load see):
//!
//! - two relocators racing to forward the same object: exactly one wins, both agree on the
//!   offset, and the winner's copy is visible to the loser and to a reader (no data race);
//! - self-healing against a mutator's concurrent store: the slot never ends bad or null
//!   (unless the mutator stored null), and a heal never overwrites the mutator's store;
//! - self-healing while a minor cycle marks, against a mutator storing a pointer to an old
//!   object colored Remapped (bad then): the heal leaves the other object's pointer alone;
//! - two barriers healing the same bad pointer: one write, the good pointer wins;
//! - two markers marking the same object: counted once; a marker starting a new cycle (lazy
//!   reset) against a reader: the reader never sees the old cycle's marks as new ones.

use gc_core::barrier::self_heal;
use gc_core::sync::loom::LoomWord;
use gc_core::{
    AddressLayout, Color, ColoredPtr, ColoredSlot, ForwardingEntries, GoodColor, LiveMap, Offset,
};
use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;
use std::sync::atomic::Ordering;

/// The from-index both relocators forward.
const FROM: u64 = 3;
/// Where relocator `t` copies the object.
fn copy_of(t: usize) -> Offset {
    Offset::from_raw(0x1000 * (t as u64 + 1))
}
/// Which relocator's copy lives at `to`.
fn owner_of(to: Offset) -> usize {
    (to.raw() / 0x1000 - 1) as usize
}
/// The payload relocator `t` writes into its copy.
fn payload(t: usize) -> u64 {
    0xC0FFEE + t as u64
}

struct Relocation {
    table: ForwardingEntries<LoomWord>,
    /// The two candidate copies of the object ("to-space"), written before publishing.
    copies: [UnsafeCell<u64>; 2],
}

/// Relocator `t`: copy the object, then race to publish the copy. Returns the insert result
/// and the payload of the copy that won, read through the offset the table gave back.
fn relocate(r: &Relocation, t: usize) -> (Result<Offset, Offset>, u64) {
    r.copies[t].with_mut(|p| {
        // SAFETY: copy `t` is written only by relocator `t`, before it is published.
        unsafe { *p = payload(t) }
    });
    let res = r.table.insert(FROM, copy_of(t));
    let winner = match res {
        Ok(to) | Err(to) => to,
    };
    // SAFETY (for loom: checked): reading the winner's copy races with its write unless the
    // forwarding CAS orders them; loom reports a data race if it does not.
    let seen = r.copies[owner_of(winner)].with(|p| unsafe { *p });
    (res, seen)
}

/// A relocator thread; it returns what [`relocate`] returns.
type Relocator = thread::JoinHandle<(Result<Offset, Offset>, u64)>;

/// Two relocators (threads running [`relocate`] as 0 and 1) racing on a fresh table; returns
/// the shared state and the threads.
fn race() -> (Arc<Relocation>, Vec<Relocator>) {
    let r = Arc::new(Relocation {
        table: ForwardingEntries::new(1),
        copies: [UnsafeCell::new(0), UnsafeCell::new(0)],
    });
    let hs = (0..2)
        .map(|t| {
            let r = r.clone();
            thread::spawn(move || relocate(&r, t))
        })
        .collect();
    (r, hs)
}

#[test]
fn forwarding_insert_race_has_exactly_one_winner() {
    loom::model(|| {
        let (r, hs) = race();
        let res: Vec<_> = hs.into_iter().map(|h| h.join().unwrap()).collect();
        let oks: Vec<usize> = (0..2).filter(|&t| res[t].0.is_ok()).collect();
        assert_eq!(oks.len(), 1, "exactly one relocator wins: {res:?}");
        let w = oks[0];
        let winner = copy_of(w);
        for (t, &(r_t, seen)) in res.iter().enumerate() {
            match r_t {
                Ok(to) => assert_eq!((t, to), (w, winner)),
                Err(to) => assert_eq!(to, winner, "the loser learns the winner's offset"),
            }
            assert_eq!(
                seen,
                payload(w),
                "everyone sees the winning copy's contents"
            );
        }
        assert_eq!(r.table.find(FROM), Some(winner));
        assert_eq!(r.table.len(), 1);
    });
}

#[test]
fn forwarding_reader_sees_nothing_or_the_complete_winning_copy() {
    loom::model(|| {
        let (r, relocators) = race();
        // A mutator's barrier looking the object up while the relocators race.
        let reader = {
            let r = r.clone();
            thread::spawn(move || {
                r.table.find(FROM).map(|to| {
                    // SAFETY (checked by loom): ordered by the Acquire in `find`.
                    (to, r.copies[owner_of(to)].with(|p| unsafe { *p }))
                })
            })
        };
        let seen = reader.join().unwrap();
        let res: Vec<_> = relocators
            .into_iter()
            .map(|h| h.join().unwrap().0)
            .collect();
        let winner = res.iter().find_map(|x| x.ok()).unwrap();
        if let Some((to, payload_seen)) = seen {
            assert_eq!(to, winner, "a reader never sees a losing copy");
            assert_eq!(payload_seen, payload(owner_of(winner)));
        }
    });
}

#[test]
fn forwarding_different_objects_both_win() {
    loom::model(|| {
        let table: Arc<ForwardingEntries<LoomWord>> = Arc::new(ForwardingEntries::new(1));
        let o = Offset::from_raw;
        let hs: Vec<_> = [(3u64, o(0x100)), (4, o(0x200))]
            .into_iter()
            .map(|(i, to)| {
                let table = table.clone();
                thread::spawn(move || table.insert(i, to))
            })
            .collect();
        for h in hs {
            assert!(h.join().unwrap().is_ok());
        }
        assert_eq!(table.find(3), Some(o(0x100)));
        assert_eq!(table.find(4), Some(o(0x200)));
        assert_eq!(table.len(), 2);
    });
}

/// The pointers of the healing models: layout S = 42 during relocation (good = Remapped).
struct Ptrs {
    bad_mask: u64,
    /// A stale pointer (Marked1 color from the last marking) to object A.
    bad: ColoredPtr,
    /// The good pointer to object A (what the slow path returns).
    good: ColoredPtr,
    /// A good pointer to another object B.
    other: ColoredPtr,
}

fn ptrs() -> Ptrs {
    let l = AddressLayout::new(42);
    let g = GoodColor::Remapped;
    Ptrs {
        bad_mask: l.bad_mask(g),
        bad: l.with_color(Offset::from_raw(0x1000), Color::MARKED1),
        good: l.good(Offset::from_raw(0x1000), g),
        other: l.good(Offset::from_raw(0x2000), g),
    }
}

/// A slot over loom's atomic word.
type LoomSlot = ColoredSlot<LoomWord>;

/// The load barrier written against the generic slot: load, test, slow path + heal.
/// Returns (the pointer the mutator gets, whether this call healed the slot).
fn barrier_load(slot: &LoomSlot, p: &Ptrs) -> (ColoredPtr, bool) {
    let v = slot.load(Ordering::Acquire);
    if v.raw() & p.bad_mask == 0 {
        return (v, false);
    }
    assert_eq!(v, p.bad, "only the stale pointer is ever bad here");
    let healed = self_heal(slot, v, p.good, p.bad_mask);
    (p.good, healed)
}

fn heal_against_store(store: ColoredPtr) {
    loom::model(move || {
        let p = ptrs();
        let slot = Arc::new(LoomSlot::new(p.bad));
        let healer = {
            let slot = slot.clone();
            thread::spawn(move || barrier_load(&slot, &ptrs()))
        };
        // The mutator stores a new value into the slot, then reads its slot back. The store is
        // modeled as a swap: loom 0.7 lets a plain store slip between the read and the write of
        // another thread's CAS (tokio-rs/loom#254), which neither C11 nor hardware allows; a
        // swap takes the same place in the slot's modification order without that bug.
        let mutator = {
            let slot = slot.clone();
            thread::spawn(move || {
                let p = ptrs();
                let replaced = slot.swap(store, Ordering::Release);
                assert!(
                    replaced == p.bad || replaced == p.good,
                    "the store replaced {replaced:?}"
                );
                let again = slot.load(Ordering::Acquire);
                assert_eq!(again, store, "a heal overwrote the mutator's later store");
            })
        };
        mutator.join().unwrap();
        let (got, healed) = healer.join().unwrap();
        assert!(got == p.good || got == store, "barrier returned {got:?}");
        assert_eq!(
            got.raw() & p.bad_mask,
            0,
            "the barrier returned a bad pointer"
        );
        if healed {
            assert_eq!(got, p.good);
        }
        let last = slot.load(Ordering::Acquire);
        assert_ne!(last, p.bad, "the slot ended bad");
        assert_eq!(last, store, "the mutator's store must survive");
        if !store.is_null() {
            assert!(!last.is_null(), "healing wrote null");
        }
    });
}

#[test]
fn self_heal_never_overwrites_a_mutator_store() {
    heal_against_store(ptrs().other);
}

#[test]
fn self_heal_never_overwrites_a_mutator_null_store() {
    heal_against_store(ColoredPtr::NULL);
}

/// While a minor cycle marks (good = Marked0), pointers to old objects are handed out and
/// stored Remapped, which is bad then: a mutator may store a *bad* pointer to another object
/// while a barrier heals the slot's stale pointer. The heal must leave that store alone (a
/// heal that took any bad pointer for a weaker copy of its own would overwrite it with the
/// pointer it computed, and the mutator's object would vanish from the slot).
#[test]
fn self_heal_leaves_a_minors_remapped_store_to_another_object() {
    loom::model(|| {
        let l = AddressLayout::new(42);
        let bad_mask = l.bad_mask(GoodColor::Marked0);
        // A's stale pointer (the last major's color), A's good one, and old B's Remapped one.
        let stale = l.with_color(Offset::from_raw(0x1000), Color::MARKED1);
        let good = l.good(Offset::from_raw(0x1000), GoodColor::Marked0);
        let old_b = l.good(Offset::from_raw(0x2000), GoodColor::Remapped);
        assert_ne!(
            old_b.raw() & bad_mask,
            0,
            "Remapped is bad while a minor marks"
        );
        let slot = Arc::new(LoomSlot::new(stale));
        let healer = {
            let slot = slot.clone();
            thread::spawn(move || {
                let v = slot.load(Ordering::Acquire);
                if v == stale {
                    self_heal(&*slot, v, good, bad_mask);
                }
            })
        };
        // A swap, as in `heal_against_store` (loom's plain store and CAS, tokio-rs/loom#254).
        let replaced = slot.swap(old_b, Ordering::Release);
        assert!(
            replaced == stale || replaced == good,
            "replaced {replaced:?}"
        );
        assert_eq!(
            slot.load(Ordering::Acquire),
            old_b,
            "a heal overwrote the store"
        );
        healer.join().unwrap();
        assert_eq!(
            slot.load(Ordering::Acquire),
            old_b,
            "the mutator's store must survive the heal"
        );
    });
}

#[test]
fn two_healers_write_once_and_agree() {
    loom::model(|| {
        let slot = Arc::new(LoomSlot::new(ptrs().bad));
        let hs: Vec<_> = (0..2)
            .map(|_| {
                let slot = slot.clone();
                thread::spawn(move || barrier_load(&slot, &ptrs()))
            })
            .collect();
        let res: Vec<(ColoredPtr, bool)> = hs.into_iter().map(|h| h.join().unwrap()).collect();
        let p = ptrs();
        assert!(res.iter().all(|&(got, _)| got == p.good), "{res:?}");
        assert_eq!(
            res.iter().filter(|&&(_, healed)| healed).count(),
            1,
            "exactly one healer writes the slot"
        );
        assert_eq!(slot.load(Ordering::Acquire), p.good);
    });
}

#[test]
fn two_markers_count_an_object_once() {
    loom::model(|| {
        let map: Arc<LiveMap<LoomWord>> = Arc::new(LiveMap::new(32));
        // Make the map current for cycle 1 first, with one other object marked.
        assert!(map.mark(1, 1, true, 8).newly_marked);
        let hs: Vec<_> = [true, false]
            .into_iter()
            .map(|strong| {
                let map = map.clone();
                thread::spawn(move || map.mark(1, 5, strong, 24))
            })
            .collect();
        let res: Vec<_> = hs.into_iter().map(|h| h.join().unwrap()).collect();
        assert_eq!(
            res.iter().filter(|r| r.newly_marked).count(),
            1,
            "exactly one marker marks first: {res:?}"
        );
        assert!(
            res[0].newly_strong,
            "only the strong marker sets the strong bit"
        );
        assert!(!res[1].newly_strong);
        assert_eq!(map.live_objects(1), 2);
        assert_eq!(map.live_bytes(1), 8 + 24);
        assert!(map.is_strongly_marked(1, 5));
    });
}

#[test]
fn two_markers_of_neighbours_in_one_word() {
    loom::model(|| {
        let map: Arc<LiveMap<LoomWord>> = Arc::new(LiveMap::new(32));
        assert!(map.mark(1, 0, false, 8).newly_marked);
        let hs: Vec<_> = [(5usize, 16u64), (6, 32)]
            .into_iter()
            .map(|(i, size)| {
                let map = map.clone();
                thread::spawn(move || map.mark(1, i, true, size))
            })
            .collect();
        for h in hs {
            let r = h.join().unwrap();
            assert!(r.newly_marked && r.newly_strong);
        }
        assert_eq!(map.live_objects(1), 3);
        assert_eq!(map.live_bytes(1), 8 + 16 + 32);
        let mut marked = Vec::new();
        map.for_each_marked(1, |i| marked.push(i));
        assert_eq!(marked, vec![0, 5, 6]);
    });
}

#[test]
fn lazy_reset_never_shows_old_marks_in_the_new_cycle() {
    loom::model(|| {
        let map: Arc<LiveMap<LoomWord>> = Arc::new(LiveMap::new(32));
        map.mark(1, 5, true, 8);
        map.mark(1, 7, true, 8);
        // The first marker of cycle 2 clears the map and marks one object...
        let marker = {
            let map = map.clone();
            thread::spawn(move || map.mark(2, 9, true, 16))
        };
        // ...while another thread asks about cycle 2.
        let reader = {
            let map = map.clone();
            thread::spawn(move || {
                assert!(!map.is_marked(2, 5), "an old mark seen as a new one");
                assert!(
                    !map.is_strongly_marked(2, 7),
                    "an old mark seen as a new one"
                );
                let objects = map.live_objects(2);
                assert!(
                    objects <= 1,
                    "old live objects counted in the new cycle: {objects}"
                );
                let bytes = map.live_bytes(2);
                assert!(bytes == 0 || bytes == 16, "live bytes {bytes}");
            })
        };
        reader.join().unwrap();
        let r = marker.join().unwrap();
        assert!(r.newly_marked);
        assert_eq!(map.live_objects(2), 1);
        assert_eq!(map.live_bytes(2), 16);
        assert!(map.is_marked(2, 9) && !map.is_marked(2, 5));
    });
}
