//! The harness's workloads by name (their options are in [`crate::params`]; a
//! [`RunConfig`](crate::RunConfig) records the effective values so that `results.json` says
//! exactly what ran).

use clap::ValueEnum;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A workload of the harness.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum Workload {
    /// A long-lived graph of small binary trees (live set scales with the heap), replaced and
    /// mutated at random, plus short-lived byte arrays.
    HeapChurn,
    /// The Benchmarks Game program: stretch tree, long-lived tree, iterations per depth.
    BinaryTrees,
    /// A bounded map (hash index + recency list in the heap) with random get/put.
    LruCache,
    /// Producers publish to queues and topics; consumed messages become garbage.
    MessageEngine,
    /// A loopback TCP echo server whose threads are mutators, each request held in a heap,
    /// direct or pooled buffer.
    BufferEcho,
}

impl Workload {
    /// Every workload, in report order.
    pub const ALL: [Workload; 5] = [
        Workload::HeapChurn,
        Workload::BinaryTrees,
        Workload::LruCache,
        Workload::MessageEngine,
        Workload::BufferEcho,
    ];

    /// The command-line and JSON name (`heap-churn`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Workload::HeapChurn => "heap-churn",
            Workload::BinaryTrees => "binary-trees",
            Workload::LruCache => "lru-cache",
            Workload::MessageEngine => "message-engine",
            Workload::BufferEcho => "buffer-echo",
        }
    }

    /// True for workloads that serve requests and so record a request-latency histogram.
    pub fn has_requests(self) -> bool {
        matches!(
            self,
            Workload::LruCache | Workload::MessageEngine | Workload::BufferEcho
        )
    }

    /// True for workloads that take `--buffers heap|direct|pooled`.
    pub fn takes_buffers(self) -> bool {
        matches!(self, Workload::MessageEngine | Workload::BufferEcho)
    }

    /// The names of the workloads that take `--buffers`.
    pub fn with_buffers() -> Vec<&'static str> {
        Workload::ALL
            .into_iter()
            .filter(|w| w.takes_buffers())
            .map(Workload::name)
            .collect()
    }
}

impl fmt::Display for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Workload {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Workload::ALL
            .into_iter()
            .find(|w| w.name() == s.trim())
            .ok_or_else(|| {
                let names: Vec<&str> = Workload::ALL.iter().map(|w| w.name()).collect();
                format!("unknown workload {s:?}: use one of {}", names.join(", "))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_round_trip() {
        for w in Workload::ALL {
            assert_eq!(w.name().parse::<Workload>().unwrap(), w);
            assert_eq!(serde_json::to_value(w).unwrap(), json!(w.name()));
            // clap's value names are the same as ours.
            assert_eq!(w.to_possible_value().unwrap().get_name(), w.name());
        }
        let err = "heap_churn".parse::<Workload>().unwrap_err();
        assert!(
            err.contains("heap-churn, binary-trees, lru-cache, message-engine, buffer-echo"),
            "{err}"
        );
    }
}
