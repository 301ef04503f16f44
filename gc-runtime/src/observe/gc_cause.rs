//! Why a GC cycle runs (HotSpot's `GCCause`): the director's rules, an allocation stall, or an
//! explicit request with the embedder's own label. Its `name()` is the string the GC log, the
//! cycle records and the reports show; records serialize it as that name and read it back (a
//! name no rule has is an explicit request's label).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::cmp::Ordering;

/// The cause of one GC cycle.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum GcCause {
    /// A mutator is waiting for memory.
    AllocationStall,
    /// `HeapConfig::continuous`: cycles back to back (for tests).
    Continuous,
    /// Heap usage crossed one of the first warm-up thresholds (10%, 20%, 30%).
    Warmup,
    /// The configured timer expired.
    Timer,
    /// Heap usage reached the heap target (`DirectorConfig::heap_target`): a multiple of what
    /// the last cycle left.
    HeapTarget,
    /// The allocation rate would fill the heap before a cycle could finish.
    AllocationRate,
    /// Heap usage is high.
    HighUsage,
    /// A cycle is cheap now and the heap has grown since the last one.
    Proactive,
    /// A direct buffer would pass `HeapConfig::max_direct_memory`: the cycle finds dead
    /// owners, whose cleaners give their native memory back (JDK's `Bits.reserveMemory`).
    DirectMemory,
    /// `Heap::collect_minor` or `Scope::collect_minor`: a minor (young-only) cycle.
    MinorRequested,
    /// `generational` mode: mutators allocated the young generation's size
    /// (`GenerationalConfig::young_size`) since the last cycle started; a minor cycle.
    MinorYoungOccupancy,
    /// `generational` mode: at the allocation rate, free memory would not last through a
    /// minor and then a major; a minor cycle (a major if a minor has just ended: minors no
    /// longer keep free memory above that line).
    MinorAllocationRate,
    /// `generational` mode with `DirectorConfig::continuous`: a minor cycle of the cycles
    /// run back to back (three in four are minors, for tests).
    MinorContinuous,
    /// `Heap::collect` or `Scope::collect`, with the caller's label (e.g. "System.gc").
    Explicit(String),
}

impl GcCause {
    /// Every cause but an explicit request.
    pub const RULES: [GcCause; 13] = [
        GcCause::AllocationStall,
        GcCause::Continuous,
        GcCause::Warmup,
        GcCause::Timer,
        GcCause::HeapTarget,
        GcCause::AllocationRate,
        GcCause::HighUsage,
        GcCause::Proactive,
        GcCause::DirectMemory,
        GcCause::MinorRequested,
        GcCause::MinorYoungOccupancy,
        GcCause::MinorAllocationRate,
        GcCause::MinorContinuous,
    ];

    /// The name in logs and records.
    pub fn name(&self) -> &str {
        match self {
            GcCause::AllocationStall => "Allocation Stall",
            GcCause::Continuous => "Continuous",
            GcCause::Warmup => "Warmup",
            GcCause::Timer => "Timer",
            GcCause::HeapTarget => "Heap Target",
            GcCause::AllocationRate => "Allocation Rate",
            GcCause::HighUsage => "High Usage",
            GcCause::Proactive => "Proactive",
            GcCause::DirectMemory => "Direct Memory",
            GcCause::MinorRequested => "Minor Requested",
            GcCause::MinorYoungOccupancy => "Minor Young Occupancy",
            GcCause::MinorAllocationRate => "Minor Allocation Rate",
            GcCause::MinorContinuous => "Minor Continuous",
            GcCause::Explicit(label) => label,
        }
    }

    /// The cause named `name` in logs and records: one of [`GcCause::RULES`], or else an
    /// explicit request labelled `name` (so an explicit request labelled like a rule reads
    /// back as that rule).
    pub fn from_name(name: &str) -> GcCause {
        GcCause::RULES
            .into_iter()
            .find(|c| c.name() == name)
            .unwrap_or_else(|| GcCause::Explicit(name.to_string()))
    }

    /// True for the causes of minor (young-only) cycles: a request, or the `generational`
    /// director's young-occupancy and continuous rules. Every other cause runs a major.
    pub fn is_minor(&self) -> bool {
        matches!(
            self,
            GcCause::MinorRequested
                | GcCause::MinorYoungOccupancy
                | GcCause::MinorAllocationRate
                | GcCause::MinorContinuous
        )
    }

    /// True for `Heap::collect` and `Scope::collect`.
    pub fn is_explicit(&self) -> bool {
        matches!(self, GcCause::Explicit(_))
    }
}

impl Default for GcCause {
    /// An explicit request without a label (the cause of a record built by hand).
    fn default() -> Self {
        GcCause::Explicit(String::new())
    }
}

impl Serialize for GcCause {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for GcCause {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(GcCause::from_name(&String::deserialize(d)?))
    }
}

impl PartialOrd for GcCause {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// By name, so maps keyed by cause list them as they did by string (a rule before an explicit
/// request of the same label).
impl Ord for GcCause {
    fn cmp(&self, other: &Self) -> Ordering {
        self.name()
            .cmp(other.name())
            .then(self.is_explicit().cmp(&other.is_explicit()))
    }
}

impl std::fmt::Display for GcCause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causes_serialize_as_their_names_and_read_back() {
        let mut all = GcCause::RULES.to_vec();
        all.push(GcCause::Explicit("System.gc".into()));
        for c in all {
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(json, format!("\"{}\"", c.name()));
            assert_eq!(serde_json::from_str::<GcCause>(&json).unwrap(), c);
        }
        assert!(GcCause::Warmup < GcCause::Explicit("Warmup".into()));
        assert!(GcCause::AllocationRate < GcCause::AllocationStall);
    }
}
