//! `heap-churn`: a live set that scales with the heap, churned at a steady rate.
//!
//! A long-lived graph of small complete binary trees (`--subgraph-nodes` nodes each; a node has
//! left, right and payload references and an integer id) is held in a chunked root table
//! (chunks of 16384 slots, themselves heap objects), sized so the graph is this thread's share
//! of the live-set target. One operation: replace the tree in a random slot with a freshly
//! built one; `--mutations` times walk 0–3 levels down a random tree and store a fresh payload
//! object (two integers) there; allocate a short-lived byte array of `--garbage-bytes`
//! (uniformly 50–150%) into a ring of 1024 entries.

use crate::workload::LiveOption;
use clap::Args;
use serde::{Deserialize, Serialize};
use crate::ctx::Ctx;
use crate::pacer::Pacer;
use crate::workload::{object_bytes, ThreadOutcome, Workload};
use gc_runtime::{Local, Mutator, Scope};
use rand::Rng;

/// The defaults of the options, each written once and used by both `Default` and clap.
pub mod defaults {
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

/// `heap-churn` options.
#[derive(Args, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeapChurnParams {
    /// Nodes per small binary tree of the graph (a node: left, right, payload, int id).
    #[arg(long, value_name = "N", default_value_t = defaults::SUBGRAPH_NODES,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub subgraph_nodes: u64,
    /// Per operation, how many times to walk 0–3 levels down a random tree and store a fresh
    /// small payload object there.
    #[arg(long, value_name = "N", default_value_t = defaults::MUTATIONS)]
    pub mutations: u64,
    /// Mean size of the short-lived byte array allocated per operation (uniform 50–150%),
    /// kept in a ring of 1024 entries.
    #[arg(long, value_name = "BYTES", default_value_t = defaults::GARBAGE_BYTES)]
    pub garbage_bytes: u64,
    /// Operations per second per thread; 0 = as fast as possible.
    #[arg(long, value_name = "N", default_value_t = defaults::OPS_PER_SEC)]
    pub ops_per_sec: u64,
    /// Slots per root-table chunk (not an option: recorded so results say what ran).
    #[arg(skip = defaults::ROOT_CHUNK_SLOTS)]
    pub root_chunk_slots: u64,
    /// Entries of the short-lived array ring (not an option).
    #[arg(skip = defaults::GARBAGE_RING)]
    pub garbage_ring: u64,
}

impl Default for HeapChurnParams {
    fn default() -> Self {
        HeapChurnParams {
            subgraph_nodes: defaults::SUBGRAPH_NODES,
            mutations: defaults::MUTATIONS,
            garbage_bytes: defaults::GARBAGE_BYTES,
            ops_per_sec: defaults::OPS_PER_SEC,
            root_chunk_slots: defaults::ROOT_CHUNK_SLOTS,
            garbage_ring: defaults::GARBAGE_RING,
        }
    }
}

/// The `heap-churn` workload.
pub struct HeapChurnWorkload;

impl Workload for HeapChurnWorkload {
    const NAME: &'static str = "heap-churn";
    const SUMMARY: &'static str = "A long-lived graph of small binary trees (live set scales with \
         the heap), replaced and mutated at random, plus short-lived byte arrays";
    const ABOUT: &'static str = "Run heap-churn alone: a long-lived graph of small binary trees \
         (the live set) held in a chunked root table; each operation replaces a random tree, \
         stores fresh payloads into random trees and allocates a short-lived byte array";
    const LIVE_OPTION: Option<LiveOption> = Some(LiveOption {
        long: "live-mb",
        help: "Size of the long-lived graph in MiB [default: --live-fraction of the heap, i.e. \
             50%]",
    });
    type Params = HeapChurnParams;

    fn run(ctx: &Ctx<'_>, m: &mut Mutator, p: &HeapChurnParams) -> Result<ThreadOutcome, String> {
        run(ctx, m, p)
    }
}

const NODE: u32 = 1;
const PAYLOAD: u32 = 2;
const CHUNK: u32 = 3;
const TABLE: u32 = 4;
const GARBAGE: u32 = 5;
const RING: u32 = 6;

/// Bytes of one node: header, three reference slots, an 8-byte id.
fn node_bytes() -> u64 {
    object_bytes(3, 8)
}

/// Build a complete binary tree of `nodes` nodes; returns its root, rooted in `s`.
fn build_tree<'s>(s: &mut Scope<'s>, nodes: usize, next_id: &mut u64) -> Result<Local<'s>, String> {
    let mut err = None;
    let root = s.scope_escape(|s| {
        let mut level: Vec<Local<'_>> = Vec::with_capacity(nodes);
        for _ in 0..nodes {
            match s.alloc(NODE, 3, 8) {
                Ok(n) => {
                    *next_id += 1;
                    s.get(n).write_u64(0, *next_id);
                    level.push(n);
                }
                Err(e) => {
                    err = Some(e.to_string());
                    return None;
                }
            }
        }
        for i in 1..nodes {
            let parent = (i - 1) / 2;
            let side = if i % 2 == 1 { 0 } else { 1 };
            s.store(level[parent], side, Some(level[i]));
        }
        level.first().copied()
    });
    match (root, err) {
        (Some(r), _) => Ok(r),
        (None, Some(e)) => Err(e),
        (None, None) => Err("a tree needs at least one node".into()),
    }
}

/// Run heap-churn on one mutator thread.
pub fn run(ctx: &Ctx<'_>, m: &mut Mutator, p: &HeapChurnParams) -> Result<ThreadOutcome, String> {
    let nodes = p.subgraph_nodes.max(1) as usize;
    let mutations = p.mutations;
    let garbage_bytes = p.garbage_bytes;
    // Per thread, as the CLI documents.
    let ops_per_sec = p.ops_per_sec as f64;
    let chunk_slots = p.root_chunk_slots.max(1);
    let ring_len = p.garbage_ring.max(1);
    let mut rng = ctx.rng();
    // Each tree costs its nodes plus one table slot.
    let tree_bytes = nodes as u64 * node_bytes() + 8;
    let trees = (ctx.live_bytes() / tree_bytes).max(1);
    let chunks = trees.div_ceil(chunk_slots);
    let mut next_id = u64::from(ctx.thread) << 48;
    m.scope(|s| {
        let oom = |e: gc_runtime::OutOfMemory| format!("heap-churn: {e}");
        let table = s.alloc(TABLE, chunks as u32, 0).map_err(oom)?;
        let ring = s.alloc(RING, ring_len as u32, 0).map_err(oom)?;
        for c in 0..chunks {
            let slots = chunk_slots.min(trees - c * chunk_slots);
            let chunk = s.alloc(CHUNK, slots as u32, 0).map_err(oom)?;
            s.store(table, c as usize, Some(chunk));
        }
        // Build the live set.
        for t in 0..trees {
            s.scope(|s| -> Result<(), String> {
                let tree = build_tree(s, nodes, &mut next_id)?;
                let chunk = s.load(table, (t / chunk_slots) as usize).expect("chunk");
                s.store(chunk, (t % chunk_slots) as usize, Some(tree));
                Ok(())
            })?;
        }
        ctx.ready(s);
        let mut pacer = Pacer::new(ops_per_sec);
        let mut ops = 0u64;
        while ctx.running() {
            pacer.wait(s);
            s.scope(|s| -> Result<(), String> {
                // Replace a random tree.
                let t = rng.random_range(0..trees);
                let tree = build_tree(s, nodes, &mut next_id)?;
                {
                    let table = s.get(table);
                    let chunk = table.load((t / chunk_slots) as usize).expect("chunk");
                    chunk.store((t % chunk_slots) as usize, Some(s.get(tree)));
                }
                // Store fresh payloads 0-3 levels down random trees.
                for _ in 0..mutations {
                    let payload = s.alloc(PAYLOAD, 0, 16).map_err(oom)?;
                    let t = rng.random_range(0..trees);
                    let depth = rng.random_range(0..=3);
                    let p = s.get(payload);
                    p.write_u64(0, ops);
                    p.write_u64(8, t);
                    let chunk = s
                        .get(table)
                        .load((t / chunk_slots) as usize)
                        .expect("chunk");
                    let mut node = chunk.load((t % chunk_slots) as usize).expect("tree");
                    for _ in 0..depth {
                        match node.load(rng.random_range(0..2)) {
                            Some(child) => node = child,
                            None => break,
                        }
                    }
                    node.store(2, Some(p));
                }
                // Short-lived garbage.
                let size = (garbage_bytes as f64 * rng.random_range(0.5..1.5)) as usize;
                let g = s.alloc(GARBAGE, 0, size).map_err(oom)?;
                s.get(ring).store((ops % ring_len) as usize, Some(s.get(g)));
                Ok(())
            })?;
            ops += 1;
        }
        Ok(ThreadOutcome {
            operations: ops,
            latency: None,
        })
    })
}
