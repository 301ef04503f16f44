//! Observability: what the collector records and tells about itself, and nothing it decides
//! with. It owns the names of a cycle's phases and pauses and of why a cycle runs (the strings
//! of logs, records and reports), the records an embedder reads ([`stats`], ZGC's
//! `ZStatistics`), the `-Xlog:gc`-style log (`gc_log`), the thread CPU clock, the panics
//! tests inject, and the readers of `/proc` and of the C library's malloc that memory reports
//! are made of ([`proc_info`]). Every folder may use it; it uses only `config`.

mod cpu_time;
mod gc_cause;
mod gc_log;
mod gc_phase;
mod injected_panic;
pub mod proc_info;
pub mod stats;

pub(crate) use cpu_time::thread_cpu_ns;
pub use gc_cause::GcCause;
pub(crate) use gc_log::GcLog;
pub use gc_phase::GcPhase;
pub(crate) use injected_panic::{InjectedPanic, InjectedPanics};
pub(crate) use stats::{
    CycleRecord, DirectStats, GcStats, PacingRecord, PageAllocationRecord, PauseKind, PauseRecord,
    PhaseRecord, StallRecord, PAGE_ALLOCATION_RECORD_MIN,
};
