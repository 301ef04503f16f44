//! `binary-trees`: the Computer Language Benchmarks Game program on the collector.
//!
//! A tree node is an object with two reference slots (left, right) and no payload; trees are
//! built bottom-up (children before their parent) and checked by counting their nodes. The
//! program: build and check a *stretch* tree of depth `max + 1`; build a *long-lived* tree of
//! depth `max` that stays reachable to the end; then for every depth `d` from `min` to `max` in
//! steps of 2, build and check `2^(max - d + min)` trees of depth `d`, summing their checks.
//! With `--threads`, thread 0 builds the stretch and long-lived trees and the iterations of
//! every depth are dealt out among the threads. The stretch and long-lived trees are the
//! set-up; the measured phase repeats the iteration loop until the duration ends, one
//! operation being one tree built and checked. Checksums follow the original program's
//! output (`stretch tree of depth …`, `N trees of depth d check: …`, `long lived tree …`):
//! nothing is printed, but every sum is verified against its expected value and a mismatch
//! fails the run. `--depth` sets `max`; without it, `max` is the deepest depth whose
//! long-lived tree fits the live-set target and whose peak live data (the stretch tree is
//! twice the long-lived tree; the deepest iterations hold one tree per thread next to it) fits
//! 5/8 of the heap. Trees are powers of two in size, so the long-lived tree ends up between
//! half the target and the target, or a quarter of the heap at the default live fraction
//! (one half), whichever is smaller. The workload uses no randomness.

use clap::Args;
use serde::{Deserialize, Serialize};
use crate::ctx::Ctx;
use crate::workload::{object_bytes, ThreadOutcome, Workload};
use gc_runtime::{Local, Mutator, ObjRef, OutOfMemory, Scope};

/// The defaults of the options, each written once and used by both `Default` and clap.
pub mod defaults {
    /// The Benchmarks Game's minimum depth.
    pub const MIN_DEPTH: u64 = 4;
}

/// `binary-trees` options.
#[derive(Args, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BinaryTreesParams {
    /// The smallest depth of the short-lived trees (not an option).
    #[arg(skip = defaults::MIN_DEPTH)]
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
            min_depth: defaults::MIN_DEPTH,
            depth: None,
        }
    }
}

/// The `binary-trees` workload.
pub struct BinaryTreesWorkload;

impl Workload for BinaryTreesWorkload {
    const NAME: &'static str = "binary-trees";
    const SUMMARY: &'static str = "The Benchmarks Game program: stretch tree, long-lived tree, \
         iterations per depth";
    const ABOUT: &'static str = "Run binary-trees alone: the Benchmarks Game program (stretch \
         tree, long-lived tree, many short-lived trees per depth)";
    type Params = BinaryTreesParams;

    fn run(ctx: &Ctx<'_>, m: &mut Mutator, p: &BinaryTreesParams) -> Result<ThreadOutcome, String> {
        run(ctx, m, p)
    }
}

/// Shape id of a tree node.
const NODE: u32 = 0x11;

/// Heap bytes of one node: header and two reference slots.
pub fn node_bytes() -> u64 {
    object_bytes(2, 0)
}

/// Deepest depth accepted (the CLI's limit; a depth-30 tree is 64 GiB).
pub const MAX_DEPTH: u32 = 30;

/// Subtrees up to this depth (2^(d+1) − 1 nodes) are built without a handle scope of their
/// own (their handles are dropped by the enclosing scope) ...
const FLAT_BUILD_DEPTH: u32 = 3;

/// ... and checked through raw references, without a safepoint poll, 2^7 − 1 nodes at most;
/// deeper levels poll between subtrees so a pause never waits for a whole walk. While a
/// cycle marks or relocates, a walk's loads take the barrier's slow path (mark or copy the
/// node) at tens of nanoseconds each: an unpolled walk of 2^11 nodes, as this once was, held
/// pauses up to 100–160 µs to safepoint. HotSpot polls on every method return, so a Java
/// walk polls at every node; one poll per 127 nodes costs nothing measurable.
const UNPOLLED_CHECK_DEPTH: u32 = 6;

/// Nodes of a complete tree of `depth`, which is what checking it returns.
pub fn tree_nodes(depth: u32) -> u64 {
    (1u64 << (depth + 1)) - 1
}

/// Heap bytes of a complete tree of `depth`.
pub fn tree_bytes(depth: u32) -> u64 {
    tree_nodes(depth) * node_bytes()
}

/// The maximum depth chosen when `--depth` is absent: the deepest (at least `min_depth + 2`)
/// whose long-lived tree fits `live_set_bytes` and whose peak live data fits 5/8 of the heap.
/// The peak is the stretch tree (two long-lived trees' worth) or, in the iterations of depth
/// `max`, the long-lived tree plus one tree per thread.
pub fn default_depth(live_set_bytes: u64, heap_bytes: u64, threads: u32, min_depth: u32) -> u32 {
    let peak_trees = u64::from(threads.max(1)) + 1;
    let room = heap_bytes / 8 * 5;
    let mut d = (min_depth + 2).min(MAX_DEPTH);
    while d < MAX_DEPTH
        && tree_bytes(d + 1) <= live_set_bytes
        && tree_bytes(d + 1).saturating_mul(peak_trees) <= room
    {
        d += 1;
    }
    d
}

/// Build a complete tree of `depth` bottom-up; its root is rooted in `s`.
pub fn bottom_up<'s>(s: &mut Scope<'s>, depth: u32) -> Result<Local<'s>, OutOfMemory> {
    if depth <= FLAT_BUILD_DEPTH {
        return build_flat(s, depth);
    }
    let mut err = None;
    let root = s.scope_escape(|s| match build_node(s, depth, bottom_up) {
        Ok(n) => Some(n),
        Err(e) => {
            err = Some(e);
            None
        }
    });
    match root {
        Some(r) => Ok(r),
        None => Err(err.expect("a failed build records its error")),
    }
}

/// Children (each built by `child`), then the node, in the current scope.
fn build_node<'s>(
    s: &mut Scope<'s>,
    depth: u32,
    child: impl Fn(&mut Scope<'s>, u32) -> Result<Local<'s>, OutOfMemory>,
) -> Result<Local<'s>, OutOfMemory> {
    let left = child(s, depth - 1)?;
    let right = child(s, depth - 1)?;
    let node = s.alloc(NODE, 2, 0)?;
    let n = s.get(node);
    n.store(0, Some(s.get(left)));
    n.store(1, Some(s.get(right)));
    Ok(node)
}

/// A small tree, every node's handle left in `s`.
fn build_flat<'s>(s: &mut Scope<'s>, depth: u32) -> Result<Local<'s>, OutOfMemory> {
    if depth == 0 {
        return s.alloc(NODE, 2, 0);
    }
    build_node(s, depth, build_flat)
}

/// Count the nodes under `o` (no safepoint can happen while `o` is borrowed).
fn check_ref(o: ObjRef<'_>) -> u64 {
    1 + o.load(0).map_or(0, check_ref) + o.load(1).map_or(0, check_ref)
}

/// Count the nodes of the tree of `depth` rooted at `node`, polling for safepoints between
/// subtrees of more than 2^7 − 1 nodes (`UNPOLLED_CHECK_DEPTH`).
pub fn check(s: &mut Scope<'_>, node: Local<'_>, depth: u32) -> u64 {
    if depth <= UNPOLLED_CHECK_DEPTH {
        s.poll();
        return check_ref(s.get(node));
    }
    s.scope(|s| {
        let left = s.load(node, 0);
        let right = s.load(node, 1);
        let mut n = 1;
        if let Some(l) = left {
            n += check(s, l, depth - 1);
        }
        if let Some(r) = right {
            n += check(s, r, depth - 1);
        }
        n
    })
}

/// Build a tree of `depth`, check it and drop it: the workload's operation.
pub fn build_and_check(s: &mut Scope<'_>, depth: u32) -> Result<u64, OutOfMemory> {
    s.scope(|s| {
        let t = bottom_up(s, depth)?;
        Ok(check(s, t, depth))
    })
}

/// `2^(max - d + min)`: how many trees of depth `d` one pass builds.
pub fn iterations(max_depth: u32, min_depth: u32, depth: u32) -> u64 {
    1u64 << (max_depth - depth + min_depth)
}

/// Run the whole Benchmarks Game program once on `s` (one thread) and return its output
/// lines, exactly as the original prints them for argument `n`.
pub fn program(s: &mut Scope<'_>, n: u32, min_depth: u32) -> Result<Vec<String>, String> {
    let max_depth = (min_depth + 2).max(n);
    check_depths(max_depth, min_depth)?;
    let oom = |e: OutOfMemory| format!("binary-trees: {e}");
    let mut out = Vec::new();
    let stretch = max_depth + 1;
    let c = build_and_check(s, stretch).map_err(oom)?;
    out.push(format!("stretch tree of depth {stretch}\t check: {c}"));
    s.scope(|s| -> Result<(), String> {
        let long_lived = bottom_up(s, max_depth).map_err(oom)?;
        for d in (min_depth..=max_depth).step_by(2) {
            let iters = iterations(max_depth, min_depth, d);
            let mut sum = 0;
            for _ in 0..iters {
                sum += build_and_check(s, d).map_err(oom)?;
            }
            out.push(format!("{iters}\t trees of depth {d}\t check: {sum}"));
        }
        let c = check(s, long_lived, max_depth);
        out.push(format!("long lived tree of depth {max_depth}\t check: {c}"));
        Ok(())
    })?;
    Ok(out)
}

fn check_depths(max_depth: u32, min_depth: u32) -> Result<(), String> {
    if max_depth > MAX_DEPTH || min_depth + 2 > max_depth {
        return Err(format!(
            "binary-trees: depths min {min_depth}, max {max_depth}: need min + 2 ≤ max ≤ \
             {MAX_DEPTH}"
        ));
    }
    Ok(())
}

fn verify(what: &str, depth: u32, got: u64, want: u64) -> Result<(), String> {
    if got == want {
        Ok(())
    } else {
        Err(format!(
            "binary-trees: {what} of depth {depth} checks {got}, expected {want}: the heap lost \
             or duplicated nodes"
        ))
    }
}

/// Run binary-trees on one mutator thread.
pub fn run(ctx: &Ctx<'_>, m: &mut Mutator, p: &BinaryTreesParams) -> Result<ThreadOutcome, String> {
    let min_depth = u32::try_from(p.min_depth)
        .ok()
        .filter(|&d| d + 2 <= MAX_DEPTH)
        .ok_or_else(|| format!("binary-trees: min_depth must be at most {}", MAX_DEPTH - 2))?;
    let threads = ctx.run.threads.max(1);
    let max_depth = match p.depth {
        Some(d) => u32::try_from(d).unwrap_or(u32::MAX).max(min_depth + 2),
        None => default_depth(
            ctx.run.live_set_bytes,
            ctx.run.heap_bytes,
            threads,
            min_depth,
        ),
    };
    check_depths(max_depth, min_depth)?;
    let oom = |e: OutOfMemory| format!("binary-trees: {e}");
    m.scope(|s| {
        // Set-up, on thread 0: the stretch tree, then the long-lived tree.
        let long_lived = if ctx.thread == 0 {
            let stretch = max_depth + 1;
            let c = build_and_check(s, stretch).map_err(oom)?;
            verify("stretch tree", stretch, c, tree_nodes(stretch))?;
            Some(bottom_up(s, max_depth).map_err(oom)?)
        } else {
            None
        };
        ctx.ready(s);
        let mut ops = 0u64;
        'passes: while ctx.running() {
            for d in (min_depth..=max_depth).step_by(2) {
                // This thread's share of the iterations: every `threads`-th tree.
                let all = iterations(max_depth, min_depth, d);
                let mine = all / u64::from(threads)
                    + u64::from(u64::from(ctx.thread) < all % u64::from(threads));
                let mut sum = 0;
                for _ in 0..mine {
                    if !ctx.running() {
                        break 'passes;
                    }
                    sum += build_and_check(s, d).map_err(oom)?;
                    ops += 1;
                }
                verify(
                    &format!("the sum of {mine} trees"),
                    d,
                    sum,
                    mine * tree_nodes(d),
                )?;
            }
        }
        if let Some(t) = long_lived {
            let c = check(s, t, max_depth);
            verify("long lived tree", max_depth, c, tree_nodes(max_depth))?;
        }
        Ok(ThreadOutcome {
            operations: ops,
            latency: None,
        })
    })
}
