//! The torture test's engine: mutator threads run a seeded random program against the public
//! embedding API while GC cycles run back to back with the verifier on, and a Rust-side
//! *shadow model* says what the heap must contain.
//!
//! Every object the program allocates gets an id, stored in its first 8 raw bytes. The model
//! records, per object: id, shape, reference slots (as ids) and all raw bytes. Roots are
//! mirrored exactly: the locals of every nested scope (in handle-stack order), global
//! handles, weak handles and this thread's slots of a shared root region. The program:
//!
//! - allocates small, medium (> 256 KiB) and large (> the medium object limit) objects, and
//!   bursts of untracked garbage (which may point at tracked objects);
//! - links and unlinks reference slots between objects found by random walks from the roots;
//! - writes raw bytes; creates and drops locals (nested scopes, escaping scopes), globals,
//!   weak handles and root-region slots; upgrades weak handles; polls; sleeps in blocking
//!   regions;
//! - checks the header and id of every object it meets on a walk and the slot it came
//!   through; compares whole objects (header, every slot, every raw byte) when it reads one
//!   back or resurrects one through a weak handle; and at checkpoints traverses the whole
//!   graph from the roots, comparing every object reached in full: header, every reference
//!   slot (null, or the id of the object it leads to) and every raw byte. Each object must be
//!   reached at one address (no duplicate copies), the set reached must be the model's
//!   strongly reachable set, and the handle stack must hold exactly the model's locals.
//!
//! With [`Config::shared_fraction`] > 0 the threads also share a *pool*: directory objects
//! held by global handles, whose slots hold the pool's other objects, whose slots point at
//! pool objects only (and no thread's own object points into the pool). Both threads walk,
//! read and check, write, link and replace pool objects under one lock, which guards the
//! pool's model too: the model is exact whenever the lock is free, while the collector moves
//! the objects under both threads. Every checkpoint also traverses the whole pool and
//! compares every pool object in full. A thread that finds the lock taken waits for it in a
//! blocking region (pauses do not wait for it).
//!
//! With [`Config::fill`] each thread keeps its live set near its budget (for nearly full
//! heaps): it adds big and medium objects held by globals and region slots while under 90%
//! of the budget, and drops roots only to get back under it (from above 95% to 85%).
//!
//! Weak handles: a cleared handle's target must be unreachable in the model (checked at
//! every checkpoint and every upgrade); a handle whose target is unreachable at a checkpoint
//! must be cleared once two more cycles have completed (the one running, and one that started
//! after the checkpoint); a successful upgrade of an unreachable target resurrects it, and its
//! contents must still be intact (invariant 6: never a freed address).
//!
//! The report counts what was compared (objects, slots and raw bytes, at checkpoints and
//! between them) and what the collector did (the relocation counters of every
//! [`CycleRecord`]). A mismatch fails the run at once.
//!
//! The op sequence of a thread is a function of its seed (and of which allocations fail and,
//! with a shared pool, of what the other thread did to the pool); the interleaving with the
//! collector and the other thread is not reproducible. Failures name the seed and the
//! command that replays it.

use gc_core::{object_size, PageKind, PageSizes};
use gc_runtime::{
    CycleRecord, Global, Heap, HeapConfig, Local, Mode, ObjRef, RootRegion, Scope, WeakRef,
};
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, Once, TryLockError};
use std::time::{Duration, Instant};

/// Environment variable that fixes the base seed (decimal or 0x-hex).
pub const SEED_ENV: &str = "ZRS_TORTURE_SEED";

/// One torture run.
#[derive(Clone, Debug)]
pub struct Config {
    /// Name used in messages ("concurrent", "stall-stw", ...).
    pub name: String,
    pub mode: Mode,
    pub max_heap: u64,
    /// Mutator threads (never more than the machine's cores).
    pub threads: usize,
    pub gc_threads: usize,
    pub duration: Duration,
    pub seed: u64,
    /// Share of the heap all threads together keep strongly reachable at most (the shared
    /// pool included).
    pub live_fraction: f64,
    /// Share of the heap the shared pool keeps reachable at most (part of `live_fraction`);
    /// 0 for no shared pool.
    pub shared_fraction: f64,
    /// Objects each thread's model keeps at most (reachable or weakly reachable).
    pub max_objects: usize,
    /// Keep the live set near its budget: roots are dropped only to get back under it, one
    /// at a time, instead of by random ops and by halving.
    pub fill: bool,
    /// Untracked garbage objects allocated per garbage burst (at most).
    pub garbage_burst: u64,
    /// Allow out-of-memory errors outside epsilon mode (for heaps run at the edge).
    pub oom_ok: bool,
    /// How to reproduce: the test to name in the replay command.
    pub test_name: String,
    /// A replay command other than `--exact <test_name>` (the soak's runs).
    pub replay: Option<String>,
}

impl Config {
    pub fn new(name: &str, mode: Mode, max_heap: u64, duration: Duration, seed: u64) -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Config {
            name: name.to_string(),
            mode,
            max_heap,
            threads: cores.clamp(1, 2),
            gc_threads: 1,
            duration,
            seed,
            live_fraction: 0.4,
            shared_fraction: 0.0,
            max_objects: 10_000,
            fill: false,
            garbage_burst: 16,
            oom_ok: false,
            test_name: name.to_string(),
            replay: None,
        }
    }

    /// The command that replays this run.
    pub fn replay_command(&self) -> String {
        self.replay.clone().unwrap_or_else(|| {
            format!(
                "{SEED_ENV}={:#x} cargo test -p integration-tests --release --test torture -- \
                 --exact {}",
                self.seed, self.test_name
            )
        })
    }
}

/// What a set of comparisons with the model covered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Checked {
    /// Objects compared (an object counts once per comparison).
    pub objects: u64,
    /// Reference slots compared (null, or the id of the object the slot leads to).
    pub slots: u64,
    /// Raw bytes compared (the 8 id bytes for a header check).
    pub bytes: u64,
}

impl Checked {
    fn add(&mut self, o: &Checked) {
        self.objects += o.objects;
        self.slots += o.slots;
        self.bytes += o.bytes;
    }
}

/// What a run did.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub runs: u64,
    pub duration: Duration,
    pub ops: u64,
    pub checkpoints: u64,
    /// Compared in full at checkpoints: every object reached from the roots (the shared pool
    /// included), with its header, every slot and every raw byte.
    pub checked: Checked,
    /// Of `checked.objects`, the objects of the shared pool.
    pub shared_objects_checked: u64,
    /// Compared between checkpoints: headers, ids and the slots followed on walks, whole
    /// objects on reads and resurrections.
    pub walked: Checked,
    /// Operations on the shared pool, and how many of them found its lock taken.
    pub shared_ops: u64,
    pub shared_lock_waits: u64,
    pub objects_allocated: u64,
    pub bytes_allocated: u64,
    pub cycles: u64,
    pub pauses: u64,
    pub bytes_relocated: u64,
    pub pages_relocated: u64,
    /// Sums of the `CycleRecord` counters of the same names.
    pub pages_compacted_in_place: u64,
    pub objects_compacted_in_place: u64,
    pub objects_self_forwarded: u64,
    pub relocation_waits: u64,
    /// Cycles that compacted at least one page in place.
    pub cycles_with_in_place: u64,
    /// Largest live share of the heap a cycle's marking found, per mille.
    pub max_live_permille: u64,
    /// Sum over the cycles of the live share marking found, per mille (the mean is this
    /// divided by `cycles`).
    pub live_permille_sum: u64,
    pub stalls: u64,
    pub failed_stalls: u64,
    pub ooms: u64,
    pub weak_cleared_seen: u64,
    pub weak_clear_deadlines_checked: u64,
    pub resurrections: u64,
    pub max_pause_ns: u64,
    /// Largest number of objects one checkpoint compared.
    pub max_objects_per_checkpoint: u64,
    /// Times a thread dropped roots to stay under its live-set budget.
    pub sheds: u64,
}

impl Report {
    pub fn add(&mut self, o: &Report) {
        self.runs += o.runs;
        self.duration += o.duration;
        self.ops += o.ops;
        self.checkpoints += o.checkpoints;
        self.checked.add(&o.checked);
        self.shared_objects_checked += o.shared_objects_checked;
        self.walked.add(&o.walked);
        self.shared_ops += o.shared_ops;
        self.shared_lock_waits += o.shared_lock_waits;
        self.objects_allocated += o.objects_allocated;
        self.bytes_allocated += o.bytes_allocated;
        self.cycles += o.cycles;
        self.pauses += o.pauses;
        self.bytes_relocated += o.bytes_relocated;
        self.pages_relocated += o.pages_relocated;
        self.pages_compacted_in_place += o.pages_compacted_in_place;
        self.objects_compacted_in_place += o.objects_compacted_in_place;
        self.objects_self_forwarded += o.objects_self_forwarded;
        self.relocation_waits += o.relocation_waits;
        self.cycles_with_in_place += o.cycles_with_in_place;
        self.max_live_permille = self.max_live_permille.max(o.max_live_permille);
        self.live_permille_sum += o.live_permille_sum;
        self.stalls += o.stalls;
        self.failed_stalls += o.failed_stalls;
        self.ooms += o.ooms;
        self.weak_cleared_seen += o.weak_cleared_seen;
        self.weak_clear_deadlines_checked += o.weak_clear_deadlines_checked;
        self.resurrections += o.resurrections;
        self.max_pause_ns = self.max_pause_ns.max(o.max_pause_ns);
        self.max_objects_per_checkpoint = self
            .max_objects_per_checkpoint
            .max(o.max_objects_per_checkpoint);
        self.sheds += o.sheds;
    }

    fn add_thread(&mut self, t: &ThreadStats) {
        self.ops += t.ops;
        self.checkpoints += t.checkpoints;
        self.checked.add(&t.checked);
        self.shared_objects_checked += t.shared_checked;
        self.walked.add(&t.walked);
        self.shared_ops += t.shared_ops;
        self.shared_lock_waits += t.shared_lock_waits;
        self.objects_allocated += t.objects_allocated;
        self.bytes_allocated += t.bytes_allocated;
        self.ooms += t.ooms;
        self.weak_cleared_seen += t.weak_cleared_seen;
        self.weak_clear_deadlines_checked += t.weak_deadlines;
        self.resurrections += t.resurrections;
        self.max_objects_per_checkpoint = self.max_objects_per_checkpoint.max(t.max_checked);
        self.sheds += t.sheds;
    }

    /// Take the collector's figures from the heap's statistics.
    fn add_gc(&mut self, stats: &gc_runtime::GcStats, max_heap: u64) {
        let sum = |f: fn(&CycleRecord) -> u64| stats.cycles.iter().map(f).sum::<u64>();
        self.cycles = stats.cycles.len() as u64;
        self.pauses = stats.pauses.len() as u64;
        self.max_pause_ns = stats.pauses.iter().map(|p| p.total_ns).max().unwrap_or(0);
        self.bytes_relocated = sum(|c| c.bytes_relocated);
        self.pages_relocated = sum(|c| c.pages_relocated);
        self.pages_compacted_in_place = sum(|c| c.pages_compacted_in_place);
        self.objects_compacted_in_place = sum(|c| c.objects_compacted_in_place);
        self.objects_self_forwarded = sum(|c| c.objects_self_forwarded);
        self.relocation_waits = sum(|c| c.relocation_waits);
        self.cycles_with_in_place = stats
            .cycles
            .iter()
            .filter(|c| c.pages_compacted_in_place > 0)
            .count() as u64;
        let live = |c: &CycleRecord| c.live_bytes * 1000 / max_heap.max(1);
        self.max_live_permille = stats.cycles.iter().map(live).max().unwrap_or(0);
        self.live_permille_sum = stats.cycles.iter().map(live).sum();
        self.stalls = stats.stalls.len() as u64;
        self.failed_stalls = stats.stalls.iter().filter(|s| s.failed).count() as u64;
    }
}

/// `n` bytes in the largest binary unit that keeps the figure at least 1.
fn bytes_human(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "runs {}, {:.1}s, {} ops, {} checkpoints",
            self.runs,
            self.duration.as_secs_f64(),
            self.ops,
            self.checkpoints,
        )?;
        writeln!(
            f,
            "compared with the model at checkpoints: {} objects (max {} at one; {} of the \
             shared pool), {} slots, {} raw bytes; between checkpoints: {} objects, {} slots, \
             {} raw bytes",
            self.checked.objects,
            self.max_objects_per_checkpoint,
            self.shared_objects_checked,
            self.checked.slots,
            bytes_human(self.checked.bytes),
            self.walked.objects,
            self.walked.slots,
            bytes_human(self.walked.bytes),
        )?;
        writeln!(
            f,
            "shared pool: {} ops, {} found the lock taken",
            self.shared_ops, self.shared_lock_waits
        )?;
        writeln!(
            f,
            "allocated {} objects ({}); {} GC cycles, {} pauses (max {:.3} ms), {} relocated \
             ({} pages freed); live at marking {:.1}% of the heap on average, {:.1}% at most",
            self.objects_allocated,
            bytes_human(self.bytes_allocated),
            self.cycles,
            self.pauses,
            self.max_pause_ns as f64 / 1e6,
            bytes_human(self.bytes_relocated),
            self.pages_relocated,
            self.live_permille_sum as f64 / self.cycles.max(1) as f64 / 10.0,
            self.max_live_permille as f64 / 10.0,
        )?;
        writeln!(
            f,
            "in-place relocation: {} pages compacted in place (in {} cycles), {} objects placed \
             by it, {} of them left at their address (self-forwarded); {} relocation waits",
            self.pages_compacted_in_place,
            self.cycles_with_in_place,
            self.objects_compacted_in_place,
            self.objects_self_forwarded,
            self.relocation_waits,
        )?;
        write!(
            f,
            "{} live-set sheds, {} allocation stalls ({} failed), {} out-of-memory errors; weak \
             handles: {} seen cleared, {} clear deadlines met, {} resurrections",
            self.sheds,
            self.stalls,
            self.failed_stalls,
            self.ooms,
            self.weak_cleared_seen,
            self.weak_clear_deadlines_checked,
            self.resurrections,
        )
    }
}

/// The base seed: `ZRS_TORTURE_SEED` if set, else one derived from the clock.
pub fn base_seed() -> u64 {
    if let Ok(v) = std::env::var(SEED_ENV) {
        let v = v.trim();
        let parsed = match v.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16),
            None => v.parse(),
        };
        return parsed.unwrap_or_else(|_| panic!("{SEED_ENV}={v:?} is not a number"));
    }
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    splitmix(t ^ u64::from(std::process::id()))
}

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// xoshiro-style generator, small and deterministic.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        splitmix(self.0)
    }
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }
    fn chance(&mut self, per_mille: u64) -> bool {
        self.below(1000) < per_mille
    }
    fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }
}

// ---------------------------------------------------------------------------------------
// The shadow model.

struct ObjModel {
    shape: u32,
    /// Heap bytes it takes: its size, or its whole page for a large object.
    footprint: u64,
    edges: Vec<Option<u64>>,
    bytes: Vec<u8>,
}

struct WeakEntry {
    w: WeakRef,
    target: u64,
    /// Seen cleared: the target is dead for good.
    cleared: bool,
    /// Completed cycles when a checkpoint first found the target unreachable and the handle
    /// not yet cleared.
    pending_since: Option<u64>,
}

#[derive(Default)]
struct ThreadStats {
    ops: u64,
    checkpoints: u64,
    checked: Checked,
    shared_checked: u64,
    walked: Checked,
    shared_ops: u64,
    shared_lock_waits: u64,
    objects_allocated: u64,
    bytes_allocated: u64,
    ooms: u64,
    weak_cleared_seen: u64,
    weak_deadlines: u64,
    resurrections: u64,
    max_checked: u64,
    sheds: u64,
}

/// The objects reachable in `objs` from `roots`, or the id of a referenced object the model
/// does not have.
fn reach_in(
    objs: &HashMap<u64, ObjModel>,
    roots: impl IntoIterator<Item = u64>,
) -> Result<HashSet<u64>, u64> {
    let mut seen = HashSet::new();
    let mut stack: Vec<u64> = roots.into_iter().collect();
    while let Some(id) = stack.pop() {
        if !seen.insert(id) {
            continue;
        }
        let o = objs.get(&id).ok_or(id)?;
        stack.extend(o.edges.iter().flatten().filter(|e| !seen.contains(e)));
    }
    Ok(seen)
}

/// Global handles of the shared pool, each to a directory object.
const SHARED_ROOTS: usize = 16;
/// Reference slots of a directory: each holds a pool object or null.
const DIR_SLOTS: u32 = 256;

/// The shared pool and its model (see the module documentation), behind one lock. Its roots
/// are global handles to *directories*, pool objects with [`DIR_SLOTS`] slots that hold the
/// other pool objects; those point at each other too.
struct SharedPool {
    /// The pool's roots: global handles and the ids of their directories.
    roots: Vec<Option<(Global, u64)>>,
    objs: HashMap<u64, ObjModel>,
    /// Sum of the footprints of the objects in `objs`.
    model_bytes: u64,
    /// Reachable bytes the pool keeps at most.
    cap: u64,
}

impl SharedPool {
    fn new(cap: u64) -> Self {
        SharedPool {
            roots: (0..SHARED_ROOTS).map(|_| None).collect(),
            objs: HashMap::new(),
            model_bytes: 0,
            cap,
        }
    }

    fn root_ids(&self) -> impl Iterator<Item = u64> + '_ {
        self.roots.iter().flatten().map(|r| r.1)
    }

    fn reachable(&self) -> Result<HashSet<u64>, u64> {
        reach_in(&self.objs, self.root_ids())
    }

    /// Forget the objects no root reaches; returns the reachable bytes.
    fn prune(&mut self) -> Result<u64, u64> {
        let live = self.reachable()?;
        self.objs.retain(|id, _| live.contains(id));
        self.model_bytes = self.objs.values().map(|o| o.footprint).sum();
        Ok(self.model_bytes)
    }
}

/// A nested scope's locals, readable from inner scopes.
trait Frame {
    fn len(&self) -> usize;
    fn local(&self, i: usize) -> Local<'_>;
    fn parent(&self) -> Option<&dyn Frame>;
}

struct Level<'s, 'p> {
    locals: Vec<Local<'s>>,
    parent: Option<&'p dyn Frame>,
}

impl Frame for Level<'_, '_> {
    fn len(&self) -> usize {
        self.locals.len()
    }
    fn local(&self, i: usize) -> Local<'_> {
        self.locals[i]
    }
    fn parent(&self) -> Option<&dyn Frame> {
        self.parent
    }
}

/// A root the program can start a walk from.
#[derive(Clone, Copy, Debug)]
enum Root {
    /// (depth, index) of a local.
    Local(usize, usize),
    Global(usize),
    Region(usize),
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Flow {
    Continue,
    /// Return to the top scope (drops every local).
    Unwind,
    /// The run is over.
    Done,
}

const MAX_DEPTH: usize = 6;
const MAX_LOCALS_PER_LEVEL: usize = 96;
const REGION_SLOTS_PER_THREAD: usize = 48;
const CHECK_EVERY_OPS: u64 = 2500;
/// Share of the ops that work on the shared pool (when there is one).
const SHARED_OPS_PER_MILLE: u64 = 200;
/// Fill mode: share of the ops that add a big object while the live set is under
/// [`FILL_BELOW`] of its budget, the share above which a thread sheds roots, and the share
/// shedding brings it down to (all per mille).
const FILL_OPS_PER_MILLE: u64 = 50;
const FILL_BELOW: u64 = 900;
const FILL_SHED_AT: u64 = 950;
const FILL_SHED_TO: u64 = 850;

struct Program<'h> {
    cfg: &'h Config,
    heap: &'h Heap,
    region: &'h RootRegion,
    region_base: usize,
    sizes: PageSizes,
    thread: usize,
    seed: u64,
    rng: Rng,
    next_id: u64,
    objs: HashMap<u64, ObjModel>,
    /// Sum of the sizes of the objects in `objs`.
    model_bytes: u64,
    levels: Vec<Vec<u64>>,
    globals: Vec<(Global, u64)>,
    weaks: Vec<WeakEntry>,
    region_ids: Vec<Option<u64>>,
    live_cap: u64,
    max_objects: usize,
    /// Model size (bytes, objects) above which the next allocation prunes the model.
    prune_at: (u64, usize),
    /// Strongly reachable bytes at the last prune, plus what fill ops added since.
    est_strong: u64,
    deadline: Instant,
    unwind: bool,
    /// Epsilon: ops left after the first out-of-memory error.
    after_oom: Option<u64>,
    st: ThreadStats,
    scratch: Vec<u8>,
    /// The pool shared with the other threads, if the configuration has one.
    shared: Option<&'h Mutex<SharedPool>>,
    /// Ids of this thread's shared-pool objects (a range apart from its own objects').
    next_shared_id: u64,
    /// Set when some thread failed: the others stop.
    stop: &'h AtomicBool,
}

/// Check `$cond`, or fail with the run's context (seed, thread, op).
macro_rules! ensure {
    ($p:expr, $cond:expr, $($arg:tt)*) => {
        if !$cond {
            $p.fail(format!($($arg)*));
        }
    };
}

impl<'h> Program<'h> {
    fn ctx(&self) -> String {
        format!(
            "torture[{}] mode={} seed={:#x} thread={} op={}",
            self.cfg.name, self.cfg.mode, self.cfg.seed, self.thread, self.st.ops
        )
    }

    #[track_caller]
    fn fail(&self, msg: String) -> ! {
        panic!("{}: MISMATCH: {msg}", self.ctx());
    }

    fn cycles(&self) -> u64 {
        self.heap.usage().cycles
    }

    // --- model ---------------------------------------------------------------------------

    fn strong_roots(&self) -> Vec<u64> {
        let mut r: Vec<u64> = self.levels.iter().flatten().copied().collect();
        r.extend(self.globals.iter().map(|g| g.1));
        r.extend(self.region_ids.iter().flatten());
        r
    }

    fn reach(&self, roots: impl IntoIterator<Item = u64>) -> HashSet<u64> {
        reach_in(&self.objs, roots).unwrap_or_else(|id| {
            self.fail(format!(
                "model: object {id:#x} is referenced but was pruned"
            ))
        })
    }

    fn strongly_reachable(&self) -> HashSet<u64> {
        self.reach(self.strong_roots())
    }

    /// Forget model objects nothing can reach any more (not even an uncleared weak handle).
    /// Returns the strongly reachable bytes.
    fn prune(&mut self) -> u64 {
        let strong = self.strongly_reachable();
        let weak_targets: Vec<u64> = self
            .weaks
            .iter()
            .filter(|w| !w.cleared && !strong.contains(&w.target))
            .map(|w| w.target)
            .collect();
        let weakly = self.reach(weak_targets);
        self.objs
            .retain(|id, _| strong.contains(id) || weakly.contains(id));
        self.model_bytes = self.objs.values().map(|o| o.footprint).sum();
        self.est_strong = strong.iter().map(|id| self.objs[id].footprint).sum();
        self.est_strong
    }

    fn total_locals(&self) -> usize {
        self.levels.iter().map(|l| l.len()).sum()
    }

    // --- sizes ---------------------------------------------------------------------------

    /// (n_refs, n_bytes) of a new object, or None if the chosen class does not fit the cap.
    fn pick_shape(&mut self) -> (u32, usize) {
        let s = self.sizes;
        let hdr = |refs: u64, bytes: u64| object_size(refs, bytes).expect("valid size");
        let r = self.rng.below(1000);
        let big_budget = self.live_cap / 6;
        if r < 4 && s.medium.is_some() && s.medium_object_max < big_budget {
            // medium: > small_object_max, <= medium_object_max
            let refs = self.rng.below(8);
            let lo = s.small_object_max + 8 - hdr(refs, 0).min(s.small_object_max);
            let hi = s.medium_object_max - hdr(refs, 0);
            let bytes = self.rng.range(lo, hi);
            debug_assert!(hdr(refs, bytes) > s.small_object_max);
            debug_assert!(hdr(refs, bytes) <= s.medium_object_max);
            return (refs as u32, bytes as usize);
        }
        if r < 6 {
            // large: above the medium limit, up to 2.5x it (and a sixth of the live cap)
            let refs = self.rng.below(4);
            let lo = s.medium_object_max + 8;
            let hi = (s.medium_object_max * 5 / 2).min(big_budget);
            if hi > lo {
                return (refs as u32, self.rng.range(lo, hi) as usize);
            }
        }
        if r < 20 {
            // a big small object
            let refs = self.rng.below(64);
            let hi = s.small_object_max - hdr(refs, 0);
            return (refs as u32, self.rng.range(4096, hi) as usize);
        }
        if r < 40 {
            // many reference slots
            return (
                self.rng.range(16, 600) as u32,
                self.rng.range(8, 64) as usize,
            );
        }
        if r < 230 {
            return (self.rng.below(16) as u32, self.rng.range(8, 2048) as usize);
        }
        (self.rng.below(5) as u32, self.rng.range(8, 160) as usize)
    }

    // --- walking -------------------------------------------------------------------------

    /// A random root: locals, globals and region slots each about a third of the time (so the
    /// long-lived part of the graph, hanging off globals and the region, grows too).
    fn pick_root(&mut self) -> Option<Root> {
        let nl = self.total_locals();
        let ng = self.globals.len();
        let region: Vec<usize> = (0..self.region_ids.len())
            .filter(|&i| self.region_ids[i].is_some())
            .collect();
        for _ in 0..3 {
            match self.rng.below(3) {
                0 if nl > 0 => {
                    let mut k = self.rng.index(nl);
                    for (d, l) in self.levels.iter().enumerate() {
                        if k < l.len() {
                            return Some(Root::Local(d, k));
                        }
                        k -= l.len();
                    }
                    unreachable!()
                }
                1 if ng > 0 => return Some(Root::Global(self.rng.index(ng))),
                2 if !region.is_empty() => {
                    return Some(Root::Region(region[self.rng.index(region.len())]))
                }
                _ => {}
            }
        }
        None
    }

    /// The local at `depth`, `i`, seen from the current frame.
    fn local_at<'f>(&self, cur: &'f dyn Frame, depth: usize, i: usize) -> Local<'f> {
        let mut f = cur;
        for _ in depth + 1..self.levels.len() {
            f = f
                .parent()
                .expect("frame chain as deep as the model's levels");
        }
        debug_assert_eq!(f.len(), self.levels[depth].len());
        f.local(i)
    }

    /// Check an object the program reached against the model `objs`: id, shape, slot and
    /// byte counts (cheap; [`Self::check_full`] compares everything).
    fn header_in(
        &self,
        objs: &HashMap<u64, ObjModel>,
        o: &ObjRef<'_>,
        want: u64,
        via: &dyn Fn() -> String,
    ) {
        let m = objs
            .get(&want)
            .unwrap_or_else(|| self.fail(format!("{}: model has no object {want:#x}", via())));
        // The header first: the id's place depends on the slot count.
        ensure!(
            self,
            o.shape() == m.shape && o.n_refs() == m.edges.len() && o.n_bytes() == m.bytes.len(),
            "{}: object {want:#x} at {:#x}: header shape {} refs {} raw bytes {}, model shape \
             {} refs {} raw bytes {}",
            via(),
            o.address(),
            o.shape(),
            o.n_refs(),
            o.n_bytes(),
            m.shape,
            m.edges.len(),
            m.bytes.len()
        );
        let id = o.read_u64(0);
        ensure!(
            self,
            id == want,
            "{}: expected object {want:#x}, found id {id:#x} at {:#x}",
            via(),
            o.address()
        );
    }

    /// [`Self::header_in`] against this thread's model.
    fn check_header(&self, o: &ObjRef<'_>, want: u64, via: &dyn Fn() -> String) {
        self.header_in(&self.objs, o, want, via)
    }

    /// Compare all of `o` with the model `objs`: the header, every raw byte and every
    /// reference slot (null, or an object whose header and id are the model's). `child` gets
    /// every non-null slot's object with its id. Returns what was compared.
    fn check_full<'a>(
        &self,
        objs: &HashMap<u64, ObjModel>,
        o: &ObjRef<'a>,
        id: u64,
        via: &dyn Fn() -> String,
        buf: &mut Vec<u8>,
        mut child: impl FnMut(ObjRef<'a>, u64, &dyn Fn() -> String),
    ) -> Checked {
        self.header_in(objs, o, id, via);
        let m = &objs[&id];
        buf.resize(m.bytes.len(), 0);
        o.read_bytes(0, buf);
        if *buf != m.bytes {
            let at = buf.iter().zip(&m.bytes).position(|(a, b)| a != b).unwrap();
            let mut msg = format!(
                "{}: bytes of {id:#x} (at {:#x}, {} bytes) differ from byte {at} on (heap/model):",
                via(),
                o.address(),
                buf.len()
            );
            for (a, b) in buf.iter().zip(&m.bytes).skip(at).take(16) {
                let _ = write!(msg, " {a:02x}/{b:02x}");
            }
            self.fail(msg);
        }
        for (i, want) in m.edges.iter().enumerate() {
            match (o.load(i), want) {
                (None, None) => {}
                (Some(c), Some(cid)) => {
                    let via = || format!("slot {i} of {id:#x}");
                    self.header_in(objs, &c, *cid, &via);
                    child(c, *cid, &via);
                }
                (g, w) => self.fail(format!(
                    "{}: slot {i} of {id:#x}: heap {:?}, model {w:?}",
                    via(),
                    g.map(|g| g.read_u64(0))
                )),
            }
        }
        Checked {
            objects: 1,
            slots: m.edges.len() as u64,
            bytes: m.bytes.len() as u64,
        }
    }

    /// Traverse the heap from `roots` through the barrier, comparing every object reached in
    /// full with the model `objs`; each id must be met at one address. Returns the id and
    /// address of every object reached, and what was compared.
    fn traverse<'a>(
        &self,
        objs: &HashMap<u64, ObjModel>,
        roots: Vec<(ObjRef<'a>, u64, String)>,
        buf: &mut Vec<u8>,
    ) -> (HashMap<u64, u64>, Checked) {
        let mut seen: HashMap<u64, u64> = HashMap::new();
        let mut queue: Vec<(ObjRef<'a>, u64)> = Vec::new();
        for (o, id, via) in roots {
            self.header_in(objs, &o, id, &|| via.clone());
            self.visit(&o, id, &mut seen, &mut queue, &|| via.clone());
        }
        let mut checked = Checked::default();
        while let Some((o, id)) = queue.pop() {
            let c = self.check_full(
                objs,
                &o,
                id,
                &|| format!("object {id:#x}"),
                buf,
                |c, cid, via| self.visit(&c, cid, &mut seen, &mut queue, via),
            );
            checked.add(&c);
        }
        (seen, checked)
    }

    /// Count a header check between checkpoints (the header and the 8 id bytes).
    fn count_header_walked(&mut self) {
        self.st.walked.objects += 1;
        self.st.walked.bytes += 8;
    }

    /// Compare all of `o` with this thread's model between checkpoints.
    fn check_full_walked(&mut self, o: &ObjRef<'_>, id: u64, via: &dyn Fn() -> String) {
        let mut buf = std::mem::take(&mut self.scratch);
        let c = self.check_full(&self.objs, o, id, via, &mut buf, |_, _, _| {});
        self.scratch = buf;
        self.st.walked.add(&c);
    }

    /// Start at `root` and follow up to `steps` random non-null edges; checks every object on
    /// the way. Returns the object reached and its id.
    fn walk<'a, 's>(
        &mut self,
        s: &'a Scope<'s>,
        cur: &mut Level<'s, '_>,
        root: Root,
        steps: u64,
    ) -> (ObjRef<'a>, u64) {
        let (mut o, mut id) = match root {
            Root::Local(d, i) => {
                let want = self.levels[d][i];
                let o = if d + 1 == self.levels.len() {
                    s.get(cur.locals[i])
                } else {
                    let l = self.local_at(&*cur, d, i);
                    s.get(l)
                };
                (o, want)
            }
            Root::Global(g) => {
                let want = self.globals[g].1;
                // from_global pushes a handle: mirror it as a local of this level.
                let l = s.from_global(&self.globals[g].0);
                cur.locals.push(l);
                self.levels.last_mut().expect("a level").push(want);
                (s.get(l), want)
            }
            Root::Region(r) => {
                let want = self.region_ids[r].expect("non-null slot");
                let o = self.region.get(s, self.region_base + r).unwrap_or_else(|| {
                    self.fail(format!("region slot {r} is null, model {want:#x}"))
                });
                (o, want)
            }
        };
        self.check_header(&o, id, &|| format!("root {root:?}"));
        self.count_header_walked();
        for _ in 0..steps {
            let edges = &self.objs[&id].edges;
            if edges.is_empty() {
                break;
            }
            let i = self.rng.index(edges.len());
            self.st.walked.slots += 1;
            let Some(next) = edges[i] else {
                let got = o.load(i);
                ensure!(
                    self,
                    got.is_none(),
                    "slot {i} of {id:#x} should be null, holds an object at {:#x}",
                    got.map_or(0, |g| g.address())
                );
                break;
            };
            let n = o.load(i).unwrap_or_else(|| {
                self.fail(format!("slot {i} of {id:#x} is null, model says {next:#x}"))
            });
            self.check_header(&n, next, &|| format!("slot {i} of {id:#x}"));
            self.count_header_walked();
            o = n;
            id = next;
        }
        (o, id)
    }

    // --- ops -----------------------------------------------------------------------------

    fn alloc<'s>(&mut self, s: &mut Scope<'s>) -> Result<(Local<'s>, u64), ()> {
        let (refs, bytes) = self.pick_shape();
        self.alloc_shaped(s, refs, bytes)
    }

    fn alloc_shaped<'s>(
        &mut self,
        s: &mut Scope<'s>,
        refs: u32,
        bytes: usize,
    ) -> Result<(Local<'s>, u64), ()> {
        self.next_id += 1;
        let id = self.next_id;
        let (l, m) = self.new_object(s, refs, bytes, id)?;
        self.model_bytes += m.footprint;
        self.objs.insert(id, m);
        Ok((l, id))
    }

    /// Allocate object `id` (its shape follows from the id), write its id and a few random
    /// bytes; returns its handle and its model.
    fn new_object<'s>(
        &mut self,
        s: &mut Scope<'s>,
        refs: u32,
        bytes: usize,
        id: u64,
    ) -> Result<(Local<'s>, ObjModel), ()> {
        let size = object_size(refs as u64, bytes as u64).expect("valid size");
        let footprint = match self.sizes.kind_for(size) {
            PageKind::Large => self.sizes.page_size(PageKind::Large, size),
            _ => size,
        };
        let shape = (splitmix(id) % 50_000) as u32 + 1;
        match s.alloc(shape, refs, bytes) {
            Ok(l) => {
                let o = s.get(l);
                ensure!(
                    self,
                    o.n_bytes() == bytes && o.n_refs() == refs as usize,
                    "fresh object has the wrong header"
                );
                o.write_u64(0, id);
                let mut b = vec![0u8; bytes];
                b[..8].copy_from_slice(&id.to_le_bytes());
                // A few non-zero bytes right away (the rest must read as zero).
                if bytes > 16 {
                    let n = (bytes - 8).min(24);
                    let off = 8 + self.rng.index(bytes - 8 - n + 1);
                    for x in &mut b[off..off + n] {
                        *x = self.rng.next() as u8;
                    }
                    o.write_bytes(off, &b[off..off + n]);
                }
                self.st.objects_allocated += 1;
                self.st.bytes_allocated += size;
                Ok((
                    l,
                    ObjModel {
                        shape,
                        footprint,
                        edges: vec![None; refs as usize],
                        bytes: b,
                    },
                ))
            }
            Err(e) => {
                self.on_oom(s, &e.to_string(), size);
                Err(())
            }
        }
    }

    fn on_oom(&mut self, s: &Scope<'_>, msg: &str, size: u64) {
        self.st.ooms += 1;
        ensure!(
            self,
            msg.contains("out of memory"),
            "allocation of {size} bytes failed with an unexpected error: {msg}"
        );
        if self.cfg.mode == Mode::Epsilon {
            if self.after_oom.is_none() {
                self.after_oom = Some(2000);
            }
        } else {
            ensure!(
                self,
                self.cfg.oom_ok,
                "out of memory with at most {} MiB strongly reachable per thread in a {} MiB heap: {msg}",
                self.live_cap >> 20,
                self.cfg.max_heap >> 20
            );
            // Make room: drop everything but a few roots.
            self.shed(s, true);
        }
    }

    /// Drop roots to bring the live set down: unwind to the top scope, drop some globals and
    /// region slots.
    fn shed(&mut self, s: &Scope<'_>, hard: bool) {
        self.st.sheds += 1;
        self.unwind = true;
        if self.cfg.fill && !hard {
            self.shed_to_fill(s);
            return;
        }
        let keep = if hard { 2 } else { self.globals.len() / 2 };
        while self.globals.len() > keep {
            let i = self.rng.index(self.globals.len());
            self.globals.swap_remove(i);
        }
        for r in 0..self.region_ids.len() {
            if self.region_ids[r].is_some() && (hard || self.rng.chance(500)) {
                self.region.set(s, self.region_base + r, None);
                self.region_ids[r] = None;
            }
        }
    }

    /// `per_mille` of `n`.
    fn share(&self, n: u64, per_mille: u64) -> u64 {
        n / 1000 * per_mille + n % 1000 * per_mille / 1000
    }

    /// Live-set share (per mille of the budget) above which a thread sheds roots.
    fn shed_at(&self) -> u64 {
        if self.cfg.fill {
            FILL_SHED_AT
        } else {
            800
        }
    }

    /// Drop random globals and region slots, one at a time, until what they keep reachable
    /// is at most [`FILL_SHED_TO`] of the budget (the locals go with the unwind).
    fn shed_to_fill(&mut self, s: &Scope<'_>) {
        loop {
            let held: Vec<u64> = self
                .globals
                .iter()
                .map(|g| g.1)
                .chain(self.region_ids.iter().flatten().copied())
                .collect();
            let live = self.reach(held);
            let bytes: u64 = live.iter().map(|id| self.objs[id].footprint).sum();
            if bytes <= self.share(self.live_cap, FILL_SHED_TO)
                && live.len() <= self.share(self.max_objects as u64, FILL_SHED_TO) as usize
            {
                return;
            }
            let region: Vec<usize> = (0..self.region_ids.len())
                .filter(|&r| self.region_ids[r].is_some())
                .collect();
            let n = self.globals.len() + region.len();
            if n == 0 {
                return;
            }
            let k = self.rng.index(n);
            if k < self.globals.len() {
                self.globals.swap_remove(k);
            } else {
                let r = region[k - self.globals.len()];
                self.region.set(s, self.region_base + r, None);
                self.region_ids[r] = None;
            }
        }
    }

    fn over_budget(&mut self) -> bool {
        let (bytes, objects) = self.prune_at;
        if self.model_bytes <= bytes.max(self.live_cap)
            && self.objs.len() <= objects.max(self.max_objects)
        {
            return false;
        }
        let strong = self.prune();
        // Prune again only after the model has grown by another eighth (pruning is a model
        // traversal; doing it at every allocation near the cap would dominate the run).
        self.prune_at = (
            self.model_bytes + self.live_cap / 8,
            self.objs.len() + self.max_objects / 8,
        );
        let at = self.shed_at();
        strong > self.share(self.live_cap, at)
            || self.objs.len() as u64 > self.share(self.max_objects as u64, at)
    }

    fn garbage_burst(&mut self, s: &mut Scope<'_>, cur: &Level<'_, '_>) {
        let n = self.rng.range(1, self.cfg.garbage_burst.max(1));
        let target = if self.rng.chance(500) && !cur.locals.is_empty() {
            Some(cur.locals[self.rng.index(cur.locals.len())])
        } else {
            None
        };
        let seed = self.rng.next();
        let mut oom = None;
        s.scope(|g| {
            let mut rng = Rng(seed);
            let mut prev: Option<Local<'_>> = None;
            for _ in 0..n {
                let bytes = if rng.chance(20) {
                    rng.range(4096, 100_000)
                } else {
                    rng.range(0, 300)
                } as usize;
                match g.alloc(0, 2, bytes) {
                    Ok(l) => {
                        // Dead objects pointing at each other and at live ones.
                        g.store(l, 0, prev);
                        g.store(l, 1, target);
                        prev = Some(l);
                    }
                    Err(e) => {
                        oom = Some(e.to_string());
                        break;
                    }
                }
            }
        });
        if let Some(e) = oom {
            self.on_oom(s, &e, 0);
        }
    }

    fn write_bytes<'s>(&mut self, s: &Scope<'s>, cur: &mut Level<'s, '_>) {
        let Some(root) = self.pick_root() else { return };
        let steps = self.rng.below(4);
        let (o, id) = self.walk(s, cur, root, steps);
        let n = self.objs[&id].bytes.len();
        if n <= 8 {
            return;
        }
        let off = 8 + self.rng.index(n - 8);
        let len = (1 + self.rng.index(256)).min(n - off);
        let data: Vec<u8> = (0..len).map(|_| self.rng.next() as u8).collect();
        if len == 8 && self.rng.chance(300) {
            o.write_u64(off, u64::from_le_bytes(data[..8].try_into().unwrap()));
        } else {
            o.write_bytes(off, &data);
        }
        self.objs.get_mut(&id).unwrap().bytes[off..off + len].copy_from_slice(&data);
    }

    /// Walk to an object and compare all of it with the model.
    fn read_check<'s>(&mut self, s: &Scope<'s>, cur: &mut Level<'s, '_>) {
        let Some(root) = self.pick_root() else { return };
        let steps = self.rng.below(6);
        let (o, id) = self.walk(s, cur, root, steps);
        self.check_full_walked(&o, id, &|| format!("read of {id:#x} from {root:?}"));
    }

    fn link<'s>(&mut self, s: &Scope<'s>, cur: &mut Level<'s, '_>, null: bool) {
        let Some(ra) = self.pick_root() else { return };
        let steps = self.rng.below(4);
        let (a, aid) = self.walk(s, cur, ra, steps);
        let n = self.objs[&aid].edges.len();
        if n == 0 {
            return;
        }
        // Prefer an empty slot (appending), so edges are not overwritten as often as made.
        let mut slot = self.rng.index(n);
        if !null {
            for _ in 0..3 {
                if self.objs[&aid].edges[slot].is_none() {
                    break;
                }
                slot = self.rng.index(n);
            }
        }
        if null {
            a.store(slot, None);
            self.objs.get_mut(&aid).unwrap().edges[slot] = None;
            return;
        }
        let Some(rb) = self.pick_root() else { return };
        let steps = self.rng.below(4);
        let (b, bid) = self.walk(s, cur, rb, steps);
        a.store(slot, Some(b));
        self.objs.get_mut(&aid).unwrap().edges[slot] = Some(bid);
    }

    fn new_local<'s>(&mut self, s: &Scope<'s>, cur: &mut Level<'s, '_>) {
        let Some(r) = self.pick_root() else { return };
        let steps = self.rng.range(1, 4);
        let (o, id) = self.walk(s, cur, r, steps);
        let l = s.root(o);
        cur.locals.push(l);
        self.levels.last_mut().unwrap().push(id);
    }

    fn new_global<'s>(&mut self, s: &Scope<'s>, cur: &mut Level<'s, '_>) {
        let Some(r) = self.pick_root() else { return };
        let steps = self.rng.below(3);
        let (o, id) = self.walk(s, cur, r, steps);
        let l = s.root(o);
        cur.locals.push(l);
        self.levels.last_mut().unwrap().push(id);
        let g = s.global(l);
        self.globals.push((g, id));
    }

    fn new_weak<'s>(&mut self, s: &Scope<'s>, cur: &mut Level<'s, '_>) {
        let Some(r) = self.pick_root() else { return };
        let steps = self.rng.below(4);
        let (o, id) = self.walk(s, cur, r, steps);
        let l = s.root(o);
        cur.locals.push(l);
        self.levels.last_mut().unwrap().push(id);
        let w = s.weak(l);
        self.weaks.push(WeakEntry {
            w,
            target: id,
            cleared: false,
            pending_since: None,
        });
    }

    fn set_region<'s>(&mut self, s: &Scope<'s>, cur: &mut Level<'s, '_>) {
        let slot = self.rng.index(REGION_SLOTS_PER_THREAD);
        let Some(r) = self.pick_root() else { return };
        let steps = self.rng.below(3);
        let (o, id) = self.walk(s, cur, r, steps);
        self.region.set(s, self.region_base + slot, Some(o));
        self.region_ids[slot] = Some(id);
    }

    fn upgrade<'s>(&mut self, s: &Scope<'s>, cur: &mut Level<'s, '_>) {
        if self.weaks.is_empty() {
            return;
        }
        let i = self.rng.index(self.weaks.len());
        let target = self.weaks[i].target;
        match s.upgrade(&self.weaks[i].w) {
            None => {
                let strong = self.strongly_reachable();
                ensure!(
                    self,
                    !strong.contains(&target),
                    "weak handle to {target:#x} upgraded to None while the target is reachable"
                );
                if !self.weaks[i].cleared {
                    self.weaks[i].cleared = true;
                    self.st.weak_cleared_seen += 1;
                }
            }
            Some(l) => {
                ensure!(
                    self,
                    !self.weaks[i].cleared,
                    "weak handle to {target:#x} was cleared, then upgraded to an object"
                );
                let was_reachable = self.strongly_reachable().contains(&target);
                let o = s.get(l);
                self.check_header(&o, target, &|| format!("upgraded weak handle #{i}"));
                cur.locals.push(l);
                self.levels.last_mut().unwrap().push(target);
                if !was_reachable {
                    // Resurrected: its contents must be intact (never a freed address), and the
                    // clear deadlines of everything it reaches start over.
                    self.st.resurrections += 1;
                    self.check_full_walked(&o, target, &|| {
                        format!("resurrected object {target:#x} (weak handle #{i})")
                    });
                    let now = self.strongly_reachable();
                    for w in &mut self.weaks {
                        if now.contains(&w.target) {
                            w.pending_since = None;
                        }
                    }
                }
            }
        }
    }

    fn escape<'s>(&mut self, s: &mut Scope<'s>, cur: &mut Level<'s, '_>) {
        let mut made = None;
        let l = s.scope_escape(|inner| {
            // A few temporaries, one escapes.
            let mut keep = None;
            for _ in 0..self.rng.range(1, 3) {
                match self.alloc(inner) {
                    Ok((l, id)) => {
                        keep = Some(l);
                        made = Some(id);
                    }
                    Err(()) => break,
                }
            }
            keep
        });
        if let (Some(l), Some(id)) = (l, made) {
            cur.locals.push(l);
            self.levels.last_mut().unwrap().push(id);
        }
    }

    /// Build a structure of 10 to 300 small objects in a nested scope — a list, a tree or a
    /// random DAG — and hang its root off something reachable (or a new local).
    fn build<'s>(&mut self, s: &mut Scope<'s>, cur: &mut Level<'s, '_>) {
        let n = self.rng.range(10, 300) as usize;
        let kind = self.rng.below(3);
        let mut root = None;
        let l = s.scope_escape(|inner| {
            let mut nodes: Vec<(Local<'_>, u64)> = Vec::with_capacity(n);
            for k in 0..n {
                let refs = if kind == 0 {
                    1
                } else {
                    self.rng.range(2, 4) as u32
                };
                let bytes = self.rng.range(8, 200) as usize;
                let Ok((l, id)) = self.alloc_shaped(inner, refs, bytes) else {
                    break;
                };
                if k > 0 {
                    // list: link from the previous node; tree/DAG: from a random earlier node.
                    let p = if kind == 0 { k - 1 } else { self.rng.index(k) };
                    let (pl, pid) = nodes[p];
                    let slots = self.objs[&pid].edges.len();
                    let slot = self.rng.index(slots);
                    if kind == 2 || self.objs[&pid].edges[slot].is_none() {
                        inner.store(pl, slot, Some(l));
                        self.objs.get_mut(&pid).unwrap().edges[slot] = Some(id);
                    }
                }
                nodes.push((l, id));
            }
            let (l, id) = *nodes.first()?;
            root = Some(id);
            Some(l)
        });
        let (Some(l), Some(id)) = (l, root) else {
            return;
        };
        cur.locals.push(l);
        self.levels.last_mut().unwrap().push(id);
        match self.rng.below(3) {
            0 => {
                let g = s.global(l);
                self.globals.push((g, id));
            }
            1 => {
                let slot = self.rng.index(REGION_SLOTS_PER_THREAD);
                self.region.set_local(s, self.region_base + slot, Some(l));
                self.region_ids[slot] = Some(id);
            }
            _ => {
                if let Some(r) = self.pick_root() {
                    let steps = self.rng.below(3);
                    let (o, oid) = self.walk(s, cur, r, steps);
                    let n = self.objs[&oid].edges.len();
                    if n > 0 {
                        let slot = self.rng.index(n);
                        o.store(slot, Some(s.get(l)));
                        self.objs.get_mut(&oid).unwrap().edges[slot] = Some(id);
                    }
                }
            }
        }
    }

    /// Fill mode: allocate a big object (a big small one, or a medium one), point some of
    /// its slots at reachable objects, and hold it in a new global or a region slot.
    fn fill_one<'s>(&mut self, s: &mut Scope<'s>, cur: &mut Level<'s, '_>) {
        let sz = self.sizes;
        let hdr = |refs: u64, bytes: u64| object_size(refs, bytes).expect("valid size");
        let refs = self.rng.range(1, 16);
        let bytes = if self.rng.chance(250)
            && sz.medium.is_some()
            && sz.medium_object_max < self.live_cap / 6
        {
            let lo = sz.small_object_max + 8 - hdr(refs, 0).min(sz.small_object_max);
            self.rng.range(lo, sz.medium_object_max - hdr(refs, 0))
        } else {
            self.rng.range(4096, sz.small_object_max - hdr(refs, 0))
        };
        let Ok((l, id)) = self.alloc_shaped(s, refs as u32, bytes as usize) else {
            return;
        };
        cur.locals.push(l);
        self.levels.last_mut().unwrap().push(id);
        self.est_strong += self.objs[&id].footprint;
        for i in 0..(refs as usize).min(4) {
            if self.rng.chance(500) {
                if let Some(r) = self.pick_root() {
                    let steps = self.rng.below(3);
                    let (t, tid) = self.walk(s, cur, r, steps);
                    s.get(l).store(i, Some(t));
                    self.objs.get_mut(&id).unwrap().edges[i] = Some(tid);
                }
            }
        }
        if self.rng.chance(700) {
            let g = s.global(l);
            self.globals.push((g, id));
        } else {
            let slot = self.rng.index(REGION_SLOTS_PER_THREAD);
            self.region.set_local(s, self.region_base + slot, Some(l));
            self.region_ids[slot] = Some(id);
        }
    }

    // --- the shared pool -----------------------------------------------------------------

    /// Take the shared pool's lock: at once if it is free, else waiting for it in a blocking
    /// region (a pause must not wait for a thread that waits for the lock, since the holder
    /// may be stopped at the pause). `None` if a thread failed while holding it; then this
    /// thread stops too.
    fn lock_shared(&mut self, s: &mut Scope<'_>) -> Option<MutexGuard<'h, SharedPool>> {
        let pool = self.shared?;
        let g = match pool.try_lock() {
            Ok(g) => Some(g),
            Err(TryLockError::WouldBlock) => {
                self.st.shared_lock_waits += 1;
                s.blocking(|| pool.lock()).ok()
            }
            Err(TryLockError::Poisoned(_)) => None,
        };
        if g.is_none() {
            self.stop.store(true, Ordering::Relaxed);
        }
        g
    }

    fn shared_cap(&self) -> u64 {
        (self.cfg.max_heap as f64 * self.cfg.shared_fraction) as u64
    }

    /// (n_refs, n_bytes) of a new pool object: mostly small with a few slots, some big small
    /// objects and some medium ones; never large (large objects never move).
    fn pick_shared_shape(&mut self) -> (u32, usize) {
        let s = self.sizes;
        let hdr = |refs: u64, bytes: u64| object_size(refs, bytes).expect("valid size");
        let r = self.rng.below(1000);
        if r < 15 && s.medium.is_some() && s.medium_object_max < self.shared_cap() / 8 {
            let refs = self.rng.range(1, 8);
            let lo = s.small_object_max + 8 - hdr(refs, 0).min(s.small_object_max);
            let hi = s.medium_object_max - hdr(refs, 0);
            return (refs as u32, self.rng.range(lo, hi) as usize);
        }
        if r < 45 {
            let refs = self.rng.range(1, 32);
            let hi = s.small_object_max - hdr(refs, 0);
            return (refs as u32, self.rng.range(4096, hi) as usize);
        }
        if r < 400 {
            return (
                self.rng.range(1, 8) as u32,
                self.rng.range(8, 1024) as usize,
            );
        }
        (self.rng.range(1, 4) as u32, self.rng.range(8, 200) as usize)
    }

    /// A random pool root and a walk of up to `steps` random edges from it, checking the
    /// header and id of every object met and every slot followed; `None` if the pool has no
    /// root.
    fn shared_walk<'a>(
        &mut self,
        s: &'a Scope<'_>,
        pool: &SharedPool,
        steps: u64,
    ) -> Option<(ObjRef<'a>, u64)> {
        let roots: Vec<usize> = (0..pool.roots.len())
            .filter(|&r| pool.roots[r].is_some())
            .collect();
        if roots.is_empty() {
            return None;
        }
        let r = roots[self.rng.index(roots.len())];
        let (g, mut id) = pool.roots[r].as_ref().map(|(g, id)| (g, *id))?;
        let mut o = g.get(s);
        self.header_in(&pool.objs, &o, id, &|| format!("shared root #{r}"));
        self.count_header_walked();
        for _ in 0..steps {
            let edges = &pool.objs[&id].edges;
            if edges.is_empty() {
                break;
            }
            let i = self.rng.index(edges.len());
            self.st.walked.slots += 1;
            match (o.load(i), edges[i]) {
                (None, None) => break,
                (Some(n), Some(next)) => {
                    self.header_in(&pool.objs, &n, next, &|| {
                        format!("slot {i} of shared {id:#x}")
                    });
                    self.count_header_walked();
                    o = n;
                    id = next;
                }
                (g, w) => self.fail(format!(
                    "slot {i} of shared {id:#x}: heap {:?}, model {w:?}",
                    g.map(|g| g.read_u64(0))
                )),
            }
        }
        Some((o, id))
    }

    /// Forget the pool objects no pool root reaches; returns the reachable bytes.
    fn shared_prune(&self, pool: &mut SharedPool) -> u64 {
        pool.prune().unwrap_or_else(|id| {
            self.fail(format!(
                "shared model: object {id:#x} is referenced but was pruned"
            ))
        })
    }

    /// Keep the pool under its cap: once the model outgrows it, prune, then clear random
    /// directory slots until at most [`FILL_SHED_TO`] of the cap is reachable.
    fn shared_budget(&mut self, s: &Scope<'_>, pool: &mut SharedPool) {
        if pool.model_bytes <= pool.cap {
            return;
        }
        let mut live = self.shared_prune(pool);
        let target = self.share(pool.cap, FILL_SHED_TO);
        while live > target {
            let held: Vec<(usize, usize)> = (0..pool.roots.len())
                .filter_map(|r| pool.roots[r].as_ref().map(|e| (r, e.1)))
                .flat_map(|(r, d)| {
                    let edges = &pool.objs[&d].edges;
                    (0..edges.len())
                        .filter(|&i| edges[i].is_some())
                        .map(move |i| (r, i))
                })
                .collect();
            if held.is_empty() {
                break;
            }
            // Clear a share of the held slots in proportion to the excess, then measure again.
            let n = ((held.len() as u64 * (live - target)).div_ceil(live)).max(1);
            for _ in 0..n {
                let (r, i) = held[self.rng.index(held.len())];
                let (g, d) = pool.roots[r].as_ref().map(|(g, d)| (g, *d)).unwrap();
                g.get(s).store(i, None);
                pool.objs.get_mut(&d).unwrap().edges[i] = None;
            }
            live = self.shared_prune(pool);
        }
    }

    /// One operation on the shared pool, under its lock.
    fn shared_op(&mut self, s: &mut Scope<'_>) {
        self.st.shared_ops += 1;
        match self.rng.below(100) {
            0..=19 => self.shared_alloc(s),
            20..=44 => self.shared_write(s),
            45..=64 => self.shared_link(s, false),
            65..=71 => self.shared_link(s, true),
            _ => self.shared_read(s),
        }
    }

    /// Create the pool's missing directories (the first thread to get here makes them).
    fn shared_init(&mut self, s: &mut Scope<'_>) {
        let Some(mut pool) = self.lock_shared(s) else {
            return;
        };
        for r in 0..SHARED_ROOTS {
            if pool.roots[r].is_some() {
                continue;
            }
            self.next_shared_id += 1;
            let id = self.next_shared_id;
            s.scope(|ds| {
                if let Ok((l, m)) = self.new_object(ds, DIR_SLOTS, 64, id) {
                    pool.model_bytes += m.footprint;
                    pool.objs.insert(id, m);
                    pool.roots[r] = Some((ds.global(l), id));
                }
            });
        }
    }

    /// Allocate a pool object (before taking the lock), point some of its slots at pool
    /// objects, and put it in a random directory slot (what the slot held may die; a few
    /// tries look for an empty slot first).
    fn shared_alloc(&mut self, s: &mut Scope<'_>) {
        let (refs, bytes) = self.pick_shared_shape();
        self.next_shared_id += 1;
        let id = self.next_shared_id;
        s.scope(|ss| {
            let Ok((l, mut m)) = self.new_object(ss, refs, bytes, id) else {
                return;
            };
            let Some(mut pool) = self.lock_shared(ss) else {
                return;
            };
            let dirs: Vec<usize> = (0..SHARED_ROOTS)
                .filter(|&r| pool.roots[r].is_some())
                .collect();
            if dirs.is_empty() {
                return;
            }
            let o = ss.get(l);
            for i in 0..m.edges.len().min(4) {
                if self.rng.chance(500) {
                    let steps = self.rng.range(1, 4);
                    if let Some((t, tid)) = self.shared_walk(ss, &pool, steps) {
                        o.store(i, Some(t));
                        m.edges[i] = Some(tid);
                    }
                }
            }
            pool.model_bytes += m.footprint;
            pool.objs.insert(id, m);
            let r = dirs[self.rng.index(dirs.len())];
            let d = pool.roots[r].as_ref().unwrap().1;
            let mut slot = self.rng.index(DIR_SLOTS as usize);
            for _ in 0..4 {
                if pool.objs[&d].edges[slot].is_none() {
                    break;
                }
                slot = self.rng.index(DIR_SLOTS as usize);
            }
            pool.roots[r]
                .as_ref()
                .unwrap()
                .0
                .get(ss)
                .store(slot, Some(o));
            pool.objs.get_mut(&d).unwrap().edges[slot] = Some(id);
            self.shared_budget(ss, &mut pool);
        });
    }

    /// Write random raw bytes of a pool object.
    fn shared_write(&mut self, s: &mut Scope<'_>) {
        let Some(mut pool) = self.lock_shared(s) else {
            return;
        };
        let steps = self.rng.below(4);
        let Some((o, id)) = self.shared_walk(s, &pool, steps) else {
            return;
        };
        let n = pool.objs[&id].bytes.len();
        if n <= 8 {
            return;
        }
        let off = 8 + self.rng.index(n - 8);
        let most = if self.rng.chance(50) { 8192 } else { 256 };
        let len = (1 + self.rng.index(most)).min(n - off);
        let data: Vec<u8> = (0..len).map(|_| self.rng.next() as u8).collect();
        if len == 8 && self.rng.chance(300) {
            o.write_u64(off, u64::from_le_bytes(data[..8].try_into().unwrap()));
        } else {
            o.write_bytes(off, &data);
        }
        pool.objs.get_mut(&id).unwrap().bytes[off..off + len].copy_from_slice(&data);
    }

    /// Point a slot of a pool object at another pool object, or at null.
    fn shared_link(&mut self, s: &mut Scope<'_>, null: bool) {
        let Some(mut pool) = self.lock_shared(s) else {
            return;
        };
        let steps = self.rng.below(4);
        let Some((a, aid)) = self.shared_walk(s, &pool, steps) else {
            return;
        };
        let n = pool.objs[&aid].edges.len();
        if n == 0 {
            return;
        }
        let slot = self.rng.index(n);
        let target = if null {
            None
        } else {
            let steps = self.rng.below(4);
            match self.shared_walk(s, &pool, steps) {
                Some(t) => Some(t),
                None => return,
            }
        };
        a.store(slot, target.map(|t| t.0));
        pool.objs.get_mut(&aid).unwrap().edges[slot] = target.map(|t| t.1);
    }

    /// Walk to a pool object and compare all of it with the pool's model.
    fn shared_read(&mut self, s: &mut Scope<'_>) {
        let Some(pool) = self.lock_shared(s) else {
            return;
        };
        let steps = self.rng.below(6);
        let Some((o, id)) = self.shared_walk(s, &pool, steps) else {
            return;
        };
        let mut buf = std::mem::take(&mut self.scratch);
        let c = self.check_full(
            &pool.objs,
            &o,
            id,
            &|| format!("read of shared {id:#x}"),
            &mut buf,
            |_, _, _| {},
        );
        self.scratch = buf;
        self.st.walked.add(&c);
    }

    /// Checkpoint of the shared pool: traverse it from its roots, comparing every object in
    /// full; the objects reached must be the pool model's reachable set. Returns the number
    /// of objects compared.
    fn check_shared(&mut self, s: &mut Scope<'_>) -> u64 {
        if self.shared.is_none() {
            return 0;
        }
        let Some(mut pool) = self.lock_shared(s) else {
            return 0;
        };
        let roots: Vec<(ObjRef<'_>, u64, String)> = pool
            .roots
            .iter()
            .enumerate()
            .filter_map(|(r, e)| {
                e.as_ref()
                    .map(|(g, id)| (g.get(s), *id, format!("shared root #{r}")))
            })
            .collect();
        let mut buf = std::mem::take(&mut self.scratch);
        let (seen, c) = self.traverse(&pool.objs, roots, &mut buf);
        self.scratch = buf;
        let live = pool.reachable().unwrap_or_else(|id| {
            self.fail(format!(
                "shared model: object {id:#x} is referenced but was pruned"
            ))
        });
        ensure!(
            self,
            live.len() == seen.len() && seen.keys().all(|k| live.contains(k)),
            "shared pool: traversal reached {} objects, the model {}",
            seen.len(),
            live.len()
        );
        self.shared_prune(&mut pool);
        self.st.checked.add(&c);
        self.st.shared_checked += c.objects;
        c.objects
    }

    // --- the program ---------------------------------------------------------------------

    fn done(&self) -> bool {
        self.after_oom == Some(0)
            || self.stop.load(Ordering::Relaxed)
            || Instant::now() >= self.deadline
    }

    /// One nested scope of the random program.
    fn level<'s>(&mut self, s: &mut Scope<'s>, parent: Option<&dyn Frame>) -> Flow {
        let mut cur = Level::<'s, '_> {
            locals: Vec::new(),
            parent,
        };
        self.levels.push(Vec::new());
        let flow = self.run_level(s, &mut cur);
        self.levels.pop();
        flow
    }

    fn run_level<'s>(&mut self, s: &mut Scope<'s>, cur: &mut Level<'s, '_>) -> Flow {
        let depth = self.levels.len();
        loop {
            if self.done() {
                return Flow::Done;
            }
            if self.unwind {
                return Flow::Unwind;
            }
            self.st.ops += 1;
            if let Some(n) = &mut self.after_oom {
                *n -= 1;
            }
            if self.st.ops.is_multiple_of(CHECK_EVERY_OPS) {
                self.checkpoint(s, cur);
            }
            if cur.locals.len() >= MAX_LOCALS_PER_LEVEL {
                return Flow::Continue;
            }
            if self.shared.is_some() && self.rng.chance(SHARED_OPS_PER_MILLE) {
                self.shared_op(s);
                continue;
            }
            if self.cfg.fill
                && self.est_strong < self.share(self.live_cap, FILL_BELOW)
                && self.rng.chance(FILL_OPS_PER_MILLE)
            {
                self.fill_one(s, cur);
                continue;
            }
            let op = self.rng.below(1000);
            match op {
                0..=259 => {
                    if self.over_budget() {
                        self.shed(s, false);
                        continue;
                    }
                    if let Ok((l, id)) = self.alloc(s) {
                        cur.locals.push(l);
                        self.levels.last_mut().unwrap().push(id);
                        // Often link it from or to something reachable right away.
                        if self.rng.chance(600) {
                            if let Some(r) = self.pick_root() {
                                let steps = self.rng.below(3);
                                let (o, oid) = self.walk(s, cur, r, steps);
                                let n = s.get(l);
                                if self.rng.chance(500) && !self.objs[&oid].edges.is_empty() {
                                    let slot = self.rng.index(self.objs[&oid].edges.len());
                                    o.store(slot, Some(n));
                                    self.objs.get_mut(&oid).unwrap().edges[slot] = Some(id);
                                } else if !self.objs[&id].edges.is_empty() {
                                    let slot = self.rng.index(self.objs[&id].edges.len());
                                    n.store(slot, Some(o));
                                    self.objs.get_mut(&id).unwrap().edges[slot] = Some(oid);
                                }
                            }
                        }
                    }
                }
                260..=319 => self.garbage_burst(s, cur),
                320..=539 => self.link(s, cur, false),
                540..=569 => self.link(s, cur, true),
                570..=659 => self.write_bytes(s, cur),
                660..=709 => self.read_check(s, cur),
                710..=739 => self.new_local(s, cur),
                740..=759 => self.new_global(s, cur),
                760..=779 => {
                    if !self.cfg.fill && !self.globals.is_empty() {
                        let i = self.rng.index(self.globals.len());
                        self.globals.swap_remove(i);
                    }
                }
                780..=799 => self.new_weak(s, cur),
                800..=809 => {
                    if !self.weaks.is_empty() {
                        let i = self.rng.index(self.weaks.len());
                        self.weaks.swap_remove(i);
                    }
                }
                810..=824 => self.upgrade(s, cur),
                825..=839 => {
                    if self.over_budget() {
                        self.shed(s, false);
                    } else {
                        self.build(s, cur);
                    }
                }
                840..=859 => self.set_region(s, cur),
                860..=874 => {
                    if !self.cfg.fill {
                        let slot = self.rng.index(REGION_SLOTS_PER_THREAD);
                        self.region.set(s, self.region_base + slot, None);
                        self.region_ids[slot] = None;
                    }
                }
                875..=894 => self.escape(s, cur),
                895..=934 => {
                    if depth < MAX_DEPTH {
                        let flow = s.scope(|inner| self.level(inner, Some(&*cur)));
                        if flow != Flow::Continue {
                            return flow;
                        }
                    }
                }
                935..=969 => {
                    if depth > 1 {
                        return Flow::Continue;
                    }
                }
                970..=989 => s.poll(),
                _ => {
                    if self.rng.chance(200) {
                        let us = self.rng.below(1500);
                        s.blocking(|| std::thread::sleep(Duration::from_micros(us)));
                    } else {
                        s.poll();
                    }
                }
            }
        }
    }

    /// Traverse everything from the roots and compare with the model.
    fn checkpoint(&mut self, s: &mut Scope<'_>, cur: &dyn Frame) {
        self.st.checkpoints += 1;
        let expected_handles = self.total_locals();
        ensure!(
            self,
            s.handle_count() == expected_handles,
            "handle stack holds {} handles, the model {expected_handles}",
            s.handle_count()
        );
        let cycles_now = self.cycles();
        let before = self.st.checked.objects;
        s.scope(|cs| self.check_in(cs, cur, cycles_now));
        self.check_shared(s);
        let n = self.st.checked.objects - before;
        self.st.max_checked = self.st.max_checked.max(n);
        let strong = self.prune();
        if strong > self.share(self.live_cap, self.shed_at()) {
            self.shed(s, false);
        }
    }

    fn check_in(&mut self, cs: &mut Scope<'_>, cur: &dyn Frame, cycles_now: u64) {
        // Roots, in model order.
        let mut roots: Vec<(ObjRef<'_>, u64, String)> = Vec::new();
        let mut f = Some(cur);
        for d in (0..self.levels.len()).rev() {
            let fr = f.expect("frame chain");
            ensure!(
                self,
                fr.len() == self.levels[d].len(),
                "scope at depth {d} holds {} locals, the model {}",
                fr.len(),
                self.levels[d].len()
            );
            for (i, &id) in self.levels[d].iter().enumerate() {
                roots.push((cs.get(fr.local(i)), id, format!("local {i} at depth {d}")));
            }
            f = fr.parent();
        }
        for (i, (g, id)) in self.globals.iter().enumerate() {
            let l = cs.from_global(g);
            roots.push((cs.get(l), *id, format!("global #{i}")));
        }
        for (i, id) in self.region_ids.iter().enumerate() {
            let slot = self.region_base + i;
            match (self.region.get(cs, slot), id) {
                (None, None) => {}
                (Some(o), Some(id)) => roots.push((o, *id, format!("region slot {slot}"))),
                (o, id) => self.fail(format!(
                    "region slot {slot}: heap {:?}, model {id:?}",
                    o.map(|o| o.read_u64(0))
                )),
            }
        }
        // Traversal through the barrier, every object compared in full.
        let mut buf = std::mem::take(&mut self.scratch);
        let (seen, c) = self.traverse(&self.objs, roots, &mut buf);
        self.scratch = buf;
        self.st.checked.add(&c);
        let strong = self.strongly_reachable();
        ensure!(
            self,
            strong.len() == seen.len() && seen.keys().all(|k| strong.contains(k)),
            "traversal reached {} objects, the model {}",
            seen.len(),
            strong.len()
        );
        // Weak handles.
        for i in 0..self.weaks.len() {
            let target = self.weaks[i].target;
            let reachable = strong.contains(&target);
            if self.weaks[i].w.is_cleared() {
                ensure!(
                    self,
                    !reachable,
                    "weak handle #{i} was cleared but its target {target:#x} is reachable"
                );
                if !self.weaks[i].cleared {
                    self.weaks[i].cleared = true;
                    self.st.weak_cleared_seen += 1;
                }
                if self.weaks[i].pending_since.take().is_some() {
                    self.st.weak_deadlines += 1;
                }
            } else if reachable {
                ensure!(
                    self,
                    !self.weaks[i].cleared,
                    "weak handle #{i} read as cleared earlier, now holds {target:#x}"
                );
                self.weaks[i].pending_since = None;
                let l = cs.upgrade(&self.weaks[i].w).unwrap_or_else(|| {
                    self.fail(format!(
                        "weak handle #{i} to reachable {target:#x} upgrades to None"
                    ))
                });
                let o = cs.get(l);
                self.check_header(&o, target, &|| format!("weak handle #{i}"));
                ensure!(
                    self,
                    seen[&target] == o.address(),
                    "weak handle #{i} leads to {:#x}, the traversal met {target:#x} at {:#x}",
                    o.address(),
                    seen[&target]
                );
            } else {
                match self.weaks[i].pending_since {
                    None => self.weaks[i].pending_since = Some(cycles_now),
                    Some(c0) => ensure!(
                        self,
                        cycles_now < c0 + 2,
                        "weak handle #{i} to unreachable {target:#x} not cleared: unreachable \
                         since a checkpoint after {c0} cycles, now {cycles_now} completed"
                    ),
                }
            }
        }
    }

    /// Record an object reached by the traversal; the same id must always be at the same
    /// address (one copy per object).
    fn visit<'a>(
        &self,
        o: &ObjRef<'a>,
        id: u64,
        seen: &mut HashMap<u64, u64>,
        queue: &mut Vec<(ObjRef<'a>, u64)>,
        via: &dyn Fn() -> String,
    ) {
        match seen.get(&id) {
            Some(&a) => ensure!(
                self,
                a == o.address(),
                "{}: object {id:#x} reached at {:#x} and at {a:#x} (two copies)",
                via(),
                o.address()
            ),
            None => {
                seen.insert(id, o.address());
                queue.push((*o, id));
            }
        }
    }

    /// The end of a thread's run: a last full check, then every weak handle must clear once
    /// nothing is reachable.
    fn finish(&mut self, top: &mut Scope<'_>) {
        let empty = Level {
            locals: Vec::new(),
            parent: None,
        };
        self.checkpoint(top, &empty);
        if self.cfg.mode == Mode::Epsilon {
            // Nothing is ever collected: every weak handle still holds its object.
            for (i, w) in self.weaks.iter().enumerate() {
                ensure!(
                    self,
                    !w.w.is_cleared(),
                    "epsilon heap cleared weak handle #{i}"
                );
            }
            return;
        }
        // Drop every root: two cycles later every weak handle must be cleared.
        self.globals.clear();
        for r in 0..REGION_SLOTS_PER_THREAD {
            self.region.set(top, self.region_base + r, None);
        }
        self.region_ids.iter_mut().for_each(|r| *r = None);
        self.checkpoint(top, &empty);
        top.collect("torture: final");
        top.collect("torture: final");
        self.checkpoint(top, &empty);
        for (i, w) in self.weaks.iter().enumerate() {
            ensure!(
                self,
                w.w.is_cleared(),
                "weak handle #{i} to {:#x} not cleared two cycles after every root was dropped",
                w.target
            );
        }
    }

    fn run(&mut self, m: &mut gc_runtime::Mutator) {
        m.scope(|top| {
            if self.shared.is_some() {
                self.shared_init(top);
            }
            loop {
                let flow = top.scope(|s| self.level(s, None));
                self.unwind = false;
                if flow == Flow::Done {
                    break;
                }
                if self.over_budget() {
                    self.shed(top, false);
                    self.unwind = false;
                }
            }
            // A thread that failed took the run down: no final checks then.
            if !self.stop.load(Ordering::Relaxed) {
                self.finish(top);
            }
        });
    }
}

// ---------------------------------------------------------------------------------------
// Running.

static SERIAL: Mutex<()> = Mutex::new(());
static CURRENT: Mutex<String> = Mutex::new(String::new());
static HOOK: Once = Once::new();
/// What to add to an abort's message, and the file to write both to (see [`set_abort_note`]).
static ABORT_NOTE: Mutex<Option<(String, Option<String>)>> = Mutex::new(None);

/// If a run aborts the process (a GC thread panicked, or the watchdog fired), also print
/// `note` and write the abort message and `note` to `report_path` (if given). The soak sets
/// its totals so far here.
pub fn set_abort_note(note: String, report_path: Option<String>) {
    *ABORT_NOTE.lock().unwrap_or_else(|e| e.into_inner()) = Some((note, report_path));
}

/// Forget the note of [`set_abort_note`].
pub fn clear_abort_note() {
    *ABORT_NOTE.lock().unwrap_or_else(|e| e.into_inner()) = None;
}

/// Print `msg` (and the abort note) to the stderr handle directly, write the report file if
/// one is set, and abort. (The GC threads inherit the test harness's output capture, which
/// would swallow `eprintln!` before the abort.)
fn abort_with(msg: String) -> ! {
    let note = ABORT_NOTE.try_lock().ok().and_then(|n| n.as_ref().cloned());
    let mut text = msg;
    if let Some((note, path)) = note {
        text.push_str(&note);
        if let Some(path) = path {
            let _ = std::fs::write(&path, format!("FAILED (aborted)\n{text}"));
        }
    }
    let _ = std::io::Write::write_all(&mut std::io::stderr(), text.as_bytes());
    std::process::abort();
}

/// A panic in a GC thread (a verifier failure, an assertion in the collector) would leave
/// the mutators parked forever: report the run and abort instead of hanging.
fn install_gc_panic_hook() {
    HOOK.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            prev(info);
            let name = std::thread::current().name().unwrap_or("").to_string();
            if name.starts_with("gc-") {
                let cur = CURRENT.lock().map(|c| c.clone()).unwrap_or_default();
                abort_with(format!(
                    "\nGC thread {name:?} {info}\nduring {cur}; aborting (the mutators would \
                     wait forever)\n"
                ));
            }
        }));
    });
}

/// Aborts the process with a message if the run is not over by `limit`.
struct Watchdog(Option<std::sync::mpsc::Sender<()>>);

impl Watchdog {
    fn new(limit: Duration, what: String) -> Self {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        std::thread::Builder::new()
            .name("torture-watchdog".into())
            .spawn(move || {
                if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(limit) {
                    abort_with(format!(
                        "\ntorture watchdog: {what} did not finish within {limit:?}; aborting\n"
                    ));
                }
            })
            .expect("spawning the watchdog");
        Watchdog(Some(tx))
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        if let Some(tx) = self.0.take() {
            let _ = tx.send(());
        }
    }
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else {
        "(non-string panic)".into()
    }
}

/// A run that failed: what failed, and what the run had done until then.
#[derive(Clone, Debug)]
pub struct Failure {
    /// The run, the failures of its threads and the replay command.
    pub message: String,
    /// The figures of the failed run up to the failure.
    pub report: Report,
}

/// Run one torture configuration to the end; panics (naming the seed) on any mismatch.
pub fn run(cfg: &Config) -> Report {
    try_run(cfg)
        .unwrap_or_else(|f| panic!("{}\nthe run until the failure:\n{}", f.message, f.report))
}

/// Run one torture configuration to the end; a mismatch in any thread stops every thread
/// and returns the failure (naming the seed). A failure in a GC thread aborts the process.
pub fn try_run(cfg: &Config) -> Result<Report, Box<Failure>> {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    install_gc_panic_hook();
    let replay = cfg.replay_command();
    let what = format!(
        "torture[{}] mode={} heap={}M threads={} live={} shared={} seed={:#x} (replay: {replay})",
        cfg.name,
        cfg.mode,
        cfg.max_heap >> 20,
        cfg.threads,
        cfg.live_fraction,
        cfg.shared_fraction,
        cfg.seed
    );
    eprintln!("{what}: running for {:?}", cfg.duration);
    *CURRENT.lock().unwrap_or_else(|e| e.into_inner()) = what.clone();
    let _watchdog = Watchdog::new(cfg.duration * 4 + Duration::from_secs(120), what.clone());
    let started = Instant::now();
    let heap = Heap::new(
        HeapConfig::new(cfg.max_heap)
            .mode(cfg.mode)
            .gc_threads(cfg.gc_threads)
            .verify(true)
            .continuous(true),
    )
    .unwrap_or_else(|e| panic!("{what}: creating the heap: {e}"));
    let region = heap.root_region(REGION_SLOTS_PER_THREAD * cfg.threads);
    let sizes = PageSizes::for_max_heap(cfg.max_heap);
    let shared_cap = (cfg.max_heap as f64 * cfg.shared_fraction) as u64;
    let pool = Mutex::new(SharedPool::new(shared_cap));
    let stop = AtomicBool::new(false);
    // The threads share what the pool leaves of the live-set budget.
    let private_live =
        ((cfg.max_heap as f64 * cfg.live_fraction) as u64).saturating_sub(shared_cap);
    let results: Vec<(ThreadStats, Result<(), String>)> = std::thread::scope(|sc| {
        let handles: Vec<_> = (0..cfg.threads)
            .map(|t| {
                let (heap, region, pool, stop) = (&heap, &region, &pool, &stop);
                std::thread::Builder::new()
                    .name(format!("torture-{t}"))
                    .spawn_scoped(sc, move || {
                        let seed = splitmix(cfg.seed.wrapping_add(t as u64));
                        let mut p = Program {
                            cfg,
                            heap,
                            region,
                            region_base: t * REGION_SLOTS_PER_THREAD,
                            sizes,
                            thread: t,
                            seed,
                            rng: Rng(seed),
                            next_id: ((t as u64) + 1) << 48,
                            objs: HashMap::new(),
                            model_bytes: 0,
                            levels: Vec::new(),
                            globals: Vec::new(),
                            weaks: Vec::new(),
                            region_ids: vec![None; REGION_SLOTS_PER_THREAD],
                            live_cap: private_live / cfg.threads as u64,
                            max_objects: cfg.max_objects,
                            prune_at: (0, 0),
                            est_strong: 0,
                            deadline: Instant::now() + cfg.duration,
                            unwind: false,
                            after_oom: None,
                            st: ThreadStats::default(),
                            scratch: Vec::new(),
                            shared: (shared_cap > 0).then_some(pool),
                            next_shared_id: (((t as u64) + 1) << 48) | (1 << 47),
                            stop,
                        };
                        let _ = p.seed;
                        let r = std::panic::catch_unwind(AssertUnwindSafe(|| {
                            let mut m = heap
                                .attach(&format!("torture-{t}"))
                                .expect("attaching a mutator");
                            p.run(&mut m);
                        }));
                        let r = r.map_err(|e| {
                            // Stop the other threads: the run has failed.
                            stop.store(true, Ordering::Relaxed);
                            panic_message(&*e)
                        });
                        (p.st, r)
                    })
                    .expect("spawning a torture thread")
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|e| (ThreadStats::default(), Err(panic_message(&*e))))
            })
            .collect()
    });
    let mut report = Report {
        runs: 1,
        ..Default::default()
    };
    let mut failures = Vec::new();
    for (t, (st, r)) in results.into_iter().enumerate() {
        report.add_thread(&st);
        if let Err(msg) = r {
            failures.push(format!("thread {t}: {msg}"));
        }
    }
    report.duration = started.elapsed();
    report.add_gc(&heap.stats(), cfg.max_heap);
    drop(pool);
    drop(region);
    drop(heap);
    if !failures.is_empty() {
        return Err(Box::new(Failure {
            message: format!(
                "{what} FAILED:\n{}\nreplay with: {replay}",
                failures.join("\n")
            ),
            report,
        }));
    }
    eprintln!("{what}: ok\n{report}");
    Ok(report)
}
