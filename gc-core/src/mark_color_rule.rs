//! The mark-color rule: which of the three mark colors (Marked0, Marked1, Marked2) a GC cycle
//! marks with, and which cycle's forwarding table a stale pointer needs (non-generational
//! ZGC's `ZAddress::flip_to_marked`, which toggles Marked0 and Marked1 at Pause Mark Start;
//! generational ZGC gives each generation mark bits of its own instead).
//!
//! Marking tells "visited in this cycle" from "not visited yet" by the color of a slot's
//! pointer: a cycle's mark color must be carried by no live slot when its Pause Mark Start
//! makes it the good color. Which colors can live slots carry then? Every slot the previous
//! cycle visited carries that cycle's mark color (or Remapped, written since), and every slot
//! no cycle visited since the last full (*major*) cycle carries the last major's mark color
//! (or Remapped): a young (*minor*) cycle never visits the old→old slots. So the rule is
//!
//! > the next cycle marks with a color that is neither the previous cycle's nor the last
//! > major's,
//!
//! and with three mark colors one always remains (two when the previous cycle was the major).
//! The colors then also say which forwarding table remaps a stale pointer, during the next
//! cycle's marking ([`MarkColorRule::stale_source`]): the previous cycle's mark color needs
//! the previous cycle's table ([`StaleSource::PreviousCycle`]; that cycle relocated where the
//! pointer leads), and the last major's color, when it is not also the previous cycle's, needs
//! the last major's table ([`StaleSource::LastMajor`]: minors move no old object, so nothing
//! else moved the target since). A generational mode therefore keeps the last major's table
//! until the next major's marking has remapped every old slot (ZGC's `remap_young_roots`
//! meets the same "double remap"); with majors only the two tables are one.
//!
//! This is sufficient only while the premise holds: at every Pause Mark Start a live slot
//! carries Remapped, the previous cycle's color or the last major's. A minor must keep it for
//! the old-to-old slots it never revisits, which mutators' loads and stores touch during its
//! marking too: the runtime hands out and heals every pointer to an old object Remapped while
//! a minor marks, so a minor's color is only ever carried by pointers to young objects (which
//! the next minor visits), and its verifier checks that no live slot carries the next cycle's
//! color before each Mark Start. A minor that promotes an object must keep it as well (heal the
//! promoted object's fields, or remember them so the next minor visits them).
//!
//! With majors only, two colors are eligible at each cycle; [`ColorChoice`] picks one:
//! [`ColorChoice::Alternate`] keeps Marked0 and Marked1 alternating as before (the Marked2
//! view is never touched: no page-table entry, no fault, no resident memory through it),
//! [`ColorChoice::Rotate`] takes the least recently used eligible color, so majors cycle
//! through all three and every part of the collector meets Marked2 pointers.

use crate::address::GoodColor;

/// The three mark colors, in the order ties are broken: Marked1 first (GC(0) marks with
/// Marked1, as ZGC's does), then Marked0, then Marked2.
pub const MARK_COLORS: [GoodColor; 3] =
    [GoodColor::Marked1, GoodColor::Marked0, GoodColor::Marked2];

/// A young-only cycle or a full one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CycleKind {
    /// Collects the young generation only: visits young objects and remembered old slots.
    Minor,
    /// Collects the whole heap: visits every live slot.
    Major,
}

/// Which eligible color a cycle takes when the rule leaves two (see the module documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
pub enum ColorChoice {
    /// Prefer Marked0 and Marked1 (the least recently used of them); Marked2 only when the
    /// rule leaves nothing else, which majors alone never do.
    #[default]
    Alternate,
    /// The least recently used eligible color: majors alone rotate Marked1, Marked0, Marked2.
    Rotate,
}

/// The forwarding table that remaps a stale pointer during a cycle's marking.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StaleSource {
    /// The previous cycle's: the pointer carries the previous cycle's mark color.
    PreviousCycle,
    /// The last major's (before this cycle): the pointer carries its mark color, which is
    /// not the previous cycle's.
    LastMajor,
}

/// The mark colors that a cycle may mark with after a cycle that marked with `previous` and
/// a last major that marked with `last_major` (`None`: no such cycle yet): every mark color
/// but those two, in [`MARK_COLORS`] order. Never empty.
pub fn eligible(
    previous: Option<GoodColor>,
    last_major: Option<GoodColor>,
) -> impl Iterator<Item = GoodColor> {
    MARK_COLORS
        .into_iter()
        .filter(move |&c| Some(c) != previous && Some(c) != last_major)
}

/// The rule's state across cycles: the latest cycle's mark color, the one before, the last
/// major's and when each color last marked. Changed only at Pause Mark Start
/// ([`MarkColorRule::start`]).
#[derive(Clone, Debug)]
pub struct MarkColorRule {
    choice: ColorChoice,
    /// Cycles started so far.
    cycles: u64,
    /// The mark color of the latest cycle started (the one marking, or the last one).
    current: Option<GoodColor>,
    /// The mark color of the cycle before it: stale pointers' color during its marking.
    before: Option<GoodColor>,
    /// The mark color of the last major started before the latest cycle.
    major_before: Option<GoodColor>,
    /// The mark color of the last major started, the latest cycle included.
    last_major: Option<GoodColor>,
    /// Per color (`MARK_COLORS` order): the number of the cycle that last marked with it.
    last_used: [Option<u64>; 3],
}

fn index(c: GoodColor) -> usize {
    MARK_COLORS
        .iter()
        .position(|&m| m == c)
        .expect("a mark color")
}

impl MarkColorRule {
    /// No cycle yet: nothing carries a mark color, so the first cycle may take any.
    pub fn new(choice: ColorChoice) -> Self {
        MarkColorRule {
            choice,
            cycles: 0,
            current: None,
            before: None,
            major_before: None,
            last_major: None,
            last_used: [None; 3],
        }
    }

    /// How this rule picks between two eligible colors.
    pub fn choice(&self) -> ColorChoice {
        self.choice
    }

    /// The color the next cycle (of `kind`) will mark with: an [`eligible`] color after the
    /// latest cycle and the last major, by [`ColorChoice`]. The kind does not change the
    /// choice (the rule excludes the last major's color for both), only what
    /// [`Self::start`] records.
    pub fn next(&self) -> GoodColor {
        // Least recently used first (never used: before every used one); `Alternate` puts
        // Marked2 after the other two whenever they are eligible.
        let lru = |c: &GoodColor| self.last_used[index(*c)].map_or(0, |n| n + 1);
        let last_resort =
            |c: &GoodColor| self.choice == ColorChoice::Alternate && *c == GoodColor::Marked2;
        // `min_by_key` keeps the first of equal keys: ties go by `MARK_COLORS` order.
        eligible(self.current, self.last_major)
            .min_by_key(|c| (last_resort(c), lru(c)))
            .expect("three colors always leave one")
    }

    /// Pause Mark Start of a cycle of `kind`: choose its mark color ([`Self::next`]) and
    /// record it. Returns the color.
    pub fn start(&mut self, kind: CycleKind) -> GoodColor {
        let c = self.next();
        self.before = self.current;
        self.major_before = self.last_major;
        self.current = Some(c);
        if kind == CycleKind::Major {
            self.last_major = Some(c);
        }
        self.last_used[index(c)] = Some(self.cycles);
        self.cycles += 1;
        c
    }

    /// The latest cycle's mark color (`None` before the first cycle): the good color while it
    /// marks, and, after its relocation, the color of the slots it visited that nothing
    /// healed to Remapped since.
    pub fn current(&self) -> Option<GoodColor> {
        self.current
    }

    /// The mark color of the cycle before the latest one: stale pointers carry it during the
    /// latest cycle's marking.
    pub fn previous(&self) -> Option<GoodColor> {
        self.before
    }

    /// The last major's mark color, the latest cycle included.
    pub fn last_major(&self) -> Option<GoodColor> {
        self.last_major
    }

    /// During the latest cycle's marking: which forwarding table remaps a pointer of
    /// `color`. `None` for Remapped and for a color no live slot may carry (the latest
    /// cycle's own, and any other).
    pub fn stale_source(&self, color: GoodColor) -> Option<StaleSource> {
        if Some(color) == self.current || color == GoodColor::Remapped {
            None
        } else if Some(color) == self.before {
            Some(StaleSource::PreviousCycle)
        } else if Some(color) == self.major_before {
            Some(StaleSource::LastMajor)
        } else {
            None
        }
    }

    /// The colors a live slot may carry just before the next Pause Mark Start besides
    /// Remapped: the latest cycle's and the last major's (one color with majors only).
    pub fn live_colors(&self) -> impl Iterator<Item = GoodColor> {
        let second = (self.last_major != self.current).then_some(self.last_major);
        [self.current].into_iter().chain(second).flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use CycleKind::{Major, Minor};
    use GoodColor::{Marked0 as M0, Marked1 as M1, Marked2 as M2};

    fn run(choice: ColorChoice, kinds: &[CycleKind]) -> Vec<GoodColor> {
        let mut r = MarkColorRule::new(choice);
        kinds.iter().map(|&k| r.start(k)).collect()
    }

    #[test]
    fn majors_alone_alternate_or_rotate() {
        assert_eq!(
            run(ColorChoice::Alternate, &[Major; 6]),
            [M1, M0, M1, M0, M1, M0]
        );
        assert_eq!(
            run(ColorChoice::Rotate, &[Major; 7]),
            [M1, M0, M2, M1, M0, M2, M1]
        );
        // The alternation is the one `GoodColor::mark_color_for_cycle` names.
        for (n, c) in run(ColorChoice::Alternate, &[Major; 9])
            .into_iter()
            .enumerate()
        {
            assert_eq!(c, GoodColor::mark_color_for_cycle(n as u64));
        }
    }

    /// The worked sequence of the book (`docs/src/mechanism.md`).
    #[test]
    fn a_worked_sequence_of_minors_and_majors() {
        let kinds = [Major, Minor, Minor, Minor, Major, Minor, Major];
        assert_eq!(
            run(ColorChoice::Alternate, &kinds),
            [M1, M0, M2, M0, M2, M1, M0]
        );
        assert_eq!(
            run(ColorChoice::Rotate, &kinds),
            [M1, M0, M2, M0, M2, M1, M0]
        );
        let mut r = MarkColorRule::new(ColorChoice::Alternate);
        r.start(Major); // M1
        r.start(Minor); // M0
        r.start(Minor); // M2: neither M0 (previous) nor M1 (last major)
        assert_eq!(r.stale_source(M0), Some(StaleSource::PreviousCycle));
        assert_eq!(r.stale_source(M1), Some(StaleSource::LastMajor));
        assert_eq!(r.stale_source(M2), None);
        assert_eq!(r.live_colors().collect::<Vec<_>>(), [M2, M1]);
    }

    #[test]
    fn eligible_leaves_one_or_two() {
        for p in [None, Some(M0), Some(M1), Some(M2)] {
            for m in [None, Some(M0), Some(M1), Some(M2)] {
                let e: Vec<_> = eligible(p, m).collect();
                let excluded = [p, m]
                    .into_iter()
                    .flatten()
                    .collect::<std::collections::HashSet<_>>();
                assert_eq!(e.len(), 3 - excluded.len(), "{p:?} {m:?}");
                assert!(e.iter().all(|c| Some(*c) != p && Some(*c) != m));
            }
        }
    }

    /// One slot of the model heap: whether it is in an old object, whether it points young,
    /// whether it is remembered (an old slot the next minor visits), and the color of its
    /// pointer with the cycle whose marking wrote it (`None`: Remapped).
    #[derive(Clone, Copy, Debug)]
    struct Slot {
        old: bool,
        points_young: bool,
        remembered: bool,
        written: Option<(GoodColor, usize)>,
    }

    /// What happens to one slot in a cycle after its marking started: a mutator store
    /// (during the marking: the mark color; after it: Remapped) of a young or an old pointer,
    /// a heal to Remapped by a barrier after the marking, the promotion of its target (it
    /// points old from then on), or, in a minor, the promotion of its object.
    #[derive(Clone, Copy, Debug)]
    enum Event {
        StoreWhileMarking { young: bool },
        StoreAfterMarking { young: bool },
        Healed,
        TargetPromoted,
        Promoted,
    }

    fn event() -> impl Strategy<Value = (usize, Event)> {
        let e = prop_oneof![
            any::<bool>().prop_map(|young| Event::StoreWhileMarking { young }),
            any::<bool>().prop_map(|young| Event::StoreAfterMarking { young }),
            Just(Event::Healed),
            Just(Event::TargetPromoted),
            Just(Event::Promoted),
        ];
        (0usize..SLOTS, e)
    }

    const SLOTS: usize = 48;

    /// The model's cycles: kinds and what happens to slots in each.
    type Cycles = Vec<(CycleKind, Vec<(usize, Event)>)>;

    /// Run the model (see the proptest below); `Err` names the first broken invariant.
    fn model(rotate: bool, cycles: &Cycles, old: &[bool]) -> Result<(), String> {
        let choice = if rotate {
            ColorChoice::Rotate
        } else {
            ColorChoice::Alternate
        };
        let mut r = MarkColorRule::new(choice);
        let mut heap: Vec<Slot> = old
            .iter()
            .map(|&old| Slot {
                old,
                points_young: false,
                remembered: false,
                written: None,
            })
            .collect();
        let mut last_major: Option<usize> = None;
        for (n, (kind, events)) in cycles.iter().enumerate() {
            let (kind, minor) = (*kind, *kind == Minor);
            let (prev, major) = (r.current(), r.last_major());
            let c = r.start(kind);
            if Some(c) == prev || Some(c) == major {
                return Err(format!(
                    "cycle {n} took {c:?}: previous {prev:?}, last major {major:?}"
                ));
            }
            if r.previous() != prev {
                return Err(format!(
                    "cycle {n}: previous() is not the previous cycle's color"
                ));
            }
            if choice == ColorChoice::Alternate
                && cycles[..=n].iter().all(|s| s.0 == Major)
                && c == M2
            {
                return Err(format!(
                    "cycle {n}: majors alone took Marked2 when alternating"
                ));
            }
            for (i, slot) in heap.iter().enumerate() {
                let Some((color, by)) = slot.written else {
                    continue;
                };
                if color == c {
                    return Err(format!("cycle {n} took {c:?}, which slot {i} carries"));
                }
                let want = if by + 1 == n {
                    StaleSource::PreviousCycle
                } else if Some(by) == last_major {
                    StaleSource::LastMajor
                } else {
                    return Err(format!("slot {i} carries the color of cycle {by}, neither the previous nor the last major"));
                };
                if r.stale_source(color) != Some(want) {
                    return Err(format!(
                        "slot {i} of cycle {by}: {color:?} is {:?}, not {want:?}",
                        r.stale_source(color)
                    ));
                }
            }
            // Marking: a major visits every slot; a minor the young and the remembered ones,
            // and leaves an old slot that no longer points young Remapped and forgotten.
            for slot in heap.iter_mut() {
                if !minor {
                    slot.written = Some((c, n));
                    slot.remembered = false;
                } else if !slot.old {
                    slot.written = Some((c, n));
                } else if slot.remembered {
                    if slot.points_young {
                        slot.written = Some((c, n));
                    } else {
                        slot.written = None;
                        slot.remembered = false;
                    }
                }
            }
            for &(i, e) in events {
                let slot = &mut heap[i];
                match e {
                    Event::StoreWhileMarking { young } => {
                        slot.points_young = young;
                        slot.written = Some((c, n));
                        // A minor's color in an old slot: the next minor must visit it.
                        slot.remembered |= slot.old && (young || minor);
                    }
                    Event::StoreAfterMarking { young } => {
                        slot.points_young = young;
                        slot.written = None;
                        slot.remembered |= slot.old && young;
                    }
                    Event::Healed => slot.written = None,
                    Event::TargetPromoted => slot.points_young = false,
                    Event::Promoted if minor && !slot.old => {
                        slot.old = true;
                        slot.remembered = slot.points_young;
                        if !slot.points_young {
                            slot.written = None;
                        }
                    }
                    Event::Promoted => {}
                }
            }
            if !minor {
                last_major = Some(n);
            }
        }
        Ok(())
    }

    fn cycles() -> impl Strategy<Value = Cycles> {
        proptest::collection::vec(
            (
                prop_oneof![1 => Just(Major), 3 => Just(Minor)],
                proptest::collection::vec(event(), 0..12),
            ),
            1..80,
        )
    }

    proptest! {
        /// Random sequences of minor and major cycles over a model heap of young and old
        /// slots (`model`). A major visits every slot and heals it to its mark color. A minor
        /// visits the young slots and the remembered old ones, healing them to its mark color
        /// and an old slot it finds no longer pointing young to Remapped; a promoted object's
        /// fields are remembered if they point young, else Remapped; a store into an old slot
        /// during a minor's marking is remembered (the premise, see the module documentation).
        ///
        /// At every Pause Mark Start: the chosen color is neither the previous cycle's nor
        /// the last major's, no live slot carries it already, and every colored slot names
        /// the cycle that wrote it through `stale_source` — the previous cycle, or the last
        /// major for old slots no minor visited: the forwarding table a stale slot needs
        /// follows from its color.
        #[test]
        fn colors_never_collide_and_name_their_table(
            rotate in any::<bool>(),
            cycles in cycles(),
            old in proptest::collection::vec(any::<bool>(), SLOTS),
        ) {
            if let Err(e) = model(rotate, &cycles, &old) {
                return Err(TestCaseError::fail(e));
            }
        }
    }
}
