//! Side by side with HotSpot: the same workloads under the JVM's collectors, in the same
//! tables. `pause-sweep --jvm ZGC,G1` runs the Java twins of heap-churn and binary-trees
//! (`workloads/java/`) with the same parameters as this project's runs, reads the JVM's GC
//! log into this project's records and reports the rows next to this project's.
//!
//! - [`collector`]: the collectors by name (ZGC, GenZGC, G1, Parallel, Serial), their options
//!   per JDK release, and [`JvmSpec`], what one JVM run of a sweep is;
//! - [`jdk`]: finding the JDK, its version, compiling the twins with its `javac`, and how to
//!   get a JDK when there is none;
//! - [`sweep_runs`]: the JVM runs of a sweep, placed after this project's runs of each heap;
//! - [`twin_run`]: running one twin and making its `RunResult`;
//! - [`gc_log`]: the `-Xlog:gc*,safepoint` parser (pauses with time to safepoint, ZGC's
//!   allocation and relocation stalls, collections).

pub mod collector;
pub mod gc_log;
pub mod jdk;
pub mod sweep_runs;
pub mod twin_run;

pub use collector::{JvmCollector, JvmSpec};
