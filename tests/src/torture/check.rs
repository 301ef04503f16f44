//! Comparing the heap with the shadow model: the header and id of an object met on a walk
//! (a buffer's owner is identified by its raw bytes instead); a full comparison of one object
//! (header, every reference slot, every raw byte); traversals from a set of roots that
//! compare every object reached, require one address per object and hand back the buffers'
//! owners reached, whose buffers are then compared in full (see `direct`); and checkpoints,
//! which check the handle stack, the thread's roots and whole graph, the shared pool and the
//! weak handles (cleared only when unreachable, and cleared within two cycles of a checkpoint
//! that found them unreachable), and the end of a thread's run. A mismatch fails the run at
//! once, naming the seed, the thread and the op.

use super::model::ObjModel;
use super::program::{Frame, Level, Program, REGION_SLOTS_PER_THREAD};
use super::report::Checked;
use gc_runtime::{Mode, ObjRef, Offset, Scope};
use std::collections::HashMap;
use std::fmt::Write as _;

impl<'h> Program<'h> {
    /// Check an object the program reached against the model `objs`: id, shape, slot and
    /// byte counts (cheap; [`Self::check_full`] compares everything).
    pub(super) fn header_in(
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
        if m.buf.is_some() {
            // A buffer's owner: its raw bytes (the runtime's entry id and key) identify it.
            let (slot, key) = (o.read_u64(0), o.read_u64(8));
            let want_slot = u64::from_le_bytes(m.bytes[..8].try_into().unwrap());
            let want_key = u64::from_le_bytes(m.bytes[8..16].try_into().unwrap());
            ensure!(
                self,
                (slot, key) == (want_slot, want_key),
                "{}: expected the owner of buffer {want:#x} (entry {want_slot} key                  {want_key:#x}), found entry {slot} key {key:#x} at {:#x}",
                via(),
                o.address()
            );
            return;
        }
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
    pub(super) fn check_header(&self, o: &ObjRef<'_>, want: u64, via: &dyn Fn() -> String) {
        self.header_in(&self.objs, o, want, via)
    }

    /// Compare all of `o` with the model `objs`: the header, every raw byte and every
    /// reference slot (null, or an object whose header and id are the model's). `child` gets
    /// every non-null slot's object with its id. Returns what was compared.
    pub(super) fn check_full<'a>(
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
    /// address of every object reached, what was compared, and the buffers' owners reached
    /// (their buffers are compared by the caller, which can root them).
    fn traverse<'a>(
        &self,
        objs: &HashMap<u64, ObjModel>,
        roots: Vec<(ObjRef<'a>, u64, String)>,
        buf: &mut Vec<u8>,
    ) -> (HashMap<u64, Offset>, Checked, Vec<(ObjRef<'a>, u64)>) {
        let mut seen: HashMap<u64, Offset> = HashMap::new();
        let mut queue: Vec<(ObjRef<'a>, u64)> = Vec::new();
        for (o, id, via) in roots {
            self.header_in(objs, &o, id, &|| via.clone());
            self.visit(&o, id, &mut seen, &mut queue, &|| via.clone());
        }
        let mut checked = Checked::default();
        let mut owners = Vec::new();
        while let Some((o, id)) = queue.pop() {
            if objs[&id].buf.is_some() {
                owners.push((o, id));
            }
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
        (seen, checked, owners)
    }

    /// Count a header check between checkpoints (the header and the 8 id bytes).
    pub(super) fn count_header_walked(&mut self) {
        self.st.walked.objects += 1;
        self.st.walked.bytes += 8;
    }

    /// Compare all of `o` with this thread's model between checkpoints.
    pub(super) fn check_full_walked(&mut self, o: &ObjRef<'_>, id: u64, via: &dyn Fn() -> String) {
        let mut buf = std::mem::take(&mut self.scratch);
        let c = self.check_full(&self.objs, o, id, via, &mut buf, |_, _, _| {});
        self.scratch = buf;
        self.st.walked.add(&c);
    }

    /// Checkpoint of the shared pool: traverse it from its roots, comparing every object in
    /// full (a buffer's native bytes too: `s` roots the owners, so call this in a scope of
    /// its own); the objects reached must be the pool model's reachable set. Returns the
    /// number of objects compared.
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
        let (seen, c, owners) = self.traverse(&pool.objs, roots, &mut buf);
        self.scratch = buf;
        let owners: Vec<_> = owners.into_iter().map(|(o, id)| (s.root(o), id)).collect();
        let dc = self.check_buffers(s, &pool.objs, &owners, "shared");
        self.st.direct.add(&dc);
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

    /// Traverse everything from the roots and compare with the model.
    pub(super) fn checkpoint(&mut self, s: &mut Scope<'_>, cur: &dyn Frame) {
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
        s.scope(|cs| self.check_shared(cs));
        let n = self.st.checked.objects - before;
        self.st.max_checked = self.st.max_checked.max(n);
        let strong = self.prune_blocked(s);
        if strong > self.share(self.live_cap, self.shed_at()) {
            self.shed(s);
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
        let (seen, c, owners) = self.traverse(&self.objs, roots, &mut buf);
        self.scratch = buf;
        self.st.checked.add(&c);
        let owners: Vec<_> = owners.into_iter().map(|(o, id)| (cs.root(o), id)).collect();
        let dc = self.check_buffers(cs, &self.objs, &owners, "own");
        self.st.direct.add(&dc);
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
        seen: &mut HashMap<u64, Offset>,
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
    pub(super) fn finish(&mut self, top: &mut Scope<'_>) {
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
}
