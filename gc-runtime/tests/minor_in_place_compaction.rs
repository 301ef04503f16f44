//! Young in-place compaction during a minor: a minor whose relocation set holds sparse young
//! pages but that finds no free page for their survivors compacts the first page it claims in
//! place (its objects slide down over the dead ones, each forwarded to its new address in the
//! minor's own table), then copies the other pages' survivors into the room left above them
//! and frees those pages (`Relocate::compact_in_place`, ZGC's in-place relocation of a young
//! page). The page stays young: its objects need no remembered bit, and the next minor traces
//! them, healing their slots of the minor's color.
//!
//! The heap is filled to its last page (no relocation reserve) while a `Stepper` keeps the
//! director from starting cycles of its own, so every cycle is the test's: an old holder
//! (promoted by a major) whose remembered slots lead to chains of young nodes, each node on a
//! sparse page (a kilobyte of garbage after it) and pointing to a leaf on a dense young page
//! that nothing else keeps; a few global roots. A shadow model (node `i` is chain `i / 8`'s,
//! links to node `i - 1` and to dense leaf `i`) is checked against every object after two
//! minors (the first compacting in place, the second loading nothing before it runs, so only
//! the collector heals the compacted objects' slots) and after a major. The test fails
//! unless the first minor compacted a young page in place (counted in its cycle record, and
//! seen in its relocation set).
//!
//! Planted bug (`Heap::promote_compacted_page_for_tests`, in a child process): the minor
//! makes the compacted page old without remembering its objects' slots. The verifier catches
//! it at the next minor's Pause Mark Start (an old slot pointing to a dense leaf without its
//! bit); with the verifier off, the model's check meets the slots of the first minor's color
//! that no cycle healed (a node that is not itself, or a segmentation fault following one).

mod support;
use gc_runtime::{Global, Heap, HeapConfig, Mode, ObjRef, Scope};
use std::time::Duration;
use support::last_cycle;

const MIB: u64 = 1 << 20;
/// Eight small pages: the holder's (old), the dense leaves', six sparse ones.
const HEAP: u64 = 16 * MIB;
/// Chains of nodes hung from the holder's slots.
const CHAIN: usize = 8;
const HOLDER_SLOTS: usize = 4096;
/// Leaves on the dense page (about 1.4 MiB: well above the evacuation limit of a quarter).
const DENSE: usize = 10_000;
/// Garbage after each node: a node's page is about 5% live.
const GARBAGE_BYTES: usize = 1024;
const NODE_SHAPE: u32 = 5;
const DENSE_SHAPE: u32 = 6;

fn config(verify: bool) -> HeapConfig {
    HeapConfig::new(HEAP)
        .mode(Mode::Concurrent)
        .track_generations(true)
        .verify(verify)
        .continuous(false)
        .gc_threads(1)
        .uncommit_delay(None)
        // No reserve: the mutator fills every page, and the minor finds no target page.
        .relocation_reserve(0)
        // No page is promoted in place: the dense page is aged, the sparse ones evacuated.
        .tenuring_threshold(14)
}

fn node_id(i: usize) -> u64 {
    0x4E00_0000_0000 + i as u64
}

fn dense_id(i: usize) -> u64 {
    0xDE00_0000_0000 + i as u64
}

/// Object `o` is node or leaf `id` of `shape`, its bytes intact.
fn is(o: ObjRef<'_>, shape: u32, id: u64) -> bool {
    o.shape() == shape && o.n_bytes() >= 16 && o.read_u64(0) == id && o.read_u64(8) == !id
}

/// Fill the heap: the dense leaves, then nodes each followed by garbage until the heap's
/// last page is in use, and a few nodes on it (stopping there: one more page would stall the
/// allocation, and a stall runs a cycle). Returns the number of nodes and global roots to some of them.
fn fill(heap: &Heap, s: &mut Scope<'_>, holder: &Global) -> (usize, Vec<(usize, Global)>) {
    let capacity = heap.usage().capacity;
    // The leaves' table dies with this scope: at the minor only the nodes keep them.
    let table = s.alloc(7, DENSE as u32, 0).unwrap();
    for i in 0..DENSE {
        s.scope(|s| {
            let d = s.alloc(DENSE_SHAPE, 0, 112).unwrap();
            let o = s.get(d);
            o.write_u64(0, dense_id(i));
            o.write_u64(8, !dense_id(i));
            s.store(table, i, Some(d));
        });
    }
    let h = s.from_global(holder);
    let mut roots = Vec::new();
    let mut n = 0;
    // Once the last page is in use, a few more nodes without garbage: were it garbage only,
    // the minor would free it empty and copy into it.
    let mut tail = 0;
    while tail < 4 {
        let full = heap.usage().used >= capacity;
        tail += usize::from(full);
        assert!(n < CHAIN * HOLDER_SLOTS, "the holder has too few slots");
        s.scope(|s| {
            let node = s.alloc(NODE_SHAPE, 2, 16).unwrap();
            let o = s.get(node);
            o.write_u64(0, node_id(n));
            o.write_u64(8, !node_id(n));
            if n % CHAIN != 0 {
                let prev = s.load(h, n / CHAIN);
                s.store(node, 0, prev);
            }
            if n < DENSE {
                let d = s.load(table, n);
                s.store(node, 1, d);
            }
            // The holder is old: the store barrier remembers its slot.
            s.store(h, n / CHAIN, Some(node));
            if n % 1000 == 500 {
                roots.push((n, s.global(node)));
            }
            if !full {
                s.alloc(9, 0, GARBAGE_BYTES).unwrap();
            }
        });
        n += 1;
    }
    (n, roots)
}

/// Check every node and leaf against the model: node `i` of chain `i / CHAIN` links to node
/// `i - 1` (none for a chain's first) and to leaf `i` (none from `DENSE` on); the holder's
/// slot `c` holds chain `c`'s last node; each global root its node.
fn check(s: &mut Scope<'_>, holder: &Global, roots: &[(usize, Global)], nodes: usize, what: &str) {
    let h = holder.get(s);
    let (mut seen, mut leaves) = (0, 0);
    for c in 0..nodes.div_ceil(CHAIN) {
        let mut i = ((c + 1) * CHAIN).min(nodes) - 1;
        let mut o = h
            .load(c)
            .unwrap_or_else(|| panic!("{what}: the holder lost chain {c}"));
        loop {
            if !is(o, NODE_SHAPE, node_id(i)) {
                // What a stale pointer found may be any object, one without the two words too.
                let words = if o.n_bytes() >= 16 {
                    format!("words {:#x} {:#x}", o.read_u64(0), o.read_u64(8))
                } else {
                    format!("{} raw bytes", o.n_bytes())
                };
                panic!(
                    "{what}: node {i} (chain {c}) is not itself: shape {}, {words}",
                    o.shape()
                );
            }
            seen += 1;
            match o.load(1) {
                Some(d) if i < DENSE => {
                    assert!(
                        is(d, DENSE_SHAPE, dense_id(i)),
                        "{what}: leaf {i} corrupted"
                    );
                    leaves += 1;
                }
                None if i >= DENSE => {}
                other => panic!("{what}: node {i} lost its leaf link: {}", other.is_some()),
            }
            if i == c * CHAIN {
                assert!(o.load(0).is_none(), "{what}: chain {c} runs past its start");
                break;
            }
            o = o
                .load(0)
                .unwrap_or_else(|| panic!("{what}: node {i} lost its link to node {}", i - 1));
            i -= 1;
        }
    }
    assert_eq!(seen, nodes, "{what}: nodes reached");
    assert_eq!(leaves, nodes.min(DENSE), "{what}: leaves reached");
    for (i, g) in roots {
        assert!(is(g.get(s), NODE_SHAPE, node_id(*i)), "{what}: root {i}");
    }
}

/// The scenario (see the module documentation). With `plant`, the compacted page is made old
/// with its slots left unremembered.
fn scenario(verify: bool, plant: bool) {
    let heap = Heap::new(config(verify)).unwrap();
    if plant {
        heap.promote_compacted_page_for_tests();
    }
    let stepper = heap.stepper().unwrap();
    let run = |minor: bool| {
        if minor {
            stepper.start_minor().unwrap();
        } else {
            stepper.start_cycle("test").unwrap();
        }
        stepper.finish_cycle().unwrap();
        let c = last_cycle(&heap);
        assert_eq!(c.minor, minor, "the test's cycle ran: {c:?}");
        c
    };
    let mut m = heap.attach("t").unwrap();
    let holder = m.scope(|s| {
        let h = s.alloc(1, HOLDER_SLOTS as u32, 0).unwrap();
        s.global(h)
    });
    let major = run(false);
    m.scope(|s| assert_eq!(s.is_old(s.from_global(&holder)), Some(true)));
    let (nodes, roots) = m.scope(|s| fill(&heap, s, &holder));
    let u = heap.usage();
    assert_eq!(u.used, u.capacity, "the heap is full");
    assert!(nodes > DENSE, "every leaf has its node: {nodes} nodes");

    let first = run(true);
    let set = heap.minor_relocation_set();
    let compacted = set.iter().filter(|p| p.compacted_in_place).count();
    eprintln!(
        "first minor: {} pages in its relocation set, {compacted} compacted in place; {} \
         objects compacted in place ({} left where they were), {} copied, {} pages aged, {} \
         freed",
        set.len(),
        first.objects_compacted_in_place,
        first.objects_self_forwarded,
        first.objects_evacuated_by_minor,
        first.pages_aged,
        first.pages_relocated
    );
    assert!(
        first.pages_compacted_in_place >= 1 && compacted >= 1,
        "the minor never compacted a young page in place: the test missed its path: {first:?}"
    );
    assert!(
        first.objects_compacted_in_place > first.objects_self_forwarded,
        "no object slid down its page: {first:?}"
    );
    assert!(
        set.len() >= 2,
        "no page's survivors went to the compacted one"
    );

    // Nothing is loaded before the next minor: the compacted objects' slots of the first
    // minor's color are healed by the collector only.
    let second = run(true);
    assert_eq!(
        second.stale_minor_color, first.mark_color,
        "the second minor names the first one's table's color as stale"
    );
    assert_eq!(second.stale_color, major.mark_color, "and the major's");
    m.scope(|s| check(s, &holder, &roots, nodes, "after two minors"));
    run(true);
    run(false);
    m.scope(|s| check(s, &holder, &roots, nodes, "after a third minor and a major"));
}

#[test]
fn a_minor_without_target_memory_compacts_a_young_page_in_place_and_loses_nothing() {
    scenario(true, false);
}

const CHILD_ENV: &str = "ZRS_YOUNG_IN_PLACE_CHILD";

/// Run the planted scenario in a child (the verifier aborts the process, a stale pointer may
/// crash it) and return its exit status and stderr, `None` in the child itself; fails unless
/// the child failed after reaching the path.
fn planted(test: &str, verify: bool) -> Option<(std::process::ExitStatus, String)> {
    if std::env::var(CHILD_ENV).is_ok() {
        scenario(verify, true);
        return None;
    }
    let (status, stderr) = support::run_child(test, CHILD_ENV, "planted", Duration::from_secs(120));
    assert!(
        !status.success(),
        "the planted bug went unnoticed\n{stderr}"
    );
    assert!(
        stderr.contains("compacted in place"),
        "the child failed before it reached the path: {status}\n{stderr}"
    );
    Some((status, stderr))
}

#[test]
fn a_compacted_young_page_made_old_without_its_slots_is_caught_by_the_verifier() {
    let test = "a_compacted_young_page_made_old_without_its_slots_is_caught_by_the_verifier";
    let Some((_, stderr)) = planted(test, true) else {
        return;
    };
    let at = stderr
        .lines()
        .find(|l| l.contains("GC verification failed"))
        .unwrap_or_else(|| panic!("the child failed, but not in the verifier:\n{stderr}"));
    eprintln!("{at}");
}

/// With the verifier off, the compacted objects' slots of the first minor's color, never
/// healed, lead the model's check to the addresses the objects had before the compaction,
/// where others lie now: the check finds a node that is not itself, or, following a pointer
/// read out of the middle of an object, the process dies of a segmentation fault.
#[test]
fn a_compacted_young_page_made_old_without_its_slots_fails_without_the_verifier() {
    use std::os::unix::process::ExitStatusExt;
    let test = "a_compacted_young_page_made_old_without_its_slots_fails_without_the_verifier";
    let Some((status, stderr)) = planted(test, false) else {
        return;
    };
    match stderr.lines().find(|l| l.contains("after two minors")) {
        Some(at) => eprintln!("the model's check: {at}"),
        None => {
            assert_eq!(
                status.signal(),
                Some(libc::SIGSEGV),
                "the child failed, but neither in the model's check nor of a stale pointer: \
                 {status}\n{stderr}"
            );
            eprintln!("the model's check followed a stale pointer: {status}");
        }
    }
}
