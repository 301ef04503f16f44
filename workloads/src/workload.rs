//! The contract of a workload: [`Workload`] is everything the harness needs to know of one
//! program it can run on the collector (its name, its options, how one mutator thread runs
//! it), so that adding a workload is its own file plus one line of the registry in
//! [`crate::workloads`], which builds the name enum, the options enum of `results.json`, the
//! subcommand and the runner's dispatch from these items. A workload plays the part a
//! benchmark of a suite (DaCapo, SPECjbb) plays for ZGC: a program whose allocation and
//! pointer writes the collector must keep up with.

use crate::buffer_kind::BufferKind;
use crate::ctx::Ctx;
use crate::latency::LatencyHistogram;
use gc_runtime::Mutator;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::fmt::Debug;

/// A workload of the harness. Its items are associated constants and functions (no `self`):
/// a workload type is a name for a program, its state lives on the mutator threads.
pub trait Workload {
    /// The command-line and JSON name (`heap-churn`): its subcommand, its `--workload` value
    /// and `RunConfig::workload` in `results.json`.
    const NAME: &'static str;
    /// One line for the list of `--workload` values.
    const SUMMARY: &'static str;
    /// The help of its subcommand (one paragraph).
    const ABOUT: &'static str;
    /// Its subcommand's option that sets the live set in MiB instead of `--live-fraction`, if
    /// it has one.
    const LIVE_OPTION: Option<LiveOption> = None;
    /// True when it serves requests and so records a request-latency histogram.
    const HAS_REQUESTS: bool = false;

    /// Its options: flattened by clap into its subcommand, written by serde into
    /// `results.json` as one object with a key per option (`deny_unknown_fields`, so that the
    /// keys tell the workloads apart), and at their defaults in `Default`.
    type Params: clap::Args + Serialize + DeserializeOwned + Default + Clone + Debug + PartialEq;

    /// Where it keeps its I/O buffers, for a workload that takes `--buffers`.
    fn buffers(_params: &Self::Params) -> Option<BufferKind> {
        None
    }

    /// The buffer kind to set for `--buffers`; `None` for a workload without buffers.
    fn buffers_mut(_params: &mut Self::Params) -> Option<&mut BufferKind> {
        None
    }

    /// Check what clap cannot check option by option.
    fn validate(_params: &Self::Params) -> Result<(), String> {
        Ok(())
    }

    /// Run the workload on one mutator thread: build this thread's share of the live set, call
    /// [`Ctx::ready`], then run operations while [`Ctx::running`].
    fn run(ctx: &Ctx<'_>, m: &mut Mutator, params: &Self::Params) -> Result<ThreadOutcome, String>;
}

/// A subcommand option that sets the live set in MiB (`--live-mb`, `--retention-mb`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LiveOption {
    /// The long option name, without the dashes.
    pub long: &'static str,
    /// Its help.
    pub help: &'static str,
}

/// What one workload thread did in the measured phase.
#[derive(Default)]
pub struct ThreadOutcome {
    pub operations: u64,
    /// Request latencies, for workloads that serve requests.
    pub latency: Option<LatencyHistogram>,
}

/// Heap bytes of an object with `n_refs` reference slots and `n_bytes` raw bytes, as the
/// collector lays it out ([`gc_core::object_size`]); `u64::MAX` for a size no heap holds. The
/// workloads size their live sets with it.
pub fn object_bytes(n_refs: u64, n_bytes: u64) -> u64 {
    gc_core::object_size(n_refs, n_bytes).unwrap_or(u64::MAX)
}
