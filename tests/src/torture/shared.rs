//! The pool of objects all threads share: directory objects held by global handles, whose
//! slots hold the pool's other objects, which point at pool objects only. One lock guards the
//! pool and its model, so the model is exact whenever the lock is free while the collector
//! moves the objects under every thread. This file holds the pool's model and the operations
//! on it: taking the lock (waiting for it in a blocking region), creating the directories,
//! allocating, walking, writing, linking and reading pool objects (some of them direct
//! buffers' owners, whose buffers both threads write, read, retain and release), and keeping
//! the pool under its cap.

use super::direct::BufOp;
use super::model::{reach_in, ObjModel};
use super::ops::write_random_bytes;
use super::program::{Program, FILL_SHED_TO};
use gc_core::object_size;
use gc_runtime::{Global, Local, ObjRef, Scope};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;
use std::sync::{MutexGuard, TryLockError};

/// Global handles of the shared pool, each to a directory object.
const SHARED_ROOTS: usize = 16;
/// Reference slots of a directory: each holds a pool object or null.
const DIR_SLOTS: u32 = 256;
/// Share of the pool's allocations that make a direct buffer's owner (per mille), and the
/// native bytes the pool's buffers keep at most (beyond it, it makes no more).
const SHARED_BUFFERS_PER_MILLE: u64 = 40;
const SHARED_NATIVE_CAP: u64 = 1 << 20;

/// The shared pool and its model (see the module documentation), behind one lock. Its roots
/// are global handles to *directories*, pool objects with [`DIR_SLOTS`] slots that hold the
/// other pool objects; those point at each other too.
pub(super) struct SharedPool {
    /// The pool's roots: global handles and the ids of their directories.
    pub(super) roots: Vec<Option<(Global, u64)>>,
    pub(super) objs: HashMap<u64, ObjModel>,
    /// Sum of the footprints of the objects in `objs`.
    pub(super) model_bytes: u64,
    /// Native bytes of the unreleased buffers in `objs`.
    pub(super) native_bytes: u64,
    /// Reachable bytes the pool keeps at most.
    pub(super) cap: u64,
}

impl SharedPool {
    pub(super) fn new(cap: u64) -> Self {
        SharedPool {
            roots: (0..SHARED_ROOTS).map(|_| None).collect(),
            objs: HashMap::new(),
            model_bytes: 0,
            native_bytes: 0,
            cap,
        }
    }

    fn root_ids(&self) -> impl Iterator<Item = u64> + '_ {
        self.roots.iter().flatten().map(|r| r.1)
    }

    pub(super) fn reachable(&self) -> Result<HashSet<u64>, u64> {
        reach_in(&self.objs, self.root_ids())
    }

    /// Forget the objects no root reaches; returns the reachable bytes.
    fn prune(&mut self) -> Result<u64, u64> {
        let live = self.reachable()?;
        self.objs.retain(|id, _| live.contains(id));
        self.model_bytes = self.objs.values().map(|o| o.footprint).sum();
        self.native_bytes = self.objs.values().map(|o| o.native_bytes()).sum();
        Ok(self.model_bytes)
    }
}

impl<'h> Program<'h> {
    /// Take the shared pool's lock: at once if it is free, else waiting for it in a blocking
    /// region (a pause must not wait for a thread that waits for the lock, since the holder
    /// may be stopped at the pause). `None` if a thread failed while holding it; then this
    /// thread stops too.
    pub(super) fn lock_shared(&mut self, s: &mut Scope<'_>) -> Option<MutexGuard<'h, SharedPool>> {
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
    pub(super) fn shared_prune(&self, pool: &mut SharedPool) -> u64 {
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
    pub(super) fn shared_op(&mut self, s: &mut Scope<'_>) {
        self.st.shared_ops += 1;
        match self.rng.below(100) {
            0..=19 => self.shared_alloc(s),
            20..=44 => self.shared_write(s),
            45..=64 => self.shared_link(s, false),
            65..=71 => self.shared_link(s, true),
            72..=79 => self.shared_buffer_op(s),
            _ => self.shared_read(s),
        }
    }

    /// Create the pool's missing directories (the first thread to get here makes them).
    pub(super) fn shared_init(&mut self, s: &mut Scope<'_>) {
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
        // A buffer now and then, unless the pool's buffers hold their share (a racy read:
        // the cap is loose).
        let buffer = self.rng.chance(SHARED_BUFFERS_PER_MILLE)
            && self
                .shared
                .and_then(|p| {
                    p.try_lock()
                        .ok()
                        .map(|p| p.native_bytes < SHARED_NATIVE_CAP)
                })
                .unwrap_or(false);
        self.next_shared_id += 1;
        let id = self.next_shared_id;
        s.scope(|ss| {
            let made = if buffer {
                self.new_buffer(ss).ok_or(())
            } else {
                self.new_object(ss, refs, bytes, id)
            };
            let Ok((l, mut m)) = made else {
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
            pool.native_bytes += m.native_bytes();
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

    /// Write random raw bytes of a pool object (of a buffer's native memory, for an owner,
    /// which is rooted for that: hence the scope of its own).
    fn shared_write(&mut self, s: &mut Scope<'_>) {
        s.scope(|ss| {
            let Some(mut pool) = self.lock_shared(ss) else {
                return;
            };
            let steps = self.rng.below(4);
            let Some((o, id)) = self.shared_walk(ss, &pool, steps) else {
                return;
            };
            if pool.objs[&id].buf.is_some() {
                let l = ss.root(o);
                self.shared_buffer_at(ss, &mut pool, l, id, BufOp::Write);
                return;
            }
            let n = pool.objs[&id].bytes.len();
            if n <= 8 {
                return;
            }
            let off = 8 + self.rng.index(n - 8);
            let most = if self.rng.chance(50) { 8192 } else { 256 };
            let len = (1 + self.rng.index(most)).min(n - off);
            let model = &mut pool.objs.get_mut(&id).unwrap().bytes;
            write_random_bytes(&mut self.rng, &o, model, off, len);
        });
    }

    /// A buffer op on the pool's buffer `id`, whose owner `o` is rooted in `ss`, under the
    /// pool's lock (`pool`).
    fn shared_buffer_at(
        &mut self,
        ss: &mut Scope<'_>,
        pool: &mut SharedPool,
        l: Local<'_>,
        id: u64,
        kind: BufOp,
    ) {
        let via = || format!("shared buffer {id:#x}");
        let d = self.direct_of(ss, l, &via);
        let mut m = pool
            .objs
            .get_mut(&id)
            .unwrap()
            .buf
            .take()
            .expect("a buffer's model");
        let freed = self.buffer_op(&d, &mut m, kind, &via);
        pool.objs.get_mut(&id).unwrap().buf = Some(m);
        pool.native_bytes = pool.native_bytes.saturating_sub(freed);
    }

    /// Walk the pool to an object; if it is a buffer, or has one in a slot, run a buffer op
    /// on it.
    fn shared_buffer_op(&mut self, s: &mut Scope<'_>) {
        s.scope(|ss| {
            let Some(mut pool) = self.lock_shared(ss) else {
                return;
            };
            let steps = self.rng.below(4);
            let Some((o, id)) = self.shared_walk(ss, &pool, steps) else {
                return;
            };
            if pool.objs[&id].buf.is_some() {
                let l = ss.root(o);
                self.shared_buffer_at(ss, &mut pool, l, id, BufOp::Any);
                return;
            }
            let Some((i, bid)) = super::direct::pick_buffer_slot(&pool.objs, id, &mut self.rng)
            else {
                return;
            };
            let b = o.load(i).unwrap_or_else(|| {
                self.fail(format!(
                    "slot {i} of shared {id:#x} is null, model says buffer {bid:#x}"
                ))
            });
            self.header_in(&pool.objs, &b, bid, &|| {
                format!("slot {i} of shared {id:#x}")
            });
            self.count_header_walked();
            let l = ss.root(b);
            self.shared_buffer_at(ss, &mut pool, l, bid, BufOp::Any);
        });
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

    /// Walk to a pool object and compare all of it with the pool's model (a buffer's native
    /// bytes too: its owner is rooted for that, in a scope of its own).
    fn shared_read(&mut self, s: &mut Scope<'_>) {
        s.scope(|ss| {
            let Some(mut pool) = self.lock_shared(ss) else {
                return;
            };
            let steps = self.rng.below(6);
            let Some((o, id)) = self.shared_walk(ss, &pool, steps) else {
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
            if pool.objs[&id].buf.is_some() {
                let l = ss.root(o);
                self.shared_buffer_at(ss, &mut pool, l, id, BufOp::Check);
            }
        });
    }
}
