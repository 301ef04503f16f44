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

use gc_core::MAX_SURVIVOR_AGE;
use parking_lot::Mutex;

/// Ages of young pages: eden (0) and the survivor ages.
pub(crate) const YOUNG_AGES: usize = MAX_SURVIVOR_AGE as usize + 1;

/// An age whose survival over one minor reaches this fraction is promoted.
const HIGH_SURVIVAL: f64 = 0.5;

/// Bytes live at an age below which a cohort gives no survival sample (a few objects say
/// little about an age).
const MIN_SAMPLE_BYTES: u64 = 64 << 10;

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
    /// Per age, the mean survival over one minor, once measured.
    survival: [Option<f64>; YOUNG_AGES],
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
                st.survival[a] = Some(st.survival[a].map_or(r, |m| (m + r) / 2.0));
            }
        }
        st.latest = Some(Census {
            seqnum,
            threshold,
            live: *live,
        });
        st.next = next_threshold(&st.survival, live, st.next);
    }

    /// The survival measured per age so far (for tests).
    #[cfg(test)]
    fn survival(&self, age: usize) -> Option<f64> {
        self.state.lock().survival[age]
    }
}

/// The rule of the module documentation, from the adaptive threshold `current`.
fn next_threshold(
    survival: &[Option<f64>; YOUNG_AGES],
    live: &[u64; YOUNG_AGES],
    current: u8,
) -> u8 {
    let current = current.max(1);
    let high = |a: u8| survival[usize::from(a)].is_some_and(|s| s >= HIGH_SURVIVAL);
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
