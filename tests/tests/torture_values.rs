//! Torture test of value slots with a shadow model: two mutator threads run a seeded random
//! program of objects with reference slots, value slots (numbers — NaNs with the pointer tag's
//! bits among them —, immediates, references) and raw bytes, while cycles run (explicit ones,
//! and the allocation-driven ones of a small heap) with the verifier on, in the `concurrent`
//! and `stw` modes.
//!
//! Each thread's graph hangs off a root object held by a local; the model records every
//! object's reference slots (as ids), value slots (a number's canonical bits, an immediate, an
//! id) and its id (its first raw word). The program allocates objects and links them into a
//! random slot — reference or value — of an object reached by a random walk, links two
//! reached objects, overwrites value slots with numbers and immediates (dropping what they
//! held) and reference slots with null, throws away bursts of garbage whose value slots point
//! at each other and at live objects, and checks every object it walks through. Every 2,000
//! operations it traverses the whole graph from the root, through both kinds of slot, and
//! compares every object reached with the model: each at one address, the reached set equal
//! to the model's reachable set.
//!
//! The threads also share a pool: an object held by a global handle whose value slots hold
//! *leaves*, immutable once published, each naming its own id, a number derived from it and
//! (through a second value slot) the leaf that was in another pool slot when it was made.
//! Both threads replace and read pool slots without a lock, so their value barriers race to
//! heal the same slots (and race the GC's marking); every leaf read must be self-consistent.
//!
//! The test fails if the collector's value-slot paths were not reached: value slots healed
//! by marking and pointed at moved objects (by the barrier or marking in `concurrent`, by the
//! full remap in `stw`), and healed by the mutators' barrier in `concurrent`
//! (`Heap::value_slot_stats`). A third run rotates the mark colors (`HeapConfig::mark_colors`)
//! in `concurrent` mode and fails unless stale Marked2 slots were remapped. Replay a seed with
//! `ZRS_TORTURE_SEED=0x...`.
use gc_runtime::inspect::GoodColor;
use gc_runtime::{
    ColorChoice, Global, Heap, HeapConfig, Immediate, Local, Mode, ObjRef, Scope, Value,
    ValueSlotStats,
};
use std::collections::{HashMap, HashSet};

const OPS_PER_THREAD: u64 = 60_000;
const CHECK_EVERY: u64 = 2_000;
const COLLECT_EVERY: u64 = 1_000;
const POOL_SLOTS: usize = 32;
const ROOT_SLOTS: u32 = 8;
const SHAPE: u32 = 7;
const LEAF_SHAPE: u32 = 8;
const GARBAGE_SHAPE: u32 = 9;
/// The model keeps a thread's reachable objects under this many (by dropping root slots).
const MAX_REACHABLE: usize = 6_000;
const CANONICAL_NAN: u64 = 0x7ff8_0000_0000_0000;

/// Numbers the program stores now and then: every NaN here must read back as the canonical
/// NaN, never as a reference or an immediate.
const SPECIAL_NUMBERS: [u64; 8] = [
    0xffff_0000_0000_1000, // the pointer tag with an offset
    0xffff_4000_0040_0000, // the pointer tag with a Remapped colored pointer (S = 42)
    0x7ffc_0000_0000_0001, // the immediate tag
    0xfff8_0000_0000_0000, // x86's default NaN
    0x7ff0_0000_0000_0000, // +inf
    0x8000_0000_0000_0000, // -0.0
    0,
    0x3ff0_0000_0000_0000, // 1.0
];

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }
}

/// A value slot in the model.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Mv {
    /// A number's bits as they must read back (a NaN as the canonical NaN).
    Num(u64),
    Imm(u64),
    Ref(u64),
}

#[derive(Clone, Debug)]
struct ObjModel {
    refs: Vec<Option<u64>>,
    values: Vec<Mv>,
}

/// An edge of the model: reference slot `i`, or value slot `i` holding a reference.
#[derive(Clone, Copy, Debug)]
enum Edge {
    Ref(usize),
    Value(usize),
}

impl ObjModel {
    fn edges(&self) -> Vec<(Edge, u64)> {
        let refs = self
            .refs
            .iter()
            .enumerate()
            .filter_map(|(i, r)| r.map(|t| (Edge::Ref(i), t)));
        let values = self.values.iter().enumerate().filter_map(|(i, v)| match v {
            Mv::Ref(t) => Some((Edge::Value(i), *t)),
            _ => None,
        });
        refs.chain(values).collect()
    }
}

/// What one thread's program counted.
#[derive(Default, Debug)]
struct Counts {
    objects_checked: u64,
    value_slots_checked: u64,
    value_refs_followed: u64,
    full_checks: u64,
    leaves_read: u64,
    leaves_published: u64,
    nans_stored: u64,
}

struct Program<'h> {
    heap: &'h Heap,
    rng: Rng,
    seed: u64,
    thread: u64,
    next_id: u64,
    root_id: u64,
    objs: HashMap<u64, ObjModel>,
    c: Counts,
}

fn canonical(bits: u64) -> u64 {
    if f64::from_bits(bits).is_nan() {
        CANONICAL_NAN
    } else {
        bits
    }
}

fn leaf_number(id: u64) -> f64 {
    (id % 1_000_003) as f64 + 0.25
}

impl<'h> Program<'h> {
    fn fail(&self, what: String) -> ! {
        panic!(
            "torture_values (thread {}, seed {:#x}): {what}",
            self.thread, self.seed
        )
    }

    fn random_scalar(&mut self) -> (Value<ObjRef<'static>>, Mv) {
        if self.rng.below(3) == 0 {
            let p = self.rng.next() & Immediate::MAX;
            let im = Immediate::new(p).expect("48 bits");
            return (Value::Immediate(im), Mv::Imm(p));
        }
        let bits = if self.rng.below(4) == 0 {
            SPECIAL_NUMBERS[self.rng.index(SPECIAL_NUMBERS.len())]
        } else {
            self.rng.next()
        };
        if f64::from_bits(bits).is_nan() {
            self.c.nans_stored += 1;
        }
        (
            Value::Number(f64::from_bits(bits)),
            Mv::Num(canonical(bits)),
        )
    }

    /// Check a value slot's value against the model; returns the object it holds, if any.
    fn check_value<'a>(
        &mut self,
        v: Value<ObjRef<'a>>,
        want: Mv,
        at: &dyn Fn() -> String,
    ) -> Option<ObjRef<'a>> {
        self.c.value_slots_checked += 1;
        match (v, want) {
            (Value::Number(x), Mv::Num(bits)) if x.to_bits() == bits => None,
            (Value::Immediate(im), Mv::Imm(p)) if im.get() == p => None,
            (Value::Ref(o), Mv::Ref(id)) => {
                let got = o.read_u64(0);
                if got != id {
                    self.fail(format!("{} holds object {got:#x}, model {id:#x}", at()));
                }
                Some(o)
            }
            (v, want) => self.fail(format!("{} holds {v:?}, model {want:?}", at())),
        }
    }

    /// Compare all of `o` (object `id`) with the model.
    fn check_object(&mut self, o: &ObjRef<'_>, id: u64) {
        let m = self
            .objs
            .get(&id)
            .unwrap_or_else(|| self.fail(format!("object {id:#x} is not in the model")))
            .clone();
        if o.read_u64(0) != id || o.n_refs() != m.refs.len() || o.n_values() != m.values.len() {
            self.fail(format!(
                "object {id:#x}: header or id wrong (id {:#x}, {} refs, {} values)",
                o.read_u64(0),
                o.n_refs(),
                o.n_values()
            ));
        }
        for (i, r) in m.refs.iter().enumerate() {
            let got = o.load(i).map(|t| t.read_u64(0));
            if got != *r {
                self.fail(format!("ref slot {i} of {id:#x}: {got:x?}, model {r:x?}"));
            }
        }
        for (i, want) in m.values.iter().enumerate() {
            let v = o.load_value(i);
            self.check_value(v, *want, &|| format!("value slot {i} of {id:#x}"));
        }
        self.c.objects_checked += 1;
    }

    /// Follow up to `steps` random edges from the root; checks each object on the way.
    fn walk<'a>(&mut self, s: &'a Scope<'_>, root: Local<'_>, steps: u64) -> (ObjRef<'a>, u64) {
        let mut o = s.get(root);
        let mut id = self.root_id;
        for _ in 0..steps {
            let edges = self.objs[&id].edges();
            if edges.is_empty() {
                break;
            }
            let (e, want) = edges[self.rng.index(edges.len())];
            let next = match e {
                Edge::Ref(i) => o
                    .load(i)
                    .unwrap_or_else(|| self.fail(format!("ref slot {i} of {id:#x} is null"))),
                Edge::Value(i) => {
                    self.c.value_refs_followed += 1;
                    let v = o.load_value(i);
                    self.check_value(v, Mv::Ref(want), &|| format!("value slot {i} of {id:#x}"))
                        .expect("a reference")
                }
            };
            if next.read_u64(0) != want {
                self.fail(format!(
                    "edge {e:?} of {id:#x} leads to {:#x}, model {want:#x}",
                    next.read_u64(0)
                ));
            }
            o = next;
            id = want;
        }
        self.check_object(&o, id);
        (o, id)
    }

    /// Store `target` (object `tid`, or a scalar) into a random slot of `o` (object `id`).
    fn store_into(&mut self, o: &ObjRef<'_>, id: u64, target: Option<(ObjRef<'_>, u64)>) {
        let m = &self.objs[&id];
        let (nr, nv) = (m.refs.len(), m.values.len());
        if nr + nv == 0 {
            return;
        }
        let k = self.rng.index(nr + nv);
        match target {
            Some((t, tid)) if k < nr => {
                o.store(k, Some(t));
                self.objs.get_mut(&id).unwrap().refs[k] = Some(tid);
            }
            None if k < nr => {
                o.store(k, None);
                self.objs.get_mut(&id).unwrap().refs[k] = None;
            }
            Some((t, tid)) => {
                o.store_value(k - nr, Value::Ref(t));
                self.objs.get_mut(&id).unwrap().values[k - nr] = Mv::Ref(tid);
            }
            None => {
                let (v, mv) = self.random_scalar();
                o.store_value(k - nr, v);
                self.objs.get_mut(&id).unwrap().values[k - nr] = mv;
            }
        }
    }

    fn new_id(&mut self) -> u64 {
        self.next_id += 1;
        (self.thread << 56) | self.next_id
    }

    fn alloc_and_link(&mut self, s: &mut Scope<'_>, root: Local<'_>) {
        let n_refs = self.rng.below(4) as u32;
        let n_values = 1 + self.rng.below(6) as u32;
        let bytes = 8 * (1 + self.rng.below(8)) as usize;
        let id = self.new_id();
        let l = match s.alloc_with_values(SHAPE, n_refs, n_values, bytes) {
            Ok(l) => l,
            Err(e) => self.fail(format!("out of memory: {e}")),
        };
        let o = s.get(l);
        o.write_u64(0, id);
        let mut values = vec![Mv::Num(0); n_values as usize];
        for (i, v) in values.iter_mut().enumerate() {
            if self.rng.below(2) == 0 {
                let (val, mv) = self.random_scalar();
                *v = mv;
                o.store_value(i, val);
            }
        }
        self.objs.insert(
            id,
            ObjModel {
                refs: vec![None; n_refs as usize],
                values,
            },
        );
        let steps = self.rng.below(5);
        let (a, aid) = self.walk(s, root, steps);
        self.store_into(&a, aid, Some((s.get(l), id)));
    }

    fn link(&mut self, s: &Scope<'_>, root: Local<'_>) {
        let steps = self.rng.below(5);
        let (a, aid) = self.walk(s, root, steps);
        let steps = self.rng.below(5);
        let (b, bid) = self.walk(s, root, steps);
        self.store_into(&a, aid, Some((b, bid)));
    }

    fn overwrite(&mut self, s: &Scope<'_>, root: Local<'_>) {
        let steps = self.rng.below(5);
        let (a, aid) = self.walk(s, root, steps);
        self.store_into(&a, aid, None);
    }

    /// Garbage whose value slots point at each other and at a live object, dropped at once.
    fn garbage(&mut self, s: &mut Scope<'_>, root: Local<'_>) {
        let n = 1 + self.rng.below(40);
        let seed = self.rng.next();
        let r = s.scope(|g| {
            let mut rng = Rng(seed);
            let mut prev: Option<Local<'_>> = None;
            for _ in 0..n {
                let l = g.alloc_with_values(GARBAGE_SHAPE, 0, 3, (rng.below(300)) as usize)?;
                if let Some(p) = prev {
                    g.store_value(l, 0, Value::Ref(p));
                }
                g.store_value(l, 1, Value::Ref(root));
                g.store_value(l, 2, Value::Number(f64::from_bits(rng.next())));
                prev = Some(l);
            }
            Ok::<_, gc_runtime::OutOfMemory>(())
        });
        if let Err(e) = r {
            self.fail(format!("out of memory in a garbage burst: {e}"));
        }
    }

    /// The model's reachable set from the root.
    fn model_reachable(&self) -> HashSet<u64> {
        let mut seen = HashSet::new();
        let mut stack = vec![self.root_id];
        while let Some(id) = stack.pop() {
            if seen.insert(id) {
                stack.extend(self.objs[&id].edges().into_iter().map(|(_, t)| t));
            }
        }
        seen
    }

    /// Traverse the whole graph from the root through both kinds of slot and compare every
    /// object; then forget the objects the model can no longer reach.
    fn full_check(&mut self, s: &mut Scope<'_>, root: Local<'_>) {
        let want = self.model_reachable();
        let mut at: HashMap<u64, gc_runtime::Offset> = HashMap::new();
        {
            let mut stack = vec![(s.get(root), self.root_id)];
            while let Some((o, id)) = stack.pop() {
                let addr = o.address();
                match at.get(&id) {
                    Some(a) if *a != addr => {
                        self.fail(format!("object {id:#x} reached at {a:#x} and at {addr:#x}"))
                    }
                    Some(_) => continue,
                    None => {
                        at.insert(id, addr);
                    }
                }
                self.check_object(&o, id);
                for (e, t) in self.objs[&id].edges() {
                    let next = match e {
                        Edge::Ref(i) => o.load(i).expect("checked non-null"),
                        Edge::Value(i) => match o.load_value(i) {
                            Value::Ref(n) => n,
                            v => self.fail(format!("value slot {i} of {id:#x} holds {v:?}")),
                        },
                    };
                    stack.push((next, t));
                }
            }
        }
        let reached: HashSet<u64> = at.keys().copied().collect();
        if reached != want {
            self.fail(format!(
                "reached {} objects, the model reaches {}",
                reached.len(),
                want.len()
            ));
        }
        self.objs.retain(|id, _| want.contains(id));
        self.c.full_checks += 1;
        if want.len() > MAX_REACHABLE {
            // Drop half of the root's slots.
            let o = s.get(root);
            for i in 0..ROOT_SLOTS as usize {
                if i % 2 == 0 {
                    o.store(i, None);
                    o.store_value(i, Value::Number(0.0));
                    let m = self.objs.get_mut(&self.root_id).unwrap();
                    m.refs[i] = None;
                    m.values[i] = Mv::Num(0);
                }
            }
        }
    }

    /// Replace or read a slot of the shared pool (see the module documentation).
    fn pool_op(&mut self, s: &mut Scope<'_>, pool: &Global) {
        let i = self.rng.index(POOL_SLOTS);
        if self.rng.below(3) == 0 {
            let id = self.new_id();
            let j = self.rng.index(POOL_SLOTS);
            let l = s
                .alloc_with_values(LEAF_SHAPE, 0, 2, 16)
                .unwrap_or_else(|e| self.fail(format!("out of memory: {e}")));
            let p = s.from_global(pool);
            let leaf = s.get(l);
            leaf.write_u64(0, id);
            leaf.store_value(0, Value::Number(leaf_number(id)));
            match s.get(p).load_value(j) {
                Value::Ref(prev) => {
                    let pid = prev.read_u64(0);
                    leaf.write_u64(8, pid);
                    leaf.store_value(1, Value::Ref(prev));
                }
                _ => leaf.store_value(1, Value::Immediate(Immediate::new(0).unwrap())),
            }
            s.get(p).store_value(i, Value::Ref(leaf));
            self.c.leaves_published += 1;
            return;
        }
        let p = s.from_global(pool);
        if let Value::Ref(leaf) = s.get(p).load_value(i) {
            self.check_leaf(&leaf, true);
        }
    }

    fn check_leaf(&mut self, leaf: &ObjRef<'_>, follow: bool) {
        let id = leaf.read_u64(0);
        if leaf.shape() != LEAF_SHAPE || leaf.load_value(0).as_number() != Some(leaf_number(id)) {
            self.fail(format!("pool leaf {id:#x} is inconsistent"));
        }
        self.c.leaves_read += 1;
        let prev = leaf.read_u64(8);
        match leaf.load_value(1) {
            Value::Immediate(im) if prev == 0 && im.get() == 0 => {}
            Value::Ref(n) if n.read_u64(0) == prev => {
                if follow {
                    self.check_leaf(&n, false);
                }
            }
            v => self.fail(format!(
                "pool leaf {id:#x}: second value {v:?}, names {prev:#x}"
            )),
        }
    }

    fn run(&mut self, pool: &Global) {
        let mut m = self
            .heap
            .attach(&format!("values-{}", self.thread))
            .unwrap_or_else(|e| self.fail(format!("attach: {e}")));
        m.scope(|s| {
            self.root_id = self.new_id();
            let root = s
                .alloc_with_values(SHAPE, ROOT_SLOTS, ROOT_SLOTS, 8)
                .unwrap_or_else(|e| self.fail(format!("out of memory: {e}")));
            s.get(root).write_u64(0, self.root_id);
            self.objs.insert(
                self.root_id,
                ObjModel {
                    refs: vec![None; ROOT_SLOTS as usize],
                    values: vec![Mv::Num(0); ROOT_SLOTS as usize],
                },
            );
            for op in 1..=OPS_PER_THREAD {
                s.scope(|s| match self.rng.below(100) {
                    0..=29 => self.alloc_and_link(s, root),
                    30..=44 => self.link(s, root),
                    45..=57 => self.overwrite(s, root),
                    58..=84 => {
                        let steps = 1 + self.rng.below(6);
                        self.walk(s, root, steps);
                    }
                    85..=89 => self.garbage(s, root),
                    90..=97 => self.pool_op(s, pool),
                    _ => s.poll(),
                });
                if op % CHECK_EVERY == 0 {
                    s.scope(|s| self.full_check(s, root));
                }
                if op % COLLECT_EVERY == 0 {
                    s.collect("torture_values");
                }
            }
            s.scope(|s| self.full_check(s, root));
        });
    }
}

fn base_seed() -> u64 {
    match std::env::var("ZRS_TORTURE_SEED") {
        Ok(s) => u64::from_str_radix(s.trim_start_matches("0x"), 16)
            .unwrap_or_else(|_| panic!("ZRS_TORTURE_SEED={s}: give a hex seed, e.g. 0x1234")),
        Err(_) => 0x5eed_f7a1,
    }
}

/// Run two threads on one heap; returns the value-slot stats and the threads' counts.
fn torture(mode: Mode) -> (ValueSlotStats, Vec<Counts>) {
    torture_with(mode, ColorChoice::Alternate).0
}

/// [`torture`] with the mark colors of `colors`; also returns the cycles that marked with
/// Marked2 and the stale slots the markers remapped in the cycles after them.
fn torture_with(mode: Mode, colors: ColorChoice) -> ((ValueSlotStats, Vec<Counts>), (usize, u64)) {
    let seed = base_seed();
    eprintln!("torture_values {mode}: seed {seed:#x} (replay: ZRS_TORTURE_SEED={seed:#x})");
    let h = Heap::new(
        HeapConfig::new(48 << 20)
            .mode(mode)
            .verify(true)
            .mark_colors(colors),
    )
    .unwrap();
    let pool = {
        let mut m = h.attach("pool").unwrap();
        m.scope(|s| {
            let p = s.alloc_with_values(SHAPE, 0, POOL_SLOTS as u32, 0).unwrap();
            for i in 0..POOL_SLOTS {
                s.store_value(p, i, Value::Immediate(Immediate::new(0).unwrap()));
            }
            s.global(p)
        })
    };
    let counts = std::thread::scope(|sc| {
        let threads: Vec<_> = (0..2u64)
            .map(|t| {
                let (h, pool) = (&h, &pool);
                sc.spawn(move || {
                    let mut p = Program {
                        heap: h,
                        rng: Rng(seed ^ (t + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)),
                        seed,
                        thread: t + 1,
                        next_id: 0,
                        root_id: 0,
                        objs: HashMap::new(),
                        c: Counts::default(),
                    };
                    p.run(pool);
                    p.c
                })
            })
            .collect();
        threads
            .into_iter()
            .map(|t| t.join().expect("a torture thread failed"))
            .collect::<Vec<_>>()
    });
    drop(pool);
    let st = h.value_slot_stats();
    eprintln!("torture_values {mode}: {st:?}\n{counts:#?}");
    for c in &counts {
        assert!(c.full_checks > 0 && c.value_refs_followed > 0 && c.leaves_read > 0);
        assert!(c.nans_stored > 0, "the program stored NaNs");
    }
    let m2 = Some(GoodColor::Marked2);
    let cycles = h.stats().cycles;
    let marked2 = cycles.iter().filter(|c| c.mark_color == m2).count();
    let stale_m2 = cycles
        .iter()
        .filter(|c| c.stale_color == m2)
        .map(|c| c.stale_slots_remapped)
        .sum();
    eprintln!("torture_values {mode}: {marked2} cycles marked with Marked2, {stale_m2} stale Marked2 slots remapped");
    ((st, counts), (marked2, stale_m2))
}

#[test]
fn value_slots_under_the_concurrent_collector() {
    let (st, _) = torture(Mode::Concurrent);
    assert!(st.mark_heals > 0, "marking healed no value slot: {st:?}");
    assert!(
        st.barrier_heals > 0,
        "no mutator barrier healed a value slot: {st:?}"
    );
    assert!(
        st.barrier_moves + st.mark_moves > 0,
        "no value slot was pointed at a moved object: {st:?}"
    );
}

/// The concurrent torture with the mark colors rotating (`HeapConfig::mark_colors`): value
/// slots carry Marked2 pointers every third cycle; fails unless Marked2 cycles ran and the
/// markers of the cycles after them remapped stale Marked2 slots.
#[test]
fn value_slots_under_the_concurrent_collector_with_rotating_colors() {
    let ((st, _), (marked2, stale_m2)) = torture_with(Mode::Concurrent, ColorChoice::Rotate);
    assert!(st.mark_heals > 0 && st.barrier_heals > 0, "{st:?}");
    assert!(marked2 > 0, "no cycle marked with Marked2");
    assert!(stale_m2 > 0, "no stale Marked2 slot was remapped");
}

#[test]
fn value_slots_under_the_stw_collector() {
    let (st, _) = torture(Mode::Stw);
    assert!(st.mark_heals > 0, "marking healed no value slot: {st:?}");
    assert!(
        st.full_remap_moves > 0,
        "the full remap pointed no value slot at a moved object: {st:?}"
    );
}
