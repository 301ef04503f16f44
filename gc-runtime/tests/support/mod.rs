//! What several gc-runtime integration tests share: the live set they build before they
//! churn garbage, a small deterministic random generator, objects linked through reference
//! or value slots (`Link`), the generational tests' known leaf (`leaf`, `is_leaf`), and a scenario run in a child process (for a failure that aborts
//! the process), with the check that a planted bug's child was caught where it should be. Each test binary uses part of it.
#![allow(dead_code)]

use gc_runtime::{Local, ObjRef, Scope, Value};

/// Build a live set of `nodes` small objects (shape 2, one reference slot, 8 raw bytes) hung
/// from the slots of `table` in lists: node `i` holds payload `i` and is at the head of list
/// `i % table slots` when built. Each node is allocated in its own scope, so the builder keeps
/// no more than one local alive.
pub fn build_live_set(s: &mut Scope<'_>, table: Local<'_>, slots: usize, nodes: usize) {
    for i in 0..nodes {
        s.scope(|s| {
            let slot = i % slots;
            let node = s.alloc(2, 1, 8).expect("building the live set");
            let next = s.load(table, slot);
            s.store(node, 0, next);
            s.get(node).write_u64(0, i as u64);
            s.store(table, slot, Some(node));
        });
    }
}

/// How a test's objects hold each other: through reference slots, or through value slots
/// (a NaN-boxed word that holds a reference as `Value::Ref`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Link {
    Ref,
    Value,
}

impl Link {
    /// An object of `shape` with `n` links and `bytes` raw bytes, or `None` if the heap is
    /// full (a pressure run's heap can be).
    pub fn alloc<'s>(
        self,
        s: &mut Scope<'s>,
        shape: u32,
        n: u32,
        bytes: usize,
    ) -> Option<Local<'s>> {
        match self {
            Link::Ref => s.alloc(shape, n, bytes).ok(),
            Link::Value => s.alloc_with_values(shape, 0, n, bytes).ok(),
        }
    }

    /// Make link `i` of `o` hold `t`; `None` clears it (a null reference, or the number 0 in
    /// a value slot).
    pub fn store(self, o: ObjRef<'_>, i: usize, t: Option<ObjRef<'_>>) {
        match (self, t) {
            (Link::Ref, t) => o.store(i, t),
            (Link::Value, Some(t)) => o.store_value(i, Value::Ref(t)),
            (Link::Value, None) => o.store_value(i, Value::Number(0.0)),
        }
    }

    /// The object link `i` of `o` holds, if any.
    pub fn load(self, o: ObjRef<'_>, i: usize) -> Option<ObjRef<'_>> {
        match self {
            Link::Ref => o.load(i),
            Link::Value => match o.load_value(i) {
                Value::Ref(t) => Some(t),
                _ => None,
            },
        }
    }

    /// (reference slots, value slots) of an object with one link.
    pub fn slots(self) -> (usize, usize) {
        match self {
            Link::Ref => (1, 0),
            Link::Value => (0, 1),
        }
    }
}

/// A tiny deterministic generator (splitmix64): the same seed, the same program.
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// A number below `n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Run this test binary's test `test` in a child process with the environment variable
/// `env` set to `scenario` (the child runs the scenario it names): a broken invariant in the
/// collector aborts the process, so only a child can report it as a test's failure. Returns
/// the child's exit status and stderr; fails, with the child's stderr, if it does not end
/// within `limit`.
pub fn run_child(
    test: &str,
    env: &str,
    scenario: &str,
    limit: std::time::Duration,
) -> (std::process::ExitStatus, String) {
    use std::io::Read;
    use std::time::{Duration, Instant};
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(env, scenario)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut pipe = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = pipe.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            let stderr = reader.join().unwrap();
            panic!(
                "hung: the child ({scenario}) did not end within {limit:?}; its stderr:\n{stderr}"
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    (status, reader.join().unwrap())
}

/// Runs the planted-bug scenario `test` in a child ([`run_child`], scenario `planted`) and
/// fails unless the child failed and its stderr has a line containing `needle`, where the
/// bug must be caught (e.g. `GC verification failed at MarkEnd`); returns that line.
pub fn planted_bug_caught(
    test: &str,
    env: &str,
    limit: std::time::Duration,
    needle: &str,
) -> String {
    let (status, stderr) = run_child(test, env, "planted", limit);
    assert!(
        !status.success(),
        "the planted bug went unnoticed\n{stderr}"
    );
    match stderr.lines().find(|l| l.contains(needle)) {
        Some(line) => line.to_string(),
        None => panic!("the child failed, but not with {needle:?}: {status}\n{stderr}"),
    }
}

/// The heap's newest cycle record (the generational tests read the minor they just ran).
pub fn last_cycle(heap: &gc_runtime::Heap) -> gc_runtime::CycleRecord {
    heap.stats().cycles.last().cloned().expect("a cycle ran")
}

/// Young garbage: 20,000 dead 200-byte objects, several pages' worth, so that a page of
/// survivors allocated just before is nearly empty at the next minor.
pub fn young_garbage(s: &mut Scope<'_>) {
    s.scope(|s| {
        for _ in 0..20_000 {
            s.alloc(7, 0, 200).unwrap();
        }
    });
}

/// The generational tests' dense page: on a fresh heap, the first young small page, about two
/// thirds live (well above the young evacuation limit, a quarter), so a minor ages or
/// promotes it in place. Leaf `id` lies on it, allocated between the array and the objects
/// the array holds. Returns the array (the ballast's root) and the leaf.
pub fn dense_page_with_leaf<'s>(s: &mut Scope<'s>, id: u64) -> (Local<'s>, Local<'s>) {
    let dense = s.alloc(1, 12_000, 0).unwrap();
    let l = leaf(s, id);
    for i in 0..12_000 {
        s.scope(|s| {
            let o = s.alloc(4, 0, 64).unwrap();
            s.store(dense, i, Some(o));
        });
    }
    (dense, l)
}

/// Fill the rest of the current young page with garbage (8,000 objects of 200 bytes, about
/// 1.7 MB), so that what is allocated next lies on a later page with nothing else live on it:
/// a sparse page a minor evacuates.
pub fn fill_with_garbage(s: &mut Scope<'_>) {
    s.scope(|s| {
        for _ in 0..8_000 {
            s.alloc(7, 0, 200).unwrap();
        }
    });
}

/// A leaf with identity `id`: shape 3, `id` and `!id` in its bytes, one reference slot (the
/// generational tests' known object).
pub fn leaf<'s>(s: &mut Scope<'s>, id: u64) -> Local<'s> {
    let l = s.alloc(3, 1, 16).unwrap();
    let o = s.get(l);
    o.write_u64(0, id);
    o.write_u64(8, !id);
    l
}

/// True if `o` is the leaf `id` made by [`leaf`], its bytes intact.
pub fn is_leaf(o: ObjRef<'_>, id: u64) -> bool {
    o.shape() == 3 && o.read_u64(0) == id && o.read_u64(8) == !id
}
