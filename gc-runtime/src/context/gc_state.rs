//! The collector's global phase state: the good color, the phase and the sequence number
//! (ZGC's `ZGlobalPhase`, `ZGlobalSeqNum` and the address masks), and the mark colors of the
//! latest cycles, chosen by gc-core's `MarkColorRule` at each Pause Mark Start.
//!
//! All of them change only inside pauses; mutators copy the bad mask into their own state when
//! they resume, so the barrier's fast path tests against a thread-owned value.

use gc_core::{AddressLayout, ColorChoice, CycleKind, GoodColor, MarkColorRule};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};

/// The phase a mutator's barrier works in (ZGC's `ZGlobalPhase`): not a phase of the GC log
/// or of the records (those are `GcPhase` and `PauseKind`), but which slow path a bad pointer
/// takes, set only inside pauses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BarrierPhase {
    /// From Pause Mark Start to Pause Mark End: bad pointers are marked (and remapped).
    Mark,
    /// From Pause Mark End to Pause Relocate Start: marking is complete; weak references
    /// to unmarked objects must read as null.
    MarkComplete,
    /// From Pause Relocate Start to the next Pause Mark Start (also before the first cycle):
    /// bad pointers are relocated or remapped.
    Relocate,
}

/// Which forwarding index a stale color names ([`GcState::table_for`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Table {
    /// The last major's relocation set (`GcContext::forwarding`).
    Major,
    /// The latest evacuating minor's (`GcContext::minor_forwarding`).
    Minor,
}

pub(crate) struct GcState {
    layout: AddressLayout,
    good: AtomicU8,
    /// The latest cycle's mark color (Remapped before the first cycle): the good color while
    /// it marks, and the color a slot it visited keeps until something heals it to Remapped.
    mark: AtomicU8,
    /// The mark color of the cycle before the latest (Remapped before the second cycle): the
    /// color of stale pointers during the latest cycle's marking, which the previous cycle's
    /// forwarding table remaps.
    stale: AtomicU8,
    /// The mark color of the evacuating minor whose relocation set the minor forwarding index
    /// held at the latest cycle's Pause Mark Start (Remapped if none): the other color a
    /// stale pointer may carry during that cycle's marking, remapped through the minor's
    /// table ([`Table::Minor`]), while [`Self::stale`] names the major's ([`Table::Major`]).
    stale_minor: AtomicU8,
    /// The rule that chooses each cycle's mark color; locked only at Pause Mark Start and by
    /// readers outside the barriers.
    rule: Mutex<MarkColorRule>,
    /// The mark color of the cycle whose relocation set the forwarding index holds
    /// (Remapped before the first relocation set): a pointer of this color may lead into it
    /// and is remapped through the index, a pointer of any other color is not. With full
    /// cycles only it is the previous cycle's color while a cycle marks; a minor cycle keeps
    /// the last major's set (its own evacuation has its own, [`Self::minor_forwarded`]), so
    /// then it is the last major's.
    forwarded: AtomicU8,
    /// The mark color of the minor cycle whose relocation set the minor forwarding index
    /// holds (Remapped when it holds none): a pointer of this color may lead into a young
    /// page that minor evacuated, and is remapped through that index. Never equal to
    /// [`Self::forwarded`] while both are set: a minor's color is never the last major's
    /// (the mark-color rule).
    minor_forwarded: AtomicU8,
    /// True while the latest cycle is a minor (young-only) one: set at its Pause Mark Start,
    /// cleared at the next major's.
    minor: AtomicBool,
    phase: AtomicU8,
    seqnum: AtomicU64,
}

fn enc_good(g: GoodColor) -> u8 {
    match g {
        GoodColor::Marked0 => 0,
        GoodColor::Marked1 => 1,
        GoodColor::Remapped => 2,
        GoodColor::Marked2 => 3,
    }
}

fn dec_good(v: u8) -> GoodColor {
    match v {
        0 => GoodColor::Marked0,
        1 => GoodColor::Marked1,
        3 => GoodColor::Marked2,
        _ => GoodColor::Remapped,
    }
}

impl GcState {
    pub(crate) fn new(layout: AddressLayout, colors: ColorChoice) -> Self {
        GcState {
            layout,
            good: AtomicU8::new(enc_good(GoodColor::Remapped)),
            mark: AtomicU8::new(enc_good(GoodColor::Remapped)),
            stale: AtomicU8::new(enc_good(GoodColor::Remapped)),
            stale_minor: AtomicU8::new(enc_good(GoodColor::Remapped)),
            rule: Mutex::new(MarkColorRule::new(colors)),
            forwarded: AtomicU8::new(enc_good(GoodColor::Remapped)),
            minor_forwarded: AtomicU8::new(enc_good(GoodColor::Remapped)),
            minor: AtomicBool::new(false),
            phase: AtomicU8::new(BarrierPhase::Relocate as u8),
            // Live maps treat 0 as "no cycle"; the first Pause Mark Start makes it 2.
            seqnum: AtomicU64::new(1),
        }
    }

    pub(super) fn layout(&self) -> AddressLayout {
        self.layout
    }

    #[inline]
    pub(crate) fn good(&self) -> GoodColor {
        dec_good(self.good.load(Ordering::Acquire))
    }

    /// The latest cycle's mark color (see the field); Remapped before the first cycle.
    #[inline]
    pub(crate) fn mark(&self) -> GoodColor {
        dec_good(self.mark.load(Ordering::Acquire))
    }

    /// The color of stale pointers during the latest cycle's marking: the mark color of the
    /// cycle whose relocation set the forwarding index held at its Pause Mark Start (the
    /// previous cycle's with full cycles only, the last major's after a minor; Remapped,
    /// which is never stale, before any).
    #[inline]
    pub(crate) fn stale(&self) -> GoodColor {
        dec_good(self.stale.load(Ordering::Acquire))
    }

    /// The other color of stale pointers during the latest cycle's marking: the mark color of
    /// the evacuating minor whose relocation set the minor forwarding index held at its Pause
    /// Mark Start, `None` if it held none (see the field). With [`Self::stale`], every color
    /// [`Self::table_for`] sends to a table while the cycle marks.
    #[inline]
    pub(crate) fn stale_minor(&self) -> Option<GoodColor> {
        Some(dec_good(self.stale_minor.load(Ordering::Acquire)))
            .filter(|&c| c != GoodColor::Remapped)
    }

    /// The mark color of the cycle whose relocation set the forwarding index holds now (see
    /// the field).
    #[inline]
    pub(crate) fn forwarded(&self) -> GoodColor {
        dec_good(self.forwarded.load(Ordering::Acquire))
    }

    /// A full cycle installed its relocation set: pointers of its mark color are the ones
    /// the forwarding index remaps from now on.
    pub(crate) fn relocation_set_installed(&self) {
        self.forwarded
            .store(self.mark.load(Ordering::Acquire), Ordering::Release);
    }

    /// The mark color of the minor whose relocation set the minor forwarding index holds
    /// now, Remapped if none (see the field).
    #[inline]
    pub(crate) fn minor_forwarded(&self) -> GoodColor {
        dec_good(self.minor_forwarded.load(Ordering::Acquire))
    }

    /// A minor cycle installed its relocation set (the sparse young pages it evacuates):
    /// pointers of its mark color are remapped through the minor forwarding index from now
    /// on.
    pub(crate) fn minor_relocation_set_installed(&self) {
        self.minor_forwarded
            .store(self.mark.load(Ordering::Acquire), Ordering::Release);
    }

    /// The minor relocation set was dropped (a cycle's marking after it remapped every
    /// pointer of its color): no color is looked up in the minor index any more.
    pub(crate) fn minor_relocation_set_reset(&self) {
        self.minor_forwarded
            .store(enc_good(GoodColor::Remapped), Ordering::Release);
    }

    /// The forwarding table a pointer of `color` needs now, if any: the last major's
    /// ([`Self::forwarded`]) or the latest evacuating minor's ([`Self::minor_forwarded`]).
    /// Remapped and every other color need none, and so does the good color: from Pause
    /// Mark Start to Pause Relocate Start it is the running cycle's mark color, whose own
    /// relocation set, installed by its selection while the good color is still its mark
    /// color, has no entries before Concurrent Relocate (a weak handle's upgrade looks up
    /// whatever its slot holds: a good pointer must not be taken for a stale one).
    #[inline]
    pub(crate) fn table_for(&self, color: gc_core::Color) -> Option<Table> {
        if color.intersects(self.good().color()) {
            return None;
        }
        let major = self.forwarded();
        if major != GoodColor::Remapped && color.intersects(major.color()) {
            return Some(Table::Major);
        }
        let minor = self.minor_forwarded();
        if minor != GoodColor::Remapped && color.intersects(minor.color()) {
            return Some(Table::Minor);
        }
        None
    }

    /// True while the latest cycle is a minor one (from its Pause Mark Start to the next
    /// Pause Mark Start).
    #[inline]
    pub(crate) fn is_minor(&self) -> bool {
        self.minor.load(Ordering::Acquire)
    }

    /// A copy of the mark-color rule's state.
    pub(crate) fn mark_colors(&self) -> MarkColorRule {
        self.rule.lock().clone()
    }

    #[inline]
    pub(crate) fn bad_mask(&self) -> u64 {
        self.layout.bad_mask(self.good())
    }

    #[inline]
    pub(crate) fn phase(&self) -> BarrierPhase {
        match self.phase.load(Ordering::Acquire) {
            0 => BarrierPhase::Mark,
            1 => BarrierPhase::MarkComplete,
            _ => BarrierPhase::Relocate,
        }
    }

    /// The current sequence number: pages born with it were allocated since the last Pause
    /// Mark Start.
    #[inline]
    pub(crate) fn seqnum(&self) -> u64 {
        self.seqnum.load(Ordering::Acquire)
    }

    /// Pause Mark Start of a cycle of `kind`: new sequence number, good color = the cycle's
    /// mark color, which the rule chooses: neither the previous cycle's nor the last major's
    /// (the same with majors only). The stale colors are the ones the two forwarding indexes
    /// remap: the major's ([`Self::forwarded`]) and, if installed, the latest evacuating
    /// minor's ([`Self::minor_forwarded`]).
    pub(crate) fn flip_to_mark(&self, kind: CycleKind) -> GoodColor {
        let mut rule = self.rule.lock();
        let mark = rule.start(kind);
        drop(rule);
        let stale = self.forwarded();
        let stale_minor = self.minor_forwarded();
        self.minor
            .store(kind == CycleKind::Minor, Ordering::Release);
        self.seqnum.fetch_add(1, Ordering::AcqRel);
        self.stale.store(enc_good(stale), Ordering::Release);
        self.stale_minor
            .store(enc_good(stale_minor), Ordering::Release);
        self.mark.store(enc_good(mark), Ordering::Release);
        self.good.store(enc_good(mark), Ordering::Release);
        self.phase
            .store(BarrierPhase::Mark as u8, Ordering::Release);
        mark
    }

    /// Pause Mark End (successful).
    pub(crate) fn set_mark_complete(&self) {
        self.phase
            .store(BarrierPhase::MarkComplete as u8, Ordering::Release);
    }

    /// Pause Relocate Start: good color = Remapped.
    pub(crate) fn flip_to_remapped(&self) {
        self.good
            .store(enc_good(GoodColor::Remapped), Ordering::Release);
        self.phase
            .store(BarrierPhase::Relocate as u8, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cycle as the driver runs it, as far as the colors go (`HeapInner::mark_start`,
    /// `reset_relocation_set` / `reset_minor_relocation_set`, `select_relocation_set` /
    /// `select_minor`, `relocate_start`): a major drops both tables and installs its own, a
    /// minor drops the previous minor's and installs its own (empty if it evacuates
    /// nothing), the major's staying. Returns its mark color.
    fn cycle(st: &GcState, kind: CycleKind) -> GoodColor {
        let mark = st.flip_to_mark(kind);
        st.minor_relocation_set_reset();
        match kind {
            CycleKind::Major => st.relocation_set_installed(),
            CycleKind::Minor => st.minor_relocation_set_installed(),
        }
        st.set_mark_complete();
        st.flip_to_remapped();
        mark
    }

    #[test]
    fn after_a_minor_the_stale_colors_name_both_forwarding_tables() {
        let st = GcState::new(AddressLayout::new(42), ColorChoice::Rotate);
        assert_eq!((st.stale(), st.stale_minor()), (GoodColor::Remapped, None));
        let major = cycle(&st, CycleKind::Major);
        let minor = cycle(&st, CycleKind::Minor);
        // The next cycle's marking: a slot may still carry the major's color, which the
        // major's table remaps, or the minor's, which the minor's table remaps; the records
        // name both.
        let next = st.flip_to_mark(CycleKind::Minor);
        assert_eq!(st.stale(), major, "the major's table's color");
        assert_eq!(st.stale_minor(), Some(minor), "the minor's table's color");
        assert!(next != major && next != minor && major != minor);
        assert_eq!(st.table_for(major.color()), Some(Table::Major));
        assert_eq!(st.table_for(minor.color()), Some(Table::Minor));
        assert_eq!(
            st.table_for(next.color()),
            None,
            "the good color needs no table"
        );
        // That minor drops the previous minor's table and installs its own: the cycle after
        // it names its color beside the major's.
        st.minor_relocation_set_reset();
        st.minor_relocation_set_installed();
        st.set_mark_complete();
        st.flip_to_remapped();
        st.flip_to_mark(CycleKind::Minor);
        assert_eq!((st.stale(), st.stale_minor()), (major, Some(next)));
        assert_eq!(
            st.table_for(minor.color()),
            None,
            "the first minor's table is gone"
        );
    }

    #[test]
    fn a_major_leaves_no_minor_stale_color() {
        let st = GcState::new(AddressLayout::new(42), ColorChoice::Rotate);
        cycle(&st, CycleKind::Major);
        cycle(&st, CycleKind::Minor);
        let major = cycle(&st, CycleKind::Major);
        st.flip_to_mark(CycleKind::Minor);
        assert_eq!((st.stale(), st.stale_minor()), (major, None));
        // With majors only, the stale color is the previous cycle's and there is no other.
        let st = GcState::new(AddressLayout::new(42), ColorChoice::Alternate);
        let first = cycle(&st, CycleKind::Major);
        st.flip_to_mark(CycleKind::Major);
        assert_eq!((st.stale(), st.stale_minor()), (first, None));
    }
}
