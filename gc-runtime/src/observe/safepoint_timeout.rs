//! The safepoint timeout's report (HotSpot's `-XX:+SafepointTimeout`, which prints the
//! threads that had not reached the safepoint): when a pause still waits for running
//! mutators `SAFEPOINT_TIMEOUT` after its request (see `threads::safepoint`), the driver
//! names each of them as a [`Straggler`] — its name, what it said it was doing
//! ([`Activity`]), and its scheduler state — in a [`SafepointTimeoutRecord`], logged and kept
//! in the heap's records (`GcStats::safepoint_timeouts`). A straggler in its own code and
//! runnable (`R`) is computing between two polls, or waiting for a core; one in a wait names
//! the GC thread it waits for.

use super::gc_phase::PauseKind;
use serde::{Deserialize, Serialize};

/// What a running mutator is doing, for the safepoint timeout's report: set by the thread on
/// the slow paths that can wait for a GC thread while it counts as running; stored as its
/// `u8` in a [`ThreadStateCell`](crate::threads::ThreadStateCell).
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Activity {
    /// Its own code, or a barrier or allocation path that waits for nobody: a pause waits
    /// for its next poll.
    Code = 0,
    /// In the load barrier, waiting for a page's GC worker to give an object its forwarding
    /// entry (the page is being compacted in place, or no target memory was left).
    ForwardingWait = 1,
    /// Taking its own mark buffer's lock, held by a GC worker flushing the buffer.
    MarkBufferLock = 2,
    /// Running in this heap while it waits at another heap (parked at that heap's
    /// safepoint, or waiting for its cycle): derived from the waiting-elsewhere word, never
    /// stored.
    WaitingAtAnotherHeap = 3,
}

impl Activity {
    /// The activity whose `u8` is `raw` (an unknown value reads as [`Activity::Code`]).
    #[inline]
    pub const fn from_u8(raw: u8) -> Activity {
        match raw {
            1 => Activity::ForwardingWait,
            2 => Activity::MarkBufferLock,
            3 => Activity::WaitingAtAnotherHeap,
            _ => Activity::Code,
        }
    }

    /// Words for the GC log.
    pub const fn describe(self) -> &'static str {
        match self {
            Activity::Code => "its own code (no poll yet)",
            Activity::ForwardingWait => "waiting for a GC worker's forwarding entry",
            Activity::MarkBufferLock => "waiting for its mark buffer's lock",
            Activity::WaitingAtAnotherHeap => "waiting at another heap",
        }
    }
}

/// One mutator a pause was still waiting for when the safepoint timed out.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Straggler {
    /// The thread's name as given at attach.
    pub thread: String,
    /// What it said it was doing.
    pub doing: Activity,
    /// Its scheduler state at that moment, the state letter of `/proc/self/task/<tid>/stat`
    /// (`R` running or waiting for a core, `S` sleeping, `D` in uninterruptible I/O); `None`
    /// where `/proc` does not say.
    pub run_state: Option<char>,
}

/// A pause that waited longer than the safepoint timeout for its mutators.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SafepointTimeoutRecord {
    pub kind: PauseKind,
    /// GC cycle number (`GC(n)`).
    pub cycle: u64,
    /// When the collector asked mutators to stop (the pause's `start_at_ns`).
    pub start_at_ns: u64,
    /// The pause's whole time to safepoint.
    pub time_to_safepoint_ns: u64,
    /// The mutators still running at the timeout.
    pub stragglers: Vec<Straggler>,
}

impl SafepointTimeoutRecord {
    /// The GC log's words for the stragglers: `name (what it did, state R)`, comma-separated.
    pub fn describe_stragglers(&self) -> String {
        self.stragglers
            .iter()
            .map(|s| match s.run_state {
                Some(c) => format!("{} ({}, state {c})", s.thread, s.doing.describe()),
                None => format!("{} ({})", s.thread, s.doing.describe()),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn activities_round_trip_through_their_byte() {
        for a in [
            Activity::Code,
            Activity::ForwardingWait,
            Activity::MarkBufferLock,
            Activity::WaitingAtAnotherHeap,
        ] {
            assert_eq!(Activity::from_u8(a as u8), a);
        }
        assert_eq!(Activity::from_u8(200), Activity::Code);
    }

    #[test]
    fn stragglers_are_described_with_their_state() {
        let r = SafepointTimeoutRecord {
            kind: PauseKind::MarkStart,
            cycle: 3,
            start_at_ns: 0,
            time_to_safepoint_ns: 150_000_000,
            stragglers: vec![
                Straggler {
                    thread: "w-1".into(),
                    doing: Activity::ForwardingWait,
                    run_state: Some('S'),
                },
                Straggler {
                    thread: "w-2".into(),
                    doing: Activity::Code,
                    run_state: None,
                },
            ],
        };
        assert_eq!(
            r.describe_stragglers(),
            "w-1 (waiting for a GC worker's forwarding entry, state S), w-2 (its own code (no poll yet))"
        );
    }
}
