//! The adaptive tenuring threshold (ZGC's `ZGenerationYoung::select_tenuring_threshold` and
//! `compute_tenuring_threshold`): the age at which a minor promotes a young page's survivors
//! (in place or by copy) instead of keeping them young, computed from the survival measured
//! minor after minor, unless `HeapConfig::tenuring_threshold` fixes it.
//!
//! Each minor's selection takes a census: the live bytes it found on young pages of each age
//! (eden 0, survivor `n`). Between two consecutive minors (no major between: a major makes
//! every page old), the bytes live at age `a` in the first that it kept young (`a` below its
//! threshold) are, in the second, what is live at age `a + 1`: their ratio is the survival
//! of age `a` over one minor, kept per age as the mean of the latest sample and the previous
//! mean. ZGC estimates the same decay from one census alone (the ratio of neighboring ages'
//! live bytes, averaged over ages, scaled by the young residency); following each cohort from
//! one minor to the next measures it exactly, per age, at the price of one census kept.
//!
//! The rule: the threshold is the youngest age from 1 on whose bytes mostly survive one more
//! minor (`HIGH_SURVIVAL`): keeping them young would mark (and copy) them again for little
//! freed. Eden always gets one minor (threshold at least 1, as ZGC's lower bound). While
//! every age kept young still mostly dies and bytes reached the threshold (so are being
//! promoted), the threshold rises by one age per minor, up to `MAX_SURVIVOR_AGE`, so the age
//! promoted until then is measured too.
//!
//! A sample goes stale: an age at or above the threshold is promoted, so its survival is
//! never measured again, and a threshold that fell to it would stay there for the rest of the
//! run, however the program changed. A sample older than `STALE_AFTER` cycles therefore
//! counts as unmeasured: the threshold then rises past that age for one minor (if bytes
//! reached it), the next minor measures it afresh, replacing the stale mean, and the
//! threshold falls back only if it still mostly survives. The price is one cohort kept young
//! one more minor every `STALE_AFTER` cycles.

use gc_core::MAX_SURVIVOR_AGE;
use parking_lot::Mutex;

/// Ages of young pages: eden (0) and the survivor ages.
pub(crate) const YOUNG_AGES: usize = MAX_SURVIVOR_AGE as usize + 1;

/// An age whose survival over one minor reaches this fraction is promoted.
const HIGH_SURVIVAL: f64 = 0.5;

/// Bytes live at an age below which a cohort gives no survival sample (a few objects say
/// little about an age).
const MIN_SAMPLE_BYTES: u64 = 64 << 10;

/// Cycles (by sequence number) after which an age's survival sample no longer counts.
const STALE_AFTER: u64 = 32;

/// The threshold the first minor uses, before any survival was measured.
const INITIAL_THRESHOLD: u8 = 1;

/// The latest minor's census and the threshold it used.
#[derive(Clone, Copy)]
struct Census {
    seqnum: u64,
    threshold: u8,
    live: [u64; YOUNG_AGES],
}

struct State {
    /// The threshold the next minor takes when it is adaptive.
    next: u8,
    latest: Option<Census>,
    /// Per age, the mean survival over one minor and the sequence number of the minor that
    /// gave its latest sample, once measured.
    survival: [Option<(f64, u64)>; YOUNG_AGES],
}

/// The adaptive tenuring threshold's measurements (see the module documentation).
pub(crate) struct Tenuring {
    state: Mutex<State>,
}

impl Default for Tenuring {
    fn default() -> Self {
        Tenuring {
            state: Mutex::new(State {
                next: INITIAL_THRESHOLD,
                latest: None,
                survival: [None; YOUNG_AGES],
            }),
        }
    }
}

impl Tenuring {
    /// The threshold a minor uses: `fixed` if the configuration fixes it, else the adaptive
    /// one.
    pub(crate) fn threshold(&self, fixed: Option<u8>) -> u8 {
        fixed.unwrap_or_else(|| self.state.lock().next)
    }

    /// A minor of sequence number `seqnum` used `threshold` and found `live` bytes per young
    /// age: take the survival samples it gives and compute the next adaptive threshold.
    pub(crate) fn record(&self, seqnum: u64, threshold: u8, live: &[u64; YOUNG_AGES]) {
        let mut st = self.state.lock();
        if let Some(prev) = st.latest.filter(|c| c.seqnum + 1 == seqnum) {
            // The ages the previous minor kept young moved up by one.
            for a in 0..usize::from(prev.threshold).min(YOUNG_AGES - 1) {
                if prev.live[a] < MIN_SAMPLE_BYTES {
                    continue;
                }
                let r = (live[a + 1] as f64 / prev.live[a] as f64).min(1.0);
                // A stale mean says nothing about the program now: the sample replaces it.
                let mean = match st.survival[a] {
                    Some((m, at)) if !stale(at, seqnum) => (m + r) / 2.0,
                    _ => r,
                };
                st.survival[a] = Some((mean, seqnum));
            }
        }
        st.latest = Some(Census {
            seqnum,
            threshold,
            live: *live,
        });
        st.next = next_threshold(&st.survival, live, st.next, seqnum);
    }

    /// The survival measured per age so far (for tests).
    #[cfg(test)]
    fn survival(&self, age: usize) -> Option<f64> {
        self.state.lock().survival[age].map(|(m, _)| m)
    }
}

/// Whether a sample taken by the cycle of sequence number `at` is stale at `now`.
fn stale(at: u64, now: u64) -> bool {
    now.saturating_sub(at) > STALE_AFTER
}

/// The rule of the module documentation, from the adaptive threshold `current`, after the
/// minor of sequence number `now`.
fn next_threshold(
    survival: &[Option<(f64, u64)>; YOUNG_AGES],
    live: &[u64; YOUNG_AGES],
    current: u8,
    now: u64,
) -> u8 {
    let current = current.max(1);
    let high = |a: u8| {
        survival[usize::from(a)].is_some_and(|(s, at)| s >= HIGH_SURVIVAL && !stale(at, now))
    };
    if let Some(a) = (1..current).find(|&a| high(a)) {
        return a;
    }
    if high(current) || current >= MAX_SURVIVOR_AGE || live[usize::from(current)] == 0 {
        return current;
    }
    current + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn census(bytes: &[u64]) -> [u64; YOUNG_AGES] {
        let mut live = [0; YOUNG_AGES];
        live[..bytes.len()].copy_from_slice(bytes);
        live
    }

    #[test]
    fn ages_that_still_die_are_kept_and_one_that_survives_is_promoted() {
        let t = Tenuring::default();
        assert_eq!(t.threshold(None), 1);
        assert_eq!(t.threshold(Some(3)), 3, "a fixed threshold wins");
        // Eden keeps 8M live, a tenth of which survives each further minor: bytes reach
        // age 1, so the threshold rises one age per minor while they still die.
        t.record(2, 1, &census(&[8 * MIB, 0]));
        assert_eq!(t.threshold(None), 1, "nothing at age 1 yet");
        t.record(3, 1, &census(&[8 * MIB, 4 * MIB]));
        assert_eq!(t.survival(0), Some(0.5));
        assert_eq!(
            t.threshold(None),
            2,
            "age 1 reached the threshold, unmeasured"
        );
        t.record(4, 2, &census(&[8 * MIB, 4 * MIB, 0]));
        // Age 1 was promoted by the minor of seqnum 3: no sample of it.
        assert_eq!(t.survival(1), None);
        assert_eq!(t.threshold(None), 2);
        t.record(5, 2, &census(&[8 * MIB, 4 * MIB, MIB]));
        assert_eq!(t.survival(1), Some(0.25));
        assert_eq!(t.threshold(None), 3, "age 1 still dies: keep age 2 too");
        // Age 2 survives entirely: promote at 2.
        t.record(6, 3, &census(&[8 * MIB, 4 * MIB, MIB, MIB]));
        t.record(7, 3, &census(&[8 * MIB, 4 * MIB, MIB, MIB]));
        assert_eq!(t.survival(2), Some(1.0));
        assert_eq!(t.threshold(None), 2);
    }

    /// A run whose threshold fell to 1 (age 1 survived entirely): minors 2 and 3 at
    /// threshold 2, and minor 4, the first at threshold 1, which still finds age 1's
    /// survivors at age 2 and takes the last sample of age 1. Returns the next sequence
    /// number.
    fn fell_to_one(t: &Tenuring) -> u64 {
        t.record(2, 2, &census(&[8 * MIB, 4 * MIB]));
        t.record(3, 2, &census(&[8 * MIB, 4 * MIB, 4 * MIB]));
        assert_eq!(t.survival(1), Some(1.0));
        assert_eq!(t.threshold(None), 1);
        t.record(4, 1, &census(&[8 * MIB, 4 * MIB, 4 * MIB]));
        assert_eq!(t.threshold(None), 1);
        5
    }

    #[test]
    fn a_threshold_that_fell_is_measured_again_once_its_sample_is_stale() {
        let t = Tenuring::default();
        let mut seq = fell_to_one(&t);
        // Age 1 is promoted from now on, so nothing measures it: the threshold stays at 1
        // while its sample (minor 4's) is fresh...
        while seq <= 4 + STALE_AFTER {
            t.record(seq, 1, &census(&[8 * MIB, 4 * MIB]));
            assert_eq!(t.threshold(None), 1, "minor {seq}");
            seq += 1;
        }
        // ...and once it is stale, age 1 is kept young for a minor to measure it again.
        t.record(seq, 1, &census(&[8 * MIB, 4 * MIB]));
        assert_eq!(t.threshold(None), 2, "the stale age is probed");
        t.record(seq + 1, 2, &census(&[8 * MIB, 4 * MIB]));
        assert_eq!(
            t.threshold(None),
            2,
            "nothing measured yet: the probe goes on"
        );
        // The program changed: age 1 now mostly dies. The fresh sample replaces the stale
        // mean (averaged with it, 0.55 would promote at 1 again); bytes reached age 2, so the
        // threshold goes on rising to measure that age too.
        t.record(seq + 2, 2, &census(&[8 * MIB, 4 * MIB, 400 << 10]));
        assert!((t.survival(1).unwrap() - 400.0 / 4096.0).abs() < 1e-12);
        assert_eq!(t.threshold(None), 3);
    }

    #[test]
    fn a_probe_falls_back_when_the_age_still_survives() {
        let t = Tenuring::default();
        fell_to_one(&t);
        // The cycles between minor 4 and the probe were majors: no sample, and none of them
        // records a census.
        let probe = 5 + STALE_AFTER;
        t.record(probe, 1, &census(&[8 * MIB, 4 * MIB]));
        assert_eq!(t.threshold(None), 2);
        t.record(probe + 1, 2, &census(&[8 * MIB, 4 * MIB]));
        t.record(probe + 2, 2, &census(&[8 * MIB, 4 * MIB, 3 * MIB]));
        assert_eq!(t.survival(1), Some(0.75));
        assert_eq!(
            t.threshold(None),
            1,
            "age 1 still survives: promoted at 1 again"
        );
    }

    #[test]
    fn a_major_between_two_minors_gives_no_sample() {
        let t = Tenuring::default();
        t.record(2, 1, &census(&[8 * MIB]));
        t.record(4, 1, &census(&[8 * MIB, 8 * MIB]));
        assert_eq!(t.survival(0), None, "seqnum 3 was a major");
        t.record(5, 1, &census(&[8 * MIB, 8 * MIB]));
        assert_eq!(t.survival(0), Some(1.0));
        assert_eq!(t.threshold(None), 2, "eden survives but is kept one minor");
    }
}
