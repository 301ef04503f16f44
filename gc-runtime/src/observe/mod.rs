//! Observability: what the collector records and tells about itself, and nothing it decides
//! with. It owns the names of a cycle's pauses and phases (`gc_phase`, all declared in one
//! file) and of why a cycle runs (`gc_cause`) — the enums the records hold, serialized as the
//! strings of logs and reports —, the records an embedder reads ([`stats`], ZGC's
//! `ZStatistics`), the latency histograms they keep per kind of event (`latency_histogram`),
//! the `-Xlog:gc`-style log (`gc_log`), the event sink through which every event is logged and
//! recorded at once, on the heap's one clock, into a bounded ring of recent records, the
//! histograms and every subscriber (`event_sink`), the value-slot counters (`value_slot_counts`), the remembered-set counters (`remembered_set_counts`), the safepoint timeout's report of the mutators a pause waited too long for (`safepoint_timeout`), the thread CPU clock, the mutators' waits for a CPU during a pause's time to safepoint (`cpu_wait`), the panics tests inject, and the readers of `/proc` and of the C library's
//! malloc that memory reports are made of ([`proc_info`]). Every folder may use it; it uses
//! only `config`.

pub mod cpu_time;
mod cpu_wait;
mod event_sink;
mod gc_cause;
mod gc_log;
mod gc_phase;
mod injected_crew_swing;
mod injected_hold;
mod injected_panic;
mod latency_histogram;
pub mod proc_info;
mod remembered_set_counts;
mod safepoint_timeout;
pub mod stats;
mod value_slot_counts;

pub(crate) use cpu_time::thread_cpu_ns;
pub(crate) use cpu_wait::{longest_cpu_wait, RunDelay};
pub use event_sink::EventSubscription;
pub(crate) use event_sink::{EventStart, GcEvents};
pub use gc_cause::GcCause;
pub use gc_phase::{CyclePhase, GcPhase, PauseKind};
pub(crate) use injected_crew_swing::InjectedCrewSwing;
pub(crate) use injected_hold::InjectedHold;
pub(crate) use injected_panic::{InjectedPanic, InjectedPanics};
pub use latency_histogram::{LatencyHistogram, PercentileSummary, SIGNIFICANT_DIGITS};
pub(crate) use remembered_set_counts::RememberedSetCounts;
pub use remembered_set_counts::RememberedSetStats;
pub use safepoint_timeout::{Activity, SafepointTimeoutRecord, Straggler};
pub(crate) use stats::{CycleRecord, DirectStats, GcStats, PauseRecord};
pub(crate) use value_slot_counts::ValueSlotCounts;
pub use value_slot_counts::ValueSlotStats;
