//! `workloads`: the measurement harness of the pause-vs-heap-size report.
//!
//! This crate turns what a run measured into numbers and files people can read. A run is
//! described by a [`RunConfig`] and produces a [`RunResult`] (the collector's
//! [`GcStats`](gc_runtime::stats::GcStats), hiccup samples, throughput, memory). From those:
//!
//! - [`latency`]: HDR histograms in nanoseconds with coordinated-omission correction;
//! - [`hiccup`]: the jHiccup-style meter's analysis (and the contract of the meter thread);
//! - [`mmu`]: minimum mutator utilization from the timeline of pauses, allocation stalls and
//!   pacing delays;
//! - [`memory_timeline`]: memory over a run (committed heap, direct and pooled bytes, RSS,
//!   Pss), sampled by the runner's thread;
//! - [`buffer_kind`]: `--buffers heap|direct|pooled`, where a workload keeps its I/O buffers;
//! - [`waits`]: what the program felt: pauses, allocation stalls and pacing delays as one kind
//!   of event (the longest wait, the total per thread); [`wait_measure`]: how long each was,
//!   as felt or as the collector imposed it;
//! - [`min_cycles`]: whether a run holds enough complete GC cycles to mean something, and
//!   `--min-cycles`' extension of a run until it does;
//! - [`summary`]: the derived figures of one run (pause percentiles, waits, MMU, hiccups, ...);
//! - [`report`]: `table.md`, `results.json`, `pause-vs-heap.svg`, `mmu-vs-heap.svg`,
//!   `pause-timeline.svg` and `trace.json` (Chrome Trace Event format, opens in Perfetto);
//! - [`workload`], [`workloads`]: the [`Workload`] trait (name, options, thread function) and
//!   the registry, one line per workload, from which the name enum [`WorkloadKind`], the
//!   options enum [`WorkloadParams`], the subcommands and the runner's dispatch are built;
//!   [`ctx`] and [`pacer`]: what a workload thread is handed and its rate limit;
//! - [`jvm`]: side by side with HotSpot (`--jvm`): the Java twins of heap-churn and
//!   binary-trees run under the JVM's collectors, their GC logs read into the same records;
//! - [`file_backing`]: what the heap's file backing costs (mapping against pwrite/pread,
//!   page faults, msync), measured by the `file-backing` binary for the book;
//! - [`cpu_probe`]: the machine's floor for a pause, the time a thread loses while it holds
//!   its CPU (interrupts, the hypervisor), measured by the `cpu-probe` binary;
//! - [`cli`], [`arg_parsers`], [`sweep`], [`runner`]: the `pause-sweep` command: which runs to
//!   make, in which order, and the single entry point into the collector runtime,
//!   [`runner::run_workload`].

pub mod arg_parsers;
pub mod buffer_kind;
pub mod cli;
pub mod collector_speed;
pub mod cpu_budget;
#[allow(unsafe_code)] // sched_setaffinity, sched_getaffinity; see each SAFETY comment.
pub mod cpu_probe;
pub mod ctx;
pub mod figures;
#[allow(unsafe_code)] // mmap, msync, pwrite/pread of the benchmark; see each SAFETY comment.
pub mod file_backing;
pub mod hiccup;
pub mod jvm;
pub mod latency;
pub mod memory_probe;
pub mod memory_timeline;
pub mod min_cycles;
pub mod mmu;
pub mod pacer;
pub mod report;
pub mod run_result;
pub mod runner;
pub mod summary;
pub mod sweep;
#[doc(hidden)]
pub mod test_support;
pub mod wait_measure;
pub mod waits;
pub mod workload;
pub mod workloads;

pub use buffer_kind::BufferKind;
pub use latency::{LatencyHistogram, PercentileSummary};
pub use run_result::{Mode, RunConfig, RunResult};
pub use summary::RunSummary;
pub use workload::Workload;
pub use workloads::{WorkloadKind, WorkloadParams};
