//! The one place the harness enters the collector runtime: [`run_workload`] turns a
//! [`RunConfig`] into a [`RunResult`] by running the workload on a real heap.
//!
//! **Not implemented yet**: `gc-runtime` (heap creation, mutators, safepoints, the GC cycle)
//! is being written; until it exists this function returns [`RUNTIME_MISSING`] and the CLI
//! reports that and exits with status 2. Everything around it (validation, sweep order,
//! progress, analysis, every output file) is done and tested with constructed results.
//!
//! # TODO(runtime): what `run_workload` must do
//!
//! 1. Create the heap: `gc_core::HeapConfig::new(config.heap_bytes)` in `config.mode`; note
//!    the wall clock (`heap_created_unix_ms`). All `GcStats` times count from this moment.
//! 2. Attach `config.threads` mutators and build the workload's live set
//!    (`config.live_set_bytes`, `config.params`; see `crate::workload` for the meaning of each
//!    parameter and `RunConfig::param_u64` / `param_f64` to read them), seeded by
//!    `config.seed`.
//! 3. Start the hiccup meter (`crate::hiccup`: an extra attached mutator running
//!    `hiccup::meter_loop`), then take `measure_start_at_ns` from the heap clock.
//! 4. Run operations for `config.duration_ms`, counting them (and, for lru-cache and
//!    message-engine, recording request latency into a `LatencyHistogram`, with
//!    `record_correct` against the intended schedule when throttled).
//! 5. Stop the meter and the mutators; `wall_ns` = measured phase length,
//!    `ops_per_sec = RunResult::throughput(operations, wall_ns)`.
//! 6. Read the runtime's `GcStats`, the peak committed bytes (collector accounting) and
//!    `gc_core::proc_info::process_memory()` (Pss, RSS) *before* dropping the heap.
//! 7. Drop the heap (so the next run of a sweep starts from a clean process footprint) and
//!    return the `RunResult`. Errors (heap creation, out of memory) are `Err(message)`.
//!
//! The caller then hands the results to [`crate::report::write_reports`] and prints
//! [`crate::report::markdown_report`], which `crate::sweep::finish` does.

use crate::run_result::{RunConfig, RunResult};

/// The error [`run_workload`] returns until the collector runtime exists.
pub const RUNTIME_MISSING: &str = "the collector runtime is not built yet";

/// Run one workload on a fresh heap and return what it measured.
pub fn run_workload(config: &RunConfig) -> Result<RunResult, String> {
    // The collector runtime (gc-runtime) has no heap or mutator API yet: nothing can run.
    // Replace this with the steps in the module documentation once it does.
    let _ = config;
    Err(RUNTIME_MISSING.into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_result::Mode;
    use crate::workload::Workload;

    #[test]
    fn says_the_runtime_is_missing_instead_of_pretending() {
        let c = RunConfig::new(
            Workload::HeapChurn,
            Mode::Concurrent,
            256 << 20,
            128 << 20,
            1,
        );
        assert_eq!(run_workload(&c).unwrap_err(), RUNTIME_MISSING);
    }
}
