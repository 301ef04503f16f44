//! How fast the collector worked in a run: the marking cost per object and the relocation
//! rate, from the cycle records (`CycleRecord::objects_marked`, `bytes_relocated` and the
//! durations of the cycle's marking and relocation phases). They answer "is the collector too
//! slow for this mutator?": a cycle must finish before the mutators fill what it can free,
//! and its length is mostly live objects × ns per object plus bytes relocated ÷ MB/s.
//!
//! Each figure is the median over the complete cycles of the measured phase, and it is
//! *wall* time per object, not CPU time: it includes what parallel GC workers shared and what
//! the machine's other threads took from them, the time a mutator waiting for the cycle
//! feels. The GC CPU per object (all GC threads' CPU time of the cycle over the objects it
//! marked) is given beside it.

use crate::run_result::RunResult;
use gc_runtime::GcPhase;
use serde::{Deserialize, Serialize};

/// The phases whose durations count as marking (both modes).
const MARK_PHASES: [GcPhase; 5] = [
    GcPhase::ConcurrentMarkRoots,
    GcPhase::ConcurrentMark,
    GcPhase::ConcurrentMarkContinue,
    GcPhase::MarkRoots,
    GcPhase::Mark,
];

/// The phases whose durations count as relocation (both modes).
const RELOCATE_PHASES: [GcPhase; 3] = [
    GcPhase::ConcurrentRelocate,
    GcPhase::RelocateRoots,
    GcPhase::Relocate,
];

/// The collector's speed in a run (medians over its complete cycles).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CollectorSpeed {
    /// Complete cycles measured.
    pub cycles: u64,
    /// Wall time of marking per object marked (`None`: no cycle marked anything).
    pub mark_ns_per_object: Option<f64>,
    /// GC CPU time of the cycle per object marked.
    pub gc_cpu_ns_per_object: Option<f64>,
    /// Bytes relocated per second of relocation, in MB/s (`None`: nothing relocated).
    pub relocate_mb_per_s: Option<f64>,
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

impl CollectorSpeed {
    /// The figures of `r`'s complete cycles.
    pub fn of(r: &RunResult) -> Self {
        let (mut mark, mut cpu, mut reloc) = (Vec::new(), Vec::new(), Vec::new());
        let mut cycles = 0;
        for c in r.complete_cycles() {
            cycles += 1;
            let sum = |phases: &[GcPhase]| -> u64 {
                c.phases
                    .iter()
                    .filter(|p| phases.iter().any(|&ph| p.name == ph))
                    .map(|p| p.duration_ns)
                    .sum()
            };
            if c.objects_marked > 0 {
                mark.push(sum(&MARK_PHASES) as f64 / c.objects_marked as f64);
                cpu.push(c.gc_cpu_ns as f64 / c.objects_marked as f64);
            }
            let reloc_ns = sum(&RELOCATE_PHASES);
            if c.bytes_relocated > 0 && reloc_ns > 0 {
                reloc.push(c.bytes_relocated as f64 / 1e6 / (reloc_ns as f64 / 1e9));
            }
        }
        CollectorSpeed {
            cycles,
            mark_ns_per_object: median(mark),
            gc_cpu_ns_per_object: median(cpu),
            relocate_mb_per_s: median(reloc),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::sample_result;
    use gc_runtime::stats::PhaseRecord;
    use gc_runtime::Mode;

    fn phase(name: GcPhase, ms: u64) -> PhaseRecord {
        PhaseRecord {
            name: name.into(),
            start_at_ns: 0,
            duration_ns: ms * 1_000_000,
        }
    }

    #[test]
    fn figures_come_from_the_marking_and_relocation_phases_of_complete_cycles() {
        let mut r = sample_result(Mode::Concurrent, 1 << 30, &[100_000; 9]);
        assert_eq!(r.complete_cycles().count(), 3);
        for (i, c) in r.gc.cycles.iter_mut().enumerate() {
            let k = i as u64 + 1;
            // Marking: 10 + 90·k ms over 1M objects; relocation: 100·k MB in 100 ms.
            c.phases.push(phase(GcPhase::ConcurrentMarkRoots, 10));
            c.phases.push(phase(GcPhase::ConcurrentMark, 90 * k));
            c.phases.push(phase(GcPhase::ConcurrentRelocate, 100));
            c.phases
                .push(phase(GcPhase::ConcurrentSelectRelocationSet, 500));
            c.objects_marked = 1_000_000;
            c.bytes_relocated = 100_000_000 * k;
            c.gc_cpu_ns = 200_000_000;
        }
        let s = CollectorSpeed::of(&r);
        assert_eq!(s.cycles, 3);
        // The middle cycle: 190 ms / 1M objects, 200 MB / 0.1 s.
        assert_eq!(s.mark_ns_per_object, Some(190.0));
        assert_eq!(s.gc_cpu_ns_per_object, Some(200.0));
        assert_eq!(s.relocate_mb_per_s, Some(2000.0));
        // No cycle, no figures.
        r.gc.cycles.clear();
        assert_eq!(CollectorSpeed::of(&r), CollectorSpeed::default());
    }

    #[test]
    fn medians_of_odd_and_even_counts() {
        assert_eq!(median(vec![]), None);
        assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), Some(2.5));
    }
}
