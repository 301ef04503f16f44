//! One mutator thread's random program: its state (the shadow model, the mirrored roots, the
//! budgets, the counters), the chain of nested scopes whose locals it holds, and the loop
//! that draws each operation from the seeded generator and runs it. The weights and the order
//! of those draws make up a seed's op sequence.

use super::model::{ObjModel, WeakEntry};
use super::report::ThreadStats;
use super::rng::Rng;
use super::shared::SharedPool;
use super::Config;
use gc_core::PageSizes;
use gc_runtime::native::NativePool;
use gc_runtime::{Global, Heap, Local, RootRegion, Scope};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A nested scope's locals, readable from inner scopes.
pub(super) trait Frame {
    fn len(&self) -> usize;
    fn local(&self, i: usize) -> Local<'_>;
    fn parent(&self) -> Option<&dyn Frame>;
}

pub(super) struct Level<'s, 'p> {
    pub(super) locals: Vec<Local<'s>>,
    pub(super) parent: Option<&'p dyn Frame>,
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
pub(super) const REGION_SLOTS_PER_THREAD: usize = 48;
const CHECK_EVERY_OPS: u64 = 2500;
/// Share of the ops that work on the shared pool (when there is one).
const SHARED_OPS_PER_MILLE: u64 = 200;
/// Fill mode: share of the ops that add a big object while the live set is under
/// [`FILL_BELOW`] of its budget, the share above which a thread sheds roots, and the share
/// shedding brings it down to (all per mille).
const FILL_OPS_PER_MILLE: u64 = 50;
const FILL_BELOW: u64 = 900;
pub(super) const FILL_SHED_AT: u64 = 950;
pub(super) const FILL_SHED_TO: u64 = 850;

pub(super) struct Program<'h> {
    pub(super) cfg: &'h Config,
    pub(super) heap: &'h Heap,
    pub(super) region: &'h RootRegion,
    pub(super) region_base: usize,
    pub(super) sizes: PageSizes,
    pub(super) thread: usize,
    pub(super) seed: u64,
    pub(super) rng: Rng,
    pub(super) next_id: u64,
    pub(super) objs: HashMap<u64, ObjModel>,
    /// Sum of the sizes of the objects in `objs`.
    pub(super) model_bytes: u64,
    pub(super) levels: Vec<Vec<u64>>,
    pub(super) globals: Vec<(Global, u64)>,
    pub(super) weaks: Vec<WeakEntry>,
    pub(super) region_ids: Vec<Option<u64>>,
    pub(super) live_cap: u64,
    pub(super) max_objects: usize,
    /// Model size (bytes, objects) above which the next allocation prunes the model.
    pub(super) prune_at: (u64, usize),
    /// Strongly reachable bytes at the last prune, plus what fill ops added since.
    pub(super) est_strong: u64,
    pub(super) deadline: Instant,
    pub(super) unwind: bool,
    /// Epsilon: ops left after the first out-of-memory error.
    pub(super) after_oom: Option<u64>,
    pub(super) st: ThreadStats,
    pub(super) scratch: Vec<u8>,
    /// The pool shared with the other threads, if the configuration has one.
    pub(super) shared: Option<&'h Mutex<SharedPool>>,
    /// Ids of this thread's shared-pool objects (a range apart from its own objects').
    pub(super) next_shared_id: u64,
    /// Set when some thread failed: the others stop.
    pub(super) stop: &'h AtomicBool,
    /// Majors the cycle requester completed (`Config::minor_cycles`): with minors running,
    /// an unreachable old object is reclaimed only by majors, so the weak-handle deadlines
    /// count these instead of every cycle.
    pub(super) majors_done: &'h AtomicU64,
    /// The native pool every thread's pooled direct buffers come from.
    pub(super) native: &'h NativePool,
    /// Native bytes of the unreleased buffers in `objs`, and the share of them a thread keeps
    /// at most (beyond it, it allocates no tracked buffer); the model is pruned for them only
    /// once they have grown past `native_prune_at`.
    pub(super) native_bytes: u64,
    pub(super) native_cap: u64,
    pub(super) native_prune_at: u64,
    /// The heap's direct-memory limit (`HeapConfig::max_direct_memory` or its default).
    pub(super) direct_limit: u64,
    /// Epsilon: unpooled buffers this thread may still allocate.
    pub(super) epsilon_mappings_left: u64,
}

impl<'h> Program<'h> {
    fn ctx(&self) -> String {
        format!(
            "torture[{}] mode={} seed={:#x} thread={} op={}",
            self.cfg.name, self.cfg.mode, self.cfg.seed, self.thread, self.st.ops
        )
    }

    #[track_caller]
    pub(super) fn fail(&self, msg: String) -> ! {
        panic!("{}: MISMATCH: {msg}", self.ctx());
    }

    pub(super) fn cycles(&self) -> u64 {
        if self.cfg.minor_cycles.is_some() {
            return self.majors_done.load(Ordering::Relaxed);
        }
        // Minors keep old garbage: a weak handle's referent is cleared by majors only.
        self.heap.usage().majors
    }

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
                    if self.over_budget(s) {
                        self.shed(s);
                        continue;
                    }
                    if let Ok((l, id)) = self.alloc(s) {
                        self.hold(cur, l, id);
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
                260..=316 => self.garbage_burst(s, cur),
                // Bursts of buffers three times as often where a small limit is to be reached;
                // there, now and then, buffers held until the limit refuses one.
                317..=319 => {
                    if op == 319 && self.cfg.max_direct.is_some() && self.rng.chance(50) {
                        self.buffer_hoard(s)
                    } else if op == 317 || self.cfg.max_direct.is_some() {
                        self.buffer_burst(s)
                    }
                }
                320..=519 => self.link(s, cur, false),
                520..=539 => self.buffer_walk_op(s, cur),
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
                    if self.over_budget(s) {
                        self.shed(s);
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

    pub(super) fn run(&mut self, m: &mut gc_runtime::Mutator) {
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
                if self.over_budget(top) {
                    self.shed(top);
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
