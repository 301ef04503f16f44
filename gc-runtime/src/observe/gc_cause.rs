//! Why a GC cycle runs (HotSpot's `GCCause`): the director's rules, an allocation stall, or an
//! explicit request with the embedder's own label. Its `name()` is the string the GC log, the
//! cycle records and the reports show.

/// The cause of one GC cycle.
#[derive(Clone, Debug, PartialEq, Eq)]
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
    /// `Heap::collect` or `Scope::collect`, with the caller's label (e.g. "System.gc").
    Explicit(String),
}

impl GcCause {
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
            GcCause::Explicit(label) => label,
        }
    }
}

impl std::fmt::Display for GcCause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
