//! Which length of a mutator wait a figure counts: what the program **felt** (a pacing delay
//! as long as the thread was held: the sleep, the operating system's late wake-up, a pause
//! that held the sleeper) or what the collector **imposed** (a pacing delay as long as the
//! pacer asked for). A pause (time to safepoint plus time at the safepoint), an allocation
//! stall and a page allocation are the collector's either way. The felt figures are what the
//! program lived through; the imposed ones leave out what the machine added, so a report can
//! tell the collector from a VM that withholds the CPU (which the control meter shows).

use gc_runtime::stats::{PacingRecord, PauseRecord};
use serde::{Deserialize, Serialize};

/// Which length of a wait a figure counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WaitMeasure {
    /// What the program felt: a pacing delay as long as the thread was held
    /// (`PacingRecord::duration_ns`: the sleep, the operating system's late wake-up and any
    /// pause that held the sleeper).
    Felt,
    /// What the collector imposed: a pacing delay as long as the pacer asked for
    /// (`PacingRecord::imposed_ns`).
    Imposed,
}

impl WaitMeasure {
    /// A pause's length: time to safepoint plus time at the safepoint, either way (the
    /// collector asked for both).
    pub fn pause_ns(self, p: &PauseRecord) -> u64 {
        p.time_to_safepoint_ns.saturating_add(p.at_safepoint_ns)
    }

    /// A pacing delay's length: held ([`Felt`](Self::Felt)) or asked for
    /// ([`Imposed`](Self::Imposed)).
    pub fn pacing_ns(self, p: &PacingRecord) -> u64 {
        match self {
            WaitMeasure::Felt => p.duration_ns,
            WaitMeasure::Imposed => p.imposed_ns,
        }
    }
}
