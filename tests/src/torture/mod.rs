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
//! - allocates direct buffers (`Scope::alloc_direct`, and `Scope::alloc_pooled` from a
//!   `NativePool` all threads share), whose owners go wherever other objects go (the shared
//!   pool included); writes, fills and reads random byte ranges of them, compared with the
//!   model's copy of their native bytes; retains and releases them (then every access must be
//!   refused as `NativeError::Released`); and drops buffers unreleased, in garbage bursts and
//!   bursts of buffers, for their cleaners;
//! - checks the header and id of every object it meets on a walk and the slot it came
//!   through; compares whole objects (header, every slot, every raw byte) when it reads one
//!   back or resurrects one through a weak handle; and at checkpoints traverses the whole
//!   graph from the roots, comparing every object reached in full: header, every reference
//!   slot (null, or the id of the object it leads to) and every raw byte. Each object must be
//!   reached at one address (no duplicate copies), the set reached must be the model's
//!   strongly reachable set, and the handle stack must hold exactly the model's locals.
//!   Every buffer reached is compared in full too: length, pooled or not, reference count,
//!   every native byte.
//!
//! At the end of a run, once every owner is dropped and two cycles ran, every buffer must
//! have been freed exactly once, by `release` or by its owner's cleaner (the heap's
//! `DirectStats` agree with what the programs did), and no native byte be in use (in the heap
//! or the shared pool); in `epsilon` mode nothing may have been cleaned, and exactly the bytes
//! not released are still in use. With [`Config::max_direct`] allocations reach the
//! direct-memory limit and run its cycles, and threads now and then hold buffers until one is
//! refused there.
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
//! contents must still be intact (a weak handle never yields a freed address).
//!
//! The report counts what was compared (objects, slots and raw bytes, at checkpoints and
//! between them; buffer contents), what the collector did (the relocation counters of every
//! [`CycleRecord`](gc_runtime::CycleRecord)) and the direct-buffer paths reached (released,
//! cleaned by cleaners, cycles at the limit). A mismatch fails the run at once.
//!
//! The op sequence of a thread is a function of its seed (and of which allocations fail and,
//! with a shared pool, of what the other thread did to the pool); the interleaving with the
//! collector and the other thread is not reproducible. Failures name the seed and the
//! command that replays it.
//!
//! The engine is split by concept: `model` (the shadow model of a thread's objects and what
//! its roots reach), `program` (one thread's program: its state, its nested scopes and the
//! loop that draws each operation), `ops` (the operations on a thread's own objects),
//! `direct` (direct buffers: their model, their operations and the end-of-run accounting),
//! `budget` (keeping the live set under its budget), `shared` (the shared pool and its
//! operations), `check` (comparing the heap with the model, checkpoints included), `rng` (the
//! seeded generator), `report` (the counters and their summary) and `harness` (running a
//! configuration: threads, watchdog, abort on a GC thread's panic).

use gc_runtime::{ColorChoice, Mode};
use rng::splitmix;
use std::time::Duration;

/// Check `$cond`, or fail with the run's context (seed, thread, op).
macro_rules! ensure {
    ($p:expr, $cond:expr, $($arg:tt)*) => {
        if !$cond {
            $p.fail(format!($($arg)*));
        }
    };
}

mod budget;
mod check;
mod direct;
mod harness;
mod model;
mod ops;
mod program;
mod report;
mod rng;
mod shared;

pub use harness::{clear_abort_note, run, set_abort_note, try_run, Failure};
pub use report::{Checked, Report};

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
    /// `HeapConfig::max_direct_memory`: a small one makes allocations of direct buffers
    /// reach the limit and run "Direct Memory" cycles (and, rarely, fail at it). `None` for
    /// the default (the heap's size).
    pub max_direct: Option<u64>,
    /// `HeapConfig::pacing` (on by default): off, threads that outrun the collector stall
    /// rather than being slowed.
    pub pacing: bool,
    /// `PacingConfig::min_mutator_share`: `None` for the default floor (half of every 10 ms
    /// left to each thread); a higher one leaves the pacer less to hold, so threads that
    /// outrun the collector still fill the heap.
    pub pacing_floor: Option<f64>,
    /// `HeapConfig::continuous` (on by default): cycles back to back; off, the director
    /// starts them (by allocation rate), so more garbage gathers between two cycles.
    pub continuous: bool,
    /// `HeapConfig::relocation_reserve`: `None` for the default; `Some(0)` lets mutators
    /// fill every page, so a full heap must compact pages in place.
    pub relocation_reserve: Option<u64>,
    /// `Heap::swing_gc_workers_for_tests`: 0 for off; `n` makes the GC workers' target flip
    /// between `gc_threads` and one per core every `n` reads, so workers join and leave
    /// running marking and relocation phases all the time.
    pub swing_gc_workers: u64,
    /// `HeapConfig::mark_colors`: `Alternate` (the default) marks with Marked0 and Marked1;
    /// `Rotate` makes every third cycle mark with Marked2, so the barriers, the verifier and
    /// the stale pointers' remapping meet the third color.
    pub mark_colors: ColorChoice,
    /// Probe each thread's first fill-mode shed: inside its model traversal, wait (at most
    /// [`SHED_PROBE_LIMIT`]) for a GC pause to complete. The traversal reads no heap memory
    /// and runs as a blocked thread, so a pause must not wait for it; the report counts the
    /// probes and those a pause completed in ([`Report::shed_probes`]).
    pub shed_probe: bool,
    /// `HeapConfig::track_generations`: page ages, the store barrier and the remembered set,
    /// whose completeness the verifier then checks in every pause.
    pub track_generations: bool,
    /// Minor cycles (`Heap::collect_minor`, with `track_generations` in `concurrent` mode):
    /// `(minors, majors)` requested in turn, back to back, by a thread of the run while the
    /// programs run; `None`: no minor runs.
    pub minor_cycles: Option<(u32, u32)>,
    /// With `minor_cycles`: before the last major of each round the requester asks that major
    /// to stop the store barrier's remembering (`Heap::stop_remembering_at_next_major_for_tests`,
    /// what the `generational` director does while minors do not pay), so the next round's
    /// first minor runs as a full cycle that remembers again.
    pub stop_remembering: bool,
    /// A fixed `HeapConfig::tenuring_threshold` for the minors' aging and promotion; `None`:
    /// the default (adaptive).
    pub tenuring_threshold: Option<u8>,
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
            max_direct: None,
            pacing: true,
            pacing_floor: None,
            continuous: true,
            relocation_reserve: None,
            swing_gc_workers: 0,
            mark_colors: ColorChoice::Alternate,
            shed_probe: false,
            track_generations: false,
            minor_cycles: None,
            stop_remembering: false,
            tenuring_threshold: None,
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

/// How long a shed probe waits for a pause to complete inside the shed's model traversal
/// (see [`Config::shed_probe`]): a bound on a pause that cannot complete, far above the few
/// milliseconds of a cycle's pauses on a loaded machine.
pub const SHED_PROBE_LIMIT: Duration = Duration::from_secs(60);

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
