//! The hiccup meter (jHiccup's method): what an application thread sees of pauses,
//! time-to-safepoint, allocation stalls and scheduler noise, measured from the outside.
//!
//! The meter is an attached mutator thread that, over and over, sleeps 1 ms inside a blocking
//! region (so it never holds up a safepoint), re-enters (which waits while a pause is in
//! progress), allocates a small object (which waits during an allocation stall), and records by
//! how much the round overshot 1 ms. The overshoots go into an HDR histogram with
//! coordinated-omission correction at the 1 ms expected interval: a round that took 20 ms stands
//! for the ~20 rounds that an undisturbed meter would have run, most of which would have seen a
//! long wait too.
//!
//! Beside it runs the *control meter* (jHiccup's control process): the same 1 ms sleep on a
//! thread that never touches the heap — no barrier, no allocation, no safepoint. What it sees
//! is the machine's own noise (a kernel thread holding a core, the VM's host descheduling a
//! vCPU) plus the CPU time the process's other threads keep from a thread that wakes up (in
//! `stw` mode, the GC workers of a pause run on every core). A mutator wait as long as the
//! control meter's longest is within what any thread on the machine felt in that run; the
//! collector cannot be expected to hold the program's waits below it.
//!
//! This module holds what does not need a heap: [`HiccupRecorder`] (turns round times into
//! overshoots), [`corrected_histogram`] and [`HiccupSamples`] (what a run keeps), [`meter_loop`],
//! the meter's loop written against the small [`MeterMutator`] trait, and [`control_loop`]. The
//! runner (`runner::run_workload`) runs the meter on an attached mutator named `hiccup-meter`
//! (sleeping in a blocking region, allocating a small object per round) and the control meter
//! on a plain thread named `control-meter`, both for the measured phase.

use crate::latency::LatencyHistogram;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The meter's sleep and expected interval: 1 ms.
pub const HICCUP_INTERVAL_NS: u64 = 1_000_000;

/// The corrected histogram of raw overshoots (coordinated-omission correction at
/// `expected_interval_ns`).
pub fn corrected_histogram(overshoot_ns: &[u64], expected_interval_ns: u64) -> LatencyHistogram {
    let mut h = LatencyHistogram::new();
    for &v in overshoot_ns {
        h.record_correct(v, expected_interval_ns);
    }
    h
}

/// What a run keeps of its hiccup meter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HiccupSamples {
    /// The meter's sleep, which is also the correction's expected interval.
    pub expected_interval_ns: u64,
    /// Every round's overshoot over `expected_interval_ns`, in the order measured.
    pub overshoot_ns: Vec<u64>,
    /// `overshoot_ns` recorded with coordinated-omission correction.
    pub corrected: LatencyHistogram,
}

impl HiccupSamples {
    /// Samples from raw overshoots, building the corrected histogram.
    pub fn from_overshoots(overshoot_ns: Vec<u64>, expected_interval_ns: u64) -> Self {
        let corrected = corrected_histogram(&overshoot_ns, expected_interval_ns);
        HiccupSamples {
            expected_interval_ns,
            overshoot_ns,
            corrected,
        }
    }

    /// No samples (a run without a meter, e.g. in tests of other parts).
    pub fn empty() -> Self {
        Self::from_overshoots(Vec::new(), HICCUP_INTERVAL_NS)
    }
}

/// Turns measured round times into overshoots.
#[derive(Clone, Debug)]
pub struct HiccupRecorder {
    interval: Duration,
    overshoot_ns: Vec<u64>,
}

impl HiccupRecorder {
    /// A recorder for a meter that sleeps `interval` per round.
    pub fn new(interval: Duration) -> Self {
        HiccupRecorder {
            interval,
            overshoot_ns: Vec::new(),
        }
    }

    /// One round (sleep + re-enter + allocate) took `elapsed`: record what exceeded the interval.
    pub fn record_round(&mut self, elapsed: Duration) {
        let over = elapsed.saturating_sub(self.interval);
        self.overshoot_ns
            .push(u64::try_from(over.as_nanos()).unwrap_or(u64::MAX));
    }

    /// Rounds recorded so far.
    pub fn rounds(&self) -> usize {
        self.overshoot_ns.len()
    }

    /// The samples, with the corrected histogram.
    pub fn finish(self) -> HiccupSamples {
        let interval_ns = u64::try_from(self.interval.as_nanos()).unwrap_or(u64::MAX);
        HiccupSamples::from_overshoots(self.overshoot_ns, interval_ns)
    }
}

/// What the meter needs from an attached mutator.
pub trait MeterMutator {
    /// Sleep `d` inside a blocking region: the collector may pause the world meanwhile without
    /// waiting for this thread; leaving the region waits until the pause is over.
    fn sleep_blocking(&mut self, d: Duration);
    /// Allocate one small object and drop it (waits if allocation stalls).
    fn allocate_probe(&mut self);
}

/// The meter's loop: rounds of sleep-in-blocking-region, re-enter, allocate, until `stop` is set.
pub fn meter_loop<M: MeterMutator>(
    mutator: &mut M,
    stop: &AtomicBool,
    interval: Duration,
) -> HiccupSamples {
    let mut recorder = HiccupRecorder::new(interval);
    while !stop.load(Ordering::Relaxed) {
        let start = Instant::now();
        mutator.sleep_blocking(interval);
        mutator.allocate_probe();
        recorder.record_round(start.elapsed());
    }
    recorder.finish()
}

/// The control meter's loop: rounds of a plain 1 ms sleep, on a thread that is not a mutator,
/// until `stop` is set.
pub fn control_loop(stop: &AtomicBool, interval: Duration) -> HiccupSamples {
    let mut recorder = HiccupRecorder::new(interval);
    while !stop.load(Ordering::Relaxed) {
        let start = Instant::now();
        std::thread::sleep(interval);
        recorder.record_round(start.elapsed());
    }
    recorder.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn corrected_histogram_counts_the_hidden_rounds() {
        // 100 clean rounds (50 µs late), one 10 ms hiccup, one 0.9 ms one.
        let mut raw = vec![50_000; 100];
        raw.push(10 * MS);
        raw.push(900_000);
        let s = HiccupSamples::from_overshoots(raw.clone(), HICCUP_INTERVAL_NS);
        assert_eq!(s.overshoot_ns, raw);
        // 10 ms → 10, 9, ..., 1 ms: 10 values; everything else once.
        assert_eq!(s.corrected.len(), 100 + 10 + 1);
        let sum = s.corrected.summary();
        assert!(sum.max_ns.abs_diff(10 * MS) <= 10 * MS / 1000);
        // 11 of 111 values are ≥ 0.9 ms: p90 is still a clean round, p99 deep in the hiccup
        // (the 110th value: 9 ms). Uncorrected, p99 would be the 0.9 ms round.
        assert!(sum.p90_ns <= 51_000, "p90 {}", sum.p90_ns);
        assert!(
            sum.p99_ns.abs_diff(9 * MS) <= 9 * MS / 1000,
            "p99 {}",
            sum.p99_ns
        );
        let mut plain = LatencyHistogram::new();
        raw.iter().for_each(|&v| plain.record(v));
        let plain_p99 = plain.summary().p99_ns;
        assert!(plain_p99.abs_diff(900_000) <= 900, "{plain_p99}");
    }

    #[test]
    fn recorder_keeps_only_the_overshoot() {
        let mut r = HiccupRecorder::new(Duration::from_millis(1));
        r.record_round(Duration::from_micros(1_250));
        r.record_round(Duration::from_micros(900)); // early wake-up: no overshoot
        r.record_round(Duration::from_millis(4));
        assert_eq!(r.rounds(), 3);
        let s = r.finish();
        assert_eq!(s.expected_interval_ns, MS);
        assert_eq!(s.overshoot_ns, vec![250_000, 0, 3 * MS]);
        assert_eq!(s.corrected.len(), 3 + 2); // 3 ms adds 2 ms and 1 ms
    }

    /// A fake mutator whose every 5th round is held up by a 5 ms "pause".
    struct Fake<'a> {
        rounds: u32,
        stop_after: u32,
        stop: &'a AtomicBool,
    }

    impl MeterMutator for Fake<'_> {
        fn sleep_blocking(&mut self, d: Duration) {
            std::thread::sleep(d);
            if self.rounds % 5 == 4 {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        fn allocate_probe(&mut self) {
            self.rounds += 1;
            if self.rounds == self.stop_after {
                self.stop.store(true, Ordering::Relaxed);
            }
        }
    }

    #[test]
    fn meter_loop_sees_the_injected_pauses() {
        let stop = AtomicBool::new(false);
        let mut fake = Fake {
            rounds: 0,
            stop_after: 20,
            stop: &stop,
        };
        let s = meter_loop(&mut fake, &stop, Duration::from_millis(1));
        assert_eq!(s.overshoot_ns.len(), 20);
        let long = s.overshoot_ns.iter().filter(|&&v| v >= 5 * MS).count();
        assert!(
            long >= 4,
            "the 4 held-up rounds overshoot by ≥ 5 ms: {:?}",
            s.overshoot_ns
        );
        assert!(s.corrected.len() >= 20 + 4 * 4);
    }

    #[test]
    fn control_loop_sleeps_rounds_until_stopped() {
        let stopped = AtomicBool::new(true);
        assert!(control_loop(&stopped, Duration::from_millis(1))
            .overshoot_ns
            .is_empty());
        let stop = AtomicBool::new(false);
        let start = std::time::Instant::now();
        let (s, ran) = std::thread::scope(|sc| {
            let meter = sc.spawn(|| control_loop(&stop, Duration::from_millis(1)));
            std::thread::sleep(Duration::from_millis(30));
            stop.store(true, Ordering::Relaxed);
            let ran = start.elapsed();
            (meter.join().expect("the control meter"), ran)
        });
        // About 30 ms of 1 ms rounds (longer on a busy machine, whose sleeps overrun): some
        // rounds, and never more than the time the meter ran allows.
        let rounds = s.overshoot_ns.len();
        let most = ran.as_millis() as usize + 1;
        assert!((1..=most).contains(&rounds), "{rounds} rounds in {ran:?}");
        assert_eq!(s.expected_interval_ns, MS);
        assert!(s.corrected.len() >= rounds as u64);
    }
}
