//! The named phases of a GC cycle that are not pauses (pauses are [`crate::PauseKind`]), as
//! the driver runs them: the concurrent phases of the `concurrent` mode, in cycle order, and the
//! steps inside the `stw` mode's one pause. Its `name()` is the string the GC log, the phase
//! records and the reports show.

/// A phase of a GC cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GcPhase {
    /// Right after Pause Mark Start: a GC thread marks and heals every strong root while
    /// mutators run (their barriers heal the roots they load themselves).
    ConcurrentMarkRoots,
    /// GC workers trace the object graph while mutators run.
    ConcurrentMark,
    /// Marking again after a Pause Mark End found work left in the mutators' buffers.
    ConcurrentMarkContinue,
    /// Clear weak handles whose referent was not marked, find dead direct-buffer owners and
    /// (in `concurrent` mode) run their cleaners.
    ConcurrentProcessNonStrongReferences,
    /// Forget the previous cycle's forwarding.
    ConcurrentResetRelocationSet,
    /// Free empty pages, pick the sparse pages to evacuate.
    ConcurrentSelectRelocationSet,
    /// Evacuate the relocation set.
    ConcurrentRelocate,
    /// `stw`: mark the roots (inside Pause Full).
    MarkRoots,
    /// `stw`: trace (inside Pause Full).
    Mark,
    /// `stw`: relocate the roots (inside Pause Full).
    RelocateRoots,
    /// `stw`: evacuate (inside Pause Full).
    Relocate,
    /// `stw`: rewrite every stale slot of the heap (inside Pause Full).
    Remap,
    /// `stw`: after Pause Full, free the native memory of the direct-buffer owners it found
    /// dead.
    ConcurrentCleanDirectBuffers,
}

impl GcPhase {
    /// The name in logs and records.
    pub fn name(self) -> &'static str {
        match self {
            GcPhase::ConcurrentMarkRoots => "Concurrent Mark Roots",
            GcPhase::ConcurrentMark => "Concurrent Mark",
            GcPhase::ConcurrentMarkContinue => "Concurrent Mark Continue",
            GcPhase::ConcurrentProcessNonStrongReferences => {
                "Concurrent Process Non-Strong References"
            }
            GcPhase::ConcurrentResetRelocationSet => "Concurrent Reset Relocation Set",
            GcPhase::ConcurrentSelectRelocationSet => "Concurrent Select Relocation Set",
            GcPhase::ConcurrentRelocate => "Concurrent Relocate",
            GcPhase::MarkRoots => "Mark Roots",
            GcPhase::Mark => "Mark",
            GcPhase::RelocateRoots => "Relocate Roots",
            GcPhase::Relocate => "Relocate",
            GcPhase::Remap => "Remap",
            GcPhase::ConcurrentCleanDirectBuffers => "Concurrent Clean Direct Buffers",
        }
    }
}

impl std::fmt::Display for GcPhase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
