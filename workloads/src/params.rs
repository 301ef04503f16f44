//! Workload parameters: one typed struct per workload, which is at once the workload's
//! command-line options (clap, flattened into its subcommand), its JSON form in
//! `results.json` (serde: an object with one key per option) and what the workload function
//! reads. Each default is written once, as a constant next to its struct, and used by both
//! `Default` and clap.
//!
//! The live-set target (or retention window) is not among them: it is
//! `RunConfig::live_set_bytes`, shared by every workload.

use crate::buffer_kind::BufferKind;
use crate::workload::Workload;
use clap::Args;
use serde::{Deserialize, Serialize};

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

/// Defaults of `buffer-echo`.
pub mod buffer_echo {
    /// Message size: 4 KiB, every message alike.
    pub const MESSAGE_SIZE: &str = "4K";
    /// Connections per server thread.
    pub const CONNECTIONS: u64 = 4;
    /// The largest message (and `--connections`' upper bound).
    pub const MAX_MESSAGE_BYTES: u64 = 16 << 20;
    pub const MAX_CONNECTIONS: u64 = 64;
    /// Request rate limit; 0 = unthrottled.
    pub const REQUESTS_PER_SEC: u64 = 0;
}

/// A range of message sizes, `--message-size 4K` (all alike) or `1K-16K` (uniform).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageSize {
    pub min_bytes: u64,
    pub max_bytes: u64,
}

impl std::fmt::Display for MessageSize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let b = |n: u64| gc_core::format_size(n);
        if self.min_bytes == self.max_bytes {
            f.write_str(&b(self.min_bytes))
        } else {
            write!(f, "{}-{}", b(self.min_bytes), b(self.max_bytes))
        }
    }
}

/// Parse `--message-size`: a size (`4096`, `4K`) or a range `MIN-MAX` (`1K-16K`), each at
/// least 1 byte and at most 16M.
pub fn parse_message_size(s: &str) -> Result<MessageSize, String> {
    let one = |t: &str| -> Result<u64, String> {
        let n = gc_core::parse_size(t.trim())
            .map_err(|e| format!("--message-size {s:?}: {e}; give e.g. 4K or 1K-16K"))?;
        if n == 0 {
            return Err(format!(
                "--message-size {s:?}: a message needs at least 1 byte; give e.g. 4K or 1K-16K"
            ));
        }
        if n > buffer_echo::MAX_MESSAGE_BYTES {
            return Err(format!(
                "--message-size {s:?}: at most 16M per message; give e.g. 4K or 1K-16K"
            ));
        }
        Ok(n)
    };
    let (min, max) = match s.split_once('-') {
        Some((a, b)) => (one(a)?, one(b)?),
        None => {
            let n = one(s)?;
            (n, n)
        }
    };
    if min > max {
        return Err(format!(
            "--message-size {s:?}: the range's smaller size comes first, e.g. 1K-16K"
        ));
    }
    Ok(MessageSize {
        min_bytes: min,
        max_bytes: max,
    })
}

/// `buffer-echo` options.
#[derive(Args, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BufferEchoParams {
    /// Where the server keeps each request while echoing it: heap (a collector object, bytes
    /// copied in and out), direct (Scope::alloc_direct per request: a native mapping of its
    /// own) or pooled (Scope::alloc_pooled from one native pool shared by the server threads).
    /// The last requests stay in a replay log of --live-fraction of the heap, in every kind.
    #[arg(long, value_enum, value_name = "KIND", default_value_t = BufferKind::Heap)]
    pub buffers: BufferKind,
    /// Message size: one size (4K) or a range MIN-MAX (1K-16K, uniform), 1 byte to 16M.
    #[arg(long, value_name = "SIZE", value_parser = parse_message_size,
          default_value = buffer_echo::MESSAGE_SIZE)]
    pub message_size: MessageSize,
    /// Loopback connections per server thread, one client thread each; the server answers
    /// them in turn, one request at a time.
    #[arg(long, value_name = "N", default_value_t = buffer_echo::CONNECTIONS,
          value_parser = clap::value_parser!(u64).range(1..=buffer_echo::MAX_CONNECTIONS))]
    pub connections: u64,
    /// Requests per second per server thread; 0 = as fast as the server answers (latency
    /// is then measured without a schedule and not corrected for coordinated omission).
    #[arg(long, value_name = "N", default_value_t = buffer_echo::REQUESTS_PER_SEC)]
    pub requests_per_sec: u64,
    /// Release each direct or pooled buffer once its echo is written (on), or drop it and
    /// leave the memory to the owner's cleaner when the collector finds it dead (off).
    #[arg(long, value_name = "on|off", default_value = "on", value_parser = crate::cli::parse_on_off,
          action = clap::ArgAction::Set)]
    pub release: bool,
}

impl Default for BufferEchoParams {
    fn default() -> Self {
        BufferEchoParams {
            buffers: BufferKind::Heap,
            message_size: parse_message_size(buffer_echo::MESSAGE_SIZE)
                .expect("the default message size parses"),
            connections: buffer_echo::CONNECTIONS,
            requests_per_sec: buffer_echo::REQUESTS_PER_SEC,
            release: true,
        }
    }
}

/// `heap-churn` options.
#[derive(Args, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeapChurnParams {
    /// Nodes per small binary tree of the graph (a node: left, right, payload, int id).
    #[arg(long, value_name = "N", default_value_t = heap_churn::SUBGRAPH_NODES,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub subgraph_nodes: u64,
    /// Per operation, how many times to walk 0–3 levels down a random tree and store a fresh
    /// small payload object there.
    #[arg(long, value_name = "N", default_value_t = heap_churn::MUTATIONS)]
    pub mutations: u64,
    /// Mean size of the short-lived byte array allocated per operation (uniform 50–150%),
    /// kept in a ring of 1024 entries.
    #[arg(long, value_name = "BYTES", default_value_t = heap_churn::GARBAGE_BYTES)]
    pub garbage_bytes: u64,
    /// Operations per second per thread; 0 = as fast as possible.
    #[arg(long, value_name = "N", default_value_t = heap_churn::OPS_PER_SEC)]
    pub ops_per_sec: u64,
    /// Slots per root-table chunk (not an option: recorded so results say what ran).
    #[arg(skip = heap_churn::ROOT_CHUNK_SLOTS)]
    pub root_chunk_slots: u64,
    /// Entries of the short-lived array ring (not an option).
    #[arg(skip = heap_churn::GARBAGE_RING)]
    pub garbage_ring: u64,
}

impl Default for HeapChurnParams {
    fn default() -> Self {
        HeapChurnParams {
            subgraph_nodes: heap_churn::SUBGRAPH_NODES,
            mutations: heap_churn::MUTATIONS,
            garbage_bytes: heap_churn::GARBAGE_BYTES,
            ops_per_sec: heap_churn::OPS_PER_SEC,
            root_chunk_slots: heap_churn::ROOT_CHUNK_SLOTS,
            garbage_ring: heap_churn::GARBAGE_RING,
        }
    }
}

/// `binary-trees` options.
#[derive(Args, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BinaryTreesParams {
    /// The smallest depth of the short-lived trees (not an option).
    #[arg(skip = binary_trees::MIN_DEPTH)]
    pub min_depth: u64,
    /// Maximum tree depth (the long-lived tree's depth; the stretch tree is one deeper)
    /// [default: the deepest whose long-lived tree fits --live-fraction of the heap].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(4..=30))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<u64>,
}

impl Default for BinaryTreesParams {
    fn default() -> Self {
        BinaryTreesParams {
            min_depth: binary_trees::MIN_DEPTH,
            depth: None,
        }
    }
}

/// `lru-cache` options.
#[derive(Args, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LruCacheParams {
    /// Target fraction of gets that hit (sets the key space relative to the capacity).
    #[arg(long, value_name = "F", value_parser = crate::cli::parse_unit_interval,
          default_value_t = lru_cache::HIT_RATE)]
    pub hit_rate: f64,
    /// Fraction of requests that are gets; the rest are puts.
    #[arg(long, value_name = "F", value_parser = crate::cli::parse_unit_interval,
          default_value_t = lru_cache::GET_FRACTION)]
    pub get_fraction: f64,
    /// Smallest value size.
    #[arg(long, value_name = "BYTES", default_value_t = lru_cache::MIN_VALUE_BYTES)]
    pub min_value_bytes: u64,
    /// Largest value size.
    #[arg(long, value_name = "BYTES", default_value_t = lru_cache::MAX_VALUE_BYTES)]
    pub max_value_bytes: u64,
    /// Requests per second per thread; 0 = as fast as possible (latency is then measured
    /// without a schedule and not corrected for coordinated omission).
    #[arg(long, value_name = "N", default_value_t = lru_cache::OPS_PER_SEC)]
    pub ops_per_sec: u64,
}

impl Default for LruCacheParams {
    fn default() -> Self {
        LruCacheParams {
            hit_rate: lru_cache::HIT_RATE,
            get_fraction: lru_cache::GET_FRACTION,
            min_value_bytes: lru_cache::MIN_VALUE_BYTES,
            max_value_bytes: lru_cache::MAX_VALUE_BYTES,
            ops_per_sec: lru_cache::OPS_PER_SEC,
        }
    }
}

/// `message-engine` options.
#[derive(Args, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageEngineParams {
    /// Point-to-point queues (each message consumed once).
    #[arg(long, value_name = "N", default_value_t = message_engine::QUEUES)]
    pub queues: u64,
    /// Publish-subscribe topics (each message consumed by every subscriber).
    #[arg(long, value_name = "N", default_value_t = message_engine::TOPICS)]
    pub topics: u64,
    /// Subscribers per topic.
    #[arg(long, value_name = "N", default_value_t = message_engine::SUBSCRIBERS_PER_TOPIC,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub subscribers_per_topic: u64,
    /// Header entries per message (a map of small strings).
    #[arg(long, value_name = "N", default_value_t = message_engine::HEADERS)]
    pub headers: u64,
    /// Mean message body size.
    #[arg(long, value_name = "BYTES", default_value_t = message_engine::BODY_BYTES)]
    pub body_bytes: u64,
    /// Messages published per second per producer thread; 0 = as fast as possible.
    #[arg(long, value_name = "N", default_value_t = message_engine::MESSAGES_PER_SEC)]
    pub messages_per_sec: u64,
    /// Where message bodies live: heap (byte-array objects), direct (Scope::alloc_direct per
    /// body: a native mapping each, freed by the cleaner once the message is garbage) or
    /// pooled (Scope::alloc_pooled from one native pool shared by the producer threads).
    #[arg(long, value_enum, value_name = "KIND", default_value_t = BufferKind::Heap)]
    #[serde(default)]
    pub buffers: BufferKind,
}

impl Default for MessageEngineParams {
    fn default() -> Self {
        MessageEngineParams {
            queues: message_engine::QUEUES,
            topics: message_engine::TOPICS,
            subscribers_per_topic: message_engine::SUBSCRIBERS_PER_TOPIC,
            headers: message_engine::HEADERS,
            body_bytes: message_engine::BODY_BYTES,
            messages_per_sec: message_engine::MESSAGES_PER_SEC,
            buffers: BufferKind::Heap,
        }
    }
}

/// The parameters of one run's workload. In JSON it is just the workload's options object;
/// which workload it belongs to is `RunConfig::workload` (and the keys tell them apart).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum WorkloadParams {
    HeapChurn(HeapChurnParams),
    BinaryTrees(BinaryTreesParams),
    LruCache(LruCacheParams),
    MessageEngine(MessageEngineParams),
    BufferEcho(BufferEchoParams),
}

impl WorkloadParams {
    /// Every option of `w` at its default.
    pub fn defaults(w: Workload) -> Self {
        match w {
            Workload::HeapChurn => WorkloadParams::HeapChurn(HeapChurnParams::default()),
            Workload::BinaryTrees => WorkloadParams::BinaryTrees(BinaryTreesParams::default()),
            Workload::LruCache => WorkloadParams::LruCache(LruCacheParams::default()),
            Workload::MessageEngine => {
                WorkloadParams::MessageEngine(MessageEngineParams::default())
            }
            Workload::BufferEcho => WorkloadParams::BufferEcho(BufferEchoParams::default()),
        }
    }

    /// The workload these parameters belong to.
    pub fn workload(&self) -> Workload {
        match self {
            WorkloadParams::HeapChurn(_) => Workload::HeapChurn,
            WorkloadParams::BinaryTrees(_) => Workload::BinaryTrees,
            WorkloadParams::LruCache(_) => Workload::LruCache,
            WorkloadParams::MessageEngine(_) => Workload::MessageEngine,
            WorkloadParams::BufferEcho(_) => Workload::BufferEcho,
        }
    }

    /// The buffer kind of a workload that takes `--buffers`, `None` for the others.
    pub fn buffers(&self) -> Option<BufferKind> {
        match self {
            WorkloadParams::MessageEngine(p) => Some(p.buffers),
            WorkloadParams::BufferEcho(p) => Some(p.buffers),
            _ => None,
        }
    }

    /// Set the buffer kind; an error naming the workloads that take `--buffers` for the others.
    pub fn set_buffers(&mut self, kind: BufferKind) -> Result<(), String> {
        match self {
            WorkloadParams::MessageEngine(p) => p.buffers = kind,
            WorkloadParams::BufferEcho(p) => p.buffers = kind,
            other => {
                return Err(format!(
                    "--buffers: {} keeps no I/O buffers; it applies to {} only (drop --buffers or \
                     pick one of them with --workload)",
                    other.workload(),
                    Workload::with_buffers().join(" and ")
                ))
            }
        }
        Ok(())
    }

    /// Check what clap cannot check option by option.
    pub fn validate(&self) -> Result<(), String> {
        match self {
            WorkloadParams::LruCache(p)
                if p.min_value_bytes == 0 || p.min_value_bytes > p.max_value_bytes =>
            {
                Err(format!(
                    "--min-value-bytes {} and --max-value-bytes {}: need 0 < min ≤ max",
                    p.min_value_bytes, p.max_value_bytes
                ))
            }
            WorkloadParams::MessageEngine(p) if p.queues + p.topics == 0 => {
                Err("--queues and --topics are both 0: messages need somewhere to go".into())
            }
            WorkloadParams::BufferEcho(p)
                if p.message_size.min_bytes == 0
                    || p.message_size.min_bytes > p.message_size.max_bytes =>
            {
                Err(format!(
                    "--message-size {}: need 1 byte ≤ min ≤ max",
                    p.message_size
                ))
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_round_trip_through_json_as_plain_objects() {
        for w in Workload::ALL {
            let p = WorkloadParams::defaults(w);
            assert_eq!(p.workload(), w);
            let v = serde_json::to_value(&p).unwrap();
            assert!(v.is_object(), "{w}: {v}");
            let back: WorkloadParams = serde_json::from_value(v).unwrap();
            assert_eq!(back, p);
        }
        let v = serde_json::to_value(WorkloadParams::defaults(Workload::HeapChurn)).unwrap();
        assert_eq!(v["subgraph_nodes"], json!(16));
        assert_eq!(v["garbage_bytes"], json!(512));
        assert_eq!(v["mutations"], json!(1));
        assert_eq!(v["ops_per_sec"], json!(0));
        let v = serde_json::to_value(WorkloadParams::defaults(Workload::BinaryTrees)).unwrap();
        assert!(v.get("depth").is_none(), "{v}");
        let v = serde_json::to_value(WorkloadParams::defaults(Workload::MessageEngine)).unwrap();
        assert_eq!(v["topics"], json!(90));
    }

    #[test]
    fn a_results_file_of_the_string_keyed_form_still_reads() {
        // The options object as results.json has always written it.
        let old = json!({"hit_rate": 0.75, "get_fraction": 0.9, "min_value_bytes": 64,
                         "max_value_bytes": 100, "ops_per_sec": 0});
        let p: WorkloadParams = serde_json::from_value(old).unwrap();
        match p {
            WorkloadParams::LruCache(p) => assert_eq!(p.max_value_bytes, 100),
            other => panic!("read as {other:?}"),
        }
        let bt: WorkloadParams =
            serde_json::from_value(json!({"min_depth": 4, "depth": 18})).unwrap();
        assert_eq!(
            bt,
            WorkloadParams::BinaryTrees(BinaryTreesParams {
                min_depth: 4,
                depth: Some(18)
            })
        );
    }

    #[test]
    fn validation_names_the_options_to_change() {
        let p = LruCacheParams {
            min_value_bytes: 500,
            max_value_bytes: 100,
            ..Default::default()
        };
        let e = WorkloadParams::LruCache(p).validate().unwrap_err();
        assert!(e.contains("--min-value-bytes 500"), "{e}");
        let m = MessageEngineParams {
            queues: 0,
            topics: 0,
            ..Default::default()
        };
        assert!(WorkloadParams::MessageEngine(m).validate().is_err());
    }
}
