//! The workloads of issue 5 by name, with the defaults of their options. The defaults live here
//! once, for the per-workload subcommands and for the sweep (which runs a workload with its
//! defaults); a [`RunConfig`](crate::RunConfig) records the effective values in its `params`
//! map so that `results.json` says exactly what ran.

use clap::ValueEnum;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::BTreeMap;
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
}

impl Workload {
    /// Every workload, in the order of the issue.
    pub const ALL: [Workload; 4] = [
        Workload::HeapChurn,
        Workload::BinaryTrees,
        Workload::LruCache,
        Workload::MessageEngine,
    ];

    /// The command-line and JSON name (`heap-churn`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Workload::HeapChurn => "heap-churn",
            Workload::BinaryTrees => "binary-trees",
            Workload::LruCache => "lru-cache",
            Workload::MessageEngine => "message-engine",
        }
    }

    /// True for workloads that serve requests and so record a request-latency histogram.
    pub fn has_requests(self) -> bool {
        matches!(self, Workload::LruCache | Workload::MessageEngine)
    }

    /// The workload's parameters with every option at its default. The live-set target (or
    /// retention window) is not among them: it is `RunConfig::live_set_bytes`.
    pub fn default_params(self) -> BTreeMap<String, Value> {
        let pairs: Vec<(&str, Value)> = match self {
            Workload::HeapChurn => vec![
                ("subgraph_nodes", json!(heap_churn::SUBGRAPH_NODES)),
                ("mutations", json!(heap_churn::MUTATIONS)),
                ("garbage_bytes", json!(heap_churn::GARBAGE_BYTES)),
                ("ops_per_sec", json!(heap_churn::OPS_PER_SEC)),
                ("root_chunk_slots", json!(heap_churn::ROOT_CHUNK_SLOTS)),
                ("garbage_ring", json!(heap_churn::GARBAGE_RING)),
            ],
            // No "depth": the runner derives it from the live-set target.
            Workload::BinaryTrees => vec![("min_depth", json!(binary_trees::MIN_DEPTH))],
            Workload::LruCache => vec![
                ("hit_rate", json!(lru_cache::HIT_RATE)),
                ("get_fraction", json!(lru_cache::GET_FRACTION)),
                ("min_value_bytes", json!(lru_cache::MIN_VALUE_BYTES)),
                ("max_value_bytes", json!(lru_cache::MAX_VALUE_BYTES)),
                ("ops_per_sec", json!(lru_cache::OPS_PER_SEC)),
            ],
            Workload::MessageEngine => vec![
                ("queues", json!(message_engine::QUEUES)),
                ("topics", json!(message_engine::TOPICS)),
                (
                    "subscribers_per_topic",
                    json!(message_engine::SUBSCRIBERS_PER_TOPIC),
                ),
                ("headers", json!(message_engine::HEADERS)),
                ("body_bytes", json!(message_engine::BODY_BYTES)),
                ("messages_per_sec", json!(message_engine::MESSAGES_PER_SEC)),
            ],
        };
        pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
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

/// Defaults of `heap-churn`.
pub mod heap_churn {
    /// Nodes per small binary tree.
    pub const SUBGRAPH_NODES: u64 = 16;
    /// Payload stores per operation.
    pub const MUTATIONS: u64 = 1;
    /// Mean size of the short-lived byte array per operation (uniform 50–150%).
    pub const GARBAGE_BYTES: u64 = 512;
    /// Operation rate limit; 0 = unthrottled.
    pub const OPS_PER_SEC: u64 = 0;
    /// Slots per root-table chunk (each chunk is itself a heap object).
    pub const ROOT_CHUNK_SLOTS: u64 = 16_384;
    /// Entries of the ring holding the short-lived arrays.
    pub const GARBAGE_RING: u64 = 1024;
}

/// Defaults of `binary-trees`.
pub mod binary_trees {
    /// The Benchmarks Game's minimum depth.
    pub const MIN_DEPTH: u64 = 4;
}

/// Defaults of `lru-cache`.
pub mod lru_cache {
    /// Target fraction of gets that hit.
    pub const HIT_RATE: f64 = 0.9;
    /// Fraction of requests that are gets (the rest are puts).
    pub const GET_FRACTION: f64 = 0.9;
    /// Smallest value size.
    pub const MIN_VALUE_BYTES: u64 = 64;
    /// Largest value size.
    pub const MAX_VALUE_BYTES: u64 = 4096;
    /// Request rate limit; 0 = unthrottled.
    pub const OPS_PER_SEC: u64 = 0;
}

/// Defaults of `message-engine`.
pub mod message_engine {
    /// Point-to-point queues (each message consumed once).
    pub const QUEUES: u64 = 10;
    /// Publish-subscribe topics (each message consumed by every subscriber).
    pub const TOPICS: u64 = 90;
    /// Subscribers of each topic.
    pub const SUBSCRIBERS_PER_TOPIC: u64 = 3;
    /// Header entries per message.
    pub const HEADERS: u64 = 8;
    /// Mean body size.
    pub const BODY_BYTES: u64 = 1024;
    /// Publish rate limit; 0 = unthrottled.
    pub const MESSAGES_PER_SEC: u64 = 0;
}

#[cfg(test)]
mod tests {
    use super::*;

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
            err.contains("heap-churn, binary-trees, lru-cache, message-engine"),
            "{err}"
        );
    }

    #[test]
    fn default_params_name_the_issue_options() {
        let p = Workload::HeapChurn.default_params();
        assert_eq!(p["subgraph_nodes"], json!(16));
        assert_eq!(p["garbage_bytes"], json!(512));
        assert_eq!(p["mutations"], json!(1));
        assert_eq!(p["ops_per_sec"], json!(0));
        assert!(!Workload::BinaryTrees.default_params().contains_key("depth"));
        assert_eq!(
            Workload::MessageEngine.default_params()["topics"],
            json!(90)
        );
    }
}
