//! The one place a heap's events go (in ZGC, `ZStatPhase` and the `ZStat*` samplers write
//! both the log and the statistics): [`GcEvents`] owns the time base of a heap (its creation,
//! from which every `*_at_ns` and every log timestamp counts), the records an embedder reads
//! ([`GcStats`]) and the `-Xlog:gc`-style log (`gc_log`). Each event — a pause, a phase, a
//! cycle, an allocation stall, a direct-memory stall, a pacing delay, a slow page allocation,
//! memory given back — is one call that writes its log line and stores its record, so the two
//! cannot drift apart.
//!
//! The heap keeps a bounded ring of the [`RECENT_EVENTS`] newest records of each kind and the
//! counts and latency histograms of every event since creation, so its statistics stay the
//! same size however long it runs. Every
//! event also goes to each live [`EventSubscription`]: a harness that wants them all (for
//! percentiles and MMU) subscribes, and the memory they take is the subscriber's, freed when
//! it drops the subscription.

use super::gc_log::GcLog;
use super::gc_phase::GcPhase;
use super::stats::{
    CycleRecord, EventTotals, GcStats, PacingRecord, PageAllocationRecord, PauseRecord,
    PhaseRecord, SafepointTimeoutRecord, StallRecord, PAGE_ALLOCATION_RECORD_MIN, RECENT_EVENTS,
};
use crate::config::LogLevel;
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

/// A heap's records and log, and their time base.
pub(crate) struct GcEvents {
    /// The time base of the records and the log: the heap's creation.
    start: Instant,
    recorded: Mutex<Recorded>,
    log: GcLog,
}

/// The heap's own records: the newest `capacity` of each kind, counts and totals, and the
/// subscribers every event is also handed to.
struct Recorded {
    capacity: usize,
    pauses: VecDeque<PauseRecord>,
    cycles: VecDeque<CycleRecord>,
    stalls: VecDeque<StallRecord>,
    pacing: VecDeque<PacingRecord>,
    page_allocations: VecDeque<PageAllocationRecord>,
    safepoint_timeouts: VecDeque<SafepointTimeoutRecord>,
    totals: EventTotals,
    gc_cpu_ns: u64,
    uncommitted_bytes: u64,
    /// The live bytes the last completed cycle found.
    last_live_bytes: Option<u64>,
    /// The safepoint handshake's barrier (see [`GcStats::safepoint_barrier`]).
    safepoint_barrier: &'static str,
    subscribers: Vec<Weak<Mutex<GcStats>>>,
}

/// Append `item`, dropping the oldest record once `q` holds `capacity`.
fn keep<T>(q: &mut VecDeque<T>, capacity: usize, item: T) {
    if q.len() >= capacity {
        q.pop_front();
    }
    if capacity > 0 {
        q.push_back(item);
    }
}

impl Recorded {
    /// Hand an event to every live subscriber (`add` stores it in a subscriber's records),
    /// forgetting those dropped.
    fn publish(&mut self, add: impl Fn(&mut GcStats)) {
        self.subscribers.retain(|w| match w.upgrade() {
            Some(s) => {
                add(&mut s.lock());
                true
            }
            None => false,
        });
    }

    fn snapshot(&self) -> GcStats {
        GcStats {
            pauses: self.pauses.iter().cloned().collect(),
            cycles: self.cycles.iter().cloned().collect(),
            stalls: self.stalls.iter().cloned().collect(),
            pacing: self.pacing.iter().cloned().collect(),
            page_allocations: self.page_allocations.iter().cloned().collect(),
            safepoint_timeouts: self.safepoint_timeouts.iter().cloned().collect(),
            gc_cpu_ns: self.gc_cpu_ns,
            uncommitted_bytes: self.uncommitted_bytes,
            totals: self.totals.clone(),
            safepoint_barrier: self.safepoint_barrier.to_string(),
            ..GcStats::default()
        }
    }
}

/// Every event of a heap from its creation (`Heap::subscribe`): the records the heap keeps only
/// the newest of, kept here in full for as long as the subscription lives. The growth is the
/// subscriber's: dropping the subscription frees them and stops the recording.
pub struct EventSubscription {
    records: Arc<Mutex<GcStats>>,
    missed: u64,
}

impl EventSubscription {
    /// A copy of every event recorded so far, in the layout of [`GcStats`] (`allocated_bytes`
    /// and `direct` are not events and stay 0: read them from `Heap::stats`).
    pub fn records(&self) -> GcStats {
        self.records.lock().clone()
    }

    /// How many of the cycles recorded so far (a cycle is recorded when it ends) began at
    /// `at_ns` or later on the heap's clock (`Heap::uptime_ns`): what counting
    /// [`Self::records`]' cycles would say, without copying every record. A long run's
    /// records take milliseconds to copy, under the lock each new event's publication waits
    /// for, so a harness that asks while the program runs should ask this.
    pub fn cycles_since(&self, at_ns: u64) -> u64 {
        let records = self.records.lock();
        records
            .cycles
            .iter()
            .filter(|c| c.start_at_ns >= at_ns)
            .count() as u64
    }

    /// Events that had already left the heap's ring of recent records when the subscription
    /// began (0 when it began before any kind passed [`RECENT_EVENTS`], e.g. right after
    /// `Heap::new`): the records lack them, the counts include them.
    pub fn missed(&self) -> u64 {
        self.missed
    }
}

/// When an event began, on the heap's clock and on the monotonic one (its duration is measured
/// from the latter).
#[derive(Clone, Copy, Debug)]
pub(crate) struct EventStart {
    at: Instant,
    at_ns: u64,
}

impl EventStart {
    /// When the event began.
    #[inline]
    pub(crate) fn at(&self) -> Instant {
        self.at
    }

    /// Since the event began.
    #[inline]
    pub(crate) fn elapsed(&self) -> Duration {
        self.at.elapsed()
    }
}

fn ns(d: Duration) -> u64 {
    d.as_nanos() as u64
}

impl GcEvents {
    /// Records starting now, and a log at `level`.
    pub(crate) fn new(level: LogLevel) -> Self {
        Self::with_capacity(level, RECENT_EVENTS)
    }

    /// Records keeping the `capacity` newest of each kind.
    pub(crate) fn with_capacity(level: LogLevel, capacity: usize) -> Self {
        GcEvents {
            start: Instant::now(),
            recorded: Mutex::new(Recorded {
                capacity,
                pauses: VecDeque::new(),
                cycles: VecDeque::new(),
                stalls: VecDeque::new(),
                pacing: VecDeque::new(),
                page_allocations: VecDeque::new(),
                safepoint_timeouts: VecDeque::new(),
                totals: EventTotals::default(),
                gc_cpu_ns: 0,
                uncommitted_bytes: 0,
                last_live_bytes: None,
                safepoint_barrier: "",
                subscribers: Vec::new(),
            }),
            log: GcLog::new(level),
        }
    }

    /// A subscription that receives every later event, starting with the records kept so
    /// far (all events, unless some kind already passed the ring's capacity).
    pub(crate) fn subscribe(&self) -> EventSubscription {
        let mut r = self.recorded.lock();
        let records = r.snapshot();
        let kept = (records.pauses.len()
            + records.cycles.len()
            + records.stalls.len()
            + records.pacing.len()
            + records.page_allocations.len()) as u64;
        let missed = r.totals.events() - kept;
        let records = Arc::new(Mutex::new(records));
        r.subscribers.push(Arc::downgrade(&records));
        EventSubscription { records, missed }
    }

    /// Nanoseconds since the heap was created.
    #[inline]
    pub(crate) fn now_ns(&self) -> u64 {
        ns(self.start.elapsed())
    }

    /// An event beginning now.
    #[inline]
    pub(crate) fn begin(&self) -> EventStart {
        let at = Instant::now();
        EventStart {
            at,
            at_ns: ns(at.saturating_duration_since(self.start)),
        }
    }

    /// A copy of the recent records, counts and totals (bounded: see [`RECENT_EVENTS`]).
    pub(crate) fn stats(&self) -> GcStats {
        self.recorded.lock().snapshot()
    }

    /// The live bytes the last completed cycle found.
    pub(crate) fn last_cycle_live_bytes(&self) -> Option<u64> {
        self.recorded.lock().last_live_bytes
    }

    /// A stop-the-world pause of cycle `cycle` ended: logged, recorded, and listed among the
    /// cycle's phases.
    pub(crate) fn pause(&self, cycle: &mut CycleRecord, pause: PauseRecord) {
        let total = Duration::from_nanos(pause.total_ns);
        self.log
            .phase(self.start, cycle.cycle, pause.kind.name(), total);
        cycle.phases.push(PhaseRecord {
            name: pause.kind.into(),
            start_at_ns: pause.start_at_ns,
            duration_ns: pause.total_ns,
        });
        let mut r = self.recorded.lock();
        r.totals.add_pause(&pause);
        r.publish(|s| {
            s.totals.add_pause(&pause);
            s.pauses.push(pause.clone());
        });
        let cap = r.capacity;
        keep(&mut r.pauses, cap, pause);
    }

    /// A phase that began at `began` ended: logged and listed among the cycle's phases.
    pub(crate) fn phase(&self, cycle: &mut CycleRecord, phase: GcPhase, began: EventStart) {
        let d = began.elapsed();
        self.log.phase(self.start, cycle.cycle, phase.name(), d);
        cycle.phases.push(PhaseRecord {
            name: phase.into(),
            start_at_ns: began.at_ns,
            duration_ns: ns(d),
        });
    }

    /// A cycle ended: its summary line, its record, its GC CPU time added to the total.
    pub(crate) fn cycle(&self, rec: &CycleRecord) {
        self.log.cycle(
            self.start,
            rec.cycle,
            rec.cause.name(),
            rec.heap_before,
            rec.heap_after,
            rec.heap_capacity,
        );
        let mut r = self.recorded.lock();
        r.gc_cpu_ns += rec.gc_cpu_ns;
        r.totals.cycles += 1;
        r.last_live_bytes = Some(rec.live_bytes);
        r.publish(|s| {
            s.gc_cpu_ns += rec.gc_cpu_ns;
            s.totals.cycles += 1;
            s.cycles.push(rec.clone());
        });
        let cap = r.capacity;
        keep(&mut r.cycles, cap, rec.clone());
    }

    /// A pause in progress passed the safepoint timeout: counted at once (a test or a
    /// watcher sees it while the pause still waits); the record follows when the pause ends.
    pub(crate) fn safepoint_timed_out(&self) {
        let mut r = self.recorded.lock();
        r.totals.safepoint_timeouts += 1;
        r.publish(|s| s.totals.safepoint_timeouts += 1);
    }

    /// The record of a pause that passed the safepoint timeout: logged and recorded.
    pub(crate) fn safepoint_timeout(&self, rec: SafepointTimeoutRecord) {
        self.log.safepoint_timeout(
            self.start,
            rec.cycle,
            rec.kind.name(),
            Duration::from_nanos(rec.time_to_safepoint_ns),
            &rec.describe_stragglers(),
        );
        let mut r = self.recorded.lock();
        r.publish(|s| s.safepoint_timeouts.push(rec.clone()));
        let cap = r.capacity;
        keep(&mut r.safepoint_timeouts, cap, rec);
    }

    /// A line about cycle `cycle` at level `phases` (what a phase found), not recorded.
    pub(crate) fn info(&self, cycle: u64, msg: &str) {
        self.log.info(self.start, cycle, msg);
    }

    /// `thread` waited from `began` for a GC cycle to free heap memory (failed: it ended in an
    /// out-of-memory error).
    pub(crate) fn allocation_stall(&self, thread: &str, began: EventStart, failed: bool) {
        let d = began.elapsed();
        self.log.stall(self.start, thread, d);
        self.push_stall(thread, began, d, failed);
    }

    /// `thread` waited from `began` for "Direct Memory" cycles to free native memory under the
    /// direct-memory limit: recorded as an allocation stall, logged as what it waited for.
    pub(crate) fn direct_memory_stall(&self, thread: &str, began: EventStart, failed: bool) {
        let d = began.elapsed();
        self.log.direct_memory_stall(self.start, thread, d);
        self.push_stall(thread, began, d, failed);
    }

    fn push_stall(&self, thread: &str, began: EventStart, d: Duration, failed: bool) {
        let stall = StallRecord {
            thread: thread.to_string(),
            start_at_ns: began.at_ns,
            duration_ns: ns(d),
            failed,
        };
        let mut r = self.recorded.lock();
        r.totals.add_stall(&stall);
        r.publish(|s| {
            s.totals.add_stall(&stall);
            s.stalls.push(stall.clone());
        });
        let cap = r.capacity;
        keep(&mut r.stalls, cap, stall);
    }

    /// The pacer delayed `thread` by `imposed`, `beyond_floor` of it past what its floor
    /// allows at the full share (the floor yielded); it was held from `began` until now.
    pub(crate) fn pacing(
        &self,
        thread: &str,
        began: EventStart,
        imposed: Duration,
        beyond_floor: Duration,
    ) {
        let held = began.elapsed();
        self.log.pacing(self.start, thread, held, beyond_floor);
        let delay = PacingRecord {
            thread: thread.to_string(),
            start_at_ns: began.at_ns,
            duration_ns: ns(held),
            imposed_ns: ns(imposed),
            beyond_floor_ns: ns(beyond_floor),
        };
        let mut r = self.recorded.lock();
        r.totals.add_pacing(&delay);
        r.publish(|s| {
            s.totals.add_pacing(&delay);
            s.pacing.push(delay.clone());
        });
        let cap = r.capacity;
        keep(&mut r.pacing, cap, delay);
    }

    /// `thread` got a new page it asked for at `began`: if that took
    /// [`PAGE_ALLOCATION_RECORD_MIN`] or longer (memory committed and mapped, not a page from
    /// the cache), a mutator wait, logged and recorded.
    pub(crate) fn page_allocation(&self, thread: &str, began: EventStart) {
        let took = began.elapsed();
        if took < PAGE_ALLOCATION_RECORD_MIN {
            return;
        }
        self.log.page_allocation(self.start, thread, took);
        let alloc = PageAllocationRecord {
            thread: thread.to_string(),
            start_at_ns: began.at_ns,
            duration_ns: ns(took),
        };
        let mut r = self.recorded.lock();
        r.totals.page_allocations.record(alloc.duration_ns);
        r.publish(|s| {
            s.totals.page_allocations.record(alloc.duration_ns);
            s.page_allocations.push(alloc.clone());
        });
        let cap = r.capacity;
        keep(&mut r.page_allocations, cap, alloc);
    }

    /// The heap was created with the safepoint barrier `name` (`membarrier` or `fences`):
    /// logged once, and kept in the statistics.
    pub(crate) fn safepoint_barrier(&self, name: &'static str) {
        let mut r = self.recorded.lock();
        r.safepoint_barrier = name;
        r.publish(|s| s.safepoint_barrier = name.to_string());
        drop(r);
        self.log
            .init(self.start, format_args!("Safepoint barrier: {name}"));
    }

    /// Between cycles, `bytes` of committed memory were given back to the operating system.
    pub(crate) fn uncommitted(&self, bytes: u64, committed_before: u64, committed_after: u64) {
        let mut r = self.recorded.lock();
        r.uncommitted_bytes += bytes;
        r.publish(|s| s.uncommitted_bytes += bytes);
        drop(r);
        self.log.heap(
            self.start,
            format_args!(
                "Uncommitted {}M (committed {}M->{}M)",
                bytes >> 20,
                committed_before >> 20,
                committed_after >> 20
            ),
        );
    }

    /// Giving memory back failed: logged, the memory stays committed.
    pub(crate) fn uncommit_failed(&self, error: &dyn std::fmt::Display) {
        self.log.heap(
            self.start,
            format_args!("Uncommit failed, memory kept: {error}"),
        );
    }

    /// The log lines written so far (the crate's unit tests).
    #[cfg(test)]
    pub(crate) fn logged(&self) -> Vec<String> {
        self.log.written.lock().clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::{GcCause, PauseKind};

    #[test]
    fn each_event_is_logged_and_recorded_on_one_clock() {
        let ev = GcEvents::new(LogLevel::Debug);
        ev.safepoint_barrier("membarrier");
        let mut cycle = CycleRecord {
            cycle: 7,
            cause: GcCause::Warmup,
            ..CycleRecord::default()
        };
        let b = ev.begin();
        ev.phase(&mut cycle, GcPhase::ConcurrentMark, b);
        ev.pause(
            &mut cycle,
            PauseRecord {
                kind: PauseKind::MarkEnd,
                cycle: 7,
                start_at_ns: ev.now_ns(),
                time_to_safepoint_ns: 1_000,
                at_safepoint_ns: 20_000,
                total_ns: 21_000,
                time_to_safepoint_cpu_wait_ns: None,
                work_items: 0,
                verify_ns: 0,
            },
        );
        ev.allocation_stall("main", ev.begin(), false);
        ev.direct_memory_stall("main", ev.begin(), true);
        ev.pacing(
            "main",
            ev.begin(),
            Duration::from_micros(500),
            Duration::from_micros(200),
        );
        ev.cycle(&cycle);
        let s = ev.stats();
        assert_eq!(s.pauses.len(), 1);
        assert_eq!(s.stalls.len(), 2);
        assert!(s.stalls[1].failed);
        assert_eq!(s.pacing[0].imposed_ns, 500_000);
        assert_eq!(s.pacing[0].beyond_floor_ns, 200_000);
        assert_eq!(s.cycles[0].phases[0].name, GcPhase::ConcurrentMark);
        assert_eq!(s.cycles[0].phases[1].name, PauseKind::MarkEnd);
        assert!(s.cycles[0].phases[0].start_at_ns >= b.at_ns);
        let log = ev.logged();
        let has = |needle: &str| log.iter().any(|l| l.contains(needle));
        assert!(has("[gc,phases] GC(7) Concurrent Mark "), "{log:?}");
        assert!(
            has("[info][gc,init] Safepoint barrier: membarrier"),
            "{log:?}"
        );
        assert_eq!(s.safepoint_barrier, "membarrier");
        assert!(has("[gc,phases] GC(7) Pause Mark End 0.021ms"), "{log:?}");
        assert!(has("[info][gc] Allocation Stall (main) "), "{log:?}");
        assert!(has("[info][gc] Direct Memory Stall (main) "), "{log:?}");
        assert!(has("[debug][gc,pacing] Pacing (main) "), "{log:?}");
        assert!(
            has("[info][gc] GC(7) Garbage Collection (Warmup) "),
            "{log:?}"
        );
        // A fast page allocation is neither logged nor recorded.
        ev.page_allocation("main", ev.begin());
        assert!(ev.stats().page_allocations.is_empty());
        assert!(!ev.logged().iter().any(|l| l.contains("Page Allocation")));
    }
}

#[cfg(test)]
mod bounded {
    use super::*;
    use crate::observe::{GcCause, PauseKind};

    fn one_cycle(ev: &GcEvents, n: u64) {
        let mut cycle = CycleRecord {
            cycle: n,
            cause: GcCause::Warmup,
            live_bytes: n,
            ..CycleRecord::default()
        };
        ev.phase(&mut cycle, GcPhase::ConcurrentMark, ev.begin());
        ev.pause(
            &mut cycle,
            PauseRecord {
                kind: PauseKind::MarkEnd,
                cycle: n,
                start_at_ns: ev.now_ns(),
                time_to_safepoint_ns: 1,
                at_safepoint_ns: 1,
                total_ns: 2,
                time_to_safepoint_cpu_wait_ns: None,
                work_items: 0,
                verify_ns: 0,
            },
        );
        ev.pacing("main", ev.begin(), Duration::from_micros(1), Duration::ZERO);
        ev.allocation_stall("main", ev.begin(), n.is_multiple_of(2));
        ev.cycle(&cycle);
    }

    /// Issue 26, item 6: the heap kept every record for its whole life (50k idle cycles held
    /// 60 MB). Now it keeps the newest `capacity` of each kind and counts the rest.
    #[test]
    fn the_heap_keeps_a_bounded_ring_and_counts_every_event() {
        let ev = GcEvents::with_capacity(LogLevel::Off, 8);
        for n in 0..1000 {
            one_cycle(&ev, n);
        }
        let s = ev.stats();
        assert_eq!(
            (
                s.cycles.len(),
                s.pauses.len(),
                s.stalls.len(),
                s.pacing.len()
            ),
            (8, 8, 8, 8)
        );
        assert_eq!(s.cycles.first().unwrap().cycle, 992, "the newest are kept");
        assert_eq!(s.cycles.last().unwrap().cycle, 999);
        assert_eq!(s.cycles.last().unwrap().phases.len(), 2);
        let t = &s.totals;
        assert_eq!(
            (t.cycles, t.pauses.len(), t.stalls.len(), t.pacing.len()),
            (1000, 1000, 1000, 1000)
        );
        assert_eq!(t.failed_stalls, 500);
        assert_eq!(t.pauses_by_kind[&PauseKind::MarkEnd].len(), 1000);
        assert_eq!(t.pauses.summary().max_ns, 2);
        assert_eq!(t.time_to_safepoint.summary().max_ns, 1);
        assert_eq!(t.events(), 4000);
        assert_eq!(ev.last_cycle_live_bytes(), Some(999));
    }

    #[test]
    fn a_subscriber_receives_every_event_and_a_dropped_one_nothing() {
        let ev = GcEvents::with_capacity(LogLevel::Off, 8);
        for n in 0..5 {
            one_cycle(&ev, n);
        }
        // Subscribed before the ring overflowed: the kept records, then every later event.
        let sub = ev.subscribe();
        assert_eq!(sub.missed(), 0);
        for n in 5..100 {
            one_cycle(&ev, n);
        }
        let all = sub.records();
        assert_eq!(all.totals, ev.stats().totals);
        assert_eq!(all.cycles.len() as u64, all.totals.cycles);
        assert_eq!(all.pauses.len() as u64, all.totals.pauses.len());
        assert_eq!(all.stalls.len() as u64, all.totals.stalls.len());
        assert_eq!(all.pacing.len() as u64, all.totals.pacing.len());
        assert!(all.cycles.iter().map(|c| c.cycle).eq(0..100));
        // Subscribed after it overflowed: what was dropped is counted as missed.
        let late = ev.subscribe();
        assert_eq!(late.missed(), 4 * (100 - 8));
        drop(sub);
        one_cycle(&ev, 100);
        assert_eq!(late.records().cycles.len(), 9);
        assert_eq!(
            ev.recorded.lock().subscribers.len(),
            1,
            "the dropped one is forgotten"
        );
    }
}
