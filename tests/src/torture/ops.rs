//! The random program's operations on a thread's own objects: choosing object shapes,
//! picking a root and walking random edges from it (checking every object met), allocating
//! objects and writing their bytes, linking and unlinking slots, creating locals, globals,
//! weak handles and root-region slots, upgrading weak handles (resurrecting unreachable
//! targets), escaping scopes, building lists, trees and DAGs, bursts of untracked garbage and
//! fill mode's big objects. Some allocations make direct buffers' owners, and garbage bursts
//! hold untracked buffers too (see `direct`); a write or a read that reaches an owner works on
//! its buffer, never on the owner's raw bytes, which are the runtime's. Every operation
//! changes the heap and the shadow model together.

use super::direct::{buffer_len, BufOp, DirectCounts};
use super::model::{ObjModel, WeakEntry};
use super::program::{Frame, Level, Program, REGION_SLOTS_PER_THREAD};
use super::rng::{splitmix, Rng};
use gc_core::{object_size, PageKind};
use gc_runtime::{Local, Mode, ObjRef, Offset, Scope};

/// Share of the allocations that make a direct buffer's owner, and of the objects of a
/// garbage burst (per mille).
const BUFFERS_PER_MILLE: u64 = 25;
const GARBAGE_BUFFERS_PER_MILLE: u64 = 15;

/// A root the program can start a walk from.
#[derive(Clone, Copy, Debug)]
pub(super) enum Root {
    /// (depth, index) of a local.
    Local(usize, usize),
    Global(usize),
    Region(usize),
}

impl<'h> Program<'h> {
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
    pub(super) fn pick_root(&mut self) -> Option<Root> {
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

    /// Hold `l` (the object `id`) as a new local of the current level, and record it in the
    /// model's current level, which mirrors `cur.locals` entry for entry.
    pub(super) fn hold<'s>(&mut self, cur: &mut Level<'s, '_>, l: Local<'s>, id: u64) {
        cur.locals.push(l);
        self.levels.last_mut().expect("a level").push(id);
    }

    /// [`Self::walk`] from `root`, then hold the object reached as a new local of the current
    /// level. Returns the local and the object's id.
    fn hold_reached<'s>(
        &mut self,
        s: &Scope<'s>,
        cur: &mut Level<'s, '_>,
        root: Root,
        steps: u64,
    ) -> (Local<'s>, u64) {
        let (o, id) = self.walk(s, cur, root, steps);
        let l = s.root(o);
        self.hold(cur, l, id);
        (l, id)
    }

    /// Start at `root` and follow up to `steps` random non-null edges; checks every object on
    /// the way. Returns the object reached and its id.
    pub(super) fn walk<'a, 's>(
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
                self.hold(cur, l, want);
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
                    got.map_or(Offset::ZERO, |g| g.address())
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

    pub(super) fn alloc<'s>(&mut self, s: &mut Scope<'s>) -> Result<(Local<'s>, u64), ()> {
        // Now and then a direct buffer's owner (else, if none is made, an ordinary object).
        if self.rng.chance(BUFFERS_PER_MILLE) {
            if let Some(r) = self.alloc_buffer(s) {
                return Ok(r);
            }
        }
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
    pub(super) fn new_object<'s>(
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
                        buf: None,
                    },
                ))
            }
            Err(e) => {
                self.on_oom(s, &e.to_string(), size);
                Err(())
            }
        }
    }

    pub(super) fn garbage_burst(&mut self, s: &mut Scope<'_>, cur: &Level<'_, '_>) {
        let n = self.rng.range(1, self.cfg.garbage_burst.max(1));
        let target = if self.rng.chance(500) && !cur.locals.is_empty() {
            Some(cur.locals[self.rng.index(cur.locals.len())])
        } else {
            None
        };
        let seed = self.rng.next();
        let mut oom = None;
        let mut direct_err = None;
        let mut dc = DirectCounts::default();
        let p = &*self;
        // Epsilon never cleans: its garbage buffers are all released (and their mappings
        // given back); elsewhere most die unreleased, for their cleaners.
        let release_per_mille = if p.cfg.mode == Mode::Epsilon {
            1000
        } else {
            300
        };
        s.scope(|g| {
            let mut rng = Rng(seed);
            let mut prev: Option<Local<'_>> = None;
            for _ in 0..n {
                if rng.chance(GARBAGE_BUFFERS_PER_MILLE) {
                    let len = buffer_len(&mut rng);
                    let pooled = rng.chance(500);
                    let r = if pooled {
                        g.alloc_pooled(p.native, len)
                    } else {
                        g.alloc_direct(len)
                    };
                    match r {
                        Ok(l) => {
                            p.garbage_buffer(
                                g,
                                l,
                                len,
                                pooled,
                                &mut rng,
                                &mut dc,
                                release_per_mille,
                            );
                            prev = Some(l);
                        }
                        Err(e) => {
                            direct_err = Some((e, len));
                            break;
                        }
                    }
                    continue;
                }
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
        self.st.direct.add(&dc);
        if let Some(e) = oom {
            self.on_oom(s, &e, 0);
        }
        if let Some((e, len)) = direct_err {
            self.on_direct_error(s, e, len);
        }
    }

    pub(super) fn write_bytes<'s>(&mut self, s: &mut Scope<'s>, cur: &mut Level<'s, '_>) {
        let Some(root) = self.pick_root() else { return };
        let steps = self.rng.below(4);
        let (o, id) = self.walk(s, cur, root, steps);
        if self.objs[&id].buf.is_some() {
            // An owner's raw bytes are the runtime's: write the buffer's instead.
            let l = s.root(o);
            self.own_buffer_op(s, cur, l, id, BufOp::Write);
            return;
        }
        let n = self.objs[&id].bytes.len();
        if n <= 8 {
            return;
        }
        let off = 8 + self.rng.index(n - 8);
        let len = (1 + self.rng.index(256)).min(n - off);
        let model = &mut self.objs.get_mut(&id).unwrap().bytes;
        write_random_bytes(&mut self.rng, &o, model, off, len);
    }

    /// Walk to an object and compare all of it with the model.
    pub(super) fn read_check<'s>(&mut self, s: &mut Scope<'s>, cur: &mut Level<'s, '_>) {
        let Some(root) = self.pick_root() else { return };
        let steps = self.rng.below(6);
        let (o, id) = self.walk(s, cur, root, steps);
        self.check_full_walked(&o, id, &|| format!("read of {id:#x} from {root:?}"));
        if self.objs[&id].buf.is_some() {
            let l = s.root(o);
            self.own_buffer_op(s, cur, l, id, BufOp::Check);
        }
    }

    pub(super) fn link<'s>(&mut self, s: &Scope<'s>, cur: &mut Level<'s, '_>, null: bool) {
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

    pub(super) fn new_local<'s>(&mut self, s: &Scope<'s>, cur: &mut Level<'s, '_>) {
        let Some(r) = self.pick_root() else { return };
        let steps = self.rng.range(1, 4);
        self.hold_reached(s, cur, r, steps);
    }

    pub(super) fn new_global<'s>(&mut self, s: &Scope<'s>, cur: &mut Level<'s, '_>) {
        let Some(r) = self.pick_root() else { return };
        let steps = self.rng.below(3);
        let (l, id) = self.hold_reached(s, cur, r, steps);
        let g = s.global(l);
        self.globals.push((g, id));
    }

    pub(super) fn new_weak<'s>(&mut self, s: &Scope<'s>, cur: &mut Level<'s, '_>) {
        let Some(r) = self.pick_root() else { return };
        let steps = self.rng.below(4);
        let (l, id) = self.hold_reached(s, cur, r, steps);
        let w = s.weak(l);
        self.weaks.push(WeakEntry {
            w,
            target: id,
            cleared: false,
            pending_since: None,
        });
    }

    pub(super) fn set_region<'s>(&mut self, s: &Scope<'s>, cur: &mut Level<'s, '_>) {
        let slot = self.rng.index(REGION_SLOTS_PER_THREAD);
        let Some(r) = self.pick_root() else { return };
        let steps = self.rng.below(3);
        let (o, id) = self.walk(s, cur, r, steps);
        self.region.set(s, self.region_base + slot, Some(o));
        self.region_ids[slot] = Some(id);
    }

    /// Upgrade a random weak handle and check the answer against the model, whose
    /// traversals run as a blocked thread (they read no heap memory; see `budget`).
    pub(super) fn upgrade<'s>(&mut self, s: &mut Scope<'s>, cur: &mut Level<'s, '_>) {
        if self.weaks.is_empty() {
            return;
        }
        let i = self.rng.index(self.weaks.len());
        let target = self.weaks[i].target;
        match s.upgrade(&self.weaks[i].w) {
            None => {
                let strong = s.blocking(|| self.strongly_reachable());
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
                let was_reachable = s.blocking(|| self.strongly_reachable().contains(&target));
                let o = s.get(l);
                self.check_header(&o, target, &|| format!("upgraded weak handle #{i}"));
                self.hold(cur, l, target);
                if !was_reachable {
                    // Resurrected: its contents must be intact (never a freed address), and the
                    // clear deadlines of everything it reaches start over.
                    self.st.resurrections += 1;
                    self.check_full_walked(&o, target, &|| {
                        format!("resurrected object {target:#x} (weak handle #{i})")
                    });
                    let now = s.blocking(|| self.strongly_reachable());
                    for w in &mut self.weaks {
                        if now.contains(&w.target) {
                            w.pending_since = None;
                        }
                    }
                }
            }
        }
    }

    pub(super) fn escape<'s>(&mut self, s: &mut Scope<'s>, cur: &mut Level<'s, '_>) {
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
            self.hold(cur, l, id);
        }
    }

    /// Build a structure of 10 to 300 small objects in a nested scope — a list, a tree or a
    /// random DAG — and hang its root off something reachable (or a new local).
    pub(super) fn build<'s>(&mut self, s: &mut Scope<'s>, cur: &mut Level<'s, '_>) {
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
        self.hold(cur, l, id);
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
    pub(super) fn fill_one<'s>(&mut self, s: &mut Scope<'s>, cur: &mut Level<'s, '_>) {
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
        self.hold(cur, l, id);
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
}

/// Write `len` random bytes at raw offset `off` of `o` (now and then, when they are 8, as one
/// `write_u64`), and the same bytes into `model`, the object's raw bytes in the shadow model.
pub(super) fn write_random_bytes(
    rng: &mut Rng,
    o: &ObjRef<'_>,
    model: &mut [u8],
    off: usize,
    len: usize,
) {
    let data: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
    if len == 8 && rng.chance(300) {
        o.write_u64(off, u64::from_le_bytes(data[..8].try_into().unwrap()));
    } else {
        o.write_bytes(off, &data);
    }
    model[off..off + len].copy_from_slice(&data);
}
