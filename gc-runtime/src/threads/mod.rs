//! The threads of a heap and how they meet: the safepoint handshake that stops and resumes
//! mutators (HotSpot's safepoint protocol; the blocked state, pauses giving way to threads
//! waiting at another heap) and the process-wide barrier that spares its mutator side a
//! fence (HotSpot's `SystemMemoryBarrier`), the GC workers of one parallel phase (ZGC's
//! `ZWorkers`), their scheduling class and its starvation guard, and the precise sleep of
//! pacing delays. It owns each mutator's thread state and the safepoint's counters; it knows
//! nothing of objects or pages.

mod gc_workers;
mod idle_class_guard;
mod precise_sleep;
pub mod process_barrier;
pub mod safepoint;
mod worker_crew;
pub mod worker_priority;

pub(crate) use gc_workers::{offload, run as run_workers};
pub(crate) use idle_class_guard::IdleClassGuard;
pub(crate) use precise_sleep::sleep_precisely;
pub(crate) use process_barrier::ProcessBarrier;
pub(crate) use safepoint::{
    begin_cycle_wait, end_cycle_wait, next_ticket, HasThreadState, OtherHeaps, Safepoint,
    ThreadState, ThreadStateCell, SAFEPOINT_TIMEOUT,
};
pub(crate) use worker_crew::{CrewTotals, Member, Turn, WorkerTarget};
pub(crate) use worker_priority::current_tid;
