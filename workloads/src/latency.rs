//! Latency histograms in nanoseconds (HdrHistogram, three significant digits, with
//! coordinated-omission correction) and their percentile summary. They are the runtime's own
//! (`gc_runtime::LatencyHistogram`, which a heap also keeps per kind of event); this module
//! names them for the harness's workloads and reports.

pub use gc_runtime::{LatencyHistogram, PercentileSummary, SIGNIFICANT_DIGITS};
