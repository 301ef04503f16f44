//! A heap's statistics stay the same size however long it runs (issue 26, item 6). The heap
//! used to keep every pause, cycle, stall and pacing record of its life, and `Heap::stats`
//! cloned them all: 50 000 idle cycles held 60 MB. Now it keeps the most recent
//! [`RECENT_EVENTS`] records of each kind and every event as counts and histograms
//! (`GcStats::totals`); a harness that wants every event subscribes.
//!
//! The run below completes more cycles than the heap keeps records of, on a small heap, with
//! explicit collections (about a tenth of a millisecond each), so it reaches the ring's end.

use gc_runtime::{Heap, HeapConfig, Mode, RECENT_EVENTS};

const MIB: u64 = 1 << 20;
/// Cycles each heap completes: more than the heap keeps records of.
const CYCLES: usize = RECENT_EVENTS + 500;

/// A heap of `mode` after `CYCLES` explicit collections with a little garbage between them,
/// and a subscription taken right after it was created.
fn run(mode: Mode) -> (Heap, gc_runtime::EventSubscription) {
    let heap = Heap::new(HeapConfig::new(16 * MIB).mode(mode)).unwrap();
    let events = heap.subscribe();
    let mut m = heap.attach("main").unwrap();
    for _ in 0..CYCLES {
        m.scope(|s| {
            for _ in 0..8 {
                s.alloc(1, 0, 64).unwrap();
            }
            s.collect("bounded-stats");
        });
    }
    drop(m);
    (heap, events)
}

#[test]
fn the_heap_keeps_recent_records_and_counts_every_cycle() {
    const { assert!(CYCLES > RECENT_EVENTS) };
    for mode in [Mode::Concurrent, Mode::Stw] {
        let (heap, events) = run(mode);
        let st = heap.stats();
        assert_eq!(st.cycles.len(), RECENT_EVENTS, "{mode}: the ring is full");
        assert_eq!(st.pauses.len(), RECENT_EVENTS, "{mode}");
        let t = &st.totals;
        assert!(
            t.cycles >= CYCLES as u64,
            "{mode}: {} cycles counted",
            t.cycles
        );
        let pauses_per_cycle = if mode == Mode::Stw { 1 } else { 3 };
        assert!(t.pauses.len() >= pauses_per_cycle * CYCLES as u64, "{mode}");
        // The ring holds the newest: its last record is the last cycle counted.
        assert_eq!(st.cycles.last().unwrap().cycle + 1, t.cycles, "{mode}");
        let kinds: u64 = t.pauses_by_kind.values().map(|h| h.len()).sum();
        assert_eq!(kinds, t.pauses.len(), "{mode}: every pause has its kind");
        assert!(t.pauses.summary().max_ns > 0, "{mode}");
        // The subscription began with the heap: it holds every event, none missed.
        let all = events.records();
        assert_eq!(events.missed(), 0, "{mode}");
        assert_eq!(all.cycles.len() as u64, t.cycles, "{mode}");
        assert_eq!(all.pauses.len() as u64, t.pauses.len(), "{mode}");
        assert!(
            all.cycles
                .iter()
                .zip(all.cycles.iter().skip(1))
                .all(|(a, b)| a.cycle + 1 == b.cycle),
            "{mode}: every cycle, in order"
        );
        assert_eq!(all.totals, t.clone(), "{mode}: the same totals");
        // Counted without a copy, from any point of the heap's clock.
        let mid = all.cycles[CYCLES / 2].start_at_ns;
        let from_mid = all.cycles.iter().filter(|c| c.start_at_ns >= mid).count() as u64;
        assert_eq!(events.cycles_since(0), t.cycles, "{mode}");
        assert_eq!(events.cycles_since(mid), from_mid, "{mode}");
        assert!(from_mid < t.cycles && from_mid > 0, "{mode}: {from_mid}");
        assert_eq!(events.cycles_since(u64::MAX), 0, "{mode}");
    }
}

#[test]
fn a_late_subscription_says_how_many_events_it_missed() {
    let (heap, _) = run(Mode::Stw);
    let late = heap.subscribe();
    let t = heap.stats().totals;
    // Each cycle of `stw` is one cycle record and one pause: all but the ring's are gone.
    assert_eq!(late.missed(), 2 * (t.cycles - RECENT_EVENTS as u64));
    assert_eq!(late.records().cycles.len(), RECENT_EVENTS);
    let mut m = heap.attach("main").unwrap();
    m.scope(|s| s.collect("after"));
    assert_eq!(late.records().cycles.len(), RECENT_EVENTS + 1);
    assert_eq!(heap.stats().cycles.len(), RECENT_EVENTS);
}
