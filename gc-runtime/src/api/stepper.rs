//! Stepping through a GC cycle phase by phase ([`Stepper`], from [`Heap::stepper`]), for
//! teaching and tools: the executable tour runs a real cycle and, between its concurrent
//! phases, reads the heap's state (see `inspect`) and lets its mutator load slots, so that
//! what a barrier does in each phase is seen on a real slot, the same way on every run. It
//! mirrors HotSpot's concurrent GC breakpoints (`ConcurrentGCBreakpoints`, WhiteBox's
//! `concurrentGCRunTo`), with which tests run a concurrent collector to a named point.
//!
//! While a stepper lives, the driver waits before each concurrent phase (after the pauses
//! before it) until [`Stepper::step`] lets it run, and the director starts no cycle on its
//! own: only [`Stepper::start_cycle`] does (or an allocation stall). Dropping the stepper
//! lets the cycle run on. A thread that must wait for the collector (an allocation stall, a
//! collect request, a barrier waiting for a page's GC worker) ends the stepping first, so
//! stepping never turns a wait into a hang; the next step then returns an error saying so.

use super::heap::Heap;
use crate::context::GateStop;
use crate::observe::{GcCause, GcPhase};
use std::marker::PhantomData;

/// Where a stepped cycle stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// The driver waits before this concurrent phase (the pauses before it have run).
    Before(GcPhase),
    /// The cycle is complete.
    CycleEnded,
}

/// Holds the heap's cycles between their concurrent phases while it lives. See the module
/// documentation. Not `Send`: its calls must come from a thread outside every scope, which
/// it checks.
pub struct Stepper<'h> {
    heap: &'h Heap,
    /// The gate's closing this stepper made (see `phase_gate`).
    generation: u64,
    _not_send: PhantomData<*const ()>,
}

impl Heap {
    /// Step through this heap's cycles phase by phase (see [`Stepper`]). Fails in a mode
    /// other than `concurrent` (a `stw` cycle is one pause: nothing to step), or while another
    /// stepper lives.
    pub fn stepper(&self) -> Result<Stepper<'_>, String> {
        if !self.inner.config().mode.is_concurrent() {
            return Err(format!(
                "Heap::stepper needs a concurrent heap: a {} cycle has no concurrent phases to \
                 stop between",
                self.inner.config().mode
            ));
        }
        let Some(generation) = self.inner.control().gate().close() else {
            return Err(
                "Heap::stepper: another stepper of this heap is alive; drop it first".into(),
            );
        };
        Ok(Stepper {
            heap: self,
            generation,
            _not_send: PhantomData,
        })
    }
}

impl Stepper<'_> {
    /// Request a cycle and wait until it stops before its first concurrent phase (Concurrent
    /// Mark Roots, after Pause Mark Start).
    pub fn start_cycle(&self, cause: &str) -> Result<Step, String> {
        self.check_thread("Stepper::start_cycle")?;
        if let Some(p) = self.held() {
            return Err(format!(
                "Stepper::start_cycle: a cycle is held before {}; step it to its end first",
                p.name()
            ));
        }
        let control = self.heap.inner.control();
        control.request(GcCause::Explicit(cause.to_string()));
        Self::answer(control.gate().step(false))
    }

    /// Request a minor cycle (see `Heap::collect_minor`, whose conditions it shares) and
    /// wait until it stops before its first concurrent phase.
    pub fn start_minor(&self) -> Result<Step, String> {
        self.check_thread("Stepper::start_minor")?;
        super::mutator::minor_allowed(self.heap.inner.config())?;
        if let Some(p) = self.held() {
            return Err(format!(
                "Stepper::start_minor: a cycle is held before {}; step it to its end first",
                p.name()
            ));
        }
        let control = self.heap.inner.control();
        control.request(GcCause::MinorRequested);
        Self::answer(control.gate().step(false))
    }

    /// Let the phase the driver waits before run, and wait until it stops before the next
    /// one (or the cycle ends).
    pub fn step(&self) -> Result<Step, String> {
        self.check_thread("Stepper::step")?;
        Self::answer(self.heap.inner.control().gate().step(true))
    }

    /// Step until the cycle ends.
    pub fn finish_cycle(&self) -> Result<(), String> {
        while self.step()? != Step::CycleEnded {}
        Ok(())
    }

    /// The phase the driver waits before now, if it waits.
    pub fn held(&self) -> Option<GcPhase> {
        self.heap.inner.control().gate().held()
    }

    fn answer(stop: GateStop) -> Result<Step, String> {
        match stop {
            GateStop::Before(p) => Ok(Step::Before(p)),
            GateStop::CycleEnded => Ok(Step::CycleEnded),
            GateStop::Opened(why) => Err(format!(
                "stepping ended: {why} (a wait for the collector lets the cycle run on)"
            )),
            GateStop::Idle => Err("Stepper::step: no cycle is held; start one with \
                                   Stepper::start_cycle"
                .into()),
        }
    }

    /// A thread inside a scope would never reach the next pause's safepoint while it waits.
    fn check_thread(&self, what: &str) -> Result<(), String> {
        if super::mutator::thread_is_running_a_mutator() {
            return Err(format!(
                "{what} called inside a scope: the cycle's next pause would wait for this \
                 thread; step from outside every scope"
            ));
        }
        Ok(())
    }
}

impl Drop for Stepper<'_> {
    fn drop(&mut self) {
        self.heap.inner.control().gate().open(self.generation);
    }
}
