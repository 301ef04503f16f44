//! Every named step of a GC cycle, declared in this one file: the stop-the-world pauses
//! ([`PauseKind`], ZGC's `ZStatPause`s) and the phases that are not pauses ([`GcPhase`], its
//! `ZStatPhase`s and the steps inside the `stw` mode's one pause), and [`CyclePhase`], either
//! of them, as a cycle's record lists its steps. Each `name()` is the string the GC log, the
//! records and the reports show, and records serialize each of them as that name (and read it
//! back), so a results file says "Concurrent Mark", never a variant name. The barrier's own
//! phase (which slow path a bad pointer takes) is another thing: `BarrierPhase`, in the
//! context folder.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::cmp::Ordering;

/// The three pauses of a cycle, plus the single pause of the `stw` mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PauseKind {
    /// Flip to the cycle's mark color (every allocating page retires).
    MarkStart,
    /// Marking is complete if no queue or mutator buffer holds work.
    MarkEnd,
    /// Flip to the remapped color: a root with the mark color is now bad.
    RelocateStart,
    /// The whole cycle inside one pause (`stw` mode).
    Full,
}

impl PauseKind {
    /// Every pause kind.
    pub const ALL: [PauseKind; 4] = [
        PauseKind::MarkStart,
        PauseKind::MarkEnd,
        PauseKind::RelocateStart,
        PauseKind::Full,
    ];

    /// The name in logs and records.
    pub fn name(self) -> &'static str {
        match self {
            PauseKind::MarkStart => "Pause Mark Start",
            PauseKind::MarkEnd => "Pause Mark End",
            PauseKind::RelocateStart => "Pause Relocate Start",
            PauseKind::Full => "Pause Full",
        }
    }

    /// The pause kind named `name` in logs and records.
    pub fn from_name(name: &str) -> Option<PauseKind> {
        PauseKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// A phase of a GC cycle that is not a pause.
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
    /// Every phase, the `concurrent` mode's in cycle order first.
    pub const ALL: [GcPhase; 13] = [
        GcPhase::ConcurrentMarkRoots,
        GcPhase::ConcurrentMark,
        GcPhase::ConcurrentMarkContinue,
        GcPhase::ConcurrentProcessNonStrongReferences,
        GcPhase::ConcurrentResetRelocationSet,
        GcPhase::ConcurrentSelectRelocationSet,
        GcPhase::ConcurrentRelocate,
        GcPhase::MarkRoots,
        GcPhase::Mark,
        GcPhase::RelocateRoots,
        GcPhase::Relocate,
        GcPhase::Remap,
        GcPhase::ConcurrentCleanDirectBuffers,
    ];

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

    /// The phase named `name` in logs and records.
    pub fn from_name(name: &str) -> Option<GcPhase> {
        GcPhase::ALL.into_iter().find(|p| p.name() == name)
    }
}

/// One step of a cycle as its record lists them (`PhaseRecord::name`): a pause or a phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CyclePhase {
    Pause(PauseKind),
    Phase(GcPhase),
}

impl CyclePhase {
    /// The name in logs and records.
    pub fn name(self) -> &'static str {
        match self {
            CyclePhase::Pause(k) => k.name(),
            CyclePhase::Phase(p) => p.name(),
        }
    }

    /// The pause or phase named `name` in logs and records.
    pub fn from_name(name: &str) -> Option<CyclePhase> {
        PauseKind::from_name(name)
            .map(CyclePhase::Pause)
            .or_else(|| GcPhase::from_name(name).map(CyclePhase::Phase))
    }

    /// True for a stop-the-world pause.
    pub fn is_pause(self) -> bool {
        matches!(self, CyclePhase::Pause(_))
    }
}

impl From<PauseKind> for CyclePhase {
    fn from(k: PauseKind) -> Self {
        CyclePhase::Pause(k)
    }
}

impl From<GcPhase> for CyclePhase {
    fn from(p: GcPhase) -> Self {
        CyclePhase::Phase(p)
    }
}

impl PartialEq<GcPhase> for CyclePhase {
    fn eq(&self, other: &GcPhase) -> bool {
        *self == CyclePhase::Phase(*other)
    }
}

impl PartialEq<PauseKind> for CyclePhase {
    fn eq(&self, other: &PauseKind) -> bool {
        *self == CyclePhase::Pause(*other)
    }
}

/// Display, serialization as the log name, reading that name back, and (for map keys such as
/// a summary's pauses by kind) the order of the names.
macro_rules! named {
    ($t:ty, $what:literal) => {
        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.name())
            }
        }

        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let name = String::deserialize(d)?;
                <$t>::from_name(&name).ok_or_else(|| {
                    serde::de::Error::custom(format_args!("unknown {} {name:?}", $what))
                })
            }
        }

        impl PartialOrd for $t {
            fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
                Some(self.cmp(other))
            }
        }

        /// By name (names are unique), so maps keyed by it list them as they did by string.
        impl Ord for $t {
            fn cmp(&self, other: &Self) -> Ordering {
                self.name().cmp(other.name())
            }
        }
    };
}

named!(PauseKind, "pause kind");
named!(GcPhase, "GC phase");
named!(CyclePhase, "pause or GC phase");

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn every_pause_and_phase_has_its_own_name_and_serializes_as_it() {
        let all: Vec<CyclePhase> = PauseKind::ALL
            .into_iter()
            .map(CyclePhase::from)
            .chain(GcPhase::ALL.into_iter().map(CyclePhase::from))
            .collect();
        let names: HashSet<&str> = all.iter().map(|p| p.name()).collect();
        assert_eq!(names.len(), all.len(), "two steps share a name");
        for p in all {
            let json = serde_json::to_string(&p).unwrap();
            assert_eq!(json, format!("\"{}\"", p.name()));
            assert_eq!(serde_json::from_str::<CyclePhase>(&json).unwrap(), p);
            assert_eq!(p.to_string(), p.name());
        }
        for k in PauseKind::ALL {
            let json = serde_json::to_string(&k).unwrap();
            assert_eq!(json, format!("\"{}\"", k.name()));
            assert_eq!(serde_json::from_str::<PauseKind>(&json).unwrap(), k);
            assert!(CyclePhase::from(k).is_pause());
        }
        for p in GcPhase::ALL {
            let json = serde_json::to_string(&p).unwrap();
            assert_eq!(serde_json::from_str::<GcPhase>(&json).unwrap(), p);
            assert!(!CyclePhase::from(p).is_pause());
        }
        assert!(serde_json::from_str::<GcPhase>("\"Pause Full\"").is_err());
        assert!(serde_json::from_str::<CyclePhase>("\"Concurrent Nothing\"").is_err());
    }

    #[test]
    fn pause_kinds_order_by_name() {
        let mut kinds = PauseKind::ALL.to_vec();
        kinds.sort();
        let names: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
        assert_eq!(names[0], "Pause Full");
    }
}
