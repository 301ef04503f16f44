//! Minimum mutator utilization (MMU): for a window size W, the worst fraction of any W-long
//! stretch of the run during which mutators could run, given the intervals in which they could
//! not: every mutator wait, i.e. stop-the-world pauses (time to safepoint included),
//! allocation stalls and pacing delays ([`crate::run_result::RunResult::unavailability_timeline`]).
//!
//! `MMU(W) = min over t in [0, T−W] of (1 − paused([t, t+W]) / W)` for a run of length T.
//! Overlapping intervals (a stall during a pause) count once. The paused time in a sliding
//! window is piecewise linear in t and changes slope only where t or t+W crosses an interval
//! boundary, so its maximum is attained at one of the windows that start at a boundary (s or e)
//! or end at one (s−W or e−W), or at the run's ends: those candidates give the exact minimum.
//! With prefix sums and binary search this is O(n log n) for n intervals.
//!
//! A window longer than the run is taken as the whole run: MMU(W ≥ T) = 1 − paused / T.

/// The standard windows of the report: 1, 10 and 100 ms.
pub const STANDARD_WINDOWS_NS: [u64; 3] = [1_000_000, 10_000_000, 100_000_000];

/// Sort, clip to [0, `total_ns`] and merge `(start_ns, duration_ns)` intervals into disjoint,
/// non-empty `(start_ns, end_ns)` intervals. Touching intervals are merged too.
pub fn merge_intervals(intervals: &[(u64, u64)], total_ns: u64) -> Vec<(u64, u64)> {
    let mut v: Vec<(u64, u64)> = intervals
        .iter()
        .map(|&(s, d)| (s.min(total_ns), s.saturating_add(d).min(total_ns)))
        .filter(|&(s, e)| e > s)
        .collect();
    v.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::with_capacity(v.len());
    for (s, e) in v {
        match merged.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => merged.push((s, e)),
        }
    }
    merged
}

/// Paused-time lookups over merged intervals.
struct Timeline {
    merged: Vec<(u64, u64)>,
    /// `prefix[i]`: total length of `merged[..i]`.
    prefix: Vec<u64>,
}

impl Timeline {
    fn new(merged: Vec<(u64, u64)>) -> Self {
        let mut prefix = Vec::with_capacity(merged.len() + 1);
        prefix.push(0);
        let mut sum = 0;
        for &(s, e) in &merged {
            sum += e - s;
            prefix.push(sum);
        }
        Timeline { merged, prefix }
    }

    /// Paused time in [0, x].
    fn paused_before(&self, x: u64) -> u64 {
        let k = self.merged.partition_point(|&(s, _)| s < x);
        let mut p = self.prefix[k];
        if k > 0 {
            let end = self.merged[k - 1].1;
            if end > x {
                p -= end - x;
            }
        }
        p
    }

    fn paused_in(&self, from: u64, to: u64) -> u64 {
        self.paused_before(to) - self.paused_before(from)
    }
}

/// MMU for one window size over a run of `total_ns`, from `(start_ns, duration_ns)` intervals
/// relative to the run's start (parts outside [0, `total_ns`] are ignored). Returns a fraction
/// in [0, 1]. An empty run (`total_ns == 0`) has utilization 1; a zero window has
/// utilization 0 if anything was paused, else 1.
pub fn mmu(intervals: &[(u64, u64)], total_ns: u64, window_ns: u64) -> f64 {
    if total_ns == 0 {
        return 1.0;
    }
    let timeline = Timeline::new(merge_intervals(intervals, total_ns));
    if window_ns == 0 {
        return if timeline.merged.is_empty() { 1.0 } else { 0.0 };
    }
    let w = window_ns.min(total_ns);
    let last_start = total_ns - w;
    let mut worst = timeline
        .paused_in(0, w)
        .max(timeline.paused_in(last_start, total_ns));
    for &(s, e) in &timeline.merged {
        for t in [s, e, s.saturating_sub(w), e.saturating_sub(w)] {
            let t = t.min(last_start);
            worst = worst.max(timeline.paused_in(t, t + w));
        }
    }
    1.0 - worst as f64 / w as f64
}

/// MMU at several window sizes: `(window_ns, utilization)` pairs in the order given.
pub fn mmu_curve(intervals: &[(u64, u64)], total_ns: u64, windows_ns: &[u64]) -> Vec<(u64, f64)> {
    windows_ns
        .iter()
        .map(|&w| (w, mmu(intervals, total_ns, w)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn no_pauses_is_full_utilization() {
        assert_eq!(mmu(&[], 100 * MS, 10 * MS), 1.0);
        assert_eq!(mmu(&[], 0, 10 * MS), 1.0);
    }

    #[test]
    fn single_pause_shorter_than_the_window() {
        // 2 ms pause in a 100 ms run: a 10 ms window can hold all of it.
        let p = [(50 * MS, 2 * MS)];
        assert!(close(mmu(&p, 100 * MS, 10 * MS), 0.8));
        assert!(close(mmu(&p, 100 * MS, 4 * MS), 0.5));
        assert!(close(mmu(&p, 100 * MS, 100 * MS), 0.98));
    }

    #[test]
    fn pause_longer_than_the_window_gives_zero() {
        let p = [(50 * MS, 5 * MS)];
        assert_eq!(mmu(&p, 100 * MS, MS), 0.0);
        assert_eq!(mmu(&p, 100 * MS, 5 * MS), 0.0);
        assert!(close(mmu(&p, 100 * MS, 10 * MS), 0.5));
    }

    #[test]
    fn overlapping_pauses_and_stalls_count_once() {
        // Pause [10, 14] ms and stall [12, 16] ms: 6 ms paused, not 8.
        let p = [(10 * MS, 4 * MS), (12 * MS, 4 * MS)];
        assert_eq!(merge_intervals(&p, 100 * MS), vec![(10 * MS, 16 * MS)]);
        assert!(close(mmu(&p, 100 * MS, 10 * MS), 0.4));
        // A stall wholly inside a pause adds nothing.
        let q = [(10 * MS, 4 * MS), (11 * MS, MS)];
        assert!(close(mmu(&q, 100 * MS, 10 * MS), 0.6));
    }

    #[test]
    fn two_pauses_in_one_window() {
        // [10, 12] and [15, 17] ms.
        let p = [(15 * MS, 2 * MS), (10 * MS, 2 * MS)];
        assert!(close(mmu(&p, 100 * MS, 10 * MS), 0.6));
        assert!(close(mmu(&p, 100 * MS, 7 * MS), 3.0 / 7.0));
        // A 5 ms window holds at most 2 ms of them.
        assert!(close(mmu(&p, 100 * MS, 5 * MS), 0.6));
        assert_eq!(mmu(&p, 100 * MS, 2 * MS), 0.0);
    }

    #[test]
    fn pauses_at_the_run_edges_are_clipped() {
        // 3 ms at the start, a pause running past the end of a 50 ms run by 8 ms.
        let p = [(0, 3 * MS), (48 * MS, 10 * MS)];
        assert_eq!(
            merge_intervals(&p, 50 * MS),
            vec![(0, 3 * MS), (48 * MS, 50 * MS)]
        );
        assert!(close(mmu(&p, 50 * MS, 10 * MS), 0.7));
        // Whole run: 5 ms of 50.
        assert!(close(mmu(&p, 50 * MS, 50 * MS), 0.9));
    }

    #[test]
    fn window_longer_than_the_run_is_the_whole_run() {
        let p = [(20 * MS, 5 * MS)];
        assert!(close(mmu(&p, 50 * MS, 100 * MS), 0.9));
        assert!(close(mmu(&p, 50 * MS, 50 * MS), 0.9));
    }

    #[test]
    fn zero_window() {
        assert_eq!(mmu(&[(1, 1)], 10, 0), 0.0);
        assert_eq!(mmu(&[], 10, 0), 1.0);
    }

    #[test]
    fn curve_is_in_window_order() {
        let p = [(50 * MS, 2 * MS)];
        let c = mmu_curve(&p, 1000 * MS, &STANDARD_WINDOWS_NS);
        assert_eq!(c.len(), 3);
        assert_eq!(c[0], (MS, 0.0));
        assert!(close(c[1].1, 0.8));
        assert!(close(c[2].1, 0.98));
    }

    /// Brute force over every window start on a 1 µs grid (all boundaries lie on it, so the
    /// brute-force minimum is exact) against the candidate method, on pseudo-random timelines.
    #[test]
    fn matches_brute_force() {
        const US: u64 = 1_000;
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for _ in 0..40 {
            let total = (200 + next(800)) * US;
            let count = next(12) as usize;
            let intervals: Vec<(u64, u64)> = (0..count)
                .map(|_| (next(total / US + 20) * US, (1 + next(60)) * US))
                .collect();
            let merged = merge_intervals(&intervals, total);
            for window in [US, 7 * US, 50 * US, 333 * US, total, total + 5 * US] {
                let w = window.min(total);
                let mut worst = 0u64;
                let mut t = 0;
                while t + w <= total {
                    let paused: u64 = merged
                        .iter()
                        .map(|&(s, e)| e.min(t + w).saturating_sub(s.max(t)))
                        .sum();
                    worst = worst.max(paused);
                    t += US;
                }
                let brute = 1.0 - worst as f64 / w as f64;
                let fast = mmu(&intervals, total, window);
                assert!(
                    close(brute, fast),
                    "intervals {intervals:?} total {total} window {window}: {brute} vs {fast}"
                );
            }
        }
    }
}
