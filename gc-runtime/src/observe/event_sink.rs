//! The one place a heap's events go (in ZGC, `ZStatPhase` and the `ZStat*` samplers write
//! both the log and the statistics): [`GcEvents`] owns the time base of a heap (its creation,
//! from which every `*_at_ns` and every log timestamp counts), the records an embedder reads
//! ([`GcStats`]) and the `-Xlog:gc`-style log (`gc_log`). Each event — a pause, a phase, a
//! cycle, an allocation stall, a direct-memory stall, a pacing delay, a slow page allocation,
//! memory given back — is one call that writes its log line and stores its record, so the two
//! cannot drift apart.

use super::gc_log::GcLog;
use super::gc_phase::GcPhase;
use super::stats::{
    CycleRecord, GcStats, PacingRecord, PageAllocationRecord, PauseRecord, PhaseRecord,
    StallRecord, PAGE_ALLOCATION_RECORD_MIN,
};
use crate::config::LogLevel;
use parking_lot::Mutex;
use std::time::{Duration, Instant};

/// A heap's records and log, and their time base.
pub(crate) struct GcEvents {
    /// The time base of the records and the log: the heap's creation.
    start: Instant,
    stats: Mutex<GcStats>,
    log: GcLog,
}

/// When an event began, on the heap's clock and on the monotonic one (its duration is measured
/// from the latter).
#[derive(Clone, Copy, Debug)]
pub(crate) struct EventStart {
    at: Instant,
    at_ns: u64,
}

impl EventStart {
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
        GcEvents {
            start: Instant::now(),
            stats: Mutex::new(GcStats::default()),
            log: GcLog::new(level),
        }
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

    /// A copy of everything recorded.
    pub(crate) fn stats(&self) -> GcStats {
        self.stats.lock().clone()
    }

    /// The live bytes the last completed cycle found.
    pub(crate) fn last_cycle_live_bytes(&self) -> Option<u64> {
        self.stats.lock().cycles.last().map(|c| c.live_bytes)
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
        self.stats.lock().pauses.push(pause);
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
        let mut s = self.stats.lock();
        s.gc_cpu_ns += rec.gc_cpu_ns;
        s.cycles.push(rec.clone());
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
        self.stats.lock().stalls.push(StallRecord {
            thread: thread.to_string(),
            start_at_ns: began.at_ns,
            duration_ns: ns(d),
            failed,
        });
    }

    /// The pacer delayed `thread` by `imposed`; it was held from `began` until now.
    pub(crate) fn pacing(&self, thread: &str, began: EventStart, imposed: Duration) {
        let held = began.elapsed();
        self.log.pacing(self.start, thread, held);
        self.stats.lock().pacing.push(PacingRecord {
            thread: thread.to_string(),
            start_at_ns: began.at_ns,
            duration_ns: ns(held),
            imposed_ns: ns(imposed),
        });
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
        self.stats
            .lock()
            .page_allocations
            .push(PageAllocationRecord {
                thread: thread.to_string(),
                start_at_ns: began.at_ns,
                duration_ns: ns(took),
            });
    }

    /// Between cycles, `bytes` of committed memory were given back to the operating system.
    pub(crate) fn uncommitted(&self, bytes: u64, committed_before: u64, committed_after: u64) {
        self.stats.lock().uncommitted_bytes += bytes;
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
                work_items: 0,
            },
        );
        ev.allocation_stall("main", ev.begin(), false);
        ev.direct_memory_stall("main", ev.begin(), true);
        ev.pacing("main", ev.begin(), Duration::from_micros(500));
        ev.cycle(&cycle);
        let s = ev.stats();
        assert_eq!(s.pauses.len(), 1);
        assert_eq!(s.stalls.len(), 2);
        assert!(s.stalls[1].failed);
        assert_eq!(s.pacing[0].imposed_ns, 500_000);
        assert_eq!(s.cycles[0].phases[0].name, GcPhase::ConcurrentMark);
        assert_eq!(s.cycles[0].phases[1].name, PauseKind::MarkEnd);
        assert!(s.cycles[0].phases[0].start_at_ns >= b.at_ns);
        let log = ev.logged();
        let has = |needle: &str| log.iter().any(|l| l.contains(needle));
        assert!(has("[gc,phases] GC(7) Concurrent Mark "), "{log:?}");
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
