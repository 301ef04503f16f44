//! The phase gate: a point the driver passes before each concurrent phase, closed only while
//! an embedder steps through a cycle phase by phase (`Heap::stepper`, for the executable tour
//! and tools that show a cycle's state between its phases). It mirrors HotSpot's concurrent
//! GC breakpoints (`ConcurrentGCBreakpoints`, which WhiteBox tests use to run a concurrent
//! collector "to" a named point); ZGC's driver has no other such stop.
//!
//! Open (the default, and always in `stw` mode), passing it is one relaxed load. Closed, the
//! driver waits before each concurrent phase until the stepper lets that phase run; pauses run
//! as usual between phases, so the mutators stay free to run (and the stepping thread must be
//! outside every scope, or the next pause would wait for it). Any thread that must wait for
//! the collector — an allocation stall, a cycle request waited for, a barrier waiting for a
//! page's GC worker — opens the gate for good first: stepping never turns a wait into a hang.

use crate::observe::GcPhase;
use parking_lot::{Condvar, Mutex};
use std::sync::atomic::{AtomicBool, Ordering};

#[derive(Default)]
struct GateState {
    closed: bool,
    /// The phase the driver waits before, if it waits.
    held: Option<GcPhase>,
    /// Times the driver stopped at the gate, and cycles it ended while the gate was closed.
    holds: u64,
    cycles_ended: u64,
    /// Phases the driver may start without waiting (one per step).
    permits: u64,
    /// Why the gate was opened while a stepper held it, if a waiting thread opened it.
    forced_open: Option<&'static str>,
    /// Counts the closings, so that a stepper whose stepping a waiting thread ended cannot
    /// open the gate of a later one when it is dropped.
    generation: u64,
}

/// Where the driver is when a step ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GateStop {
    /// Waiting before this concurrent phase.
    Before(GcPhase),
    /// The cycle ended (the gate stays closed for the next one).
    CycleEnded,
    /// A thread that had to wait for the collector opened the gate (the reason).
    Opened(&'static str),
    /// Nothing was held: no cycle runs.
    Idle,
}

/// See the module documentation.
#[derive(Default)]
pub(crate) struct PhaseGate {
    /// Mirrors `GateState::closed`, so the open gate costs the driver no lock.
    closed: AtomicBool,
    state: Mutex<GateState>,
    changed: Condvar,
}

impl PhaseGate {
    /// Close the gate for a stepper: its generation, for [`Self::open`]; `None` if another
    /// stepper holds it.
    pub(crate) fn close(&self) -> Option<u64> {
        let mut s = self.state.lock();
        if s.closed {
            return None;
        }
        *s = GateState {
            closed: true,
            generation: s.generation + 1,
            ..GateState::default()
        };
        self.closed.store(true, Ordering::Release);
        Some(s.generation)
    }

    /// Open the gate closed as `generation` (its stepper is done): the driver runs on. A gate
    /// closed again since, by another stepper, stays closed.
    pub(crate) fn open(&self, generation: u64) {
        let mut s = self.state.lock();
        if s.generation != generation {
            return;
        }
        s.closed = false;
        self.closed.store(false, Ordering::Release);
        self.changed.notify_all();
    }

    /// A thread is about to wait for the collector (`why`): open the gate if it is closed, so
    /// the wait ends.
    pub(crate) fn open_for_wait(&self, why: &'static str) {
        if !self.closed.load(Ordering::Acquire) {
            return;
        }
        let mut s = self.state.lock();
        if s.closed {
            s.forced_open = Some(why);
        }
        s.closed = false;
        self.closed.store(false, Ordering::Release);
        self.changed.notify_all();
    }

    /// True while a stepper holds the gate closed.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// The driver, before concurrent phase `phase`: wait here while the gate is closed and no
    /// step let this phase run.
    pub(crate) fn pass(&self, phase: GcPhase) {
        if !self.is_closed() {
            return;
        }
        let mut s = self.state.lock();
        if !s.closed {
            return;
        }
        s.held = Some(phase);
        s.holds += 1;
        self.changed.notify_all();
        while s.closed && s.permits == 0 {
            self.changed.wait(&mut s);
        }
        s.permits = s.permits.saturating_sub(1);
        s.held = None;
    }

    /// The driver ended a cycle.
    pub(crate) fn cycle_ended(&self) {
        if !self.is_closed() {
            return;
        }
        let mut s = self.state.lock();
        s.cycles_ended += 1;
        self.changed.notify_all();
    }

    /// The phase the driver waits before now, if any.
    pub(crate) fn held(&self) -> Option<GcPhase> {
        self.state.lock().held
    }

    /// Stepper: let the held phase run, then wait until the driver stops before the next
    /// phase, ends its cycle, or the gate is opened. With `release` false, only wait for the
    /// driver to stop (after a cycle was requested). `Idle` if `release` finds nothing held.
    pub(crate) fn step(&self, release: bool) -> GateStop {
        let mut s = self.state.lock();
        let (holds, ended) = (s.holds, s.cycles_ended);
        match (release, s.held) {
            (true, Some(_)) => {
                s.permits += 1;
                self.changed.notify_all();
            }
            (true, None) if s.closed => return GateStop::Idle,
            (false, Some(p)) if s.closed => return GateStop::Before(p),
            _ => {}
        }
        loop {
            if !s.closed {
                return GateStop::Opened(s.forced_open.unwrap_or("the gate was opened"));
            }
            if s.holds > holds {
                if let Some(p) = s.held {
                    return GateStop::Before(p);
                }
            }
            if s.cycles_ended > ended {
                return GateStop::CycleEnded;
            }
            self.changed.wait(&mut s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn an_open_gate_never_waits() {
        let g = PhaseGate::default();
        g.pass(GcPhase::ConcurrentMark);
        assert_eq!(g.held(), None);
    }

    #[test]
    fn a_closed_gate_holds_the_driver_one_phase_per_step() {
        let g = Arc::new(PhaseGate::default());
        assert!(g.close().is_some());
        assert!(g.close().is_none(), "a second stepper is refused");
        let d = g.clone();
        let driver = std::thread::spawn(move || {
            d.pass(GcPhase::ConcurrentMarkRoots);
            d.pass(GcPhase::ConcurrentMark);
            d.cycle_ended();
        });
        assert_eq!(
            g.step(false),
            GateStop::Before(GcPhase::ConcurrentMarkRoots)
        );
        assert_eq!(g.step(true), GateStop::Before(GcPhase::ConcurrentMark));
        assert_eq!(g.step(true), GateStop::CycleEnded);
        driver.join().unwrap();
        assert_eq!(
            g.step(true),
            GateStop::Idle,
            "no cycle runs: nothing to wait for"
        );
    }

    #[test]
    fn a_waiting_thread_opens_the_gate_and_the_stepper_learns_why() {
        let g = Arc::new(PhaseGate::default());
        let first = g.close().unwrap();
        let d = g.clone();
        let driver = std::thread::spawn(move || d.pass(GcPhase::ConcurrentRelocate));
        assert_eq!(g.step(false), GateStop::Before(GcPhase::ConcurrentRelocate));
        g.open_for_wait("an allocation stall");
        driver.join().unwrap();
        assert_eq!(g.step(true), GateStop::Opened("an allocation stall"));
        assert!(!g.is_closed());
        let second = g.close().unwrap();
        g.open(first);
        assert!(
            g.is_closed(),
            "the first stepper's drop leaves the second's gate closed"
        );
        g.open(second);
        assert!(!g.is_closed());
    }
}
